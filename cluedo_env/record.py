"""Game records: one whole game as a JSON file that replays to the identical final state.

A record holds the rules, the initial state (a snapshot, docs/snapshot.md), every action with
the seat that took it and the dice of every ROLL (the only chance after the deal), the final
state, and the result. Schema ``cluedo_env.record/1``::

    {"schema": "cluedo_env.record/1",
     "rules": RulesConfig.to_dict(),
     "seed": int or null,                  # the seed the game (or the run it came from) started with;
                                           # informational: replay uses the recorded rolls
     "players": ["deducer", "human", ...] or null,   # who sat in each seat
     "initial": <snapshot, schema cluedo_env.snapshot/1>,
     "steps": [{"player": seat, "action": int, "name": actions.describe(action),
                "roll": int or null}, ...],          # roll: the dice total of a ROLL, else null
     "final": <snapshot>,
     "result": {"winner": seat or null, "terminated": bool, "truncated": bool, "rewards": [...]}}

Making records::

    rec = Recorder(game.to_dict(), seed=7, players=["human", "deducer", "random"])
    rec.add(game.actor, action, roll=dice)   # for every step; roll only for a ROLL
    record = rec.finish(game.to_dict())
    save(record, "game.json")

Sources: :class:`Recorder` by hand (reference engine), :class:`AECRecorder` around the PettingZoo
env, ``cluedo_env.agents.play.runner.play_games(..., record=...)`` / ``scripts/evaluate.py --record DIR`` for the
batched engine, and ``cluedo play`` (:mod:`cluedo_env.cli`) for games with a human.

Reading: :func:`load` validates (a corrupted file, another schema version or a missing field is a
:class:`RecordError` saying so); :func:`replay` steps the reference engine through the record and
returns the snapshot after every step, raising :class:`RecordError` if an action is illegal or the
replayed final state differs from the recorded one (a tampered record); :func:`knowledge` is what
one seat knew in a snapshot (its notebook), for viewers.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cluedo_env.engine.snapshot import SCHEMA as SNAPSHOT_SCHEMA
from cluedo_env.engine.snapshot import SnapshotError
from cluedo_env.errors import CluedoError
from cluedo_env.files import write_text_atomic
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, card_category
from cluedo_env.rules.privacy import may_see_shown_card

SCHEMA = "cluedo_env.record/1"
SCHEMA_PREFIX = "cluedo_env.record/"
FIELDS = ("schema", "rules", "seed", "players", "initial", "steps", "final", "result")
RESULT_FIELDS = ("winner", "terminated", "truncated", "rewards")


class RecordError(CluedoError):
    """A game record that cannot be read or does not replay; the message says why."""


# ============================================================================ making records
def result_of(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The ``result`` entry of a record from its final snapshot."""
    return {
        "winner": snapshot.get("winner"),
        "terminated": bool(snapshot.get("terminated")),
        "truncated": bool(snapshot.get("truncated")),
        "rewards": [float(x) for x in snapshot.get("rewards", [])],
    }


def step_entry(player: int, action: int, roll: int | None = None) -> dict[str, Any]:
    action = int(action)
    return {
        "player": int(player),
        "action": action,
        "name": A.describe(action),
        "roll": int(roll) if roll is not None and action == A.ROLL else None,
    }


class Recorder:
    """Collects one game: the initial snapshot, then :meth:`add` per step, then :meth:`finish`."""

    def __init__(self, initial: dict[str, Any], seed: int | None = None, players: list[str] | None = None) -> None:
        if not isinstance(initial, dict) or initial.get("schema") != SNAPSHOT_SCHEMA:
            raise RecordError(f"the initial state must be a snapshot of schema {SNAPSHOT_SCHEMA!r}")
        self.initial = copy.deepcopy(initial)
        self.seed = None if seed is None else int(seed)
        self.players = None if players is None else [str(p) for p in players]
        self.steps: list[dict[str, Any]] = []

    def add(self, player: int, action: int, roll: int | None = None) -> None:
        """One step: ``player`` (seat) took ``action``; ``roll`` is the dice total when it is a ROLL."""
        if int(action) == A.ROLL and roll is None:
            raise RecordError("a ROLL step needs its dice total (roll=...) so that the record replays")
        self.steps.append(step_entry(player, action, roll))

    def finish(self, final: dict[str, Any]) -> dict[str, Any]:
        """The record (a dict ready for :func:`save`) ending in the snapshot ``final``."""
        if not isinstance(final, dict) or final.get("schema") != SNAPSHOT_SCHEMA:
            raise RecordError(f"the final state must be a snapshot of schema {SNAPSHOT_SCHEMA!r}")
        return {
            "schema": SCHEMA,
            "rules": dict(self.initial["rules"]),
            "seed": self.seed,
            "players": self.players,
            "initial": self.initial,
            "steps": list(self.steps),
            "final": copy.deepcopy(final),
            "result": result_of(final),
        }


