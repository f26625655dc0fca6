"""The notebook's propagation in one compiled call: pack, close the facts, check witnesses, unpack.

:meth:`cluedo_env.agents.knowledge.notebook.Notebook.propagate` runs these kernels: the front half packs the cells,
closes them (:func:`cluedo_env.agents.knowledge.propagation.fixpoint_kernel`) and checks the stored witness deals; the
back half writes the cells back; :func:`propagate_kernel` does both and samples new witnesses between them.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import HELPER, INLINE, KERNEL
from cluedo_env.agents.knowledge.facts import (
    CAT_MASKS,
    FULL,
    FactBits,
    Facts,
    bit_count,
    pack_rows_kernel,
    unpack_rows_kernel,
)
from cluedo_env.agents.knowledge.propagation import fixpoint_kernel
from cluedo_env.agents.knowledge.types import PropagateScratch, WitnessScratch, WitnessStore
from cluedo_env.agents.knowledge.witnesses import check_witnesses_kernel, witness_rows_kernel, witness_sample_kernel
from numba import njit

from cluedo_env.engine.numba_internals import random_interval
from cluedo_env.rules.cards import NUM_CARDS


@njit(**HELPER)
def propagate_front_kernel(
    idx: np.ndarray,
    book: Facts,
    store: WitnessStore,
    exact: bool,
    exact_triples: int,
    bits: FactBits,
    scratch: PropagateScratch,
) -> int:
    """The start of :meth:`cluedo_env.agents.knowledge.notebook.Notebook.propagate` for games ``idx`` in one call;
    returns how many
    rows
    still need a witness (sampling or search, left to Python).

    The notebook's arrays (``book``: ``has`` .. ``acc_live``; ``store``: ``witness``, ``wvalid``) are read.
    Written, per row: the facts as bitmasks (``bits``, as :meth:`Notebook.bits` gives them) closed by
    :func:`fixpoint_kernel` (``scratch.bad`` where contradictory); then with ``exact`` the open envelope cells
    ``scratch.unknown`` (n, 21) (none in a contradictory row, or where more than ``exact_triples`` >= 0 solution
    hypotheses are left) and ``scratch.valid`` (n, 21) where a stored witness still holds
    (:func:`check_witnesses_kernel`), as ``Notebook._exact_envelope`` computes them. Scratch of the fixpoint:
    ``snap`` (2, H), ``unit`` (K,).
    """
    has, no, size, cl_holder, cl_cards, cl_live, acc_cards, acc_live = book
    witness, wvalid = store
    hb, nb, sz, clh, cl_mask, cl_live_rows, acc_mask, acc_live_rows = bits
    bad, unknown, valid, snap, unit = scratch.bad, scratch.unknown, scratch.valid, scratch.snap, scratch.unit
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
    fixpoint_kernel(hb, nb, sz, clh, cl_mask, cl_live_rows, acc_mask, acc_live_rows, np.int64(100), bad, snap, unit)
    if not exact:
        return 0
    for i in range(n):
        open_env = ~hb[i, E] & ~nb[i, E] & FULL
        if bad[i]:
            open_env = 0
        if exact_triples >= 0:
            triples = 1
            for cat in range(3):
                triples *= bit_count(~nb[i, E] & CAT_MASKS[cat])
            if triples > exact_triples:
                open_env = 0
        for c in range(NUM_CARDS):
            unknown[i, c] = (open_env >> c) & 1 == 1
            valid[i, c] = wvalid[idx[i], c] and unknown[i, c]
    check_witnesses_kernel(idx, nb, cl_holder, cl_cards, cl_live_rows, acc_cards, acc_live_rows, witness, valid)
    todo = 0
    for i in range(n):
        for c in range(NUM_CARDS):
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
    """The end of :meth:`cluedo_env.agents.knowledge.notebook.Notebook.propagate`: the rows' closed facts back into
    games ``idx``
    of the
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
def permute_live(rng: np.random.Generator, live: np.ndarray, out: np.ndarray) -> int:
    """``rng.permutation(np.flatnonzero(live))``
    (:func:`cluedo_env.agents.knowledge.deal_sampling.random_clause_order`) into
    ``out[:m]``;
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
    idx: np.ndarray,
    book: Facts,
    store: WitnessStore,
    bad_games: np.ndarray,
    exact: bool,
    exact_triples: int,
    samples: int,
    rng: np.random.Generator,
    bits: FactBits,
    scratch: PropagateScratch,
    wscratch: WitnessScratch,
) -> int:  # fmt: skip
    """:meth:`cluedo_env.agents.knowledge.notebook.Notebook.propagate` of games ``idx`` in one call, up to the search:
    returns 0
    when it
    is done, else the rows whose open envelope cells still lack a witness after sampling (Python then searches
    them, stores ``valid`` in ``wvalid`` and writes back with :func:`propagate_back_kernel`).

    The steps, each a kernel of its own that the tests compare with its numpy statement:
    :func:`propagate_front_kernel` (packing, fixpoint, the cells to decide, the stored witnesses), then with
    ``exact`` and up to ``samples`` forced deals per cell :func:`witness_rows_kernel` and
    :func:`witness_sample_kernel`, the clauses satisfied first in the order :func:`permute_live` draws from
    ``rng``; then the write-back (``valid`` into ``wvalid``; :func:`propagate_back_kernel`, ``bad_games`` or-ed).
    Why one call: a notebook propagates on nearly every action of its player, and the half-dozen calls with
    their scratch arrays cost more than the work in most of them. The arguments after ``rng`` are the rows' facts
    and scratch, as those kernels take them (``bits``, ``scratch``: a
    :class:`cluedo_env.agents.knowledge.types.PropagateScratch`,
    ``wscratch``: :func:`witness_sample_kernel`'s).
    """
    todo = propagate_front_kernel(idx, book, store, exact, exact_triples, bits, scratch)
    unknown, valid = scratch.unknown, scratch.valid
    rows, cards, live_cols, clause_order = scratch.rows, scratch.cards, scratch.live_cols, scratch.clause_order
    wvalid = store.wvalid
    n = idx.shape[0]
    if exact:
        if todo:
            left = 1
            if samples > 0:
                R = witness_rows_kernel(unknown, valid, bits.cl_live, rows, cards, live_cols)
                left = 0
                if R > 0:
                    m = permute_live(rng, live_cols, clause_order)
                    left = witness_sample_kernel(
                        idx, rows[:R], cards[:R], bits, book, samples, clause_order[:m], rng, store.witness, valid,
                        unknown, wscratch,
                    )  # fmt: skip
            if left:
                return left
        for i in range(n):
            for c in range(NUM_CARDS):
                wvalid[idx[i], c] = valid[i, c]
    propagate_back_kernel(
        idx, bits.hb, bits.nb, bits.cl_live, bits.acc_live, scratch.bad, book.has, book.no, book.cl_live,
        book.acc_live, bad_games,
    )  # fmt: skip
    return 0
