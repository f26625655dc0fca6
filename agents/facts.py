"""What one seat knows of a batch of games, as arrays: the facts shared by deduction, sampling and the notebook.

This module exists so that the reasoning (:mod:`agents.deduction`), the deal sampler
(:mod:`agents.deal_sampling`) and the notebook that keeps the facts (:mod:`agents.notebook`)
agree on one representation and pass it around as one value instead of eight arrays.

For every game there are *holders*: the P players, then the envelope as holder ``P`` (the
last). For each holder and each of the 21 cards a cell is unknown, has or has-not: two bool
arrays ``has`` and ``no``. Besides the cells there are clauses:

* "the holder holds *at least one* of these three cards" (a refutation this seat did not see);
* "the envelope lacks at least one of these three cards" (a wrong accusation of another player).

:class:`Facts` keeps the cells as bool arrays and the clauses' cards as card ids;
:class:`FactBits` is the same knowledge on bitmasks (one int64 per holder or clause, bit c =
card c), the form the propagation runs on. :meth:`Facts.bits` converts one way,
:meth:`FactBits.facts` the other. Also here: the card categories and the bit helpers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

CATEGORY = np.array([0] * WEAPON_CARD0 + [1] * (ROOM_CARD0 - WEAPON_CARD0) + [2] * (NUM_CARDS - ROOM_CARD0))
CAT_SLICES = (slice(0, WEAPON_CARD0), slice(WEAPON_CARD0, ROOM_CARD0), slice(ROOM_CARD0, NUM_CARDS))
CAT_ONEHOT = CATEGORY[None, :] == np.arange(3)[:, None]  # (3, 21)
ENVELOPE_SIZE = 3


FULL = (1 << NUM_CARDS) - 1
POW2 = np.int64(1) << np.arange(NUM_CARDS, dtype=np.int64)  # bit of each card
CAT_BITS = np.array([int(POW2[CAT_ONEHOT[k]].sum()) for k in range(3)], np.int64)


def pack(cells: np.ndarray) -> np.ndarray:
    """(..., 21) bool -> (...) int64 bitmask (bit c = card c)."""
    return cells.astype(np.int64) @ POW2


def unpack(bits: np.ndarray) -> np.ndarray:
    """(...) int64 bitmask -> (..., 21) bool."""
    return (bits[..., None] >> np.arange(NUM_CARDS)) & 1 == 1


def popcount(bits: np.ndarray) -> np.ndarray:
    return np.bitwise_count(bits).astype(np.int64)


def triple_mask(cards: np.ndarray) -> np.ndarray:
    """(..., 3) card ids -> (...) int64 bitmask."""
    return np.bitwise_or.reduce(POW2[cards.astype(np.int64)], axis=-1) if cards.size else cards.sum(-1).astype(np.int64)


class Facts(NamedTuple):
    """The facts of n games, cells as bool arrays and clauses by card id (H holders, the envelope last).

    Functions that close the facts write into the arrays in place (see each one).
    """

    has: np.ndarray
    """(n, H, 21) bool: the holder holds the card."""
    no: np.ndarray
    """(n, H, 21) bool: the holder does not hold the card."""
    size: np.ndarray
    """(n, H) int: hand sizes (3 for the envelope)."""
    cl_holder: np.ndarray
    """(n, K) int (int8 in the notebook): the holder of each "holds at least one of" clause."""
    cl_cards: np.ndarray
    """(n, K, 3) int (int8 in the notebook): the clause's three card ids."""
    cl_live: np.ndarray
    """(n, K) bool: the clause is open (unused slots and satisfied clauses are False)."""
    acc_cards: np.ndarray
    """(n, A, 3) int (int8 in the notebook): the card ids of each "the envelope lacks at least one of" clause."""
    acc_live: np.ndarray
    """(n, A) bool: the accusation clause is open."""

    def take(self, g: np.ndarray) -> Facts:
        """The facts of games ``g`` (an index array or mask: copies)."""
        return Facts(*(a[g] for a in self))

    def bits(self) -> FactBits:
        """The same facts on bitmasks; ``size``, ``cl_holder`` and the live flags are shared, not copied."""
        return FactBits(
            pack(self.has), pack(self.no), self.size, self.cl_holder, triple_mask(self.cl_cards), self.cl_live,
            triple_mask(self.acc_cards), self.acc_live,
        )  # fmt: skip

    def store_cells(self, bits: FactBits) -> None:
        """Write the cells of ``bits`` (the same games) into ``has`` and ``no``, in place."""
        self.has[:] = unpack(bits.hb)
        self.no[:] = unpack(bits.nb)


class FactBits(NamedTuple):
    """The facts of n games on bitmasks (bit c = card c), as :func:`agents.deduction.fixpoint_bits` takes them."""

    hb: np.ndarray
    """(n, H) int64: cards each holder holds (``Facts.has`` packed)."""
    nb: np.ndarray
    """(n, H) int64: cards each holder does not hold (``Facts.no`` packed)."""
    size: np.ndarray
    """(n, H) int: hand sizes (3 for the envelope)."""
    cl_holder: np.ndarray
    """(n, K) int: the holder of each "holds at least one of" clause."""
    cl_mask: np.ndarray
    """(n, K) int64: the clause's three cards as a bitmask."""
    cl_live: np.ndarray
    """(n, K) bool: the clause is open."""
    acc_mask: np.ndarray
    """(n, A) int64: the three cards of each "the envelope lacks at least one of" clause as a bitmask."""
    acc_live: np.ndarray
    """(n, A) bool: the accusation clause is open."""

    def take(self, g: np.ndarray) -> FactBits:
        """The facts of games ``g`` (an index array or mask: copies)."""
        return FactBits(*(a[g] for a in self))

    def facts(self, cl_cards: np.ndarray, acc_cards: np.ndarray) -> Facts:
        """The same facts with cells as bool arrays; the masks do not keep the cards' order, so the clauses'
        card ids (n, K, 3) and (n, A, 3) are given. ``size``, ``cl_holder`` and the live flags are shared."""
        return Facts(
            unpack(self.hb), unpack(self.nb), self.size, self.cl_holder, cl_cards, self.cl_live, acc_cards,
            self.acc_live,
        )  # fmt: skip
