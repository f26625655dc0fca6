"""The expert: the deducer plus sampled probabilities and a calculated-risk accusation.

Everything of :class:`cluedo_env.agents.players.deducer.DeducerAgent` (sound notebook, exact envelope facts,
information-seeking suggestions, movement), and:

**Probabilities.** Deals are drawn by sequential importance sampling
(:func:`cluedo_env.agents.knowledge.deal_sampling.sample_deals`, ``samples`` per game, batched, a compiled loop over
games and deals), consistent with the notebook's facts *and* with what the expert assumes about
how its opponents play (:meth:`ExpertAgent.model_bits`, never used as proof):

* **naive players** (:mod:`cluedo_env.agents.knowledge.opponent_model`): at a table where no opponent has named a
  card we know it holds, every opponent is taken to be a player that only crosses cards off
  (heuristic, notebook), which never names its own cards: each of its suggestions says it
  holds none of the named suspect and weapon (and room, in the card game). Against heuristic
  players this often settles envelope cards long before the sound notebook can;
* **strong refuters** (:mod:`cluedo_env.agents.knowledge.refuter_model`): at a table where some opponent has shown
  it names its own cards (a deducer or an expert), a refuter that shows us a new card of a
  category where we clearly have fewer candidates left than in another named card's category
  would have shown that other card (:mod:`cluedo_env.agents.players.refutation`): it does not hold it.

Where the assumed facts contradict themselves the sound ones are used. The weighted samples give

* per-card holder probabilities for scoring suggestions and rooms, at every table (blended with
  the deducer's probabilities in proportion to the effective sample size, so a position where
  few samples survive falls back gracefully); against a table that has shown it is strong
  the score adds ``strong_deal_weight`` x the whole-deal information (card game), and
* the probability of each solution triple, for the accusation policy (the naive-player
  model only from round ``naive_accuse_rounds`` = 2 on: before that a table of deducers that
  has not named a known card of its own yet looks naive too).

Otherwise every deal consistent with the (assumed) facts is taken as equally likely.

**Accusation policy** (where an accusation is open and the solution is not proved): where the
assumed facts leave one solution triple (``accuse_assumed``), accuse it; otherwise, only where at
most ``max_hypotheses`` = 24 solution triples are left (the rest never qualify):

* ``p1`` = probability of the most likely triple among the accusations open now (from
  ``accusation_samples`` = 128 samples; needs an effective sample size of at least
  ``min_ess`` = 8, else no risk is taken). A screen of ``screen_samples`` = 32 deals comes
  first: a check whose screened ``p1`` lies more than ``screen_z`` = 3 standard errors below
  the accusation threshold (next items) is settled there (no accusation), the rest get the full 128 fresh deals
  (:meth:`ExpertAgent._screened_out`). About 99 checks in 100 do not accuse and the screen
  settles three in four, so four experts draw about half as many deals on the board.
* ``danger`` = estimated chance that some opponent solves the case before our next turn,
  from public information only. Per opponent still in the game, from ``x`` = the number of
  refutations it has received (public: who showed a card to whom, R-G7):
  ``d = cap / (1 + exp(-slope (x - m)))``, a logistic fitted to games of deducers (the
  chance that a deducer wins on its coming turn, measured per number of refutations
  received): on the board ``cap`` = 0.25 (a turn does not always reach a room), ``slope`` =
  1; in the card game ``cap`` = 1, ``slope`` = 1.6; the midpoint ``m`` by players is 8, 7,
  5.6, 4.5, 3.5 for 2..6 (fewer cards per hand, fewer to learn), x 1.5 with
  ``refutation=all`` (several refutations per suggestion). A suggestion of its that nobody
  refuted doubles ``d`` (at most 0.9). The table is read from play: an opponent that has never
  named a card we know it holds (no deliberate blanks: a player that only crosses cards off, like
  the heuristic or the notebook) gets the midpoint times ``naive_factor`` = 2, since it learns only
  from the cards shown to it (:meth:`ExpertAgent.strong_opponents`). The opponents combine as independent:
  ``danger = 1 - prod(1 - d)``.
* Accuse the most likely triple when ``p1 >= max(floor, (1 - danger) ** rounds)``, with
  ``floor`` = 0.5 and ``rounds`` (``rounds_to_certainty``: the rounds we would probably
  need to become certain) = 2 on the board, 1 in the card game. Waiting loses when an
  opponent wins first, with probability about ``1 - (1 - danger) ** rounds``; accusing
  loses with probability ``1 - p1``.

With the screen (16,000 games per lineup, seeds 10-17 pooled, before -> after): against three deducers
31.3% -> 31.3% on the board and 50.1% -> 49.1% in cards (seeds 18-25: 49.7% -> 49.6%); against three
heuristic players 82.0% -> 82.8% and 89.2% -> 88.8% (seeds 18-33: 88.6% -> 89.1%). The full check run
beside the screen would have accused in none of the 31,825 checks the screen settled in 2 x 2,048 games
of four experts on the board (it accused in 337 of the others).

Measured with 128 accusation samples (``scripts/evaluate.py --head-to-head expert B --games 2000
--seed 0``): against three deducers 30.4% [28.4-32.5] on the board (seeds 10-13 pooled: 31.1%
[30.1-32.1], as with 256) and 50.5% [48.3-52.7] in cards; against three heuristic players 82.3%
[80.6-84.0] and 89.5% [88.1-90.8] (the deducer: 80.8% and 88.9%). 128 instead of 256 samples per
accusation check makes four experts ~45% faster on the board (236 -> 345 classic games per
CPU-second at batch 4096) at the same strength. With 256 samples:

Measured (``scripts/evaluate.py --head-to-head expert B --games 2000 --seed 0``; in brackets the
95% interval; the deducer is the current one, which also reads naive tables): alone against
three deducers 31.4% [29.4-33.4] on the classic board (seed 1: 30.4%; 4 x 2,000 games, seeds
10-13: 31.1%) and 50.0% [47.9-52.2] in cards; against three heuristic players 81.6%
[79.8-83.2] on the board and 88.5% [87.1-89.9] in cards (the deducer: 80.8% and 88.9%; seeds
10-13: expert 83.2% and 89.3%, deducer 81.3% and 88.6%). The refuter model alone took the
board from 30.4% to 31.6% and cards from 52.4% to 56.6% against the deducers of the time
(seeds 10-13); the naive-player model took cards against heuristic players from 84.5% to 89%.

Not kept: planning moves around the tokens that block (``blocking_aware``, from
:class:`cluedo_env.agents.players.deducer.DeducerAgent`; *Blocking* in :mod:`cluedo_env.agents.planning.movement`):
31.5% [31.1-31.9] against
three deducers on the classic board with it, 31.3% [30.9-31.7] without (seeds 0-23 x 2,000 games), and
82.4% [81.9-82.8] against 82.0% [81.5-82.5] against three heuristic players (seeds 0-11): no difference
beyond the noise, for 10-15% of the speed.

Not kept (8,000 games each, seeds 10-13, classic board against three deducers, where the expert
wins 31.4-31.6%): a larger margin for the refuter model (1.5: 31.4%) or a smaller one (0.5:
30.7%); ``floor`` 0.6 (30.9%); more rounds to certainty where more hypotheses are left
(``rounds_per_bit`` 0.5: 30.9%, 1: 29.2%); the naive-player model only from round 2..4 for
suggestions too (28.6-30.9% at 2,000 games, and worse against heuristics); 128 or 256 samples
(32.7% on seeds 10-13, but 30.8% and 31.0% against 31.4% with 64 on seeds 20-23). Against three
heuristic players in cards (89.3% as kept): the deducer's probabilities instead of sampled ones
(88.8%), 15% or 30% of the notebook's own marginals mixed in (88.7%, 88.9%), ``naive_factor`` 1
(87.2%, risky accusations wrong in 173 games), showing a naive suggester the card of the category
where it has fewest candidates left (89.2%), shrinking hidden refutations' clauses by what a naive
suggester names afterwards (89.7%; board 82.5% against 83.2%). Before these models
(seed 0): 29.8% on the board and 49.5% in cards against three deducers, 78.2% and 84.5%
against three heuristic players (the deducer then: 79.7% and 84.5%).

**Refutation policy**: the deducer's (:mod:`cluedo_env.agents.players.refutation`): a card already shown to this
suggester, else the one whose exclusion teaches the suggester fewest bits about the envelope.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from cluedo_env.agents.knowledge.deal_sampling import holder_weights, sample_deals_bits, triple_weights
from cluedo_env.agents.knowledge.facts import FactBits, unpack
from cluedo_env.agents.knowledge.opponent_model import strong_players
from cluedo_env.agents.knowledge.refuter_model import RefuterModel
from cluedo_env.agents.players.deducer import DeducerAgent

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

# Refutations received at which a deducer-like opponent's chance to solve on its turn is half its cap, by players.
SOLVE_MIDPOINT = {2: 8.0, 3: 7.0, 4: 5.6, 5: 4.5, 6: 3.5}


@dataclasses.dataclass(frozen=True)
class ExpertOptions:
    """The expert's own options (the module docstring says how each was measured)."""

    samples: int = 64
    """Deals sampled per game for the suggestions' probabilities."""
    accusation_samples: int = 128
    """Deals sampled per game for an accusation check."""
    screen_samples: int = 32
    """Deals of the screen before an accusation check (0: every check samples ``accusation_samples`` at once)."""
    screen_z: float = 3.0
    """How many standard errors below the threshold a screened-out check must be."""
    floor: float = 0.5
    """The least probability of the likeliest triple at which to accuse without proof."""
    rounds_to_certainty: float | None = None
    """The rounds we would probably need to prove the solution (None: from the hypotheses left)."""
    min_ess: float = 8.0
    """The least effective sample size at which a risk is taken."""
    max_hypotheses: int = 24
    """Accusations without proof only where at most this many solution triples are left."""
    sampled_marginals: bool = True
    """Suggestions from the sampled deals' probabilities (else the deducer's)."""
    naive_factor: float = 2.0
    """A naive opponent's solve midpoint is this times a deducer-like one's."""
    strong_deal_weight: float | None = None
    """Weight of the whole-deal information against a strong table (None: 1.0 in the card game, 0 on the board)."""
    naive_plays_as_deducer: bool = False
    """Against a naive table, the deducer's probabilities instead of sampled ones (measured worse: cards 88.8%
    instead of 89.4% against three heuristic players, 8,000 games)."""
    naive_model: bool = True
    """Assume what naive opponents' suggestions say about their hands."""
    refuter_model: bool = True
    """Assume what strong refuters' choices imply (:mod:`cluedo_env.agents.knowledge.refuter_model`)."""
    naive_accuse_rounds: float = 2.0
    """The naive-player model in accusations from this round on."""
    refuter_margin: float = 1.0
    """Candidates by which a category must lead (:class:`cluedo_env.agents.knowledge.refuter_model.RefuterModel`)."""
    accuse_assumed: bool = True
    """Accuse where the assumed facts leave one triple."""


