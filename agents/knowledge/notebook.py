"""The notebook: one seat's facts about every game of a batch, kept up to date from its view.

For every game the notebook keeps the seat's :class:`cluedo_env.agents.knowledge.facts.Facts` (has / has-not per
holder and card, the envelope as the last holder; clauses). Facts come from what the seat
may know (:class:`cluedo_env.engine.views.PlayerView`):

* its own hand (R-S6): ``has`` on its cards, ``no`` on every other card;
* the public hand sizes (R-S5) and the envelope's three cards, one per category (R-S4);
* a player who could not refute a suggestion holds none of its three cards (R-G6, R-G7);
* a card shown to this seat is held by the player who showed it;
* a refutation this seat did not see: the refuter holds *at least one* of the three cards,
  a clause that shrinks as cards are located elsewhere and becomes a fact at one card;
* a wrong accusation by another player: the envelope lacks at least one of the three
  named cards (a clause on the envelope);
* its own accusation shows it the envelope (R-A2).

After each update the facts are closed by propagation (:func:`cluedo_env.agents.knowledge.propagation.fixpoint_bits`).
Propagation alone is not complete, so the envelope cells are then decided *exactly*
(``exact=True``, the default):

* a cell is possible as soon as some complete deal consistent with everything known puts
  the card in the envelope (a *witness*). Witnesses are kept per game and cell and re-used
  while new facts do not contradict them (:func:`cluedo_env.agents.knowledge.propagation.valid_deals`); new ones come
  from a few deals sampled with the card forced into the envelope
  (:func:`cluedo_env.agents.knowledge.deal_sampling.sample_deals`, clauses satisfied first);
* the cells left are settled by a batched backtracking search
  (:func:`cluedo_env.agents.knowledge.propagation.search_envelope`), which either finds a witness or proves the card
  is not in the envelope. The search is bounded (``search_rounds``); an unfinished query
  proves nothing.

So every envelope fact that enumeration of all consistent deals would prove, the notebook
proves (``scripts/deducer_completeness.py`` measures it; players' cells are decided by
propagation only, 99.7% of what enumeration proves). ``exact_triples`` restricts the exact
step to games with at most that many solution hypotheses left (the players use 8: that is
where it decides the accusation; exactness everywhere makes a game of 4 deducers about 2.5
times slower, 55 instead of 140 classic games/s at batch 256 on 2 cores). Optional
failed-literal probing (:func:`cluedo_env.agents.knowledge.propagation.probe`, ``probe_cells``) is kept for comparison.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import KERNEL, EntryPoint
from cluedo_env.agents.knowledge.deal_sampling import random_clause_order, sample_deals_bits
from cluedo_env.agents.knowledge.envelope_search import search_envelope
from cluedo_env.agents.knowledge.facts import (
    CAT_BITS,
    ENVELOPE_SIZE,
    FULL,
    FactBits,
    Facts,
    envelope_card,
    pack_rows_kernel,
    unpack,
    unpack_rows_kernel,
)
from cluedo_env.agents.knowledge.marginals import QUOTIENTS, marginals_rows
from cluedo_env.agents.knowledge.notebook_intake import add_records_kernel, clause_slots_needed, intake_kernel
from cluedo_env.agents.knowledge.notebook_propagation import propagate_back_kernel, propagate_kernel
from cluedo_env.agents.knowledge.propagation import fixpoint_bits, probe
from cluedo_env.agents.knowledge.types import (
    Book,
    ClauseCards,
    DealScratch,
    DealStart,
    IntakeScratch,
    PropagateScratch,
    RecordRows,
    Tallies,
    WitnessScratch,
    WitnessStore,
)
from cluedo_env.agents.knowledge.witnesses import (
    check_witnesses_kernel,
    register_witnesses_kernel,
    witness_rows_kernel,
    witness_sample_kernel,
)
from numba import njit

from cluedo_env.engine.views import PlayerView, Records
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS


def _unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` of an int array, without sorting where ``a`` is already non-decreasing (the games a player
    is asked about come sorted, and so do their records): the same array, several times faster."""
    a = np.asarray(a)
    if len(a) < 2:  # what np.unique gives (a copy), without its sort
        return a.ravel().copy()
    if not (a[1:] >= a[:-1]).all():
        return np.unique(a)
    keep = np.empty(len(a), bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


class Notebook:
    """Seat ``seat``'s knowledge of every game of a batch of ``batch_size`` games with ``players`` players.

    Arrays (B = batch size, H = players + 1, the envelope last):

    ``has``, ``no`` (B, H, 21) bool; ``size`` (B, H) hand sizes; clauses "holder holds at
    least one of three cards" in ``cl_holder`` (B, K), ``cl_cards`` (B, K, 3), ``cl_live`` (B, K)
    (K grows when needed); accusation clauses "the envelope lacks one of" in ``acc_cards``
    (B, P, 3), ``acc_live`` (B, P); ``processed`` (B,) history records taken in; ``shown_by_me``
    (B, P, 21): cards this seat showed to each player; ``shown_to`` (B, P): refutations each
    player received, ``unrefuted`` (B, P): suggestions of each player that nobody refuted
    (public counts, for guessing how close opponents are), ``named`` (B, P, 21): cards each player
    has named in a suggestion (public, for telling how an opponent plays); ``bad`` (B,) contradiction seen (never
    happens in a consistent game); ``witness`` (B, 21, 21) / ``wvalid`` (B, 21): a stored
    consistent deal with each envelope card in the envelope (see ``_exact_envelope``);
    ``undecided`` (B,): the last exact search ran out of rounds; ``version`` (B,): a counter
    bumped whenever a game's facts may have changed (for caches).

    Options: ``exact`` decides every envelope cell exactly (witnesses and search, default);
    ``probe_cells`` ("envelope", "all" or None) adds failed-literal probing
    (:func:`cluedo_env.agents.knowledge.propagation.probe`);
    ``search_rounds`` bounds the search; up to ``witness_samples`` sampled deals per open cell are
    tried as witnesses before searching.
    """

    def __init__(
        self,
        batch_size: int,
        players: int,
        seat: int,
        exact: bool = True,
        exact_triples: int | None = None,
        probe_cells: str | None = None,
        search_rounds: int = 200,
        witness_samples: int = 4,
        seed: int | None = None,
    ) -> None:
        B, P = batch_size, players
        self.B, self.P, self.seat, self.E = B, P, seat, P
        self.exact = exact
        self.exact_triples = exact_triples
        self.probe_cells = probe_cells
        self.search_rounds = search_rounds
        self.witness_samples = witness_samples
        self.rng = np.random.default_rng(seed)
        self.has = np.zeros((B, P + 1, NUM_CARDS), bool)
        self.no = np.zeros((B, P + 1, NUM_CARDS), bool)
        self.size = np.zeros((B, P + 1), np.int64)
        self.cl_holder = np.zeros((B, 8), np.int8)
        self.cl_cards = np.zeros((B, 8, 3), np.int8)
        self.cl_live = np.zeros((B, 8), bool)
        self.acc_cards = np.zeros((B, P, 3), np.int8)
        self.acc_live = np.zeros((B, P), bool)
        self.processed = np.zeros(B, np.int64)
        self.shown_by_me = np.zeros((B, P, NUM_CARDS), bool)
        self.shown_to = np.zeros((B, P), np.int64)  # public: refutations each player has received
        self.unrefuted = np.zeros((B, P), np.int64)  # public: suggestions of each player nobody refuted
        self.named = np.zeros((B, P, NUM_CARDS), bool)  # public: cards each player has named in a suggestion
        self.bad = np.zeros(B, bool)
        self.witness = np.zeros((B, NUM_CARDS, NUM_CARDS), np.int8)
        self.wvalid = np.zeros((B, NUM_CARDS), bool)
        self.undecided = np.zeros(B, bool)
        self.version = np.zeros(B, np.int64)  # bumped whenever a game's facts may have changed
        # the compiled calls of every action, typed once (cluedo_env.agents.compiled)
        self._intake = EntryPoint(intake_kernel)
        self._propagate_call = EntryPoint(propagate_kernel)
        self._bind()
        self._compacted: np.ndarray | None = None  # scratch of add_records
        self._counts: np.ndarray | None = None  # scratch of clause_slots_needed
        self._clause_tmp: IntakeScratch | None = None  # scratch of the records' intake (_intake_scratch)
        self._pscratch: tuple | None = None  # scratch of propagate (_propagate_scratch)
        self._wscratch: WitnessScratch | None = None  # scratch of the witness sampler (_witness_scratch)

    def _bind(self) -> None:
        """The arrays as the kernels take them (:mod:`cluedo_env.agents.knowledge.types`): ``facts`` (a
        :class:`cluedo_env.agents.knowledge.facts.Facts` of all B games), ``witnesses`` and ``tallies``. Built here and
        again
        whenever an array is reallocated (:meth:`_grow`), so every call passes the same tuples; ``book`` holds them
        with ``bad`` and ``version``, what the players' kernels read."""
        self.facts = Facts(self.has, self.no, self.size, self.cl_holder, self.cl_cards, self.cl_live, self.acc_cards,
                           self.acc_live)  # fmt: skip
        self.witnesses = WitnessStore(self.witness, self.wvalid)
        self.tallies = Tallies(self.shown_by_me, self.shown_to, self.unrefuted, self.named)
        self.book = Book(self.facts, self.tallies, self.bad, self.version)

    # ------------------------------------------------------------------ reset
    def reset(self, idx: np.ndarray, hand: np.ndarray, hand_sizes: np.ndarray) -> None:
        """Games ``idx`` start: own hand (n, 21) bool, public hand sizes (n, P)."""
        idx = np.asarray(idx, np.int64)
        self.has[idx] = False
        self.no[idx] = False
        self.has[idx, self.seat] = hand
        self.no[idx, self.seat] = ~hand  # R-S6: the whole hand is known
        self.size[idx, : self.P] = hand_sizes
        self.size[idx, self.E] = ENVELOPE_SIZE
        self.cl_live[idx] = False
        self.acc_live[idx] = False
        self.processed[idx] = 0
        self.shown_by_me[idx] = False
        self.shown_to[idx] = 0
        self.unrefuted[idx] = 0
        self.named[idx] = False
        self.bad[idx] = False
        self.wvalid[idx] = False
        self.undecided[idx] = False
        self.propagate(idx)

    # ---------------------------------------------------------------- records
    def _grow(self, need: int) -> None:
        K = self.cl_live.shape[1]
        if need <= K:
            return
        newK = max(need, 2 * K)
        for name in ("cl_holder", "cl_cards", "cl_live"):
            old = getattr(self, name)
            new = np.zeros((old.shape[0], newK) + old.shape[2:], old.dtype)
            new[:, :K] = old
            setattr(self, name, new)
        self._bind()

    def add_records(self, rec: Records) -> np.ndarray:
        """Take in history records (complete ones only); returns the games that got new facts.

        Compiled (:func:`cluedo_env.agents.knowledge.notebook_intake.add_records_kernel`, record by record);
        :func:`tests.references.notebook.add_records_reference` is the numpy statement (the tests check both leave the
        same arrays).
        """
        if len(rec.game) == 0:
            return np.zeros(0, np.int64)
        game = np.asarray(rec.game, np.int64)
        response = np.ascontiguousarray(rec.response)
        self._make_room(rec, response)
        rows = RecordRows(game, rec.is_accusation, rec.player, np.ascontiguousarray(rec.triple), rec.correct, response)
        add_records_kernel(self.seat, rows, self.facts, self.tallies, self._intake_scratch())
        return _unique(game)

    def _make_room(self, rec: Records, response: np.ndarray) -> None:
        """Grow the clause slots to what records ``rec`` need (:func:`clause_slots_needed`), and set up the
        compaction flags of :func:`cluedo_env.agents.knowledge.notebook_intake.add_records_kernel`."""
        if len(rec.game):
            self._grow(clause_slots_needed(rec.game, rec.is_accusation, response, self.cl_live, self._count_scratch()))
        if self._compacted is None or len(self._compacted) != self.B:
            self._compacted = np.zeros(self.B, bool)

    def _intake_scratch(self) -> IntakeScratch:
        """The compaction flags (:meth:`_make_room`) and one row of clauses (holder (K,), cards (K, 3), live (K,)) as
        scratch of the records' intake, kept between calls (rebuilt when the clause slots grow)."""
        K = self.cl_live.shape[1]
        tmp = self._clause_tmp
        if tmp is None or len(tmp.holder) != K or tmp.compacted is not self._compacted:
            tmp = self._clause_tmp = IntakeScratch(
                self._compacted, np.empty(K, self.cl_holder.dtype), np.empty((K, 3), self.cl_cards.dtype),
                np.empty(K, bool),
            )  # fmt: skip
        return tmp

    def _count_scratch(self) -> np.ndarray:
        """(B,) int64 scratch of :func:`clause_slots_needed`, kept between calls."""
        if self._counts is None or len(self._counts) != self.B:
            self._counts = np.empty(self.B, np.int64)
        return self._counts

    def set_envelope(self, idx: np.ndarray, envelope: np.ndarray) -> None:
        """Envelope card ids (n, 3), -1 where unknown (this seat accused: R-A2)."""
        known = envelope[:, 0] >= 0
        if known.any():
            gi = idx[known]
            self.has[gi[:, None], self.E, envelope[known].astype(np.int64)] = True

    def update(self, view: PlayerView, idx: np.ndarray) -> None:
        """Take in every complete record of games ``idx`` not yet seen, then propagate.

        The intake (records, records taken in, the envelope seen, the games to propagate) is one compiled call
        (:func:`cluedo_env.agents.knowledge.notebook_intake.intake_kernel`);
        :func:`tests.references.notebook.update_reference` is
        the statement."""
        idx = np.ascontiguousarray(idx, np.int64)
        if len(idx) == 0:
            return
        limit, start = self._unread(view, idx)
        rec = view.records_between(idx, start, limit)
        response = np.ascontiguousarray(rec.response)
        self._make_room(rec, response)
        changed = np.empty(len(idx), np.int64)
        triple = np.ascontiguousarray(rec.triple)
        rows = RecordRows(rec.game, rec.is_accusation, rec.player, triple, rec.correct, response)
        m = self._intake(
            self.seat, idx, start, limit, view.envelope_if_known_of(idx), rows, self.facts, self.tallies,
            self._intake_scratch(), self.processed, changed,
        )  # fmt: skip
        if m:
            self.propagate(changed[:m])

    def _unread(self, view: PlayerView, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(limit, start) (n,) int64: the records of games ``idx`` to take in now are ``start`` .. ``limit - 1``. The
        last record of a game being refuted is still incomplete: it is left for later."""
        limit = view.hist_len[idx].astype(np.int64) - (view.phase[idx] == A.REFUTE)
        return limit, np.minimum(self.processed[idx], limit)

    # ------------------------------------------------------------ propagation
    def arrays(self, idx: np.ndarray) -> Facts:
        """The facts of games ``idx`` (copies of the cells and live flags, which reasoning updates in place)."""
        return Facts(
            self.has[idx].copy(),
            self.no[idx].copy(),
            self.size[idx],
            self.cl_holder[idx],
            self.cl_cards[idx],
            self.cl_live[idx].copy(),
            self.acc_cards[idx],
            self.acc_live[idx].copy(),
        )

    def sample_deals(
        self, idx: np.ndarray, samples: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`~cluedo_env.agents.knowledge.deal_sampling.sample_deals` of the facts of games ``idx`` (the same
        deals, without
        copies)."""
        idx = np.asarray(idx, np.int64)
        b = self.bits(idx)
        cl, acc = self.cl_cards[idx], self.acc_cards[idx]
        return sample_deals_bits(b.hb, b.nb, b.size, b.cl_holder, cl, b.cl_live, acc, b.acc_live, samples, rng)

    def bits(self, idx: np.ndarray) -> FactBits:
        """The facts of games ``idx`` on bitmasks (new arrays): ``self.arrays(idx).bits()``, without the bool copies."""
        idx = np.asarray(idx, np.int64)
        n = len(idx)
        hb, nb = np.empty((n, self.P + 1), np.int64), np.empty((n, self.P + 1), np.int64)
        cl_mask = np.empty((n, self.cl_live.shape[1]), np.int64)
        acc_mask = np.empty((n, self.P), np.int64)
        pack_rows_kernel(idx, self.has, self.no, self.cl_cards, self.acc_cards, hb, nb, cl_mask, acc_mask)
        return FactBits(
            hb, nb, self.size[idx], self.cl_holder[idx], cl_mask, self.cl_live[idx], acc_mask, self.acc_live[idx]
        )

    def propagate(self, idx: np.ndarray) -> None:
        """Close the facts of games ``idx`` (:func:`fixpoint_bits`, then exact envelope facts if ``exact``).

        Without probing, one compiled call (:func:`cluedo_env.agents.knowledge.notebook_propagation.propagate_kernel`)
        does the
        packing, the
        fixpoint, the choice of the envelope cells to decide, the check of the stored witnesses, the sampled
        witnesses and the write-back: a notebook propagates on nearly every action of its player, and these steps
        were a dozen calls. Only rows whose open cells sampling did not witness go on to the search
        (:meth:`_search_open`, shared with the probing path). :meth:`propagate_steps` is the statement."""
        idx = np.ascontiguousarray(idx, np.int64)
        if len(idx) == 0:
            return
        self.version[idx] += 1
        if self.probe_cells:
            self.propagate_steps(idx)
            return
        n = len(idx)
        bits, scratch = self._propagate_scratch(n)
        left = self._propagate_call(
            idx, self.facts, self.witnesses, self.bad, self.exact,
            -1 if self.exact_triples is None else int(self.exact_triples), int(self.witness_samples), self.rng, bits,
            scratch, self._witness_scratch(),
        )  # fmt: skip
        if left:  # open cells without a witness: the search decides them, then the write-back
            bad, unknown, valid = scratch.bad, scratch.unknown, scratch.valid
            bad |= self._search_open(idx, bits, unknown, valid)
            self.wvalid[idx] = valid
            propagate_back_kernel(idx, bits.hb, bits.nb, bits.cl_live, bits.acc_live, bad, self.has, self.no,
                                  self.cl_live, self.acc_live, self.bad)  # fmt: skip

    def _propagate_scratch(self, n: int) -> tuple[FactBits, PropagateScratch]:
        """Scratch of :meth:`propagate` for n rows: the rows' facts as bitmasks, then ``bad`` (n,), ``unknown`` and
        ``valid`` (n, 21), the fixpoint's and the witness rows' arrays. Kept between calls (rows of arrays grown to the
        largest n asked, rebuilt when the clause slots grow): every array is written before it is read."""
        H, K, P = self.P + 1, self.cl_live.shape[1], self.P
        have = self._pscratch
        if have is None or have[0] < n or have[1] != K:
            cap = max(n, 2 * have[0] if have is not None and have[1] == K else n)
            i64 = np.int64
            rows = (np.empty((cap, H), i64), np.empty((cap, H), i64), np.empty((cap, H), i64), np.empty((cap, K), i64),
                    np.empty((cap, K), i64), np.empty((cap, K), bool), np.empty((cap, P), i64),
                    np.empty((cap, P), bool), np.empty(cap, bool), np.empty((cap, NUM_CARDS), bool),
                    np.empty((cap, NUM_CARDS), bool), np.empty(cap * NUM_CARDS, i64),
                    np.empty(cap * NUM_CARDS, i64))  # fmt: skip
            fixed = (np.empty((2, H), i64), np.empty(K, i64), np.empty(K, bool), np.empty(K, i64))
            have = self._pscratch = (cap, K, rows, fixed)
        rows, (snap, unit, live_cols, clause_order) = have[2], have[3]
        r = [a[:n] for a in rows[:11]]
        cells = n * NUM_CARDS
        return FactBits(*r[:8]), PropagateScratch(r[8], r[9], r[10], snap, unit, rows[11][:cells], rows[12][:cells],
                                                  live_cols, clause_order)  # fmt: skip

    def _witness_scratch(self) -> WitnessScratch:
        """The one-deal scratch of :func:`cluedo_env.agents.knowledge.witnesses.witness_sample_kernel` (after
        ``unknown``), kept
        between calls (rebuilt when the clause slots grow), and the quotient table."""
        H, K, P = self.P + 1, self.cl_live.shape[1], self.P
        have = self._wscratch
        if have is None or have.clauses.cl_holder.shape[1] != K or have.fh.shape[1] != H:
            i64 = np.int64
            clauses = ClauseCards(np.empty((1, K), i64), np.empty((1, K, 3), i64), np.empty((1, K), bool),
                                  np.empty((1, P, 3), i64), np.empty((1, P), bool))  # fmt: skip
            start = DealStart(
                np.empty((1, NUM_CARDS), np.int8), np.empty((1, H), i64), np.empty((1, 3), i64), np.empty(1, i64),
                np.empty((1, 3), i64), np.empty((1, H, NUM_CARDS), bool), np.empty((1, NUM_CARDS), i64),
            )  # fmt: skip
            deal = DealScratch(
                np.empty((1, NUM_CARDS), np.int8), np.empty((1, H), i64), np.empty((1, 3), i64), np.empty(1, i64),
                np.empty((1, 3), i64), np.empty(1, bool), np.empty(1), np.empty((2, H)), QUOTIENTS,
            )  # fmt: skip
            have = self._wscratch = WitnessScratch(
                np.empty((1, H), i64), np.empty((1, H), i64), np.empty((1, H), i64), clauses, start,
                np.empty(NUM_CARDS, i64), deal,
            )  # fmt: skip
        return have

    def propagate_steps(self, idx: np.ndarray) -> None:
        """:meth:`propagate` step by step in numpy (and the path with probing): :meth:`bits`, :func:`fixpoint_bits`
        or :func:`probe`, :meth:`_exact_envelope`, then the write-back. The tests compare it with the compiled path.
        """
        idx = np.asarray(idx, np.int64)
        if self.probe_cells:
            facts = self.arrays(idx)
            bad = probe(facts, cells=self.probe_cells)
            bits = facts.bits()
        else:
            bits = self.bits(idx)
            bad = fixpoint_bits(bits)
        if self.exact:
            bad |= self._exact_envelope(idx, bits, bad)
        unpack_rows_kernel(idx, bits.hb, bits.nb, self.has, self.no)
        self.cl_live[idx], self.acc_live[idx] = bits.cl_live, bits.acc_live
        self.bad[idx] |= bad

    def _exact_envelope(self, idx: np.ndarray, bits: FactBits, bad: np.ndarray) -> np.ndarray:
        """Decide every unknown envelope cell: possible if a stored or new witness deal shows it, else search.

        A witness is a complete deal consistent with everything known that puts the card in
        the envelope; it stays valid until new facts contradict it, so most cells need no
        search after the first time. New witnesses come from a few deals sampled with the
        card forced into the envelope (:func:`sample_deals`), then from :func:`search_envelope`, which also proves
        the impossible cells. ``bits`` are the facts of games ``idx`` after :func:`fixpoint_bits`,
        updated in place. Returns new contradiction flags (none in a consistent game).

        The numpy statement of what :func:`cluedo_env.agents.knowledge.notebook_propagation.propagate_front_kernel`
        decides before
        the
        sampling (:meth:`propagate_steps`).
        """
        hb, nb = bits.hb, bits.nb
        E = self.E
        open_env = ~hb[:, E] & ~nb[:, E] & FULL
        open_env[bad] = 0
        if self.exact_triples is not None:  # only where few envelope hypotheses are left
            triples = np.bitwise_count(~nb[:, E, None] & CAT_BITS).astype(np.int64).prod(1)
            open_env[triples > self.exact_triples] = 0
        live = np.flatnonzero(open_env)
        if len(live) == 0:
            self.wvalid[idx] = False
            return np.zeros(len(idx), bool)
        unknown = np.zeros((len(idx), NUM_CARDS), bool)
        unknown[live] = unpack(open_env[live])
        valid = self.wvalid[idx] & unknown
        check_witnesses_kernel(
            idx, nb, self.cl_holder, self.cl_cards, bits.cl_live, self.acc_cards, bits.acc_live, self.witness, valid
        )
        new_bad = self._witness_or_search(idx, bits, unknown, valid)
        self.wvalid[idx] = valid
        return new_bad

    def _witness_or_search(self, idx: np.ndarray, bits: FactBits, unknown: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The open envelope cells ``unknown`` (n, 21) of games ``idx`` without a valid witness (``valid``, updated in
        place): witnesses from sampled deals, then the search, which proves the rest impossible (``bits`` updated in
        place). Returns new contradiction flags (none in a consistent game)."""
        left = 1
        if self.witness_samples:
            left = self._sample_witnesses(idx, bits, unknown, valid)
        if not left:
            return np.zeros(len(idx), bool)
        return self._search_open(idx, bits, unknown, valid)

    def _search_open(self, idx: np.ndarray, bits: FactBits, unknown: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The search (:func:`search_envelope`) of the open envelope cells ``unknown`` (n, 21) of games ``idx`` without
        a valid witness (``valid``, updated in place); it proves the rest impossible (``bits`` updated in place).
        Returns new contradiction flags (none in a consistent game)."""
        new_bad = np.zeros(len(idx), bool)
        need = unknown & ~valid
        todo = np.flatnonzero(need.any(1))
        if len(todo):
            sub = bits.take(todo)
            decided, witness, witnessed = search_envelope(
                sub, query=need[todo], max_rounds=self.search_rounds, rng=self.rng
            )
            gi = idx[todo]
            self.undecided[gi] = ~decided
            self.witness[gi] = np.where(witnessed[:, :, None], witness, self.witness[gi])
            valid[todo] |= witnessed
            new_bad[todo] = fixpoint_bits(sub)
            bits.hb[todo], bits.nb[todo] = sub.hb, sub.nb
            bits.cl_live[todo], bits.acc_live[todo] = sub.cl_live, sub.acc_live
        return new_bad

    def _sample_witnesses(self, idx: np.ndarray, bits: FactBits, unknown: np.ndarray, valid: np.ndarray) -> int:
        """Witnesses from sampled deals, cell by cell: for each open envelope cell without one (in row-major order),
        unless an earlier deal of this call already witnesses it, deals with the card forced into the envelope
        (clauses satisfied first), one at a time, at most ``witness_samples``, until one is consistent; it witnesses
        each of its envelope cards (``valid`` updated in place). Returns how many rows still have an open cell
        without a witness.

        Compiled (:func:`cluedo_env.agents.knowledge.witnesses.witness_rows_kernel`, then ``witness_sample_kernel``):
        the same
        deals, from the same random numbers, as :func:`tests.references.notebook.sample_witnesses_reference`."""
        n, K = bits.hb.shape[0], bits.cl_live.shape[1]
        rows, cards, live_cols = np.empty(n * NUM_CARDS, np.int64), np.empty(n * NUM_CARDS, np.int64), np.empty(K, bool)
        R = witness_rows_kernel(unknown, valid, bits.cl_live, rows, cards, live_cols)
        if R == 0:
            return 0
        clause_order = random_clause_order(self.rng, live_cols)
        bits = bits._replace(size=np.ascontiguousarray(bits.size, np.int64))
        return witness_sample_kernel(
            idx, rows[:R], cards[:R], bits, self.facts, self.witness_samples, clause_order, self.rng, self.witness,
            valid, unknown, self._witness_scratch(),
        )  # fmt: skip

    def _register(
        self, idx: np.ndarray, rows: np.ndarray, owner: np.ndarray, alive: np.ndarray, valid: np.ndarray
    ) -> None:
        """Store sampled consistent deals (owner (r, M, 21), alive (r, M)) as witnesses of their envelope cards."""
        register_witnesses_kernel(idx, rows, owner, alive, self.E, self.witness, valid)

    # ---------------------------------------------------------------- queries
    def envelope_known(self, idx: np.ndarray) -> np.ndarray:
        """(n, 3) envelope card ids where the category is determined, else -1."""
        out = np.empty((len(idx), 3), np.int64)
        envelope_known_kernel(self.has, np.asarray(idx, np.int64), self.E, out)
        return out

    def solved(self, idx: np.ndarray) -> np.ndarray:
        """(n,) bool: the whole envelope is determined (and the notebook is consistent)."""
        return (self.has[idx, self.E].sum(1) == 3) & ~self.bad[idx]

    def marginals(self, idx: np.ndarray) -> np.ndarray:
        """(n, H, 21) rough probability that each holder holds each card, from the facts only (see
        :func:`cluedo_env.agents.knowledge.deal_sampling.marginals`)."""
        return marginals_rows(self.has, self.no, self.size, idx)


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**KERNEL)
def envelope_known_kernel(has: np.ndarray, idx: np.ndarray, E: int, out: np.ndarray) -> None:
    """``out`` (n, 3): per category, the first envelope card (holder ``E``) of ``has`` (B, H, 21) in games ``idx``,
    or -1."""
    for i in range(idx.shape[0]):
        for k in range(3):
            out[i, k] = envelope_card(has, idx[i], E, k)
