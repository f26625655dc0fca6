"""What one seat knows of a batch of games, as arrays: the facts shared by deduction, sampling and the notebook.

This module exists so that the reasoning (:mod:`cluedo_env.agents.knowledge.propagation`), the deal sampler
(:mod:`cluedo_env.agents.knowledge.deal_sampling`) and the notebook that keeps the facts
(:mod:`cluedo_env.agents.knowledge.notebook`)
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
from cluedo_env.agents.compiled import INLINE, KERNEL
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

CATEGORY = np.array([0] * WEAPON_CARD0 + [1] * (ROOM_CARD0 - WEAPON_CARD0) + [2] * (NUM_CARDS - ROOM_CARD0))
CAT_SLICES = (slice(0, WEAPON_CARD0), slice(WEAPON_CARD0, ROOM_CARD0), slice(ROOM_CARD0, NUM_CARDS))
CAT_ONEHOT = CATEGORY[None, :] == np.arange(3)[:, None]  # (3, 21)
ENVELOPE_SIZE = 3


FULL = (1 << NUM_CARDS) - 1
POW2 = np.int64(1) << np.arange(NUM_CARDS, dtype=np.int64)  # bit of each card
CAT_BITS = np.array([int(POW2[CAT_ONEHOT[k]].sum()) for k in range(3)], np.int64)
# The same for the compiled kernels, which read module globals as compile-time constants:
CAT_MASKS = tuple(int(b) for b in CAT_BITS)  # bits of each category
FIRST_OF = (0, WEAPON_CARD0, ROOM_CARD0, NUM_CARDS)  # first card of each category, then the end
CATEGORY_COUNT = (WEAPON_CARD0, ROOM_CARD0 - WEAPON_CARD0, NUM_CARDS - ROOM_CARD0)  # cards of each category
CATEGORY_SIZE = CAT_ONEHOT.sum(1).astype(np.float64)  # (3,) cards per category: 6 suspects, 6 weapons, 9 rooms
ROOM_CARDS_ROW = np.arange(ROOM_CARD0, NUM_CARDS).reshape(1, NUM_CARDS - ROOM_CARD0)  # the room cards as a row


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
    """The facts of n games on bitmasks (bit c = card c), as
    :func:`~cluedo_env.agents.knowledge.propagation.fixpoint_bits` takes
    them."""

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


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**INLINE)
def pack_cells(has: np.ndarray, no: np.ndarray, g: int, hb: np.ndarray, nb: np.ndarray, i: int) -> None:
    """Row i of ``hb``, ``nb`` (n, H) int64: game g of ``has``, ``no`` (B, H, 21) bool as bitmasks."""
    for h in range(has.shape[1]):
        x = 0
        y = 0
        for c in range(NUM_CARDS):  # (no branches: the loop vectorizes)
            x |= np.int64(has[g, h, c]) << c
            y |= np.int64(no[g, h, c]) << c
        hb[i, h] = x
        nb[i, h] = y


@njit(**INLINE)
def triple_index(c0: int, c1: int, c2: int) -> int:
    """Triple index of a suspect, a weapon and a room card id (:func:`cluedo_env.rules.actions.cards_triple`)."""
    return (c0 * 6 + (c1 - WEAPON_CARD0)) * 9 + (c2 - ROOM_CARD0)


@njit(**INLINE)
def room_of_triple(t: int) -> int:
    """The room (0..8) a triple index names (:func:`cluedo_env.rules.actions.triple_of`'s last part)."""
    return t % 9


@njit(**INLINE)
def envelope_card(has: np.ndarray, g: int, E: int, k: int) -> int:
    """The first card of category k that ``has`` (B, H, 21) puts in the envelope (holder E) in game g, else -1."""
    for c in range(FIRST_OF[k], FIRST_OF[k + 1]):
        if has[g, E, c]:
            return c
    return -1


@njit(**INLINE)
def notebook_solved(has: np.ndarray, bad: np.ndarray, g: int, E: int) -> bool:
    """Game g's notebook proves the solution: three envelope cards and no contradiction
    (:meth:`cluedo_env.agents.knowledge.notebook.
    Notebook.solved`, the statement)."""
    count = 0
    for c in range(NUM_CARDS):
        count += has[g, E, c]
    return count == 3 and not bad[g]


@njit(**INLINE)
def bit_count(x: int) -> int:
    """Set bits of a card mask (x < 2**24: int64 arithmetic never overflows)."""
    x = x - ((x >> 1) & 0x555555)
    x = (x & 0x333333) + ((x >> 2) & 0x333333)
    x = (x + (x >> 4)) & 0x0F0F0F
    return ((x * 0x010101) >> 16) & 0xFF


@njit(**INLINE)
def category_of(c: int) -> int:
    return 0 if c < WEAPON_CARD0 else (1 if c < ROOM_CARD0 else 2)


@njit(**KERNEL)
def pack_rows_kernel(
    idx: np.ndarray,
    has: np.ndarray,
    no: np.ndarray,
    cl_cards: np.ndarray,
    acc_cards: np.ndarray,
    hb: np.ndarray,
    nb: np.ndarray,
    cl_mask: np.ndarray,
    acc_mask: np.ndarray,
) -> None:
    """Games ``idx`` of the notebook's ``has``, ``no`` (B, H, 21) bool as bitmasks ``hb``, ``nb`` (n, H) int64, and
    the clauses' cards ``cl_cards`` (B, K, 3) / ``acc_cards`` (B, A, 3) as ``cl_mask`` (n, K) / ``acc_mask`` (n, A)
    (what :meth:`cluedo_env.agents.knowledge.facts.Facts.bits` gives for those games)."""
    for i in range(idx.shape[0]):
        g = idx[i]
        pack_cells(has, no, g, hb, nb, i)
        for k in range(cl_mask.shape[1]):
            x = 0
            for j in range(3):
                x |= 1 << np.int64(cl_cards[g, k, j])
            cl_mask[i, k] = x
        for k in range(acc_mask.shape[1]):
            x = 0
            for j in range(3):
                x |= 1 << np.int64(acc_cards[g, k, j])
            acc_mask[i, k] = x


@njit(**KERNEL)
def unpack_rows_kernel(idx: np.ndarray, hb: np.ndarray, nb: np.ndarray, has: np.ndarray, no: np.ndarray) -> None:
    """The bitmasks ``hb``, ``nb`` (n, H) int64 into games ``idx`` of ``has``, ``no`` (B, H, 21) bool."""
    n, H = hb.shape
    for i in range(n):
        g = idx[i]
        for h in range(H):
            for c in range(NUM_CARDS):
                has[g, h, c] = (hb[i, h] >> c) & 1 == 1
                no[g, h, c] = (nb[i, h] >> c) & 1 == 1
