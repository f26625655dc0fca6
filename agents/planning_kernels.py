"""Compiled kernel of :mod:`agents.planning`'s blocking-aware tables: travel turns around the tokens that block.

:func:`blocked_turns_kernel` computes, game by game, what :func:`agents.planning.turn_tables`
computes once for the empty board, with the squares of the given tokens taken out of the
board (R-M2: no path enters or ends on an occupied square; R-M6: a door whose square in
front is occupied is blocked): the fewest pips from every location to each room, then the
expected turns ``S`` and ``S_roll`` of the locations asked for, as ``turn_tables`` derives
them (``T(d)`` walking turns, re-entering, secret passages, shortest routes via rooms), with
the same arithmetic in the same order: with no token on a square the rows equal the empty
board's exactly, and ``tests/test_planning_blocking.py`` compares the kernel with a plain
breadth-first search and ``turn_tables`` on random placements.

Why not a search per room and game: nine searches over the 188 squares cost ~25 us a game.
The distances are instead repaired from the empty board's (:func:`_repair`): only squares
whose every shortest way passes an occupied square can change, and the corridors are mostly
two squares wide, so there are usually none or few.

All code of the kernel lives in this file (numba's cache checks only this file's timestamp);
it follows :mod:`agents.deduction_kernels` (``KERNEL`` options, no allocation inside a kernel,
output and scratch arrays passed in).
"""

from __future__ import annotations

import numpy as np
from numba import njit

KERNEL = {"cache": True, "nogil": True, "_nrt": False, "error_model": "numpy"}

_SQ = 188  # walkable squares; rooms are locations 188..196 (cluedo_env.rules.board)
_NR = 9  # rooms
_TOKENS = 6  # suspect tokens
_FAR = 1 << 20  # "not reached" in a search


# Rows of the integer scratch ``work`` (6, 188).
_BLOCKED, _DEAD, _CAND, _NEXT, _QUEUE, _INQ = 0, 1, 2, 3, 4, 5


@njit(**KERNEL)
def _repair(r, d0, neighbors, blocked, nblocked, dist, work, head, stamp):
    """``dist[r, :188]``: the fewest pips from every square to an open door front of room ``r`` around the blocked
    squares, from the empty board's ``d0[r]``, touching only the squares whose distance may change.

    A free square keeps its empty-board distance if one of its *parents* (its neighbours one pip closer to the
    room on the empty board) keeps it; a door front (distance 0) keeps it unless occupied. So the squares that
    lose it (*dead*) are found from the blocked squares outward, level by level of the empty-board distance
    (``head`` (64,) and ``work[_NEXT]``: a list of candidates per level); then their distances are searched
    anew from their live neighbours (a label-correcting search over the dead squares). On the classic board
    the corridors are mostly two squares wide, so few squares die. Blocked squares get ``_FAR``;
    ``stamp`` marks this call's entries of the ``_DEAD``, ``_CAND`` and ``_INQ`` rows.
    """
    for s in range(_SQ):
        dist[r, s] = d0[r, s]
    if nblocked == 0:
        return
    top = -1  # highest level with candidates
    for i in range(nblocked):
        b = work[_BLOCKED, i]
        dist[r, b] = _FAR
        work[_DEAD, b] = stamp
        level = d0[r, b] + 1
        for j in range(4):
            c = neighbors[b, j]
            if c >= 0 and not blocked[c] and d0[r, c] == level and work[_CAND, c] != stamp:
                work[_CAND, c] = stamp
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
                if p >= 0 and d0[r, p] == L - 1 and work[_DEAD, p] != stamp:
                    alive = True
            if not alive:
                work[_DEAD, s] = stamp
                work[_QUEUE, ndead] = s  # the dead squares, for the search below
                ndead += 1
                for j in range(4):
                    c = neighbors[s, j]
                    if c >= 0 and not blocked[c] and d0[r, c] == L + 1 and work[_CAND, c] != stamp:
                        work[_CAND, c] = stamp
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
            if u >= 0 and not blocked[u] and work[_DEAD, u] != stamp and d0[r, u] + 1 < best:
                best = d0[r, u] + 1
        dist[r, s] = best
        work[_INQ, s] = stamp
    qhead = 0
    qlen = ndead  # a ring over work[_QUEUE]: at most every dead square once at a time
    while qlen > 0:
        s = work[_QUEUE, qhead]
        qhead = (qhead + 1) % _SQ
        qlen -= 1
        work[_INQ, s] = 0
        d = dist[r, s] + 1
        if d >= _FAR:
            continue
        for j in range(4):
            w = neighbors[s, j]
            if w >= 0 and work[_DEAD, w] == stamp and not blocked[w] and d < dist[r, w]:
                dist[r, w] = d
                if work[_INQ, w] != stamp:
                    work[_INQ, w] = stamp
                    work[_QUEUE, (qhead + qlen) % _SQ] = w
                    qlen += 1


