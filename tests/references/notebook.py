"""The numpy statements of the notebook's record intake and witness sampling
(:class:`cluedo_env.agents.knowledge.notebook.Notebook`): functions taking the notebook, which the tests run on a copy
of it, or
swap in for the compiled methods, and compare array by array and random stream by random stream.

:meth:`~cluedo_env.agents.knowledge.notebook.Notebook.propagate_steps` stays in the notebook: it is also the path with
failed-literal probing (``probe_cells``).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.deal_sampling import random_clause_order, sample_deals_bits
from cluedo_env.agents.knowledge.facts import POW2, FactBits
from cluedo_env.agents.knowledge.notebook import Notebook, _unique

from cluedo_env.engine.views import HIDDEN, PASSED, PlayerView, Records
from cluedo_env.rules import actions as A


def add_records_reference(notebook: Notebook, rec: Records) -> np.ndarray:
    """:meth:`Notebook.add_records` in numpy: the readable statement."""
    if len(rec.game) == 0:
        return np.zeros(0, np.int64)
    me = notebook.seat
    g = rec.game
    cards = A.category_cards(rec.triple)  # (m, 3)
    resp = rec.response  # (m, P)
    sugg = ~rec.is_accusation
    # Passes: holds none of the three (R-G6).
    rows, seats = np.nonzero((resp == PASSED) & sugg[:, None])
    for j in range(3):
        notebook.no[g[rows], seats, cards[rows, j]] = True
    # Shown to me: has. Shown by me: remembered (for the refutation policy).
    rows, seats = np.nonzero((resp >= 0) & sugg[:, None])
    card = resp[rows, seats].astype(np.int64)
    to_me = rec.player[rows] == me
    notebook.has[g[rows[to_me]], seats[to_me], card[to_me]] = True
    by_me = (seats == me) & ~to_me
    notebook.shown_by_me[g[rows[by_me]], rec.player[rows[by_me]], card[by_me]] = True
    # Public counts: refutations received, suggestions nobody refuted.
    shows = ((resp >= 0) | (resp == HIDDEN)).sum(1)
    np.add.at(notebook.shown_to, (g[sugg], rec.player[sugg].astype(np.int64)), shows[sugg])
    lone = sugg & (shows == 0)
    np.add.at(notebook.unrefuted, (g[lone], rec.player[lone].astype(np.int64)), 1)
    notebook.named[g[sugg, None], rec.player[sugg, None].astype(np.int64), cards[sugg]] = True
    # Hidden refutations: clauses.
    rows, seats = np.nonzero((resp == HIDDEN) & sugg[:, None])
    if len(rows):
        cg = g[rows]
        order = np.argsort(cg, kind="stable")
        rows, seats, cg = rows[order], seats[order], cg[order]
        # Put each new clause in a free slot: compact the live clauses first.
        _compact(notebook, np.unique(cg))
        first = np.searchsorted(cg, cg, side="left")
        slot = notebook.cl_live[cg].sum(1) + np.arange(len(cg)) - first
        notebook._grow(int(slot.max()) + 1)
        notebook.cl_holder[cg, slot] = seats
        notebook.cl_cards[cg, slot] = cards[rows]
        notebook.cl_live[cg, slot] = True
    # Wrong accusations of others: the envelope lacks at least one of the three.
    wrong = rec.is_accusation & ~rec.correct & (rec.player != me)
    if wrong.any():
        wg, wp = g[wrong], rec.player[wrong].astype(np.int64)
        notebook.acc_cards[wg, wp] = cards[wrong]
        notebook.acc_live[wg, wp] = True
    return np.unique(g)


def _compact(notebook: Notebook, games: np.ndarray) -> None:
    """Move the live clauses of ``games`` to the front of their rows."""
    if len(games) == 0:
        return
    order = np.argsort(~notebook.cl_live[games], axis=1, kind="stable")
    r = games[:, None]
    notebook.cl_holder[games] = notebook.cl_holder[r, order]
    notebook.cl_cards[games] = notebook.cl_cards[r, order]
    notebook.cl_live[games] = notebook.cl_live[r, order]


def update_reference(notebook: Notebook, view: PlayerView, idx: np.ndarray) -> None:
    """:meth:`Notebook.update` step by step (``add_records``, ``set_envelope``, then ``propagate``): the
    statement the tests compare with."""
    idx = np.asarray(idx, np.int64)
    if len(idx) == 0:
        return
    limit, start = notebook._unread(view, idx)
    notebook.add_records(view.records_between(idx, start, limit))
    notebook.processed[idx] = np.maximum(notebook.processed[idx], limit)
    env = view.envelope_if_known_of(idx)
    notebook.set_envelope(idx, env)
    changed = _unique(idx[(limit > start) | (env[:, 0] >= 0)])  # games with new records or the envelope seen
    if len(changed):
        notebook.propagate(changed)


def sample_witnesses_reference(
    notebook: Notebook, idx: np.ndarray, bits: FactBits, unknown: np.ndarray, valid: np.ndarray
) -> int:
    """:meth:`Notebook._sample_witnesses` step by step: one
    :func:`cluedo_env.agents.knowledge.deal_sampling.sample_deals_bits`
    call per deal (the tests compare the two)."""
    E = notebook.E
    need = unknown & ~valid
    todo = np.flatnonzero(need.any(1))
    if len(todo) == 0:
        return 0
    rows, cards = np.nonzero(need[todo])
    rows = todo[rows]
    clause_order = random_clause_order(notebook.rng, bits.cl_live[rows].any(0))
    for i, c in zip(rows.tolist(), cards.tolist(), strict=True):
        if valid[i, c]:  # an earlier deal witnesses it
            continue
        g = idx[i : i + 1]
        forced_h = bits.hb[i : i + 1].copy()
        forced_h[:, E] |= POW2[c]
        for _ in range(notebook.witness_samples):
            owner, _, alive = sample_deals_bits(
                forced_h, bits.nb[i : i + 1], bits.size[i : i + 1], notebook.cl_holder[g], notebook.cl_cards[g],
                bits.cl_live[i : i + 1], notebook.acc_cards[g], bits.acc_live[i : i + 1], samples=1, rng=notebook.rng,
                clauses_first=True, clause_order=clause_order,
            )  # fmt: skip
            if alive[0, 0]:
                notebook._register(idx, np.array([i]), owner, alive, valid)
                break
    return int((unknown & ~valid).any(1).sum())
