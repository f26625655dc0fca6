"""Sound propagation over one seat's facts: every conclusion the rules below allow, closed to a fixpoint.

The facts (:class:`cluedo_env.agents.knowledge.facts.Facts`, on bitmasks
:class:`cluedo_env.agents.knowledge.facts.FactBits`) are what
one seat knows of each game of a batch: has / has-not cells per holder and card, hand sizes,
"holds at least one of" clauses and "the envelope lacks at least one of" clauses.
:class:`cluedo_env.agents.knowledge.notebook.Notebook` keeps the facts up to date and calls this module.

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
(:func:`fixpoint_kernel`, at the end of this module; ``tests/references/propagation.py`` states it in numpy).

Propagation alone is not complete; the exact search (:mod:`cluedo_env.agents.knowledge.envelope_search`) decides the
envelope's cells. Failed-literal probing (:func:`probe`) is a cheaper, incomplete middle ground.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import KERNEL
from cluedo_env.agents.knowledge.facts import CAT_MASKS, FULL, POW2, FactBits, Facts, bit_count, unpack
from numba import njit


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

    Runs the compiled :func:`cluedo_env.agents.knowledge.propagation.fixpoint_kernel` (the same passes as
    :func:`tests.references.propagation.fixpoint_bits_reference`, game by game). ``hb`` and ``nb`` must be int64 arrays
    (as :meth:`cluedo_env.agents.knowledge.facts.Facts.bits` makes them), written in place.
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


# ---------------------------------------------------------------------------------------------- compiled kernels
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
    """:func:`cluedo_env.agents.knowledge.propagation.fixpoint_bits` game by game: ``hb``, ``nb`` (n, H) int64,
    ``cl_live`` (n, K),
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
                x = ~nb[i, h] & FULL
                twice |= once & x
                once |= x
            if once != FULL:  # a card nobody may hold
                b = True
            single = once & ~twice
            for h in range(H):
                hb[i, h] |= ~nb[i, h] & FULL & single
            # 5: one envelope card per category.
            add_n = 0
            add_h = 0
            for k in range(3):
                env_h = hb[i, E] & CAT_MASKS[k]
                env_p = ~nb[i, E] & CAT_MASKS[k]
                nh = bit_count(env_h)
                npo = bit_count(env_p)
                if nh > 1 or npo == 0:
                    b = True
                if nh >= 1:
                    add_n |= CAT_MASKS[k] & ~env_h
                if npo == 1:
                    add_h |= env_p
            nb[i, E] |= add_n
            hb[i, E] |= add_h
            # 3, 4: exact hand sizes.
            for h in range(H):
                nh = bit_count(hb[i, h])
                nhu = nh + bit_count(~(hb[i, h] | nb[i, h]) & FULL)
                s = size[i, h]
                if nh > s or nhu < s:
                    b = True
                if nh >= s:
                    nb[i, h] |= ~hb[i, h] & FULL
                if nhu <= s:
                    hb[i, h] |= ~nb[i, h] & FULL
            # 6: "holds at least one of" clauses (all read the cells before any unit clause is applied).
            for k in range(K):
                unit[k] = 0
                if cl_live[i, k]:
                    h = cl_holder[i, k]
                    if cl_mask[i, k] & hb[i, h]:
                        cl_live[i, k] = False
                    else:
                        cand = cl_mask[i, k] & ~nb[i, h]
                        nc = bit_count(cand)
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
                        n3 = bit_count(acc_mask[i, a] & env_h)
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
