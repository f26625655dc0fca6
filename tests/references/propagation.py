"""The numpy statement of the propagation fixpoint (:func:`cluedo_env.agents.knowledge.propagation.fixpoint_bits`).

Batched passes of the rules over every game until none changes; the compiled kernel runs the same passes game by
game, and ``tests/test_deduction_kernels.py`` checks that both give the same facts and contradictions.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import CAT_BITS, FULL, POW2, FactBits, popcount

from cluedo_env.rules.cards import NUM_CARDS


def fixpoint_bits_reference(facts: FactBits, max_iter: int = 100) -> np.ndarray:
    """The numpy statement of :func:`fixpoint_bits` (batched passes until no game changes), in place.

    The readable reference of the rules, kept for the tests, which check that the kernel
    computes exactly the same (``tests/test_deduction_kernels.py``); players use :func:`fixpoint_bits`.
    """
    hb, nb, size, cl_holder, cl_mask, cl_live, acc_mask, acc_live = facts
    n, H = hb.shape
    E = H - 1
    bad = np.zeros(n, bool)
    if n == 0:
        return bad
    ar = np.arange(n)
    K = cl_live.shape[1]
    nacc = acc_live.shape[1]
    if K:
        rk = ar[:, None]
        hk = cl_holder.astype(np.int64)
    shifts = np.arange(NUM_CARDS)
    for _ in range(max_iter):
        old_h, old_n = hb.copy(), nb.copy()
        # 1, 2: each card in exactly one place.
        located = np.bitwise_or.reduce(hb, axis=1)
        nb |= located[:, None] & ~hb
        poss = ~nb & FULL
        nposs = ((poss[:, :, None] >> shifts) & 1).sum(1)  # (n, 21)
        bad |= (nposs == 0).any(1)
        single = (nposs == 1) @ POW2
        hb |= poss & single[:, None]
        # 5: one envelope card per category.
        env_h = hb[:, E, None] & CAT_BITS  # (n, 3)
        env_p = ~nb[:, E, None] & CAT_BITS
        nh = np.bitwise_count(env_h)
        npo = np.bitwise_count(env_p)
        bad |= ((nh > 1) | (npo == 0)).any(1)
        nb[:, E] |= np.bitwise_or.reduce((CAT_BITS & ~env_h) * (nh >= 1), axis=1)
        hb[:, E] |= np.bitwise_or.reduce(env_p * (npo == 1), axis=1)
        # 3, 4: exact hand sizes.
        nh = np.bitwise_count(hb)
        nhu = nh + np.bitwise_count(~(hb | nb) & FULL)
        bad |= ((nh > size) | (nhu < size)).any(1)
        nb |= (~hb & FULL) * (nh >= size)
        hb |= (~nb & FULL) * (nhu <= size)
        # 6: "holds at least one of" clauses.
        if K and cl_live.any():
            gh = hb[rk, hk]
            cand = cl_mask & ~nb[rk, hk]
            live = cl_live & ((cl_mask & gh) == 0)
            nc = popcount(cand)
            bad |= (live & (nc == 0)).any(1)
            unit = live & (nc == 1)
            if unit.any():
                rows, ks = np.nonzero(unit)
                np.bitwise_or.at(hb, (rows, hk[rows, ks]), cand[rows, ks])
            cl_live[:] = live
        # 7: "the envelope lacks at least one of" clauses.
        if nacc and acc_live.any():
            env_h = hb[:, E]
            live = acc_live & ((acc_mask & nb[:, E][:, None]) == 0)
            n3 = popcount(acc_mask & env_h[:, None])
            bad |= (live & (n3 == 3)).any(1)
            two = live & (n3 == 2)
            nb[:, E] |= np.bitwise_or.reduce(np.where(two, acc_mask & ~env_h[:, None], 0), axis=1)
            acc_live[:] = live
        bad |= ((hb & nb) != 0).any(1)
        if (hb == old_h).all() and (nb == old_n).all():
            break
    bad |= (((hb[:, :, None] >> shifts) & 1).sum(1) > 1).any(1)  # a card in two places
    return bad
