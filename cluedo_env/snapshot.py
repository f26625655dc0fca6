"""Game-state snapshots: a JSON-serialisable dict shared by both engines.

Snapshots are for tests, bug reports and moving a game between engines, so they use
names a person can read (``"Hall"``, ``[24, 7]``, ``"Lead Pipe"``), not raw ids.
The schema is documented field by field in ``docs/snapshot.md``; :func:`validate`
checks a dict against it and says what is wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cluedo_env import actions as A
from cluedo_env.board import load_board
from cluedo_env.cards import (
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
from cluedo_env.config import RulesConfig

if TYPE_CHECKING:
    from cluedo_env.reference import Game

SCHEMA = "cluedo_env.snapshot/1"


class SnapshotError(ValueError):
    """A snapshot dict that does not follow the schema; the message names the field."""


def loc_to_json(loc: int) -> str | list[int]:
    board = load_board()
    if board.is_room(loc):
        return ROOMS[board.room_of(loc)]
    return list(board.squares[loc])


def loc_from_json(value: Any) -> int:
    board = load_board()
    if isinstance(value, str):
        return board.room_loc(room_id(value))
    if isinstance(value, (list, tuple)) and len(value) == 2 and tuple(value) in board.square_of:
        return board.square_of[tuple(value)]
    raise SnapshotError(f"location {value!r} is neither a room name nor a walkable [row, col] square")


def history_to_json(history: list) -> list[dict[str, Any]]:
    from cluedo_env.reference import Accusation

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


def history_from_json(items: list[dict[str, Any]]) -> list:
    from cluedo_env.reference import Accusation, Suggestion

    out: list = []
    for i, item in enumerate(items):
        try:
            s, w, r = item["cards"]
            s, w, r = suspect_id(s), weapon_id(w), room_id(r)
            if item["type"] == "accusation":
                out.append(Accusation(int(item["player"]), s, w, r, bool(item["correct"])))
            elif item["type"] == "suggestion":
                shown = [card_id(c) for c in item["shown"]]
                out.append(
                    Suggestion(int(item["player"]), s, w, r, list(item["passed"]), list(item["refuted_by"]), shown)
                )
            else:
                raise SnapshotError(f"history[{i}].type must be 'suggestion' or 'accusation', got {item['type']!r}")
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, SnapshotError):
                raise
            raise SnapshotError(f"history[{i}] is malformed: {exc}") from exc
    return out


def game_to_dict(game: Game) -> dict[str, Any]:
    has_board = game.config.has_board
    return {
        "schema": SCHEMA,
        "rules": game.config.to_dict(),
        "phase": A.PHASE_NAMES[game.phase],
        "current": game.current,
        "refuter": game.refuter if game.refuter >= 0 else None,
        "roll": game.roll,
        "turn_count": game.turn_count,
        "suspects": {SUSPECTS[s]: loc_to_json(loc) for s, loc in enumerate(game.positions)} if has_board else None,
        "weapons": {WEAPONS[w]: ROOMS[r] for w, r in enumerate(game.weapons)} if has_board else None,
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


def game_from_dict(cls: type[Game], data: dict[str, Any], seed: int | None = None) -> Game:
    """Build a game of class ``cls`` from a snapshot; raises SnapshotError on a malformed one."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise SnapshotError(f"not a snapshot of schema {SCHEMA!r}")
    read: list[str] = []
    try:
        game = _game_from_dict(cls, data, seed, read)
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # a bad name, value or length in a field
        raise SnapshotError(f"snapshot field {read[-1] if read else 'rules'!r} is malformed: {exc}") from exc
    validate(game)
    return game


def _game_from_dict(cls: type[Game], data: dict[str, Any], seed: int | None, read: list[str]) -> Game:
    config = RulesConfig.from_dict(_field(data, "rules", read))
    game = cls(config, seed=seed)
    P = config.players
    phase = _field(data, "phase", read)
    if phase not in A.PHASE_NAMES:
        raise SnapshotError(f"phase {phase!r} is not one of {A.PHASE_NAMES}")
    game.phase = A.PHASE_NAMES.index(phase)
    game.current = int(_field(data, "current", read))
    game.refuter = -1 if _field(data, "refuter", read) is None else int(data["refuter"])
    game.roll = int(_field(data, "roll", read))
    game.turn_count = int(_field(data, "turn_count", read))
    if config.has_board:
        suspects = _field(data, "suspects", read)
        if sorted(suspects) != sorted(SUSPECTS):
            raise SnapshotError("suspects must name all six suspects")
        game.positions = [loc_from_json(suspects[name]) for name in SUSPECTS]
        weapons = _field(data, "weapons", read)
        if sorted(weapons) != sorted(WEAPONS):
            raise SnapshotError("weapons must name all six weapons")
        game.weapons = [room_id(weapons[name]) for name in WEAPONS]
    game.hands = [sorted(card_id(c) for c in hand) for hand in _field(data, "hands", read)]
    env = [card_id(c) for c in _field(data, "envelope", read)]
    game.envelope = (env[0], env[1], env[2])
    game.eliminated = [bool(x) for x in _field(data, "eliminated", read)]
    game.dragged = [bool(x) for x in _field(data, "dragged", read)]
    game.history = history_from_json(_field(data, "history", read))
    game.winner = -1 if _field(data, "winner", read) is None else int(data["winner"])
    game.terminated = bool(_field(data, "terminated", read))
    game.truncated = bool(_field(data, "truncated", read))
    read.append("rewards")
    game.rewards = [float(x) for x in data.get("rewards", [0.0] * P)]
    return game


def validate(game: Game) -> None:
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
        from cluedo_env.reference import Suggestion

        last = game.history[-1] if game.history else None
        if not isinstance(last, Suggestion) or last.suggester != game.current or game.refuter == game.current:
            raise SnapshotError(
                "phase 'refute' needs another player's refuter and the current player's suggestion last"
            )
    if game.phase == A.MOVE and not game.config.dice <= game.roll <= game.config.max_roll:
        raise SnapshotError(f"phase 'move' needs a roll in {game.config.dice}..{game.config.max_roll}")
    if game.config.has_board:
        squares = [loc for loc in game.positions if not game.board.is_room(loc)]
        if len(squares) != len(set(squares)):
            raise SnapshotError("two suspect tokens on one square (R-M2)")
        if game.phase == A.SUGGEST and game.current_room() < 0:
            raise SnapshotError("phase 'suggest' needs the current player's token in a room (R-G1)")
        for q in range(P):  # R-T3: only the current player may have left the room it was dragged into
            if game.dragged[q] and not game.board.is_room(game.positions[q]):
                if q != game.current or game.phase == A.START:
                    raise SnapshotError(f"dragged[{q}] is set but that token is not in a room (R-T3)")
    if game.phase == A.OVER and not (game.terminated or game.truncated):
        raise SnapshotError("phase 'over' needs terminated or truncated")
