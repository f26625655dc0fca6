"""Exact move destinations (R-M1..R-M6), one move at a time, as numba kernels.

Why this shape: the batched engine loops over games inside compiled code and asks for
one move at a time, so the generator is a per-move kernel (:func:`fill_destinations`)
that takes only numpy arrays (:class:`MoveTables`) and can be called from any ``@njit``
function; :func:`destinations` is a thin batched wrapper for numpy callers.

Why it is fast and exact for two dice: whether a square can be reached with *exactly*
``k`` pips along a *simple* path that avoids other tokens is a question about paths, not
distances, and the number of simple paths grows exponentially with ``k`` (1.67M of them
up to 12 pips over all starts). So the kernel enumerates paths only where it must:

1. No other token within ``roll`` pips of the mover (``distance``): nothing can be cut,
   and the answer is one row of ``empty``, the destinations on the empty board,
   precomputed once by enumerating every simple path.
2. Otherwise a breadth-first search that avoids the tokens gives each square's fewest
   pips ``d``. Rooms are then exact at once: a room is entered with *at most* the roll
   (R-M4), and a shortest path is simple, so its door is usable iff ``d[front] <= roll``.
   A square is a destination iff it is an empty-board destination, not occupied, and a
   simple token-free path of exactly ``roll`` pips reaches it; if ``d == roll`` the
   shortest path is one. Only the rest (``d < roll``: the path must waste pips on a
   detour, which a token may have cut) are left to a depth-first search over simple
   paths, which skips every branch from which no still-unproved square lies within the
   pips left (``ball``) and stops as soon as every one is proved.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numba
import numpy as np

from cluedo_env.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0, Board, load_board
from cluedo_env.cards import NUM_ROOMS

WORDS = 3  # 188 squares fit in three 64-bit words
_NO = 255  # "not reached" in a breadth-first distance


class MoveTables(NamedTuple):
    """Everything the kernels need, as plain arrays so that numba takes it as one argument."""

    max_roll: int
    exits: np.ndarray  # (197, 4) int16: first steps from a location (see exits()), -1 padded, packed left
    front_room: np.ndarray  # (188,) int16: the room whose door a square is in front of, -1 if none
    distance: np.ndarray  # (197, 197) uint8: Board.distance, fewest pips on the empty board
    ball: np.ndarray  # (188, max_roll + 1, 3) uint64: bit t of [s, r] set iff distance[s, t] <= r
    empty: np.ndarray  # (197, max_roll + 1, 197) bool: destinations on the empty board
    count: np.ndarray  # (197, max_roll + 1) int16: empty.sum(-1)


# ------------------------------------------------------------------------------------ tables
@numba.njit(cache=True, nogil=True)
def _empty_board(exits: np.ndarray, front_room: np.ndarray, max_roll: int) -> np.ndarray:
    """(197, max_roll + 1, 197) bool: destinations with no other token, by enumerating every simple path.

    One depth-first walk per start over all simple paths of at most ``max_roll`` pips
    (R-M1, R-M2) notes which square each path ends on at which depth (R-M3) and the fewest
    pips to each door's front square (R-M4, R-M5: never the room left).
    """
    empty = np.zeros((NUM_LOCATIONS, max_roll + 1, NUM_LOCATIONS), np.bool_)
    ends = np.zeros((max_roll + 1, NUM_SQUARES), np.bool_)  # (depth, square): some path ends there
    room_pips = np.empty(NUM_ROOMS, np.int64)
    visited = np.zeros(NUM_LOCATIONS, np.bool_)
    path = np.empty(max_roll + 1, np.int64)
    nxt = np.empty(max_roll + 1, np.int64)
    for start in range(NUM_LOCATIONS):
        ends[:] = False
        room_pips[:] = max_roll + 1
        origin = start - ROOM_LOC0 if start >= ROOM_LOC0 else -1
        depth = 0
        path[0] = start
        nxt[0] = 0
        visited[start] = True
        while depth >= 0:
            here = path[depth]
            j = nxt[depth]
            if j == 4 or exits[here, j] < 0 or depth == max_roll:
                visited[here] = False
                depth -= 1
                continue
            nxt[depth] = j + 1
            step = exits[here, j]
            if visited[step]:
                continue
            depth += 1
            path[depth] = step
            nxt[depth] = 0
            visited[step] = True
            ends[depth, step] = True  # R-M3
            room = front_room[step]
            if room >= 0 and room != origin and depth < room_pips[room]:  # R-M4, R-M5
                room_pips[room] = depth
        if start < NUM_SQUARES and front_room[start] >= 0:
            room_pips[front_room[start]] = 0  # R-M4: a token on the front square enters with any roll
        for k in range(1, max_roll + 1):
            empty[start, k, :NUM_SQUARES] = ends[k]
            for room in range(NUM_ROOMS):
                empty[start, k, ROOM_LOC0 + room] = room_pips[room] <= k
    return empty


def _build(board: Board, max_roll: int) -> MoveTables:
    ex = exits(board)
    front_room = np.full(NUM_SQUARES, -1, np.int16)
    for sq, room in board.front_room.items():
        front_room[sq] = room
    distance = np.ascontiguousarray(board.distance)
    near = distance[:NUM_SQUARES, :NUM_SQUARES, None] <= np.arange(max_roll + 1)  # (188, 188, r) bool
    padded = np.zeros((NUM_SQUARES, WORDS * 64, max_roll + 1), np.bool_)
    padded[:, :NUM_SQUARES] = near
    bits = padded.reshape(NUM_SQUARES, WORDS, 64, max_roll + 1)
    weights = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))  # (64,) uint64
    ball = np.bitwise_or.reduce(np.where(bits, weights[None, None, :, None], np.uint64(0)), axis=2)
    ball = np.ascontiguousarray(ball.transpose(0, 2, 1))  # (188, r, 3)
    empty = _empty_board(ex, front_room, max_roll)
    return MoveTables(
        max_roll=max_roll,
        exits=ex,
        front_room=front_room,
        distance=distance,
        ball=ball,
        empty=empty,
        count=empty.sum(-1).astype(np.int16),
    )


@lru_cache(maxsize=2)
def move_tables(max_roll: int) -> MoveTables:
    """The tables for rolls up to ``max_roll`` (6 for one die, 12 for two), built once per process."""
    return _build(load_board(), max_roll)


# ------------------------------------------------------------------------------------ kernels
@numba.njit(cache=True, nogil=True)
def fill_destinations(t: MoveTables, start: int, roll: int, others: np.ndarray, out: np.ndarray) -> int:
    """Mark the legal destinations of a token at ``start`` with ``roll`` pips in ``out``; return their number.

    ``start`` a location 0..196, ``1 <= roll <= t.max_roll``, ``others`` (m,) int the
    locations of the other suspect tokens (entries < 0 or >= 188 never block), ``out``
    (197,) bool, all False on entry. No destination (0) means the move is forfeited (R-M8).
    """
    for j in range(others.shape[0]):
        o = others[j]
        if 0 <= o < NUM_SQUARES and t.distance[start, o] <= roll:
            return _with_tokens(t, start, roll, others, out)
    row = t.empty[start, roll]
    for i in range(NUM_LOCATIONS):
        out[i] = row[i]
    return t.count[start, roll]


@numba.njit(cache=True, nogil=True)
def _with_tokens(t: MoveTables, start: int, roll: int, others: np.ndarray, out: np.ndarray) -> int:
    """The exact search when some token stands within ``roll`` pips (see the module docstring)."""
    exits, ball = t.exits, t.ball
    blocked = np.zeros(NUM_LOCATIONS, np.bool_)  # tokens, then also the squares of the current path
    for j in range(others.shape[0]):
        o = others[j]
        if 0 <= o < NUM_SQUARES:
            blocked[o] = True  # R-M2
    # Breadth-first pips to every square within `roll`, around the tokens.
    pips = np.full(NUM_SQUARES, _NO, np.int64)
    queue = np.empty(NUM_SQUARES, np.int64)
    tail = 0
    origin = -1
    if start >= ROOM_LOC0:
        origin = start - ROOM_LOC0
        for j in range(4):
            front = exits[start, j]
            if front >= 0 and not blocked[front]:  # R-M6
                pips[front] = 1  # R-M5: stepping out costs one pip
                queue[tail] = front
                tail += 1
    else:
        pips[start] = 0
        queue[0] = start
        tail = 1
    head = 0
    while head < tail:
        here = queue[head]
        head += 1
        if pips[here] == roll:
            continue
        for j in range(4):
            step = exits[here, j]
            if step < 0:
                break
            if not blocked[step] and pips[step] == _NO:
                pips[step] = pips[here] + 1
                queue[tail] = step
                tail += 1
    n = 0
    # Rooms (R-M4, R-M5, R-M6): a shortest path is simple, so `pips` decides.
    for i in range(tail):
        room = t.front_room[queue[i]]
        if room >= 0 and room != origin and not out[ROOM_LOC0 + room]:
            out[ROOM_LOC0 + room] = True
            n += 1
    # Squares (R-M3): proved at once when the shortest path uses the whole roll.
    row = t.empty[start, roll]
    u0 = np.uint64(0)
    u1 = np.uint64(0)
    u2 = np.uint64(0)
    one = np.uint64(1)
    for i in range(tail):
        sq = queue[i]
        if row[sq]:
            if pips[sq] == roll:
                out[sq] = True
                n += 1
            else:
                w = sq >> 6
                bit = one << np.uint64(sq & 63)
                if w == 0:
                    u0 |= bit
                elif w == 1:
                    u1 |= bit
                else:
                    u2 |= bit
    if (u0 | u1 | u2) == 0:
        return n
    # The rest need a detour: search simple paths, skipping branches that cannot reach one of them.
    path = np.empty(roll + 1, np.int64)
    nxt = np.empty(roll + 1, np.int64)
    depth = 0
    path[0] = start
    nxt[0] = 0
    blocked[start] = True
    while depth >= 0:
        here = path[depth]
        j = nxt[depth]
        if j == 4 or exits[here, j] < 0:
            blocked[here] = False
            depth -= 1
            continue
        nxt[depth] = j + 1
        step = exits[here, j]
        if blocked[step]:
            continue
        left = roll - depth - 1
        if left == 0:
            w = step >> 6
            bit = one << np.uint64(step & 63)
            if w == 0:
                hit = (u0 & bit) != 0
                u0 &= ~bit
            elif w == 1:
                hit = (u1 & bit) != 0
                u1 &= ~bit
            else:
                hit = (u2 & bit) != 0
                u2 &= ~bit
            if hit:
                out[step] = True
                n += 1
                if (u0 | u1 | u2) == 0:
                    break
            continue
        if ((ball[step, left, 0] & u0) | (ball[step, left, 1] & u1) | (ball[step, left, 2] & u2)) == 0:
            continue
        depth += 1
        path[depth] = step
        nxt[depth] = 0
        blocked[step] = True
    return n


@numba.njit(cache=True, nogil=True)
def _destinations(t: MoveTables, start: np.ndarray, roll: np.ndarray, others: np.ndarray, out: np.ndarray) -> None:
    for i in range(start.shape[0]):
        fill_destinations(t, start[i], roll[i], others[i], out[i])


def destinations(t: MoveTables, start: np.ndarray, roll: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(n, 197) bool: the legal destinations of n moves (R-M1..R-M6), by :func:`fill_destinations`.

    ``start`` (n,) int mover locations, ``roll`` (n,) int pips, ``others`` (n, m) int the
    locations of the other suspect tokens (rooms and negative entries never block).
    """
    start = np.ascontiguousarray(start, np.int64)
    roll = np.ascontiguousarray(roll, np.int64)
    others = np.ascontiguousarray(others, np.int64).reshape(len(start), -1)
    out = np.zeros((len(start), NUM_LOCATIONS), np.bool_)
    _destinations(t, start, roll, others, out)
    return out


def exits(board: Board) -> np.ndarray:
    """(197, 4) int16: the squares a token at each location could step onto first, -1 padded.

    For a room, the squares in front of its doors (R-M5); for a square, its neighbours.
    A square in front of a door also exits into the room, which no token can block.
    """
    out = np.full((NUM_LOCATIONS, 4), -1, np.int16)
    for loc in range(NUM_SQUARES):
        out[loc, : len(board.neighbors[loc])] = board.neighbors[loc]
    for room in range(NUM_ROOMS):
        fronts = board.room_fronts[room]
        out[ROOM_LOC0 + room, : len(fronts)] = fronts
    return out
