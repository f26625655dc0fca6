"""The numpy statements of the exact envelope search and of the witness check
(:func:`cluedo_env.agents.knowledge.envelope_search.search_envelope`,
:func:`~cluedo_env.agents.knowledge.envelope_search.valid_deals`),
which the tests compare with the compiled kernels.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.envelope_search import _search_start
from cluedo_env.agents.knowledge.facts import FULL, POW2, FactBits, Facts, popcount, unpack
from cluedo_env.agents.knowledge.propagation import fixpoint_bits

from cluedo_env.rules.cards import NUM_CARDS


def valid_deals_reference(owner: np.ndarray, facts: Facts) -> np.ndarray:
    """:func:`cluedo_env.agents.knowledge.envelope_search.valid_deals` in numpy: the readable reference."""
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


def search_envelope_reference(
    facts: FactBits,
    query: np.ndarray | None = None,
    max_rounds: int = 400,
    rng: np.random.Generator | None = None,
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
    in the envelope; witnessed (n, 21) bool: which witness rows are filled).

    The numpy statement; :func:`cluedo_env.agents.knowledge.envelope_search.search_envelope` runs it compiled, and the
    tests
    check both give the same.
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
    out = status == -1
    np.bitwise_or.at(nb, (qg[out], E), POW2[qc[out]])
    decided = np.ones(n, bool)
    decided[qg[status == 0]] = False
    return decided, witness, witnessed