_EXPERT_OPTIONS = tuple(f.name for f in dataclasses.fields(ExpertOptions))


class ExpertAgent(DeducerAgent):
    """The deducer with sampled probabilities and risk-taking accusations."""

    name = "expert"

    def __init__(self, seed: int | None = None, options: ExpertOptions | None = None, **kwargs) -> None:
        """``options`` (default :class:`ExpertOptions`'s); any of its fields may also be given as a keyword, which
        wins (``ExpertAgent(seed=0, samples=32)``, as :func:`cluedo_env.agents.play.registry.make_agent` passes them);
        the other
        keywords go to :class:`DeducerAgent`. Each option is also an attribute of the player."""
        given = {k: kwargs.pop(k) for k in list(kwargs) if k in _EXPERT_OPTIONS}
        options = dataclasses.replace(options or ExpertOptions(), **given)
        screen_samples, screen_z = options.screen_samples, options.screen_z
        super().__init__(seed=seed, naive_model=options.naive_model, **kwargs)
        if isinstance(screen_samples, bool) or not isinstance(screen_samples, (int, np.integer)) or screen_samples < 0:
            raise ValueError(f"screen_samples must be a whole number >= 0 (0: no screen), got {screen_samples!r}")
        if not (isinstance(screen_z, (int, float)) and screen_z > 0):
            raise ValueError(f"screen_z must be a number > 0 (standard errors below the threshold), got {screen_z!r}")
        self.options = options
        for name in _EXPERT_OPTIONS:
            setattr(self, name, getattr(options, name))
        self.refuters: RefuterModel | None = None
        self.risky_accusations = 0  # accusations made without proof (for reports)
        self._prob: np.ndarray | None = None  # cached holder probabilities per game ...
        self._prob_version = np.zeros(0, np.int64)  # ... for this notebook version
        self._prob_notebook = None

    # ------------------------------------------------------------------ opponent models
    def _refuters(self, view: PlayerView) -> RefuterModel:
        m = self.refuters
        if m is None or m.B != view.batch_size or m.P != view.num_players or m.seat != view.seat:
            m = self.refuters = RefuterModel(view.batch_size, view.num_players, view.seat, self.refuter_margin)
        return m

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        super().reset(view, idx)
        self._refuters(view).reset(np.asarray(idx, np.int64))

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        if self.refuter_model:
            nb = self._ensure(view)
            self._refuters(view).update(view, np.asarray(idx, np.int64), nb.shown_by_me)
        return super().act(view, idx)

    def model_options(self, view: PlayerView, idx: np.ndarray, naive_rounds: float | None = None) -> dict:
        """The deducer's (:meth:`DeducerAgent.model_options`: naive opponents' suggestions), plus, at a table
        of strong players, what their choices of card to show us imply
        (:mod:`cluedo_env.agents.knowledge.refuter_model`), and the
        models apply there from the start."""
        m = self._refuters(view)
        refuters = (m.lacks, m.deviant) if self.refuter_model else None
        return {**super().model_options(view, idx, naive_rounds), "strong_allows": True, "refuters": refuters}

    # ------------------------------------------------------------------ probabilities
    def _samples(
        self, idx: np.ndarray, samples: int | None = None, view: PlayerView | None = None, naive_rounds=None,
        bits: FactBits | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Weighted deals of games ``idx``: consistent with the assumed facts (:meth:`model_bits`, or ``bits`` where
        the caller has them already), or with the notebook's own facts where no ``view`` is given."""
        if view is None:  # the notebook's facts: sampled from its bitmasks (the same deals as from its arrays)
            owner, w, _ = self.notebook.sample_deals(idx, samples=samples or self.samples, rng=self.rng)
        else:
            if bits is None:  # the same deals as sample_deals on these facts as arrays
                bits = self.model_bits(view, idx, naive_rounds)
            nb = self.notebook
            owner, w, _ = sample_deals_bits(
                bits.hb, bits.nb, bits.size, bits.cl_holder, nb.cl_cards[idx], bits.cl_live, nb.acc_cards[idx],
                bits.acc_live, samples or self.samples, self.rng,
            )  # fmt: skip
        ess = 1.0 / np.maximum((w**2).sum(1), 1e-12)
        ess = np.where(w.sum(1) > 0, ess, 0.0)
        return owner, w, ess

    def probabilities(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        if not self.sampled_marginals:
            return super().probabilities(view, idx)
        if self.naive_plays_as_deducer:  # against a table that only crosses off, play as the deducer does
            base = super().probabilities(view, idx)
            naive = ~self._strong_table(view, idx)
            if naive.all():
                return base
            out = base.copy()
            out[~naive] = self.probabilities_sampled(view, idx[~naive], base[~naive])
            return out
        return self.probabilities_sampled(view, idx)

    def probabilities_sampled(self, view: PlayerView, idx: np.ndarray, base: np.ndarray | None = None) -> np.ndarray:
        """(n, H, 21) holder probabilities from sampled deals, blended with ``base`` (default: the deducer's
        probabilities, :meth:`DeducerAgent.probabilities`, computed only where a game is sampled again) by
        effective sample size."""
        nb = self.notebook
        B, H = nb.B, nb.P + 1
        if self._prob is None or self._prob_notebook is not nb:
            self._prob = np.zeros((B, H, NUM_CARDS))
            self._prob_version = np.full(B, -1, np.int64)
            self._prob_notebook = nb
        stale = self._prob_version[idx] != nb.version[idx]
        if stale.any():  # facts changed since the last estimate: sample again
            g = idx[stale]
            owner, w, ess = self._samples(g, view=view)
            sampled = holder_weights(owner, w, H)  # dead samples (weight 0) may have unplaced cards: holder 0
            k = (ess / (ess + 4.0))[:, None, None]
            b = DeducerAgent.probabilities(self, view, g) if base is None else base[stale]
            self._prob[g] = k * sampled + (1 - k) * b
            self._prob_version[g] = nb.version[g]
        return self._prob[idx]

    def triple_probabilities(
        self, idx: np.ndarray, view: PlayerView | None = None, bits: FactBits | None = None,
        samples: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(n, 324) probability of each solution triple (triple index order), and (n,) effective sample size, from
        ``samples`` deals per game (default ``accusation_samples``). ``bits``: the assumed facts of games ``idx``
        (:meth:`model_bits` with ``naive_accuse_rounds``), if known."""
        owner, w, ess = self._samples(idx, samples or self.accusation_samples, view, self.naive_accuse_rounds, bits)
        return triple_weights(owner, w, self.notebook.E), ess

    # ------------------------------------------------------------------ accusations
    def danger(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(n,) estimated chance that an opponent solves the case before our next turn (public information)."""
        nb = self.notebook
        cfg = view.config
        P = nb.P
        middle = SOLVE_MIDPOINT[P] * (1.5 if cfg.refutation == "all" else 1.0)
        slope, cap = (1.0, 0.25) if cfg.has_board else (1.6, 1.0)
        x = nb.shown_to[idx].astype(np.float64)
        middle = np.where(self.strong_opponents(view, idx), middle, middle * self.naive_factor)
        d = cap / (1.0 + np.exp(-slope * (x - middle)))
        d = np.where(nb.unrefuted[idx] > 0, np.minimum(2.0 * d, 0.9), d)
        live = ~view.eliminated[idx]
        live[:, view.seat] = False
        d = np.where(live, d, 0.0)
        return 1.0 - np.prod(1.0 - d, axis=1)

    def strong_opponents(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(n, P) bool: the player has named a card we know it holds (not a room on the board, where the room
        is where one stands, R-G1).

        Naming one's own card is a deliberate blank (the deducer's way of isolating a category);
        a player that only crosses cards off (heuristic, notebook) never does it. Such a player
        learns only from cards shown to it, so it needs more refutations to solve.
        """
        return strong_players(self.notebook, idx, view.config.has_board)

    def deal_weights(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """Against a table with a strong opponent still in, also value information about the whole deal.

        Measured (cards, 1,000 games each): a deducer scoring envelope information plus the deal
        information wins 45% alone against three envelope-only deducers, but only 82% instead of
        84% against three heuristic players, and needs 6.2 instead of 4.9 rounds against three
        notebook players. So the bonus is used only where the table has shown it is strong.
        Alone against three deducers (2,000 games) the bonus takes the expert from 45.0% to 51.8%
        in cards; on the classic board it did not help (27.1% with, 28.5% without), so the
        default (``strong_deal_weight=None``) uses it in the card game only.
        """
        bonus = self.strong_deal_weight
        if bonus is None:
            bonus = 0.0 if view.config.has_board else 1.0
        if bonus == self.deal_weight:  # the same either way (the board, by default): no table to read
            return np.full(len(idx), float(bonus))
        return np.where(self._strong_table(view, idx), bonus, self.deal_weight)

    def _strong_table(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(n,) bool: some opponent still in has shown it plays well (:meth:`strong_opponents`)."""
        live = ~view.eliminated[idx]
        live[:, view.seat] = False
        return (self.strong_opponents(view, idx) & live).any(1)

    def hypotheses(
        self, view: PlayerView, idx: np.ndarray, bits: FactBits | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """((n, 21) bool cards the assumed facts leave possible in the envelope, (n,) solution triples left).
        ``bits``: those facts (:meth:`model_bits` with ``naive_accuse_rounds``), if the caller has them."""
        if bits is None:
            bits = self.model_bits(view, idx, self.naive_accuse_rounds)
        cand = ~unpack(bits.nb[:, self.notebook.E])
        hyp = cand[:, :WEAPON_CARD0].sum(1) * cand[:, WEAPON_CARD0:ROOM_CARD0].sum(1) * cand[:, ROOM_CARD0:].sum(1)
        return cand, hyp

    def risk_threshold(self, view: PlayerView, danger: np.ndarray, floor: float | None = None) -> np.ndarray:
        """(n,) the probability the best triple needs for a risky accusation: ``max(floor, (1 - danger) ** rounds)``
        (``floor``: this expert's unless given)."""
        rounds = self.rounds_to_certainty or (2.0 if view.config.has_board else 1.0)
        return np.maximum(self.floor if floor is None else floor, (1.0 - danger) ** rounds)

    def accusations(self, view: PlayerView, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = super().accusations(view, idx, mask)
        nb = self.notebook
        open_ = mask[:, A.ACCUSE0 :].any(1) & (out < 0) & (view.phase[idx] != A.REFUTE) & ~nb.bad[idx]
        if not open_.any():
            return out
        # Only worth sampling where few hypotheses are left.
        rows = np.flatnonzero(open_)
        bits = self.model_bits(view, idx[rows], self.naive_accuse_rounds)  # once: the hypotheses and the deals
        pos = np.arange(len(rows))  # each row's place in ``bits``
        cand, hyp = self.hypotheses(view, idx[rows], bits)
        if self.accuse_assumed:  # the assumed facts leave one triple: accuse it (no sampling needed)
            one = hyp == 1
            if one.any():
                c = cand[one]
                action = A.ACCUSE0 + A.triple_index(
                    c[:, :WEAPON_CARD0].argmax(1), c[:, WEAPON_CARD0:ROOM_CARD0].argmax(1), c[:, ROOM_CARD0:].argmax(1)
                )
                r1 = rows[one]
                ok = mask[r1, action]
                out[r1[ok]] = action[ok]
                self.risky_accusations += int(ok.sum())
                keep = ~one
                rows, hyp, pos = rows[keep], hyp[keep], pos[keep]
        few = hyp <= self.max_hypotheses
        rows, pos = rows[few], pos[few]
        if len(rows) == 0:
            return out
        g = idx[rows]
        need = self.risk_threshold(view, self.danger(view, g))
        if self.screen_samples and self.screen_samples < self.accusation_samples:
            probs, ess = self.triple_probabilities(g, view, bits.take(pos), self.screen_samples)
            _, p1 = self._best_open(probs, mask[rows])
            keep = ~self._screened_out(p1, ess, need)
            rows, pos, g, need = rows[keep], pos[keep], g[keep], need[keep]
            if len(rows) == 0:
                return out
        probs, ess = self.triple_probabilities(g, view, bits.take(pos))
        best, p1 = self._best_open(probs, mask[rows])
        go = (ess >= self.min_ess) & (p1 >= need)
        self.risky_accusations += int(go.sum())
        out[rows[go]] = A.ACCUSE0 + best[go]
        return out

    @staticmethod
    def _best_open(probs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(n,) the most likely triple among the accusations open now (``mask`` (n, 870)) and its probability."""
        probs = np.where(mask[:, A.ACCUSE0 :], probs, -1.0)
        best = probs.argmax(1)
        return best, probs[np.arange(len(best)), best]

    def _screened_out(self, p1: np.ndarray, ess: np.ndarray, need: np.ndarray) -> np.ndarray:
        """(n,) bool: a screening estimate ``p1`` (effective sample size ``ess``) so far below the threshold ``need``
        that the full check would not accuse either.

        Why: about 99 accusation checks in 100 do not accuse, most of them far from the threshold (with 128 deals
        the best triple's probability is below the threshold by more than 0.3 in 88% of the checks, classic board),
        yet each sampled ``accusation_samples`` deals: two thirds of all the deals four experts drew. A screen of
        ``screen_samples`` deals settles those; the rest get the full check (fresh deals, the same rule). The
        margin is ``screen_z`` standard errors of the difference between the two estimates, at its largest
        (p = 1/2): ``z * 0.5 * sqrt(1 / ess + 1 / accusation_samples)``; a screen with fewer than ``min_ess``
        effective samples settles nothing. (The screen's p1 is a maximum of noisier estimates, so it leans high:
        the screen errs towards the full check.)
        """
        margin = self.screen_z * 0.5 * np.sqrt(1.0 / np.maximum(ess, 1e-12) + 1.0 / self.accusation_samples)
        return (ess >= self.min_ess) & (p1 + margin < need)


__all__ = ["ExpertAgent"]