@njit(**KERNEL)
def blocked_turns_kernel(
    tokens: np.ndarray,
    rows: np.ndarray,
    locs: np.ndarray,
    neighbors: np.ndarray,
    fronts: np.ndarray,
    passage: np.ndarray,
    d0: np.ndarray,
    T: np.ndarray,
    reenter: float,
    S: np.ndarray,
    S_roll: np.ndarray,
    blocked: np.ndarray,
    dist: np.ndarray,
    work: np.ndarray,
    head: np.ndarray,
    R: np.ndarray,
    walk: np.ndarray,
    at: np.ndarray,
) -> None:
    """Rows ``S[e]``, ``S_roll[e]`` (m, 9) of the expected turns to enter each room from location ``locs[e]`` in
    game ``rows[e]``, around the blocking tokens of that game.

    ``tokens`` (n, 6) int64 location of each suspect token that blocks, per game, -1 for one that does not
    (the mover's own, for one); ``rows`` (m,) int64 game of each entry, in
    ascending order (a game's tables are computed once for its run of entries); ``locs`` (m,) int64.
    Board: ``neighbors`` (188, 4) and ``fronts`` (9, 4) int64, -1 padded (the squares next to a square; the
    squares in front of a room's doors); ``passage`` (9,) int64 the room a room's secret passage leads to, -1
    if none; ``d0`` (9, 188) int64 the empty board's fewest pips from each square to each room
    (``Board.distance``). ``T`` (D,) float64 turns to enter a room ``d`` pips away, ``T[D - 1] = inf`` standing
    for unreachable (every distance >= D - 1). ``reenter``: turns to leave a room and come back in.
    Scratch: ``blocked`` (188,) bool, ``dist`` (9, 197), ``work`` (6, 188) int64 zeros, ``head`` (64,)
    int64, ``R`` (9, 9), ``walk``, ``at`` (9,) float64.
    """
    m = len(rows)
    far = len(T) - 1
    g = -1
    stamp = 0
    for e in range(m):
        if rows[e] != g:  # a new game: its distances and room-to-room routes
            g = rows[e]
            for s in range(_SQ):
                blocked[s] = False
            nblocked = 0
            for t in range(_TOKENS):
                p = tokens[g, t]
                if 0 <= p < _SQ and not blocked[p]:
                    blocked[p] = True
                    work[_BLOCKED, nblocked] = p
                    nblocked += 1
            for r in range(_NR):
                stamp += 1
                _repair(r, d0, neighbors, blocked, nblocked, dist, work, head, stamp)
                # From a room: one pip through an open door onto its front (R-M5, R-M6), then on.
                for q in range(_NR):
                    best = _FAR
                    for j in range(4):
                        f = fronts[q, j]
                        if f >= 0 and not blocked[f] and dist[r, f] + 1 < best:
                            best = dist[r, f] + 1
                    dist[r, _SQ + q] = best
            # Room-to-room routes (as _tables: walking, or one passage per turn; then shortest routes).
            for a in range(_NR):
                for b in range(_NR):
                    R[a, b] = 0.0 if a == b else T[min(dist[b, _SQ + a], far)]
                if passage[a] >= 0 and R[a, passage[a]] > 1.0:
                    R[a, passage[a]] = 1.0
            for k in range(_NR):
                for a in range(_NR):
                    for b in range(_NR):
                        via = R[a, k] + R[k, b]
                        if via < R[a, b]:
                            R[a, b] = via
            for a in range(_NR):
                R[a, a] = np.inf  # a route ending in its own start room is no entry
        x = locs[e]
        own = x - _SQ  # the room x is, or < 0 for a square
        for r in range(_NR):
            if r == own:
                # Re-entering the room one is in: leave by an open door and come back (trapped: impossible).
                open_door = False
                for j in range(4):
                    f = fronts[r, j]
                    if f >= 0 and not blocked[f]:
                        open_door = True
                walk[r] = reenter if open_door else np.inf
                at[r] = 0.0
            else:
                walk[r] = T[min(dist[r, x], far)]
                at[r] = walk[r]
        for r in range(_NR):
            via = np.inf
            via_roll = np.inf  # rolling from a room forbids its passage first (that is the PASSAGE option)
            for c in range(_NR):
                t = at[c] + R[c, r]
                if t < via:
                    via = t
                if c != own and t < via_roll:
                    via_roll = t
            S[e, r] = min(walk[r], via)
            S_roll[e, r] = min(walk[r], via_roll)


__all__ = ["blocked_turns_kernel"]
