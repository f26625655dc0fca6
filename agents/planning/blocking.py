"""Compiled kernel of :mod:`cluedo_env.agents.planning.movement`'s blocking-aware tables: travel turns around the
tokens that
block.

:func:`blocked_turns_kernel` computes, game by game, what :func:`cluedo_env.agents.planning.movement.turn_tables`
computes once for the empty board, with the squares of the given tokens taken out of the
board (R-M2: no path enters or ends on an occupied square; R-M6: a door whose square in
front is occupied is blocked): the fewest pips from every location to each room, then the
expected turns ``S`` and ``S_roll`` of the locations asked for, as ``turn_tables`` derives
them (``T(d)`` walking turns, re-entering, secret passages, shortest routes via rooms), with
the same arithmetic in the same order: with no token on a square the rows equal the empty
board's exactly, and ``tests/test_planning_blocking.py`` compares the kernel with a plain
breadth-first search and ``turn_tables`` on random placements.

Why not a search per room and game: nine searches over the 188 squares cost about three
times as much on positions from play. The distances are instead repaired from the empty
board's (:func:`_repair`): only squares whose every shortest way passes an occupied square
can change, and the corridors are mostly two squares wide, so there are usually none or
few; where no room-to-room distance changes, the empty board's routes are reused.

The kernel follows the players' conventions (:mod:`cluedo_env.agents.compiled`: ``KERNEL`` options, no allocation inside
a kernel, output and scratch arrays passed in).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import HELPER, INLINE, KERNEL
from cluedo_env.agents.planning.types import BlockingBoard, BlockingScratch
from numba import njit

from cluedo_env.rules.board import NUM_SQUARES
from cluedo_env.rules.cards import NUM_ROOMS, NUM_SUSPECTS

_FAR = 1 << 20  # "not reached" in a search


# Rows of the integer scratch ``work`` (5, 188).
_BLOCKED, _CAND, _NEXT, _QUEUE, _INQ = 0, 1, 2, 3, 4


@njit(**INLINE)
def _dist(r, s, d0, mark, over, gs):
    """Fewest pips from square ``s`` to room ``r`` in the current game (stamp ``gs``): the empty board's unless
    :func:`_repair` overrode it."""
    return over[r, s] if mark[r, s] == gs else d0[r, s]


@njit(**HELPER)
def _repair(r, d0, neighbors, bmark, nblocked, mark, over, gs, work, head, cs):
    """Override ``over[r, s]`` (``mark[r, s] = gs``) for the squares whose fewest pips to an open door front of
    room ``r`` change around the blocked squares (``bmark[s] == gs``; ``work[_BLOCKED, :nblocked]``).

    A free square keeps its empty-board distance if one of its *parents* (its neighbours one pip closer to the
    room on the empty board, ``d0``) keeps it; a door front (distance 0) keeps it unless occupied. So the squares
    that lose it (*dead*, marked) are found from the blocked squares outward, level by level of the empty-board
    distance (``head`` (64,) and ``work[_NEXT]``: a list of candidates per level); then their distances are
    searched anew from their live neighbours (a label-correcting search over the dead squares). On the classic
    board the corridors are mostly two squares wide, so few squares die. Blocked squares get ``_FAR``; ``cs``
    marks this call's entries of the ``_CAND`` and ``_INQ`` rows.
    """
    top = -1  # highest level with candidates
    for i in range(nblocked):
        b = work[_BLOCKED, i]
        mark[r, b] = gs
        over[r, b] = _FAR
        level = d0[r, b] + 1
        for j in range(4):
            c = neighbors[b, j]
            if c >= 0 and bmark[c] != gs and d0[r, c] == level and work[_CAND, c] != cs:
                work[_CAND, c] = cs
                if level > top:
                    for L in range(top + 1, level + 1):
                        head[L] = -1
                    top = level
                work[_NEXT, c] = head[level]
                head[level] = c
    ndead = 0
    L = 1
    while L <= top:
        s = head[L]
        while s >= 0:
            alive = False
            for j in range(4):
                p = neighbors[s, j]
                if p >= 0 and d0[r, p] == L - 1 and mark[r, p] != gs:
                    alive = True
            if not alive:
                mark[r, s] = gs
                work[_QUEUE, ndead] = s  # the dead squares, for the search below
                ndead += 1
                for j in range(4):
                    c = neighbors[s, j]
                    if c >= 0 and bmark[c] != gs and d0[r, c] == L + 1 and work[_CAND, c] != cs:
                        work[_CAND, c] = cs
                        if L + 1 > top:
                            head[L + 1] = -1
                            top = L + 1
                        work[_NEXT, c] = head[L + 1]
                        head[L + 1] = c
            s = work[_NEXT, s]
        L += 1
    if ndead == 0:
        return
    # Search the dead squares anew: first from their live neighbours, then among themselves.
    for i in range(ndead):
        s = work[_QUEUE, i]
        best = _FAR
        for j in range(4):
            u = neighbors[s, j]
            if u >= 0 and mark[r, u] != gs and d0[r, u] + 1 < best:
                best = d0[r, u] + 1
        over[r, s] = best
        work[_INQ, s] = cs
    qhead = 0
    qlen = ndead  # a ring over work[_QUEUE]: at most every dead square once at a time
    while qlen > 0:
        s = work[_QUEUE, qhead]
        qhead = (qhead + 1) % NUM_SQUARES
        qlen -= 1
        work[_INQ, s] = 0
        d = over[r, s] + 1
        if d >= _FAR:
            continue
        for j in range(4):
            w = neighbors[s, j]
            if w >= 0 and mark[r, w] == gs and bmark[w] != gs and d < over[r, w]:
                over[r, w] = d
                if work[_INQ, w] != cs:
                    work[_INQ, w] = cs
                    work[_QUEUE, (qhead + qlen) % NUM_SQUARES] = w
                    qlen += 1


@njit(**INLINE)
def _routes(rd, T, passage, far, R):
    """``R`` (9, 9): expected turns from room a to room b, as ``cluedo_env.agents.planning.movement.turn_tables``
    (walking ``rd[a,
    b]``
    pips, or one passage per turn; then shortest routes; inf on the diagonal)."""
    for a in range(NUM_ROOMS):
        for b in range(NUM_ROOMS):
            R[a, b] = 0.0 if a == b else T[min(rd[a, b], far)]
        if passage[a] >= 0 and R[a, passage[a]] > 1.0:
            R[a, passage[a]] = 1.0
    for k in range(NUM_ROOMS):
        for a in range(NUM_ROOMS):
            for b in range(NUM_ROOMS):
                via = R[a, k] + R[k, b]
                if via < R[a, b]:
                    R[a, b] = via
    for a in range(NUM_ROOMS):
        R[a, a] = np.inf  # a route ending in its own start room is no entry


@njit(**KERNEL)
def blocked_turns_kernel(
    tokens: np.ndarray,
    rows: np.ndarray,
    locs: np.ndarray,
    board: BlockingBoard,
    reenter: float,
    S: np.ndarray,
    S_roll: np.ndarray,
    scratch: BlockingScratch,
) -> None:
    """Rows ``S[e]``, ``S_roll[e]`` (m, 9) of the expected turns to enter each room from location ``locs[e]`` in
    game ``rows[e]``, around the blocking tokens of that game.

    ``tokens`` (n, 6) int64 location of each suspect token that blocks, per game, -1 for one that does not
    (the mover's own, for one); ``rows`` (m,) int64 game of each entry, in ascending order (a game's tables are
    computed once for its run of entries); ``locs`` (m,) int64. The row of a location a blocking token stands
    on is all inf (nobody can move there).
    Board (``board``, a :class:`cluedo_env.agents.planning.types.BlockingBoard`): ``neighbors`` (188, 4) and ``fronts``
    (9, 4)
    int64, -1 padded (the squares next to a square; the
    squares in front of a room's doors); ``passage`` (9,) int64 the room a room's secret passage leads to, -1
    if none; ``d0`` (9, 197) int64 the empty board's fewest pips from each location to each room
    (``Board.distance``, transposed). ``T`` (D,) float64 turns to enter a room ``d`` pips away,
    ``T[D - 1] = inf`` standing for unreachable (every distance >= D - 1). ``reenter``: turns to leave a room
    and come back in. Scratch (a :class:`cluedo_env.agents.planning.types.BlockingScratch`): ``bmark`` (188,), ``mark``,
    ``over`` (9, 188), ``work`` (5, 188) int64 zeros, ``head`` (64,), ``rd`` (9, 9) int64, ``R``, ``R0`` (9, 9),
    ``walk``, ``at`` (9,) float64.
    """
    neighbors, fronts, passage, d0, T = board
    bmark, mark, over, work, head, rd, R, R0, walk, at = scratch
    m = len(rows)
    far = len(T) - 1
    # The empty board's room-to-room routes, reused in games where no room-to-room distance changes.
    for a in range(NUM_ROOMS):
        for b in range(NUM_ROOMS):
            rd[a, b] = d0[b, NUM_SQUARES + a]
    _routes(rd, T, passage, far, R0)
    g = -1
    gs = 0  # stamp of the current game in bmark and mark
    cs = 0  # stamp of the current (game, room) in work[_CAND], work[_INQ]
    for e in range(m):
        if rows[e] != g:  # a new game: its distances and room-to-room routes
            g = rows[e]
            gs += 1
            nblocked = 0
            for t in range(NUM_SUSPECTS):
                p = tokens[g, t]
                if 0 <= p < NUM_SQUARES and bmark[p] != gs:
                    bmark[p] = gs
                    work[_BLOCKED, nblocked] = p
                    nblocked += 1
            same = True
            for r in range(NUM_ROOMS):
                cs += 1
                _repair(r, d0, neighbors, bmark, nblocked, mark, over, gs, work, head, cs)
                # From a room: one pip through an open door onto its front (R-M5, R-M6), then on.
                for q in range(NUM_ROOMS):
                    best = _FAR
                    for j in range(4):
                        f = fronts[q, j]
                        if f >= 0 and bmark[f] != gs:
                            d = _dist(r, f, d0, mark, over, gs) + 1
                            if d < best:
                                best = d
                    rd[q, r] = best
                    if q != r and best != d0[r, NUM_SQUARES + q]:
                        same = False
            if same:
                for a in range(NUM_ROOMS):
                    for b in range(NUM_ROOMS):
                        R[a, b] = R0[a, b]
            else:
                _routes(rd, T, passage, far, R)
        x = locs[e]
        own = x - NUM_SQUARES  # the room x is, or < 0 for a square
        for r in range(NUM_ROOMS):
            if r == own:
                # Re-entering the room one is in: leave by an open door and come back (trapped: impossible).
                walk[r] = reenter if rd[r, r] < _FAR else np.inf
                at[r] = 0.0
            else:
                if own >= 0:
                    d = rd[own, r]
                else:
                    d = _dist(r, x, d0, mark, over, gs)
                walk[r] = T[min(d, far)]
                at[r] = walk[r]
        for r in range(NUM_ROOMS):
            via = np.inf
            via_roll = np.inf  # rolling from a room forbids its passage first (that is the PASSAGE option)
            for c in range(NUM_ROOMS):
                t = at[c] + R[c, r]
                if t < via:
                    via = t
                if c != own and t < via_roll:
                    via_roll = t
            S[e, r] = min(walk[r], via)
            S_roll[e, r] = min(walk[r], via_roll)


__all__ = ["blocked_turns_kernel"]
