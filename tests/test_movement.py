"""Movement alone: the compiled move kernel (cluedo_env/movement.py) against the reference engine.

The oracle is ``cluedo_env.engine.reference.move_destinations`` (R-M1..R-M6). Covered: every start
and every roll on the empty board (one and two dice), random positions crowded with tokens
near doors and near the mover, every single blocker near every door-front start, room
starts with some or all doors blocked (R-M6) and forfeited moves (R-M8), and the kernel
called per move from compiled code with the ``others`` a caller really passes.

Environment variable: ``CLUEDO_MOVE_CASES`` scales the random-position tests (default 1;
``CLUEDO_MOVE_CASES=10`` is a soak run of 200,000 one-die and 50,000 two-dice moves).
"""

from __future__ import annotations

import os

import numba
import numpy as np
import pytest

from cluedo_env.engine.movement import (
    WITNESSES,
    MoveTables,
    _exact_search,
    destinations,
    move_tables,
)
from cluedo_env.engine.movement import fill_destinations as _fill_compiled
from cluedo_env.engine.reference import move_destinations
from cluedo_env.rules.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0, load_board


@numba.njit
def fill_destinations(t: MoveTables, start: int, roll: int, others: np.ndarray, out: np.ndarray) -> int:
    """The move kernel, callable from Python: the engine's copy is compiled for its callers only (no wrapper)."""
    return _fill_compiled(t, start, roll, others, out)


BOARD = load_board()
_FRONTS = np.array(sorted(BOARD.front_room), np.int64)
_NEAR_DOORS = np.array(sorted(set(_FRONTS.tolist()) | {n for f in _FRONTS for n in BOARD.neighbors[f]}), np.int64)
_SCALE = float(os.environ.get("CLUEDO_MOVE_CASES", "1"))


