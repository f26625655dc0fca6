"""Witness deals: one consistent deal per open envelope card, kept to prove the card may be in the envelope.

The notebook (:class:`cluedo_env.agents.knowledge.notebook.Notebook`) keeps, for each game and each card that may still
be
in the envelope, one deal consistent with the facts that puts it there. New facts invalidate some; these
kernels register new witnesses, check old ones and sample replacements (forcing a card into the envelope
by adjusting a sampled deal), so the exact search runs only where sampling fails.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import INLINE, KERNEL
from cluedo_env.agents.knowledge.deal_sampling import sample_deals_kernel, sample_setup_kernel
from cluedo_env.agents.knowledge.envelope_search import clauses_hold
from cluedo_env.agents.knowledge.facts import FactBits, Facts, bit_count, category_of
from cluedo_env.agents.knowledge.types import WitnessScratch
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS


@njit(**INLINE)
def _register_deal(deal: np.ndarray, E: int, witness: np.ndarray, g: int, valid: np.ndarray, i: int) -> None:
    """The consistent ``deal`` (21,) becomes the witness (``witness`` (B, 21, 21) of game g) of each of its envelope
    cards, which are then ``valid`` (n, 21) in row i."""
    for c in range(NUM_CARDS):
        if deal[c] == E:
            for x in range(NUM_CARDS):
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
    """:meth:`cluedo_env.agents.knowledge.notebook.Notebook._register` in place: every live sampled deal ``owner`` (r,
    M, 21)
    becomes the
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
        for c in range(NUM_CARDS):
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
    k = category_of(c)
    p = 0
    while order[0, p] != c:
        p += 1
    for t in range(p, unk - 1):
        order[0, t] = order[0, t + 1]
    owner0[0, c] = E
    cap0[0, E] = max(fs[0, E] - bit_count(fh[0, E] | (np.int64(1) << c)), 0)
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
    k = category_of(c)
    for t in range(unk - 1, p, -1):
        order[0, t] = order[0, t - 1]
    order[0, p] = c
    owner0[0, c] = -1
    cap0[0, E] = max(fs[0, E] - bit_count(fh[0, E]), 0)
    env_cap0[0, k] = 1
    unk_total0[0] += 1
    unk_cat0[0, k] += 1


@njit(**KERNEL)
def witness_sample_kernel(
    idx: np.ndarray, rows: np.ndarray, cards: np.ndarray, bits: FactBits, book: Facts, samples: int,
    clause_order: np.ndarray, rng: np.random.Generator, witness: np.ndarray, valid: np.ndarray, unknown: np.ndarray,
    scratch: WitnessScratch,
) -> int:  # fmt: skip
    """:func:`tests.references.notebook.sample_witnesses_reference` in one call: the cells (``rows[j]``,
    ``cards[j]``) of :func:`witness_rows_kernel` in order; a cell that an earlier deal already witnesses is skipped,
    else deals of the facts ``bits`` (the rows' cells ``hb``, ``nb``, ``size`` (n, H) int64 and live flags) of
    row ``rows[j]`` (game ``idx[rows[j]]``, its clauses' holders and cards read from the notebook's ``book``) with the
    card forced into the envelope are drawn one at a time (:func:`sample_deals_kernel`, clauses first in
    ``clause_order``), at most ``samples``, until one is consistent; it becomes the witness of each of its envelope
    cards (``witness`` (B, 21, 21), ``valid`` (n, 21) in place). Returns how many rows still have an ``unknown``
    (n, 21) cell without a valid witness.

    Why one deal at a time: a consistent deal with the card forced in is found at the first try about 19 times in
    20, and each deal witnesses three cells, so most of the four deals per cell drawn at once were wasted. Why one
    setup per row: forcing a card into the envelope changes the row's setup in a few counters and takes the card
    out of the placement order (:func:`_force_into_envelope`), which costs a fraction of a setup.

    Scratch, one row (:class:`cluedo_env.agents.knowledge.types.WitnessScratch`): the facts ``fh``, ``fn``, ``fs`` (1,
    H)
    int64, the clauses (``gh`` (1, K) int64, ``gc`` (1, K, 3) int64, ``gl`` (1, K) bool, accusations ``ga``
    (1, P, 3) int64, ``gal`` (1, P) bool); then :func:`sample_setup_kernel`'s and :func:`sample_deals_kernel`'s
    arrays for one deal (``q`` (1,)).
    """
    hb, nb, size, cl_live, acc_live = bits.hb, bits.nb, bits.size, bits.cl_live, bits.acc_live
    cl_holder, cl_cards, acc_cards = book.cl_holder, book.cl_cards, book.acc_cards
    fh, fn, fs, key = scratch.fh, scratch.fn, scratch.fs, scratch.key
    gh, gc, gl, ga, gal = scratch.clauses
    owner0, cap0, env_cap0, unk_total0, unk_cat0, allowed, order = scratch.start
    alive = scratch.deal.alive
    owner = scratch.deal.owner
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
            sample_deals_kernel(scratch.start, scratch.deal, np.int64(1), scratch.clauses, clause_order, rng, unk - 1)
            if alive[0]:
                _register_deal(owner[0], E, witness, g, valid, i)
                break
        _release_from_envelope(c, p, fh, fs, owner0, cap0, env_cap0, unk_total0, unk_cat0, order, unk)
    left = 0
    for i in range(unknown.shape[0]):
        for c in range(NUM_CARDS):
            if unknown[i, c] and not valid[i, c]:
                left += 1
                break
    return left


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
        for m in range(NUM_CARDS):
            if not valid[i, m]:
                continue
            good = True
            for c in range(NUM_CARDS):
                if (nb[i, witness[g, m, c]] >> c) & 1:
                    good = False
                    break
            valid[i, m] = good and clauses_hold(
                witness[g, m], g, i, cl_holder, cl_cards, cl_live, acc_cards, acc_live, E
            )