def record_from_steps(
    initial: dict[str, Any],
    steps: list[tuple[int, int, int | None]],
    final: dict[str, Any],
    seed: int | None = None,
    players: list[str] | None = None,
) -> dict[str, Any]:
    """A record from (player, action, roll) triples, e.g. collected from a batched engine."""
    rec = Recorder(initial, seed=seed, players=players)
    rec.steps = [step_entry(p, a, r) for p, a, r in steps]
    return rec.finish(final)


def record_from_engine_game(
    engine: Any,
    i: int,
    initial: dict[str, Any],
    steps: list[tuple[int, int, int | None]],
    seed: int | None = None,
    players: list[str] | None = None,
) -> dict[str, Any]:
    """The record of slot ``i`` of a VectorEngine that has just finished: ``initial`` was
    ``engine.export_game(i)`` when the slot started, ``steps`` the (actor, action, ``last_roll``) of each step."""
    return record_from_steps(initial, steps, engine.export_game(i), seed=seed, players=players)


class AECRecorder:
    """Records the game played through a PettingZoo env (``cluedo_env.env()`` or ``raw_env``).

    Use it in place of the env: ``rec = AECRecorder(env, players=[...]); rec.reset(seed=1)``, then
    ``rec.step(action)`` as usual; ``rec.record()`` is the record of the game so far (finished or
    not). Other attributes are the env's. An illegal action that the env's wrappers turn into the
    end of the game is not recorded (the game state did not change).
    """

    def __init__(self, env: Any, players: list[str] | None = None) -> None:
        self.env = env
        self.raw = env.unwrapped
        self.players = players
        self._rec: Recorder | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._rec = Recorder(self.raw.snapshot(), seed=seed, players=self.players)

    def step(self, action: Any) -> None:
        if self._rec is None:
            raise RecordError("call reset() before step()")
        eng = self.raw.engine
        live = eng.phase[0] != A.OVER and not (
            self.raw.terminations.get(self.raw.agent_selection) or self.raw.truncations.get(self.raw.agent_selection)
        )
        act = None
        if live and action is not None:
            try:
                act = int(action)
            except (TypeError, ValueError):
                act = None
            if act is not None and not (0 <= act < A.NUM_ACTIONS and eng.is_legal(0, act)):
                act = None
        player = int(eng.actor[0])
        self.env.step(action)
        if act is not None:
            roll = int(eng.last_roll[0]) if act == A.ROLL else None  # the dice that step drew
            self._rec.add(player, act, roll)

    def record(self) -> dict[str, Any]:
        if self._rec is None:
            raise RecordError("no game has been started (call reset())")
        return self._rec.finish(self.raw.snapshot())


# ============================================================================ files
def save(record: dict[str, Any], path: str | Path, indent: int | None = None) -> Path:
    """Write ``record`` as JSON (checked first) atomically: a killed writer leaves the old file or none.

    The folder is created if needed; a path that cannot be written is a :class:`RecordError`
    naming it (check it before a game with :func:`check_record_path`, so no game is lost).
    """
    validate(record)
    path = Path(path)
    check_record_path(path)
    try:
        write_text_atomic(path, json.dumps(record, indent=indent) + "\n")
    except OSError as exc:
        raise RecordError(f"cannot write record {path}: {exc.strerror or exc} (choose a writable file path)") from exc
    return path


