"""The deducer's suggestion: which triple, and which room to head for, by the information it buys.

Candidate cards are ranked by uncertainty (:func:`candidates_kernel`); each candidate triple is scored by the
expected information about the envelope (:mod:`cluedo_env.agents.knowledge.suggestion_value`), the best kept with
log-free bounds that skip triples which cannot win (:func:`best_suggestion_kernel`); rooms are valued by the
best suggestion they allow (:func:`room_values_kernel`). :func:`deal_information_kernel` scores suggestions
on sampled deals instead of marginals (the expert).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import INLINE, KERNEL
from cluedo_env.agents.knowledge.facts import FIRST_OF, ROOM_CARDS_ROW, triple_index
from cluedo_env.agents.knowledge.suggestion_value import (
    DECODE_SLACK,
    MARGIN,
    envelope_pre_card,
    h2_scalar,
    h2c,
    triple_bound,
    triple_value,
)
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0


@njit(**INLINE)
def _same_column(prob: np.ndarray, i: int, c: int, d: int) -> bool:
    """Whether cards c and d have the same holder probabilities in game i (all holders): then every score that
    reads only a card's column is the same number for both."""
    for h in range(prob.shape[1]):
        if prob[i, h, c] != prob[i, h, d]:
            return False
    return True


@njit(**INLINE)
def _same_columns(prob: np.ndarray, i: int, cards: np.ndarray, k: int, reps: np.ndarray, row: int) -> None:
    """``reps[row, j]``: the first candidate j' <= j of ``cards[k]`` whose holder probabilities in game i equal
    card j's (all holders)."""
    for j in range(cards.shape[1]):
        reps[row, j] = j
        for jj in range(j):
            if reps[row, jj] == jj and _same_column(prob, i, cards[k, j], cards[k, jj]):
                reps[row, j] = jj
                break


