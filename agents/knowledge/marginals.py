"""Rough per-card probabilities from one seat's facts alone: each open cell weighted by the hand it could fill.

Cheap enough to run every decision (the deducer's suggestions and refutations read them). The compiled kernels
at the end of this module count on bitmasks; the helpers ``marginals_bits`` and friends are shared with the
refutation and the naive opponent model.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import INLINE, KERNEL
from cluedo_env.agents.knowledge.facts import CAT_MASKS, FIRST_OF, FULL, bit_count, pack_cells
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS

QUOTIENTS = np.arange(NUM_CARDS + 1.0)[:, None] / np.maximum(np.arange(NUM_CARDS + 1.0), 1.0)  # a / b, a, b <= 21


def marginals(has: np.ndarray, no: np.ndarray, size: np.ndarray) -> np.ndarray:
    """(n, H, 21) float: rough probability that each holder holds each card, from the facts only.

    ``has``, ``no`` (n, H, 21) bool and ``size`` (n, H) as in :class:`cluedo_env.agents.knowledge.facts.Facts`. A
    holder that may hold a card weighs (open slots) / (possible cards) (the envelope per
    category); weights are normalised over the holders of each card. Compiled
    (:func:`cluedo_env.agents.knowledge.marginals.marginals_kernel`);
    :func:`tests.references.marginals.marginals_reference` is the
    numpy statement.
    """
    n, H, C = has.shape
    return marginals_rows(np.ascontiguousarray(has), np.ascontiguousarray(no), np.asarray(size, np.int64), np.arange(n))


def marginals_rows(has: np.ndarray, no: np.ndarray, size: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:func:`marginals` of rows ``idx`` of ``has``, ``no`` (B, H, 21) bool and ``size`` (B, H) int64 (no copies)."""
    H, C = has.shape[1], has.shape[2]
    out = np.empty((len(idx), H, C))
    bits = np.empty((2, 1, H), np.int64)  # a game's facts as bitmasks (scratch)
    marginals_kernel(has, no, size, np.asarray(idx, np.int64), out, np.empty((H, C)), bits[0], bits[1])
    return out


# ---------------------------------------------------------------------------------------------- compiled kernels


@njit(**INLINE)
def marginal_weights(hb: np.ndarray, nb: np.ndarray, i: int, size: np.ndarray, g: int, w: np.ndarray) -> None:
    """The unnormalised weights ``w`` (H, 21) of :func:`tests.references.marginals.marginals_reference` for the facts in
    row i of ``hb``, ``nb`` (n, H) int64, hand sizes row g of ``size`` (B, H) int64: per seat, its free slots over
    its candidate cards; per envelope category, 1 / its candidates while the category is open. Bits are counted,
    not cells: several times faster, the same numbers."""
    H = hb.shape[1]
    E = H - 1
    for h in range(E):
        cand_bits = ~hb[i, h] & ~nb[i, h] & FULL
        slots = float(max(size[g, h] - bit_count(hb[i, h]), 0))
        wh = slots / max(bit_count(cand_bits), 1)
        for c in range(NUM_CARDS):
            w[h, c] = wh if (cand_bits >> c) & 1 else 0.0
    for k in range(3):
        cand_bits = ~hb[i, E] & ~nb[i, E] & CAT_MASKS[k]
        x = 1.0 / max(bit_count(cand_bits), 1) if hb[i, E] & CAT_MASKS[k] == 0 else 0.0  # 0: the category is known
        for c in range(FIRST_OF[k], FIRST_OF[k + 1]):
            w[E, c] = x if (cand_bits >> c) & 1 else 0.0


@njit(**INLINE)
def card_total(w: np.ndarray, c: int) -> float:
    """The weights ``w`` (H, 21) of card c summed over its holders, in holder order (as numpy sums them)."""
    total = w[0, c]
    for h in range(1, w.shape[0]):
        total += w[h, c]
    return total


@njit(**INLINE)
def marginal(held: bool, weight: float, total: float) -> float:
    """One cell's probability: 1 where the holder is known to hold the card, else its share of the card's weights."""
    if held:
        return 1.0
    return weight / total if total > 0 else 0.0


@njit(**INLINE)
def marginals_bits(
    hb: np.ndarray, nb: np.ndarray, i: int, size: np.ndarray, g: int, out: np.ndarray, j: int, w: np.ndarray
) -> None:
    """Row ``j`` of ``out`` (n, H, 21) float64: :func:`tests.references.marginals.marginals_reference` of the facts in
    row ``i`` of ``hb``, ``nb`` (n, H) int64, hand sizes row ``g`` of ``size`` (B, H) int64; scratch ``w``
    (H, 21) float64."""
    marginal_weights(hb, nb, i, size, g, w)
    for c in range(NUM_CARDS):
        total = card_total(w, c)
        for h in range(hb.shape[1]):
            out[j, h, c] = marginal((hb[i, h] >> c) & 1 == 1, w[h, c], total)


@njit(**KERNEL)
def marginals_kernel(
    has: np.ndarray, no: np.ndarray, size: np.ndarray, idx: np.ndarray, out: np.ndarray, w: np.ndarray,
    hb: np.ndarray, nb: np.ndarray,
) -> None:  # fmt: skip
    """:func:`tests.references.marginals.marginals_reference` into ``out`` (n, H, 21) float64.

    ``has``, ``no`` (B, H, 21) bool, ``size`` (B, H) int64 of which rows ``idx`` (n,) are read (row i of
    ``out`` is game ``idx[i]``); scratch ``w`` (H, 21) float64, ``hb``, ``nb`` (1, H) int64 (a game's facts as
    bitmasks, :func:`marginals_bits`).
    """
    for i in range(idx.shape[0]):
        pack_cells(has, no, idx[i], hb, nb, np.int64(0))  # (row as an int64: pack_cells' one compiled version)
        marginals_bits(hb, nb, 0, size, idx[i], out, i, w)
