"""The named tuples of arrays the knowledge kernels take: a notebook's stores, deal-sampling state and scratch.

Why tuples: the compiled kernels of :mod:`cluedo_env.agents.knowledge` work on a dozen arrays each, which travelled as
loose positional arguments (up to 58 of them) and had to be listed in the same order at every call. numba
takes a ``typing.NamedTuple`` of arrays as one argument and reads its fields inside a kernel at no cost, as
the engine's kernels take :class:`cluedo_env.engine.state.State`. The notebook builds each tuple once and keeps
it (rebuilt only when its arrays are reallocated), so a call passes the same types every time, as
:class:`cluedo_env.agents.compiled.EntryPoint` requires. The facts themselves are
:class:`cluedo_env.agents.knowledge.facts.Facts`
(a notebook's arrays) and :class:`cluedo_env.agents.knowledge.facts.FactBits` (rows of facts on bitmasks).

Shapes: B games of the notebook, n rows (games being worked on), H holders (P players, then the envelope),
K clause slots, A = P accusation slots, N deals.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from cluedo_env.agents.knowledge.facts import FactBits, Facts


class Tallies(NamedTuple):
    """The public counts a notebook keeps besides its facts (what the refutation choice and the opponent models
    read), written by :func:`cluedo_env.agents.knowledge.notebook_intake.add_records_kernel`."""

    shown_by_me: np.ndarray
    """(B, P, 21) bool: cards this seat has shown to each player."""
    shown_to: np.ndarray
    """(B, P) int64: refutations each player has received."""
    unrefuted: np.ndarray
    """(B, P) int64: suggestions of each player nobody refuted."""
    named: np.ndarray
    """(B, P, 21) bool: cards each player has named in a suggestion."""


class Book(NamedTuple):
    """What a notebook keeps per game that the players' kernels read (``Notebook.book``)."""

    facts: Facts
    """The facts of all B games (the notebook's ``has`` .. ``acc_live``)."""
    tallies: Tallies
    """The public counts of all B games."""
    bad: np.ndarray
    """(B,) bool: the game's facts are contradictory."""
    version: np.ndarray
    """(B,) int64: bumped whenever the game's facts may have changed (for caches)."""


class RecordRows(NamedTuple):
    """History records to take in, one row each (:class:`cluedo_env.engine.views.Records`' arrays)."""

    game: np.ndarray
    """(R,) int64: the game of each record."""
    is_acc: np.ndarray
    """(R,) bool: an accusation (else a suggestion)."""
    player: np.ndarray
    """(R,) int8: the seat that suggested or accused."""
    triple: np.ndarray
    """(R, 3) int8: suspect, weapon and room index (per category, not card ids)."""
    correct: np.ndarray
    """(R,) bool: the accusation was right."""
    response: np.ndarray
    """(R, P) int8 per seat: -1 not asked, -2 could not refute, -3 showed a card this seat did not see, c >= 0
    showed card c."""


class IntakeScratch(NamedTuple):
    """Scratch of :func:`cluedo_env.agents.knowledge.notebook_intake.add_records_kernel`: compaction flags and one row
    of
    clauses. Every element is written before it is read."""

    compacted: np.ndarray
    """(B,) bool: the game's clauses were compacted during this call."""
    holder: np.ndarray
    """(K,) int8: clause holders of one game."""
    cards: np.ndarray
    """(K, 3) int8: clause cards of one game."""
    live: np.ndarray
    """(K,) bool: clause live flags of one game."""


class WitnessStore(NamedTuple):
    """The notebook's witness deals (:mod:`cluedo_env.agents.knowledge.witnesses`): one consistent deal per game and
    open
    envelope card, proving the card may be in the envelope."""

    witness: np.ndarray
    """(B, 21, 21) int8: for game g and card c, the holder of every card in a deal with c in the envelope."""
    wvalid: np.ndarray
    """(B, 21) bool: ``witness[g, c]`` is a witness of the game's current facts."""