@njit(**KERNEL)
def best_suggestion_kernel(
    prob: np.ndarray,
    cs: np.ndarray,
    cw: np.ndarray,
    cr: np.ndarray,
    order: np.ndarray,
    refute_all: bool,
    legal: np.ndarray,
    noise: np.ndarray,
    out: np.ndarray,
    pre: np.ndarray,
    memo: np.ndarray,
    reps: np.ndarray,
) -> None:
    """The deducer's suggestion: the legal triple of highest envelope information (+ 1e-9 ``noise``), compiled.

    Triples are every (``cs[i, a]``, ``cw[i, b]``, ``cr[i, c]``) (card ids, (n, ks), (n, kw), (n, kr)), triple
    t = (a kw + b) kr + c, scored as :func:`envelope_information_kernel` does (the suggester sees the card);
    ``legal`` (n, 324) bool by triple index; ``noise`` (n, T) uniform numbers. ``out`` (n,) int64: the triple
    index of the first best legal triple, -1 where none is legal. Every array C-contiguous (numba compiles a
    version per layout; the callers keep to this one). Scratch ``pre`` as there, ``memo`` (2 T,)
    float64 and ``reps`` (3, max(ks, kw, kr)) int64: a card whose holder probabilities equal an earlier
    candidate's of its category gives every triple the same score bit for bit (the score reads only that
    column), so such triples are scored once (early in a game many unknown cards look alike). ``memo[T:2 T]``
    keeps, per class of such triples, the log-free bound that stopped one of them: an equal triple whose noise
    cannot lift it over the best either skips the bound's arithmetic (it would stop at the same seat or earlier,
    so the choices are the same, bit for bit; in cards this was two bound computations in three).
    """
    n = prob.shape[0]
    ks, kw, kr = cs.shape[1], cw.shape[1], cr.shape[1]
    T = ks * kw * kr
    HE = 3 * order.shape[1]
    h_lo, h_hi = h2_scalar(0.0), h2_scalar(1.0)
    for i in range(n):
        for a in range(ks):
            envelope_pre_card(prob, i, cs[i, a], order, refute_all, pre, h_lo, h_hi)
        for b in range(kw):
            envelope_pre_card(prob, i, cw[i, b], order, refute_all, pre, h_lo, h_hi)
        for c in range(kr):
            envelope_pre_card(prob, i, cr[i, c], order, refute_all, pre, h_lo, h_hi)
        # rows as int64s, not constants: one compiled version of _same_columns (numba compiles one per constant)
        _same_columns(prob, i, cs, i, reps, np.int64(0))
        _same_columns(prob, i, cw, i, reps, np.int64(1))
        _same_columns(prob, i, cr, i, reps, np.int64(2))
        for t in range(T):
            memo[t] = -2.0  # not scored yet
            memo[T + t] = np.inf  # no bound of the class known yet
        # The information is at most the prior entropy (first-refuter rule), so v + 1e-9 noise <= its bound
        # prior + 1e-9 noise. The legal triple of highest bound is scored first (a high score early lets the
        # bound skip most others); then the rest in order, skipping those that cannot win. The winner is the
        # same as in order alone: the highest score, the first in order among equal ones (``best_t``).
        t_first = -1
        if not refute_all:
            bound_first = 0.0
            t = 0
            for a in range(ks):
                for b in range(kw):
                    for c in range(kr):
                        c0, c1, c2 = cs[i, a], cw[i, b], cr[i, c]
                        if legal[i, triple_index(c0, c1, c2)]:
                            bound = (pre[HE, c0] + pre[HE, c1] + pre[HE, c2]) + 1e-9 * noise[i, t]
                            if t_first < 0 or bound > bound_first:
                                t_first = t
                                bound_first = bound
                        t += 1
        best = -1
        best_t = -1
        top = 0.0
        if t_first >= 0:
            c = t_first % kr
            b = (t_first // kr) % kw
            a = t_first // (kr * kw)
            c0, c1, c2 = cs[i, a], cw[i, b], cr[i, c]
            v = triple_value(prob, i, (c0, c1, c2), order, refute_all, pre, (h_lo, h_hi), -1.0, 0.0)
            memo[(reps[0, a] * kw + reps[1, b]) * kr + reps[2, c]] = v
            top = v + 1e-9 * noise[i, t_first]
            best = triple_index(c0, c1, c2)
            best_t = t_first
        t = 0
        for a in range(ks):
            c0 = cs[i, a]
            for b in range(kw):
                c1 = cw[i, b]
                for c in range(kr):
                    c2 = cr[i, c]
                    x = triple_index(c0, c1, c2)
                    if legal[i, x] and t != t_first:
                        skip = False
                        if best >= 0 and not refute_all:
                            bound = (pre[HE, c0] + pre[HE, c1] + pre[HE, c2]) + 1e-9 * noise[i, t]
                            skip = bound < top or (bound == top and t > best_t)
                        extra = 1e-9 * noise[i, t]
                        m = (reps[0, a] * kw + reps[1, b]) * kr + reps[2, c]
                        if not skip and memo[m] < 0.0 and best >= 0 and not refute_all:  # a log-free bound first
                            skip = memo[T + m] + extra < top - MARGIN  # the bound that stopped an equal triple
                            if not skip:
                                ub = triple_bound(prob, i, (c0, c1, c2), order, pre, (h_lo, h_hi), top - MARGIN, extra)
                                skip = ub + extra < top - MARGIN
                                if ub < 0.0:  # stopped by the bound B (ub = -1 - B): kept, decoded a hair high
                                    memo[T + m] = -1.0 - ub + DECODE_SLACK
                        if not skip:
                            if memo[m] >= 0.0:  # the same score as a triple already scored
                                v = memo[m]
                            else:
                                floor = top if best >= 0 else -1.0
                                v = triple_value(prob, i, (c0, c1, c2), order, refute_all, pre, (h_lo, h_hi), floor,
                                                 extra)  # fmt: skip
                                if v >= 0.0:  # exact (-1: stopped early, it cannot win)
                                    memo[m] = v
                            v = v + extra
                            if best < 0 or v > top or (v == top and t < best_t):
                                best = x
                                top = v
                                best_t = t
                    t += 1
        out[i] = best


@njit(**KERNEL)
def room_values_kernel(
    prob: np.ndarray, cs: np.ndarray, cw: np.ndarray, order: np.ndarray, refute_all: bool, out: np.ndarray,
    pre: np.ndarray, reps: np.ndarray,
) -> None:  # fmt: skip
    """(n, 9) ``out``: per room r, the best envelope information of (``cs[i, a]``, ``cw[i, b]``, room r) over the
    pairs (card ids (n, ks), (n, kw), C-contiguous as every array here: one compiled version), scored as
    :func:`envelope_information_kernel` does. Scratch ``pre`` as there,
    ``reps`` (3, max(ks, kw, 9)) int64.

    Cards whose holder probabilities are equal give equal scores bit for bit (a score reads only the columns of
    its three cards, :func:`best_suggestion_kernel`), so a room whose column equals an earlier room's gets that
    room's value, and a pair of cards equal to an earlier pair is not scored again: the maximum is the same.
    Early in a game most rooms look alike (unknown, or held by this seat), so few rooms are scored.
    """
    n = prob.shape[0]
    ks, kw = cs.shape[1], cw.shape[1]
    HE = 3 * order.shape[1]
    h_lo, h_hi = h2_scalar(0.0), h2_scalar(1.0)
    for i in range(n):
        _same_columns(prob, i, cs, i, reps, np.int64(0))  # (int64 rows: as in best_suggestion_kernel)
        _same_columns(prob, i, cw, i, reps, np.int64(1))
        _same_columns(prob, i, ROOM_CARDS_ROW, np.int64(0), reps, np.int64(2))
        for a in range(ks):
            if reps[0, a] == a:
                envelope_pre_card(prob, i, cs[i, a], order, refute_all, pre, h_lo, h_hi)
        for b in range(kw):
            if reps[1, b] == b:
                envelope_pre_card(prob, i, cw[i, b], order, refute_all, pre, h_lo, h_hi)
        for r in range(9):
            if reps[2, r] == r:
                envelope_pre_card(prob, i, ROOM_CARD0 + r, order, refute_all, pre, h_lo, h_hi)
        # The pair of highest prior entropy first (its bound is the highest in every room): a high value early
        # lets the bound skip the others. The value is the maximum, whatever the order. (The first such pair
        # in order is a pair of representatives: an equal card's prior entropy is the same number.)
        a0, b0 = 0, 0
        for a in range(ks):
            for b in range(kw):
                if reps[0, a] != a or reps[1, b] != b:
                    continue
                if pre[HE, cs[i, a]] + pre[HE, cw[i, b]] > pre[HE, cs[i, a0]] + pre[HE, cw[i, b0]]:
                    a0, b0 = a, b
        for r in range(9):
            if reps[2, r] != r:  # the same column as an earlier room: the same value
                out[i, r] = out[i, reps[2, r]]
                continue
            room = ROOM_CARD0 + r
            best = triple_value(prob, i, (cs[i, a0], cw[i, b0], room), order, refute_all, pre, (h_lo, h_hi), -1.0, 0.0)
            for a in range(ks):
                if reps[0, a] != a:
                    continue
                for b in range(kw):
                    if (a == a0 and b == b0) or reps[1, b] != b:
                        continue
                    c0, c1, c2 = cs[i, a], cw[i, b], ROOM_CARD0 + r
                    if not refute_all and pre[HE, c0] + pre[HE, c1] + pre[HE, c2] <= best:
                        continue  # at most its prior entropy: cannot beat the best (first-refuter rule)
                    if not refute_all:  # a log-free upper bound first
                        ub = triple_bound(prob, i, (c0, c1, c2), order, pre, (h_lo, h_hi), best - MARGIN, 0.0)
                        if ub < best - MARGIN:
                            continue
                    v = triple_value(prob, i, (c0, c1, c2), order, refute_all, pre, (h_lo, h_hi), best, 0.0)
                    if v > best:
                        best = v
            out[i, r] = best


@njit(**KERNEL)
def candidates_kernel(
    prob: np.ndarray, seat: int, k: int, noise: np.ndarray, blank_noise: np.ndarray, out: np.ndarray, u: np.ndarray,
    categories: int = 3,
) -> None:  # fmt: skip
    """:func:`tests.references.deducer.candidates_reference` into ``out`` (3, n, k + 1) int64 card ids: category by
    category, so each category's rows ``out[cat]`` are C-contiguous, the layout the suggestion kernels take.

    ``prob`` (n, H, 21) float64; ``noise`` (n * 21,) and ``blank_noise`` (n * 21,) the uniform numbers the
    reference draws, in its order: ``noise`` row by row, ``blank_noise`` category by category (n x 6 suspects, then
    n x 6 weapons, then n x 9 rooms, each row by row). Per category: the ``k`` cards of highest
    uncertainty ``h2(e) + 0.1 * (entropy of the holder) + 1e-6 * noise``, highest first, then the
    blank (a card nobody can show) of highest ``blank_noise``, or the category's first card if none.
    Scratch ``u`` (21,) float64. ``categories`` = 2: the suspects and weapons only (the room values score every
    room), ``out[2]`` is not written; the numbers are drawn all the same, so the generator moves as the
    reference's.
    """
    n, H, C = prob.shape
    E = H - 1
    h_lo, h_hi = h2_scalar(0.0), h2_scalar(1.0)
    last = FIRST_OF[categories]
    for i in range(n):
        for c in range(last):
            u[c] = _uncertainty(prob, i, c, E, h_lo, h_hi) + 1e-6 * noise[i * C + c]
        for cat in range(categories):
            lo = 0 if cat == 0 else (WEAPON_CARD0 if cat == 1 else ROOM_CARD0)
            hi = WEAPON_CARD0 if cat == 0 else (ROOM_CARD0 if cat == 1 else NUM_CARDS)
            block = n * lo + i * (hi - lo) - lo  # this row's numbers of the category's block, by card id
            best_b = lo
            top_b = -1.0
            for c in range(lo, hi):
                blank = prob[i, seat, c] > 0.999 or prob[i, E, c] > 0.999
                v = blank_noise[block + c] if blank else -1.0
                if v > top_b:
                    top_b = v
                    best_b = c
            out[cat, i, k] = best_b
            # the k most uncertain cards, highest first (a card once taken is skipped)
            for j in range(k):
                best = -1
                top = 0.0
                for c in range(lo, hi):
                    taken = False
                    for jj in range(j):
                        if out[cat, i, jj] == c:
                            taken = True
                    if taken:
                        continue
                    v = u[c]
                    if best < 0 or v > top:
                        top = v
                        best = c
                out[cat, i, j] = best


@njit(**INLINE)
def _entropy_term(p: float) -> float:
    p = min(max(p, 0.0), 1.0)
    if p == 1.0:  # -1 * log2(1) = -0.0: the same in every sum (of terms >= 0) it goes into
        return 0.0
    return -p * np.log2(p) if p > 1e-12 else 0.0


@njit(**INLINE)
def _uncertainty(prob: np.ndarray, i: int, c: int, E: int, h_lo: float, h_hi: float) -> float:
    """h2(e) + 0.1 * the entropy of card c's holder, as :func:`tests.references.deducer.candidates_reference`."""
    tot = _entropy_term(prob[i, 0, c])
    for h in range(1, E + 1):
        tot += _entropy_term(prob[i, h, c])
    return h2c(prob[i, E, c], h_lo, h_hi) + 0.1 * tot


@njit(**INLINE)
def _ent(p: float) -> float:
    """:func:`cluedo_env.agents.players.deducer._entropy_terms` of one probability."""
    p = min(max(p, 0.0), 1.0)
    return -p * np.log2(p) if p > 1e-12 else 0.0


@njit(**KERNEL)
def deal_information_kernel(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, out: np.ndarray
) -> None:
    """:func:`tests.references.deducer.information_reference` into ``out`` (n, T): the expected information (bits) about
    the whole deal of suggesting each triple of ``cards`` (n, T, 3), from ``prob`` (n, H, 21) and the seats asked
    ``order`` (n, K). The same model and terms; sums in another order (matrix products of the reference), so
    the values agree to about 1e-15."""
    n, T, _ = cards.shape
    K = order.shape[1]
    for i in range(n):
        for t in range(T):
            c0, c1, c2 = cards[i, t, 0], cards[i, t, 1], cards[i, t, 2]
            cs0 = 0.0
            cs1 = 0.0
            cs2 = 0.0
            ent_shown = 0.0
            cond_sum = 0.0
            acc = 0.0
            for k in range(K):
                s = order[i, k]
                y0, y1, y2 = prob[i, s, c0], prob[i, s, c1], prob[i, s, c2]
                if refute_all:
                    n0, n1, n2 = 1.0 - y0, 1.0 - y1, 1.0 - y2
                else:
                    cs0 += y0
                    cs1 += y1
                    cs2 += y2
                    n0 = min(max(1.0 - (cs0 - y0) - y0, 0.0), 1.0)
                    n1 = min(max(1.0 - (cs1 - y1) - y1, 0.0), 1.0)
                    n2 = min(max(1.0 - (cs2 - y2) - y2, 0.0), 1.0)
                sh0 = 0.0
                sh1 = 0.0
                sh2 = 0.0
                cond = 0.0
                for m in range(1, 8):
                    b0, b1, b2 = m & 1, (m >> 1) & 1, (m >> 2) & 1
                    ps = (y2 if b2 else n2) * (y1 if b1 else n1) * (y0 if b0 else n0)
                    size = b0 + b1 + b2
                    share = ps / size
                    if b0:
                        sh0 += share
                    if b1:
                        sh1 += share
                    if b2:
                        sh2 += share
                    cond += ps * (0.0 if size == 1 else (1.0 if size == 2 else np.log2(3.0)))
                if refute_all:
                    acc += _ent(n0 * n1 * n2) + (_ent(sh0) + _ent(sh1) + _ent(sh2)) - cond
                else:
                    ent_shown += _ent(sh0) + _ent(sh1) + _ent(sh2)
                    cond_sum += cond
            if refute_all:
                out[i, t] = acc
            else:
                none = min(max(1.0 - cs0, 0.0), 1.0) * min(max(1.0 - cs1, 0.0), 1.0) * min(max(1.0 - cs2, 0.0), 1.0)
                out[i, t] = _ent(none) + ent_shown - cond_sum