def _random_moves(
    rng: np.random.Generator, n: int, max_roll: int, tokens: int = 5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n random (start, roll, others) with ``tokens`` other tokens: near doors, near the mover, anywhere, in rooms.

    Returns start (n,) int64, roll (n,) int64 in 1..max_roll, others (n, tokens) int64.
    A quarter of the room starts get some or all of their doors blocked (R-M6).
    """
    start = np.empty(n, np.int64)
    roll = rng.integers(1, max_roll + 1, n)
    others = np.full((n, tokens), -1, np.int64)
    for k in range(n):
        u = rng.random()
        if u < 0.35:
            start[k] = ROOM_LOC0 + rng.integers(9)
        elif u < 0.5:
            start[k] = rng.choice(_FRONTS)
        else:
            start[k] = rng.integers(NUM_SQUARES)
        taken = {int(start[k])}
        blockers: list[int] = []
        if start[k] >= ROOM_LOC0 and rng.random() < 0.25:  # block every door, or some, of the mover's room
            fronts = BOARD.room_fronts[start[k] - ROOM_LOC0]
            blockers += list(fronts if rng.random() < 0.6 else fronts[: 1 + rng.integers(len(fronts))])
            taken.update(blockers)
        near = np.flatnonzero(BOARD.distance[start[k], :NUM_SQUARES] <= roll[k])
        while len(blockers) < tokens:
            u = rng.random()
            if u < 0.15:
                blockers.append(-1)  # no token (fewer suspects in the way)
            elif u < 0.25:
                blockers.append(ROOM_LOC0 + int(rng.integers(9)))  # in a room: never blocks
            else:
                pool = _NEAR_DOORS if u < 0.55 else near if u < 0.9 else np.arange(NUM_SQUARES)
                cand = int(rng.choice(pool))
                blockers.append(-1 if cand in taken else cand)
            taken.add(blockers[-1])
        others[k] = rng.permutation(blockers[:tokens])
    return start, roll, others


def _check(got: np.ndarray, start: np.ndarray, roll: np.ndarray, others: np.ndarray) -> tuple[int, int]:
    """Assert each row of got equals the reference; return (forfeited moves, trapped room starts) seen."""
    trapped = forfeited = 0
    for k in range(len(start)):
        occupied = {int(o) for o in others[k] if 0 <= o < NUM_SQUARES}
        want = move_destinations(BOARD, int(start[k]), int(roll[k]), occupied)
        have = np.flatnonzero(got[k]).tolist()
        assert have == want, (
            f"case {k}: start {BOARD.loc_name(int(start[k]))}, roll {roll[k]}, tokens at "
            f"{[BOARD.loc_name(int(o)) for o in others[k] if o >= 0]}: kernel {[BOARD.loc_name(x) for x in have]} "
            f"vs reference {[BOARD.loc_name(x) for x in want]}"
        )
        forfeited += not want
        trapped += start[k] >= ROOM_LOC0 and all(f in occupied for f in BOARD.room_fronts[start[k] - ROOM_LOC0])
    return forfeited, trapped


def test_tables_fit_the_budget():
    """The issue's budget: at most 50 MB of tables for two dice; the parts have the documented shapes."""
    t = move_tables(12)
    assert t.max_roll == 12 and t.ints.dtype == np.int32 and t.words.dtype == np.uint64
    assert t.ints.nbytes + t.words.nbytes <= 50 * 2**20
    assert (t.distance == BOARD.distance).all()
    assert t.ball.shape == (NUM_SQUARES, 13, 3) and t.first[-1] == len(t.dest)
    assert t.paths.shape == (len(t.dest), 1 + WITNESSES, 3)
    assert t.empty.shape == (NUM_LOCATIONS, 13, NUM_LOCATIONS) and not t.empty[:, 0].any()
    assert move_tables(12) is t  # built once per process


@pytest.mark.parametrize("max_roll,n", [(6, 20000), (12, 5000)])
def test_random_crowded_positions_match_reference(max_roll: int, n: int):
    n = int(n * _SCALE)
    rng = np.random.default_rng(max_roll)
    start, roll, others = _random_moves(rng, n, max_roll)
    got = destinations(move_tables(max_roll), start, roll, others)
    assert got.shape == (n, NUM_LOCATIONS) and got.dtype == np.bool_
    forfeited, trapped = _check(got, start, roll, others)
    # The generator must reach the interesting cases: blocked rooms and forfeited moves (R-M6, R-M8).
    assert trapped > 10 and forfeited > 10, (trapped, forfeited)


def test_two_dice_rolls_with_six_tokens_near_the_mover_match_reference():
    """Two-dice rolls (2..12, as 2d6 gives them) in a crowd of six tokens, most within the roll."""
    n = int(3000 * _SCALE)
    rng = np.random.default_rng(2)
    start, _, others = _random_moves(rng, n, 12, tokens=6)
    roll = rng.integers(1, 7, n) + rng.integers(1, 7, n)
    _check(destinations(move_tables(12), start, roll, others), start, roll, others)


@pytest.mark.parametrize("max_roll", [6, 12])
def test_empty_board_every_start_and_roll_matches_reference(max_roll: int):
    """Every start location with every roll and no other token: the precomputed table."""
    start = np.repeat(np.arange(NUM_LOCATIONS), max_roll)
    roll = np.tile(np.arange(1, max_roll + 1), NUM_LOCATIONS)
    got = destinations(move_tables(max_roll), start, roll, np.full((len(start), 5), -1))
    for k in range(len(start)):
        want = move_destinations(BOARD, int(start[k]), int(roll[k]), set())
        assert np.flatnonzero(got[k]).tolist() == want, f"start {BOARD.loc_name(int(start[k]))}, roll {roll[k]}"


def _words(mask: np.ndarray) -> list[np.uint64]:
    """(n <= 256,) bool -> four uint64 words, bit i of word w = mask[64 w + i]."""
    bits = np.zeros(4 * 64, np.bool_)
    bits[: len(mask)] = mask
    return [np.uint64(int("".join("1" if b else "0" for b in bits[64 * w : 64 * w + 64][::-1]), 2)) for w in range(4)]


def _search_alone(t: MoveTables, empty: np.ndarray, start: int, roll: int, others: np.ndarray) -> np.ndarray:
    """(197,) bool: the exact search (step 3 of the kernel) with every empty-board destination undecided."""
    tokens = np.zeros(NUM_SQUARES, np.bool_)
    tokens[[o for o in others if 0 <= o < NUM_SQUARES]] = True
    b = _words(tokens)
    r = _words(empty[start, roll])
    out = np.zeros(NUM_LOCATIONS, np.bool_)
    n = _exact_search(t, start, roll, b[0], b[1], b[2], r[0], r[1], r[2], r[3], out)
    assert n == out.sum()
    return out


def test_search_alone_with_no_token_agrees_with_the_table():
    """The search and the empty-board table come from different code; with no token they must agree."""
    t = move_tables(12)
    empty = t.empty
    none = np.full(0, -1, np.int64)
    for start in range(NUM_LOCATIONS):
        for roll in range(1, 13):
            got = _search_alone(t, empty, start, roll, none)
            assert (got == empty[start, roll]).all(), (BOARD.loc_name(start), roll)


def test_search_alone_in_crowds_matches_reference():
    """The search decides what the cut squares and witnesses leave open; here it decides everything."""
    rng = np.random.default_rng(5)
    start, roll, others = _random_moves(rng, int(1500 * _SCALE), 12, tokens=6)
    t = move_tables(12)
    empty = t.empty
    got = np.stack([_search_alone(t, empty, int(s), int(r), o) for s, r, o in zip(start, roll, others, strict=True)])
    _check(got, start, roll, others)


def test_every_single_blocker_near_every_door_front_matches_reference():
    """Each square on which one token can block each path of a small roll, from every door-front start."""
    cases = [
        (s, r, b)
        for s in _FRONTS.tolist()
        for b in range(NUM_SQUARES)
        if b != s and BOARD.distance[s, b] <= 4
        for r in range(1, 7)
    ]
    start = np.array([c[0] for c in cases])
    roll = np.array([c[1] for c in cases])
    others = np.full((len(cases), 5), -1)
    others[:, 2] = [c[2] for c in cases]
    for max_roll in (6, 12):
        got = destinations(move_tables(max_roll), start, roll, others)
        _check(got, start, roll, others)


def test_single_blocker_with_two_dice_from_door_fronts_matches_reference():
    """Long rolls (7..12) with one token one to three pips from a door-front start: the search's detours."""
    rng = np.random.default_rng(7)
    cases = [(s, b) for s in _FRONTS.tolist() for b in range(NUM_SQUARES) if b != s and BOARD.distance[s, b] <= 3]
    start = np.array([c[0] for c in cases])
    others = np.full((len(cases), 6), -1)
    others[:, 0] = [c[1] for c in cases]
    roll = rng.integers(7, 13, len(cases))
    _check(destinations(move_tables(12), start, roll, others), start, roll, others)


@pytest.mark.parametrize("max_roll", [6, 12])
def test_room_starts_with_blocked_doors(max_roll: int):
    """R-M6: a room whose every door is blocked gives no destination (R-M8); each subset of blocked doors matches."""
    t = move_tables(max_roll)
    for room in range(9):
        fronts = BOARD.room_fronts[room]
        for subset in range(1, 2 ** len(fronts)):
            tokens = [f for i, f in enumerate(fronts) if subset >> i & 1]
            others = np.full(6, -1, np.int16)
            others[: len(tokens)] = tokens
            for roll in range(1, max_roll + 1):
                out = np.zeros(NUM_LOCATIONS, np.bool_)
                n = fill_destinations(t, ROOM_LOC0 + room, roll, others, out)
                want = move_destinations(BOARD, ROOM_LOC0 + room, roll, set(tokens))
                assert np.flatnonzero(out).tolist() == want and n == len(want), (room, tokens, roll)
                if len(tokens) == len(fronts):
                    assert n == 0  # trapped: nothing to move to (R-M6, R-M8)


def test_forfeited_moves_on_squares():
    """R-M8: a boxed-in token, and a roll that a dead end cannot spend exactly, leave no destination."""
    t = move_tables(12)
    found = 0
    for sq in range(NUM_SQUARES):
        if sq in BOARD.front_room:
            continue  # a token on a door's front square can always enter the room (R-M4)
        others = np.full(6, -1, np.int16)
        others[: len(BOARD.neighbors[sq])] = BOARD.neighbors[sq]
        out = np.zeros(NUM_LOCATIONS, np.bool_)
        assert fill_destinations(t, sq, 5, others, out) == 0 and not out.any()
        # One neighbour left open: the token can walk only into what lies behind it.
        for roll in (3, 8, 11):
            others[0] = -1
            out[:] = False
            n = fill_destinations(t, sq, roll, others, out)
            want = move_destinations(BOARD, sq, roll, {int(o) for o in others if o >= 0})
            assert np.flatnonzero(out).tolist() == want and n == len(want)
            found += n == 0
            others[0] = BOARD.neighbors[sq][0]
    assert found > 0


def test_others_dtype_length_and_rooms():
    """``others`` may be int16 or int64, of any length; rooms and negatives never block, the count is exact."""
    t = move_tables(12)
    start, roll = BOARD.starts[0], 9
    want = move_destinations(BOARD, start, roll, set())
    for others in (
        np.zeros(0, np.int16),
        np.array([-1, ROOM_LOC0, NUM_LOCATIONS - 1, -7], np.int16),
        np.array([ROOM_LOC0 + 3] * 9, np.int64),
    ):
        out = np.zeros(NUM_LOCATIONS, np.bool_)
        assert fill_destinations(t, start, roll, others, out) == len(want)
        assert np.flatnonzero(out).tolist() == want


@numba.njit  # not cached: numba would not see a change to the kernel it inlines
def _count_all(t: MoveTables, start: np.ndarray, roll: np.ndarray, others: np.ndarray) -> np.ndarray:
    """A compiled caller, as the engine is: one kernel call per game, one scratch row reused."""
    out = np.zeros(NUM_LOCATIONS, np.bool_)
    counts = np.empty(start.shape[0], np.int64)
    for i in range(start.shape[0]):
        out[:] = False
        counts[i] = _fill_compiled(t, start[i], roll[i], others[i], out)
    return counts


def test_kernel_called_from_compiled_code():
    """The engine's contract: fill_destinations inside an @njit loop with an int16 (n, 6) position array."""
    rng = np.random.default_rng(3)
    start, roll, others = _random_moves(rng, 2000, 12, tokens=6)
    counts = _count_all(move_tables(12), start.astype(np.int16), roll.astype(np.int8), others.astype(np.int16))
    got = destinations(move_tables(12), start, roll, others)
    assert (counts == got.sum(1)).all()
    _check(got[:300], start[:300], roll[:300], others[:300])


def test_batched_wrapper_checks_its_arguments():
    """The kernel has no bounds checks, so the numpy wrapper refuses what would read outside the tables."""
    t = move_tables(6)
    assert destinations(t, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 5), np.int64)).shape == (0, 197)
    with pytest.raises(ValueError, match="roll"):
        destinations(t, np.array([0]), np.array([7]), np.full((1, 5), -1))
    with pytest.raises(ValueError, match="start"):
        destinations(t, np.array([197]), np.array([3]), np.full((1, 5), -1))
    with pytest.raises(ValueError, match="others"):
        destinations(t, np.array([0, 1]), np.array([3, 3]), np.full((1, 5), -1))
