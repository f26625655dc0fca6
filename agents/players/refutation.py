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

Used by :class:`cluedo_env.agents.players.deducer.DeducerAgent` and, through it,
:class:`cluedo_env.agents.players.expert.ExpertAgent`, which
run it
compiled (:func:`cluedo_env.agents.players.refutation.refute_kernel`); these functions are its readable statement, and
``tests/test_deducer_kernels.py`` checks that both choose the same cards.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import KERNEL
from cluedo_env.agents.knowledge.facts import CAT_ONEHOT, CATEGORY, CATEGORY_SIZE, FIRST_OF, Facts
from cluedo_env.agents.knowledge.marginals import card_total, marginal, marginal_weights, pack_cells
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.knowledge.types import Tallies
from cluedo_env.agents.players.types import RefuteScratch
from numba import njit

from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

MIN_LEFT = 1.25  # below two candidates the formula explodes; any such card is a big leak anyway


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


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**KERNEL)
def refute_kernel(
    facts: Facts, tallies: Tallies, idx: np.ndarray, suggester: np.ndarray, mask: np.ndarray, noise: np.ndarray,
    out: np.ndarray, scratch: RefuteScratch,
) -> None:  # fmt: skip
    """The notebook players' refutation (:mod:`cluedo_env.agents.players.refutation`), compiled: ``out`` (n,) int64 the
    SHOW action
    of
    :func:`~cluedo_env.agents.players.refutation.choose_refutation` on
    :func:`~cluedo_env.agents.players.refutation.suggester_candidates`,
    from the
    notebook's own marginals (``facts``: ``has``, ``no`` (B, H, 21), ``size`` (B, H)), in games ``idx`` (n,) refuting
    ``suggester`` (n,) int64, among the named cards ``mask`` (n, 870) bool allows, with ``noise`` (n, 21) uniform
    numbers (the reference's ``rng.random(legal.shape)``). ``shown_by_me`` (B, P, 21) bool, ``shown_to`` (B, P)
    int64: the notebook's ``tallies``. Scratch (:class:`cluedo_env.agents.players.types.RefuteScratch`): ``prob`` (1,
    H, 21),
    ``w`` (H, 21) float64, ``hb``, ``nb`` (1, H) int64.

    The same operations as the reference, except that each category's sum of the suggester's probabilities is
    added card by card (numpy's matrix product may add in another order: the last bit can differ). Where one named
    card is held the choice is forced and nothing is scored (most refutations); otherwise only the suggester's row
    of the marginals is computed, the one row read.
    """
    has, no, size = facts.has, facts.no, facts.size
    shown_by_me, shown_to = tallies.shown_by_me, tallies.shown_to
    prob, w, hb, nb = scratch
    for i in range(idx.shape[0]):
        g, s = idx[i], suggester[i]
        legal = 0
        for c in range(NUM_CARDS):
            if mask[i, A.SHOW0 + c]:
                legal += 1
                best = c
        if legal == 1:  # one named card held: the choice is forced (the scores below would pick it)
            out[i] = A.SHOW0 + best
            continue
        pack_cells(has, no, g, hb, nb, np.int64(0))  # (row as an int64: pack_cells' one compiled version)
        marginal_weights(hb, nb, 0, size, g, w)  # the suggester's row of the marginals only: what is read
        for c in range(NUM_CARDS):
            prob[0, s, c] = marginal((hb[0, s] >> c) & 1 == 1, w[s, c], card_total(w, c))
        mine_total = 0
        for c in range(NUM_CARDS):
            mine_total += shown_by_me[g, s, c]
        others = max(shown_to[g, s] - mine_total, 0) / 3.0
        b0, b1, b2 = 0.0, 0.0, 0.0
        for k in range(3):
            own = 0.0
            by_me = 0.0
            for c in range(FIRST_OF[k], FIRST_OF[k + 1]):
                own += prob[0, s, c]
                by_me += shown_by_me[g, s, c]
            left = max(CATEGORY_SIZE[k] - own - by_me - others, MIN_LEFT)
            bits = np.log2(left / (left - 1.0))
            if k == 0:
                b0 = bits
            elif k == 1:
                b1 = bits
            else:
                b2 = bits
        best = 0
        top = -np.inf
        for c in range(NUM_CARDS):
            if not mask[i, A.SHOW0 + c]:
                continue
            seen = shown_by_me[g, s, c]
            to_others = False
            if not seen:
                for p in range(shown_by_me.shape[1]):
                    if shown_by_me[g, p, c]:
                        to_others = True
                        break
            leak = 0.0 if seen else (b0 if c < WEAPON_CARD0 else (b1 if c < ROOM_CARD0 else b2))
            score = -leak + 1e-3 * to_others + 1e-6 * noise[i, c]
            if score > top:
                top = score
                best = c
        out[i] = A.SHOW0 + best
