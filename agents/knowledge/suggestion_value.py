"""What a suggestion is worth: expected information about the envelope, for us and for the table.

Why not information about the whole deal (what the deducer used first): learning that seat 2
rather than seat 3 holds the Kitchen is worth a lot of "deal bits" and nothing towards the
accusation. Only the envelope wins the game (R-A2). So a suggestion is scored by how much
its answer is expected to reduce the uncertainty about the envelope, and penalised by how
much the public part of the answer teaches the other players about it.

Model (an approximation, batched over games and candidate triples): per-card holder
probabilities ``prob`` (n, H, 21) (holder H - 1 is the envelope), cards independent. The
envelope's card of each category is a distribution over that category's cards; an answer
changes the envelope probability ``e`` of a named card ``a`` to ``e'``, and the other cards
of its category keep their proportions. The category's entropy is then
``h2(e') + (1 - e') R`` (R: entropy of the rest), and because ``E[e'] = e`` the R terms cancel
in expectation: the expected information about category k is ``h2(e_k) - E[h2(e'_k)]``,
``h2`` the binary entropy. Summed over the three categories.

Answers (R-G6, R-G7), first-refuter rule: seat ``j`` (asked in ``order``) refutes when it holds
a named card and no seat asked before it does; it shows one of its named cards at random
(the suggester sees which); or nobody refutes. For a named card ``k`` not shown, the joint
probability with "k is in the envelope" replaces k's "held later / by us / in the envelope"
factor by its envelope probability. With ``refutation=all`` every asked seat answers on its
own; the per-seat information is summed.

Naming a card whose place we know (our own, a proved envelope card) is a *blank*: its ``e``
is 0 or 1 and it adds nothing itself, but it cannot be shown, so the refuter must show one of
the other two: that is how own cards isolate a category, and the formula accounts for it.

The table's share: the other players see who refuted (or that nobody did), not the card
(R-G7), and they do not know our hand. :func:`public_information` scores that coarser answer
with :func:`observer_probabilities` (our notebook, with our own cards made as uncertain as
they look from outside).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import HELPER, INLINE, KERNEL
from cluedo_env.agents.knowledge.facts import CAT_ONEHOT, CATEGORY
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS

TINY = 1e-12


def h2(p: np.ndarray) -> np.ndarray:
    """Binary entropy in bits, elementwise (0 at p = 0 or 1)."""
    p = np.clip(p, TINY, 1.0 - TINY)
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


def envelope_information(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, see_card: bool = True
) -> np.ndarray:
    """(n, T) expected information (bits) about the envelope of suggesting each triple of ``cards`` (n, T, 3).

    prob (n, H, 21) holder probabilities (envelope last); order (n, K) the seats asked, in order;
    ``see_card``: the suggester sees the shown card (False: only who refuted, as the table sees it).

    Compiled (:func:`cluedo_env.agents.knowledge.suggestion_value.envelope_information_kernel`, one loop over games
    and triples, no temporaries); :func:`tests.references.suggestion_value.envelope_information_reference` is the numpy
    statement. The two agree to the last bit except where numpy's vectorised ``log2`` and the C library's
    differ (one value in a few hundred, by an ulp: scores differ by < 1e-14 bits).
    """
    n, T, _ = cards.shape
    out = np.empty((n, T))
    envelope_information_kernel(
        np.ascontiguousarray(prob, np.float64), np.ascontiguousarray(cards, np.int64),
        np.ascontiguousarray(order, np.int64), bool(refute_all), bool(see_card), out,
        np.empty((3 * order.shape[1] + 2, 21)),
    )  # fmt: skip
    return out


def observer_probabilities(prob: np.ndarray, seat: int, hand_sizes: np.ndarray) -> np.ndarray:
    """(n, H, 21) ``prob`` as an opponent might see it: our own cards are not known to be ours.

    Each of our cards gets the envelope probability of an open card of its category (one over
    the open cards plus ours there) and the rest spread over the players by hand size
    (hand_sizes (n, P)). Other cards keep our probabilities (the table's knowledge of them is
    not ours to know; ours is the best guess).
    """
    E = prob.shape[1] - 1
    mine = prob[:, seat] > 0.999  # (n, 21)
    open_env = (prob[:, E] > 0) | mine
    count = open_env.astype(np.float64) @ CAT_ONEHOT.T.astype(np.float64)  # (n, 3)
    pe = 1.0 / np.maximum(count, 1.0)[:, CATEGORY]  # (n, 21)
    share = hand_sizes / np.maximum(hand_sizes.sum(1, keepdims=True), 1)  # (n, P)
    col = np.concatenate([share[:, :, None] * (1.0 - pe)[:, None, :], pe[:, None, :]], 1)  # (n, H, 21)
    return np.where(mine[:, None, :], col, prob)


def public_information(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, seat: int, hand_sizes: np.ndarray
) -> np.ndarray:
    """(n, T) what the answer (who refuted, not the card) teaches an opponent about the envelope, in bits."""
    return envelope_information(observer_probabilities(prob, seat, hand_sizes), cards, order, refute_all, False)


__all__ = [
    "envelope_information",
    "h2",
    "observer_probabilities",
    "public_information",
]


# ---------------------------------------------------------------------------------------------- compiled kernels
# Slack of the log-free upper bounds (_h2_or_below): a triple is skipped only if its bound loses by more than
# this, far above the rounding of the ~30 terms summed (~1e-15), so the best triple is the one the exact
# scores give.
MARGIN = 1e-12
# A bound B returned as -1 - B and decoded comes back within ~2e-15 (B < 8): kept this much higher, so a kept
# bound is never below the one computed.
DECODE_SLACK = 1e-14


@njit(**INLINE)
def h2_scalar(p: float) -> float:
    p = min(max(p, TINY), 1.0 - TINY)
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


@njit(**INLINE)
def h2c(p: float, h_lo: float, h_hi: float) -> float:
    """:func:`h2_scalar` with its two clamped values passed in (``h2_scalar(0)``, ``h2_scalar(1)``): the same number,
    without
    the logarithms where the argument is clamped (a card known to be in or out of the envelope)."""
    if p <= TINY:
        return h_lo
    if p >= 1.0 - TINY:
        return h_hi
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


_H2_SEGMENTS = 64
_H2_NODES = np.zeros(_H2_SEGMENTS + 1)
_q = np.arange(1, _H2_SEGMENTS) / _H2_SEGMENTS
_H2_NODES[1:-1] = -(_q * np.log2(_q) + (1.0 - _q) * np.log2(1.0 - _q))
del _q


@njit(**HELPER)
def _h2_or_below(p: float, h_lo: float, h_hi: float, below: bool) -> float:
    """:func:`h2c`, or with ``below`` a lower bound of it without logarithms: the chord of the binary entropy
    between the two nodes k / 64 around ``p`` (the entropy is concave, so every chord lies below it; at most
    ~2e-4 bits below mid-range, ~0.01 in the outer segments), 0 where :func:`h2c` clamps.

    A HELPER, not inlined by numba: :func:`_seat_answers` calls it nine times and numba's inlining of each copy
    cost seconds of compiling; LLVM inlines the small body anyway."""
    if not below:
        return h2c(p, h_lo, h_hi)
    if p <= TINY or p >= 1.0 - TINY:
        return 0.0
    x = p * _H2_SEGMENTS
    k = min(int(x), _H2_SEGMENTS - 1)
    return _H2_NODES[k] + (_H2_NODES[k + 1] - _H2_NODES[k]) * (x - k)


@njit(**INLINE)
def _seat_answers(
    q: tuple[float, float, float], other: tuple[float, float, float], r: tuple[float, float, float], see_card: bool,
    h: tuple[float, float], below: bool = False,
) -> float:  # fmt: skip
    """One asked seat's term of :func:`cluedo_env.agents.knowledge.suggestion_value._after_seat_answers` (same
    operations):
    q = (a, b, c), other = (A_, B_, C_), r = e / max(other, TINY) per card of the triple; ``h`` = (``h_lo``,
    ``h_hi``), :func:`h2c`'s clamped values.

    An answer of probability 0 adds exactly 0 (its entropies are finite), so it is skipped: same result.
    With ``below``, every entropy is :func:`_h2_or_below`'s log-free lower bound: the term is then at
    most the exact one (every entropy has a non-negative weight).
    """
    a, b, c = q
    A_, B_, C_ = other
    r0, r1, r2 = r
    h_lo, h_hi = h
    s0, s1, s2 = a * B_ * C_, A_ * b * C_, A_ * B_ * c
    s01, s02, s12 = a * b * C_, a * B_ * c, A_ * b * c
    s012 = a * b * c
    if not see_card:
        total = s0 + s1 + s2 + s01 + s02 + s12 + s012
        if total == 0.0:
            return 0.0
        den = max(total, TINY)
        h0 = _h2_or_below(r0 * (s1 + s2 + s12) / den, h_lo, h_hi, below)
        h1 = _h2_or_below(r1 * (s0 + s2 + s02) / den, h_lo, h_hi, below)
        h2 = _h2_or_below(r2 * (s0 + s1 + s01) / den, h_lo, h_hi, below)
        return total * (h0 + h1 + h2)
    third = s012 / 3.0
    p0 = s0 + 0.5 * (s01 + s02) + third
    p1 = s1 + 0.5 * (s01 + s12) + third
    p2 = s2 + 0.5 * (s02 + s12) + third
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    if p0 != 0.0:
        d0 = max(p0, TINY)
        t0 = p0 * (
            _h2_or_below(r1 * (s0 + 0.5 * s02) / d0, h_lo, h_hi, below)
            + _h2_or_below(r2 * (s0 + 0.5 * s01) / d0, h_lo, h_hi, below)
        )
    if p1 != 0.0:
        d1 = max(p1, TINY)
        t1 = p1 * (
            _h2_or_below(r0 * (s1 + 0.5 * s12) / d1, h_lo, h_hi, below)
            + _h2_or_below(r2 * (s1 + 0.5 * s01) / d1, h_lo, h_hi, below)
        )
    if p2 != 0.0:
        d2 = max(p2, TINY)
        t2 = p2 * (
            _h2_or_below(r0 * (s2 + 0.5 * s12) / d2, h_lo, h_hi, below)
            + _h2_or_below(r1 * (s2 + 0.5 * s02) / d2, h_lo, h_hi, below)
        )
    return t0 + t1 + t2


@njit(**INLINE)
def _envelope_pre(
    prob: np.ndarray, i: int, order: np.ndarray, refute_all: bool, pre: np.ndarray, h_lo: float, h_hi: float
) -> None:
    """The per-card part of :func:`envelope_information_kernel` for game i into ``pre`` (see there)."""
    for c in range(NUM_CARDS):
        envelope_pre_card(prob, i, c, order, refute_all, pre, h_lo, h_hi)


@njit(**INLINE)
def envelope_pre_card(
    prob: np.ndarray, i: int, c: int, order: np.ndarray, refute_all: bool, pre: np.ndarray, h_lo: float, h_hi: float
) -> None:
    """Column c of :func:`_envelope_pre` (the kernels that score a few cards' triples fill only those)."""
    K = order.shape[1]
    E = prob.shape[1] - 1
    HE, HN = 3 * K, 3 * K + 1
    e = prob[i, E, c]
    pre[HE, c] = h2c(e, h_lo, h_hi)
    cs = 0.0
    for k in range(K):
        q = prob[i, order[i, k], c]
        if refute_all:
            other = min(max(1.0 - q, 0.0), 1.0)
            pre[2 * K + k, c] = h2c(e / max(other, TINY), h_lo, h_hi)
        else:
            cs += q
            other = min(max(1.0 - (cs - q) - q, 0.0), 1.0)
        pre[k, c] = other
        pre[K + k, c] = e / max(other, TINY)
    if not refute_all:
        o = min(max(1.0 - cs, 0.0), 1.0)
        pre[HN, c] = h2c(e / max(o, TINY), h_lo, h_hi)
        pre[2 * K, c] = o  # row 2K (unused without refute_all): clipped "not held by an asked seat"


@njit(**INLINE)
def envelope_triple(
    prob: np.ndarray, i: int, c0: int, c1: int, c2: int, order: np.ndarray, refute_all: bool, see_card: bool,
    pre: np.ndarray, h_lo: float, h_hi: float,
) -> float:  # fmt: skip
    """The expected envelope information of triple (c0, c1, c2) of game i, from ``pre`` (:func:`_envelope_pre`)."""
    return envelope_triple_above(
        prob, i, (c0, c1, c2), order, refute_all, see_card, pre, (h_lo, h_hi), -1.0, 0.0, False
    )  # fmt: skip


@njit(**INLINE)
def envelope_triple_above(
    prob: np.ndarray, i: int, triple: tuple[int, int, int], order: np.ndarray, refute_all: bool, see_card: bool,
    pre: np.ndarray, h: tuple[float, float], floor: float, extra: float, below: bool,
) -> float:  # fmt: skip
    """:func:`envelope_triple` of ``triple`` = (c0, c1, c2) (``h`` = (``h_lo``, ``h_hi``)), or ``-1 - B`` (negative)
    as soon as the value provably ends with ``value + extra < floor``: ``B`` is the bound that showed it,
    ``max(prior - partial, 0)``, at least the value.

    With ``below`` (first-refuter rule only) the seats' entropies are log-free lower bounds
    (:func:`_h2_or_below`), so the result is an upper bound of the value, about 5x cheaper: a triple
    whose bound cannot win needs no logarithm at all.

    Why: a best-triple search needs the exact value only of triples that can still win. With the
    first-refuter rule the value is ``max(prior - acc, 0)`` where ``acc`` sums one non-negative term
    per asked seat (and the "nobody refutes" term); adding non-negative floats never lowers the sum,
    even rounded, so once ``max(prior - partial, 0) + extra < floor`` the final value does too and the
    remaining seats (most of the logarithms) are skipped. The terms are added in the same order as
    without the floor, so a value that is returned is the same number. ``floor = -1`` never stops.
    """
    c0, c1, c2 = triple
    K = order.shape[1]
    HE, HN = 3 * K, 3 * K + 1
    prior = pre[HE, c0] + pre[HE, c1] + pre[HE, c2]
    acc = 0.0
    for k in range(K):
        s = order[i, k]
        seat = _seat_answers(
            (prob[i, s, c0], prob[i, s, c1], prob[i, s, c2]), (pre[k, c0], pre[k, c1], pre[k, c2]),
            (pre[K + k, c0], pre[K + k, c1], pre[K + k, c2]), see_card, h, below,
        )  # fmt: skip
        if refute_all:
            passes = pre[k, c0] * pre[k, c1] * pre[k, c2]
            hp = pre[2 * K + k, c0] + pre[2 * K + k, c1] + pre[2 * K + k, c2]
            term = max(prior - (seat + passes * hp), 0.0)
        else:
            term = seat
        acc = term if k == 0 else acc + term
        if not refute_all and max(prior - acc, 0.0) + extra < floor:
            return -1.0 - max(prior - acc, 0.0)
    if refute_all:
        return acc
    none = pre[2 * K, c0] * pre[2 * K, c1] * pre[2 * K, c2]
    acc += none * (pre[HN, c0] + pre[HN, c1] + pre[HN, c2])
    return max(prior - acc, 0.0)


# The two ways the best-triple searches (cluedo_env.agents.players.suggestion_choice) score a triple, each compiled
# once with
# its constant flags folded in. Why not inline envelope_triple_above at each of their six call sites: each copy is
# the seats' loop with nine binary entropies, and numba types and lowers every copy again (over a minute of
# compiling on an empty cache for the two searches).
@njit(**HELPER)
def triple_value(
    prob: np.ndarray, i: int, triple: tuple[int, int, int], order: np.ndarray, refute_all: bool, pre: np.ndarray,
    h: tuple[float, float], floor: float, extra: float,
) -> float:  # fmt: skip
    """:func:`envelope_triple_above` of a suggestion whose refuter's card the suggester sees, exact."""
    return envelope_triple_above(prob, i, triple, order, refute_all, True, pre, h, floor, extra, False)


@njit(**HELPER)
def triple_bound(
    prob: np.ndarray, i: int, triple: tuple[int, int, int], order: np.ndarray, pre: np.ndarray,
    h: tuple[float, float], floor: float, extra: float,
) -> float:  # fmt: skip
    """:func:`envelope_triple_above`'s log-free upper bound (``below``; first-refuter rule, the card seen)."""
    return envelope_triple_above(prob, i, triple, order, False, True, pre, h, floor, extra, True)


@njit(**KERNEL)
def envelope_information_kernel(
    prob: np.ndarray,
    cards: np.ndarray,
    order: np.ndarray,
    refute_all: bool,
    see_card: bool,
    out: np.ndarray,
    pre: np.ndarray,
) -> None:
    """:func:`tests.references.suggestion_value.envelope_information_reference` into ``out`` (n, T) float64.

    ``prob`` (n, H, 21) float64, ``cards`` (n, T, 3) int64, ``order`` (n, K) int64. Scratch ``pre``
    (3 K + 2, 21) float64: what depends on one card only is computed once per game (each value
    by the same operations as the reference), the rest per triple: per asked seat k and card c,
    ``other`` (rows 0..K-1), ``e / other`` (K..2K-1), the pass term (2K..3K-1, ``refute_all``);
    then ``h2(e)`` (3K) and the "nobody refutes" term (3K + 1).
    """
    n, T, _ = cards.shape
    h_lo, h_hi = h2_scalar(0.0), h2_scalar(1.0)
    for i in range(n):
        _envelope_pre(prob, i, order, refute_all, pre, h_lo, h_hi)
        for t in range(T):
            out[i, t] = envelope_triple(
                prob, i, cards[i, t, 0], cards[i, t, 1], cards[i, t, 2], order, refute_all, see_card, pre, h_lo, h_hi
            )
