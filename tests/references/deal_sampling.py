"""The numpy statements of deal sampling (:mod:`cluedo_env.agents.knowledge.deal_sampling`): the deals' importance
weights and the sampled deals themselves, drawing the same random numbers in the same order as the kernels, which the
tests compare with them deal by deal.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.deal_sampling import uniform_weights
from cluedo_env.agents.knowledge.facts import CAT_SLICES, CATEGORY, Facts


def deal_weights_reference(q: np.ndarray, alive: np.ndarray, n: int, M: int) -> np.ndarray:
    """:func:`cluedo_env.agents.knowledge.deal_sampling.deal_weights` in numpy: the smallest live ``q`` of the game
    over each live
    deal's (so the likeliest proposal weighs 1 and nothing overflows), summed deal by deal, then normalised.

    Why a product and not a sum of logarithms: a deal places at most 21 cards, each with probability at least
    1 / (7 holders x 21), so q >= 1e-46, far inside float64; products and quotients round the same in numpy and in
    a compiled loop, where numba's ``log`` and ``exp`` differ from numpy's in the last bit."""
    q = q.reshape(n, M)
    alive = alive.reshape(n, M)
    qmin = np.where(alive, q, np.inf).min(1, keepdims=True)
    w = np.where(alive, qmin / np.where(alive, q, 1.0), 0.0)
    s = np.zeros(n)
    for m in range(M):  # deal by deal, as the kernel adds them
        s += w[:, m]
    return np.where(s[:, None] > 0, w / np.where(s > 0, s, 1.0)[:, None], 0.0)


def sample_deals_reference(
    facts: Facts,
    samples: int,
    rng: np.random.Generator,
    clauses_first: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`cluedo_env.agents.knowledge.deal_sampling.sample_deals` in numpy: the readable reference (same deals,
    same random
    numbers)."""
    has, no, size, cl_holder, cl_cards, cl_live, acc_cards, acc_live = facts
    n, H, C = has.shape
    E = H - 1
    M = samples
    N = n * M
    g_of = np.repeat(np.arange(n), M)
    known = has.any(1)
    owner0 = np.where(known, has.argmax(1), -1).astype(np.int8)  # (n, 21)
    owner = np.repeat(owner0, M, axis=0)  # (N, 21)
    cap = np.repeat(np.maximum(size - has.sum(2), 0), M, axis=0).astype(np.int64)  # (N, H)
    env_open = np.stack([~has[:, E, sl].any(1) for sl in CAT_SLICES], 1)  # (n, 3)
    env_cap = np.repeat(env_open, M, axis=0).astype(np.int64)  # (N, 3)
    unk_total = np.repeat((~known).sum(1), M).astype(np.int64)
    unk_cat = np.repeat(np.stack([(~known[:, sl]).sum(1) for sl in CAT_SLICES], 1), M, axis=0).astype(np.int64)
    nposs = (~no).sum(1) + 100 * known  # known cards last
    order = np.argsort(nposs, axis=1, kind="stable")  # (n, 21)
    steps = int((~known).sum(1).max()) if n else 0
    q = np.ones(N)  # proposal probability of each deal
    alive = np.ones(N, bool)
    ar = np.arange(N)
    allowed_all = ~no  # (n, H, 21)
    if clauses_first and cl_live.shape[1]:
        slots = np.flatnonzero(cl_live.any(0))
        for k in rng.permutation(slots):
            hk = cl_holder[g_of, k].astype(np.int64)
            ck = cl_cards[g_of, k].astype(np.int64)  # (N, 3)
            held = owner[ar[:, None], ck]
            todo = alive & cl_live[g_of, k] & ~(held == hk[:, None]).any(1) & (cap[ar, hk] > 0)
            cand = (held < 0) & allowed_all[g_of[:, None], hk[:, None], ck] & todo[:, None]
            rows = np.flatnonzero(cand.any(1))
            if len(rows) == 0:
                continue
            j = np.where(cand[rows], rng.random((len(rows), 3)), -1.0).argmax(1)
            cr = ck[rows, j]
            owner[rows, cr] = hk[rows]
            cap[rows, hk[rows]] -= 1
            unk_total[rows] -= 1
            unk_cat[rows, CATEGORY[cr]] -= 1
    for t in range(steps):
        c = order[g_of, t]  # (N,)
        todo = alive & (owner[ar, c] < 0)
        if not todo.any():
            continue
        rows = np.flatnonzero(todo)
        cr = c[rows]
        cat = CATEGORY[cr]
        allowed = allowed_all[g_of[rows], :, cr]  # (r, H)
        w = np.zeros((len(rows), H))
        w[:, :E] = cap[rows, :E] / np.maximum(unk_total[rows], 1)[:, None]
        w[:, E] = env_cap[rows, cat] / np.maximum(unk_cat[rows, cat], 1)
        w = np.where(allowed, w, 0.0)
        tot = w.sum(1)
        dead = tot <= 0
        alive[rows[dead]] = False
        live = ~dead
        rows, cr, cat, w, tot = rows[live], cr[live], cat[live], w[live], tot[live]
        cum = np.cumsum(w, 1)
        u = rng.random(len(rows)) * tot
        h = np.minimum((cum <= u[:, None]).sum(1), H - 1)
        # guard against rounding picking a zero-weight holder
        h = np.where(w[np.arange(len(rows)), h] > 0, h, w.argmax(1))
        q[rows] *= w[np.arange(len(rows)), h] / tot
        owner[rows, cr] = h
        is_env = h == E
        cap[rows[~is_env], h[~is_env]] -= 1
        env_cap[rows[is_env], cat[is_env]] -= 1
        unk_total[rows] -= 1
        unk_cat[rows, cat] -= 1
    # Clauses.
    K = cl_live.shape[1]
    if K:
        held = owner[ar[:, None, None], np.repeat(cl_cards, M, axis=0).astype(np.int64)]  # (N, K, 3)
        ok = (held == np.repeat(cl_holder, M, axis=0)[:, :, None]).any(2) | ~np.repeat(cl_live, M, axis=0)
        alive &= ok.all(1)
    if acc_live.shape[1]:
        held = owner[ar[:, None, None], np.repeat(acc_cards, M, axis=0).astype(np.int64)]
        broken = (held == E).all(2) & np.repeat(acc_live, M, axis=0)
        alive &= ~broken.any(1)
    if clauses_first:
        return owner.reshape(n, M, C), uniform_weights(alive.reshape(n, M)), alive.reshape(n, M)
    return owner.reshape(n, M, C), deal_weights_reference(q, alive, n, M), alive.reshape(n, M)