class PropagateScratch(NamedTuple):
    """Per-row scratch of :func:`cluedo_env.agents.knowledge.notebook_propagation.propagate_kernel` besides the rows'
    facts
    (a :class:`cluedo_env.agents.knowledge.facts.FactBits`). Kept by the notebook, sliced to the n rows of a call."""

    bad: np.ndarray
    """(n,) bool: the row's facts are contradictory."""
    unknown: np.ndarray
    """(n, 21) bool: envelope cells to decide."""
    valid: np.ndarray
    """(n, 21) bool: envelope cells with a valid witness."""
    snap: np.ndarray
    """(2, H) int64: the fixpoint's snapshot of one row."""
    unit: np.ndarray
    """(K,) int64: the fixpoint's unit clauses."""
    rows: np.ndarray
    """(n * 21,) int64: the row of each cell to witness."""
    cards: np.ndarray
    """(n * 21,) int64: the card of each cell to witness."""
    live_cols: np.ndarray
    """(K,) bool: clause slots live in some row to witness."""
    clause_order: np.ndarray
    """(K,) int64: the clause slots to satisfy first, in order (the first m used)."""


class ClauseCards(NamedTuple):
    """Clauses by card id, as the deal sampler reads them (one row per game of the sample)."""

    cl_holder: np.ndarray
    """(n, K) int64: the holder of each "holds at least one of" clause."""
    cl_cards: np.ndarray
    """(n, K, 3) int64: the clause's three card ids."""
    cl_live: np.ndarray
    """(n, K) bool: the clause is open."""
    acc_cards: np.ndarray
    """(n, A, 3) int64: the card ids of each "the envelope lacks at least one of" clause."""
    acc_live: np.ndarray
    """(n, A) bool: the accusation clause is open."""


class DealStart(NamedTuple):
    """What every deal of a game starts from (:func:`cluedo_env.agents.knowledge.deal_sampling.sample_setup_kernel`
    writes the
    first six fields and the order)."""

    owner0: np.ndarray
    """(n, 21) int8: holder of each card already placed, -1 unplaced."""
    cap0: np.ndarray
    """(n, H) int64: room left in each holder's hand."""
    env_cap0: np.ndarray
    """(n, 3) int64: room left in the envelope per category."""
    unk_total0: np.ndarray
    """(n,) int64: cards unplaced."""
    unk_cat0: np.ndarray
    """(n, 3) int64: cards unplaced per category."""
    allowed: np.ndarray
    """(n, H, 21) bool: the holder may hold the card (not ``no``)."""
    order: np.ndarray
    """(n, >= steps) int64: the unplaced cards in placement order (fewest possible holders first)."""


class DealScratch(NamedTuple):
    """The N deals :func:`cluedo_env.agents.knowledge.deal_sampling.sample_deals_kernel` draws, and its scratch."""

    owner: np.ndarray
    """(N, 21) int8: holder of each card in each deal."""
    cap: np.ndarray
    """(N, H) int64: room left in each holder's hand (scratch)."""
    env_cap: np.ndarray
    """(N, 3) int64: room left in the envelope per category (scratch)."""
    unk_total: np.ndarray
    """(N,) int64: cards unplaced (scratch)."""
    unk_cat: np.ndarray
    """(N, 3) int64: cards unplaced per category (scratch)."""
    alive: np.ndarray
    """(N,) bool: the deal is consistent with the facts."""
    q: np.ndarray
    """(N,) float64: the deal's proposal probability."""
    w: np.ndarray
    """(2, H) float64: one card's holder weights (scratch)."""
    div: np.ndarray
    """(22, 22) float64: the quotients a / b of the counters
    (:data:`cluedo_env.agents.knowledge.marginals.QUOTIENTS`)."""


class WitnessScratch(NamedTuple):
    """One row's scratch of :func:`cluedo_env.agents.knowledge.witnesses.witness_sample_kernel`: the row's facts, its
    setup and
    one deal. Kept by the notebook (rebuilt when the clause slots grow)."""

    fh: np.ndarray
    """(1, H) int64: the row's cards held, as bitmasks."""
    fn: np.ndarray
    """(1, H) int64: the row's cards not held, as bitmasks."""
    fs: np.ndarray
    """(1, H) int64: the row's hand sizes."""
    clauses: ClauseCards
    """The row's clauses (n = 1)."""
    start: DealStart
    """The row's setup (n = 1, order (1, 21))."""
    key: np.ndarray
    """(21,) int64: scratch of the setup's sort."""
    deal: DealScratch
    """One deal (N = 1)."""


