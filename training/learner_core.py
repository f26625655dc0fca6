"""The shared core of the single-agent envs: :class:`LearnerCore`, N games with one learner seat each.

One job: drive a batched :class:`~cluedo_env.engine.vector_engine.VectorEngine` for a learner. It
applies the learner's actions, lets the opponents (named bots, agents, frozen policies, the fast
random player) act seat by seat until the learner is to act again, sums the learner's rewards,
restarts finished games and builds the learner's observations and action masks, all as arrays.
Its options arrive checked, as one :class:`~cluedo_env.training.learner_options.LearnerOptions`.

It is separate from :mod:`cluedo_env.training.single_agent` (the Gymnasium front ends) and
:mod:`cluedo_env.training.sb3.vec_env` (the Stable-Baselines3 front end) because all three wrap this one core,
and it needs neither Gymnasium nor SB3. What the envs do (spaces, rewards, opponents, seating,
unplayed games, seeding) is documented in :mod:`cluedo_env.training.single_agent`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
from cluedo_env.agents.learner.accusation_features import (
    AccusationFeatures,
    encode_by_seat,
    is_expert,
    perception_expert,
)
from cluedo_env.agents.learner.belief import BeliefTracker
from cluedo_env.agents.learner.compact_observation import CompactObservation
from cluedo_env.agents.learner.holder_features import encode_holders_by_seat
from cluedo_env.agents.learner.inputs import (
    envelope_potential,
    gate_accusation,
    joined,
    learner_obs_size,
    learner_observation,
)
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import act_by_seat
from cluedo_env.training.learner_options import UNPLAYED_MODES, LearnerOptions

from cluedo_env import render
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import LearnerActions, as_actions, macro_mask, macro_to_engine
from cluedo_env.rules import actions as A


# ================================================================= opponents
class PolicyOpponent:
    """A frozen policy as an opponent: ``fn(obs, mask) -> actions`` in the full or the macro space."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], macro_moves: bool = False) -> None:
        self.fn = fn
        self.macro_moves = macro_moves

    def actions(self, obs: np.ndarray, full_mask: np.ndarray) -> np.ndarray:
        if self.macro_moves:
            return macro_to_engine(self.fn(obs, macro_mask(full_mask)), full_mask)
        return np.asarray(self.fn(obs, full_mask), np.int64)


_FAST_RANDOM = "random"


def _is_agent(obj: Any) -> bool:
    return hasattr(obj, "act") and hasattr(obj, "reset")


def _normalise_opponents(opponents: Any, players: int) -> list[Any]:
    if isinstance(opponents, (str, PolicyOpponent)) or _is_agent(opponents) or callable(opponents):
        opponents = [opponents] * (players - 1)
    opponents = list(opponents)
    if len(opponents) != players - 1:
        raise ValueError(f"{players} players: need 1 or {players - 1} opponent specs, got {len(opponents)}")
    return opponents


def _ids_text(ids: np.ndarray, limit: int = 12) -> str:
    """``0, 1, 13..336`` style list of action ids (runs of consecutive ids folded), at most ``limit`` items."""
    runs: list[str] = []
    ids = [int(i) for i in ids]
    k = 0
    while k < len(ids):
        j = k
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        runs.append(str(ids[k]) if j == k else f"{ids[k]}..{ids[j]}")
        k = j + 1
    if not runs:
        return "none"
    return ", ".join(runs[:limit]) + (f", ... ({len(ids)} in all)" if len(runs) > limit else "")


