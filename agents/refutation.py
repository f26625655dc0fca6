"""Which named card to show when refuting (R-G6): the one choice every notebook player shares.

Why it matters: the card shown is private to the suggester (R-G7), so it teaches the
suggester and nobody else; the rest of the table sees only *that* this seat refuted, which
does not depend on the card. So the best card is the one that teaches the suggester least
about the envelope:

1. a card this seat has already shown to the suggester: it learns nothing new;
2. otherwise the card whose exclusion from the envelope is worth the fewest bits to the
   suggester. If the suggester has ``n`` candidates left in the card's category, learning
   that one of them is not the envelope's is worth ``log2(n / (n - 1))`` bits: least in the
   category where the suggester is furthest from the answer (usually rooms: 1 of 9).
   ``n`` is estimated from public information and this seat's notebook
   (:func:`suggester_candidates`);
3. ties go to a card already shown to someone else (fewer distinct cards of this hand leak
   over the game), then at random.

Used by :class:`agents.deducer.DeducerAgent` and, through it, :class:`agents.expert.ExpertAgent`, which run it
compiled (:func:`agents.deduction_kernels.refute_kernel`); these functions are its readable statement, and
``tests/test_deducer_kernels.py`` checks that both choose the same cards.
"""

from __future__ import annotations

import numpy as np

from agents.deduction_kernels import _CATEGORY_SIZE, _MIN_LEFT
from agents.facts import CAT_ONEHOT, CATEGORY
from agents.notebook import Notebook

CATEGORY_SIZE = CAT_ONEHOT.sum(1).astype(np.float64)  # (3,) 6 suspects, 6 weapons, 9 rooms
MIN_LEFT = 1.25  # below two candidates the formula explodes; any such card is a big leak anyway
assert (_MIN_LEFT, _CATEGORY_SIZE) == (MIN_LEFT, tuple(CATEGORY_SIZE))  # the compiled rule's literals


def leak_bits(candidates_left: np.ndarray) -> np.ndarray:
    """(n, 21) bits the suggester gains by seeing each card, from (n, 3) candidates it has left per category.

    ``log2(n / (n - 1))`` for the card's category (a card not yet located by the suggester).
    """
    left = np.maximum(np.asarray(candidates_left, np.float64), MIN_LEFT)
    bits = np.log2(left / (left - 1.0))  # (n, 3)
    return bits[:, CATEGORY]


def suggester_candidates(nb: Notebook, prob: np.ndarray, idx: np.ndarray, suggester: np.ndarray) -> np.ndarray:
    """(n, 3) float: expected envelope candidates the suggester still has per category.

    Category size minus the suggester's own cards there (this seat's holder probabilities
    ``prob`` (n, H, 21) for that seat) minus the cards shown to it: exactly those this seat
    showed, plus a third of a card per category for every other refutation it received
    (each suggestion names one card of each category, R-G1).
    """
    rows = np.arange(len(idx))
    own = prob[rows, suggester] @ CAT_ONEHOT.T.astype(np.float64)  # (n, 3)
    mine = nb.shown_by_me[idx, suggester]  # (n, 21)
    by_me = mine @ CAT_ONEHOT.T.astype(np.float64)
    others = np.maximum(nb.shown_to[idx, suggester] - mine.sum(1), 0) / 3.0
    return CATEGORY_SIZE[None, :] - own - by_me - others[:, None]


def choose_refutation(
    legal: np.ndarray,
    seen_by_suggester: np.ndarray,
    shown_to_others: np.ndarray,
    candidates_left: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """(n,) card id to show: already seen by the suggester, else fewest bits, then shown before, then random.

    legal (n, 21) bool: the named cards this seat holds (at least one per row);
    seen_by_suggester, shown_to_others (n, 21) bool; candidates_left (n, 3) (:func:`suggester_candidates`).
    """
    bits = np.where(seen_by_suggester, 0.0, leak_bits(candidates_left))
    score = -bits + 1e-3 * shown_to_others + 1e-6 * rng.random(legal.shape)
    return np.where(legal, score, -np.inf).argmax(1)


__all__ = ["choose_refutation", "leak_bits", "suggester_candidates"]
