"""Snapshots of one game of a :class:`~cluedo_env.engine.vector_engine.VectorEngine`'s batch: a slot's rows as
the reference engine's :class:`~cluedo_env.engine.reference.Game` and its JSON dict (:mod:`cluedo_env.engine.snapshot`,
docs/snapshot.md), and back.

``eng`` is the engine: its state arrays by name (``eng.pos``, ``eng.hist_kind`` ...), ``config``, ``board``, ``P``,
``H`` and ``has_board``. Reading a snapshot is all or nothing: :func:`read_game` checks everything before
:func:`write_game` writes a row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cluedo_env.engine.history import Accusation, Suggestion
from cluedo_env.engine.reference import Game
from cluedo_env.engine.snapshot import SnapshotError
from cluedo_env.engine.state import ACCUSATION, HISTORY_SLACK, NOT_ASKED, PASSED, SUGGESTION
from cluedo_env.rules.board import NUM_LOCATIONS
from cluedo_env.rules.cards import NUM_CARDS


def export_game(eng: Any, i: int) -> dict[str, Any]:
    """Game ``i`` of engine ``eng`` (a checked slot index) as a reference-engine snapshot dict
    (docs/snapshot.md)."""
    g = Game.__new__(Game)
    g.config, g.board, g.num_players = eng.config, eng.board, eng.P
    g.pos = [int(x) for x in eng.pos[i]] if eng.has_board else []
    g.weapon_room = [int(x) for x in eng.weapon_room[i]] if eng.has_board else []
    g.hands = [sorted(int(c) for c in np.flatnonzero(eng.owner[i] == p)) for p in range(eng.P)]
    g.envelope = tuple(int(c) for c in eng.envelope[i])
    g.phase, g.current, g.refuter = int(eng.phase[i]), int(eng.current[i]), int(eng.refuter[i])
    g.roll, g.turn_count = int(eng.roll[i]), int(eng.turn_count[i])
    g.eliminated = [bool(x) for x in eng.eliminated[i]]
    g.dragged = [bool(x) for x in eng.dragged[i]]
    g.winner = int(eng.winner[i])
    g.terminated, g.truncated = bool(eng.terminated[i]), bool(eng.truncated[i])
    g.rewards = [float(x) for x in eng.rewards[i]]
    g.history = []
    for h in range(int(eng.hist_len[i])):
        s, w, r = (int(x) for x in eng.hist_triple[i, h])
        p = int(eng.hist_player[i, h])
        if eng.hist_kind[i, h] == ACCUSATION:
            g.history.append(Accusation(p, s, w, r, bool(eng.hist_correct[i, h])))
            continue
        rec = Suggestion(p, s, w, r)
        for k in range(1, eng.P):  # in the order asked (R-G6)
            seat = (p + k) % eng.P
            resp = int(eng.hist_response[i, h, seat])
            if resp == PASSED:
                rec.passed.append(seat)
            elif resp >= 0:
                rec.refuted_by.append(seat)
                rec.shown.append(resp)
        g.history.append(rec)
    return g.to_dict()


def read_game(eng: Any, snapshot: dict[str, Any]) -> Game:
    """The game a snapshot describes, read and checked completely (``Game.from_dict``, then engine ``eng``'s rules
    and limits) before anything is written."""
    game = Game.from_dict(snapshot)
    if game.config != eng.config:
        raise SnapshotError(f"snapshot rules {game.config} differ from this engine's {eng.config}")
    check_fits(eng, game)
    return game


def write_game(eng: Any, i: int, game: Game) -> None:
    """Write ``game`` (read and checked: :func:`read_game`) into slot ``i`` of engine ``eng``'s state arrays; the
    derived rows (summaries, destinations, the mask) are the engine's to rebuild."""
    P = eng.P
    # Build the slot's rows apart, then write them all.
    hist_kind = np.zeros(eng.H, np.int8)
    hist_player = np.zeros(eng.H, np.int8)
    hist_triple = np.zeros((eng.H, 3), np.int8)
    hist_correct = np.zeros(eng.H, bool)
    hist_response = np.full((eng.H, P), NOT_ASKED, np.int8)
    for h, rec in enumerate(game.history):
        hist_triple[h] = (rec.suspect, rec.weapon, rec.room)
        if isinstance(rec, Accusation):
            hist_kind[h], hist_player[h], hist_correct[h] = ACCUSATION, rec.accuser, rec.correct
        else:
            hist_kind[h], hist_player[h] = SUGGESTION, rec.suggester
            hist_response[h, rec.passed] = PASSED
            hist_response[h, rec.refuted_by] = rec.shown
    owner = np.full(NUM_CARDS, -1, np.int8)
    for p, hand in enumerate(game.hands):
        owner[hand] = p
    if eng.has_board:
        eng.pos[i] = game.pos
        eng.weapon_room[i] = game.weapon_room
    else:
        eng.pos[i] = 0
        eng.weapon_room[i] = 0
    eng.owner[i] = owner
    eng.hand_size[i] = [len(hand) for hand in game.hands]
    eng.envelope[i] = game.envelope
    eng.phase[i], eng.current[i], eng.refuter[i] = game.phase, game.current, game.refuter
    eng.roll[i], eng.turn_count[i], eng.last_roll[i] = game.roll, game.turn_count, 0
    eng.eliminated[i], eng.dragged[i] = game.eliminated, game.dragged
    eng.winner[i], eng.terminated[i], eng.truncated[i] = game.winner, game.terminated, game.truncated
    eng.rewards[i] = game.rewards
    eng.hist_len[i] = len(game.history)
    eng.hist_kind[i], eng.hist_player[i], eng.hist_triple[i] = hist_kind, hist_player, hist_triple
    eng.hist_correct[i], eng.hist_response[i] = hist_correct, hist_response


