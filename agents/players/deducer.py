"""The deducer: full constraint reasoning (agents/knowledge/propagation.py), envelope-seeking suggestions, certain
accusations.

Per seat and batch, a :class:`cluedo_env.agents.knowledge.notebook.Notebook` is kept up to date from
``view.new_records`` (it remembers how many records of each game it has taken in, and
forgets a game on ``reset``). The notebook's facts are sound, and once at most 8 solution
hypotheses are left every envelope cell is decided exactly (see the notebook's
docstring), so the deducer knows the solution as soon as the information it has proves it.

Play, batched over the games where the seat is to act:

* **Accuse** only when certain: all three envelope cards proved. Where the accusation is
  not open yet (``accusation_in_room``: only from the solution room, R-A1), the solution
  room becomes the only room worth going to.
* **Suggest** the triple with the highest expected information about the *envelope*
  (:func:`cluedo_env.agents.knowledge.suggestion_value.envelope_information`): how much the answer (who refutes,
  and which card is shown to us) is expected to reduce the uncertainty of each envelope card,
  from per-card holder probabilities (:meth:`Notebook.marginals`, or better ones that a
  subclass supplies) under an independence approximation, for the refutation rule in force
  (first refuter, or everybody with ``refutation=all``). Learning who holds a card that
  cannot be the envelope's is worth nothing there, so the deducer spends no turn on
  it. Naming a card whose place is known to us (our own, or a proved envelope card) is a
  "blank": nobody can show it, so the answer is about the other two; that is how own cards
  isolate a category, and the score finds when it pays. Optional terms
  (:meth:`DeducerAgent.suggestion_scores`): ``deal_weight`` x information about the whole deal,
  ``leak_weight`` x what the public answer teaches the other players; both default to 0, as
  measured (cards, 4 players, 1,000 games): the envelope score alone needs 4.9 rounds against
  three notebook players (6.5 with a whole-deal score) and wins 84% against three
  heuristic players; a leak penalty of 0.5 or 1 did not change the win rate against three
  deducers (24-26%, parity 25%). On the board the room is the one we stand in (R-G1) and all
  36 suspect x weapon pairs are scored; in the card-only game the best few cards of each
  category (most uncertain to be the envelope's) plus a blank are combined.
* **Reading naive tables** (``naive_model``, :mod:`cluedo_env.agents.knowledge.opponent_model`): while no opponent
  has named a card we know it holds, the table is taken to be players that only cross cards
  off (heuristic, notebook), which never name their own cards; their suggestions then say
  what they do not hold. The probabilities that score suggestions and rooms are
  ``naive_mix`` = 0.85 x the marginals of those assumed facts + 0.15 x the notebook's own: all
  model (1.0) makes an envelope card the model has settled look certain, and the deducer,
  which must *prove* it, would stop asking about it (78% instead of 84% in cards against three
  heuristic players). Accusations still need proof (the assumed facts never reach the
  notebook), so the deducer stays sound. Measured (4 seeds x 2,000 games, seeds 10-13, against
  three heuristic players): cards 83.8% -> 88.6% (mix 0.2: 86.9%, 0.35: 88.2%, 0.5: 87.2%,
  0.7: 87.5%, 0.95: 88.4%), classic board 78.4% -> 81.3% (mix 0.5: 79.8%); against three
  notebook players in cards it needs 4.31 instead of 4.96 rounds (2,000 games, seed 0).
* **Move** toward the room with the best value per turn of travel
  (:mod:`cluedo_env.agents.planning.movement`: expected turns from the board's distance table and the roll
  distribution, secret passages, staying after being dragged). A room's value is the best
  suggestion score there (best of four suspect x weapon pairs: the card of each category
  most uncertain to be the envelope's, or a blank), computed at the start of the turn; so
  the room choice and the travel are weighed with the envelope information.
  ``blocking_aware`` (off by default) plans around the tokens that block squares and doors
  (R-M2, R-M6; *Blocking* in :mod:`cluedo_env.agents.planning.movement`): measured no stronger (against three
  deducers 24.8% [24.1-25.4], parity 25%, 8 x 2,000 classic games, seeds 0-7) and 10-15% slower.
* **Refute**: show the named card that teaches the suggester least: one it has already seen
  from us, else one of the category where it has the most candidates left
  (:mod:`cluedo_env.agents.players.refutation`, shared with the expert).
* Otherwise end the turn.

Every choice is checked against the legal mask; an illegal one (a bug) would be replaced
by a random legal action and counted in ``fallbacks`` (tests insist on zero).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import EntryPoint
from cluedo_env.agents.knowledge.facts import FactBits, unpack_rows_kernel
from cluedo_env.agents.knowledge.marginals import marginals_rows
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.knowledge.opponent_model import assumed_bits
from cluedo_env.agents.knowledge.suggestion_value import envelope_information, public_information
from cluedo_env.agents.knowledge.types import AssumedScratch, Assumptions
from cluedo_env.agents.planning.movement import TIE, choose_moves, empty_board_tables, turn_start_choice
from cluedo_env.agents.players.base import Agent, replace_illegal, suggestion_room
from cluedo_env.agents.players.deducer_decisions import (
    decision_rows_kernel,
    deducer_decisions_kernel,
    goal_rooms_kernel,
    naive_probabilities_kernel,
    proved_accusations_kernel,
)
from cluedo_env.agents.players.refutation import refute_kernel
from cluedo_env.agents.players.suggestion_choice import (
    best_suggestion_kernel,
    candidates_kernel,
    deal_information_kernel,
    room_values_kernel,
)
from cluedo_env.agents.players.types import (
    Decided,
    DecisionCaches,
    DecisionOptions,
    DecisionScratch,
    DecisionView,
    MoveTables,
    NaiveScratch,
    RefuteScratch,
    SuggestionRows,
)

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS, load_board
from cluedo_env.rules.cards import NUM_CARDS, NUM_ROOMS, NUM_SUSPECTS, NUM_WEAPONS, ROOM_CARD0, WEAPON_CARD0

# The 7 non-empty subsets of the three named cards, and 1/|S| per member.


def information(prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool) -> np.ndarray:
    """(n, T) expected information (bits) about the whole deal of suggesting each triple of ``cards`` (n, T, 3).

    Compiled (:func:`cluedo_env.agents.players.suggestion_choice.deal_information_kernel`);
    :func:`tests.references.deducer.information_reference` is the numpy statement (the two agree to about 1e-15: the
    sums run in another order).
    """
    n, T, _ = cards.shape
    out = np.empty((n, T))
    deal_information_kernel(
        np.ascontiguousarray(prob, np.float64), np.ascontiguousarray(cards, np.int64),
        np.ascontiguousarray(order, np.int64), bool(refute_all), out,
    )  # fmt: skip
    return out


_PASSAGE_TO = load_board().passage  # (197,) the room location a secret passage leads to, -1: none
_OWN_STEPS: dict[type, bool] = {}  # per class: whether it keeps every step of DeducerAgent._COMPILED_STEPS


class DeducerAgent(Agent):
    """Constraint reasoning to a fixpoint, exact envelope facts, information-seeking play; accuses only when certain."""

    name = "deducer"

    def __init__(
        self,
        seed: int | None = None,
        shortlist: int = 3,
        room_shortlist: int = 1,
        notebook_options: dict | None = None,
        deal_weight: float = 0.0,
        leak_weight: float = 0.0,
        naive_model: bool = True,
        naive_model_rounds: float = 0.0,
        naive_mix: float = 0.85,
        blocking_aware: bool = False,
    ) -> None:
        """``notebook_options`` go to :class:`Notebook` (default: exact envelope facts once at most
        ``exact_triples=8`` solution hypotheses are left, where they decide the accusation).
        ``deal_weight``, ``leak_weight``: see :meth:`suggestion_scores`. ``blocking_aware``: plan moves around
        the tokens that block (``blocking=True`` in :mod:`cluedo_env.agents.planning.movement`; off: the empty
        board)."""
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.shortlist = shortlist
        self.room_shortlist = room_shortlist
        self.deal_weight = deal_weight
        self.leak_weight = leak_weight
        self.naive_model = naive_model
        self.naive_model_rounds = naive_model_rounds
        self.naive_mix = naive_mix
        # plan moves around the tokens that block now (cluedo_env.agents.planning.movement)
        self.blocking_aware = blocking_aware
        self.notebook_options = {"exact_triples": 8, **(notebook_options or {})}
        self.notebook: Notebook | None = None
        self.fallbacks = 0
        self._rv: np.ndarray | None = None  # (B, 9) room values of the current turn
        self._rv_turn = np.zeros(0, np.int64)
        self._order_rows = np.zeros((0, 0), np.int64)  # cached rows of _order
        self._card_rows = (np.zeros((0, NUM_SUSPECTS), np.int64), np.zeros((0, NUM_WEAPONS), np.int64))
        self._pcache: tuple | None = None  # (notebook, has_board, prob (B, H, 21), version (B,), key (B,))
        self._dscratch: tuple | None = None  # scratch of the one-call decisions (_decision_args)
        self._decisions = EntryPoint(deducer_decisions_kernel)  # typed once (cluedo_env.agents.compiled)
        self._nscratch: tuple | None = None  # scratch of the naive-model kernel (_naive_scratch)
        self._no_refuters: tuple | None = None  # (_no_refuter_facts)

    # ------------------------------------------------------------------ notebook
    def _ensure(self, view: PlayerView) -> Notebook:
        nb = self.notebook
        if nb is None or nb.B != view.batch_size or nb.P != view.num_players or nb.seat != view.seat:
            seed = None if self.seed is None else self.seed + 7919
            nb = Notebook(view.batch_size, view.num_players, view.seat, seed=seed, **self.notebook_options)
            self.notebook = nb
            self._compile_decisions_ahead(view)
            nb.reset(np.arange(view.batch_size), view.hand, view.hand_sizes)
        return nb

    def _compile_decisions_ahead(self, view: PlayerView) -> None:
        """On an empty cache, start compiling the one-call decisions (:meth:`_decision_args`) in a helper process, so
        that they compile while the notebook's kernels compile here (:mod:`cluedo_env.engine.compile_ahead`)."""
        if self._decisions.signature is None and self._compiled_decisions():
            idx = np.zeros(1, np.int64)  # (one game: the types are those of any batch)
            out, rows, counts = np.empty(1, np.int64), np.empty((3, 1), np.int64), np.empty(3, np.int64)
            self._decisions.compile_ahead(*self._decision_args(view, idx, view.legal_action_mask_of(idx), out, rows,
                                                               counts))  # fmt: skip

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        nb = self._ensure(view)
        idx = np.asarray(idx, np.int64)
        nb.reset(idx, view.hand[idx], view.hand_sizes[idx])

    def model_options(self, view: PlayerView, idx: np.ndarray, naive_rounds: float | None = None) -> dict:
        """The options of :func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits` that :meth:`model_bits` uses
        in games
        ``idx``:
        the naive-player model (``naive_model``) from round ``naive_rounds`` (default ``naive_model_rounds``) on.
        A subclass that assumes more (the expert's refuter model) adds its options here, so the compiled
        probabilities (:meth:`_probabilities_into`) take them too."""
        rounds = self.naive_model_rounds if naive_rounds is None else naive_rounds
        return {"allow": view.turn_count[idx] >= rounds * view.num_players, "naive": self.naive_model}

    def model_bits(self, view: PlayerView, idx: np.ndarray, naive_rounds: float | None = None) -> FactBits:
        """The facts probabilities start from, as bitmasks: the notebook's, plus what the opponent models assume
        (:meth:`model_options`; the deducer's: what naive opponents' suggestions say about their hands,
        :func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits`). Never used to accuse."""
        opts = self.model_options(view, idx, naive_rounds)
        return assumed_bits(self.notebook, idx, view.config.has_board, **opts)[0]

    def probabilities(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(n, H, 21) holder probabilities used to score suggestions (the expert refines them).

        Cached per game: they depend only on the notebook (its ``version`` is bumped whenever a game's facts,
        records included, may have changed) and on whether the naive-player model applies yet (``late``,
        from the turn count), so the room values at the start of a turn, the suggestion of the same turn and
        turns in which nobody learned anything share one computation (the same numbers: every step is
        row by row). A subclass whose :meth:`model_bits` depends on more must bump the notebook's version
        or override :meth:`_probability_key`.
        """
        nb = self.notebook
        key = self._probability_key(view, idx)
        prob, version, stamp = self._probability_cache(view)
        stale = (version[idx] != nb.version[idx]) | (stamp[idx] != key)
        if stale.any():
            g = idx[stale]
            if self._compiled_probabilities():
                self._probabilities_into(view, g, prob)
            else:
                prob[g] = self._probabilities(view, g)
            version[g] = nb.version[g]
            stamp[g] = key[stale]
        return prob[idx]

    def _probability_cache(self, view: PlayerView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cache of :meth:`probabilities`: ``prob`` (B, H, 21) float64, and per game the notebook ``version`` and
        the key (:meth:`_probability_key`) they were computed at (int64, (B,)); new for a new notebook or preset."""
        nb = self.notebook
        cache = self._pcache
        if cache is None or cache[0] is not nb or cache[1] != view.config.has_board:
            B, H = nb.B, nb.P + 1
            cache = self._pcache = (nb, view.config.has_board, np.zeros((B, H, NUM_CARDS)),
                                    np.full(B, -1, np.int64), np.zeros(B, np.int64))  # fmt: skip
        return cache[2], cache[3], cache[4]

    def _probability_key(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(n,) int64: what :meth:`_probabilities` depends on besides the notebook (its ``version``): whether the
        naive-player model applies yet."""
        return (view.turn_count[idx] >= self.naive_model_rounds * view.num_players).astype(np.int64)

    def _compiled_probabilities(self) -> bool:
        """Whether :meth:`_probabilities` is the deducer's own (the opponent models as :meth:`model_bits` states them,
        from :meth:`model_options`): then :meth:`_probabilities_into` computes the same numbers in one compiled
        call."""
        cls = type(self)
        return (
            self.naive_model
            and cls._probabilities is DeducerAgent._probabilities
            and cls.model_bits is DeducerAgent.model_bits
        )

    def _probabilities_into(self, view: PlayerView, idx: np.ndarray, out: np.ndarray) -> None:
        """``out[idx]`` = :meth:`_probabilities` of games ``idx`` (the opponent models of :meth:`model_options`),
        compiled: :func:`cluedo_env.agents.players.deducer_decisions.naive_probabilities_kernel`."""
        nb = self.notebook
        opts = self.model_options(view, idx)
        lacks, deviant = opts.get("refuters") or self._no_refuter_facts(nb.P)
        scratch = self._naive_scratch()
        model = Assumptions(
            nb.seat, view.config.has_board, bool(opts["naive"]), bool(opts.get("strong_allows", False)),
            np.ascontiguousarray(opts["allow"], bool), scratch[1], lacks, deviant,
        )  # fmt: skip
        naive_probabilities_kernel(idx, model, float(self.naive_mix), nb.book, out, scratch[0])

    def _probabilities(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """:meth:`probabilities`, computed (the numpy statement; :meth:`_probabilities_into` is the compiled path
        of the deducer's own model)."""
        if not self.naive_model:
            return self.notebook.marginals(idx)
        bits = self.model_bits(view, idx)
        n, H = bits.hb.shape
        has, no = np.empty((n, H, NUM_CARDS), bool), np.empty((n, H, NUM_CARDS), bool)
        rows = np.arange(n)
        unpack_rows_kernel(rows, bits.hb, bits.nb, has, no)
        model = marginals_rows(has, no, np.asarray(bits.size, np.int64), rows)
        if self.naive_mix >= 1.0:
            return model
        own = self.notebook.marginals(idx)  # naive_mix * model + (1 - naive_mix) * own, in place (the same numbers)
        model *= self.naive_mix
        own *= 1.0 - self.naive_mix
        model += own
        return model

    # ------------------------------------------------------------------ acting
    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.ascontiguousarray(idx, np.int64)  # (the compiled calls take C-contiguous int64 indices)
        nb = self._ensure(view)
        nb.update(view, idx)
        n = len(idx)
        mask = view.legal_action_mask_of(idx)
        out, rows, counts = np.empty(n, np.int64), np.empty((3, n), np.int64), np.empty(3, np.int64)
        if self._compiled_decisions():
            self._decisions(*self._decision_args(view, idx, mask, out, rows, counts))
            if not (self.blocking_aware and counts[2]):  # else moves left to the Python planner
                self.fallbacks += replace_illegal(out, mask, self.rng)
                return out
            sel = rows[2, : counts[2]]
            phase = view.phase[idx]
            value = self._rv[idx[sel]]
        else:
            phase = view.phase[idx]
            accuse = self.accusations(view, idx, mask)  # -1 where not accusing now
            decision_rows_kernel(phase, accuse, out, rows, counts)  # accusations, END_TURN in POST; the rest by kind
            sel = rows[0, : counts[0]]
            if len(sel):
                out[sel] = self.refute(view, idx[sel], mask[sel])
            sel = rows[1, : counts[1]]
            if len(sel):
                out[sel] = self.suggest(view, idx[sel], mask[sel])
            sel = rows[2, : counts[2]]
            value = self._cached_room_values(view, idx[sel]) if len(sel) else None
        if len(sel):
            start = phase[sel] == A.START
            s = sel[start]
            if len(s):
                out[s] = turn_start_choice(view, idx[s], value[start], mask=mask[s], blocking=self.blocking_aware)
            m = sel[~start]
            if len(m):
                out[m] = choose_moves(
                    view, idx[m], value[~start], mask=mask[m], rng=self.rng, blocking=self.blocking_aware
                )
        self.fallbacks += replace_illegal(out, mask, self.rng)
        return out

    # Methods whose steps the one-call decisions (:meth:`_decision_args`) run compiled: a subclass that overrides one
    # takes the Python path.
    _COMPILED_STEPS = ("accusations", "refute", "suggest", "probabilities", "_probabilities", "_probability_key",
                       "model_bits", "model_options", "_cached_room_values", "room_values", "_candidates", "_goal_room",
                       "suggestion_scores", "deal_weights", "_order", "_envelope_only")  # fmt: skip

    def _compiled_decisions(self) -> bool:
        """Whether :meth:`act` decides in one compiled call (:meth:`_decision_args`): this class's own steps
        (none of ``_COMPILED_STEPS`` overridden), the naive-player model on and the envelope information alone."""
        cls = type(self)
        own = _OWN_STEPS.get(cls)
        if own is None:
            own = _OWN_STEPS[cls] = all(getattr(cls, m) is getattr(DeducerAgent, m) for m in self._COMPILED_STEPS)
        return own and bool(self.naive_model) and not self.leak_weight and not self.deal_weight

    def _decision_args(
        self, view: PlayerView, idx: np.ndarray, mask: np.ndarray, out: np.ndarray, rows: np.ndarray,
        counts: np.ndarray,
    ) -> tuple:  # fmt: skip
        """The arguments of the steps of :meth:`act` in one call of
        :func:`cluedo_env.agents.players.deducer_decisions.deducer_decisions_kernel`:
        the
        same choices and random numbers as :meth:`accusations`, :meth:`refute`, :meth:`suggest`,
        :meth:`_cached_room_values` (whose cache ``_rv`` it fills) and the empty board's movement planner
        (:func:`cluedo_env.agents.planning.movement.turn_start_choice`, ``choose_moves``), which remain the readable
        statement (the
        tests
        compare the two paths action by action). With ``blocking_aware`` the moves are left to the planner."""
        nb = self.notebook
        n, B, H, P = len(idx), view.batch_size, nb.P + 1, nb.P
        if self._rv is None or self._rv.shape[0] != B:
            self._rv = np.zeros((B, NUM_ROOMS))
            self._rv_turn = np.full(B, -1, np.int64)
        prob, pver, pstamp = self._probability_cache(view)
        k = max(self.shortlist, self.room_shortlist) + 1
        T = max(NUM_SUSPECTS * NUM_WEAPONS, (self.shortlist + 1) ** 3)
        L = NUM_LOCATIONS  # MOVE destinations
        scratch = self._dscratch  # kept between calls; the kernel reads only what it wrote in this call
        naive, no_extra = self._naive_scratch()
        if scratch is None or scratch[0] < n or scratch[1] != (H, k, T) or scratch[2].naive is not naive:
            cap = max(n, 2 * scratch[0] if scratch is not None and scratch[1] == (H, k, T) else n)
            i64 = np.int64
            refute = RefuteScratch(np.empty((1, H, NUM_CARDS)), np.empty((H, NUM_CARDS)), naive.bits.hb, naive.bits.nb)
            arrays = DecisionScratch(
                np.empty(cap, np.int8), np.empty(cap, i64), np.empty(cap, i64), np.empty((cap, A.NUM_ACTIONS), bool),
                np.empty(cap, i64),
                np.empty((cap, H, NUM_CARDS)), np.empty(cap * 2 * NUM_CARDS),
                np.empty(cap * max(T, L)), np.empty(3 * cap * k, i64), np.empty(cap, i64),
                np.empty((3 * (P - 1) + 2, NUM_CARDS)), np.empty(2 * T), np.empty((3, max(k, NUM_ROOMS)), i64),
                np.empty((cap, NUM_ROOMS)), np.empty(NUM_CARDS), np.empty(cap, i64), refute, naive,
            )  # fmt: skip
            scratch = self._dscratch = (cap, (H, k, T), arrays, np.empty(cap, bool))
        plan_moves = view.config.has_board and not self.blocking_aware  # else the Python planner moves
        S, S_roll = empty_board_tables(view.config.dice)  # (read only where plan_moves)
        cs, cw = self._every_card_rows(n)
        lacks, deviant = self._no_refuter_facts(P)
        options = DecisionOptions(float(self.naive_model_rounds * P), float(self.naive_mix),
                                  view.config.refutation == "all", int(self.shortlist), int(self.room_shortlist),
                                  plan_moves)  # fmt: skip
        return (
            idx, DecisionView(view.phase, mask, view.current, view.turn_count, view.pos), options,
            Assumptions(nb.seat, view.config.has_board, True, False, scratch[3], no_extra, lacks, deviant), nb.book,
            DecisionCaches(prob, pver, pstamp, self._rv, self._rv_turn), SuggestionRows(self._order(view, n), cs, cw),
            MoveTables(_PASSAGE_TO, S, S_roll, TIE), self.rng, Decided(out, rows, counts), scratch[2],
        )  # fmt: skip

    def _no_refuter_facts(self, P: int) -> tuple[np.ndarray, np.ndarray]:
        """The refuter model's options of
        :func:`cluedo_env.agents.players.deducer_decisions.naive_probabilities_kernel` where
        there is
        none (the deducer's): ``lacks`` (0, P, 21), ``deviant`` (0, P) bool, kept."""
        have = self._no_refuters
        if have is None or have[1].shape[1] != P:
            have = self._no_refuters = (np.zeros((0, P, NUM_CARDS), bool), np.zeros((0, P), bool))
        return have

    def _naive_scratch(self) -> tuple[NaiveScratch, np.ndarray]:
        """The one-game scratch of :func:`cluedo_env.agents.players.deducer_decisions.naive_probabilities_kernel` and
        its model's
        ``extra_no`` (0, P, 21) bool (no extra facts), kept between calls (rebuilt when the clause slots grow); shared
        by :meth:`_probabilities_into` and :meth:`_decision_args`."""
        nb = self.notebook
        H, P, K = nb.P + 1, nb.P, nb.cl_live.shape[1]
        have = self._nscratch
        if have is None or have[0].bits.cl_holder.shape[1] != K or have[0].bits.hb.shape[1] != H:
            i64 = np.int64
            # the dtypes of cluedo_env.agents.knowledge.opponent_model.assumed_bits': one compiled version
            bits = FactBits(
                np.empty((1, H), i64), np.empty((1, H), i64), np.empty((1, H), nb.size.dtype),
                np.empty((1, K), nb.cl_holder.dtype), np.empty((1, K), i64), np.empty((1, K), bool),
                np.empty((1, P), i64), np.empty((1, P), bool),
            )  # fmt: skip
            assumed = AssumedScratch(np.empty((1, P), i64), np.empty(1, bool), np.empty((2, H), i64), np.empty(K, i64),
                                     np.empty((1, K), i64))  # fmt: skip
            naive = NaiveScratch(bits, assumed, np.empty(1, bool), np.empty((1, H, NUM_CARDS)),
                                 np.empty((1, H, NUM_CARDS)), np.empty((H, NUM_CARDS)))  # fmt: skip
            have = self._nscratch = (naive, np.zeros((0, P, NUM_CARDS), bool))
        return have

    def accusations(self, view: PlayerView, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n,) ACCUSE action where the solution is proved and the accusation is open now, else -1 (compiled:
        :func:`cluedo_env.agents.players.deducer_decisions.proved_accusations_kernel`)."""
        nb = self.notebook
        idx = np.asarray(idx, np.int64)
        out = np.empty(len(idx), np.int64)
        proved_accusations_kernel(nb.has, nb.bad, idx, mask, view.phase[idx], out)
        return out

    def refute(self, view: PlayerView, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n,) SHOW action: the named card that teaches the suggester least
        (:mod:`cluedo_env.agents.players.refutation`), from
        the
        notebook's own marginals (rough is enough; no sampling here). Compiled
        (:func:`cluedo_env.agents.players.refutation.refute_kernel`); :func:`tests.references.deducer.refute_reference`
        is the
        numpy statement."""
        nb = self.notebook
        idx = np.asarray(idx, np.int64)
        n, H = len(idx), nb.P + 1
        suggester = view.current[idx].astype(np.int64)  # whose suggestion is refuted: the player whose turn it is
        noise = self.rng.random((n, NUM_CARDS))  # the reference's tie-break numbers, in its order
        out = np.empty(n, np.int64)
        scratch = RefuteScratch(np.empty((1, H, NUM_CARDS)), np.empty((H, NUM_CARDS)), np.empty((1, H), np.int64),
                                np.empty((1, H), np.int64))  # fmt: skip
        refute_kernel(nb.facts, nb.tallies, idx, suggester, mask, noise, out, scratch)
        return out

    # ------------------------------------------------------------------ suggestions
    def _order(self, view: PlayerView, n: int) -> np.ndarray:
        """(n, P - 1) int64 C-contiguous: the seats asked in turn after this one (R-G5), one row per game (rows of
        one cached array: the kernels read it, nobody writes it)."""
        P = view.num_players
        cache = self._order_rows
        if cache.shape[0] < n or cache.shape[1] != P - 1 or (P > 1 and cache[0, 0] != (view.seat + 1) % P):
            cache = self._order_rows = np.ascontiguousarray(
                np.broadcast_to((view.seat + np.arange(1, P)) % P, (max(n, view.batch_size), P - 1)), np.int64
            )
        return cache[:n]

    def _every_card_rows(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """((n, 6), (n, 6)) int64: every suspect card and every weapon card, one row per game (cached, read only)."""
        if self._card_rows[0].shape[0] < n:
            rows = max(n, 2 * self._card_rows[0].shape[0])
            self._card_rows = (np.tile(np.arange(NUM_SUSPECTS), (rows, 1)),
                               np.tile(WEAPON_CARD0 + np.arange(NUM_WEAPONS), (rows, 1)))  # fmt: skip
        return self._card_rows[0][:n], self._card_rows[1][:n]

    def _candidates(self, prob: np.ndarray, k: int, categories: int = 3) -> list[np.ndarray]:
        """Per category, (n, k + 1) card ids: the k cards most uncertain to be the envelope's and the best blank.

        Uncertainty: the binary entropy of "in the envelope", then (a tenth as much) of the card's holder.
        Compiled (:func:`cluedo_env.agents.players.suggestion_choice.candidates_kernel`, on the random numbers
        :func:`tests.references.deducer.candidates_reference` draws, in its order). ``categories`` = 2: the rooms' row
        is not chosen (its numbers are drawn all the same); the room values score every room.
        """
        n = len(prob)
        noise = self.rng.random(2 * n * NUM_CARDS)  # the reference's draws, in its order, in one call
        out = np.empty((3, n, k + 1), np.int64)  # by category: each category's rows contiguous
        candidates_kernel(
            np.ascontiguousarray(prob, np.float64), self.notebook.seat, k, noise[: n * NUM_CARDS],
            noise[n * NUM_CARDS :], out, np.empty(NUM_CARDS), categories,
        )  # fmt: skip
        return [out[0], out[1], out[2]]

    def deal_weights(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(n,) weight of the whole-deal information in each game's suggestion score (``deal_weight``)."""
        return np.full(len(idx), self.deal_weight)

    def suggestion_scores(self, view: PlayerView, idx: np.ndarray, prob: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """(n, T) value of suggesting each triple of ``cards`` (n, T, 3) in games ``idx``, in bits.

        Expected information about the envelope
        (:func:`cluedo_env.agents.knowledge.suggestion_value.envelope_information`),
        plus ``deal_weight`` times the information about the whole deal (holders found now can
        settle the envelope later, through clauses and hand sizes), minus ``leak_weight`` times
        what the public answer teaches an opponent about the envelope
        (:func:`cluedo_env.agents.knowledge.suggestion_value.public_information`).
        """
        order = self._order(view, len(idx))
        refute_all = view.config.refutation == "all"
        score = envelope_information(prob, cards, order, refute_all)
        deal = self.deal_weights(view, idx)
        if deal.any():
            score = score + deal[:, None] * information(prob, cards, order, refute_all)
        if self.leak_weight:
            sizes = view.hand_sizes[idx].astype(np.float64)
            score = score - self.leak_weight * public_information(prob, cards, order, refute_all, view.seat, sizes)
        return score

    def _envelope_only(self, view: PlayerView, idx: np.ndarray) -> bool:
        """Whether :meth:`suggestion_scores` is the envelope information alone in games ``idx`` (no deal or leak
        term, not overridden): then suggestions and room values take the compiled path, with the same scores."""
        cls = type(self)
        if cls.suggestion_scores is not DeducerAgent.suggestion_scores or self.leak_weight:
            return False
        if cls.deal_weights is DeducerAgent.deal_weights:  # a constant: no array to build
            return not self.deal_weight
        return not self.deal_weights(view, idx).any()

    def suggest(self, view: PlayerView, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n,) SUGGEST action with the highest expected information among the legal ones.

        Compiled (:func:`cluedo_env.agents.players.suggestion_choice.best_suggestion_kernel`) where the score is the
        envelope
        information alone; the numpy path below computes the same, and any score."""
        n = len(idx)
        prob = self.probabilities(view, idx)
        legal = mask[:, A.SUGGEST0 : A.SHOW0]
        if self._envelope_only(view, idx):  # the score is the envelope information alone: compiled
            # (every array C-contiguous, as deducer_decisions_kernel passes them: one compiled version)
            if view.config.has_board:
                room = suggestion_room(mask).clip(0, NUM_ROOMS - 1)
                cs, cw = self._every_card_rows(n)
                cr = (ROOM_CARD0 + room)[:, None]
            else:
                cs, cw, cr = self._candidates(prob, self.shortlist)
            noise = self.rng.random((n, cs.shape[1] * cw.shape[1] * cr.shape[1]))
            best = np.empty(n, np.int64)
            pre = np.empty((3 * (view.num_players - 1) + 2, NUM_CARDS))
            memo = np.empty(2 * noise.shape[1])  # the scores, then the bounds (best_suggestion_kernel)
            reps = np.empty((3, max(cs.shape[1], cw.shape[1], cr.shape[1])), np.int64)
            best_suggestion_kernel(
                np.ascontiguousarray(prob, np.float64), cs, cw, np.ascontiguousarray(cr), self._order(view, n),
                view.config.refutation == "all", np.ascontiguousarray(legal), noise, best, pre, memo, reps,
            )  # fmt: skip
            return np.where(best >= 0, A.SUGGEST0 + best, -1)
        if view.config.has_board:
            room = suggestion_room(mask).clip(0, NUM_ROOMS - 1)  # the room named (R-G1), as the mask says
            s = np.repeat(np.arange(NUM_SUSPECTS), NUM_WEAPONS)
            w = np.tile(np.arange(NUM_WEAPONS), NUM_SUSPECTS)
            cards = np.stack(
                [np.broadcast_to(s, (n, 36)), np.broadcast_to(WEAPON_CARD0 + w, (n, 36)), (ROOM_CARD0 + room)[:, None]
                 + np.zeros((1, 36), np.int64)], -1)  # fmt: skip
        else:
            cs, cw, cr = self._candidates(prob, self.shortlist)
            k = cs.shape[1]
            cards = np.stack(
                [np.repeat(cs, k * k, 1), np.tile(np.repeat(cw, k, 1), (1, k)), np.tile(cr, (1, k * k))], -1
            )
        score = self.suggestion_scores(view, idx, prob, cards) + 1e-9 * self.rng.random(cards.shape[:2])
        t = A.cards_triple(cards[..., 0], cards[..., 1], cards[..., 2])
        ok = legal[np.arange(n)[:, None], t]
        score = np.where(ok, score, -np.inf)
        best = score.argmax(1)
        action = A.SUGGEST0 + t[np.arange(n), best]
        return np.where(np.isfinite(score.max(1)), action, -1)

    # ------------------------------------------------------------------ movement
    def _cached_room_values(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """Room values, computed once per turn (START) and reused for the MOVE of the same turn."""
        B = view.batch_size
        if self._rv is None or self._rv.shape[0] != B:
            self._rv = np.zeros((B, NUM_ROOMS))
            self._rv_turn = np.full(B, -1, np.int64)
        turn = view.turn_count[idx].astype(np.int64)
        stale = (self._rv_turn[idx] != turn) | (view.phase[idx] == A.START)
        if stale.any():
            g = idx[stale]
            self._rv[g] = self.room_values(view, g)
            self._rv_turn[g] = turn[stale]
        return self._rv[idx]

    def room_values(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(n, 9) how much a suggestion in each room is worth now (bits), for movement planning.

        The best of four suspect x weapon pairs (the most uncertain card of each category,
        or a blank) in each room. When the solution is proved but can be accused only from its room
        (``accusation_in_room``), that room alone is worth going to.
        """
        n = len(idx)
        prob = self.probabilities(view, idx)
        cs, cw, _ = self._candidates(prob, self.room_shortlist, categories=2)
        if self._envelope_only(view, idx):  # compiled, same values
            value = np.empty((n, NUM_ROOMS))
            room_values_kernel(
                np.ascontiguousarray(prob, np.float64), cs, cw, self._order(view, n),
                view.config.refutation == "all", value, np.empty((3 * (view.num_players - 1) + 2, NUM_CARDS)),
                np.empty((3, max(cs.shape[1], cw.shape[1], NUM_ROOMS)), np.int64),
            )  # fmt: skip
            return self._goal_room(idx, value)
        k = cs.shape[1]
        pairs_s = np.repeat(cs, k, 1)  # (n, k*k)
        pairs_w = np.tile(cw, (1, k))
        m = k * k
        cards = np.stack(
            [np.repeat(pairs_s, NUM_ROOMS, 1), np.repeat(pairs_w, NUM_ROOMS, 1),
             np.tile(ROOM_CARD0 + np.arange(NUM_ROOMS), (n, m))], -1)  # fmt: skip
        score = self.suggestion_scores(view, idx, prob, cards)
        return self._goal_room(idx, score.reshape(n, m, NUM_ROOMS).max(1))

    def _goal_room(self, idx: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Room values ``value`` (n, 9), except where the solution is proved: its room alone, worth 1 (compiled,
        in place: :func:`cluedo_env.agents.players.deducer_decisions.goal_rooms_kernel`)."""
        value = np.ascontiguousarray(value, np.float64)
        goal_rooms_kernel(self.notebook.has, self.notebook.bad, idx, value)
        return value


__all__ = ["DeducerAgent", "information"]
