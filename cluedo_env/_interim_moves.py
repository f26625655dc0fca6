"""Interim compiled move generator over the path trie (replaced by movement.fill_destinations)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cluedo_env.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0, load_board
from cluedo_env.movement import path_trie


class MoveTables(NamedTuple):
    offset: np.ndarray
    count_le: np.ndarray
    square: np.ndarray
    depth: np.ndarray
    room: np.ndarray
    mask: np.ndarray
    empty: np.ndarray
    distance: np.ndarray


def move_tables(max_roll: int) -> MoveTables:
    t = path_trie(max_roll)
    return MoveTables(t.offset, t.count_le, t.square, t.depth, t.room, t.mask, t.empty, load_board().distance)


@njit(cache=True, nogil=True, _nrt=False)
def fill_destinations(t, start, roll, others, out):
    near = False
    b0 = np.uint64(0)
    b1 = np.uint64(0)
    b2 = np.uint64(0)
    for j in range(others.shape[0]):
        o = others[j]
        if 0 <= o < NUM_SQUARES:
            if t.distance[start, o] <= roll:
                near = True
            bit = np.uint64(1) << np.uint64(o % 64)
            w = o // 64
            if w == 0:
                b0 |= bit
            elif w == 1:
                b1 |= bit
            else:
                b2 |= bit
    n = 0
    if not near:
        row = t.empty[start, roll]
        for loc in range(NUM_LOCATIONS):
            if row[loc]:
                out[loc] = True
                n += 1
        return n
    first = t.offset[start]
    for node in range(first, first + t.count_le[start, roll]):
        m = t.mask[node]
        if (m[0] & b0) | (m[1] & b1) | (m[2] & b2):
            continue
        if t.depth[node] == roll:
            out[t.square[node]] = True
        r = t.room[node]
        if r >= 0:
            out[ROOM_LOC0 + r] = True
    for loc in range(NUM_LOCATIONS):
        n += out[loc]
    return n