def check_record_path(path: str | Path) -> Path:
    """Fail before any game is played if ``path`` cannot take a record file (a folder, an unwritable place)."""
    from cluedo_env.errors import UsageError
    from cluedo_env.files import check_writable_file

    try:
        return check_writable_file(path, "record file")
    except UsageError as exc:
        raise RecordError(str(exc)) from None


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a record file; RecordError for a missing, corrupted or foreign file."""
    from cluedo_env.files import read_input

    path = Path(path)
    try:
        text = read_input(path, "record", error=RecordError).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not a game record (not UTF-8 text: {exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: corrupted record, not valid JSON ({exc}; truncated file?)") from exc
    except RecursionError:
        raise RecordError(f"{path}: not a game record (JSON nested too deeply; records are shallow)") from None
    try:
        validate(data)
    except RecordError as exc:
        text = str(exc) if str(exc).endswith(")") else f"{exc} (schema {SCHEMA}: see cluedo_env/record.py)"
        raise RecordError(f"{path}: {text}") from exc
    return data


def validate(record: Any) -> None:
    """Check the structure of a record (not that it replays: see :func:`replay`)."""
    try:
        _validate(record)
    except RecursionError:
        raise RecordError("not a game record (nested too deeply; a record is a few levels deep)") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _validate(record: Any) -> None:
    if not isinstance(record, dict):
        raise RecordError(f"a game record is a JSON object, got {type(record).__name__}")
    schema = record.get("schema")
    if schema != SCHEMA:
        if isinstance(schema, str) and schema.startswith(SCHEMA_PREFIX):
            raise RecordError(
                f"record schema version {schema!r} is not supported; this version of cluedo_env reads {SCHEMA!r}"
            )
        raise RecordError(f"not a cluedo_env game record: schema is {schema!r}, expected {SCHEMA!r}")
    missing = [k for k in FIELDS if k not in record]
    if missing:
        raise RecordError(f"record lacks the field(s) {missing}")
    for key in ("initial", "final"):
        snap = record[key]
        if not isinstance(snap, dict) or snap.get("schema") != SNAPSHOT_SCHEMA:
            raise RecordError(f"record field {key!r} must be a snapshot of schema {SNAPSHOT_SCHEMA!r}")
    if not isinstance(record["rules"], dict) or record["rules"] != record["initial"].get("rules"):
        raise RecordError("record field 'rules' must equal the rules of the initial snapshot")
    if record["seed"] is not None and (not isinstance(record["seed"], int) or isinstance(record["seed"], bool)):
        raise RecordError(f"record field 'seed' must be an integer or null, got {record['seed']!r}")
    players = record["players"]
    if players is not None and (not isinstance(players, list) or not all(isinstance(p, str) for p in players)):
        raise RecordError("record field 'players' must be a list of names (one per seat) or null")
    steps = record["steps"]
    if not isinstance(steps, list):
        raise RecordError("record field 'steps' must be a list")
    for k, st in enumerate(steps):
        if not isinstance(st, dict) or any(f not in st for f in ("player", "action", "roll")):
            raise RecordError(f"steps[{k}] must be an object with 'player', 'action' and 'roll'")
        for f in ("player", "action"):
            if not isinstance(st[f], int) or isinstance(st[f], bool):
                raise RecordError(f"steps[{k}].{f} must be an integer, got {st[f]!r}")
        if st["roll"] is not None and (not isinstance(st["roll"], int) or isinstance(st["roll"], bool)):
            raise RecordError(f"steps[{k}].roll must be an integer or null, got {st['roll']!r}")
    result = record["result"]
    if not isinstance(result, dict) or any(f not in result for f in RESULT_FIELDS):
        raise RecordError(f"record field 'result' must hold {list(RESULT_FIELDS)}")
    if result["winner"] is not None and not _is_int(result["winner"]):
        raise RecordError(f"result.winner must be a seat (an integer) or null, got {result['winner']!r}")
    for f in ("terminated", "truncated"):
        if not isinstance(result[f], bool):
            raise RecordError(f"result.{f} must be true or false, got {result[f]!r}")
    rewards = result["rewards"]
    if not isinstance(rewards, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in rewards
    ):
        raise RecordError(f"result.rewards must be a list of numbers (one per seat), got {str(rewards)[:80]}")


# ============================================================================ replay
def _replay(record: dict[str, Any], snapshots: bool) -> list[dict[str, Any]]:
    from cluedo_env.engine.reference import Game

    validate(record)
    try:
        game = Game.from_dict(record["initial"])
    except SnapshotError as exc:
        raise RecordError(f"the initial state is not a valid snapshot: {exc}") from exc
    except RecursionError:
        raise RecordError("the initial state is nested too deeply (not a snapshot, docs/snapshot.md)") from None
    out = [game.to_dict()] if snapshots else []
    for k, st in enumerate(record["steps"]):
        action, player, roll = st["action"], st["player"], st["roll"]
        if game.is_over:
            raise RecordError(f"steps[{k}] ({A.describe(action)}) comes after the end of the game")
        if player != game.actor:
            raise RecordError(f"steps[{k}]: the record says seat {player} acts, but it is seat {game.actor}'s move")
        if action == A.ROLL and roll is None:
            raise RecordError(f"steps[{k}] is a ROLL without its dice total")
        try:
            game.step(action, roll=roll if action == A.ROLL else None)
        except (A.IllegalActionError, ValueError) as exc:
            raise RecordError(f"steps[{k}] does not replay: {exc}") from exc
        if snapshots:
            out.append(game.to_dict())
    final = game.to_dict()
    if final != record["final"]:
        diff = sorted(k for k in set(final) | set(record["final"]) if final.get(k) != record["final"].get(k))
        raise RecordError(
            f"the record does not replay to its final state: field(s) {diff} differ (a tampered or corrupted record)"
        )
    if result_of(final) != record["result"]:
        raise RecordError("the record's result does not match its final state (a tampered or corrupted record)")
    if not snapshots:
        out.append(final)
    return out


def replay(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The snapshot after every step (index 0 = initial, -1 = final), replayed on the reference engine.

    RecordError if a step is illegal, names the wrong seat, lacks its roll, or the replayed final
    state or result differs from the recorded ones.
    """
    return _replay(record, snapshots=True)


