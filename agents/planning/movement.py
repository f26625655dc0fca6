"""Movement planning for rule-based players: where to move, and whether to roll, take the passage or stay.

A player says how much it wants to be in each room (``room_value``, an (n, 9) float array,
one row per game of ``idx``, 0 = no use, larger = better); this module turns that into
legal START and MOVE actions, batched over games (the choices on the empty board's tables are compiled,
:func:`cluedo_env.agents.planning.movement.choose_moves_kernel` and ``turn_start_kernel``, which the deducer's one-call
decisions call too; the blocking-aware tables come from :mod:`cluedo_env.agents.planning.blocking`).

API (all batched; ``idx`` are the games where ``view.seat`` is to act)::

    turn_start_choice(view, idx, room_value, *, mask=None, blocking=False) -> (n,) int64
        START phase: ROLL, PASSAGE, STAY, or END_TURN when none of them is open (R-T1..R-T5).
        Never ACCUSE: accusing is the caller's decision, taken before calling this.
    choose_moves(view, idx, room_value, *, mask=None, rng=None, blocking=False) -> (n,) int64
        MOVE phase: the best legal MOVE action; -1 in games with no legal MOVE.
    move_scores(view, idx, room_value, *, mask=None, blocking=False) -> (n, 197) float64
        The score choose_moves maximises for every location, -inf where the MOVE is not legal.
    travel_turns(dice) -> (197, 9) float64
        Expected turns, starting a turn at a location, until entering each room (below).
    blocked_travel_turns(view, idx, rows, locs, tokens=None) -> (m, 9), (m, 9) float64
        Rows of those tables (and of ``S'`` below) per game, around the tokens that block.
    blocking_tokens(view, idx, persistent=False) -> (n, 6) int64
        Where the tokens that block the mover stand (-1: not blocking), see *Blocking*.
    turn_tables(dist, T, reenter) -> (197, 9), (197, 9) float64
        ``S`` and ``S'`` from any distance table (the empty board's, or a reference's).

``mask`` is ``view.legal_action_mask_of(idx)`` if the caller already has it (saves building
the (n, 870) rows again); ``rng`` breaks ties between equally good destinations at random
(default: the lowest location id wins, deterministic); ``blocking`` plans around the
tokens that block (*Blocking* below; default off: the empty board, as the heuristic player,
the learner's compact observation and the published baselines use it).

How destinations are scored: value per expected turn, the current turn included.

* Travel time: ``T(d)`` is the expected number of turns to enter a room whose door is
  ``d`` pips away (``board.distance``: the pips to the square in front of the door). A roll
  ``k >= d`` enters at once (a room can be entered with at most the pips rolled, R-M4);
  otherwise the token walks ``k`` pips closer (R-M3) and tries again:
  ``T(d) = 1 + sum_{k<d} P(roll = k) T(d - k)``, with the roll distribution of the
  preset's dice (R-D1). By default the board is taken as empty (tokens that block are
  ignored); see *Blocking*.
* ``travel_turns`` combines walking with the secret passages (R-T2, one turn each) and
  with stops in rooms on the way (shortest expected-turn routes over the 9 rooms). Being
  in a room already does not count as entering it: re-entering costs about 2 turns
  (leave, come back), since one suggestion is allowed per entry (R-G5).
* MOVE to a room ``q``: ``max(v_q, max_r v_r / (1 + S[q, r]))`` (suggest in ``q`` now, or
  use ``q`` as a stepping stone, e.g. to its passage). MOVE to a square ``s``:
  ``max_r v_r / (1 + S[s, r])``. So with equal values a room entered now always beats a
  square (every square needs at least one more turn), and among squares the one closest,
  in expected turns, to valuable rooms wins.
* START: STAY scores ``v`` of the room one was dragged into (suggest now, R-T3);
  PASSAGE scores like a MOVE into the passage's room; ROLL scores
  ``max_r v_r / S'[x, r]`` where ``S'`` is ``S`` without taking the passage first. The
  best option is taken, ties going to STAY, then PASSAGE, then ROLL; when every value is
  0 the player ROLLs if it can.

**Blocking** (``blocking=True``). A path may not enter or end on a square occupied by a
suspect token (R-M2), and a door whose square in front is occupied is blocked (R-M6). The
distances then come from a search over the board with the occupied squares taken out: a
blocked door cannot be used (to enter, or to leave a room), a square whose short way is
cut goes round, or through another door, or through another room or a passage (the same
``T(d)``, routes and re-entering as above; a room whose doors are all blocked cannot be left
on foot, so walking out and back in is impossible there). Which tokens count, since tokens
move between turns (the mover's own never does):

* START (ROLL against PASSAGE and STAY): every other token. The roll is made now, with the
  tokens where they stand, so the distances of its move are exact; the later turns assume
  they stay.
* MOVE: only the tokens still there when the next turn starts from the destination: the
  suspects nobody plays and the eliminated players' tokens (they move only when a
  suggestion drags them into a room). Every playing opponent moves before that turn (a
  token on a square must roll and usually leaves it), so where it stands now says little
  about where it will be; this turn's move itself is exact anyway (the legal mask).

A token on a dead end that is no door front (a start square) lies on no path between
other squares and is left out; games with no other blocking token use the empty board's
tables, the others a compiled kernel (:mod:`cluedo_env.agents.planning.blocking`, a few microseconds a
game). Measured (classic board, 4 players, ``scripts/evaluate.py --head-to-head A B --games
2000``, seeds pooled, 95% intervals): the expert with it wins 31.5% [31.1-31.9] against three
deducers (seeds 0-23) and without it 31.3% [30.9-31.7] (same seeds); with every token
blocking in MOVE too, 31.2% (seeds 0-7). The deducer with it: 24.8% [24.1-25.4] against
three deducers (parity 25%, seeds 0-7). Against three heuristic players the expert wins
82.4% [81.9-82.8] with it and 82.0% [81.5-82.5] without (seeds 0-11). No difference beyond the
noise: few choices change (~0.5% of START choices; ~1.5% of MOVE choices with every token
blocking), because this turn's move is already exact, most corridors are two squares wide
and the opponents move before the next turn. So the players keep it off (``blocking_aware``);
it costs them 10-15% of their speed (classic, batch 2048).

Without a board (the card-only game, R-C1) there is no movement: these functions are not
needed there (START and MOVE never happen).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from cluedo_env.agents.compiled import INLINE, KERNEL
from cluedo_env.agents.planning.blocking import blocked_turns_kernel
from cluedo_env.agents.planning.types import BlockingBoard, BlockingScratch
from numba import njit

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0, load_board
from cluedo_env.rules.cards import NUM_ROOMS, PASSAGES
from cluedo_env.rules.dice import roll_distribution

REENTER_TURNS = 2.0  # leave a room and come back in: about two turns
TIE = 1e-9  # scores within this of the best are tied


def turns_to_enter(dice: int, max_distance: int) -> np.ndarray:
    """(max_distance + 1,) ``T(d)``: expected turns to enter a room whose door square is ``d`` pips away."""
    p = roll_distribution(dice)
    T = np.zeros(max_distance + 1)
    for d in range(max_distance + 1):
        k = np.arange(1, min(d, len(p)))  # rolls that fall short: walk k pips closer
        T[d] = 1.0 + float((p[k] * T[d - k]).sum())
    return T


@lru_cache(maxsize=4)
def empty_board_tables(dice: int) -> tuple[np.ndarray, np.ndarray]:
    """(S, S_roll), both (197, 9) read-only: expected turns to enter each room, with / without the passage first,
    on the empty board (:func:`turn_tables`), computed once per number of dice."""
    dist = load_board().distance[:, ROOM_LOC0:].astype(np.int64)  # (197, 9)
    S, S_roll = turn_tables(dist, turns_to_enter(dice, int(dist.max())))
    S.flags.writeable = False
    S_roll.flags.writeable = False
    return S, S_roll


def turn_tables(
    dist: np.ndarray, T: np.ndarray, reenter: np.ndarray | float = REENTER_TURNS
) -> tuple[np.ndarray, np.ndarray]:
    """(S, S_roll), both (197, 9), from ``dist`` (197, 9) int pips from each location to each room and ``T`` (D,)
    turns to enter at ``d`` pips (``dist`` < D); ``reenter`` (9,) or a number: turns to re-enter the room one is in.

    The empty board's tables (:func:`travel_turns`) and the statement of what the blocking-aware kernel computes
    from the distances around the tokens (``tests/test_planning_blocking.py`` compares both).
    """
    walk = T[dist]  # one or more turns of rolling, no room on the way
    rooms = np.arange(NUM_ROOMS)
    walk[ROOM_LOC0 + rooms, rooms] = reenter
    at = walk.copy()  # turns to *be* in the room (0 when already there), for routes via rooms
    at[ROOM_LOC0 + rooms, rooms] = 0.0
    # Room-to-room routes: walking or one passage per turn, then shortest routes (Floyd-Warshall).
    R = at[ROOM_LOC0:].copy()  # (9, 9)
    for a, b in PASSAGES.items():
        R[a, b] = min(R[a, b], 1.0)
    for k in range(NUM_ROOMS):
        R = np.minimum(R, R[:, k : k + 1] + R[k : k + 1, :])
    np.fill_diagonal(R, np.inf)  # a route ending in its own start room is no entry
    # Start a turn at x: walk straight in, or reach a room c first (0 if x is c) and route on.
    via = (at[:, :, None] + R[None, :, :]).min(axis=1)  # (197, 9)
    S = np.minimum(walk, via)
    # Rolling from a room forbids using that room's passage first (that is the PASSAGE option).
    at_no_self = at.copy()
    at_no_self[ROOM_LOC0 + rooms, rooms] = np.inf
    via_roll = (at_no_self[:, :, None] + R[None, :, :]).min(axis=1)
    S_roll = np.minimum(walk, via_roll)
    return S, S_roll


@lru_cache(maxsize=4)
def _blocking_inputs(dice: int) -> BlockingBoard:
    """The board and ``T(d)`` as :func:`cluedo_env.agents.planning.blocking.blocked_turns_kernel` takes them
    (read-only)."""
    board = load_board()
    neighbors = np.full((NUM_SQUARES, 4), -1, np.int64)
    for sq, adj in enumerate(board.neighbors):
        neighbors[sq, : len(adj)] = adj
    fronts = np.full((NUM_ROOMS, 4), -1, np.int64)
    for room, fr in enumerate(board.room_fronts):
        fronts[room, : len(fr)] = fr
    passage = np.full(NUM_ROOMS, -1, np.int64)
    for a, b in PASSAGES.items():
        passage[a] = b
    # Around tokens a distance can exceed the empty board's (at most 188 pips); the last entry is "unreachable".
    T = np.append(turns_to_enter(dice, NUM_LOCATIONS), np.inf)
    d0 = np.ascontiguousarray(board.distance[:, ROOM_LOC0:].T, np.int64)  # (9, 197)
    out = BlockingBoard(neighbors, fronts, passage, d0, T)
    for a in out:
        a.flags.writeable = False
    return out


def blocking_tokens(view: PlayerView, idx: np.ndarray, persistent: bool = False) -> np.ndarray:
    """(n, 6) int64 location of each suspect token that blocks the mover ``view.seat`` in games ``idx``, -1 for
    the others: every token but its own (R-M2), or with ``persistent`` only those that will not move before
    the mover's next turn (the suspects nobody plays and eliminated players', which move only when a
    suggestion drags them into a room)."""
    tokens = view.pos[idx].astype(np.int64)
    tokens[:, view.seat] = -1
    if persistent:
        P = view.num_players
        tokens[:, :P] = np.where(view.eliminated[idx, :P], tokens[:, :P], -1)
    return tokens


@lru_cache(maxsize=1)
def _dead_end() -> np.ndarray:
    """(197,) bool: squares with one neighbour that are not in front of a door (a path can only end there)."""
    board = load_board()
    out = np.zeros(NUM_LOCATIONS, bool)
    for sq, adj in enumerate(board.neighbors):
        out[sq] = len(adj) == 1 and sq not in board.front_room
    out.flags.writeable = False
    return out


def blocked_travel_turns(
    view: PlayerView, idx: np.ndarray, rows: np.ndarray, locs: np.ndarray, tokens: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(S, S_roll), both (m, 9): the rows of :func:`empty_board_tables` at ``locs[e]`` in game ``idx[rows[e]]``, with
    the squares of ``tokens`` (default :func:`blocking_tokens`: every other suspect token) taken out of the board (R-M2,
    R-M6; see the module docstring).

    ``rows`` (m,) must be in ascending order (``np.nonzero`` gives that): a game's searches run once. The
    rows of the squares the tokens stand on are not meaningful (nobody can move there).
    """
    if tokens is None:
        tokens = blocking_tokens(view, idx)
    rows = np.asarray(rows, np.int64)
    locs = np.asarray(locs, np.int64)
    # Games with no blocking token on a square: the empty board's tables (the kernel gives the same).
    S0, S0_roll = empty_board_tables(view.config.dice)
    S, S_roll = S0[locs], S0_roll[locs]
    # A token on a dead end that is no door front (the start squares) is on no path between other squares.
    tokens = np.where(_dead_end()[np.clip(tokens, 0, NUM_LOCATIONS - 1)], -1, tokens)
    crowded = ((tokens >= 0) & (tokens < NUM_SQUARES)).any(1)
    e = np.flatnonzero(crowded[rows])
    if len(e):
        S[e], S_roll[e] = _kernel_rows(tokens, rows[e], locs[e], view.config.dice)
    return S, S_roll


