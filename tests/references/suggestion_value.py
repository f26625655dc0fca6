"""The numpy statement of the expected information about the envelope
(:func:`cluedo_env.agents.knowledge.suggestion_value.envelope_information`), written out over all games, triples and
asked seats
at once; the tests compare it with the compiled kernel (one loop over games and triples).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.suggestion_value import TINY, h2


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
    Written out for the 7 subsets (the compiled version is
    :func:`cluedo_env.agents.knowledge.suggestion_value._seat_answers`).
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


def envelope_information_reference(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, see_card: bool = True
) -> np.ndarray:
    """:func:`cluedo_env.agents.knowledge.suggestion_value.envelope_information` in numpy: the readable reference of
    the model."""
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