def check(record: dict[str, Any]) -> dict[str, Any]:
    """Replay without keeping the intermediate snapshots (faster); returns the final snapshot."""
    return _replay(record, snapshots=False)[-1]


# ============================================================================ knowledge
def knowledge(snapshot: dict[str, Any], seat: int) -> dict[str, Any]:
    """What ``seat`` knew in ``snapshot``: its own information and the public facts, nothing else.

    Returns a JSON-serialisable dict::

        {"seat": p, "hand": [cards], "hand_sizes": [per seat],
         "shown_to_me": [{"card", "by", "suggestion"}],    # suggestion = index into history
         "i_showed":    [{"card", "to", "suggestion"}],
         "passes": [[cards seat q could not refute], ...],  # per seat, public (R-G6)
         "suggestions": [{"index", "player", "cards", "passed", "refuted_by",
                          "shown": [card or null per refuter]}],   # null: a card this seat did not see
         "accusations": [{"index", "player", "cards", "correct"}],
         "eliminated": [per seat], "envelope": [3 cards] or null (known once this seat accused, R-A2),
         "sheet": {card: {"holder": seat | "envelope" | null, "how": "hand" | "shown" | "accused" | null,
                          "passed_by": [seats that could not refute it]}}}

    Never another seat's hand, nor the envelope unless this seat accused, nor a card shown between
    two other seats.
    """
    P = len(snapshot["hands"])
    if not 0 <= seat < P:
        raise ValueError(f"seat must be 0..{P - 1}, got {seat}")
    hand = list(snapshot["hands"][seat])
    shown_to_me, i_showed, suggestions, accusations = [], [], [], []
    passes: list[set[str]] = [set() for _ in range(P)]
    accused = False
    for h, rec in enumerate(snapshot["history"]):
        if rec["type"] == "accusation":
            accusations.append({"index": h, "player": rec["player"], "cards": list(rec["cards"]),
                                "correct": bool(rec["correct"])})  # fmt: skip
            accused |= rec["player"] == seat
            continue
        for q in rec["passed"]:
            passes[q].update(rec["cards"])
        shown = []
        for by, card in zip(rec["refuted_by"], rec["shown"], strict=True):
            shown.append(card if may_see_shown_card(seat, rec["player"], by) else None)
            if rec["player"] == seat:
                shown_to_me.append({"card": card, "by": by, "suggestion": h})
            elif by == seat:
                i_showed.append({"card": card, "to": rec["player"], "suggestion": h})
        suggestions.append({"index": h, "player": rec["player"], "cards": list(rec["cards"]),
                            "passed": list(rec["passed"]), "refuted_by": list(rec["refuted_by"]),
                            "shown": shown})  # fmt: skip
    envelope = list(snapshot["envelope"]) if accused else None
    order = {name: i for i, name in enumerate(CARD_NAMES)}
    sheet: dict[str, dict[str, Any]] = {}
    for c, name in enumerate(CARD_NAMES):
        holder: int | str | None = None
        how = None
        if name in hand:
            holder, how = seat, "hand"
        elif envelope is not None and name in envelope:
            holder, how = "envelope", "accused"
        else:
            for s in shown_to_me:
                if s["card"] == name:
                    holder, how = s["by"], "shown"
        sheet[name] = {
            "category": ("suspect", "weapon", "room")[card_category(c)],
            "holder": holder,
            "how": how,
            "passed_by": [q for q in range(P) if name in passes[q]],
        }
    return {
        "seat": seat,
        "hand": hand,
        "hand_sizes": [len(h) for h in snapshot["hands"]],
        "shown_to_me": shown_to_me,
        "i_showed": i_showed,
        "passes": [sorted(p, key=order.__getitem__) for p in passes],
        "suggestions": suggestions,
        "accusations": accusations,
        "eliminated": list(snapshot["eliminated"]),
        "envelope": envelope,
        "sheet": sheet,
    }


__all__ = [
    "SCHEMA",
    "AECRecorder",
    "RecordError",
    "Recorder",
    "check",
    "knowledge",
    "load",
    "record_from_engine_game",
    "record_from_steps",
    "replay",
    "result_of",
    "check_record_path",
    "save",
    "validate",
]
