"""Sound propagation over one seat's facts, and the exact search for the envelope's cards.

The facts (:class:`agents.facts.Facts`, on bitmasks :class:`agents.facts.FactBits`) are what
one seat knows of each game of a batch: has / has-not cells per holder and card, hand sizes,
"holds at least one of" clauses and "the envelope lacks at least one of" clauses. This module
draws every conclusion from them that the rules below allow; :class:`agents.notebook.Notebook`
keeps the facts up to date and calls it.

:func:`fixpoint` closes the facts under these rules, batched over games, until nothing
changes:

1. a card located at one holder is absent from every other holder;
2. a card that every holder but one lacks is held by that one;
3. a holder with as many known cards as its hand size holds nothing else;
4. a holder whose possible cards are just enough for its hand size holds all of them;
5. the envelope holds exactly one card per category (its own hand sizes: 1, 1, 1);
6. a clause with no card left possible is a contradiction, with one card left a fact,
   and a clause with a held card is satisfied and dropped;
7. an accusation clause with two of its cards known to be in the envelope rules out the third.

Every rule is sound: it only draws conclusions true in every deal consistent with what
the seat knows, so the truth is never ruled out (``tests/test_deducer.py`` checks this
against the hidden state of thousands of positions). The rules run on bitmasks (one
int64 per holder, bit c = card c: :func:`fixpoint_bits`), in a compiled loop over games
(:mod:`agents.deduction_kernels`; :func:`fixpoint_bits_reference` is the same in numpy).

Propagation alone is not complete: a deal-level argument can combine several clauses and
hand sizes. :func:`search_envelope` decides envelope cells *exactly* by a batched
backtracking search (place the card, propagate, branch on the most constrained card, back
up on a contradiction), which either finds a consistent deal with the card in the envelope
(a witness) or proves the card is not there; :func:`valid_deals` checks whether stored
witnesses still agree with new facts. Optional failed-literal probing (:func:`probe`) is kept
for comparison.
"""

from __future__ import annotations

import numpy as np

from agents.deduction_kernels import fixpoint_kernel, search_envelope_kernel, valid_deals_kernel
from agents.facts import CAT_BITS, FULL, POW2, FactBits, Facts, popcount, unpack
from cluedo_env.rules.cards import NUM_CARDS


def fixpoint(facts: Facts, max_iter: int = 100) -> np.ndarray:
    """Close the facts of n games under the rules of the module docstring, in place.

    ``facts.has``, ``facts.no`` and ``facts.cl_live`` / ``facts.acc_live`` are updated in place
    (satisfied clauses drop). Returns (n,) bool: the facts are contradictory (no consistent
    deal exists). Works on bitmasks (:func:`fixpoint_bits`).
    """
    bits = facts.bits()
    bad = fixpoint_bits(bits, max_iter)
    facts.store_cells(bits)
    return bad


def fixpoint_bits(facts: FactBits, max_iter: int = 100) -> np.ndarray:
    """:func:`fixpoint` on bitmasks: ``hb``, ``nb``, ``cl_live`` and ``acc_live`` of ``facts`` in place.

    Runs the compiled :func:`agents.deduction_kernels.fixpoint_kernel` (the same passes as
    :func:`fixpoint_bits_reference`, game by game). ``hb`` and ``nb`` must be int64 arrays
    (as :meth:`agents.facts.Facts.bits` makes them), written in place.
    """
    hb, nb, size, cl_holder, cl_mask, cl_live, acc_mask, acc_live = facts
    n, H = hb.shape
    bad = np.zeros(n, bool)
    if n == 0:
        return bad
    i64 = np.int64
    fixpoint_kernel(
        hb, nb, np.asarray(size, i64), np.asarray(cl_holder, i64), np.asarray(cl_mask, i64), cl_live,
        np.asarray(acc_mask, i64), acc_live, max_iter, bad, np.zeros((2, H), i64), np.zeros(cl_live.shape[1], i64),
    )  # fmt: skip
    return bad


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


