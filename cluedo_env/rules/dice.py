"""The dice (R-D1): one or two six-sided dice, whose total a player moves."""

from __future__ import annotations

import numpy as np


def roll_distribution(dice: int) -> np.ndarray:
    """(6 * dice + 1,) float64: the probability of each total 0..6*dice of ``dice`` six-sided dice (R-D1), each the
    count of its outcomes over 6**dice."""
    counts = np.zeros(1, np.int64)
    counts[0] = 1
    for _ in range(dice):
        nxt = np.zeros(len(counts) + 6, np.int64)
        for face in range(1, 7):
            nxt[face : face + len(counts)] += counts
        counts = nxt
    return counts / 6**dice


__all__ = ["roll_distribution"]
