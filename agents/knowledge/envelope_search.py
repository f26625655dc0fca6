"""The exact search for the envelope's cards, and the check that stored witness deals still fit the facts.

Propagation (:mod:`cluedo_env.agents.knowledge.propagation`) is sound but not complete: a deal-level argument can
combine
several clauses and hand sizes. :func:`search_envelope` decides envelope cells *exactly* by a batched
backtracking search (place the card, propagate, branch on the most constrained card, back up on a
contradiction), which either finds a consistent deal with the card in the envelope (a witness) or proves the
card is not there; :func:`valid_deals` checks whether stored witnesses still agree with new facts. Both run as
compiled loops over games (the kernels at the end of this module).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import INLINE, KERNEL
from cluedo_env.agents.knowledge.facts import FULL, FactBits, Facts, bit_count, unpack
from cluedo_env.agents.knowledge.propagation import fixpoint_kernel
from cluedo_env.agents.knowledge.types import NodeScratch, SearchState
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS


def _search_start(
    facts: FactBits, query: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A search's queries (game, card) ((Q,), (Q,)): the cells of ``query`` (n, 21), default every open envelope
    cell; and its empty witness arrays ((n, 21, 21) int8, (n, 21) bool)."""
    hb, nb = facts.hb, facts.nb
    n, H = hb.shape
    if query is None:
        query = unpack(~hb[:, H - 1] & ~nb[:, H - 1] & FULL)
    qg, qc = np.nonzero(query)
    return qg, qc, np.zeros((n, NUM_CARDS, NUM_CARDS), np.int8), np.zeros((n, NUM_CARDS), bool)


