"""Deals consistent with one seat's facts, sampled with importance weights, and what they sum to.

Players that want probabilities (the expert's suggestions and risky accusations) and the
notebook's search for witness deals (:mod:`cluedo_env.agents.knowledge.notebook`) need deals, not facts. This
module turns :class:`cluedo_env.agents.knowledge.facts.Facts` into them: :func:`sample_deals` draws importance-weighted
deals, uniform over the consistent ones (batched), and :func:`holder_weights` / :func:`triple_weights` sum
them per card and per envelope triple. The loops run compiled (the kernels at the end of this module); the
cheap per-card estimate from the facts alone is :mod:`cluedo_env.agents.knowledge.marginals`; their numpy statements,
which the tests compare with them, are in ``tests/references/``.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import KERNEL, EntryPoint
from cluedo_env.agents.knowledge.facts import CAT_MASKS, Facts, bit_count, category_of, pack
from cluedo_env.agents.knowledge.marginals import QUOTIENTS
from cluedo_env.agents.knowledge.types import ClauseCards, DealScratch, DealStart
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0


def deal_weights(q: np.ndarray, alive: np.ndarray, n: int, M: int) -> np.ndarray:
    """(n, M) importance weights of the sampled deals: ``1 / q`` of each live deal, normalised per game. ``q`` (N,)
    is each deal's proposal probability, ``alive`` (N,) bool (N = n * M). Compiled
    (:func:`cluedo_env.agents.knowledge.deal_sampling.deal_weights_kernel`);
    :func:`tests.references.deal_sampling.deal_weights_reference` is the numpy statement."""
    out = np.empty((n, M))
    deal_weights_kernel(np.ascontiguousarray(q, np.float64), np.ascontiguousarray(alive, bool), M, out)
    return out


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

    ``facts`` (:class:`cluedo_env.agents.knowledge.facts.Facts`) is only read.

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

    The loops run compiled (:func:`cluedo_env.agents.knowledge.deal_sampling.sample_deals_kernel`) on random
    numbers drawn from ``rng`` in the order :func:`tests.references.deal_sampling.sample_deals_reference` (the numpy
    statement, used by the tests) draws them, and ``rng`` ends in the same state, so both give the same deals.
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
    """:func:`sample_deals` with the cells as bitmasks ``hb``, ``nb`` (n, H) int64
    (:class:`cluedo_env.agents.knowledge.facts.FactBits`),
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
    clauses = ClauseCards(
        np.ascontiguousarray(cl_holder, i64), np.ascontiguousarray(cl_cards, i64), np.ascontiguousarray(cl_live, bool),
        np.ascontiguousarray(acc_cards, i64), np.ascontiguousarray(acc_live, bool),
    )  # fmt: skip
    deals = DealScratch(owner, *counters, alive, q, np.empty((2, H)), QUOTIENTS)
    _sample_deals_call(DealStart(*start, allowed, order), deals, int(M), clauses,
                       np.ascontiguousarray(clause_order, i64), rng, int(steps))  # fmt: skip
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


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**KERNEL)
def sample_deals_kernel(
    start: DealStart,
    deals: DealScratch,
    samples: int,
    clauses: ClauseCards,
    clause_order: np.ndarray,
    rng: np.random.Generator,
    steps: int,
) -> None:
    """The loops of :func:`tests.references.deal_sampling.sample_deals_reference` over N = n * samples deals.

    Deal r belongs to game r // samples and starts from its game's ``start`` (a
    :class:`cluedo_env.agents.knowledge.types.DealStart`): ``owner0`` (n, 21) int8 holder
    per card (-1 unplaced) and int64 counters ``cap0`` (n, H) room per holder, ``env_cap0`` (n, 3)
    envelope room per category, ``unk_total0`` (n,) / ``unk_cat0`` (n, 3) unplaced cards. Written:
    ``owner`` (N, 21) int8, the counters per deal (``cap`` (N, H), ``env_cap`` (N, 3), ``unk_total``
    (N,), ``unk_cat`` (N, 3), scratch), ``alive`` (N,) bool and ``q`` (N,) float64: the proposal probability
    of each deal, the product of its placement steps' probabilities in step order (1.0 where none).
    Read: ``allowed`` (n, H, 21) bool (= not ``no``), ``order`` (n, >= steps) int64 placement order
    (``steps``: the most unplaced cards of a game, :func:`sample_setup_kernel`), the clauses as int64 / bool
    arrays, ``clause_order`` (S,) int64 the clause slots to satisfy first (empty: none),
    ``rng`` the generator, drawn from here (``rng.random()``, numba's own calls on the same bit generator)
    in the order the reference's ``rng.random`` calls draw (clause by clause, step by step, deals in
    order), so the same generator state gives the same deals and leaves the generator in the same state.
    Scratch ``w`` (2, H) float64; ``div`` (22, 22) float64 the
    quotients a / b of the counters (each at most 21), divided once. The arrays written and the scratch are
    ``deals`` (a :class:`cluedo_env.agents.knowledge.types.DealScratch`); the clauses ``clauses`` (a
    :class:`cluedo_env.agents.knowledge.types.ClauseCards`).
    """
    owner0, cap0, env_cap0, unk_total0, unk_cat0, allowed, order = start
    owner, cap, env_cap, unk_total, unk_cat, alive, q, w, div = deals
    cl_holder, cl_cards, cl_live, acc_cards, acc_live = clauses
    N = owner.shape[0]
    H = cap.shape[1]
    E = H - 1
    for r in range(N):
        g = r // samples
        for c in range(owner.shape[1]):
            owner[r, c] = owner0[g, c]
        for h in range(H):
            cap[r, h] = cap0[g, h]
        for k in range(3):
            env_cap[r, k] = env_cap0[g, k]
            unk_cat[r, k] = unk_cat0[g, k]
        unk_total[r] = unk_total0[g]
        alive[r] = True
        q[r] = 1.0
    # Satisfy the clauses first (three numbers per deal that has a candidate card).
    for s in range(clause_order.shape[0]):
        k = clause_order[s]
        for r in range(N):
            g = r // samples
            if not (alive[r] and cl_live[g, k]):
                continue
            hk = cl_holder[g, k]
            if cap[r, hk] <= 0:
                continue
            sat = False
            for j in range(3):
                if owner[r, cl_cards[g, k, j]] == hk:
                    sat = True
            if sat:
                continue
            best = -1
            top = -1.0
            anyc = False
            for j in range(3):
                c = cl_cards[g, k, j]
                if owner[r, c] < 0 and allowed[g, hk, c]:
                    anyc = True
            if not anyc:
                continue
            x0, x1, x2 = rng.random(), rng.random(), rng.random()  # three numbers, as the reference draws them
            for j in range(3):
                c = cl_cards[g, k, j]
                v = (x0 if j == 0 else (x1 if j == 1 else x2)) if owner[r, c] < 0 and allowed[g, hk, c] else -1.0
                if v > top:
                    top = v
                    best = j
            cr = cl_cards[g, k, best]
            owner[r, cr] = hk
            cap[r, hk] -= 1
            unk_total[r] -= 1
            unk_cat[r, category_of(cr)] -= 1
    # Place the other cards one at a time, fewest possible holders first (deal r = g * samples + m, in order).
    n = order.shape[0]
    U = np.uint64  # unsigned indices: numba adds a negative-index fix to each signed one (~12% of this loop)
    for t in range(steps):
        for g in range(n):
            ug = U(g)
            c = order[g, t]
            uc = U(c)
            cat = category_of(c)
            ucat = U(cat)
            for r in range(g * samples, (g + 1) * samples):
                ur = U(r)
                if not alive[ur] or owner[ur, uc] >= 0:
                    continue
                den = U(max(unk_total[ur], 1))
                tot = 0.0
                for h in range(H):
                    uh = U(h)
                    if not allowed[ug, uh, uc]:
                        v = 0.0
                    elif h < E:
                        v = div[U(cap[ur, uh]), den]  # = cap / den, divided once in the table
                    else:
                        v = div[U(env_cap[ur, ucat]), U(max(unk_cat[ur, ucat], 1))]
                    w[U(0), uh] = v
                    tot = v if h == 0 else tot + v
                if tot <= 0:
                    alive[ur] = False
                    continue
                u = rng.random() * tot
                cum = 0.0
                h = 0
                for j in range(H):
                    cum = w[U(0), U(j)] if j == 0 else cum + w[U(0), U(j)]
                    if cum <= u:
                        h += 1
                h = min(h, H - 1)
                if not w[U(0), U(h)] > 0:
                    h = 0
                    for j in range(1, H):
                        if w[U(0), U(j)] > w[U(0), U(h)]:
                            h = j
                uh = U(h)
                q[ur] *= w[U(0), uh] / tot
                owner[ur, uc] = h
                if h == E:
                    env_cap[ur, ucat] -= 1
                else:
                    cap[ur, uh] -= 1
                unk_total[ur] -= 1
                unk_cat[ur, ucat] -= 1
    # Deals that break a clause are dropped.
    K = cl_live.shape[1]
    NA = acc_live.shape[1]
    for r in range(N):
        g = r // samples
        for k in range(K):
            if cl_live[g, k]:
                ok = False
                for j in range(3):
                    if owner[r, cl_cards[g, k, j]] == cl_holder[g, k]:
                        ok = True
                if not ok:
                    alive[r] = False
        for a in range(NA):
            if acc_live[g, a]:
                allenv = True
                for j in range(3):
                    if owner[r, acc_cards[g, a, j]] != E:
                        allenv = False
                if allenv:
                    alive[r] = False


