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

from agents.deduction_kernels import envelope_information_kernel
from agents.facts import CAT_ONEHOT, CATEGORY

TINY = 1e-12


def h2(p: np.ndarray) -> np.ndarray:
    """Binary entropy in bits, elementwise (0 at p = 0 or 1)."""
    p = np.clip(p, TINY, 1.0 - TINY)
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


def _gather(prob: np.ndarray, cards: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q (n, T, K, 3): asked seat k holds named card i; e (n, T, 3): named card i is in the envelope."""
    n, H, C = prob.shape
    flat = prob.reshape(-1)
    base = (np.arange(n) * H)[:, None, None]  # (n, 1, 1)
    cards = cards.astype(np.int64)
    rows = (base + order[:, None, :].astype(np.int64))[..., None] * C  # (n, 1, K, 1)
    q = flat[rows + cards[:, :, None, :]]
    e = flat[(base + H - 1) * C + cards]
    return q, e


def _after_seat_answers(q: np.ndarray, e: np.ndarray, other: np.ndarray, see_card: bool) -> np.ndarray:
    """(n, T, K) sum over the answers "seat j refutes" (and the card, if seen) of P(answer) * sum_k h2(e'_k).

    With ``s_S`` the probability that seat j holds exactly the named subset S (and no seat asked
    before it holds any), card x is shown with probability ``sum_{S containing x} s_S / |S|``.
    The joint probability with "card k is in the envelope" is the same sum over the subsets
    without k, times ``e_k / other_k`` (k's "not before, not j" factor becomes "in the envelope").
    Written out for the 7 subsets (the compiled version is :func:`agents.deduction_kernels._seat_answers`).
    """
    a, b, c = q[..., 0], q[..., 1], q[..., 2]
    A_, B_, C_ = other[..., 0], other[..., 1], other[..., 2]
    s0, s1, s2 = a * B_ * C_, A_ * b * C_, A_ * B_ * c
    s01, s02, s12 = a * b * C_, a * B_ * c, A_ * b * c
    s012 = a * b * c
    r = e[:, :, None, :] / np.maximum(other, TINY)  # (n, T, K, 3)
    r0, r1, r2 = r[..., 0], r[..., 1], r[..., 2]
    if not see_card:
        total = s0 + s1 + s2 + s01 + s02 + s12 + s012
        den = np.maximum(total, TINY)
        post = np.stack([r0 * (s1 + s2 + s12), r1 * (s0 + s2 + s02), r2 * (s0 + s1 + s01)], -1) / den[..., None]
        return total * h2(post).sum(-1)
    third = s012 / 3.0
    p0 = s0 + 0.5 * (s01 + s02) + third
    p1 = s1 + 0.5 * (s01 + s12) + third
    p2 = s2 + 0.5 * (s02 + s12) + third
    # Posterior envelope probability of card k after "card x shown" (x != k; k = x gives 0).
    d0, d1, d2 = np.maximum(p0, TINY), np.maximum(p1, TINY), np.maximum(p2, TINY)
    post = np.stack(
        [
            r1 * (s0 + 0.5 * s02) / d0, r2 * (s0 + 0.5 * s01) / d0,  # x = 0: k = 1, 2
            r0 * (s1 + 0.5 * s12) / d1, r2 * (s1 + 0.5 * s01) / d1,  # x = 1: k = 0, 2
            r0 * (s2 + 0.5 * s12) / d2, r1 * (s2 + 0.5 * s02) / d2,  # x = 2: k = 0, 1
        ],
        -1,
    )  # fmt: skip
    hk = h2(post)
    return p0 * (hk[..., 0] + hk[..., 1]) + p1 * (hk[..., 2] + hk[..., 3]) + p2 * (hk[..., 4] + hk[..., 5])


def envelope_information(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, see_card: bool = True
) -> np.ndarray:
    """(n, T) expected information (bits) about the envelope of suggesting each triple of ``cards`` (n, T, 3).

    prob (n, H, 21) holder probabilities (envelope last); order (n, K) the seats asked, in order;
    ``see_card``: the suggester sees the shown card (False: only who refuted, as the table sees it).

    Compiled (:func:`agents.deduction_kernels.envelope_information_kernel`, one loop over games
    and triples, no temporaries); :func:`envelope_information_reference` is the numpy statement.
    The two agree to the last bit except where numpy's vectorised ``log2`` and the C library's
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


def envelope_information_reference(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, see_card: bool = True
) -> np.ndarray:
    """:func:`envelope_information` in numpy: the readable reference of the model, used by the tests only."""
    q, e = _gather(prob, cards, order)
    prior = h2(e).sum(-1)  # (n, T)
    if refute_all:  # every asked seat answers for itself
        other = np.clip(1.0 - q, 0.0, 1.0)
        seat = _after_seat_answers(q, e, other, see_card)  # (n, T, K)
        passes = other.prod(-1)  # (n, T, K)
        post_pass = e[:, :, None, :] / np.maximum(other, TINY)
        seat += passes * h2(post_pass).sum(-1)
        return np.maximum(prior[..., None] - seat, 0.0).sum(-1)
    before = np.cumsum(q, axis=2) - q
    other = np.clip(1.0 - before - q, 0.0, 1.0)  # held later, by the suggester or in the envelope
    after = _after_seat_answers(q, e, other, see_card).sum(-1)
    out_all = np.clip(1.0 - q.sum(2), 0.0, 1.0)  # (n, T, 3) not held by any asked seat
    none = out_all.prod(-1)
    after += none * h2(e / np.maximum(out_all, TINY)).sum(-1)
    return np.maximum(prior - after, 0.0)


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