def _kernel_rows(tokens: np.ndarray, rows: np.ndarray, locs: np.ndarray, dice: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`blocked_travel_turns` of every entry by the kernel (``tokens`` (n, 6), ``rows`` ascending)."""
    m = len(rows)
    S = np.empty((m, NUM_ROOMS))
    S_roll = np.empty((m, NUM_ROOMS))
    scratch = BlockingScratch(
        np.zeros(NUM_SQUARES, np.int64), np.zeros((NUM_ROOMS, NUM_SQUARES), np.int64),
        np.empty((NUM_ROOMS, NUM_SQUARES), np.int64), np.zeros((5, NUM_SQUARES), np.int64), np.empty(64, np.int64),
        np.empty((NUM_ROOMS, NUM_ROOMS), np.int64), np.empty((NUM_ROOMS, NUM_ROOMS)), np.empty((NUM_ROOMS, NUM_ROOMS)),
        np.empty(NUM_ROOMS), np.empty(NUM_ROOMS),
    )  # fmt: skip
    blocked_turns_kernel(
        np.ascontiguousarray(tokens, np.int64), np.asarray(rows, np.int64), np.asarray(locs, np.int64),
        _blocking_inputs(dice), REENTER_TURNS, S, S_roll, scratch,
    )  # fmt: skip
    return S, S_roll


def travel_turns(dice: int = 1) -> np.ndarray:
    """(197, 9) expected turns, starting a turn at a location, until entering each room (read-only)."""
    return empty_board_tables(dice)[0]


def _check(view: PlayerView, idx: np.ndarray, room_value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = np.asarray(idx, np.int64)
    v = np.asarray(room_value, np.float64)
    if v.shape != (len(idx), NUM_ROOMS):
        raise ValueError(f"room_value must be ({len(idx)}, {NUM_ROOMS}) for {len(idx)} games, got {v.shape}")
    if not view.config.has_board:
        raise ValueError("movement planning needs a board; the card-only game (board=none) has no movement")
    return idx, np.maximum(v, 0.0)


def _location_values(v: np.ndarray, S: np.ndarray, locs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Value per turn of reaching ``locs`` (for games ``rows`` of v) now and suggesting next (the formula above)."""
    return _values_from_rows(v, S[locs], locs, rows)


def _values_from_rows(v: np.ndarray, S_rows: np.ndarray, locs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """:func:`_location_values` from the rows ``S_rows`` (m, 9) of the expected turns at ``locs``."""
    future = (v[rows] / (1.0 + S_rows)).max(1)
    room = locs - ROOM_LOC0
    is_room = room >= 0
    now = np.where(is_room, v[rows, np.clip(room, 0, NUM_ROOMS - 1)], 0.0)
    return np.maximum(now, future)


def move_scores(
    view: PlayerView,
    idx: np.ndarray,
    room_value: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    blocking: bool = False,
) -> np.ndarray:
    """(n, 197) score of every legal MOVE destination of games ``idx`` (see the module docstring), -inf if illegal.

    ``blocking``: expected turns around the tokens that block now (:func:`blocked_travel_turns`)."""
    idx, v = _check(view, idx, room_value)
    legal = (view.legal_action_mask_of(idx) if mask is None else mask)[:, A.MOVE0 : A.SUGGEST0]
    rows, locs = np.nonzero(legal)
    out = np.full((len(idx), NUM_LOCATIONS), -np.inf)
    if blocking:
        tokens = blocking_tokens(view, idx, persistent=True)  # the tokens still there at the next turn
        out[rows, locs] = _values_from_rows(v, blocked_travel_turns(view, idx, rows, locs, tokens)[0], locs, rows)
    else:
        out[rows, locs] = _location_values(v, empty_board_tables(view.config.dice)[0], locs, rows)
    return out


def choose_moves(
    view: PlayerView,
    idx: np.ndarray,
    room_value: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    blocking: bool = False,
) -> np.ndarray:
    """(n,) int64 the MOVE action with the best value per turn for each game of ``idx``; -1 where none is legal.

    Compiled on the empty board's table (:func:`cluedo_env.agents.planning.movement.choose_moves_kernel`, the same
    choices
    from the same random numbers); around blocking tokens, from :func:`move_scores` (:func:`_choose_from_scores`).
    """
    if not blocking:
        idx, v = _check(view, idx, room_value)
        full = view.legal_action_mask_of(idx) if mask is None else mask
        legal = np.ascontiguousarray(full[:, A.MOVE0 : A.SUGGEST0])
        noise = rng.random(legal.shape) if rng is not None else np.zeros((0, 0))
        loc = np.empty(len(idx), np.int64)
        choose_moves_kernel(v, legal, empty_board_tables(view.config.dice)[0], noise, rng is not None, TIE, loc)
        return np.where(loc >= 0, A.MOVE0 + loc, -1).astype(np.int64)
    return _choose_from_scores(move_scores(view, idx, room_value, mask=mask, blocking=blocking), rng)


def _choose_from_scores(score: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """(n,) MOVE action of highest ``score`` (n, 197) (-inf: illegal), ties within ``TIE`` broken by ``rng`` (a
    uniform number per destination, the highest wins) or to the first; -1 where none is legal."""
    best = score.max(1)
    tied = score >= best[:, None] - TIE
    if rng is not None:  # a uniformly random one among the tied best
        tied = tied & np.isfinite(score)
        key = np.where(tied, rng.random(score.shape), -1.0)
        pick = key.argmax(1)
    else:
        pick = tied.argmax(1)
    return np.where(np.isfinite(best), A.MOVE0 + pick, -1).astype(np.int64)


def turn_start_choice(
    view: PlayerView,
    idx: np.ndarray,
    room_value: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    blocking: bool = False,
) -> np.ndarray:
    """(n,) int64 ROLL, PASSAGE, STAY or END_TURN for games ``idx`` in the START phase (see the module docstring).

    Rows of games not in the START phase (no special action open) get END_TURN, which is
    then not legal: call this only for START games.
    """
    idx, v = _check(view, idx, room_value)
    special = (view.legal_action_mask_of(idx) if mask is None else mask)[:, : A.MOVE0]
    n = len(idx)
    x = view.pos[idx, view.seat].astype(np.int64)
    target = load_board().passage[x].astype(np.int64)
    if not blocking:  # compiled on the empty board's tables: the choice of _turn_start_from_rows on their rows
        S, S_roll = empty_board_tables(view.config.dice)
        choice = np.empty(n, np.int64)
        stay, passage, roll = (np.ascontiguousarray(special[:, a]) for a in (A.STAY, A.PASSAGE, A.ROLL))
        turn_start_kernel(v, stay, passage, roll, x, target, S, S_roll, TIE, choice)  # contiguous: one version
        return choice
    rows = np.arange(n)
    tokens = blocking_tokens(view, idx)  # the roll is now: every token blocks
    # With one option open the choice does not depend on the scores: the empty board's rows do.
    tokens[special[:, [A.STAY, A.PASSAGE, A.ROLL]].sum(1) < 2] = -1
    S2, S_roll2 = blocked_travel_turns(
        view, idx, np.repeat(rows, 2), np.stack([x, np.maximum(target, 0)], 1).ravel(), tokens
    )
    return _turn_start_from_rows(v, special, x, target, S2[1::2], S_roll2[0::2])


def _turn_start_from_rows(
    v: np.ndarray, special: np.ndarray, x: np.ndarray, target: np.ndarray, S_at_target: np.ndarray,
    S_roll_at_x: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """:func:`turn_start_choice` from the rows of expected turns it needs: ``S_at_target`` (n, 9) at the passage's
    room (``target``, -1: none), ``S_roll_at_x`` (n, 9) rolling from ``x``; ``special`` (n, MOVE0) the mask."""
    rows = np.arange(len(v))
    room = np.clip(x - ROOM_LOC0, 0, NUM_ROOMS - 1)
    stay = np.where(special[:, A.STAY], v[rows, room], -np.inf)
    via_passage = _values_from_rows(v, S_at_target, np.maximum(target, 0), rows)
    take_passage = np.where(special[:, A.PASSAGE] & (target >= 0), via_passage, -np.inf)
    roll = np.where(special[:, A.ROLL], (v / S_roll_at_x).max(1), -np.inf)
    options = np.stack([stay, take_passage, roll], 1)  # in tie priority order
    best = options.max(1)
    choice = np.array([A.STAY, A.PASSAGE, A.ROLL])[(options >= best[:, None] - TIE).argmax(1)]
    # Nothing worth anything: move on (roll if possible).
    idle = best <= 0
    fallback = np.where(special[:, A.ROLL], A.ROLL, np.where(special[:, A.PASSAGE], A.PASSAGE, A.STAY))
    choice = np.where(idle, fallback, choice)
    return np.where(np.isfinite(best), choice, A.END_TURN).astype(np.int64)

__all__ = [
    "blocked_travel_turns",
    "blocking_tokens",
    "choose_moves",
    "empty_board_tables",
    "move_scores",
    "travel_turns",
    "turn_start_choice",
    "turn_tables",
    "turns_to_enter",
]


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**INLINE)
def _arrival_value(v: np.ndarray, i: int, S: np.ndarray, loc: int) -> float:
    """What reaching location ``loc`` now is worth per turn in game i
    (:func:`cluedo_env.agents.planning.movement._values_from_rows`):
    ``max(v[i, room] if loc is a room else 0, max_r v[i, r] / (1 + S[loc, r]))``, the same operations."""
    R = v.shape[1]
    room0 = S.shape[0] - R
    f = v[i, 0] / (1.0 + S[loc, 0])
    for r in range(1, R):
        x = v[i, r] / (1.0 + S[loc, r])
        if x > f:
            f = x
    now = v[i, loc - room0] if loc >= room0 else 0.0
    return now if now > f else f


@njit(**KERNEL)
def choose_moves_kernel(
    v: np.ndarray, legal: np.ndarray, S: np.ndarray, noise: np.ndarray, use_noise: bool, tie: float, out: np.ndarray
) -> None:
    """:func:`cluedo_env.agents.planning.movement.choose_moves` on the empty board's table, compiled: ``out`` (n,) the
    chosen
    location
    (0..196), -1 where no MOVE is legal.

    ``v`` (n, 9) room values (clipped at 0), ``legal`` (n, 197) bool legal destinations, ``S`` (197, 9) expected
    turns (:func:`cluedo_env.agents.planning.movement.travel_turns`), ``noise`` (n, 197) the uniform numbers that break
    ties when
    ``use_noise``. The score of a destination is ``max(v[room] if a room else 0, max_r v[r] / (1 + S[loc, r]))``,
    the best scores are those within ``tie`` of the maximum, and the pick among them is the one of highest noise
    (else the first): each step as :func:`cluedo_env.agents.planning.movement.move_scores` and ``choose_moves`` compute
    it, so the
    same destination.
    """
    n, L = legal.shape
    for i in range(n):
        best = -np.inf
        for loc in range(L):
            if legal[i, loc]:
                s = _arrival_value(v, i, S, loc)
                if s > best:
                    best = s
        if best == -np.inf:
            out[i] = -1
            continue
        pick = -1
        key = -1.0
        for loc in range(L):
            if legal[i, loc]:
                s = _arrival_value(v, i, S, loc)
                if s >= best - tie:
                    if not use_noise:
                        pick = loc
                        break
                    if pick < 0 or noise[i, loc] > key:
                        pick = loc
                        key = noise[i, loc]
        out[i] = pick


@njit(**KERNEL)
def turn_start_kernel(
    v: np.ndarray, stay_ok: np.ndarray, passage_ok: np.ndarray, roll_ok: np.ndarray, x: np.ndarray,
    target: np.ndarray, S: np.ndarray, S_roll: np.ndarray, tie: float, out: np.ndarray,
) -> None:  # fmt: skip
    """:func:`cluedo_env.agents.planning.movement.turn_start_choice` on the empty board's tables, compiled: ``out``
    (n,) the
    action:
    STAY, PASSAGE (the secret passage), ROLL, or END_TURN where none is open.

    ``v`` (n, 9) room values (clipped at 0); ``stay_ok``, ``passage_ok``, ``roll_ok`` (n,) bool the open options;
    ``x`` (n,) the seat's location, ``target`` (n,) the passage's room location from there (-1: none); ``S``,
    ``S_roll`` (197, 9) :func:`cluedo_env.agents.planning.movement.turn_tables`. Each value as ``turn_start_choice``
    computes it:
    stay
    is worth the room's value, the passage what arriving in its room is worth (``choose_moves_kernel``'s score),
    a roll ``max_r v[r] / S_roll[x, r]``; the best within ``tie`` in that order wins; if nothing is worth
    anything, roll, else take the passage, else stay.
    """
    n, R = v.shape
    room0 = S.shape[0] - R
    for i in range(n):
        room = min(max(x[i] - room0, 0), R - 1)
        stay = v[i, room] if stay_ok[i] else -np.inf
        t = max(target[i], 0)
        take = _arrival_value(v, i, S, t) if (passage_ok[i] and target[i] >= 0) else -np.inf
        roll = -np.inf
        if roll_ok[i]:
            roll = v[i, 0] / S_roll[x[i], 0]
            for r in range(1, R):
                y = v[i, r] / S_roll[x[i], r]
                if y > roll:
                    roll = y
        best = stay
        if take > best:
            best = take
        if roll > best:
            best = roll
        if best == -np.inf:
            out[i] = A.END_TURN
        elif best <= 0.0:  # nothing worth anything: move on
            out[i] = A.ROLL if roll_ok[i] else (A.PASSAGE if passage_ok[i] else A.STAY)
        elif stay >= best - tie:
            out[i] = A.STAY
        elif take >= best - tie:
            out[i] = A.PASSAGE
        else:
            out[i] = A.ROLL