class LearnerCore:
    """N games, the learner in one seat of each; see :mod:`cluedo_env.training.single_agent`. Arrays, no spaces."""

    def __init__(self, options: LearnerOptions) -> None:
        self.options = options
        seat, belief, seed = options.seat, options.belief, options.seed
        self.accuse_gate = options.accuse_gate
        self.shaping = options.shaping
        self.illegal_action = options.illegal_action
        self.unplayed_mode = options.unplayed_games
        self.illegal_count = 0
        self.config = options.rules_config
        P = self.P = self.config.players
        self.seat_mode = seat
        self.N = options.batch_size
        self.macro_moves = bool(options.macro_moves)
        self.end_on_elimination = bool(options.end_on_elimination)
        advisor = options.advisor
        self.actions = LearnerActions(self.macro_moves, options.macro_accuse, advised=advisor is not None)
        self.n_actions = self.actions.n
        self.eng = VectorEngine(self.config, self.N, autoreset=False)
        self.views = [PlayerView(self.eng, s) for s in range(P)]
        self.engine_obs_size = self.eng.observation_size
        self.belief = None
        self.observation = observation = options.observation
        self.compact = None
        if belief:
            self.belief = BeliefTracker(self.views, seed=seed)
            if observation == "compact":
                self.compact = CompactObservation(self.config)
        # The advisor (advised space): a rule-based player per seat the learner may sit in, seeing that seat's
        # view only, playing every learner decision but the accusation choice (LearnerActions.decides).
        # One rule: an expert advisor (cluedo_env.agents.players.expert.ExpertAgent) also gives the learner its
        # accusation features (cluedo_env.agents.learner.accusation_features), and action 1 accuses the expert's
        # best open triple. A learner without an advisor may ask for the features (accusation_features), and for
        # the seat's holder probabilities (holder_probabilities, cluedo_env.agents.learner.holder_features): an
        # expert per seat then computes them and does nothing else.
        self.advisor = advisor
        self.advisors: dict[int, Any] = {}
        self.feature_experts: dict[int, Any] = {}  # seat -> the expert computing the extra slots there
        self.accusation_features = False
        self.holder_probabilities = bool(options.holder_probabilities)
        self.accusation = None
        seats = range(P) if seat == "random" else [int(seat)]
        if advisor is not None:
            adv_seeds = np.random.SeedSequence(None if seed is None else seed + 7919).spawn(P)
            self.advisors = {s: make_agent(advisor, seed=int(adv_seeds[s].generate_state(1)[0])) for s in seats}
            if all(is_expert(a) for a in self.advisors.values()):
                self.feature_experts = self.advisors
                self.accusation_features = True
        elif options.accusation_features or self.holder_probabilities:
            seeds = np.random.SeedSequence(None if seed is None else seed + 6007).spawn(P)
            self.feature_experts = {s: perception_expert(int(seeds[s].generate_state(1)[0])) for s in seats}
            self.accusation_features = bool(options.accusation_features)
        if self.accusation_features:
            self.accusation = AccusationFeatures()
        # Packed observations: the engine's packed rows (uint8, a fifth of the bytes), unpacked by the network.
        self.packed = bool(options.packed_observation)
        self.obs_size = learner_obs_size(self.config, self.engine_obs_size, belief, observation,
                                         self.accusation_features, self.packed,
                                         self.holder_probabilities)  # fmt: skip
        self.obs_dtype = np.dtype(np.uint8 if self.packed else np.int8)
        self.seat = np.zeros(self.N, np.int64)
        self._ar = np.arange(self.N)
        self._phi = np.zeros(self.N)  # shaping: the potential of each game's current learner state
        self._obs = np.zeros((self.N, self.obs_size), self.obs_dtype)
        self.final_obs = np.zeros((self.N, self.obs_size), self.obs_dtype)
        # Games over before the learner's first decision, waiting for their one forced step.
        self.unplayed = np.zeros(self.N, bool)
        # (N,) games whose episode ended during this step's opponent rounds: they wait, untouched, until every other
        # game is at the learner's turn; then their final observations are built in one batch and they restart
        # (one small-batch observation per opponent round was ~15% of a vs-heuristic env step).
        self._parked = np.zeros(self.N, bool)
        self._unplayed_rew = np.zeros(self.N, np.float32)
        self._unplayed_trunc = np.zeros(self.N, bool)
        self.skipped_games = 0  # unplayed_games="skip": games dropped since the last reset
        self.unplayed_reported = 0  # unplayed_games="step": forced steps reported since the last reset
        self.episodes = 0
        # Set keep_final_snapshots to keep, per game, (snapshot, seat) of the game that ended last (renders).
        self.keep_final_snapshots = False
        self.final_snapshots: dict[int, tuple[dict[str, Any], int]] = {}
        self._seed_seq = np.random.SeedSequence(seed)
        self._rng = np.random.default_rng(self._seed_seq.spawn(1)[0])
        self.set_opponents(options.opponents, seed=seed)

    # ------------------------------------------------------------ opponents
    def set_opponents(self, opponents: Any, seed: int | None = None) -> None:
        """Replace the opponents (takes effect at once; call :meth:`reset` to start fresh games)."""
        specs = _normalise_opponents(opponents, self.P)
        seats = range(self.P) if self.seat_mode == "random" else [(int(self.seat_mode) + 1 + k) % self.P
                                                                   for k in range(self.P - 1)]  # fmt: skip
        self.specs = specs
        # players[k][s]: the k-th opponent when it sits in absolute seat s (None: fast random).
        self.players: list[dict[int, Any]] = []
        ss = np.random.SeedSequence(seed).spawn(self.P * self.P)
        # With a random learner seat and one player name for every opponent, seat s is played by one player in
        # all games where the learner is elsewhere (players[k][s] is the same object for every k): one call per
        # seat instead of one per (k, seat), and one notebook per game and seat instead of P - 1 of them.
        shared = (self.seat_mode == "random" and isinstance(specs[0], str) and specs[0] != _FAST_RANDOM
                  and all(isinstance(x, str) and x == specs[0] for x in specs))  # fmt: skip
        for k, spec in enumerate(specs):
            if shared and k:
                self.players.append(self.players[0])
                continue
            row: dict[int, Any] = {}
            used_obj = False
            for s in range(self.P):
                if self.seat_mode != "random" and s != seats[k]:
                    continue
                if isinstance(spec, str):
                    if spec == _FAST_RANDOM:
                        row[s] = None
                    else:
                        row[s] = make_agent(spec, seed=int(ss[k * self.P + s].generate_state(1)[0]))
                elif isinstance(spec, PolicyOpponent):
                    row[s] = spec
                elif _is_agent(spec):
                    row[s] = spec if not used_obj else copy.deepcopy(spec)
                    used_obj = True
                elif callable(spec):
                    if self.belief is not None:
                        raise TypeError(
                            f"opponent {k}: a bare policy callable sees only the engine's observation and plays "
                            "the engine's or the macro-move space; with belief=True pass an Agent that builds its "
                            "own inputs (cluedo_env.training.sb3.checkpoints.PolicyAgent) or a PolicyOpponent"
                        )
                    row[s] = PolicyOpponent(spec, self.macro_moves)
                else:
                    raise TypeError(f"opponent {k}: expected a name, an Agent or a policy callable, got {spec!r}")
            self.players.append(row)
        # (row, the relative positions it plays as a (P,) bool table): each row is asked once per opponent round,
        # in the games it plays (the table is indexed by each game's actor's position after the learner)
        rows = self.players[:1] if shared else self.players
        positions = [list(range(self.P - 1))] if shared else [[k] for k in range(len(self.players))]
        self._groups = [(row, np.isin(np.arange(self.P), ks)) for row, ks in zip(rows, positions, strict=True)]
        agents = {id(p): (s, p) for row in self.players for s, p in row.items() if p is not None and _is_agent(p)}
        self._agents = list(agents.values())  # each player once, for its reset and step hooks
        self._agents += list((self.advisors or self.feature_experts).items())  # reset and step hooks, as opponents
        self._all_fast = not self.advisors and all(p is None for row in self.players for p in row.values())
        self._opp_rng = np.random.default_rng(self._seed_seq.spawn(1)[0])

    # ------------------------------------------------------------ reset / step
    def reset(self, seed: int | None = None) -> np.ndarray:
        """Start new games everywhere; returns the (N, D) learner observations (a buffer: copy to keep)."""
        if seed is not None:
            self._seed_seq = np.random.SeedSequence(seed)
            rng_engine, rng_seat, rng_opp = self._seed_seq.spawn(3)
            self._rng = np.random.default_rng(rng_seat)
            self._opp_rng = np.random.default_rng(rng_opp)
            self.eng.reset(int(rng_engine.generate_state(1)[0]))
        else:
            self.eng.reset_games(self._ar)
        self.skipped_games = 0
        self.unplayed_reported = 0
        self.unplayed[:] = False
        self._parked[:] = False
        self.final_snapshots.clear()
        self._new_seats(self._ar)
        if self.belief is not None:
            self.belief.reset(self._ar, self.seat)
        for s, agent in self._agents:
            agent.reset(self.views[s], self._ar)
        fresh = np.ones(self.N, bool)
        rew = np.zeros(self.N, np.float32)
        self._advance(rew, np.zeros(self.N, bool), np.zeros(self.N, bool), np.zeros(self.N, bool), fresh)
        obs = self.observe()
        if self.shaping is not None:
            self._phi = self.potential()
        return obs

    def potential(self) -> np.ndarray:
        """(N,) the shaping potential of each game's current learner state (call after :meth:`observe`, which
        updates the notebook); 0 for a game over before the learner's first decision (its one step is terminal)."""
        phi = envelope_potential(self.belief, self._ar, self.shaping["kind"], self.shaping["coef"])
        phi[self.unplayed] = 0.0
        return phi

    def _new_seats(self, idx: np.ndarray) -> None:
        if self.seat_mode == "random":
            self.seat[idx] = self._rng.integers(0, self.P, len(idx))
        else:
            self.seat[idx] = int(self.seat_mode)

    def observe(self) -> np.ndarray:
        """(N, D) learner observations of every game (a buffer: copy to keep); with ``packed_observation`` the
        (N, size) uint8 packed rows."""
        if self.belief is None:
            return self.eng.observe(player=self.seat, out=self._obs, packed=self.packed)
        self._obs[:] = self._observe(self._ar)
        return self._obs

    def _observe(self, idx: np.ndarray) -> np.ndarray:
        """(n, D) learner observations of games ``idx``
        (:func:`cluedo_env.agents.learner.inputs.learner_observation`)."""
        obs = self.eng.observe(player=self.seat[idx], idx=idx, packed=self.packed)
        if self.belief is None:
            return obs
        pieces = []  # the extra slots, in order: accusation features, holder probabilities
        if self.accusation is not None:
            rule = bool(self.advisors)  # the expert_rule slot: an advisor's only
            pieces.append(lambda games: encode_by_seat(self.accusation, self.feature_experts, self.views,
                                                       self.seat[games], games, rule))  # fmt: skip
        if self.holder_probabilities:
            pieces.append(lambda games: encode_holders_by_seat(self.feature_experts, self.views, self.seat[games],
                                                               games))  # fmt: skip
        return learner_observation(obs, self.belief, idx, self.compact, joined(pieces))

    def engine_mask(self) -> np.ndarray:
        """(N, 870) bool: the learner's legal engine actions (a read-only buffer)."""
        return self.eng.legal_action_mask

    def action_masks(self) -> np.ndarray:
        """(N, A) bool legal actions of the learner in this env's action space (a fresh array).

        A game that ended before the learner's first decision allows only action 0 (its forced step).
        """
        m = self.actions.mask(self.eng.legal_action_mask)
        if self.accusation is not None and self.advisors:  # advised: accuse only where the expert sampled a triple
            self.accusation.restrict(m, self._ar)
        if self.accuse_gate is not None:  # the macro accusation only where the notebook allows it (the gate)
            gate_accusation(m, self.eng.legal_action_mask, self.actions.accuse_id, self.belief, self._ar,
                            self.accuse_gate)  # fmt: skip
        if self.unplayed.any():
            m[self.unplayed] = False
            m[self.unplayed, 0] = True
        return m

    def to_engine(self, actions: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Learner actions of games ``idx`` (default: all) -> engine actions."""
        actions = as_actions(actions, self.N if idx is None else len(idx), self.n_actions)
        mask = self.eng.legal_action_mask if idx is None else self.eng.legal_action_mask[idx]
        accuse = None
        if self.belief is not None:
            belief, rows_of = self.belief, (self._ar if idx is None else idx)
            accuse = lambda rows, legal: belief.best_accusations(rows_of[rows], legal)  # noqa: E731
            if self.accusation is not None:  # the expert's best open triple, kept when the observation was built
                acc, by_belief = self.accusation, accuse
                accuse = lambda rows, legal: acc.accuse(rows_of[rows], legal, by_belief)  # noqa: E731
        advice = None
        if self.advisors:
            games = self._ar if idx is None else np.asarray(idx, np.int64)
            advice = lambda rows: self._advice(games[rows])  # noqa: E731
        return self.actions.to_engine(actions, mask, accuse, advice)

    def _advice(self, idx: np.ndarray) -> np.ndarray:
        """(n,) the advisor's engine actions in games ``idx`` (the learner's seat is to act there)."""
        where = np.zeros(self.N, bool)
        where[idx] = True
        acts = np.full(self.N, -1, np.int64)
        act_by_seat(self.seat, self.advisors, lambda p, s, ii: p.act(self.views[s], ii), acts, where=where)
        return acts[idx]

    def step(self, actions: Any, active: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """One learner decision in every game (or in the games ``active`` marks; the others are left
        as they are and report nothing). Returns (obs, rewards, terminated, truncated, ended): ``ended``
        marks the games whose episode ended in this step; their last observation is in
        ``self.final_obs`` and ``obs`` already shows the next game (autoreset)."""
        acts = as_actions(actions, self.N, self.n_actions)
        live = np.ones(self.N, bool) if active is None else np.array(active, bool).reshape(self.N)
        stepped = live.copy()  # the games that report this step (shaping applies to them)
        in_range = (acts >= 0) & (acts < self.n_actions)
        masks = self.action_masks()
        ok = in_range.copy()
        ok[in_range] = masks[np.flatnonzero(in_range), acts[in_range]]
        bad = np.flatnonzero(~ok & live)
        if len(bad) and self.illegal_action == "raise":
            g, a = int(bad[0]), int(acts[bad[0]])
            what = "not legal now" if in_range[g] else f"outside Discrete({self.n_actions})"
            raise A.IllegalActionError(
                f"game {g}: action {a} is {what}; legal actions there: {_ids_text(np.flatnonzero(masks[g]))} "
                f"(see action_masks()); {len(bad)} game(s) of {self.N} had an illegal action; no game was changed"
            )
        rew = np.zeros(self.N, np.float32)
        term = np.zeros(self.N, bool)
        trunc = np.zeros(self.N, bool)
        ended = np.zeros(self.N, bool)
        fresh = np.zeros(self.N, bool)  # a new game started in this step: the learner has not acted in it
        if len(bad):  # illegal_action="lose"
            self.illegal_count += len(bad)
            self.final_obs[bad] = self._observe(bad)
            rew[bad], term[bad], ended[bad] = -1.0, True, True
            self.episodes += len(bad)
            self._restart(bad, fresh)
            live[bad] = False
        rep = np.flatnonzero(live & self.unplayed)
        if len(rep):  # the forced step of a game that ended before the learner's first decision
            self.final_obs[rep] = self._observe(rep)
            rew[rep] = self._unplayed_rew[rep]
            trunc[rep] = self._unplayed_trunc[rep]
            term[rep] = ~self._unplayed_trunc[rep]
            ended[rep] = True
            self.episodes += len(rep)
            self.unplayed_reported += len(rep)
            self._restart(rep, fresh)
            live[rep] = False
        if live.any():
            idx = np.flatnonzero(live)
            eng_actions = np.full(self.N, -1, np.int64)
            eng_actions[idx] = self.to_engine(acts[idx], idx)
            res = self._engine_step(eng_actions, None if live.all() else live)
            self._collect(res, rew, term, trunc, ended, fresh)
        self._advance(rew, term, trunc, ended, fresh)
        obs = self.observe()
        if self.shaping is not None:  # potential-based shaping: gamma * phi(s') - phi(s), phi = 0 once over
            phi = self.potential()
            shaped = self.shaping["gamma"] * np.where(ended, 0.0, phi) - self._phi
            rew += np.where(stepped, shaped, 0.0).astype(np.float32)
            self._phi = np.where(stepped, phi, self._phi)
        return obs, rew, term, trunc, ended

    def _advance(self, rew, term, trunc, ended, fresh) -> None:
        """Let the opponents act until the learner is to act (or sees an unplayed game) everywhere."""
        while True:
            waiting = self.unplayed | self._parked
            pending = (self.eng.actor != self.seat) & ~waiting
            if self.advisors:  # the learner's seat to act, but not a decision of the learner's: the advisor's
                pending |= (self.eng.actor == self.seat) & ~waiting & ~self.actions.decides(
                    self.eng.legal_action_mask)
            if not pending.any():
                if not self._parked.any():
                    return
                done_idx = np.flatnonzero(self._parked)  # ended games: final observations, then new games
                self.final_obs[done_idx] = self._observe(done_idx)
                self._parked[done_idx] = False
                self._restart(done_idx, fresh)
                continue
            res = self._engine_step(self._opponent_actions(pending), pending)
            self._collect(res, rew, term, trunc, ended, fresh)

    def _engine_step(self, actions: np.ndarray, active: np.ndarray | None):
        eng = self.eng
        if active is not None:
            actions[~active] = -1
        res = eng.step(actions, active=active)  # games not active (learner waiting) stay as they are
        for s, agent in self._agents:
            hook = getattr(agent, "observe_step", None)
            if hook is not None:
                hook(self.views[s])
        return res

    def _collect(self, res, rew, term, trunc, ended, fresh) -> None:
        r = res.rewards[self._ar, self.seat]
        over = res.terminated | res.truncated
        live = ~fresh & ~self.unplayed & ~self._parked
        rew += np.where(live, r, 0.0).astype(np.float32)
        out_now = over & live
        if self.end_on_elimination:
            elim = self.eng.eliminated[self._ar, self.seat] & live & ~over
            if elim.any():
                rew[elim] += -1.0
                term |= elim
                out_now |= elim
        term |= res.terminated & live
        trunc |= res.truncated & ~res.terminated & live
        early = np.flatnonzero(over & fresh)  # over before the learner's first decision (before restarts below)
        done_idx = np.flatnonzero(out_now)
        if len(done_idx):  # final observation and restart once the opponents' rounds are over (_advance)
            ended[done_idx] = True
            self.episodes += len(done_idx)
            self._parked[done_idx] = True
        if len(early):
            if self.unplayed_mode == "skip":
                self.skipped_games += len(early)
                self._restart(early, fresh)
            else:
                self.unplayed[early] = True
                self._unplayed_rew[early] = r[early]
                self._unplayed_trunc[early] = res.truncated[early] & ~res.terminated[early]

    def _restart(self, idx: np.ndarray, fresh: np.ndarray) -> None:
        if self.keep_final_snapshots:
            for i in idx:
                self.final_snapshots[int(i)] = (self.eng.export_game(int(i)), int(self.seat[i]))
        self.eng.reset_games(idx)
        self.unplayed[idx] = False
        self._new_seats(idx)
        if self.belief is not None:
            self.belief.reset(idx, self.seat[idx])
        for s, agent in self._agents:
            agent.reset(self.views[s], idx)
        fresh[idx] = True

    def _opponent_actions(self, pending: np.ndarray) -> np.ndarray:
        eng = self.eng
        actor = eng.actor.astype(np.int64)
        acts = np.full(self.N, -1, np.int64)
        if self._all_fast:
            rnd = eng.sample_random_actions(self._opp_rng)
            acts[pending] = rnd[pending]
            return acts
        rel = (actor - self.seat - 1) % self.P
        rnd: list[np.ndarray] = []  # the engine's random legal actions, drawn once, when first needed

        def act(player: Any, s: int, idx: np.ndarray) -> np.ndarray:
            if player is None:  # "random": sampled straight from the engine's legal blocks
                if not rnd:
                    rnd.append(eng.sample_random_actions(self._opp_rng))
                return rnd[0][idx]
            if isinstance(player, PolicyOpponent):
                return player.actions(eng.observe(player=s, idx=idx), eng.legal_action_mask[idx])
            return player.act(self.views[s], idx)

        for row, plays in self._groups:  # row: the players of the k-th seats after the learner's, where plays[k]
            sel = pending & plays[rel]
            if sel.any():
                act_by_seat(actor, row, act, acts, where=sel)
        mine = np.flatnonzero(pending & (actor == self.seat))  # advised: the advisor plays the learner's seat
        if len(mine):
            acts[mine] = self._advice(mine)
        return acts

    # ------------------------------------------------------------ rendering
    def render(self, i: int, mode: str, viewer: str | None, final: bool = False) -> str | np.ndarray:
        """Game ``i`` rendered by :mod:`cluedo_env.render` (``final``: the game that ended last there)."""
        if final and i in self.final_snapshots:
            snapshot, seat = self.final_snapshots[i]
        else:
            snapshot, seat = self.eng.export_game(i), int(self.seat[i])
        who = seat if viewer == "learner" else None
        return render.render_ansi(snapshot, who) if mode == "ansi" else render.render_rgb(snapshot, who)


__all__ = ["UNPLAYED_MODES", "LearnerCore", "PolicyOpponent"]