class Assumptions(NamedTuple):
    """What :func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits` may assume of the opponents, per call."""

    seat: int
    """The notebook's seat."""
    has_board: bool
    """The game has a board (a suggestion names the suggester's room, which says nothing: R-G1)."""
    naive: bool
    """Add the naive-player model's facts (every card an opponent named at a table that is not strong)."""
    strong_allows: bool
    """Use the model at a strong table even where ``allow`` is False."""
    allow: np.ndarray
    """(n,) bool: games where the model may be used."""
    extra_no: np.ndarray
    """(n, P, 21) bool: more assumed "holds not" facts (shape (0, P, 21): none)."""
    lacks: np.ndarray
    """(B, P, 21) bool: cards refuters' choices imply they lack (shape (0, P, 21): none)."""
    deviant: np.ndarray
    """(B, P) bool: refuters whose choices do not follow the model."""


class AssumedScratch(NamedTuple):
    """Scratch of :func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits_kernel`."""

    extra: np.ndarray
    """(n, P) int64: the assumed "holds not" facts of each row, as bitmasks."""
    bad: np.ndarray
    """(1,) bool: the row's assumed facts are contradictory."""
    snap: np.ndarray
    """(2, H) int64: the fixpoint's snapshot."""
    unit: np.ndarray
    """(K,) int64: the fixpoint's unit clauses."""
    clh1: np.ndarray
    """(1, K) int64: the row's clause holders as the fixpoint reads them."""


class RefuterState(NamedTuple):
    """What :class:`cluedo_env.agents.knowledge.refuter_model.RefuterModel` keeps per game, as its kernel updates it."""

    shown: np.ndarray
    """(B, P, 21) bool: cards each player has shown this seat."""
    received: np.ndarray
    """(B,) int64: refutations this seat received."""
    lacks: np.ndarray
    """(B, P, 21) bool: assumed, the player does not hold the card."""
    deviant: np.ndarray
    """(B, P) bool: the player refuted against the model at least once."""


class SearchState(NamedTuple):
    """The backtracking state of :func:`cluedo_env.agents.knowledge.envelope_search.search_envelope_kernel`, one stack
    per
    query (Q queries, depth at most D = 22)."""

    st_h: np.ndarray
    """(Q, D, H) int64: the cards each holder holds at each depth."""
    st_n: np.ndarray
    """(Q, D, H) int64: the cards each holder does not hold at each depth."""
    br_card: np.ndarray
    """(Q, D) int64: the card branched on at each depth."""
    tried: np.ndarray
    """(Q, D, H) bool: the holders of the branching card already tried."""
    depth: np.ndarray
    """(Q,) int64: the query's current depth (-1: every branch failed)."""
    go: np.ndarray
    """(Q,) int64: the queries that branch in this round."""


class NodeScratch(NamedTuple):
    """One node of :func:`cluedo_env.agents.knowledge.envelope_search.search_envelope_kernel`: its facts and the
    fixpoint's
    scratch."""

    node: FactBits
    """The node's facts, one row (``hb``, ``nb`` the node's cells; the rest its game's, copied per node)."""
    bad: np.ndarray
    """(1,) bool: the node is contradictory."""
    snap: np.ndarray
    """(2, H) int64: the fixpoint's snapshot."""
    unit: np.ndarray
    """(K,) int64: the fixpoint's unit clauses."""
    key: np.ndarray
    """(H,) float64: the holders' random keys of one branch."""


__all__ = [
    "AssumedScratch",
    "Assumptions",
    "Book",
    "ClauseCards",
    "DealScratch",
    "DealStart",
    "IntakeScratch",
    "NodeScratch",
    "PropagateScratch",
    "RecordRows",
    "RefuterState",
    "SearchState",
    "Tallies",
    "WitnessScratch",
    "WitnessStore",
]
