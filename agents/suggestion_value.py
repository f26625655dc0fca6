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

from agents.deduction import CAT_ONEHOT, CATEGORY

# The 7 non-empty subsets of the three named cards (bit j = card j), and 1/|S| per member.
SUBSETS = np.array([[(m >> j) & 1 for j in range(3)] for m in range(1, 8)], bool)  # (7, 3)
SHOW_SHARE = SUBSETS / SUBSETS.sum(1)[:, None]  # (7, 3): chance each member is the one shown
WITHOUT = ~SUBSETS.T  # (3, 7): subsets that do not contain card k
TINY = 1e-12


def h2(p: np.ndarray) -> np.ndarray:
    """Binary entropy in bits, elementwise (0 at p = 0 or 1)."""
    p = np.clip(p, TINY, 1.0 - TINY)
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


def subset_probs(yes: np.ndarray, no: np.ndarray) -> np.ndarray:
    """(..., 7) probability of each subset S (order of SUBSETS) from per-card (..., 3) in / out probabilities."""
    f = np.stack([no, yes], -1)  # (..., 3, 2)
    ps = f[..., 2, :, None, None] * f[..., 1, None, :, None] * f[..., 0, None, None, :]  # index 4 i2 + 2 i1 + i0
    return ps.reshape(ps.shape[:-3] + (8,))[..., 1:]


def _gather(prob: np.ndarray, cards: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q (n, T, K, 3): asked seat k holds named card i; e (n, T, 3): named card i is in the envelope."""
    n = cards.shape[0]
    E = prob.shape[1] - 1
    q = prob[np.arange(n)[:, None, None, None], order[:, None, :, None], cards[:, :, None, :]]
    e = prob[np.arange(n)[:, None, None], E, cards]
    return q, e


def _after_seat_answers(q: np.ndarray, e: np.ndarray, other: np.ndarray, see_card: bool) -> np.ndarray:
    """(n, T, K) sum over the answers "seat j refutes" (and the card, if seen) of P(answer) * sum_k h2(e'_k)."""
    ps = subset_probs(q, other)  # (n, T, K, 7)
    p_answer = ps @ SHOW_SHARE if see_card else ps.sum(-1, keepdims=True)  # (n, T, K, X)
    out = np.zeros(q.shape[:3])
    for k in range(3):
        other_k = other.copy()
        other_k[..., k] = e[:, :, None, k]  # k not held before j nor by j: in the envelope
        joint = subset_probs(q, other_k) * WITHOUT[k]  # k in the envelope, not in S
        joint = joint @ SHOW_SHARE if see_card else joint.sum(-1, keepdims=True)
        post = joint / np.maximum(p_answer, TINY)
        out += (p_answer * h2(post)).sum(-1)
    return out


def envelope_information(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, see_card: bool = True
) -> np.ndarray:
    """(n, T) expected information (bits) about the envelope of suggesting each triple of ``cards`` (n, T, 3).

    prob (n, H, 21) holder probabilities (envelope last); order (n, K) the seats asked, in order;
    ``see_card``: the suggester sees the shown card (False: only who refuted, as the table sees it).
    """
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
    "subset_probs",
]