def probe(facts: Facts, cells: str = "envelope", rounds: int = 3) -> np.ndarray:
    """Failed-literal reasoning on top of :func:`fixpoint`, in place; returns the contradiction flags.

    For every unknown cell (only the envelope's with ``cells="envelope"``, every holder's with
    ``"all"``), assume it holds (and with ``"all"`` also that it does not), propagate, and
    keep the opposite conclusion when the assumption is contradictory. Repeated up to
    ``rounds`` times while it finds something. Sound: a contradiction proves that no
    consistent deal has the assumed value.
    """
    bits = facts.bits()
    hb, nb = bits.hb, bits.nb
    bad = fixpoint_bits(bits)
    n, H = hb.shape
    E = H - 1
    for _ in range(rounds):
        unknown = unpack(~hb & ~nb & FULL)
        unknown[bad] = False
        if cells == "envelope":
            unknown[:, :E] = False
        g, h, c = np.nonzero(unknown)
        if len(g) == 0:
            break
        found = False
        for value in (True, False) if cells == "all" else (True,):
            sub = bits.take(g)  # copies
            r = np.arange(len(g))
            if value:
                sub.hb[r, h] |= POW2[c]
            else:
                sub.nb[r, h] |= POW2[c]
            pbad = fixpoint_bits(sub)
            if pbad.any():
                found = True
                k = np.flatnonzero(pbad)
                np.bitwise_or.at(nb if value else hb, (g[k], h[k]), POW2[c[k]])
        if not found:
            break
        bad |= fixpoint_bits(bits)
    facts.store_cells(bits)
    return bad


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
    stats: dict | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`search_envelope_reference` compiled (:func:`agents.deduction_kernels.search_envelope_kernel`, query by
    query within each round: the same nodes, random numbers, witnesses and proofs). With ``stats`` (per-query
    outcomes and rounds, for studies) the numpy statement runs instead."""
    if stats is not None:
        return search_envelope_reference(facts, query, max_rounds, rng, stats)
    hb, nb, size = facts.hb, facts.nb, facts.size
    n, H = hb.shape
    qg, qc, witness, witnessed = _search_start(facts, query)
    Q = len(qg)
    if Q == 0:
        return np.ones(n, bool), witness, witnessed
    status = np.empty(Q, np.int8)
    K, NA, D, i64 = facts.cl_live.shape[1], facts.acc_live.shape[1], NUM_CARDS + 1, np.int64
    search_envelope_kernel(
        np.ascontiguousarray(hb, i64), nb, np.asarray(size, i64), np.asarray(facts.cl_holder, i64),
        np.asarray(facts.cl_mask, i64), np.ascontiguousarray(facts.cl_live), np.asarray(facts.acc_mask, i64),
        np.ascontiguousarray(facts.acc_live), qg.astype(i64), qc.astype(i64), max_rounds,
        rng or np.random.default_rng(0), witness, witnessed, status, np.empty((Q, D, H), i64),
        np.empty((Q, D, H), i64), np.empty((Q, D), i64), np.empty((Q, D, H), bool), np.empty(Q, i64),
        np.empty(Q, i64), np.empty((1, H), i64), np.empty((1, H), i64), np.empty((1, H), i64), np.empty((1, K), i64),
        np.empty((1, K), i64), np.empty((1, K), bool), np.empty((1, NA), i64), np.empty((1, NA), bool),
        np.empty(1, bool), np.empty((2, H), i64), np.empty(K, i64), np.empty(H),
    )  # fmt: skip
    decided = np.ones(n, bool)
    decided[qg[status == 0]] = False
    return decided, witness, witnessed


def search_envelope_reference(
    facts: FactBits,
    query: np.ndarray | None = None,
    max_rounds: int = 400,
    rng: np.random.Generator | None = None,
    stats: dict | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decide envelope cells of n games exactly, by a batched backtracking search; ``facts.nb`` in place.

    ``facts`` as :func:`fixpoint_bits` takes them. One query per envelope cell of ``query``
    (n, 21) bool (default: every unknown one): is there a consistent deal with this card in
    the envelope? Each query runs a depth-first search (DPLL): place the card, propagate
    with :func:`fixpoint_bits`, branch on the unplaced card with the fewest possible
    holders (trying them in random order, weighted by their open slots, so that a
    consistent deal is usually found on the first descent), back up on a contradiction.
    All queries advance together, one node each per round. A query that reaches a complete
    consistent deal proves its card possible (and so does every other query of the same
    game whose card that deal puts in the envelope); one whose tree is exhausted proves the
    card is not in the envelope, which is written into ``nb``. Queries still open after
    ``max_rounds`` rounds prove nothing (sound either way).

    Returns (decided (n,) bool: every queried cell was decided; witness (n, 21, 21) int8:
    for each envelope card found possible, a consistent deal (holder of every card) with it
    in the envelope; witnessed (n, 21) bool: which witness rows are filled). ``stats``, if
    given, receives per query its outcome (1, -1, 0 open) and the round that settled it.

    The numpy statement (the readable search, and the path with ``stats``); :func:`search_envelope` runs it
    compiled, and the tests check both give the same.
    """
    hb, nb, size = facts.hb, facts.nb, facts.size
    n, H = hb.shape
    C = NUM_CARDS
    E = H - 1
    qg, qc, witness, witnessed = _search_start(facts, query)
    Q = len(qg)
    if Q == 0:
        return np.ones(n, bool), witness, witnessed
    D = C + 1
    st_h = np.zeros((Q, D, H), np.int64)
    st_n = np.zeros((Q, D, H), np.int64)
    br_card = np.zeros((Q, D), np.int64)
    tried = np.zeros((Q, D, H), bool)
    depth = np.full(Q, -1, np.int64)
    status = np.zeros(Q, np.int8)  # 0 open, 1 possible, -1 impossible
    qa = np.arange(Q)
    shifts = np.arange(C)
    rng = rng or np.random.default_rng(0)

    def expand(q: np.ndarray, d: np.ndarray, ch: np.ndarray, cn: np.ndarray) -> None:
        """Propagate children (ch, cn) of queries q, to be put at depth d."""
        g = qg[q]
        bad = fixpoint_bits(facts.take(g)._replace(hb=ch, nb=cn))
        located = np.bitwise_or.reduce(ch, axis=1)
        done = ~bad & (located == FULL)
        if done.any():
            owner = unpack(ch[done]).argmax(1).astype(np.int8)  # (r, C)
            env = np.nonzero(unpack(ch[done, E]))  # three cards per deal
            rows = g[done][env[0]]
            witness[rows, env[1]] = owner[env[0]]
            witnessed[rows, env[1]] = True
        grow = ~bad & (located != FULL)
        if grow.any():
            q, d, ch, cn, loc = q[grow], d[grow], ch[grow], cn[grow], located[grow]
            st_h[q, d], st_n[q, d] = ch, cn
            nposs = ((~cn[:, :, None] >> shifts) & 1).sum(1)  # (r, C) possible holders per card
            nposs = np.where((loc[:, None] >> shifts) & 1 == 1, 99, nposs)
            br_card[q, d] = nposs.argmin(1)
            tried[q, d] = False
            depth[q] = d

    root_h, root_n = hb[qg].copy(), nb[qg].copy()
    root_h[qa, E] |= POW2[qc]
    expand(qa, np.zeros(Q, np.int64), root_h, root_n)
    settled = np.full(Q, -1)
    for rnd in range(max_rounds):
        status[(status == 0) & witnessed[qg, qc]] = 1
        status[(status == 0) & (depth < 0)] = -1
        settled[(settled < 0) & (status != 0)] = rnd
        run = np.flatnonzero(status == 0)
        if len(run) == 0:
            break
        d = depth[run]
        card = br_card[run, d]
        cand = ((st_n[run, d] >> card[:, None]) & 1 == 0) & ~tried[run, d]
        left = cand.any(1)
        depth[run[~left]] -= 1  # every holder tried: back up
        go = run[left]
        if len(go) == 0:
            continue
        d, card = d[left], card[left]
        slots = np.maximum(size[qg[go]] - popcount(st_h[go, d]), 0) + 0.5
        h = np.where(cand[left], slots * rng.random(slots.shape), -1.0).argmax(1)
        tried[go, d, h] = True
        ch, cn = st_h[go, d].copy(), st_n[go, d].copy()
        ch[np.arange(len(go)), h] |= POW2[card]
        expand(go, d + 1, ch, cn)
    status[(status == 0) & witnessed[qg, qc]] = 1
    status[(status == 0) & (depth < 0)] = -1
    if stats is not None:
        stats.setdefault("status", []).append(status.copy())
        stats.setdefault("settled", []).append(settled)
    out = status == -1
    np.bitwise_or.at(nb, (qg[out], E), POW2[qc[out]])
    decided = np.ones(n, bool)
    decided[qg[status == 0]] = False
    return decided, witness, witnessed