@njit(**KERNEL)
def sample_setup_kernel(
    hb: np.ndarray,
    nb: np.ndarray,
    size: np.ndarray,
    owner0: np.ndarray,
    cap0: np.ndarray,
    env_cap0: np.ndarray,
    unk_total0: np.ndarray,
    unk_cat0: np.ndarray,
    order: np.ndarray,
    allowed: np.ndarray,
    key: np.ndarray,
) -> int:
    """The start of :func:`cluedo_env.agents.knowledge.deal_sampling.sample_deals` from the cells as bitmasks; returns
    the steps
    (the
    most unplaced cards of a game).

    ``hb``, ``nb`` (n, H) int64, ``size`` (n, H) int64. Written: ``owner0`` (n, 21) int8 (the holder of
    each card, -1 unplaced), ``cap0`` (n, H) room left per holder, ``env_cap0`` (n, 3) envelope room per
    category, ``unk_total0`` (n,) / ``unk_cat0`` (n, 3) unplaced cards, ``order`` (n, 21) the cards by
    possible holders (known cards last, counted as 100 more), ties by card (a stable sort), ``allowed``
    (n, H, 21) bool = not ``no``. Scratch ``key`` (21,) int64.
    """
    n, H = hb.shape
    E = H - 1
    steps = 0
    for i in range(n):
        unk = 0
        for k in range(3):
            unk_cat0[i, k] = 0
            env_cap0[i, k] = 0 if hb[i, E] & CAT_MASKS[k] else 1
        for h in range(H):
            cap0[i, h] = max(size[i, h] - bit_count(hb[i, h]), 0)
        for c in range(NUM_CARDS):
            o = -1
            poss = 0
            for h in range(H):
                if o < 0 and (hb[i, h] >> c) & 1:
                    o = h
                free = ((nb[i, h] >> c) & 1) == 0
                allowed[i, h, c] = free
                poss += free
            owner0[i, c] = o
            key[c] = poss + (100 if o >= 0 else 0)
            if o < 0:
                unk += 1
                unk_cat0[i, category_of(c)] += 1
            # insertion into the stable order
            j = c
            while j > 0 and key[order[i, j - 1]] > key[c]:
                order[i, j] = order[i, j - 1]
                j -= 1
            order[i, j] = c
        unk_total0[i] = unk
        steps = max(steps, unk)
    return steps