def search_envelope(
    facts: FactBits,
    query: np.ndarray | None = None,
    max_rounds: int = 400,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decide the envelope cells ``query`` (n, 21) bool (default: every open one) exactly: (decided (n,) bool,
    witness (n, 21, 21) int8 deals, witnessed (n, 21) bool). Compiled (:func:`search_envelope_kernel`, query by
    query within each round); ``tests/references/envelope_search.py`` states it in numpy (the same nodes, random
    numbers, witnesses and proofs)."""
    hb, nb, size = facts.hb, facts.nb, facts.size
    n, H = hb.shape
    qg, qc, witness, witnessed = _search_start(facts, query)
    Q = len(qg)
    if Q == 0:
        return np.ones(n, bool), witness, witnessed
    status = np.empty(Q, np.int8)
    K, NA, D, i64 = facts.cl_live.shape[1], facts.acc_live.shape[1], NUM_CARDS + 1, np.int64
    facts64 = FactBits(
        np.ascontiguousarray(hb, i64), nb, np.asarray(size, i64), np.asarray(facts.cl_holder, i64),
        np.asarray(facts.cl_mask, i64), np.ascontiguousarray(facts.cl_live), np.asarray(facts.acc_mask, i64),
        np.ascontiguousarray(facts.acc_live),
    )  # fmt: skip
    state = SearchState(np.empty((Q, D, H), i64), np.empty((Q, D, H), i64), np.empty((Q, D), i64),
                        np.empty((Q, D, H), bool), np.empty(Q, i64), np.empty(Q, i64))  # fmt: skip
    node = FactBits(
        np.empty((1, H), i64), np.empty((1, H), i64), np.empty((1, H), i64), np.empty((1, K), i64),
        np.empty((1, K), i64), np.empty((1, K), bool), np.empty((1, NA), i64), np.empty((1, NA), bool),
    )  # fmt: skip
    scratch = NodeScratch(node, np.empty(1, bool), np.empty((2, H), i64), np.empty(K, i64), np.empty(H))
    search_envelope_kernel(
        facts64, qg.astype(i64), qc.astype(i64), max_rounds, rng or np.random.default_rng(0), witness, witnessed,
        status, state, scratch,
    )  # fmt: skip
    decided = np.ones(n, bool)
    decided[qg[status == 0]] = False
    return decided, witness, witnessed


def valid_deals(owner: np.ndarray, facts: Facts) -> np.ndarray:
    """(n, W) bool: deals ``owner`` (n, W, 21) (holder per card) agree with the facts and clauses.

    Reads ``no``, the clauses and their live flags of ``facts`` (``has`` and sizes are not
    checked: deals are built complete, and sizes never change). ``no`` must be closed under
    rule 1 (a located card is absent elsewhere), as after :func:`fixpoint`. Compiled
    (:func:`cluedo_env.agents.knowledge.envelope_search.valid_deals_kernel`);
    :func:`tests.references.envelope_search.valid_deals_reference` is the numpy statement.
    """
    n, W, _ = owner.shape
    ok = np.empty((n, W), bool)
    i64 = np.int64
    valid_deals_kernel(
        np.ascontiguousarray(owner, np.int8), np.ascontiguousarray(facts.no), np.asarray(facts.cl_holder, i64),
        np.asarray(facts.cl_cards, i64), np.ascontiguousarray(facts.cl_live), np.asarray(facts.acc_cards, i64),
        np.ascontiguousarray(facts.acc_live), ok,
    )  # fmt: skip
    return ok


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**INLINE)
def _search_expand(
    q: int, d: int, qg: np.ndarray, facts: FactBits, scratch: NodeScratch, state: SearchState, witness: np.ndarray,
    witnessed: np.ndarray,
) -> None:  # fmt: skip
    """The ``expand`` of :func:`search_envelope_reference` for one child (``ch``, ``cn`` (1, H)
    int64, propagated in place) of query q, put at depth d: closed by :func:`fixpoint_kernel` on its game's clauses;
    a complete consistent deal is registered as the witness of each of its envelope cards, an incomplete one stored
    with the unplaced card of fewest possible holders to branch on next. The node is ``scratch.node``'s cells; the
    game's facts ``facts``; the stacks ``state``."""
    _, _, size, cl_holder, cl_mask, cl_live, acc_mask, acc_live = facts
    ch, cn, sz1, clh1, clm1, cll1, accm1, accl1 = scratch.node
    bad1, snap, unit = scratch.bad, scratch.snap, scratch.unit
    st_h, st_n, br_card, tried, depth, _ = state
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
    fixpoint_kernel(ch, cn, sz1, clh1, clm1, cll1, accm1, accl1, np.int64(100), bad1, snap, unit)
    if bad1[0]:
        return
    located = 0
    for h in range(H):
        located |= ch[0, h]
    if located == FULL:  # a consistent deal: it witnesses every card it puts in the envelope
        for c in range(NUM_CARDS):
            if (ch[0, E] >> c) & 1:
                for c2 in range(NUM_CARDS):
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
    for c in range(NUM_CARDS):  # the unplaced card with the fewest possible holders (the first of those)
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
    facts: FactBits, qg: np.ndarray, qc: np.ndarray, max_rounds: int, rng: np.random.Generator, witness: np.ndarray,
    witnessed: np.ndarray, status: np.ndarray, state: SearchState, scratch: NodeScratch,
) -> None:  # fmt: skip
    """:func:`search_envelope_reference` (the numpy statement) query by query within each round:
    the same nodes, the same random numbers from ``rng`` (a round draws H numbers per query that branches, queries
    in order), the same witnesses (``witness`` (n, 21, 21) int8, ``witnessed`` (n, 21) bool) and the same proofs
    (``facts.nb`` (n, H) int64 in place). The facts ``facts`` (n, ...), a
    :class:`cluedo_env.agents.knowledge.facts.FactBits`
    with int64 holders; queries ``qg``, ``qc`` (Q,) int64 game and card. Written: ``status`` (Q,) int8 (1
    possible, -1 impossible, 0 open). Scratch: the search stacks ``state`` (a
    :class:`cluedo_env.agents.knowledge.types.SearchState`), one node and the fixpoint's arrays ``scratch`` (a
    :class:`cluedo_env.agents.knowledge.types.NodeScratch`)."""
    hb, nb, size = facts.hb, facts.nb, facts.size
    ch, cn = scratch.node.hb, scratch.node.nb
    key = scratch.key
    st_h, st_n, br_card, tried, depth, go = state
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
        _search_expand(q, 0, qg, facts, scratch, state, witness, witnessed)
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
                placed = bit_count(st_h[q, d, h])
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
            _search_expand(q, d + 1, qg, facts, scratch, state, witness, witnessed)
    for q in range(Q):
        if status[q] == 0 and witnessed[qg[q], qc[q]]:
            status[q] = 1
        if status[q] == 0 and depth[q] < 0:
            status[q] = -1
        if status[q] == -1:  # no consistent deal puts the card in the envelope
            nb[qg[q], E] |= 1 << qc[q]


@njit(**INLINE)
def clauses_hold(deal, g, i, cl_holder, cl_cards, cl_live, acc_cards, acc_live, E) -> bool:
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
    """:func:`tests.references.envelope_search.valid_deals_reference` into ``ok`` (n, W) bool.

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
            ok[i, m] = good and clauses_hold(owner[i, m], i, i, cl_holder, cl_cards, cl_live, acc_cards, acc_live, E)
