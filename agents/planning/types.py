"""The named tuples of arrays the movement planner's kernel takes: the board's tables and its scratch.

Why tuples: :func:`cluedo_env.agents.planning.blocking.blocked_turns_kernel` reads the board (five tables) and ten
scratch
arrays; numba takes each group as one ``typing.NamedTuple`` argument and reads its fields inside the kernel at
no cost, as the engine's kernels take :class:`cluedo_env.engine.state.State`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class BlockingBoard(NamedTuple):
    """The board and ``T(d)`` as the blocking kernel reads them (read-only, one per number of dice)."""

    neighbors: np.ndarray
    """(188, 4) int64: the squares next to each square, -1 padded."""
    fronts: np.ndarray
    """(9, 4) int64: the squares in front of each room's doors, -1 padded."""
    passage: np.ndarray
    """(9,) int64: the room a room's secret passage leads to, -1 if none."""
    d0: np.ndarray
    """(9, 197) int64: the empty board's fewest pips from each location to each room (``Board.distance``,
    transposed)."""
    T: np.ndarray
    """(D,) float64: turns to enter a room ``d`` pips away; ``T[D - 1] = inf`` stands for unreachable."""


class BlockingScratch(NamedTuple):
    """Scratch of the blocking kernel; the stamp arrays (``bmark``, ``mark``, ``work``) start as zeros."""

    bmark: np.ndarray
    """(188,) int64: the squares a token blocks, stamped per game."""
    mark: np.ndarray
    """(9, 188) int64: the squares whose distance to a room changed, stamped per game."""
    over: np.ndarray
    """(9, 188) int64: the changed distances."""
    work: np.ndarray
    """(5, 188) int64: the repair's lists and stamps."""
    head: np.ndarray
    """(64,) int64: the repair's list heads per distance."""
    rd: np.ndarray
    """(9, 9) int64: room-to-room pips."""
    R: np.ndarray
    """(9, 9) float64: room-to-room turns of the game."""
    R0: np.ndarray
    """(9, 9) float64: room-to-room turns of the empty board."""
    walk: np.ndarray
    """(9,) float64: turns to walk into each room."""
    at: np.ndarray
    """(9,) float64: turns to be in each room, to go on from there."""


__all__ = ["BlockingBoard", "BlockingScratch"]
