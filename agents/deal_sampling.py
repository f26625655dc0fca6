"""Probabilities over the deals consistent with one seat's facts: rough marginals and sampled deals.

Players that want probabilities (the expert's suggestions and risky accusations) and the
notebook's search for witness deals (:mod:`agents.notebook`) need deals, not facts. This
module turns :class:`agents.facts.Facts` into them: :func:`marginals`, a cheap per-card
estimate from the facts alone, and :func:`sample_deals`, importance-weighted deals, uniform
over the consistent ones (batched). Both run as compiled loops over games
(:mod:`agents.deduction_kernels`); ``marginals_reference`` and ``sample_deals_reference`` state
the same in numpy for the tests, which check that the two agree exactly.
"""

from __future__ import annotations

import numpy as np

from agents.deduction_kernels import (
    deal_weights_kernel,
    holder_weights_kernel,
    marginals_kernel,
    sample_deals_kernel,
    sample_setup_kernel,
    triple_weights_kernel,
)
from agents.facts import CAT_SLICES, CATEGORY, Facts, pack
from cluedo_env.rules.cards import NUM_CARDS

QUOTIENTS = np.arange(NUM_CARDS + 1.0)[:, None] / np.maximum(np.arange(NUM_CARDS + 1.0), 1.0)  # a / b, a, b <= 21


def marginals(has: np.ndarray, no: np.ndarray, size: np.ndarray) -> np.ndarray:
    """(n, H, 21) float: rough probability that each holder holds each card, from the facts only.

    ``has``, ``no`` (n, H, 21) bool and ``size`` (n, H) as in :class:`agents.facts.Facts`. A
    holder that may hold a card weighs (open slots) / (possible cards) (the envelope per
    category); weights are normalised over the holders of each card. Compiled
    (:func:`agents.deduction_kernels.marginals_kernel`); :func:`marginals_reference` is the numpy statement.
    """
    n, H, C = has.shape
    return marginals_rows(np.ascontiguousarray(has), np.ascontiguousarray(no), np.asarray(size, np.int64), np.arange(n))


