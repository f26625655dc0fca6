"""Statistics of tournament results, shared by the evaluator and the head-to-head mode."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``wins / n`` (default 95%); (0, 1) when n = 0.

    Why Wilson: it stays inside [0, 1] and is honest at 0% or 100% win rates, where the normal
    approximation collapses to a zero-width interval.
    """
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # exact 0 / 1 at p = 0 / 1


__all__ = ["Z95", "wilson_interval"]
