"""Batched, exact move destinations (R-M1..R-M6) for the vectorized engine.

Why a path trie: whether a square can be reached with *exactly* ``k`` pips along a
*simple* path that avoids other tokens is a question about paths, not distances, so no
distance table answers it once a token stands in the way. We therefore enumerate, once,
every simple path of at most ``max_roll`` pips from every location, as a trie (prefix
tree) of nodes ordered by depth. A node is one path; it stores the square it ends on,
its pip count, the room it may enter from that square, and the set of squares the path
steps on as a 188-bit mask (three uint64 words).

A move from ``start`` with roll ``k`` can end on node ``n`` (depth <= k) iff no other
token stands on any square of the path: ``path_mask[n] & blockers == 0``. Then
``n``'s square is a destination when ``depth == k`` (R-M3) and ``n``'s door room is one
whenever ``depth <= k`` (R-M4). Games with no other token within ``k`` pips use a table
precomputed on the empty board (``empty[start, k]``), which is what most games need.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from cluedo_env.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0, Board, load_board
from cluedo_env.cards import NUM_ROOMS

WORDS = 3  # 188 squares fit in three 64-bit words


@dataclass(frozen=True)
class PathTrie:
    max_roll: int
    offset: np.ndarray  # (197,) int64: first node of each start location
    count_le: np.ndarray  # (197, max_roll + 1) int64: nodes of depth <= k for each start
    square: np.ndarray  # (N,) int16: the square the path ends on
    depth: np.ndarray  # (N,) int8: pips spent
    room: np.ndarray  # (N,) int8: room enterable from that square (not the start room), -1 if none
    mask: np.ndarray  # (N, 3) uint64: squares stepped on (the start square included)
    empty: np.ndarray  # (197, max_roll + 1, 197) bool: destinations on an empty board


def _bits(squares: np.ndarray) -> np.ndarray:
    """(n,) square ids -> (n, 3) uint64 one-bit masks."""
    out = np.zeros((len(squares), WORDS), np.uint64)
    out[np.arange(len(squares)), squares // 64] = np.left_shift(np.uint64(1), (squares % 64).astype(np.uint64))
    return out


def _build(board: Board, max_roll: int) -> PathTrie:
    neighbors = np.full((NUM_SQUARES, 4), -1, np.int64)
    for sq, nbs in enumerate(board.neighbors):
        neighbors[sq, : len(nbs)] = nbs
    front_room = np.full(NUM_SQUARES, -1, np.int64)
    for sq, room in board.front_room.items():
        front_room[sq] = room

    # Roots: a square start is its own root at depth 0; a room start has one root per door,
    # on the square in front of it at depth 1 (R-M5: stepping out costs one pip).
    start_l, square_l, depth_l = [], [], []
    for loc in range(NUM_LOCATIONS):
        if loc < ROOM_LOC0:
            start_l.append(loc), square_l.append(loc), depth_l.append(0)
        else:
            for f in board.room_fronts[loc - ROOM_LOC0]:
                start_l.append(loc), square_l.append(f), depth_l.append(1)
    start = np.array(start_l, np.int64)
    square = np.array(square_l, np.int64)
    depth = np.array(depth_l, np.int64)
    mask = _bits(square)
    levels = [(start, square, depth, mask)]
    while True:
        start, square, depth, mask = levels[-1]
        live = depth < max_roll
        start, square, depth, mask = start[live], square[live], depth[live], mask[live]
        if len(start) == 0:
            break
        # Extend every path by one step to each neighbour not already on it (R-M1, R-M2).
        nxt = neighbors[square]  # (n, 4)
        parent = np.repeat(np.arange(len(start)), 4)
        child = nxt.ravel()
        ok = child >= 0
        parent, child = parent[ok], child[ok]
        bit = _bits(child)
        fresh = ~np.any(mask[parent] & bit, axis=1)
        parent, child, bit = parent[fresh], child[fresh], bit[fresh]
        if len(child) == 0:
            break
        levels.append((start[parent], child, depth[parent] + 1, mask[parent] | bit))

    start = np.concatenate([lv[0] for lv in levels])
    square = np.concatenate([lv[1] for lv in levels])
    depth = np.concatenate([lv[2] for lv in levels])
    mask = np.concatenate([lv[3] for lv in levels])
    order = np.lexsort((depth, start))  # by start, then depth: depth <= k is a prefix
    start, square, depth, mask = start[order], square[order], depth[order], mask[order]
    origin_room = np.where(start >= ROOM_LOC0, start - ROOM_LOC0, -1)
    room = front_room[square]
    room = np.where(room == origin_room, -1, room)  # R-M5: never re-enter the room left

    offset = np.searchsorted(start, np.arange(NUM_LOCATIONS))
    count_le = np.zeros((NUM_LOCATIONS, max_roll + 1), np.int64)
    for k in range(max_roll + 1):
        count_le[:, k] = (
            np.searchsorted(start * (max_roll + 2) + depth, np.arange(NUM_LOCATIONS) * (max_roll + 2) + k, "right")
            - offset
        )

    empty = np.zeros((NUM_LOCATIONS, max_roll + 1, NUM_LOCATIONS), bool)
    for k in range(1, max_roll + 1):
        ends = depth == k
        empty[start[ends], k, square[ends]] = True  # R-M3
        enters = (depth <= k) & (room >= 0)
        empty[start[enters], k, ROOM_LOC0 + room[enters]] = True  # R-M4
    return PathTrie(
        max_roll=max_roll,
        offset=offset,
        count_le=count_le,
        square=square.astype(np.int16),
        depth=depth.astype(np.int8),
        room=room.astype(np.int8),
        mask=mask,
        empty=empty,
    )


@lru_cache(maxsize=2)
def path_trie(max_roll: int) -> PathTrie:
    """The trie for rolls up to ``max_roll`` (6 for one die, 12 for two), built once per process."""
    return _build(load_board(), max_roll)


def blocker_masks(squares: np.ndarray) -> np.ndarray:
    """(n, m) square ids of blocking tokens (-1 for none, e.g. in a room) -> (n, 3) uint64 masks."""
    n, m = squares.shape
    out = np.zeros((n, WORDS), np.uint64)
    rows, cols = np.nonzero(squares >= 0)
    sq = squares[rows, cols].astype(np.int64)
    # Squares are distinct, so each bit is added once and a sum is an OR.
    np.add.at(out, (rows, sq // 64), np.left_shift(np.uint64(1), (sq % 64).astype(np.uint64)))
    return out


def destinations(
    trie: PathTrie, distance: np.ndarray, start: np.ndarray, roll: np.ndarray, others: np.ndarray
) -> np.ndarray:
    """(n, 197) bool: legal destinations for n moves at once.

    ``start`` (n,) mover locations, ``roll`` (n,) pips, ``others`` (n, m) locations of the
    other suspect tokens (rooms and -1 never block).
    """
    out = trie.empty[start, roll].copy()  # (n, 197) bool
    on_square = (others >= 0) & (others < NUM_SQUARES)
    blockers = np.where(on_square, others, -1)
    # A token only matters if it stands within `roll` pips of the mover.
    near = on_square & (distance[start[:, None], np.where(on_square, others, 0)] <= roll[:, None])
    hit = np.flatnonzero(near.any(axis=1))
    if len(hit) == 0:
        return out
    s, k = start[hit], roll[hit]
    lengths = trie.count_le[s, k]
    total = int(lengths.sum())
    game = np.repeat(np.arange(len(hit)), lengths)
    first = np.cumsum(lengths) - lengths
    node = np.arange(total) - np.repeat(first - trie.offset[s], lengths)
    bmask = blocker_masks(blockers[hit])
    alive = ~np.any(trie.mask[node] & bmask[game], axis=1)
    game, node = game[alive], node[alive]
    depth = trie.depth[node]
    fixed = np.zeros((len(hit), NUM_LOCATIONS), bool)
    ends = depth == k[game]
    fixed[game[ends], trie.square[node[ends]]] = True  # R-M3
    enters = trie.room[node] >= 0
    fixed[game[enters], ROOM_LOC0 + trie.room[node[enters]].astype(np.int64)] = True  # R-M4, R-M6
    out[hit] = fixed
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
