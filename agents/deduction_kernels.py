"""Compiled kernels for the hot parts of the rule-based players: propagation, marginals, suggestion values, the
movement choice on the empty board's tables, and the deducer's decisions in one call.

Why: profiling four deducers (``scripts/bench_players.py --profile``) showed the time going to
numpy calls over small per-game arrays: each rule of :func:`agents.deduction.fixpoint_bits`
is a dozen gathers and reductions per pass, and every suggestion score builds (n, T, K, 3)
temporaries. A numba loop over games does the same arithmetic as plain scalar code with no
temporaries, as the engine's kernels do (:mod:`cluedo_env.engine.kernels`, whose conventions
these follow: ``KERNEL`` options, no allocation inside a kernel, output arrays passed in).

Each kernel computes *exactly* what its numpy reference computes, in the same order of
operations, so the players' choices do not change: the references stay next to the callers
(:func:`agents.deduction.fixpoint_bits_reference`, :func:`agents.deal_sampling.marginals_reference`,
:func:`agents.suggestion_value.envelope_information_reference`) as the readable statement of
the rules and are used only by the tests (``tests/test_deduction_kernels.py``), which compare
both on random positions. numpy sums an axis shorter than 9 from left to right; so do the kernels.

All code of these kernels lives in this file (numba's cache checks only this file's timestamp);
the card constants are literals here, checked against :mod:`cluedo_env.rules.cards` on import.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.np.random.random_methods import random_interval

from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

KERNEL = {"cache": True, "nogil": True, "_nrt": False, "error_model": "numpy"}
INLINE = {**KERNEL, "inline": "always"}

_C = 21  # cards
_FULL = (1 << 21) - 1
_W0, _R0 = 6, 12  # first weapon, first room card
_ROOM_CARDS = np.arange(_R0, NUM_CARDS).reshape(1, NUM_CARDS - _R0)  # (1, 9) the room cards, as a candidate row
_FIRST_OF = (0, _W0, _R0, _C)  # first card of each category, then the end
_CAT = ((1 << 6) - 1, ((1 << 12) - 1) ^ ((1 << 6) - 1), _FULL ^ ((1 << 12) - 1))  # bits of each category
_CATEGORY_SIZE = (6.0, 6.0, 9.0)  # cards per category, as floats (agents.refutation, agents.refuter_model check it)
_TINY = 1e-12
# Slack of the log-free upper bounds (_h2_or_below): a triple is skipped only if its bound loses by more than
# this, far above the rounding of the ~30 terms summed (~1e-15), so the best triple is the one the exact
# scores give.
_MARGIN = 1e-12
# A bound B returned as -1 - B and decoded comes back within ~2e-15 (B < 8): kept this much higher, so a kept
# bound is never below the one computed.
_DECODE_SLACK = 1e-14
assert (_C, _W0, _R0) == (NUM_CARDS, WEAPON_CARD0, ROOM_CARD0)
_REFUTE_PHASE, _SHOW0, _ACCUSE0 = 3, 525, 546  # the refutation phase, the first SHOW and ACCUSE actions
_SUGGEST0 = 201  # the first SUGGEST action
_ROLL, _PASSAGE, _STAY, _MOVE0 = 0, 1, 2, 4  # the turn's first actions, the first MOVE
_START_PHASE, _MOVE_PHASE, _SUGGEST_PHASE, _POST_PHASE, _END_TURN = 0, 1, 2, 4, 3
assert (_REFUTE_PHASE, _SHOW0, _ACCUSE0, _SUGGEST0) == (A.REFUTE, A.SHOW0, A.ACCUSE0, A.SUGGEST0)
assert (_ROLL, _PASSAGE, _STAY, _MOVE0) == (A.ROLL, A.PASSAGE, A.STAY, A.MOVE0)
assert (_START_PHASE, _MOVE_PHASE, _SUGGEST_PHASE, _POST_PHASE, _END_TURN) == (A.START, A.MOVE, A.SUGGEST, A.POST,
                                                                              A.END_TURN)  # fmt: skip


@njit(**INLINE)
def _triple(c0: int, c1: int, c2: int) -> int:
    """Triple index of a suspect, a weapon and a room card id (:func:`cluedo_env.rules.actions.cards_triple`)."""
    return (c0 * 6 + (c1 - _W0)) * 9 + (c2 - _R0)


@njit(**INLINE)
def _room_of(t: int) -> int:
    """The room (0..8) a triple index names (:func:`cluedo_env.rules.actions.triple_of`'s last part)."""
    return t % 9


assert all(_room_of.py_func(t) == A.triple_of(t)[2] for t in range(324))  # the engine's decoding


@njit(**INLINE)
def _envelope_card(has: np.ndarray, g: int, E: int, k: int) -> int:
    """The first card of category k that ``has`` (B, H, 21) puts in the envelope (holder E) in game g, else -1."""
    for c in range(_FIRST_OF[k], _FIRST_OF[k + 1]):
        if has[g, E, c]:
            return c
    return -1


@njit(**INLINE)
def _solved(has: np.ndarray, bad: np.ndarray, g: int, E: int) -> bool:
    """Game g's notebook proves the solution: three envelope cards and no contradiction (:meth:`agents.notebook.
    Notebook.solved`, the statement)."""
    count = 0
    for c in range(_C):
        count += has[g, E, c]
    return count == 3 and not bad[g]


@njit(**INLINE)
def _popcount(x: int) -> int:
    """Set bits of a card mask (x < 2**24: int64 arithmetic never overflows)."""
    x = x - ((x >> 1) & 0x555555)
    x = (x & 0x333333) + ((x >> 2) & 0x333333)
    x = (x + (x >> 4)) & 0x0F0F0F
    return ((x * 0x010101) >> 16) & 0xFF


# ---------------------------------------------------------------------------------------------- propagation
@njit(**KERNEL)
def fixpoint_kernel(
    hb: np.ndarray,
    nb: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_mask: np.ndarray,
    cl_live: np.ndarray,
    acc_mask: np.ndarray,
    acc_live: np.ndarray,
    max_iter: int,
    bad: np.ndarray,
    snap: np.ndarray,
    unit: np.ndarray,
) -> None:
    """:func:`agents.deduction.fixpoint_bits` game by game: ``hb``, ``nb`` (n, H) int64, ``cl_live`` (n, K),
    ``acc_live`` (n, A) bool in place; ``bad`` (n,) bool set where contradictory.

    ``size`` (n, H) int64, ``cl_holder`` (n, K) int64, ``cl_mask`` (n, K) / ``acc_mask`` (n, A) int64.
    Scratch: ``snap`` (2, H) int64, ``unit`` (K,) int64. Each game runs the numpy version's passes
    (every rule reads the state as the previous rule left it, each rule's updates use one snapshot)
    until its own cells stop changing, which is what the batched loop computes for it.
    """
    n, H = hb.shape
    E = H - 1
    K = cl_live.shape[1]
    NA = acc_live.shape[1]
    for i in range(n):
        b = False
        for _ in range(max_iter):
            for h in range(H):
                snap[0, h] = hb[i, h]
                snap[1, h] = nb[i, h]
            # 1, 2: each card in exactly one place.
            located = 0
            for h in range(H):
                located |= hb[i, h]
            for h in range(H):
                nb[i, h] |= located & ~hb[i, h]
            once = 0  # the cards some holder may hold
            twice = 0  # those two holders may hold
            for h in range(H):
                x = ~nb[i, h] & _FULL
                twice |= once & x
                once |= x
            if once != _FULL:  # a card nobody may hold
                b = True
            single = once & ~twice
            for h in range(H):
                hb[i, h] |= ~nb[i, h] & _FULL & single
            # 5: one envelope card per category.
            add_n = 0
            add_h = 0
            for k in range(3):
                env_h = hb[i, E] & _CAT[k]
                env_p = ~nb[i, E] & _CAT[k]
                nh = _popcount(env_h)
                npo = _popcount(env_p)
                if nh > 1 or npo == 0:
                    b = True
                if nh >= 1:
                    add_n |= _CAT[k] & ~env_h
                if npo == 1:
                    add_h |= env_p
            nb[i, E] |= add_n
            hb[i, E] |= add_h
            # 3, 4: exact hand sizes.
            for h in range(H):
                nh = _popcount(hb[i, h])
                nhu = nh + _popcount(~(hb[i, h] | nb[i, h]) & _FULL)
                s = size[i, h]
                if nh > s or nhu < s:
                    b = True
                if nh >= s:
                    nb[i, h] |= ~hb[i, h] & _FULL
                if nhu <= s:
                    hb[i, h] |= ~nb[i, h] & _FULL
            # 6: "holds at least one of" clauses (all read the cells before any unit clause is applied).
            for k in range(K):
                unit[k] = 0
                if cl_live[i, k]:
                    h = cl_holder[i, k]
                    if cl_mask[i, k] & hb[i, h]:
                        cl_live[i, k] = False
                    else:
                        cand = cl_mask[i, k] & ~nb[i, h]
                        nc = _popcount(cand)
                        if nc == 0:
                            b = True
                        elif nc == 1:
                            unit[k] = cand
            for k in range(K):
                if unit[k]:
                    hb[i, cl_holder[i, k]] |= unit[k]
            # 7: "the envelope lacks at least one of" clauses.
            env_h = hb[i, E]
            add_n = 0
            for a in range(NA):
                if acc_live[i, a]:
                    if acc_mask[i, a] & nb[i, E]:
                        acc_live[i, a] = False
                    else:
                        n3 = _popcount(acc_mask[i, a] & env_h)
                        if n3 == 3:
                            b = True
                        elif n3 == 2:
                            add_n |= acc_mask[i, a] & ~env_h
            nb[i, E] |= add_n
            same = True
            for h in range(H):
                if hb[i, h] & nb[i, h]:
                    b = True
                if hb[i, h] != snap[0, h] or nb[i, h] != snap[1, h]:
                    same = False
            if same:
                break
        # A card in two places.
        seen = 0
        for h in range(H):
            if hb[i, h] & seen:
                b = True
            seen |= hb[i, h]
        bad[i] = bad[i] or b


# ---------------------------------------------------------------------------------------------- envelope search
@njit(**INLINE)
def _search_expand(
    q: int, d: int, qg: np.ndarray, size: np.ndarray, cl_holder: np.ndarray, cl_mask: np.ndarray,
    cl_live: np.ndarray, acc_mask: np.ndarray, acc_live: np.ndarray, ch: np.ndarray, cn: np.ndarray,
    sz1: np.ndarray, clh1: np.ndarray, clm1: np.ndarray, cll1: np.ndarray, accm1: np.ndarray, accl1: np.ndarray,
    bad1: np.ndarray, snap: np.ndarray, unit: np.ndarray, st_h: np.ndarray, st_n: np.ndarray, br_card: np.ndarray,
    tried: np.ndarray, depth: np.ndarray, witness: np.ndarray, witnessed: np.ndarray,
) -> None:  # fmt: skip
    """The ``expand`` of :func:`agents.deduction.search_envelope_reference` for one child (``ch``, ``cn`` (1, H)
    int64, propagated in place) of query q, put at depth d: closed by :func:`fixpoint_kernel` on its game's clauses;
    a complete consistent deal is registered as the witness of each of its envelope cards, an incomplete one stored
    with the unplaced card of fewest possible holders to branch on next."""
    g = qg[q]
    H = ch.shape[1]
    E = H - 1
    for h in range(H):
        sz1[0, h] = size[g, h]
    for k in range(cl_live.shape[1]):
        clh1[0, k] = cl_holder[g, k]
        clm1[0, k] = cl_mask[g, k]
        cll1[0, k] = cl_live[g, k]
    for a in range(acc_live.shape[1]):
        accm1[0, a] = acc_mask[g, a]
        accl1[0, a] = acc_live[g, a]
    bad1[0] = False
    fixpoint_kernel(ch, cn, sz1, clh1, clm1, cll1, accm1, accl1, 100, bad1, snap, unit)
    if bad1[0]:
        return
    located = 0
    for h in range(H):
        located |= ch[0, h]
    if located == _FULL:  # a consistent deal: it witnesses every card it puts in the envelope
        for c in range(_C):
            if (ch[0, E] >> c) & 1:
                for c2 in range(_C):
                    for h in range(H):
                        if (ch[0, h] >> c2) & 1:
                            witness[g, c, c2] = h
                            break
                witnessed[g, c] = True
        return
    for h in range(H):
        st_h[q, d, h] = ch[0, h]
        st_n[q, d, h] = cn[0, h]
        tried[q, d, h] = False
    best, top = 0, 1 << 30
    for c in range(_C):  # the unplaced card with the fewest possible holders (the first of those)
        if (located >> c) & 1:
            m = 99
        else:
            m = 0
            for h in range(H):
                m += 1 - ((cn[0, h] >> c) & 1)
        if m < top:
            top = m
            best = c
    br_card[q, d] = best
    depth[q] = d


@njit(**KERNEL)
def search_envelope_kernel(
    hb: np.ndarray, nb: np.ndarray, size: np.ndarray, cl_holder: np.ndarray, cl_mask: np.ndarray,
    cl_live: np.ndarray, acc_mask: np.ndarray, acc_live: np.ndarray, qg: np.ndarray, qc: np.ndarray,
    max_rounds: int, rng: np.random.Generator, witness: np.ndarray, witnessed: np.ndarray, status: np.ndarray,
    st_h: np.ndarray, st_n: np.ndarray, br_card: np.ndarray, tried: np.ndarray, depth: np.ndarray, go: np.ndarray,
    ch: np.ndarray, cn: np.ndarray, sz1: np.ndarray, clh1: np.ndarray, clm1: np.ndarray, cll1: np.ndarray,
    accm1: np.ndarray, accl1: np.ndarray, bad1: np.ndarray, snap: np.ndarray, unit: np.ndarray, key: np.ndarray,
) -> None:  # fmt: skip
    """:func:`agents.deduction.search_envelope_reference` (the numpy statement) query by query within each round:
    the same nodes, the same random numbers from ``rng`` (a round draws H numbers per query that branches, queries
    in order), the same witnesses (``witness`` (n, 21, 21) int8, ``witnessed`` (n, 21) bool) and the same proofs
    (``nb`` (n, H) int64 in place). The facts ``hb``, ``nb``, ``size``, ``cl_holder``, ``cl_mask``, ``cl_live``,
    ``acc_mask``, ``acc_live`` (n, ...) of :class:`agents.facts.FactBits` (int64 holders); queries ``qg``, ``qc``
    (Q,) int64 game and card. Written: ``status`` (Q,) int8 (1 possible, -1 impossible, 0 open). Scratch: the
    search state ``st_h``, ``st_n`` (Q, 22, H) int64, ``br_card`` (Q, 22) int64, ``tried`` (Q, 22, H) bool,
    ``depth``, ``go`` (Q,) int64; one node ``ch``, ``cn`` (1, H) int64; one game's facts ``sz1`` (1, H),
    ``clh1``, ``clm1`` (1, K) int64, ``cll1`` (1, K) bool, ``accm1`` (1, A) int64, ``accl1`` (1, A) bool, ``bad1``
    (1,) bool, ``snap`` (2, H) int64, ``unit`` (K,) int64 (:func:`fixpoint_kernel`'s); ``key`` (H,) float64."""
    Q = qg.shape[0]
    H = hb.shape[1]
    E = H - 1
    for q in range(Q):
        status[q] = 0
        depth[q] = -1
    for q in range(Q):  # the roots: the queried card put in the envelope
        for h in range(H):
            ch[0, h] = hb[qg[q], h]
            cn[0, h] = nb[qg[q], h]
        ch[0, E] |= 1 << qc[q]
        _search_expand(q, 0, qg, size, cl_holder, cl_mask, cl_live, acc_mask, acc_live, ch, cn, sz1, clh1, clm1,
                       cll1, accm1, accl1, bad1, snap, unit, st_h, st_n, br_card, tried, depth, witness,
                       witnessed)  # fmt: skip
    for _ in range(max_rounds):
        n_run = 0
        for q in range(Q):
            if status[q] == 0 and witnessed[qg[q], qc[q]]:
                status[q] = 1
            if status[q] == 0 and depth[q] < 0:
                status[q] = -1
            n_run += status[q] == 0
        if n_run == 0:
            break
        n_go = 0
        for q in range(Q):  # every holder of the branching card tried: back up
            if status[q] != 0:
                continue
            d = depth[q]
            card = br_card[q, d]
            left = False
            for h in range(H):
                if ((st_n[q, d, h] >> card) & 1) == 0 and not tried[q, d, h]:
                    left = True
            if left:
                go[n_go] = q
                n_go += 1
            else:
                depth[q] = d - 1
        for j in range(n_go):  # a holder at random, weighted by its open slots (+ 1/2), then the child
            q = go[j]
            d = depth[q]
            card = br_card[q, d]
            for h in range(H):
                placed = _popcount(st_h[q, d, h])
                slots = max(size[qg[q], h] - placed, 0) + 0.5
                u = rng.random()
                free = ((st_n[q, d, h] >> card) & 1) == 0 and not tried[q, d, h]
                key[h] = slots * u if free else -1.0
            pick = 0
            for h in range(1, H):
                if key[h] > key[pick]:
                    pick = h
            tried[q, d, pick] = True
            for h in range(H):
                ch[0, h] = st_h[q, d, h]
                cn[0, h] = st_n[q, d, h]
            ch[0, pick] |= 1 << card
            _search_expand(q, d + 1, qg, size, cl_holder, cl_mask, cl_live, acc_mask, acc_live, ch, cn, sz1, clh1,
                           clm1, cll1, accm1, accl1, bad1, snap, unit, st_h, st_n, br_card, tried, depth, witness,
                           witnessed)  # fmt: skip
    for q in range(Q):
        if status[q] == 0 and witnessed[qg[q], qc[q]]:
            status[q] = 1
        if status[q] == 0 and depth[q] < 0:
            status[q] = -1
        if status[q] == -1:  # no consistent deal puts the card in the envelope
            nb[qg[q], E] |= 1 << qc[q]


# ---------------------------------------------------------------------------------------------- marginals
@njit(**INLINE)
def _pack_cells(has: np.ndarray, no: np.ndarray, g: int, hb: np.ndarray, nb: np.ndarray, i: int) -> None:
    """Row i of ``hb``, ``nb`` (n, H) int64: game g of ``has``, ``no`` (B, H, 21) bool as bitmasks."""
    for h in range(has.shape[1]):
        x = 0
        y = 0
        for c in range(_C):  # (no branches: the loop vectorizes)
            x |= np.int64(has[g, h, c]) << c
            y |= np.int64(no[g, h, c]) << c
        hb[i, h] = x
        nb[i, h] = y


@njit(**INLINE)
def _marginal_weights(hb: np.ndarray, nb: np.ndarray, i: int, size: np.ndarray, g: int, w: np.ndarray) -> None:
    """The unnormalised weights ``w`` (H, 21) of :func:`agents.deal_sampling.marginals_reference` for the facts in
    row i of ``hb``, ``nb`` (n, H) int64, hand sizes row g of ``size`` (B, H) int64: per seat, its free slots over
    its candidate cards; per envelope category, 1 / its candidates while the category is open. Bits are counted,
    not cells: several times faster, the same numbers."""
    H = hb.shape[1]
    E = H - 1
    for h in range(E):
        cand_bits = ~hb[i, h] & ~nb[i, h] & _FULL
        slots = float(max(size[g, h] - _popcount(hb[i, h]), 0))
        wh = slots / max(_popcount(cand_bits), 1)
        for c in range(_C):
            w[h, c] = wh if (cand_bits >> c) & 1 else 0.0
    for k in range(3):
        cand_bits = ~hb[i, E] & ~nb[i, E] & _CAT[k]
        x = 1.0 / max(_popcount(cand_bits), 1) if hb[i, E] & _CAT[k] == 0 else 0.0  # 0: the category is known
        for c in range(_FIRST_OF[k], _FIRST_OF[k + 1]):
            w[E, c] = x if (cand_bits >> c) & 1 else 0.0


@njit(**INLINE)
def _card_total(w: np.ndarray, c: int) -> float:
    """The weights ``w`` (H, 21) of card c summed over its holders, in holder order (as numpy sums them)."""
    total = w[0, c]
    for h in range(1, w.shape[0]):
        total += w[h, c]
    return total


@njit(**INLINE)
def _marginal(held: bool, weight: float, total: float) -> float:
    """One cell's probability: 1 where the holder is known to hold the card, else its share of the card's weights."""
    if held:
        return 1.0
    return weight / total if total > 0 else 0.0


@njit(**INLINE)
def _marginals_bits(
    hb: np.ndarray, nb: np.ndarray, i: int, size: np.ndarray, g: int, out: np.ndarray, j: int, w: np.ndarray
) -> None:
    """Row ``j`` of ``out`` (n, H, 21) float64: :func:`agents.deal_sampling.marginals_reference` of the facts in
    row ``i`` of ``hb``, ``nb`` (n, H) int64, hand sizes row ``g`` of ``size`` (B, H) int64; scratch ``w``
    (H, 21) float64."""
    _marginal_weights(hb, nb, i, size, g, w)
    for c in range(_C):
        total = _card_total(w, c)
        for h in range(hb.shape[1]):
            out[j, h, c] = _marginal((hb[i, h] >> c) & 1 == 1, w[h, c], total)


@njit(**KERNEL)
def marginals_kernel(
    has: np.ndarray, no: np.ndarray, size: np.ndarray, idx: np.ndarray, out: np.ndarray, w: np.ndarray,
    hb: np.ndarray, nb: np.ndarray,
) -> None:  # fmt: skip
    """:func:`agents.deal_sampling.marginals_reference` into ``out`` (n, H, 21) float64.

    ``has``, ``no`` (B, H, 21) bool, ``size`` (B, H) int64 of which rows ``idx`` (n,) are read (row i of
    ``out`` is game ``idx[i]``); scratch ``w`` (H, 21) float64, ``hb``, ``nb`` (1, H) int64 (a game's facts as
    bitmasks, :func:`_marginals_bits`).
    """
    for i in range(idx.shape[0]):
        _pack_cells(has, no, idx[i], hb, nb, 0)
        _marginals_bits(hb, nb, 0, size, idx[i], out, i, w)


# ---------------------------------------------------------------------------------------------- suggestion value
@njit(**INLINE)
def _h2(p: float) -> float:
    p = min(max(p, _TINY), 1.0 - _TINY)
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


@njit(**INLINE)
def _h2c(p: float, h_lo: float, h_hi: float) -> float:
    """:func:`_h2` with its two clamped values passed in (``_h2(0)``, ``_h2(1)``): the same number, without
    the logarithms where the argument is clamped (a card known to be in or out of the envelope)."""
    if p <= _TINY:
        return h_lo
    if p >= 1.0 - _TINY:
        return h_hi
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


# Binary entropy at the nodes k / _H2_SEGMENTS (k = 0.._H2_SEGMENTS), for the log-free lower bound below.
_H2_SEGMENTS = 64
_H2_NODES = np.zeros(_H2_SEGMENTS + 1)
_q = np.arange(1, _H2_SEGMENTS) / _H2_SEGMENTS
_H2_NODES[1:-1] = -(_q * np.log2(_q) + (1.0 - _q) * np.log2(1.0 - _q))
del _q


@njit(**INLINE)
def _h2_or_below(p: float, h_lo: float, h_hi: float, below: bool) -> float:
    """:func:`_h2c`, or with ``below`` a lower bound of it without logarithms: the chord of the binary entropy
    between the two nodes k / 64 around ``p`` (the entropy is concave, so every chord lies below it; at most
    ~2e-4 bits below mid-range, ~0.01 in the outer segments), 0 where :func:`_h2c` clamps."""
    if not below:
        return _h2c(p, h_lo, h_hi)
    if p <= _TINY or p >= 1.0 - _TINY:
        return 0.0
    x = p * _H2_SEGMENTS
    k = min(int(x), _H2_SEGMENTS - 1)
    return _H2_NODES[k] + (_H2_NODES[k + 1] - _H2_NODES[k]) * (x - k)


@njit(**INLINE)
def _seat_answers(
    a: float, b: float, c: float, A_: float, B_: float, C_: float, r0: float, r1: float, r2: float, see_card: bool,
    h_lo: float, h_hi: float, below: bool = False,
) -> float:  # fmt: skip
    """One asked seat's term of :func:`agents.suggestion_value._after_seat_answers` (same operations):
    q = (a, b, c), other = (A_, B_, C_), r = e / max(other, TINY).

    An answer of probability 0 adds exactly 0 (its entropies are finite), so it is skipped: same result.
    With ``below``, every entropy is :func:`_h2_or_below`'s log-free lower bound: the term is then at
    most the exact one (every entropy has a non-negative weight).
    """
    s0, s1, s2 = a * B_ * C_, A_ * b * C_, A_ * B_ * c
    s01, s02, s12 = a * b * C_, a * B_ * c, A_ * b * c
    s012 = a * b * c
    if not see_card:
        total = s0 + s1 + s2 + s01 + s02 + s12 + s012
        if total == 0.0:
            return 0.0
        den = max(total, _TINY)
        h0 = _h2_or_below(r0 * (s1 + s2 + s12) / den, h_lo, h_hi, below)
        h1 = _h2_or_below(r1 * (s0 + s2 + s02) / den, h_lo, h_hi, below)
        h2 = _h2_or_below(r2 * (s0 + s1 + s01) / den, h_lo, h_hi, below)
        return total * (h0 + h1 + h2)
    third = s012 / 3.0
    p0 = s0 + 0.5 * (s01 + s02) + third
    p1 = s1 + 0.5 * (s01 + s12) + third
    p2 = s2 + 0.5 * (s02 + s12) + third
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    if p0 != 0.0:
        d0 = max(p0, _TINY)
        t0 = p0 * (
            _h2_or_below(r1 * (s0 + 0.5 * s02) / d0, h_lo, h_hi, below)
            + _h2_or_below(r2 * (s0 + 0.5 * s01) / d0, h_lo, h_hi, below)
        )
    if p1 != 0.0:
        d1 = max(p1, _TINY)
        t1 = p1 * (
            _h2_or_below(r0 * (s1 + 0.5 * s12) / d1, h_lo, h_hi, below)
            + _h2_or_below(r2 * (s1 + 0.5 * s01) / d1, h_lo, h_hi, below)
        )
    if p2 != 0.0:
        d2 = max(p2, _TINY)
        t2 = p2 * (
            _h2_or_below(r0 * (s2 + 0.5 * s12) / d2, h_lo, h_hi, below)
            + _h2_or_below(r1 * (s2 + 0.5 * s02) / d2, h_lo, h_hi, below)
        )
    return t0 + t1 + t2


@njit(**INLINE)
def _envelope_pre(
    prob: np.ndarray, i: int, order: np.ndarray, refute_all: bool, pre: np.ndarray, h_lo: float, h_hi: float
) -> None:
    """The per-card part of :func:`envelope_information_kernel` for game i into ``pre`` (see there)."""
    for c in range(_C):
        _envelope_pre_card(prob, i, c, order, refute_all, pre, h_lo, h_hi)


@njit(**INLINE)
def _envelope_pre_card(
    prob: np.ndarray, i: int, c: int, order: np.ndarray, refute_all: bool, pre: np.ndarray, h_lo: float, h_hi: float
) -> None:
    """Column c of :func:`_envelope_pre` (the kernels that score a few cards' triples fill only those)."""
    K = order.shape[1]
    E = prob.shape[1] - 1
    HE, HN = 3 * K, 3 * K + 1
    e = prob[i, E, c]
    pre[HE, c] = _h2c(e, h_lo, h_hi)
    cs = 0.0
    for k in range(K):
        q = prob[i, order[i, k], c]
        if refute_all:
            other = min(max(1.0 - q, 0.0), 1.0)
            pre[2 * K + k, c] = _h2c(e / max(other, _TINY), h_lo, h_hi)
        else:
            cs += q
            other = min(max(1.0 - (cs - q) - q, 0.0), 1.0)
        pre[k, c] = other
        pre[K + k, c] = e / max(other, _TINY)
    if not refute_all:
        o = min(max(1.0 - cs, 0.0), 1.0)
        pre[HN, c] = _h2c(e / max(o, _TINY), h_lo, h_hi)
        pre[2 * K, c] = o  # row 2K (unused without refute_all): clipped "not held by an asked seat"


@njit(**INLINE)
def _envelope_triple(
    prob: np.ndarray, i: int, c0: int, c1: int, c2: int, order: np.ndarray, refute_all: bool, see_card: bool,
    pre: np.ndarray, h_lo: float, h_hi: float,
) -> float:  # fmt: skip
    """The expected envelope information of triple (c0, c1, c2) of game i, from ``pre`` (:func:`_envelope_pre`)."""
    return _envelope_triple_above(
        prob, i, c0, c1, c2, order, refute_all, see_card, pre, h_lo, h_hi, -1.0, 0.0, False
    )  # fmt: skip


@njit(**INLINE)
def _envelope_triple_above(
    prob: np.ndarray, i: int, c0: int, c1: int, c2: int, order: np.ndarray, refute_all: bool, see_card: bool,
    pre: np.ndarray, h_lo: float, h_hi: float, floor: float, extra: float, below: bool,
) -> float:  # fmt: skip
    """:func:`_envelope_triple`, or ``-1 - B`` (negative) as soon as the value provably ends with
    ``value + extra < floor``: ``B`` is the bound that showed it, ``max(prior - partial, 0)``, at least the value.

    With ``below`` (first-refuter rule only) the seats' entropies are log-free lower bounds
    (:func:`_h2_or_below`), so the result is an upper bound of the value, about 5x cheaper: a triple
    whose bound cannot win needs no logarithm at all.

    Why: a best-triple search needs the exact value only of triples that can still win. With the
    first-refuter rule the value is ``max(prior - acc, 0)`` where ``acc`` sums one non-negative term
    per asked seat (and the "nobody refutes" term); adding non-negative floats never lowers the sum,
    even rounded, so once ``max(prior - partial, 0) + extra < floor`` the final value does too and the
    remaining seats (most of the logarithms) are skipped. The terms are added in the same order as
    without the floor, so a value that is returned is the same number. ``floor = -1`` never stops.
    """
    K = order.shape[1]
    HE, HN = 3 * K, 3 * K + 1
    prior = pre[HE, c0] + pre[HE, c1] + pre[HE, c2]
    acc = 0.0
    for k in range(K):
        s = order[i, k]
        seat = _seat_answers(
            prob[i, s, c0], prob[i, s, c1], prob[i, s, c2], pre[k, c0], pre[k, c1], pre[k, c2],
            pre[K + k, c0], pre[K + k, c1], pre[K + k, c2], see_card, h_lo, h_hi, below,
        )  # fmt: skip
        if refute_all:
            passes = pre[k, c0] * pre[k, c1] * pre[k, c2]
            hp = pre[2 * K + k, c0] + pre[2 * K + k, c1] + pre[2 * K + k, c2]
            term = max(prior - (seat + passes * hp), 0.0)
        else:
            term = seat
        acc = term if k == 0 else acc + term
        if not refute_all and max(prior - acc, 0.0) + extra < floor:
            return -1.0 - max(prior - acc, 0.0)
    if refute_all:
        return acc
    none = pre[2 * K, c0] * pre[2 * K, c1] * pre[2 * K, c2]
    acc += none * (pre[HN, c0] + pre[HN, c1] + pre[HN, c2])
    return max(prior - acc, 0.0)


@njit(**KERNEL)
def envelope_information_kernel(
    prob: np.ndarray,
    cards: np.ndarray,
    order: np.ndarray,
    refute_all: bool,
    see_card: bool,
    out: np.ndarray,
    pre: np.ndarray,
) -> None:
    """:func:`agents.suggestion_value.envelope_information_reference` into ``out`` (n, T) float64.

    ``prob`` (n, H, 21) float64, ``cards`` (n, T, 3) int64, ``order`` (n, K) int64. Scratch ``pre``
    (3 K + 2, 21) float64: what depends on one card only is computed once per game (each value
    by the same operations as the reference), the rest per triple: per asked seat k and card c,
    ``other`` (rows 0..K-1), ``e / other`` (K..2K-1), the pass term (2K..3K-1, ``refute_all``);
    then ``h2(e)`` (3K) and the "nobody refutes" term (3K + 1).
    """
    n, T, _ = cards.shape
    h_lo, h_hi = _h2(0.0), _h2(1.0)
    for i in range(n):
        _envelope_pre(prob, i, order, refute_all, pre, h_lo, h_hi)
        for t in range(T):
            out[i, t] = _envelope_triple(
                prob, i, cards[i, t, 0], cards[i, t, 1], cards[i, t, 2], order, refute_all, see_card, pre, h_lo, h_hi
            )


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
    index of the first best legal triple, -1 where none is legal. Scratch ``pre`` as there, ``memo`` (2 T,)
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
    h_lo, h_hi = _h2(0.0), _h2(1.0)
    for i in range(n):
        for a in range(ks):
            _envelope_pre_card(prob, i, cs[i, a], order, refute_all, pre, h_lo, h_hi)
        for b in range(kw):
            _envelope_pre_card(prob, i, cw[i, b], order, refute_all, pre, h_lo, h_hi)
        for c in range(kr):
            _envelope_pre_card(prob, i, cr[i, c], order, refute_all, pre, h_lo, h_hi)
        _same_columns(prob, i, cs, i, reps, 0)
        _same_columns(prob, i, cw, i, reps, 1)
        _same_columns(prob, i, cr, i, reps, 2)
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
                        if legal[i, _triple(c0, c1, c2)]:
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
            v = _envelope_triple(prob, i, c0, c1, c2, order, refute_all, True, pre, h_lo, h_hi)
            memo[(reps[0, a] * kw + reps[1, b]) * kr + reps[2, c]] = v
            top = v + 1e-9 * noise[i, t_first]
            best = _triple(c0, c1, c2)
            best_t = t_first
        t = 0
        for a in range(ks):
            c0 = cs[i, a]
            for b in range(kw):
                c1 = cw[i, b]
                for c in range(kr):
                    c2 = cr[i, c]
                    x = _triple(c0, c1, c2)
                    if legal[i, x] and t != t_first:
                        skip = False
                        if best >= 0 and not refute_all:
                            bound = (pre[HE, c0] + pre[HE, c1] + pre[HE, c2]) + 1e-9 * noise[i, t]
                            skip = bound < top or (bound == top and t > best_t)
                        extra = 1e-9 * noise[i, t]
                        m = (reps[0, a] * kw + reps[1, b]) * kr + reps[2, c]
                        if not skip and memo[m] < 0.0 and best >= 0 and not refute_all:  # a log-free bound first
                            skip = memo[T + m] + extra < top - _MARGIN  # the bound that stopped an equal triple
                            if not skip:
                                ub = _envelope_triple_above(
                                    prob, i, c0, c1, c2, order, False, True, pre, h_lo, h_hi, top - _MARGIN, extra,
                                    True,
                                )  # fmt: skip
                                skip = ub + extra < top - _MARGIN
                                if ub < 0.0:  # stopped by the bound B (ub = -1 - B): kept, decoded a hair high
                                    memo[T + m] = -1.0 - ub + _DECODE_SLACK
                        if not skip:
                            if memo[m] >= 0.0:  # the same score as a triple already scored
                                v = memo[m]
                            else:
                                floor = top if best >= 0 else -1.0
                                v = _envelope_triple_above(
                                    prob, i, c0, c1, c2, order, refute_all, True, pre, h_lo, h_hi, floor, extra, False
                                )
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
    pairs (card ids (n, ks), (n, kw)), scored as :func:`envelope_information_kernel` does. Scratch ``pre`` as there,
    ``reps`` (3, max(ks, kw, 9)) int64.

    Cards whose holder probabilities are equal give equal scores bit for bit (a score reads only the columns of
    its three cards, :func:`best_suggestion_kernel`), so a room whose column equals an earlier room's gets that
    room's value, and a pair of cards equal to an earlier pair is not scored again: the maximum is the same.
    Early in a game most rooms look alike (unknown, or held by this seat), so few rooms are scored.
    """
    n = prob.shape[0]
    ks, kw = cs.shape[1], cw.shape[1]
    HE = 3 * order.shape[1]
    h_lo, h_hi = _h2(0.0), _h2(1.0)
    for i in range(n):
        _same_columns(prob, i, cs, i, reps, 0)
        _same_columns(prob, i, cw, i, reps, 1)
        _same_columns(prob, i, _ROOM_CARDS, 0, reps, 2)
        for a in range(ks):
            if reps[0, a] == a:
                _envelope_pre_card(prob, i, cs[i, a], order, refute_all, pre, h_lo, h_hi)
        for b in range(kw):
            if reps[1, b] == b:
                _envelope_pre_card(prob, i, cw[i, b], order, refute_all, pre, h_lo, h_hi)
        for r in range(9):
            if reps[2, r] == r:
                _envelope_pre_card(prob, i, _R0 + r, order, refute_all, pre, h_lo, h_hi)
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
            best = _envelope_triple(prob, i, cs[i, a0], cw[i, b0], _R0 + r, order, refute_all, True, pre, h_lo, h_hi)
            for a in range(ks):
                if reps[0, a] != a:
                    continue
                for b in range(kw):
                    if (a == a0 and b == b0) or reps[1, b] != b:
                        continue
                    c0, c1, c2 = cs[i, a], cw[i, b], _R0 + r
                    if not refute_all and pre[HE, c0] + pre[HE, c1] + pre[HE, c2] <= best:
                        continue  # at most its prior entropy: cannot beat the best (first-refuter rule)
                    if not refute_all:  # a log-free upper bound first
                        ub = _envelope_triple_above(
                            prob, i, c0, c1, c2, order, False, True, pre, h_lo, h_hi, best - _MARGIN, 0.0, True
                        )
                        if ub < best - _MARGIN:
                            continue
                    v = _envelope_triple_above(
                        prob, i, c0, c1, c2, order, refute_all, True, pre, h_lo, h_hi, best, 0.0, False
                    )
                    if v > best:
                        best = v
            out[i, r] = best


# ---------------------------------------------------------------------------------------------- deal sampling
@njit(**INLINE)
def _category(c: int) -> int:
    return 0 if c < _W0 else (1 if c < _R0 else 2)


@njit(**KERNEL)
def sample_deals_kernel(
    owner0: np.ndarray,
    cap0: np.ndarray,
    env_cap0: np.ndarray,
    unk_total0: np.ndarray,
    unk_cat0: np.ndarray,
    owner: np.ndarray,
    cap: np.ndarray,
    env_cap: np.ndarray,
    unk_total: np.ndarray,
    unk_cat: np.ndarray,
    alive: np.ndarray,
    q: np.ndarray,
    allowed: np.ndarray,
    order: np.ndarray,
    samples: int,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    clause_order: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    rng: np.random.Generator,
    w: np.ndarray,
    div: np.ndarray,
    steps: int,
) -> None:
    """The loops of :func:`agents.deal_sampling.sample_deals_reference` over N = n * samples deals.

    Deal r belongs to game r // samples and starts from its game's ``owner0`` (n, 21) int8 holder
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
    quotients a / b of the counters (each at most 21), divided once.
    """
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
            unk_cat[r, _category(cr)] -= 1
    # Place the other cards one at a time, fewest possible holders first (deal r = g * samples + m, in order).
    n = order.shape[0]
    U = np.uint64  # unsigned indices: numba adds a negative-index fix to each signed one (~12% of this loop)
    for t in range(steps):
        for g in range(n):
            ug = U(g)
            c = order[g, t]
            uc = U(c)
            cat = _category(c)
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


# ---------------------------------------------------------------------------------------------- witnesses
@njit(**INLINE)
def _clauses_hold(deal, g, i, cl_holder, cl_cards, cl_live, acc_cards, acc_live, E) -> bool:
    """The deal (21,) holder per card satisfies every live clause of row ``i`` (clause contents at row ``g``):
    each refutation clause has one card with its holder, no wrong accusation has all three cards in the envelope."""
    for k in range(cl_live.shape[1]):
        if cl_live[i, k]:
            hit = False
            for j in range(3):
                if deal[cl_cards[g, k, j]] == cl_holder[g, k]:
                    hit = True
            if not hit:
                return False
    for a in range(acc_live.shape[1]):
        if acc_live[i, a]:
            allenv = True
            for j in range(3):
                if deal[acc_cards[g, a, j]] != E:
                    allenv = False
            if allenv:
                return False
    return True


@njit(**KERNEL)
def valid_deals_kernel(
    owner: np.ndarray,
    no: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    ok: np.ndarray,
) -> None:
    """:func:`agents.deduction.valid_deals_reference` into ``ok`` (n, W) bool.

    ``owner`` (n, W, 21) int8 holder per card; ``no`` (n, H, 21) bool; clauses as int64 / bool arrays.
    """
    n, W, C = owner.shape
    E = no.shape[1] - 1
    for i in range(n):
        for m in range(W):
            good = True
            for c in range(C):
                if no[i, owner[i, m, c], c]:
                    good = False
                    break
            ok[i, m] = good and _clauses_hold(owner[i, m], i, i, cl_holder, cl_cards, cl_live, acc_cards, acc_live, E)


# ---------------------------------------------------------------------------------------------- opponent model
@njit(**KERNEL)
def assumed_no_kernel(
    idx: np.ndarray,
    seat: int,
    has_board: bool,
    naive: bool,
    has: np.ndarray,
    no: np.ndarray,
    named: np.ndarray,
    allow: np.ndarray,
    extra_no: np.ndarray,
    lacks: np.ndarray,
    deviant: np.ndarray,
    strong_allows: bool,
    extra: np.ndarray,
    used: np.ndarray,
) -> None:
    """The "holds not" facts :func:`agents.opponent_model.assumed_facts_reference` adds, per game ``idx[i]`` of the
    notebook's ``has``, ``no`` (B, H, 21) and ``named`` (B, P, 21) bool.

    A table is *strong* where some opponent has named a card it is known to hold (on the board, not the room).
    ``naive``: every card an opponent named (on the board, not the room) where the table is not strong;
    ``extra_no`` (n, P, 21) bool more of them (shape (0, P, 21): none); ``lacks`` (B, P, 21) bool, by game, those
    of refuters (:class:`agents.refuter_model.RefuterModel`) at a strong table, except players marked in
    ``deviant`` (B, P) bool (``lacks`` of shape (0, P, 21): none). Written: ``extra`` (n, P) int64 bitmasks of
    those not known yet (neither has nor has-not), ``used`` (n,) bool: some, and ``allow[i]`` (or, with
    ``strong_allows``, a strong table).
    """
    n = idx.shape[0]
    P = named.shape[1]
    more = extra_no.shape[0] > 0
    refuters = lacks.shape[0] > 0
    hi = _R0 if has_board else _C
    for i in range(n):
        g = idx[i]
        strong = False
        for p in range(P):
            if p != seat:
                for c in range(hi):
                    if named[g, p, c] and has[g, p, c]:
                        strong = True
        table = naive and not strong
        some = False
        for p in range(P):
            refuted = refuters and strong and not deviant[g, p]
            x = 0
            for c in range(_C):
                a = table and p != seat and c < hi and named[g, p, c]
                if more and extra_no[i, p, c]:
                    a = True
                if refuted and lacks[g, p, c]:
                    a = True
                if a and not no[g, p, c] and not has[g, p, c]:
                    x |= 1 << c
            extra[i, p] = x
            if x != 0:
                some = True
        used[i] = some and (allow[i] or (strong_allows and strong))


@njit(**KERNEL)
def assumed_bits_kernel(
    idx: np.ndarray, seat: int, has_board: bool, naive: bool, allow: np.ndarray, extra_no: np.ndarray,
    lacks: np.ndarray, deviant: np.ndarray, strong_allows: bool, has: np.ndarray, no: np.ndarray, size: np.ndarray,
    named: np.ndarray, cl_holder: np.ndarray, cl_cards: np.ndarray, cl_live: np.ndarray, acc_cards: np.ndarray,
    acc_live: np.ndarray, hb: np.ndarray, nb: np.ndarray, sz: np.ndarray, clh: np.ndarray, clm: np.ndarray,
    cll: np.ndarray, accm: np.ndarray, accl: np.ndarray, used: np.ndarray, extra: np.ndarray, bad: np.ndarray,
    snap: np.ndarray, unit: np.ndarray, clh1: np.ndarray,
) -> None:  # fmt: skip
    """:func:`agents.opponent_model.assumed_bits` in one pass: row i of the FactBits arrays ``hb``, ``nb``, ``sz``,
    ``clh``, ``clm``, ``cll``, ``accm``, ``accl`` (n, ...) gets the facts of game ``idx[i]`` (what
    :func:`pack_rows_kernel` and the notebook's rows give), plus where ``used[i]`` the assumed "holds not" facts
    (:func:`assumed_no_kernel`, same arguments), closed by :func:`fixpoint_kernel` (100 rounds, as
    :func:`agents.deduction.fixpoint_bits`); where those contradict themselves, the notebook's own facts and
    ``used[i]`` False. Scratch: ``extra`` (n, P) int64, ``bad`` (1,) bool, ``snap`` (2, H) int64, ``unit`` (K,)
    int64, ``clh1`` (1, K) int64 (the clause holders as the fixpoint reads them)."""
    H = has.shape[1]
    P = named.shape[1]
    K = cl_live.shape[1]
    NA = acc_live.shape[1]
    assumed_no_kernel(idx, seat, has_board, naive, has, no, named, allow, extra_no, lacks, deviant, strong_allows,
                      extra, used)  # fmt: skip
    pack_rows_kernel(idx, has, no, cl_cards, acc_cards, hb, nb, clm, accm)
    for i in range(idx.shape[0]):
        g = idx[i]
        for h in range(H):
            sz[i, h] = size[g, h]
        for k in range(K):
            clh[i, k] = cl_holder[g, k]
            cll[i, k] = cl_live[g, k]
        for a in range(NA):
            accl[i, a] = acc_live[g, a]
        if not used[i]:
            continue
        for p in range(P):
            nb[i, p] |= extra[i, p]
        for k in range(K):
            clh1[0, k] = cl_holder[g, k]
        bad[0] = False
        j = slice(i, i + 1)
        fixpoint_kernel(hb[j], nb[j], sz[j], clh1, clm[j], cll[j], accm[j], accl[j], 100, bad, snap, unit)
        if bad[0]:  # the model was wrong about someone: the notebook's own facts
            used[i] = False
            pack_rows_kernel(idx[j], has, no, cl_cards, acc_cards, hb[j], nb[j], clm[j], accm[j])
            for k in range(K):
                cll[i, k] = cl_live[g, k]
            for a in range(NA):
                accl[i, a] = acc_live[g, a]


# ---------------------------------------------------------------------------------------------- refuter model
@njit(**INLINE)
def _category_counts(cells: np.ndarray, g: int, k: int) -> tuple[float, float, float]:
    """How many cards of each category ``cells[g, k]`` (21,) bool marks, as floats (exact)."""
    n0 = n1 = n2 = 0.0
    for d in range(_C):
        if cells[g, k, d]:
            t = _category(d)
            if t == 0:
                n0 += 1.0
            elif t == 1:
                n1 += 1.0
            else:
                n2 += 1.0
    return n0, n1, n2


@njit(**KERNEL)
def refuter_update_kernel(
    seat: int, game: np.ndarray, is_acc: np.ndarray, player: np.ndarray, triple: np.ndarray, response: np.ndarray,
    shown_by_me: np.ndarray, hand: np.ndarray, margin: float, shown: np.ndarray, received: np.ndarray,
    lacks: np.ndarray, deviant: np.ndarray,
) -> None:  # fmt: skip
    """:meth:`agents.refuter_model.RefuterModel.update_reference` (the numpy statement) record by record: the
    records (``game`` (m,), ``is_acc``, ``player``, ``triple`` (m, 3) category indices, ``response`` (m, P), in
    order within each game) of this ``seat``'s suggestions update ``shown``, ``lacks`` (B, P, 21) bool,
    ``received`` (B,) int64 and ``deviant`` (B, P) bool in place. ``shown_by_me`` (B, P, 21) bool (shape
    (0, P, 21): none), ``hand`` (B,) float64 this seat's hand size. The same float operations, in the same order,
    as the statement, so the same comparisons."""
    P = response.shape[1]
    have_mine = shown_by_me.shape[0] > 0
    for j in range(game.shape[0]):
        if is_acc[j] or player[j] != seat:
            continue
        g = game[j]
        cards = (np.int64(triple[j, 0]), _W0 + np.int64(triple[j, 1]), _R0 + np.int64(triple[j, 2]))
        count = 0
        for k in range(P):
            c = np.int64(response[j, k])
            if c < 0:
                continue
            count += 1
            # What refuter k expects of our hand per category: what we showed it, the rest pro rata.
            m0, m1, m2 = _category_counts(shown_by_me, g, k) if have_mine else (0.0, 0.0, 0.0)
            rest = hand[g] - (m0 + m1 + m2)
            share0 = m0 + rest * _CATEGORY_SIZE[0] / _C
            share1 = m1 + rest * _CATEGORY_SIZE[1] / _C
            share2 = m2 + rest * _CATEGORY_SIZE[2] / _C
            new = not shown[g, k, c]
            named_seen = shown[g, k, cards[0]] or shown[g, k, cards[1]] or shown[g, k, cards[2]]
            if new and named_seen:
                deviant[g, k] = True
            if new and not named_seen:
                s0, s1, s2 = _category_counts(shown, g, k)
                others = max(received[g] - (s0 + s1 + s2), 0.0) / 3.0  # exact counts: the same number
                left = (
                    _CATEGORY_SIZE[0] - share0 - s0 - others,
                    _CATEGORY_SIZE[1] - share1 - s1 - others,
                    _CATEGORY_SIZE[2] - share2 - s2 - others,
                )
                bar = left[_category(c)] + margin
                for d in cards:
                    if d != c and left[_category(d)] >= bar:
                        lacks[g, k, d] = True
            shown[g, k, c] = True
        received[g] += count


# ---------------------------------------------------------------------------------------------- notebook intake
_PASSED, _HIDDEN = -2, -3  # a record's response: could not refute; showed a card this seat did not see


@njit(**KERNEL)
def clause_slots_needed(
    game: np.ndarray, is_acc: np.ndarray, response: np.ndarray, cl_live: np.ndarray, count: np.ndarray
) -> int:
    """The clause slots per game :func:`add_records_kernel` needs (live clauses plus new hidden refutations),
    at most over the games of the records; 0 when no record has a hidden refutation. Scratch ``count`` (B,)
    int64 (new hidden refutations per game; one pass over the records instead of one per record)."""
    m, P = response.shape
    for r in range(m):
        count[game[r]] = 0
    for r in range(m):
        if not is_acc[r]:
            for s in range(P):
                count[game[r]] += response[r, s] == _HIDDEN
    need = 0
    for r in range(m):
        if is_acc[r]:
            continue
        for s in range(P):
            if response[r, s] == _HIDDEN:
                g = game[r]
                live = 0
                for k in range(cl_live.shape[1]):
                    live += cl_live[g, k]
                need = max(need, live + count[g])
                break
    return need


@njit(**KERNEL)
def add_records_kernel(
    me: int,
    game: np.ndarray,
    is_acc: np.ndarray,
    player: np.ndarray,
    triple: np.ndarray,
    correct: np.ndarray,
    response: np.ndarray,
    has: np.ndarray,
    no: np.ndarray,
    shown_by_me: np.ndarray,
    shown_to: np.ndarray,
    unrefuted: np.ndarray,
    named: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    compacted: np.ndarray,
    tmp_holder: np.ndarray,
    tmp_cards: np.ndarray,
    tmp_live: np.ndarray,
) -> None:
    """:meth:`agents.notebook.Notebook.add_records_reference` on the notebook's arrays, record by record.

    Records (m of them, in the order the view gives them) as :class:`cluedo_env.engine.views.Records`
    arrays; the notebook's arrays are updated in place (``cl_*`` must have room: see
    :func:`clause_slots_needed`). A game's live clauses move to the front of its row (in order) before
    its first new clause is put after them, as the reference does. Scratch: ``compacted`` (B,) bool, False
    on entry and left so; ``tmp_holder`` (K,), ``tmp_cards`` (K, 3), ``tmp_live`` (K,) of the clause arrays' dtypes.
    """
    m, P = response.shape
    K = cl_live.shape[1]
    for r in range(m):
        if is_acc[r]:
            continue
        g = game[r]
        p = player[r]
        c0, c1, c2 = triple[r, 0], _W0 + triple[r, 1], _R0 + triple[r, 2]
        shows = 0
        for s in range(P):
            x = response[r, s]
            if x == _PASSED:
                no[g, s, c0] = True
                no[g, s, c1] = True
                no[g, s, c2] = True
            elif x >= 0:
                shows += 1
                if p == me:
                    has[g, s, x] = True
                elif s == me:
                    shown_by_me[g, p, x] = True
            elif x == _HIDDEN:
                shows += 1
                if not compacted[g]:  # live clauses first, then the others, each in order (a stable sort)
                    j = 0
                    for live in (True, False):
                        for k in range(K):
                            if cl_live[g, k] == live:
                                tmp_holder[j] = cl_holder[g, k]
                                tmp_cards[j, 0] = cl_cards[g, k, 0]
                                tmp_cards[j, 1] = cl_cards[g, k, 1]
                                tmp_cards[j, 2] = cl_cards[g, k, 2]
                                tmp_live[j] = live
                                j += 1
                    for k in range(K):
                        cl_holder[g, k] = tmp_holder[k]
                        cl_cards[g, k, 0] = tmp_cards[k, 0]
                        cl_cards[g, k, 1] = tmp_cards[k, 1]
                        cl_cards[g, k, 2] = tmp_cards[k, 2]
                        cl_live[g, k] = tmp_live[k]
                    compacted[g] = True
                for k in range(K):
                    if not cl_live[g, k]:
                        cl_holder[g, k] = s
                        cl_cards[g, k, 0] = c0
                        cl_cards[g, k, 1] = c1
                        cl_cards[g, k, 2] = c2
                        cl_live[g, k] = True
                        break
        shown_to[g, p] += shows
        if shows == 0:
            unrefuted[g, p] += 1
        named[g, p, c0] = True
        named[g, p, c1] = True
        named[g, p, c2] = True
    for r in range(m):
        compacted[game[r]] = False
        if is_acc[r] and not correct[r] and player[r] != me:
            g, p = game[r], player[r]
            acc_cards[g, p, 0] = triple[r, 0]
            acc_cards[g, p, 1] = _W0 + triple[r, 1]
            acc_cards[g, p, 2] = _R0 + triple[r, 2]
            acc_live[g, p] = True


@njit(**KERNEL)
def intake_kernel(
    me, idx, start, limit, env, game, is_acc, player, triple, correct, response, has, no, shown_by_me, shown_to,
    unrefuted, named, cl_holder, cl_cards, cl_live, acc_cards, acc_live, compacted, tmp_holder, tmp_cards, tmp_live,
    processed, changed,
) -> int:  # fmt: skip
    """:meth:`agents.notebook.Notebook.update` up to the propagation, in one call: the records
    (:func:`add_records_kernel`, the same arguments), then per game ``idx[i]`` the records taken in (``processed``
    (B,) int64 raised to ``limit[i]``), the envelope where this seat has seen it (``env`` (n, 3) card ids, -1:
    not seen; R-A2), and the games to propagate, those with new records (``limit > start``, (n,) int64) or the
    envelope seen, into ``changed`` (n,) int64 sorted and distinct (``np.unique``); returns their number."""
    add_records_kernel(
        me, game, is_acc, player, triple, correct, response, has, no, shown_by_me, shown_to, unrefuted, named,
        cl_holder, cl_cards, cl_live, acc_cards, acc_live, compacted, tmp_holder, tmp_cards, tmp_live,
    )  # fmt: skip
    E = has.shape[1] - 1
    m = 0
    for i in range(idx.shape[0]):
        g = idx[i]
        if limit[i] > processed[g]:
            processed[g] = limit[i]
        seen = env[i, 0] >= 0
        if seen:
            for k in range(3):
                has[g, E, env[i, k]] = True
        if limit[i] > start[i] or seen:
            changed[m] = g
            m += 1
    for j in range(1, m):  # sorted (players are asked about sorted games: nothing moves then)
        x = changed[j]
        t = j - 1
        while t >= 0 and changed[t] > x:
            changed[t + 1] = changed[t]
            t -= 1
        changed[t + 1] = x
    d = 0
    for j in range(m):  # distinct
        if d == 0 or changed[j] != changed[d - 1]:
            changed[d] = changed[j]
            d += 1
    return d


# ---------------------------------------------------------------------------------------------- deducer candidates
@njit(**KERNEL)
def candidates_kernel(
    prob: np.ndarray, seat: int, k: int, noise: np.ndarray, blank_noise: np.ndarray, out: np.ndarray, u: np.ndarray,
    categories: int = 3,
) -> None:  # fmt: skip
    """:meth:`agents.deducer.DeducerAgent._candidates_reference` into ``out`` (n, 3, k + 1) int64 card ids.

    ``prob`` (n, H, 21) float64; ``noise`` (n * 21,) and ``blank_noise`` (n * 21,) the uniform numbers the
    reference draws, in its order: ``noise`` row by row, ``blank_noise`` category by category (n x 6 suspects, then
    n x 6 weapons, then n x 9 rooms, each row by row). Per category: the ``k`` cards of highest
    uncertainty ``h2(e) + 0.1 * (entropy of the holder) + 1e-6 * noise``, highest first, then the
    blank (a card nobody can show) of highest ``blank_noise``, or the category's first card if none.
    Scratch ``u`` (21,) float64. ``categories`` = 2: the suspects and weapons only (the room values score every
    room), ``out[:, 2]`` is not written; the numbers are drawn all the same, so the generator moves as the
    reference's.
    """
    n, H, C = prob.shape
    E = H - 1
    h_lo, h_hi = _h2(0.0), _h2(1.0)
    last = _FIRST_OF[categories]
    for i in range(n):
        for c in range(last):
            u[c] = _uncertainty(prob, i, c, E, h_lo, h_hi) + 1e-6 * noise[i * C + c]
        for cat in range(categories):
            lo = 0 if cat == 0 else (_W0 if cat == 1 else _R0)
            hi = _W0 if cat == 0 else (_R0 if cat == 1 else _C)
            block = n * lo + i * (hi - lo) - lo  # this row's numbers of the category's block, by card id
            best_b = lo
            top_b = -1.0
            for c in range(lo, hi):
                blank = prob[i, seat, c] > 0.999 or prob[i, E, c] > 0.999
                v = blank_noise[block + c] if blank else -1.0
                if v > top_b:
                    top_b = v
                    best_b = c
            out[i, cat, k] = best_b
            # the k most uncertain cards, highest first (a card once taken is skipped)
            for j in range(k):
                best = -1
                top = 0.0
                for c in range(lo, hi):
                    taken = False
                    for jj in range(j):
                        if out[i, cat, jj] == c:
                            taken = True
                    if taken:
                        continue
                    v = u[c]
                    if best < 0 or v > top:
                        top = v
                        best = c
                out[i, cat, j] = best


@njit(**INLINE)
def _entropy_term(p: float) -> float:
    p = min(max(p, 0.0), 1.0)
    if p == 1.0:  # -1 * log2(1) = -0.0: the same in every sum (of terms >= 0) it goes into
        return 0.0
    return -p * np.log2(p) if p > 1e-12 else 0.0


@njit(**INLINE)
def _uncertainty(prob: np.ndarray, i: int, c: int, E: int, h_lo: float, h_hi: float) -> float:
    """h2(e) + 0.1 * the entropy of card c's holder, as :meth:`agents.deducer.DeducerAgent._candidates_reference`."""
    tot = _entropy_term(prob[i, 0, c])
    for h in range(1, E + 1):
        tot += _entropy_term(prob[i, h, c])
    return _h2c(prob[i, E, c], h_lo, h_hi) + 0.1 * tot


# ---------------------------------------------------------------------------------------------- deal sampling setup
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
    """The start of :func:`agents.deal_sampling.sample_deals` from the cells as bitmasks; returns the steps (the
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
            env_cap0[i, k] = 0 if hb[i, E] & _CAT[k] else 1
        for h in range(H):
            cap0[i, h] = max(size[i, h] - _popcount(hb[i, h]), 0)
        for c in range(_C):
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
                unk_cat0[i, _category(c)] += 1
            # insertion into the stable order
            j = c
            while j > 0 and key[order[i, j - 1]] > key[c]:
                order[i, j] = order[i, j - 1]
                j -= 1
            order[i, j] = c
        unk_total0[i] = unk
        steps = max(steps, unk)
    return steps


@njit(**INLINE)
def _register_deal(deal: np.ndarray, E: int, witness: np.ndarray, g: int, valid: np.ndarray, i: int) -> None:
    """The consistent ``deal`` (21,) becomes the witness (``witness`` (B, 21, 21) of game g) of each of its envelope
    cards, which are then ``valid`` (n, 21) in row i."""
    for c in range(_C):
        if deal[c] == E:
            for x in range(_C):
                witness[g, c, x] = deal[x]
            valid[i, c] = True


@njit(**KERNEL)
def register_witnesses_kernel(
    idx: np.ndarray,
    rows: np.ndarray,
    owner: np.ndarray,
    alive: np.ndarray,
    E: int,
    witness: np.ndarray,
    valid: np.ndarray,
) -> None:
    """:meth:`agents.notebook.Notebook._register` in place: every live sampled deal ``owner`` (r, M, 21) becomes the
    witness of each of its envelope cards (``witness`` (B, 21, 21) of game ``idx[rows[r]]``, later deals
    overwriting earlier ones) and sets ``valid`` (n, 21) at (``rows[r]``, card)."""
    r_, M, _ = owner.shape
    for r in range(r_):
        for m in range(M):
            if alive[r, m]:
                _register_deal(owner[r, m], E, witness, idx[rows[r]], valid, rows[r])


@njit(**KERNEL)
def witness_rows_kernel(
    unknown: np.ndarray, valid: np.ndarray, cl_live: np.ndarray, rows: np.ndarray, cards: np.ndarray,
    live_cols: np.ndarray,
) -> int:  # fmt: skip
    """The envelope cells still to witness: (row, card) where ``unknown`` and not ``valid`` (n, 21) bool, in
    row-major order (``np.nonzero``'s) into ``rows``, ``cards`` (n * 21,) int64; returns how many. ``live_cols``
    (K,) bool: the clause slots live (``cl_live`` (n, K)) in some of those rows."""
    for k in range(cl_live.shape[1]):
        live_cols[k] = False
    m = 0
    for i in range(unknown.shape[0]):
        some = False
        for c in range(_C):
            if unknown[i, c] and not valid[i, c]:
                rows[m] = i
                cards[m] = c
                m += 1
                some = True
        if some:
            for k in range(cl_live.shape[1]):
                live_cols[k] |= cl_live[i, k]
    return m


@njit(**INLINE)
def _force_into_envelope(
    c: int, fh: np.ndarray, fs: np.ndarray, owner0: np.ndarray, cap0: np.ndarray, env_cap0: np.ndarray,
    unk_total0: np.ndarray, unk_cat0: np.ndarray, order: np.ndarray, unk: int,
) -> int:  # fmt: skip
    """Turn :func:`sample_setup_kernel`'s setup of one row of facts (``fh``, ``fs`` (1, H), with ``unk`` unplaced
    cards) into its setup of the same facts with the open envelope card c placed in the envelope; returns where c
    stood in the placement order (:func:`_release_from_envelope` undoes it).

    What the setup gives for the forced facts: c held by the envelope, one card fewer unplaced (in all and in its
    category), the envelope's room for its category 0 and its room in all one less (at least 0); the placement
    order of the unplaced cards (the first ``unk - 1``, all that sampling reads) is the same stable order without
    c. (c is open, so nobody holds it and its category's envelope card is not known.)
    """
    E = cap0.shape[1] - 1
    k = _category(c)
    p = 0
    while order[0, p] != c:
        p += 1
    for t in range(p, unk - 1):
        order[0, t] = order[0, t + 1]
    owner0[0, c] = E
    cap0[0, E] = max(fs[0, E] - _popcount(fh[0, E] | (np.int64(1) << c)), 0)
    env_cap0[0, k] = 0
    unk_total0[0] -= 1
    unk_cat0[0, k] -= 1
    return p


@njit(**INLINE)
def _release_from_envelope(
    c: int, p: int, fh: np.ndarray, fs: np.ndarray, owner0: np.ndarray, cap0: np.ndarray, env_cap0: np.ndarray,
    unk_total0: np.ndarray, unk_cat0: np.ndarray, order: np.ndarray, unk: int,
) -> None:  # fmt: skip
    """Undo :func:`_force_into_envelope` (c was at ``p`` in the order): the envelope's rooms are what
    :func:`sample_setup_kernel` gives for the row's facts ``fh``, ``fs`` (c open: its category's room is 1)."""
    E = cap0.shape[1] - 1
    k = _category(c)
    for t in range(unk - 1, p, -1):
        order[0, t] = order[0, t - 1]
    order[0, p] = c
    owner0[0, c] = -1
    cap0[0, E] = max(fs[0, E] - _popcount(fh[0, E]), 0)
    env_cap0[0, k] = 1
    unk_total0[0] += 1
    unk_cat0[0, k] += 1


@njit(**KERNEL)
def witness_sample_kernel(
    idx: np.ndarray, rows: np.ndarray, cards: np.ndarray, hb: np.ndarray, nb: np.ndarray, size: np.ndarray,
    cl_holder: np.ndarray, cl_cards: np.ndarray, cl_live: np.ndarray, acc_cards: np.ndarray, acc_live: np.ndarray,
    samples: int, clause_order: np.ndarray, rng: np.random.Generator, witness: np.ndarray, valid: np.ndarray,
    unknown: np.ndarray, fh: np.ndarray, fn: np.ndarray, fs: np.ndarray, gh: np.ndarray, gc: np.ndarray,
    gl: np.ndarray, ga: np.ndarray, gal: np.ndarray, owner0: np.ndarray, cap0: np.ndarray, env_cap0: np.ndarray,
    unk_total0: np.ndarray, unk_cat0: np.ndarray, order: np.ndarray, allowed: np.ndarray, key: np.ndarray,
    owner: np.ndarray, cap: np.ndarray, env_cap: np.ndarray, unk_total: np.ndarray, unk_cat: np.ndarray,
    alive: np.ndarray, q: np.ndarray, w: np.ndarray, div: np.ndarray,
) -> int:  # fmt: skip
    """:meth:`agents.notebook.Notebook._sample_witnesses_reference` in one call: the cells (``rows[j]``,
    ``cards[j]``) of :func:`witness_rows_kernel` in order; a cell that an earlier deal already witnesses is skipped,
    else deals of the facts ``hb``, ``nb``, ``size`` (n, H) of row ``rows[j]`` (game ``idx[rows[j]]``) with the
    card forced into the envelope are drawn one at a time (:func:`sample_deals_kernel`, clauses first in
    ``clause_order``), at most ``samples``, until one is consistent; it becomes the witness of each of its envelope
    cards (``witness`` (B, 21, 21), ``valid`` (n, 21) in place). Returns how many rows still have an ``unknown``
    (n, 21) cell without a valid witness.

    Why one deal at a time: a consistent deal with the card forced in is found at the first try about 19 times in
    20, and each deal witnesses three cells, so most of the four deals per cell drawn at once were wasted. Why one
    setup per row: forcing a card into the envelope changes the row's setup in a few counters and takes the card
    out of the placement order (:func:`_force_into_envelope`), which costs a fraction of a setup.

    Scratch, one row: the facts ``fh``, ``fn``, ``fs`` (1, H) int64, clauses ``gh`` (1, K) int64, ``gc``
    (1, K, 3) int64, ``gl`` (1, K) bool, accusations ``ga`` (1, P, 3) int64, ``gal`` (1, P) bool; then
    :func:`sample_setup_kernel`'s and :func:`sample_deals_kernel`'s arrays for one deal (``q`` (1,)).
    """
    H = hb.shape[1]
    E = H - 1
    row = -1  # the row whose facts and setup (no card forced) the scratch holds
    unk = 0
    for j in range(rows.shape[0]):
        i, c = rows[j], cards[j]
        if valid[i, c]:
            continue
        g = idx[i]
        if i != row:
            for h in range(H):
                fh[0, h] = hb[i, h]
                fn[0, h] = nb[i, h]
                fs[0, h] = size[i, h]
            for k in range(gl.shape[1]):
                gh[0, k] = cl_holder[g, k]
                gl[0, k] = cl_live[i, k]
                for x in range(3):
                    gc[0, k, x] = cl_cards[g, k, x]
            for a in range(gal.shape[1]):
                gal[0, a] = acc_live[i, a]
                for x in range(3):
                    ga[0, a, x] = acc_cards[g, a, x]
            unk = sample_setup_kernel(fh, fn, fs, owner0, cap0, env_cap0, unk_total0, unk_cat0, order, allowed, key)
            row = i
        p = _force_into_envelope(c, fh, fs, owner0, cap0, env_cap0, unk_total0, unk_cat0, order, unk)
        for _ in range(samples):
            sample_deals_kernel(
                owner0, cap0, env_cap0, unk_total0, unk_cat0, owner, cap, env_cap, unk_total, unk_cat, alive, q,
                allowed, order, 1, gh, gc, gl, clause_order, ga, gal, rng, w, div, unk - 1,
            )  # fmt: skip
            if alive[0]:
                _register_deal(owner[0], E, witness, g, valid, i)
                break
        _release_from_envelope(c, p, fh, fs, owner0, cap0, env_cap0, unk_total0, unk_cat0, order, unk)
    left = 0
    for i in range(unknown.shape[0]):
        for c in range(_C):
            if unknown[i, c] and not valid[i, c]:
                left += 1
                break
    return left


# ---------------------------------------------------------------------------------------------- notebook cells
@njit(**KERNEL)
def pack_rows_kernel(
    idx: np.ndarray,
    has: np.ndarray,
    no: np.ndarray,
    cl_cards: np.ndarray,
    acc_cards: np.ndarray,
    hb: np.ndarray,
    nb: np.ndarray,
    cl_mask: np.ndarray,
    acc_mask: np.ndarray,
) -> None:
    """Games ``idx`` of the notebook's ``has``, ``no`` (B, H, 21) bool as bitmasks ``hb``, ``nb`` (n, H) int64, and
    the clauses' cards ``cl_cards`` (B, K, 3) / ``acc_cards`` (B, A, 3) as ``cl_mask`` (n, K) / ``acc_mask`` (n, A)
    (what :meth:`agents.facts.Facts.bits` gives for those games)."""
    for i in range(idx.shape[0]):
        g = idx[i]
        _pack_cells(has, no, g, hb, nb, i)
        for k in range(cl_mask.shape[1]):
            x = 0
            for j in range(3):
                x |= 1 << np.int64(cl_cards[g, k, j])
            cl_mask[i, k] = x
        for k in range(acc_mask.shape[1]):
            x = 0
            for j in range(3):
                x |= 1 << np.int64(acc_cards[g, k, j])
            acc_mask[i, k] = x


@njit(**KERNEL)
def unpack_rows_kernel(idx: np.ndarray, hb: np.ndarray, nb: np.ndarray, has: np.ndarray, no: np.ndarray) -> None:
    """The bitmasks ``hb``, ``nb`` (n, H) int64 into games ``idx`` of ``has``, ``no`` (B, H, 21) bool."""
    n, H = hb.shape
    for i in range(n):
        g = idx[i]
        for h in range(H):
            for c in range(_C):
                has[g, h, c] = (hb[i, h] >> c) & 1 == 1
                no[g, h, c] = (nb[i, h] >> c) & 1 == 1


@njit(**KERNEL)
def check_witnesses_kernel(
    idx: np.ndarray,
    nb: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    witness: np.ndarray,
    valid: np.ndarray,
) -> None:
    """:func:`valid_deals_kernel` on the notebook's stored witnesses, in place: ``valid`` (n, 21) stays True where
    the witness ``witness[idx[i], c]`` (``witness`` (B, 21, 21) int8) still agrees with the facts of row i.

    ``nb`` (n, H) int64 cells; ``cl_live`` (n, K), ``acc_live`` (n, A) the rows' live flags; ``cl_holder``
    (B, K), ``cl_cards`` (B, K, 3), ``acc_cards`` (B, A, 3) the notebook's clauses (read at ``idx``).
    """
    n, H = nb.shape
    E = H - 1
    for i in range(n):
        g = idx[i]
        for m in range(_C):
            if not valid[i, m]:
                continue
            good = True
            for c in range(_C):
                if (nb[i, witness[g, m, c]] >> c) & 1:
                    good = False
                    break
            valid[i, m] = good and _clauses_hold(
                witness[g, m], g, i, cl_holder, cl_cards, cl_live, acc_cards, acc_live, E
            )


@njit(**KERNEL)
def deal_weights_kernel(q: np.ndarray, alive: np.ndarray, samples: int, out: np.ndarray) -> None:
    """``out`` (n, samples) = :func:`agents.deal_sampling.deal_weights_reference` of the proposal probabilities ``q``
    (N,) and ``alive`` (N,) bool of n games' deals (N = n * samples): the same operations (the smallest live q
    divided by each live deal's q, summed deal by deal, each divided by the sum)."""
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


# ---------------------------------------------------------------------------------------------- sampled deals summed
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
            for c in range(_W0):
                if owner[i, m, c] == E:
                    s = c
                    break
            wp = 0
            for c in range(_W0, _R0):
                if owner[i, m, c] == E:
                    wp = c - _W0
                    break
            r = 0
            for c in range(_R0, C):
                if owner[i, m, c] == E:
                    r = c - _R0
                    break
            out[i, (s * 6 + wp) * 9 + r] += w[i, m]


@njit(**KERNEL)
def envelope_known_kernel(has: np.ndarray, idx: np.ndarray, E: int, out: np.ndarray) -> None:
    """``out`` (n, 3): per category, the first envelope card (holder ``E``) of ``has`` (B, H, 21) in games ``idx``,
    or -1."""
    for i in range(idx.shape[0]):
        for k in range(3):
            out[i, k] = _envelope_card(has, idx[i], E, k)


# ---------------------------------------------------------------------------------------------- deal information
@njit(**INLINE)
def _ent(p: float) -> float:
    """:func:`agents.deducer._entropy_terms` of one probability."""
    p = min(max(p, 0.0), 1.0)
    return -p * np.log2(p) if p > 1e-12 else 0.0


@njit(**KERNEL)
def deal_information_kernel(
    prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool, out: np.ndarray
) -> None:
    """:func:`agents.deducer.information_reference` into ``out`` (n, T): the expected information (bits) about the
    whole deal of suggesting each triple of ``cards`` (n, T, 3), from ``prob`` (n, H, 21) and the seats asked
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


# ---------------------------------------------------------------------------------------------- notebook propagation
@njit(**KERNEL)
def propagate_front_kernel(
    idx: np.ndarray,
    has: np.ndarray,
    no: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    exact: bool,
    exact_triples: int,
    wvalid: np.ndarray,
    witness: np.ndarray,
    hb: np.ndarray,
    nb: np.ndarray,
    sz: np.ndarray,
    clh: np.ndarray,
    cl_mask: np.ndarray,
    cl_live_rows: np.ndarray,
    acc_mask: np.ndarray,
    acc_live_rows: np.ndarray,
    bad: np.ndarray,
    unknown: np.ndarray,
    valid: np.ndarray,
    snap: np.ndarray,
    unit: np.ndarray,
) -> int:
    """The start of :meth:`agents.notebook.Notebook.propagate` for games ``idx`` in one call; returns how many rows
    still need a witness (sampling or search, left to Python).

    The notebook's arrays (``has`` .. ``acc_live``, ``wvalid``, ``witness``) are read. Written, per row: the facts
    as bitmasks (``hb`` .. ``acc_live_rows``, a :class:`agents.facts.FactBits`: :meth:`Notebook.bits`) closed by
    :func:`fixpoint_kernel` (``bad`` where contradictory); then with ``exact`` the open envelope cells
    ``unknown`` (n, 21) (none in a contradictory row, or where more than ``exact_triples`` >= 0 solution
    hypotheses are left) and ``valid`` (n, 21) where a stored witness still holds (:func:`check_witnesses_kernel`),
    as ``Notebook._exact_envelope`` computes them. Scratch of the fixpoint: ``snap`` (2, H), ``unit`` (K,).
    """
    n, H = hb.shape
    E = H - 1
    pack_rows_kernel(idx, has, no, cl_cards, acc_cards, hb, nb, cl_mask, acc_mask)
    for i in range(n):
        g = idx[i]
        for h in range(H):
            sz[i, h] = size[g, h]
        for k in range(cl_live.shape[1]):
            clh[i, k] = cl_holder[g, k]
            cl_live_rows[i, k] = cl_live[g, k]
        for k in range(acc_live.shape[1]):
            acc_live_rows[i, k] = acc_live[g, k]
        bad[i] = False
    fixpoint_kernel(hb, nb, sz, clh, cl_mask, cl_live_rows, acc_mask, acc_live_rows, 100, bad, snap, unit)
    if not exact:
        return 0
    for i in range(n):
        open_env = ~hb[i, E] & ~nb[i, E] & _FULL
        if bad[i]:
            open_env = 0
        if exact_triples >= 0:
            triples = 1
            for cat in range(3):
                triples *= _popcount(~nb[i, E] & _CAT[cat])
            if triples > exact_triples:
                open_env = 0
        for c in range(_C):
            unknown[i, c] = (open_env >> c) & 1 == 1
            valid[i, c] = wvalid[idx[i], c] and unknown[i, c]
    check_witnesses_kernel(idx, nb, cl_holder, cl_cards, cl_live_rows, acc_cards, acc_live_rows, witness, valid)
    todo = 0
    for i in range(n):
        for c in range(_C):
            if unknown[i, c] and not valid[i, c]:
                todo += 1
                break
    return todo


@njit(**KERNEL)
def propagate_back_kernel(
    idx: np.ndarray,
    hb: np.ndarray,
    nb: np.ndarray,
    cl_live_rows: np.ndarray,
    acc_live_rows: np.ndarray,
    bad_rows: np.ndarray,
    has: np.ndarray,
    no: np.ndarray,
    cl_live: np.ndarray,
    acc_live: np.ndarray,
    bad: np.ndarray,
) -> None:
    """The end of :meth:`agents.notebook.Notebook.propagate`: the rows' closed facts back into games ``idx`` of the
    notebook (cells, live flags; ``bad`` or-ed)."""
    unpack_rows_kernel(idx, hb, nb, has, no)
    for i in range(idx.shape[0]):
        g = idx[i]
        for k in range(cl_live.shape[1]):
            cl_live[g, k] = cl_live_rows[i, k]
        for k in range(acc_live.shape[1]):
            acc_live[g, k] = acc_live_rows[i, k]
        bad[g] = bad[g] or bad_rows[i]


@njit(**INLINE)
def _permute_live(rng: np.random.Generator, live: np.ndarray, out: np.ndarray) -> int:
    """``rng.permutation(np.flatnonzero(live))`` (:func:`agents.deal_sampling.random_clause_order`) into ``out[:m]``;
    returns m. numpy's shuffle (Fisher-Yates from the last slot, numpy's bounded integers, as numba's own
    ``Generator.shuffle`` draws them), without the array that ``permutation`` allocates: the same order from the
    same numbers, and nothing drawn for fewer than two slots."""
    m = 0
    for k in range(live.shape[0]):
        if live[k]:
            out[m] = k
            m += 1
    for i in range(m - 1, 0, -1):
        j = np.intp(random_interval(rng.bit_generator, i))
        if i != j:
            t = out[j]
            out[j] = out[i]
            out[i] = t
    return m


@njit(**KERNEL)
def propagate_kernel(
    idx, has, no, size, cl_holder, cl_cards, cl_live, acc_cards, acc_live, exact, exact_triples, wvalid, witness,
    bad_games, samples, rng, hb, nb, sz, clh, cl_mask, cl_live_rows, acc_mask, acc_live_rows, bad, unknown, valid,
    snap, unit, rows, cards, live_cols, clause_order, fh, fn, fs, gh, gc, gl, ga, gal, owner0, cap0, env_cap0,
    unk_total0, unk_cat0, order, allowed, key, owner, cap, env_cap, unk_total, unk_cat, alive, q, w, div,
) -> int:  # fmt: skip
    """:meth:`agents.notebook.Notebook.propagate` of games ``idx`` in one call, up to the search: returns 0 when it
    is done, else the rows whose open envelope cells still lack a witness after sampling (Python then searches
    them, stores ``valid`` in ``wvalid`` and writes back with :func:`propagate_back_kernel`).

    The steps, each a kernel of its own that the tests compare with its numpy statement:
    :func:`propagate_front_kernel` (packing, fixpoint, the cells to decide, the stored witnesses), then with
    ``exact`` and up to ``samples`` forced deals per cell :func:`witness_rows_kernel` and
    :func:`witness_sample_kernel`, the clauses satisfied first in the order :func:`_permute_live` draws from
    ``rng``; then the write-back (``valid`` into ``wvalid``; :func:`propagate_back_kernel`, ``bad_games`` or-ed).
    Why one call: a notebook propagates on nearly every action of its player, and the half-dozen calls with
    their scratch arrays cost more than the work in most of them. The arguments after ``rng`` are scratch, as
    those kernels take them (``rows``, ``cards`` (n * 21,) int64, ``live_cols`` (K,) bool, ``clause_order`` (K,)
    int64).
    """
    todo = propagate_front_kernel(
        idx, has, no, size, cl_holder, cl_cards, cl_live, acc_cards, acc_live, exact, exact_triples, wvalid, witness,
        hb, nb, sz, clh, cl_mask, cl_live_rows, acc_mask, acc_live_rows, bad, unknown, valid, snap, unit,
    )  # fmt: skip
    n = idx.shape[0]
    if exact:
        if todo:
            left = 1
            if samples > 0:
                R = witness_rows_kernel(unknown, valid, cl_live_rows, rows, cards, live_cols)
                left = 0
                if R > 0:
                    m = _permute_live(rng, live_cols, clause_order)
                    left = witness_sample_kernel(
                        idx, rows[:R], cards[:R], hb, nb, sz, cl_holder, cl_cards, cl_live_rows, acc_cards,
                        acc_live_rows, samples, clause_order[:m], rng, witness, valid, unknown, fh, fn, fs, gh, gc,
                        gl, ga, gal, owner0, cap0, env_cap0, unk_total0, unk_cat0, order, allowed, key, owner, cap,
                        env_cap, unk_total, unk_cat, alive, q, w, div,
                    )  # fmt: skip
            if left:
                return left
        for i in range(n):
            for c in range(_C):
                wvalid[idx[i], c] = valid[i, c]
    propagate_back_kernel(idx, hb, nb, cl_live_rows, acc_live_rows, bad, has, no, cl_live, acc_live, bad_games)
    return 0


# ---------------------------------------------------------------------------------------------- learner features
@njit(**KERNEL)
def belief_features_kernel(
    has: np.ndarray, no: np.ndarray, bad: np.ndarray, gi: np.ndarray, rows: np.ndarray, order: np.ndarray,
    out: np.ndarray,
) -> None:  # fmt: skip
    """:meth:`agents.belief.BeliefTracker.features` of one seat's notebook: for games ``gi`` (k,), into rows ``rows``
    of ``out`` (n, 2 H 21 + 4) int8, the cells ``has`` then ``no`` (B, H, 21) with holders in ``order`` (H,), then
    per category whether its envelope card is proved, then "solved" (three proved and no contradiction)."""
    H = order.shape[0]
    E = has.shape[1] - 1
    hw = H * _C
    for j in range(gi.shape[0]):
        g, r = gi[j], rows[j]
        for a in range(H):
            h = order[a]
            for c in range(_C):
                out[r, a * _C + c] = has[g, h, c]
                out[r, hw + a * _C + c] = no[g, h, c]
        for cat in range(3):
            out[r, 2 * hw + cat] = _envelope_card(has, g, E, cat) >= 0
        out[r, 2 * hw + 3] = _solved(has, bad, g, E)


# ---------------------------------------------------------------------------------------------- deducer's choices
_MIN_LEFT = 1.25  # agents.refutation.MIN_LEFT


@njit(**KERNEL)
def refute_kernel(
    has: np.ndarray, no: np.ndarray, size: np.ndarray, shown_by_me: np.ndarray, shown_to: np.ndarray, idx: np.ndarray,
    suggester: np.ndarray, mask: np.ndarray, noise: np.ndarray, out: np.ndarray, prob: np.ndarray, w: np.ndarray,
    hb: np.ndarray, nb: np.ndarray,
) -> None:  # fmt: skip
    """The notebook players' refutation (:mod:`agents.refutation`), compiled: ``out`` (n,) int64 the SHOW action of
    :func:`~agents.refutation.choose_refutation` on :func:`~agents.refutation.suggester_candidates`, from the
    notebook's own marginals (``has``, ``no`` (B, H, 21), ``size`` (B, H)), in games ``idx`` (n,) refuting
    ``suggester`` (n,) int64, among the named cards ``mask`` (n, 870) bool allows, with ``noise`` (n, 21) uniform
    numbers (the reference's ``rng.random(legal.shape)``). ``shown_by_me`` (B, P, 21) bool, ``shown_to`` (B, P)
    int64: the notebook's. Scratch ``prob`` (1, H, 21), ``w`` (H, 21) float64, ``hb``, ``nb`` (1, H) int64.

    The same operations as the reference, except that each category's sum of the suggester's probabilities is
    added card by card (numpy's matrix product may add in another order: the last bit can differ). Where one named
    card is held the choice is forced and nothing is scored (most refutations); otherwise only the suggester's row
    of the marginals is computed, the one row read.
    """
    for i in range(idx.shape[0]):
        g, s = idx[i], suggester[i]
        legal = 0
        for c in range(_C):
            if mask[i, _SHOW0 + c]:
                legal += 1
                best = c
        if legal == 1:  # one named card held: the choice is forced (the scores below would pick it)
            out[i] = _SHOW0 + best
            continue
        _pack_cells(has, no, g, hb, nb, 0)
        _marginal_weights(hb, nb, 0, size, g, w)  # the suggester's row of the marginals only: what is read
        for c in range(_C):
            prob[0, s, c] = _marginal((hb[0, s] >> c) & 1 == 1, w[s, c], _card_total(w, c))
        mine_total = 0
        for c in range(_C):
            mine_total += shown_by_me[g, s, c]
        others = max(shown_to[g, s] - mine_total, 0) / 3.0
        b0, b1, b2 = 0.0, 0.0, 0.0
        for k in range(3):
            own = 0.0
            by_me = 0.0
            for c in range(_FIRST_OF[k], _FIRST_OF[k + 1]):
                own += prob[0, s, c]
                by_me += shown_by_me[g, s, c]
            left = max(_CATEGORY_SIZE[k] - own - by_me - others, _MIN_LEFT)
            bits = np.log2(left / (left - 1.0))
            if k == 0:
                b0 = bits
            elif k == 1:
                b1 = bits
            else:
                b2 = bits
        best = 0
        top = -np.inf
        for c in range(_C):
            if not mask[i, _SHOW0 + c]:
                continue
            seen = shown_by_me[g, s, c]
            to_others = False
            if not seen:
                for p in range(shown_by_me.shape[1]):
                    if shown_by_me[g, p, c]:
                        to_others = True
                        break
            leak = 0.0 if seen else (b0 if c < _W0 else (b1 if c < _R0 else b2))
            score = -leak + 1e-3 * to_others + 1e-6 * noise[i, c]
            if score > top:
                top = score
                best = c
        out[i] = _SHOW0 + best


@njit(**KERNEL)
def proved_accusations_kernel(
    has: np.ndarray, bad: np.ndarray, idx: np.ndarray, mask: np.ndarray, phase: np.ndarray, out: np.ndarray
) -> None:
    """``out`` (n,) int64: the ACCUSE action of the proved solution of games ``idx`` where the notebook (``has``
    (B, H, 21), envelope = holder H - 1; ``bad`` (B,)) proves all three envelope cards, the accusation is legal in
    ``mask`` (n, 870) and the phase (``phase`` (n,)) is not a refutation; else -1
    (:meth:`agents.deducer.DeducerAgent.accusations`)."""
    E = has.shape[1] - 1
    for i in range(idx.shape[0]):
        g = idx[i]
        out[i] = -1
        if not _solved(has, bad, g, E) or phase[i] == _REFUTE_PHASE:
            continue
        # an unproved category (a contradictory notebook only) reads as its first card, as the reference's
        e0, e1, e2 = _envelope_card(has, g, E, 0), _envelope_card(has, g, E, 1), _envelope_card(has, g, E, 2)
        action = _ACCUSE0 + _triple(max(e0, 0), max(e1, _W0), max(e2, _R0))
        if mask[i, action]:
            out[i] = action


@njit(**KERNEL)
def naive_probabilities_kernel(
    idx: np.ndarray, seat: int, has_board: bool, naive: bool, allow: np.ndarray, lacks: np.ndarray,
    deviant: np.ndarray, strong_allows: bool, mix: float,
    has: np.ndarray, no: np.ndarray, size: np.ndarray, named: np.ndarray, cl_holder: np.ndarray,
    cl_cards: np.ndarray, cl_live: np.ndarray, acc_cards: np.ndarray, acc_live: np.ndarray, out: np.ndarray,
    hb: np.ndarray, nb: np.ndarray, sz: np.ndarray, clh: np.ndarray, clm: np.ndarray, cll: np.ndarray,
    accm: np.ndarray, accl: np.ndarray, extra: np.ndarray, used: np.ndarray, bad: np.ndarray, snap: np.ndarray,
    unit: np.ndarray, model: np.ndarray, own: np.ndarray, w: np.ndarray, no_extra: np.ndarray,
) -> None:  # fmt: skip
    """The deducer's holder probabilities with the naive-player model (:meth:`agents.deducer.DeducerAgent.
    _probabilities`, the numpy statement), game by game: ``out[g]`` (H, 21) float64 for each game g of ``idx``.

    The notebook's facts (``has``, ``no`` (B, H, 21), ``size`` (B, H), the clauses, ``named`` (B, P, 21)) plus
    what the opponent models assume, closed (:func:`assumed_bits_kernel` on one game at a time, with ``naive``,
    ``allow``, the refuters' ``lacks`` and ``deviant`` and ``strong_allows``: the options of
    :meth:`agents.deducer.DeducerAgent.model_options`; the notebook's own facts where they contradict themselves,
    or add nothing); their marginals, mixed
    as ``mix * model + (1 - mix) * own`` with the notebook's own marginals (``mix >= 1``: the model's alone).
    The same operations as the statement, so the same numbers. Scratch, one game each: ``hb``, ``nb``, ``sz``
    (1, H) int64, ``clh``, ``clm`` (1, K) int64, ``cll`` (1, K) bool, ``accm`` (1, P) int64, ``accl`` (1, P)
    bool, ``extra`` (1, P) int64, ``used``, ``bad`` (1,) bool, ``snap`` (2, H) int64, ``unit`` (K,) int64,
    ``model``, ``own`` (1, H, 21) float64, ``w`` (H, 21) float64; constant ``no_extra`` (0, P, 21) bool (no extra
    facts). The marginals are taken of the facts as bitmasks (:func:`_marginals_bits`: the same numbers as of the
    cells).
    """
    H = has.shape[1]
    for i in range(idx.shape[0]):
        g = idx[i]
        j = slice(i, i + 1)
        assumed_bits_kernel(
            idx[j], seat, has_board, naive, allow[j], no_extra, lacks, deviant, strong_allows, has, no, size, named,
            cl_holder, cl_cards, cl_live, acc_cards, acc_live, hb, nb, sz, clh, clm, cll, accm, accl, used, extra, bad,
            snap, unit, clh,
        )  # fmt: skip
        ok = used[0]  # the assumed facts added something and hold together (else hb, nb are the notebook's own)
        _marginals_bits(hb, nb, 0, size, g, model, 0, w)  # (sz[0] is size[g])
        if mix >= 1.0:
            for h in range(H):
                for c in range(_C):
                    out[g, h, c] = model[0, h, c]
            continue
        if ok:  # the notebook's own facts, as bitmasks again
            _pack_cells(has, no, g, hb, nb, 0)
            _marginals_bits(hb, nb, 0, size, g, own, 0, w)
        else:  # the model is the notebook's own facts: the same marginals, computed once
            for h in range(H):
                for c in range(_C):
                    own[0, h, c] = model[0, h, c]
        rest = 1.0 - mix
        for h in range(H):
            for c in range(_C):
                out[g, h, c] = model[0, h, c] * mix + own[0, h, c] * rest


@njit(**KERNEL)
def goal_rooms_kernel(has: np.ndarray, bad: np.ndarray, idx: np.ndarray, value: np.ndarray) -> None:
    """Room values ``value`` (n, 9) float64 in place: where the notebook (``has`` (B, H, 21), ``bad`` (B,)) proves
    the solution of game ``idx[i]``, its room alone, worth 1; elsewhere negative values read 0
    (:meth:`agents.deducer.DeducerAgent._goal_room_reference`)."""
    E = has.shape[1] - 1
    for i in range(idx.shape[0]):
        g = idx[i]
        if _solved(has, bad, g, E):
            room = min(max(_envelope_card(has, g, E, 2) - _R0, 0), value.shape[1] - 1)
            for r in range(value.shape[1]):
                value[i, r] = 1.0 if r == room else 0.0
        else:
            for r in range(value.shape[1]):
                if value[i, r] < 0.0:
                    value[i, r] = 0.0


@njit(**KERNEL)
def decision_rows_kernel(phase: np.ndarray, accuse: np.ndarray, out: np.ndarray, rows: np.ndarray,
                         counts: np.ndarray) -> None:  # fmt: skip
    """What :meth:`agents.deducer.DeducerAgent.act` decides where, in one pass over its games: ``out`` (n,) int64
    the accusation ``accuse[i]`` where there is one (>= 0), else END_TURN in POST, else -1; the rows still to
    decide by kind, in order, in ``rows`` (3, n) int64 (0: refutations, 1: suggestions, 2: START and MOVE), their
    numbers in ``counts`` (3,) int64. ``phase`` (n,): the games' phases."""
    counts[0] = counts[1] = counts[2] = 0
    for i in range(phase.shape[0]):
        out[i] = -1
        if accuse[i] >= 0:
            out[i] = accuse[i]
            continue
        p = phase[i]
        k = -1
        if p == _POST_PHASE:
            out[i] = _END_TURN
        elif p == _REFUTE_PHASE:
            k = 0
        elif p == _SUGGEST_PHASE:
            k = 1
        elif p == _START_PHASE or p == _MOVE_PHASE:
            k = 2
        if k >= 0:
            rows[k, counts[k]] = i
            counts[k] += 1


# ---------------------------------------------------------------------------------------------- movement choice
@njit(**INLINE)
def _arrival_value(v: np.ndarray, i: int, S: np.ndarray, loc: int) -> float:
    """What reaching location ``loc`` now is worth per turn in game i (:func:`agents.planning._values_from_rows`):
    ``max(v[i, room] if loc is a room else 0, max_r v[i, r] / (1 + S[loc, r]))``, the same operations."""
    R = v.shape[1]
    room0 = S.shape[0] - R
    f = v[i, 0] / (1.0 + S[loc, 0])
    for r in range(1, R):
        x = v[i, r] / (1.0 + S[loc, r])
        if x > f:
            f = x
    now = v[i, loc - room0] if loc >= room0 else 0.0
    return now if now > f else f


@njit(**KERNEL)
def choose_moves_kernel(
    v: np.ndarray, legal: np.ndarray, S: np.ndarray, noise: np.ndarray, use_noise: bool, tie: float, out: np.ndarray
) -> None:
    """:func:`agents.planning.choose_moves` on the empty board's table, compiled: ``out`` (n,) the chosen location
    (0..196), -1 where no MOVE is legal.

    ``v`` (n, 9) room values (clipped at 0), ``legal`` (n, 197) bool legal destinations, ``S`` (197, 9) expected
    turns (:func:`agents.planning.travel_turns`), ``noise`` (n, 197) the uniform numbers that break ties when
    ``use_noise``. The score of a destination is ``max(v[room] if a room else 0, max_r v[r] / (1 + S[loc, r]))``,
    the best scores are those within ``tie`` of the maximum, and the pick among them is the one of highest noise
    (else the first): each step as :func:`agents.planning.move_scores` and ``choose_moves`` compute it, so the
    same destination.
    """
    n, L = legal.shape
    for i in range(n):
        best = -np.inf
        for loc in range(L):
            if legal[i, loc]:
                s = _arrival_value(v, i, S, loc)
                if s > best:
                    best = s
        if best == -np.inf:
            out[i] = -1
            continue
        pick = -1
        key = -1.0
        for loc in range(L):
            if legal[i, loc]:
                s = _arrival_value(v, i, S, loc)
                if s >= best - tie:
                    if not use_noise:
                        pick = loc
                        break
                    if pick < 0 or noise[i, loc] > key:
                        pick = loc
                        key = noise[i, loc]
        out[i] = pick


@njit(**KERNEL)
def turn_start_kernel(
    v: np.ndarray, stay_ok: np.ndarray, passage_ok: np.ndarray, roll_ok: np.ndarray, x: np.ndarray,
    target: np.ndarray, S: np.ndarray, S_roll: np.ndarray, tie: float, out: np.ndarray,
) -> None:  # fmt: skip
    """:func:`agents.planning.turn_start_choice` on the empty board's tables, compiled: ``out`` (n,) the action:
    STAY, PASSAGE (the secret passage), ROLL, or END_TURN where none is open.

    ``v`` (n, 9) room values (clipped at 0); ``stay_ok``, ``passage_ok``, ``roll_ok`` (n,) bool the open options;
    ``x`` (n,) the seat's location, ``target`` (n,) the passage's room location from there (-1: none); ``S``,
    ``S_roll`` (197, 9) :func:`agents.planning.turn_tables`. Each value as ``turn_start_choice`` computes it: stay
    is worth the room's value, the passage what arriving in its room is worth (``choose_moves_kernel``'s score),
    a roll ``max_r v[r] / S_roll[x, r]``; the best within ``tie`` in that order wins; if nothing is worth
    anything, roll, else take the passage, else stay.
    """
    n, R = v.shape
    room0 = S.shape[0] - R
    for i in range(n):
        room = min(max(x[i] - room0, 0), R - 1)
        stay = v[i, room] if stay_ok[i] else -np.inf
        t = max(target[i], 0)
        take = _arrival_value(v, i, S, t) if (passage_ok[i] and target[i] >= 0) else -np.inf
        roll = -np.inf
        if roll_ok[i]:
            roll = v[i, 0] / S_roll[x[i], 0]
            for r in range(1, R):
                y = v[i, r] / S_roll[x[i], r]
                if y > roll:
                    roll = y
        best = stay
        if take > best:
            best = take
        if roll > best:
            best = roll
        if best == -np.inf:
            out[i] = _END_TURN
        elif best <= 0.0:  # nothing worth anything: move on
            out[i] = _ROLL if roll_ok[i] else (_PASSAGE if passage_ok[i] else _STAY)
        elif stay >= best - tie:
            out[i] = _STAY
        elif take >= best - tie:
            out[i] = _PASSAGE
        else:
            out[i] = _ROLL


# ---------------------------------------------------------------------------------------------- the deducer's decisions
@njit(**KERNEL)
def _probability_rows(
    idx, late, version, prob, pver, pstamp, stale, allow, seat, has_board, naive, lacks, deviant, strong_allows, mix,
    has, no, size, named, cl_holder, cl_cards, cl_live, acc_cards, acc_live, hb, nb, sz, clh, clm, cll, accm, accl,
    extra, used, bad1, snap, unit, model, own, w, no_extra, rows,
) -> None:  # fmt: skip
    """:meth:`agents.deducer.DeducerAgent.probabilities` of games ``idx`` (m,) into ``rows`` (m, H, 21): the cache
    ``prob`` (B, H, 21) with its notebook ``pver`` and key ``pstamp`` (B,) int64 per game; games whose notebook
    ``version`` or key ``late`` (m,) int64 (the naive model applies) changed are computed again, in order
    (:func:`naive_probabilities_kernel`, ``allow`` = ``late``). Scratch ``stale`` (m,) int64, ``allow`` (m,) bool,
    then the naive kernel's."""
    s = 0
    for j in range(idx.shape[0]):
        g = idx[j]
        if pver[g] != version[g] or pstamp[g] != late[j]:
            stale[s] = g
            allow[s] = late[j] != 0
            s += 1
            pver[g] = version[g]  # (the games of idx are distinct)
            pstamp[g] = late[j]
    if s:
        naive_probabilities_kernel(
            stale[:s], seat, has_board, naive, allow[:s], lacks, deviant, strong_allows, mix, has, no, size, named,
            cl_holder, cl_cards, cl_live, acc_cards, acc_live, prob, hb, nb, sz, clh, clm, cll, accm, accl, extra,
            used, bad1, snap, unit, model, own, w, no_extra,
        )  # fmt: skip
    for j in range(idx.shape[0]):
        g = idx[j]
        for h in range(prob.shape[1]):
            for c in range(_C):
                rows[j, h, c] = prob[g, h, c]


@njit(**INLINE)
def _draw(rng: np.random.Generator, out: np.ndarray, count: int) -> None:
    """``out[:count]`` = ``rng.random(count)``: numpy's numbers, in its order."""
    for j in range(count):
        out[j] = rng.random()


@njit(**KERNEL)
def deducer_decisions_kernel(
    idx, phase_all, mask, current, turn_count, late_turns, seat, has, no, size, bad, named, cl_holder, cl_cards,
    cl_live, acc_cards, acc_live, shown_by_me, shown_to, version, prob, pver, pstamp, has_board, naive, lacks, deviant,
    strong_allows, mix, order, refute_all, shortlist, room_shortlist, every_s, every_w, rv, rv_turn, plan_moves, pos,
    passage, S, S_roll, tie, rng, out, rows, counts,
    ph, accuse, sub, msub, sub2, prows, draws, noise, cand, best, pre, memo, reps, value, u, prob1, w1,
    stale, allow, hb, nb, sz, clh, clm, cll, accm, accl, extra, used, bad1, snap, unit, model, own, w, no_extra,
) -> None:  # fmt: skip
    """:meth:`agents.deducer.DeducerAgent.act` after the notebook's update, in one call: the accusations of proved
    solutions, END_TURN in POST, the refutations (:func:`refute_kernel`), the suggestions
    (:func:`best_suggestion_kernel` on the cached probabilities, :func:`_probability_rows`, and on the board every
    suspect and weapon in the room one stands in, else :func:`candidates_kernel`'s shortlist) and the room values of
    the games at START or MOVE (cached per turn in ``rv`` (B, 9) / ``rv_turn`` (B,), computed again at START:
    :func:`room_values_kernel`, :func:`goal_rooms_kernel`).

    With ``plan_moves`` the START and MOVE choices follow on the empty board's tables (:func:`turn_start_kernel`,
    :func:`choose_moves_kernel`, as :func:`agents.planning.turn_start_choice` and ``choose_moves`` call them: the
    seats' squares ``pos`` (B, P), the secret ``passage`` of each location (197,), ``S``, ``S_roll`` (197, 9), ties
    within ``tie``), so ``out`` (n,) int64 gets every action; without, it gets all but those, whose rows
    :func:`decision_rows_kernel` leaves in ``rows[2, :counts[2]]`` for the Python planner (around blocking tokens).
    Every random number is drawn from ``rng`` where and in the order the Python path draws it (refutation ties,
    candidate and suggestion ties, move ties; rows by kind, in order), so the choices and the generator's state are
    the same. Why one call: these steps were some forty numpy calls and kernel calls per action, about as much time
    as the kernels' own work at batch 1024.

    Games ``idx`` (n,) and their ``mask`` (n, 870) bool; per game of the batch ``phase_all``, ``current`` (whose
    turn it is: whose suggestion a refutation answers) and ``turn_count`` (B,); the naive model applies from turn
    ``late_turns`` (float) on. The notebook's arrays, the probability cache (``prob``, ``pver``, ``pstamp``), the
    naive model's options, the seats asked in turn ``order`` (>= n, P - 1), the card rows ``every_s``, ``every_w``
    (>= n, 6) int64 of the board's suggestions. The rest is scratch: ``ph``, ``accuse``, ``sub``, ``sub2`` (n,)
    int64, ``msub`` (n, 870) bool, ``prows`` (n, H, 21), ``draws`` (>= 42 n,), ``noise``
    (n, >= max(T, 197)), ``cand`` (n, 3, >= k + 1),
    ``best`` (n,) int64, ``pre`` (3 (P - 1) + 2, 21), ``memo`` (>= 2 T,), ``reps`` (3, >= max(k + 1, 9)), ``value``
    (n, 9), ``u`` (21,), the refutation's ``prob1`` (1, H, 21), ``w1`` (H, 21) (and ``hb``, ``nb``); then
    :func:`_probability_rows`'s (T: triples per suggestion, k: the longer shortlist).
    """
    n = idx.shape[0]
    for i in range(n):
        ph[i] = phase_all[idx[i]]
    phase = ph[:n]
    proved_accusations_kernel(has, bad, idx, mask, phase, accuse)
    decision_rows_kernel(phase, accuse, out, rows, counts)
    # Refutations: the card that teaches the suggester least; ties by rng.random((k, 21)).
    k = counts[0]
    if k:
        for j in range(k):
            i = rows[0, j]
            sub[j] = idx[i]
            sub2[j] = current[idx[i]]
            for a in range(_SHOW0, _ACCUSE0):  # what refute_kernel reads of the mask
                msub[j, a] = mask[i, a]
        for j in range(k):  # rng.random((k, 21)), row by row
            for c in range(_C):
                noise[j, c] = rng.random()
        refute_kernel(
            has, no, size, shown_by_me, shown_to, sub[:k], sub2[:k], msub[:k], noise[:k, :_C], best[:k], prob1, w1,
            hb, nb,
        )  # fmt: skip
        for j in range(k):
            out[rows[0, j]] = best[j]
    # The probabilities of the games that suggest now and of those whose room values are computed again (at START,
    # or at MOVE in a new turn): one pass over both (distinct games; no random numbers drawn there).
    k = counts[1]
    for j in range(k):
        i = rows[1, j]
        sub[j] = idx[i]
        sub2[j] = 1 if turn_count[idx[i]] >= late_turns else 0
        for a in range(_SUGGEST0, _SHOW0):  # the suggestions' part of the mask: all that is read of it
            msub[j, a] = mask[i, a]
    m = 0
    for j in range(counts[2]):
        i = rows[2, j]
        g = idx[i]
        if rv_turn[g] != turn_count[g] or phase[i] == _START_PHASE:
            sub[k + m] = g
            sub2[k + m] = 1 if turn_count[g] >= late_turns else 0
            best[k + m] = turn_count[g]
            m += 1
    if k + m:
        _probability_rows(
            sub[: k + m], sub2[: k + m], version, prob, pver, pstamp, stale, allow, seat, has_board, naive, lacks,
            deviant, strong_allows, mix, has, no, size, named, cl_holder, cl_cards, cl_live, acc_cards, acc_live, hb,
            nb, sz, clh, clm, cll, accm, accl, extra, used, bad1, snap, unit, model, own, w, no_extra,
            prows[: k + m],
        )  # fmt: skip
    # Suggestions: the legal triple of highest envelope information.
    if k:
        if has_board:  # every suspect and weapon, in the room the mask names (R-G1)
            for j in range(k):
                room = -1
                for a in range(_SUGGEST0, _SHOW0):
                    if msub[j, a]:
                        room = _room_of(a - _SUGGEST0)
                        break
                cand[j, 2, 0] = _R0 + min(max(room, 0), 8)
            cs, cw, cr = every_s[:k], every_w[:k], cand[:k, 2, :1]
        else:
            kk = shortlist + 1
            _draw(rng, draws, 2 * k * _C)
            candidates_kernel(
                prows[:k], seat, shortlist, draws[: k * _C], draws[k * _C : 2 * k * _C], cand[:k, :, :kk], u
            )  # fmt: skip
            cs, cw, cr = cand[:k, 0, :kk], cand[:k, 1, :kk], cand[:k, 2, :kk]
        T = cs.shape[1] * cw.shape[1] * cr.shape[1]
        for j in range(k):  # rng.random((k, T))
            for t in range(T):
                noise[j, t] = rng.random()
        best_suggestion_kernel(
            prows[:k], cs, cw, cr, order[:k], refute_all, msub[:k, _SUGGEST0:_SHOW0], noise[:k, :T], best[:k], pre,
            memo[: 2 * T], reps,
        )  # fmt: skip
        for j in range(k):
            out[rows[1, j]] = _SUGGEST0 + best[j] if best[j] >= 0 else -1
    # Room values of those games (rows k .. k + m - 1 of the scratch), into the per-turn cache.
    if m:
        _draw(rng, draws, 2 * m * _C)
        kk = room_shortlist + 1
        pr = prows[k : k + m]
        candidates_kernel(pr, seat, room_shortlist, draws[: m * _C], draws[m * _C : 2 * m * _C], cand[:m, :, :kk], u, 2)
        room_values_kernel(pr, cand[:m, 0, :kk], cand[:m, 1, :kk], order[:m], refute_all, value[:m], pre, reps)
        goal_rooms_kernel(has, bad, sub[k : k + m], value[:m])
        for j in range(m):
            g = sub[k + j]
            for r in range(9):
                rv[g, r] = value[j, r]
            rv_turn[g] = best[k + j]
    k = counts[2]
    if not plan_moves or k == 0:
        return
    # The turn's start: stay, take the passage or roll (no random numbers).
    m = 0
    for j in range(k):
        i = rows[2, j]
        if phase[i] == _START_PHASE:
            g = idx[i]
            for r in range(9):
                value[m, r] = max(rv[g, r], 0.0)
            x = pos[g, seat]
            sub[m] = x
            sub2[m] = passage[x]
            msub[m, 0] = mask[i, _STAY]
            msub[m, 1] = mask[i, _PASSAGE]
            msub[m, 2] = mask[i, _ROLL]
            m += 1
    if m:
        turn_start_kernel(value[:m], msub[:m, 0], msub[:m, 1], msub[:m, 2], sub[:m], sub2[:m], S, S_roll, tie,
                          best[:m])  # fmt: skip
        m = 0
        for j in range(k):
            i = rows[2, j]
            if phase[i] == _START_PHASE:
                out[i] = best[m]
                m += 1
    # The move: the destination of best value per turn, ties by rng.random((m, 197)).
    m = 0
    L = S.shape[0]
    for j in range(k):
        i = rows[2, j]
        if phase[i] != _START_PHASE:
            g = idx[i]
            for r in range(9):
                value[m, r] = max(rv[g, r], 0.0)
            for a in range(L):
                msub[m, a] = mask[i, _MOVE0 + a]
            m += 1
    if m:
        for j in range(m):  # rng.random((m, 197))
            for a in range(L):
                noise[j, a] = rng.random()
        choose_moves_kernel(value[:m], msub[:m, :L], S, noise[:m, :L], True, tie, best[:m])
        m = 0
        for j in range(k):
            i = rows[2, j]
            if phase[i] != _START_PHASE:
                out[i] = _MOVE0 + best[m] if best[m] >= 0 else -1
                m += 1