def check_fits(eng: Any, game: Game) -> None:
    """Every value of ``game`` within the ranges engine ``eng``'s arrays hold (SnapshotError if not)."""
    P, cfg = eng.P, eng.config

    def fits(name: str, value: Any, lo: int, hi: int) -> None:
        if type(value) not in (int, bool) and not isinstance(value, np.integer) or not lo <= value <= hi:
            raise SnapshotError(f"snapshot field {name!r} is {value!r}; allowed: an integer {lo}..{hi}")

    fits("current", game.current, 0, P - 1)
    fits("refuter", game.refuter, -1, P - 1)
    fits("winner", game.winner, -1, P - 1)
    fits("roll", game.roll, 0, cfg.max_roll)
    fits("turn_count", game.turn_count, 0, cfg.max_turns)
    for loc in game.pos:
        fits("suspects", loc, 0, NUM_LOCATIONS - 1)
    for room in game.weapon_room:
        fits("weapons", room, 0, 8)
    for card in (*game.envelope, *(c for hand in game.hands for c in hand)):
        fits("hands/envelope", card, 0, NUM_CARDS - 1)
    # The game may go on to max_turns with one suggestion a turn, and each player may accuse
    # once (R-A6): the history must have room for all of that, however the game goes on.
    suggestions = sum(not isinstance(rec, Accusation) for rec in game.history)
    if suggestions > game.turn_count + HISTORY_SLACK:
        raise SnapshotError(
            f"snapshot history has {suggestions} suggestions after {game.turn_count} completed turns; "
            f"allowed: at most {game.turn_count + HISTORY_SLACK} (one a turn, and {HISTORY_SLACK} spare for "
            f"hand-made positions)"
        )
    accusers = [rec.accuser for rec in game.history if isinstance(rec, Accusation)]
    if len(set(accusers)) != len(accusers):
        raise SnapshotError("snapshot history has two accusations by one player; allowed: one each (R-A6)")
    for h, rec in enumerate(game.history):
        where = f"history[{h}]"
        fits(f"{where} suspect", rec.suspect, 0, 5)
        fits(f"{where} weapon", rec.weapon, 0, 5)
        fits(f"{where} room", rec.room, 0, 8)
        if isinstance(rec, Accusation):
            fits(f"{where} accuser", rec.accuser, 0, P - 1)
            continue
        fits(f"{where} suggester", rec.suggester, 0, P - 1)
        for seat in (*rec.passed, *rec.refuted_by):
            fits(f"{where} seat", seat, 0, P - 1)
            if seat == rec.suggester:
                raise SnapshotError(f"snapshot field '{where}': the suggester {seat} cannot answer itself")
        for card in rec.shown:
            fits(f"{where} shown", card, 0, NUM_CARDS - 1)
        if len(rec.shown) != len(rec.refuted_by) or len({*rec.passed, *rec.refuted_by}) != len(rec.passed) + len(
            rec.refuted_by
        ):
            raise SnapshotError(f"snapshot field '{where}': each seat answers a suggestion at most once")


__all__ = ["check_fits", "export_game", "read_game", "write_game"]