def marginals_rows(has: np.ndarray, no: np.ndarray, size: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:func:`marginals` of rows ``idx`` of ``has``, ``no`` (B, H, 21) bool and ``size`` (B, H) int64 (no copies)."""
    H, C = has.shape[1], has.shape[2]
    out = np.empty((len(idx), H, C))
    bits = np.empty((2, 1, H), np.int64)  # a game's facts as bitmasks (scratch)
    marginals_kernel(has, no, size, np.asarray(idx, np.int64), out, np.empty((H, C)), bits[0], bits[1])
    return out


def marginals_reference(has: np.ndarray, no: np.ndarray, size: np.ndarray) -> np.ndarray:
    """:func:`marginals` in numpy: the readable reference, used by the tests only (same results, bit for bit)."""
    E = has.shape[1] - 1
    unknown = ~has & ~no
    slots = np.maximum(size - has.sum(2), 0).astype(np.float64)  # (n, H)
    cand = unknown.sum(2).astype(np.float64)
    w = np.where(unknown, (slots / np.maximum(cand, 1))[:, :, None], 0.0)
    env_u = unknown[:, E]  # (n, 21)
    for sl in CAT_SLICES:
        cnt = env_u[:, sl].sum(1, keepdims=True)
        open_ = ~has[:, E, sl].any(1, keepdims=True)
        w[:, E, sl] = np.where(env_u[:, sl] & open_, 1.0 / np.maximum(cnt, 1), 0.0)
    total = w.sum(1, keepdims=True)
    p = np.where(total > 0, w / np.where(total > 0, total, 1), 0.0)
    return np.where(has, 1.0, p)


def deal_weights(q: np.ndarray, alive: np.ndarray, n: int, M: int) -> np.ndarray:
    """(n, M) importance weights of the sampled deals: ``1 / q`` of each live deal, normalised per game. ``q`` (N,)
    is each deal's proposal probability, ``alive`` (N,) bool (N = n * M). Compiled
    (:func:`agents.deduction_kernels.deal_weights_kernel`); :func:`deal_weights_reference` is the numpy statement."""
    out = np.empty((n, M))
    deal_weights_kernel(np.ascontiguousarray(q, np.float64), np.ascontiguousarray(alive, bool), M, out)
    return out


def deal_weights_reference(q: np.ndarray, alive: np.ndarray, n: int, M: int) -> np.ndarray:
    """:func:`deal_weights` in numpy (the tests' statement): the smallest live ``q`` of the game over each live
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


def uniform_weights(alive: np.ndarray) -> np.ndarray:
    """(n, M) weights of deals drawn with the clauses satisfied first, ``alive`` (n, M) bool: every live deal of a
    game weighs the same, 1 / (its live deals); such weights say which deals exist, not how likely they are."""
    count = alive.sum(1, keepdims=True)
    return np.where(count > 0, alive / np.where(count > 0, count, 1), 0.0)


def sample_deals(
    facts: Facts,
    samples: int,
    rng: np.random.Generator,
    clauses_first: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted deals consistent with the facts and clauses of n games (sequential importance sampling).

    ``facts`` (:class:`agents.facts.Facts`) is only read.

    Unknown cards are placed one at a time (fewest possible holders first), each among the
    holders that may hold it and have room, with probability proportional to the room
    they have; deals that break a clause are dropped and the rest weighted by 1 / (their
    proposal probability), which makes the weighted sample target the uniform distribution
    over consistent deals. Returns owner (n, M, 21) int8 holder per card, weights (n, M)
    summing to 1 per game (all 0 where no sample survived), and alive (n, M): the deal is
    consistent (its weight may still underflow to 0).

    ``clauses_first``: first satisfy each open clause by placing one of its possible cards
    (at random) with its holder, then fill in the rest. Many more samples survive when the
    clauses are tight, but the weights are then meaningless (uniform over the survivors):
    use it to find consistent deals (witnesses), not to estimate probabilities.

    The loops run compiled (:func:`agents.deduction_kernels.sample_deals_kernel`) on random
    numbers drawn from ``rng`` in the order :func:`sample_deals_reference` (the numpy statement,
    used by the tests) draws them, and ``rng`` ends in the same state, so both give the same deals.
    """
    has, no, size, cl_holder, cl_cards, cl_live, acc_cards, acc_live = facts
    return sample_deals_bits(
        pack(has), pack(no), size, cl_holder, cl_cards, cl_live, acc_cards, acc_live, samples, rng, clauses_first
    )


def random_clause_order(rng: np.random.Generator, live: np.ndarray) -> np.ndarray:
    """(S,) int64: the clause slots ``live`` (K,) bool marks, in random order (``rng.permutation``; nothing is drawn
    where there are no clause slots): the order in which sampled deals satisfy the clauses first."""
    if len(live) == 0:
        return np.zeros(0, np.int64)
    return rng.permutation(np.flatnonzero(live)).astype(np.int64)


def sample_deals_bits(
    hb: np.ndarray,
    nb: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    samples: int,
    rng: np.random.Generator,
    clauses_first: bool = False,
    clause_order: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sample_deals` with the cells as bitmasks ``hb``, ``nb`` (n, H) int64 (:class:`agents.facts.FactBits`),
    the clauses by card id: what the notebook has at hand (no unpacking). ``clause_order`` (with ``clauses_first``):
    the clause slots to satisfy first, in that order, instead of a new :func:`random_clause_order`."""
    n, H = hb.shape
    C = NUM_CARDS
    M = samples
    N = n * M
    i64 = np.int64
    owner0, allowed = np.empty((n, C), np.int8), np.empty((n, H, C), bool)
    start = (owner0, np.empty((n, H), i64), np.empty((n, 3), i64), np.empty(n, i64), np.empty((n, 3), i64))
    order_all = np.empty((n, C), i64)
    steps = sample_setup_kernel(
        np.ascontiguousarray(hb, i64), np.ascontiguousarray(nb, i64), np.asarray(size, i64), *start, order_all, allowed,
        np.empty(C, i64),
    )  # fmt: skip
    order = np.ascontiguousarray(order_all[:, :steps])
    owner, alive, q = np.empty((N, C), np.int8), np.empty(N, bool), np.empty(N)
    counters = (np.empty((N, H), i64), np.empty((N, 3), i64), np.empty(N, i64), np.empty((N, 3), i64))
    if not clauses_first:
        clause_order = np.zeros(0, i64)
    elif clause_order is None:
        clause_order = random_clause_order(rng, cl_live.any(0))
    # The kernel draws its random numbers from ``rng`` itself, in the reference's order.
    sample_deals_kernel(
        *start, owner, *counters, alive, q, allowed, order, M, np.asarray(cl_holder, i64),
        np.asarray(cl_cards, i64), np.ascontiguousarray(cl_live), clause_order, np.asarray(acc_cards, i64),
        np.ascontiguousarray(acc_live), rng, np.empty((2, H)), QUOTIENTS, steps,
    )  # fmt: skip
    alive = alive.reshape(n, M)
    if clauses_first:
        return owner.reshape(n, M, C), uniform_weights(alive), alive
    return owner.reshape(n, M, C), deal_weights(q, alive.ravel(), n, M), alive


def holder_weights(owner: np.ndarray, w: np.ndarray, H: int) -> np.ndarray:
    """(n, H, 21) weight of the deals ``owner`` (n, M, 21) (weights ``w`` (n, M)) putting each card with each holder
    (an unplaced card of a dead deal counts as holder 0's): ``np.bincount`` of the pairs, compiled (same sums)."""
    n, M, C = owner.shape
    out = np.empty((n, H, C))
    holder_weights_kernel(np.ascontiguousarray(owner), np.ascontiguousarray(w, np.float64), out)
    return out


def triple_weights(owner: np.ndarray, w: np.ndarray, E: int) -> np.ndarray:
    """(n, 324) weight of the deals ``owner`` (n, M, 21) (weights ``w`` (n, M)) per envelope triple (triple index; a
    category without an envelope card, in a dead deal, counts as its first card): ``np.bincount``, compiled."""
    n = owner.shape[0]
    out = np.empty((n, 324))
    triple_weights_kernel(np.ascontiguousarray(owner), np.ascontiguousarray(w, np.float64), E, out)
    return out


def sample_deals_reference(
    facts: Facts,
    samples: int,
    rng: np.random.Generator,
    clauses_first: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sample_deals` in numpy: the readable reference, used by the tests only (same deals, same rng use)."""
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
