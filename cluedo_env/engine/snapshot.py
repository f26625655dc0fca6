"""Game-state snapshots: a JSON-serialisable dict shared by both engines.

Snapshots are for tests, bug reports and moving a game between engines, so they use
names a person can read (``"Hall"``, ``[24, 7]``, ``"Lead Pipe"``), not raw ids.
The schema is documented field by field in ``docs/snapshot.md``; :func:`validate`
checks a dict against it and says what is wrong.

The format sits below both engines: it reads and writes any object with the fields of
:class:`SnapshotGame` (the reference :class:`~cluedo_env.engine.reference.Game` is one, and
its ``to_dict``/``from_dict`` call this module), so it never imports an engine.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from cluedo_env.engine.history import Accusation, HistoryEntry, Suggestion
from cluedo_env.engine.state import history_capacity
from cluedo_env.errors import CluedoError
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import Board, load_board
from cluedo_env.rules.cards import (
    CARD_NAMES,
    NUM_CARDS,
    ROOM_CARD0,
    ROOMS,
    SUSPECTS,
    WEAPON_CARD0,
    WEAPONS,
    card_id,
    room_id,
    suspect_id,
    weapon_id,
)
from cluedo_env.rules.config import ConfigError, RulesConfig

SCHEMA = "cluedo_env.snapshot/1"


class SnapshotError(CluedoError):
    """A snapshot dict that does not follow the schema; the message names the field."""


class SnapshotGame(Protocol):
    """What a snapshot holds of a game: the fields it writes and reads, named as the reference engine names them."""

    config: RulesConfig
    board: Board
    num_players: int
    phase: int
    current: int
    refuter: int
    roll: int
    turn_count: int
    pos: list[int]
    weapon_room: list[int]
    hands: list[list[int]]
    envelope: tuple[int, int, int]
    eliminated: list[bool]
    dragged: list[bool]
    history: list[HistoryEntry]
    winner: int
    terminated: bool
    truncated: bool
    rewards: list[float]

    def __init__(self, config: RulesConfig | None = None, seed: int | None = None) -> None: ...

    def current_room(self) -> int: ...


G = TypeVar("G", bound=SnapshotGame)


def loc_to_json(loc: int) -> str | list[int]:
    board = load_board()
    if board.is_room(loc):
        return ROOMS[board.room_of(loc)]
    return list(board.squares[loc])


def loc_from_json(value: Any, field: str = "location") -> int:
    board = load_board()
    if isinstance(value, str):
        return board.room_loc(_name(room_id, value, field))
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(_is_int(v) for v in value)
        and tuple(value) in board.square_of
    ):
        return board.square_of[tuple(value)]
    raise SnapshotError(
        f"{field}: location {value!r} is neither a room name nor a walkable [row, col] square "
        f"(rooms: {', '.join(ROOMS)}; squares as [row, col] on the map of docs/BOARD.md)"
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value: Any, field: str, lo: int, hi: int, *, none: bool = False) -> int | None:
    """A JSON integer in ``lo..hi`` (never a bool, float or string); ``none``: null is allowed too."""
    if value is None and none:
        return None
    if not _is_int(value) or not lo <= value <= hi:
        allowed = f"an integer from {lo} to {hi}" + (" or null" if none else "")
        raise SnapshotError(f"{field}={value!r} is not allowed ({allowed})")
    return value


def _bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise SnapshotError(f"{field}={value!r} is not allowed (true or false)")
    return value


def _list(value: Any, field: str, length: int | None = None, max_len: int | None = None) -> list:
    if not isinstance(value, list):
        raise SnapshotError(f"{field} must be a list, got {type(value).__name__} ({_len_text(length, max_len)})")
    if (length is not None and len(value) != length) or (max_len is not None and len(value) > max_len):
        raise SnapshotError(f"{field} has {len(value)} entries ({_len_text(length, max_len)})")
    return value


def _len_text(length: int | None, max_len: int | None) -> str:
    if length is not None:
        return f"a list of {length} entries"
    if max_len is not None:
        return f"a list of at most {max_len} entries"
    return "a JSON list"


def _name(lookup: Any, value: Any, field: str) -> int:
    """A card, suspect, weapon or room id from its name; SnapshotError naming the field and the names."""
    if not isinstance(value, str):
        raise SnapshotError(f"{field}={value!r} is not allowed (a name such as 'Plum', 'Rope' or 'Hall')")
    try:
        return lookup(value)
    except ValueError as exc:
        text = str(exc).replace("; ", " (", 1) + ")"  # "unknown room 'X' (rooms are: ...)"
        raise SnapshotError(f"{field}: {text}") from None


def _seats(value: Any, field: str, P: int) -> list[int]:
    items = _list(value, field, max_len=P)
    seats = [_int(q, f"{field}[{k}]", 0, P - 1) for k, q in enumerate(items)]
    if len(set(seats)) != len(seats):
        raise SnapshotError(f"{field}={items!r} names a seat twice (each seat at most once)")
    return seats  # type: ignore[return-value]


def history_to_json(history: list[HistoryEntry]) -> list[dict[str, Any]]:
    out = []
    for rec in history:
        cards = [SUSPECTS[rec.suspect], WEAPONS[rec.weapon], ROOMS[rec.room]]
        if isinstance(rec, Accusation):
            out.append({"type": "accusation", "player": rec.accuser, "cards": cards, "correct": rec.correct})
        else:
            out.append(
                {
                    "type": "suggestion",
                    "player": rec.suggester,
                    "cards": cards,
                    "passed": list(rec.passed),
                    "refuted_by": list(rec.refuted_by),
                    "shown": [CARD_NAMES[c] for c in rec.shown],
                }
            )
    return out


def history_from_json(items: Any, P: int = 6, max_len: int | None = None) -> list[HistoryEntry]:
    """History records from JSON, every field type- and range-checked (seats ``0..P-1``)."""
    items = _list(items, "history", max_len=max_len)
    out: list[HistoryEntry] = []
    for i, item in enumerate(items):
        where = f"history[{i}]"
        if not isinstance(item, dict):
            raise SnapshotError(f"{where} must be an object, got {type(item).__name__} (a suggestion or accusation)")
        kind = item.get("type")
        if kind not in ("suggestion", "accusation"):
            raise SnapshotError(f"{where}.type must be 'suggestion' or 'accusation', got {kind!r}")
        need = ("player", "cards", "correct") if kind == "accusation" else (
            "player", "cards", "passed", "refuted_by", "shown")  # fmt: skip
        missing = [k for k in need if k not in item]
        if missing:
            raise SnapshotError(f"{where} lacks {missing} (a {kind} has {list(need)})")
        player = _int(item["player"], f"{where}.player", 0, P - 1)
        cards = _list(item["cards"], f"{where}.cards", length=3)
        s = _name(suspect_id, cards[0], f"{where}.cards[0]")
        w = _name(weapon_id, cards[1], f"{where}.cards[1]")
        r = _name(room_id, cards[2], f"{where}.cards[2]")
        if kind == "accusation":
            out.append(Accusation(player, s, w, r, _bool(item["correct"], f"{where}.correct")))
            continue
        passed = _seats(item["passed"], f"{where}.passed", P)
        refuted = _seats(item["refuted_by"], f"{where}.refuted_by", P)
        if player in passed or player in refuted or set(passed) & set(refuted):
            raise SnapshotError(
                f"{where}: seats {passed} passed and {refuted} refuted (the suggester and each other seat at most once)"
            )
        shown_names = _list(item["shown"], f"{where}.shown", length=len(refuted))
        shown = [_name(card_id, c, f"{where}.shown[{k}]") for k, c in enumerate(shown_names)]
        out.append(Suggestion(player, s, w, r, passed, refuted, shown))
    return out


def game_to_dict(game: SnapshotGame) -> dict[str, Any]:
    has_board = game.config.has_board
    return {
        "schema": SCHEMA,
        "rules": game.config.to_dict(),
        "phase": A.PHASE_NAMES[game.phase],
        "current": game.current,
        "refuter": game.refuter if game.refuter >= 0 else None,
        "roll": game.roll,
        "turn_count": game.turn_count,
        "suspects": {SUSPECTS[s]: loc_to_json(loc) for s, loc in enumerate(game.pos)} if has_board else None,
        "weapons": {WEAPONS[w]: ROOMS[r] for w, r in enumerate(game.weapon_room)} if has_board else None,
        "hands": [[CARD_NAMES[c] for c in hand] for hand in game.hands],
        "envelope": [CARD_NAMES[c] for c in game.envelope],
        "eliminated": list(game.eliminated),
        "dragged": list(game.dragged),
        "history": history_to_json(game.history),
        "winner": game.winner if game.winner >= 0 else None,
        "terminated": game.terminated,
        "truncated": game.truncated,
        "rewards": list(game.rewards),
    }


def _field(data: dict[str, Any], key: str, read: list[str] | None = None) -> Any:
    if key not in data:
        raise SnapshotError(f"snapshot lacks the field {key!r}")
    if read is not None:
        read.append(key)  # the field being converted, for error messages
    return data[key]


def game_from_dict(cls: type[G], data: dict[str, Any], seed: int | None = None) -> G:
    """Build a game of class ``cls`` from a snapshot; raises SnapshotError on a malformed one.

    Every field is checked for its JSON type and range before it is used (``"false"`` is not a
    bool, ``1.7`` is not a seat, a seat must exist, a count must fit the rules), then the
    invariants every reachable state has (:func:`validate`).
    """
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise SnapshotError(f"not a snapshot: schema is {got!r} (expected {SCHEMA!r})")
    read: list[str] = []
    try:
        game = _game_from_dict(cls, data, seed, read)
    except SnapshotError:
        raise
    except ConfigError as exc:
        raise SnapshotError(f"snapshot field 'rules': {exc}") from exc
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # a bad name, value or length in a field
        field = read[-1] if read else "rules"
        raise SnapshotError(f"snapshot field {field!r} is malformed ({exc}; see docs/snapshot.md)") from exc
    validate(game)
    return game


def _game_from_dict(cls: type[G], data: dict[str, Any], seed: int | None, read: list[str]) -> G:
    config = RulesConfig.from_dict(_field(data, "rules", read))
    game = cls(config, seed=seed)
    P = config.players
    phase = _field(data, "phase", read)
    if not isinstance(phase, str) or phase not in A.PHASE_NAMES:
        raise SnapshotError(f"phase {phase!r} is not allowed (one of {list(A.PHASE_NAMES)})")
    game.phase = A.PHASE_NAMES.index(phase)
    game.current = _int(_field(data, "current", read), "current", 0, P - 1)
    refuter = _int(_field(data, "refuter", read), "refuter", 0, P - 1, none=True)
    game.refuter = -1 if refuter is None else refuter
    game.roll = _int(_field(data, "roll", read), "roll", 0, config.max_roll)
    game.turn_count = _int(_field(data, "turn_count", read), "turn_count", 0, config.max_turns)
    if config.has_board:
        suspects = _field(data, "suspects", read)
        if not isinstance(suspects, dict) or sorted(map(str, suspects)) != sorted(SUSPECTS):
            raise SnapshotError(f"suspects must name all six suspects ({', '.join(SUSPECTS)}), each with a location")
        game.pos = [loc_from_json(suspects[name], f"suspects.{name}") for name in SUSPECTS]
        weapons = _field(data, "weapons", read)
        if not isinstance(weapons, dict) or sorted(map(str, weapons)) != sorted(WEAPONS):
            raise SnapshotError(f"weapons must name all six weapons ({', '.join(WEAPONS)}), each with a room")
        game.weapon_room = [_name(room_id, weapons[name], f"weapons.{name}") for name in WEAPONS]
    else:
        for key in ("suspects", "weapons"):
            if data.get(key) is not None:
                raise SnapshotError(f"{key} must be null in the card-only game (board=none has no tokens)")
    hands = _list(_field(data, "hands", read), "hands", length=P)
    game.hands = [
        sorted(_name(card_id, c, f"hands[{q}][{k}]") for k, c in enumerate(_list(h, f"hands[{q}]", max_len=21)))
        for q, h in enumerate(hands)
    ]
    env = [_name(card_id, c, f"envelope[{k}]") for k, c in enumerate(_list(_field(data, "envelope", read),
                                                                          "envelope", length=3))]  # fmt: skip
    game.envelope = (env[0], env[1], env[2])
    game.eliminated = [_bool(x, f"eliminated[{q}]") for q, x in enumerate(
        _list(_field(data, "eliminated", read), "eliminated", length=P))]  # fmt: skip
    game.dragged = [_bool(x, f"dragged[{q}]") for q, x in enumerate(
        _list(_field(data, "dragged", read), "dragged", length=P))]  # fmt: skip
    # the batched engine's capacity (one suggestion a turn, one accusation a player, a few spare)
    game.history = history_from_json(_field(data, "history", read), P, max_len=history_capacity(config))
    winner = _int(_field(data, "winner", read), "winner", 0, P - 1, none=True)
    game.winner = -1 if winner is None else winner
    game.terminated = _bool(_field(data, "terminated", read), "terminated")
    game.truncated = _bool(_field(data, "truncated", read), "truncated")
    read.append("rewards")
    rewards = _list(data.get("rewards", [0.0] * P), "rewards", length=P)
    for q, x in enumerate(rewards):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not -1.0 <= x <= 1.0:
            raise SnapshotError(f"rewards[{q}]={x!r} is not allowed (a number from -1 to 1)")
    game.rewards = [float(x) for x in rewards]
    return game


def validate(game: SnapshotGame) -> None:
    """Check the invariants every reachable state has; raise SnapshotError naming the broken one."""
    P = game.num_players
    for name in ("hands", "eliminated", "dragged", "rewards"):
        if len(getattr(game, name)) != P:
            raise SnapshotError(f"{name} must have one entry per player ({P})")
    s, w, r = game.envelope
    if not (0 <= s < WEAPON_CARD0 <= w < ROOM_CARD0 <= r < NUM_CARDS):
        raise SnapshotError("envelope must be [suspect, weapon, room] in that order (R-S4)")
    cards = sorted([c for hand in game.hands for c in hand] + list(game.envelope))
    if cards != list(range(NUM_CARDS)):
        raise SnapshotError("the 21 cards must each be exactly once in a hand or the envelope (R-S4, R-S5)")
    sizes = [len(h) for h in game.hands]
    if max(sizes) - min(sizes) > 1:
        raise SnapshotError(f"hand sizes {sizes} differ by more than one (R-S5)")
    if not 0 <= game.current < P or game.eliminated[game.current] and game.phase != A.OVER:
        raise SnapshotError(f"current={game.current} must be a seat 0..{P - 1} still in the game")
    if (game.phase == A.REFUTE) != (0 <= game.refuter < P):
        raise SnapshotError("refuter must be a seat exactly when phase is 'refute'")
    if game.phase == A.REFUTE:
        last = game.history[-1] if game.history else None
        if not isinstance(last, Suggestion) or last.suggester != game.current or game.refuter == game.current:
            raise SnapshotError(
                "phase 'refute' needs another player's refuter and the current player's suggestion last"
            )
    if game.phase == A.MOVE and not game.config.dice <= game.roll <= game.config.max_roll:
        raise SnapshotError(f"phase 'move' needs a roll in {game.config.dice}..{game.config.max_roll}")
    if game.config.has_board:
        squares = [loc for loc in game.pos if not game.board.is_room(loc)]
        if len(squares) != len(set(squares)):
            raise SnapshotError("two suspect tokens on one square (R-M2)")
        if game.phase == A.SUGGEST and game.current_room() < 0:
            raise SnapshotError("phase 'suggest' needs the current player's token in a room (R-G1)")
        for q in range(P):  # R-T3: only the current player may have left the room it was dragged into
            if game.dragged[q] and not game.board.is_room(game.pos[q]):
                if q != game.current or game.phase == A.START:
                    raise SnapshotError(f"dragged[{q}] is set but that token is not in a room (R-T3)")
    if game.phase == A.OVER and not (game.terminated or game.truncated):
        raise SnapshotError("phase 'over' needs terminated or truncated")
    if game.phase != A.OVER and (game.terminated or game.truncated or game.winner >= 0):
        raise SnapshotError("winner, terminated and truncated are set only when phase is 'over' (null, false, false)")
    if game.winner >= 0 and not game.terminated:
        raise SnapshotError(f"winner={game.winner} needs terminated=true (a truncated game has no winner, R-E3)")
    accusers = [rec.accuser for rec in game.history if isinstance(rec, Accusation)]
    if len(set(accusers)) != len(accusers):
        raise SnapshotError(f"history has two accusations by one seat (accusers {accusers}; each seat accuses once)")