def valid_deals(owner: np.ndarray, facts: Facts) -> np.ndarray:
    """(n, W) bool: deals ``owner`` (n, W, 21) (holder per card) agree with the facts and clauses.

    Reads ``no``, the clauses and their live flags of ``facts`` (``has`` and sizes are not
    checked: deals are built complete, and sizes never change). ``no`` must be closed under
    rule 1 (a located card is absent elsewhere), as after :func:`fixpoint`. Compiled
    (:func:`agents.deduction_kernels.valid_deals_kernel`); :func:`valid_deals_reference` is the numpy statement.
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


def valid_deals_reference(owner: np.ndarray, facts: Facts) -> np.ndarray:
    """:func:`valid_deals` in numpy: the readable reference, used by the tests only."""
    no, cl_holder, cl_cards, cl_live = facts.no, facts.cl_holder, facts.cl_cards, facts.cl_live
    acc_cards, acc_live = facts.acc_cards, facts.acc_live
    n, W, C = owner.shape
    E = no.shape[1] - 1
    o = owner.astype(np.int64)
    r = np.arange(n)[:, None, None]
    ok = ~no[r, o, np.arange(C)[None, None, :]].any(2)
    if cl_live.shape[1]:
        held = o[r[..., None], np.arange(W)[None, :, None, None], cl_cards[:, None].astype(np.int64)]  # (n, W, K, 3)
        sat = (held == cl_holder[:, None, :, None]).any(3) | ~cl_live[:, None, :]
        ok &= sat.all(2)
    if acc_live.shape[1]:
        held = o[r[..., None], np.arange(W)[None, :, None, None], acc_cards[:, None].astype(np.int64)]
        ok &= ~((held == E).all(3) & acc_live[:, None, :]).any(2)
    return ok