@njit(**KERNEL)
def deal_weights_kernel(q: np.ndarray, alive: np.ndarray, samples: int, out: np.ndarray) -> None:
    """``out`` (n, samples) = :func:`tests.references.deal_sampling.deal_weights_reference` of the proposal
    probabilities ``q`` (N,) and ``alive`` (N,) bool of n games' deals (N = n * samples): the same operations (the
    smallest live q divided by each live deal's q, summed deal by deal, each divided by the sum)."""
    n = out.shape[0]
    for i in range(n):
        r0 = i * samples
        qmin = np.inf
        for m in range(samples):
            if alive[r0 + m] and q[r0 + m] < qmin:
                qmin = q[r0 + m]
        s = 0.0
        for m in range(samples):
            v = qmin / q[r0 + m] if alive[r0 + m] else 0.0
            out[i, m] = v
            s += v
        for m in range(samples):
            out[i, m] = out[i, m] / s if s > 0 else 0.0


@njit(**KERNEL)
def holder_weights_kernel(owner: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """``out`` (n, H, 21) = the weight ``w`` (n, M) of the deals ``owner`` (n, M, 21) putting each card with
    each holder (unplaced cards counted with holder 0), added deal by deal as ``np.bincount`` adds them."""
    n, M, C = owner.shape
    H = out.shape[1]
    for i in range(n):
        for h in range(H):
            for c in range(C):
                out[i, h, c] = 0.0
        for m in range(M):
            for c in range(C):
                out[i, max(owner[i, m, c], 0), c] += w[i, m]


@njit(**KERNEL)
def triple_weights_kernel(owner: np.ndarray, w: np.ndarray, E: int, out: np.ndarray) -> None:
    """``out`` (n, 324) = the weight ``w`` (n, M) of the deals ``owner`` (n, M, 21) per envelope triple (triple index;
    a category with no envelope card counts as its first card), added deal by deal as ``np.bincount`` adds them."""
    n, M, C = owner.shape
    for i in range(n):
        for t in range(out.shape[1]):
            out[i, t] = 0.0
        for m in range(M):
            s = 0
            for c in range(WEAPON_CARD0):
                if owner[i, m, c] == E:
                    s = c
                    break
            wp = 0
            for c in range(WEAPON_CARD0, ROOM_CARD0):
                if owner[i, m, c] == E:
                    wp = c - WEAPON_CARD0
                    break
            r = 0
            for c in range(ROOM_CARD0, C):
                if owner[i, m, c] == E:
                    r = c - ROOM_CARD0
                    break
            out[i, (s * 6 + wp) * 9 + r] += w[i, m]


# Typed once (cluedo_env.agents.compiled): numba types a named tuple argument in Python on every plain call, and the
# expert
# samples deals at nearly every decision. Every argument is built above with fixed dtypes and layouts.
_sample_deals_call = EntryPoint(sample_deals_kernel)
