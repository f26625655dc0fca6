"""Batched multi-agent self-play for RLlib: every seat of N games is an RLlib module, sampled in bulk.

``setup: selfplay`` with ``sampler: bulk``. RLlib's ``MultiAgentEnvRunner`` steps one PettingZoo game per env
and pays its per-step bookkeeping (a ``MultiAgentEpisode`` step, the connector pipelines) on every move:
~330 env steps/s (docs/benchmarks.md). :class:`BulkSelfPlayRunner` keeps RLlib's
multi-agent runner for everything but ``sample(num_timesteps=...)`` (construction, the ``MultiRLModule`` and its
weight sync, ``get_state``/``set_state``, checkpoints) and samples ``num_envs_per_env_runner`` games of one
:class:`~cluedo_env.engine.vector_engine.VectorEngine` per step:

* **Seats to modules.** When a game starts, RLlib's ``policy_mapping_fn(agent_id, episode)`` maps each seat
  (``"player_k"``) to a module of the ``MultiRLModule`` (``episode`` is the game's :class:`GameRef`, with the
  ``id_`` a mapping may hash). Each step, the games are grouped by the module of the seat to act, and each
  module runs one batched forward pass on its group (:func:`cluedo_env.training.rllib.bulk_runner.draw_actions`: masked
  logits, then a draw). Observations are the engine's own, seat-relative (``VectorEngine.observe``, the
  PettingZoo env's ``"observation"``) followed by the legal mask: the flat row the masked module takes. With
  ``learner:`` input options each seat sees instead what the vs_bots learner sees (its own notebook's belief
  features, the compact observation, macro actions mapped back to engine actions), one
  :class:`~cluedo_env.agents.learner.inputs.LearnerInputs` per seat.
* **One episode per (game, seat)**, as the agent episodes of RLlib's ``MultiAgentEpisode``: a seat's
  observations are those at its own decisions; the next observation of a decision is the seat's next
  decision, or its view of the finished game. The reward of a decision is what the seat received until its
  next decision (R-E1..R-E4: +1 to the winner, -1 to the others, at the end). Eliminated seats still refute
  (R-A4), so their episodes go on until the game ends. The chunks are ``SingleAgentEpisode`` objects with
  ``agent_id``, ``module_id`` and ``multi_agent_episode_id`` set: the learner's connectors batch them under
  their module, as they do a ``MultiAgentEpisode``'s agent episodes.
* **Fragments.** At the end of ``sample()``, each seat's last decision is still open (its next observation
  has not come): it is carried to the next ``sample()``, which starts that seat's next chunk with it (same
  episode id, ``t_started`` = the steps already returned). So every returned step is a complete transition.
* **Training** only the modules ``policies_to_train`` names: the others (frozen opponents) act, and their
  steps are counted in the metrics, but no chunk of theirs is returned.
* **Bots in seats** (``selfplay.bots``: player names for :func:`cluedo_env.agents.play.registry.make_agent`, such as
  ``heuristic``, ``deducer``, ``ckpt:PATH``): the mapping may give a seat a bot instead of a module. One
  batched player per (seat, bot) plays the games where that seat is that bot, through its seat's
  :class:`~cluedo_env.engine.views.PlayerView` (what the seat may know, nothing more), as the vs_bots
  opponents do. Bots return no steps; their returns appear in the per-module metrics under their names.
  The bot ``league`` plays frozen snapshots of the first module (:mod:`cluedo_env.training.rllib.league`'s pool and
  snapshot callback; the pool lives in this runner).
* **Metrics**: what RLlib's multi-agent runner logs: env, agent and module steps, episodes, and per finished
  game its length, return (the sum over seats), per-agent and per-module returns, agent steps and duration.

Per-episode callbacks and custom connector pipelines are refused at construction (as by the single-agent
bulk runner). ``num_episodes=...`` or ``random_actions=True`` fall back to RLlib's own loop on a one-game
PettingZoo env (the template env this runner builds for its spaces), after which the bulk games restart.
"""

from __future__ import annotations

import functools
import math
import time
import uuid
import zlib
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch
from cluedo_env.agents.learner.inputs import LearnerInputs, learner_obs_size
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import act_by_seat
from cluedo_env.agents.players.base import Agent
from cluedo_env.training.players import register_player_prefixes
from cluedo_env.training.rllib.bulk_runner import (
    BulkSampling,
    EpisodeChunk,
    EpisodeFactory,
    _check_supported,
    draw_actions,
)
from cluedo_env.training.rllib.config import INPUT_OPTIONS, LEAGUE
from cluedo_env.training.rllib.league import LeagueAgent, LeaguePool
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.utils.metrics import (
    ENV_STEP_TIMER,
    NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES,
    NUM_EPISODES_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED,
    NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    RLMODULE_INFERENCE_TIMER,
    WEIGHTS_SEQ_NO,
)

import cluedo_env
from cluedo_env.engine.observation import size as observation_size
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.aec import agent_name as agent_id
from cluedo_env.envs.aec import agent_seat as seat_of
from cluedo_env.envs.learner_actions import LearnerActions, num_actions
from cluedo_env.rules import actions as A

BOTS_KEY = "selfplay_bots"  # the env_config key that carries ``selfplay.bots`` to the runners
LEAGUE_OF_KEY = "selfplay_league_of"  # the env_config key naming the module the league snapshots
INPUTS_KEY = "selfplay_learner"  # ... and the modules' inputs (``learner:`` belief, observation, macro actions)


def rules_env_config(env_config: dict[str, Any]) -> dict[str, Any]:
    """The rules part of a self-play ``env_config`` (the PettingZoo env's keyword arguments)."""
    return {k: v for k, v in dict(env_config).items() if k not in (BOTS_KEY, INPUTS_KEY, LEAGUE_OF_KEY)}


def input_sizes(rules: Any, options: dict[str, Any]) -> tuple[int, int]:
    """(observation width, action count) of a seat's module inputs: the engine's observation and 870 actions
    (``options`` empty), or the vs_bots learner's inputs for these ``options`` (belief features, compact
    observation, macro actions)."""
    if not options:
        return observation_size(rules), A.NUM_ACTIONS
    width = learner_obs_size(rules, observation_size(rules), bool(options.get("belief")),
                             options.get("observation", "full"))  # fmt: skip
    return width, num_actions(bool(options.get("macro_moves")), bool(options.get("macro_accuse")))


class _SeatInputs(LearnerInputs):
    """One seat's learner inputs in every game of the runner (its own notebook when ``belief``)."""

    def __init__(self, options: dict[str, Any], seed: int) -> None:
        self.use_belief = bool(options.get("belief"))
        self.observation = str(options.get("observation", "full"))
        self.seed = seed


class _Ended(NamedTuple):
    """A game that ended in a fragment, with its seats' state as it was before the row's new game replaced it."""

    step: int  # the fragment step whose action ended it
    game: int  # its row
    terminated: bool
    truncated: bool
    finals: np.ndarray  # (P, W) each seat's view of the finished game (then a mask allowing action 0 only)
    rewards: np.ndarray  # (P,) what each seat received since its last decision (the end rewards, R-E1..R-E4)
    modules: np.ndarray  # (P,) each seat's module (index into the names)
    seat_ids: np.ndarray  # (P,) each seat's episode id
    game_id: str
    open: np.ndarray  # (P,) bool: the seat's decision from an earlier fragment was still open
    returned: np.ndarray  # (P,) steps of each seat's episode returned before this fragment


class _Fragment(NamedTuple):
    """What one sampled fragment recorded, step by step (steps, n rows), for cutting it into seats' chunks."""

    obs: np.ndarray
    """(steps, n, D) the acting seat's observation."""
    act: np.ndarray
    """(steps, n) the action taken."""
    logp: np.ndarray
    """(steps, n) its log-probability."""
    dist: np.ndarray
    """(steps, n, A) the distribution inputs it was drawn from."""
    prev_rew: np.ndarray
    """(steps, n) the reward the acting seat received since its previous decision."""
    stamp: np.ndarray
    """(steps + 1,) wall-clock time of each step."""
    seq_now: int
    """The weights' sequence number the fragment was sampled with."""


@dataclass(frozen=True)
class GameRef:
    """What the bulk runner passes as ``episode`` to ``policy_mapping_fn``: the game's episode id."""

    id_: str


def seat_mapping(agent: str, episode: Any = None, *, policies: tuple[str, ...] = ("main",),
                 mapping: str = "by_seat", players: int = 4, **kwargs: Any) -> str:  # fmt: skip
    """The module (or bot) of a seat (a ``policy_mapping_fn`` for ``functools.partial``); ``policies``: the names a
    seat may get, the modules then the bots.

    ``by_seat``: seat k plays ``policies[k % len(policies)]``. ``shuffled``: the seats are permuted per game
    (from a hash of the episode id, so every seat of one game agrees) before the same rule, so each policy
    plays every seat and, with ``len(policies) <= players``, every policy is in every game.
    """
    k = seat_of(agent)
    if mapping == "shuffled":
        k = _permutation(zlib.crc32(str(getattr(episode, "id_", "")).encode()), players)[k]
    return policies[k % len(policies)]


@functools.lru_cache(maxsize=8192)
def _permutation(key: int, n: int) -> tuple[int, ...]:
    """The permutation of range(n) numbered ``key % n!`` (Lehmer code): cheap, and the same for every seat of a
    game (the mapping is asked once per seat)."""
    pool, out = list(range(n)), []
    key %= math.factorial(n)
    for i in range(n, 0, -1):
        j, key = divmod(key, math.factorial(i - 1))
        out.append(pool.pop(j))
    return tuple(out)


class BulkSelfPlayRunner(BulkSampling, MultiAgentEnvRunner):
    """``MultiAgentEnvRunner`` whose ``sample(num_timesteps=...)`` steps N self-play games in bulk.

    See the module docstring. Selected by ``sampler: bulk`` in a selfplay config
    (``config.env_runners(env_runner_cls=BulkSelfPlayRunner)``).
    """

    def __init__(self, *, config: Any, **kwargs: Any) -> None:
        _check_supported(config)
        if config._learner_connector is not None:  # continued chunks carry no lookback step (RLlib's cut() keeps 1)
            raise ValueError("BulkSelfPlayRunner: a custom learner connector may read the lookback step that its "
                             "continued chunks do not carry (use sampler: rllib)")  # fmt: skip
        self._games = int(config.num_envs_per_env_runner)
        super().__init__(config=config, **kwargs)
        self._gen = torch.Generator()
        seed = self._seed  # RLlib's: the config's seed and this runner's index
        self._seed_value = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**62)
        self._gen.manual_seed(self._seed_value)
        self._eng: Any = None
        self._bulk_needs_reset = True
        self._id_prefix, self._next_id = uuid.uuid4().hex[:16], 0
        self._finished: list[tuple] = []  # per finished game: (length, return, agent returns, module returns, ...)
        self._league_pool = LeaguePool()  # the snapshots the league bot plays, kept across resets

    # ---------------------------------------------------------------- env
    def make_env(self) -> None:
        """RLlib's env, with one game only: the template for spaces and connectors (and RLlib's own loop)."""
        full = self.config
        one = full.copy(copy_frozen=False)
        one.num_envs_per_env_runner = 1
        self.config = one
        try:
            super().make_env()
        finally:
            self.config = full
        self._bulk_needs_reset = True

    def sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None, **kwargs: Any) -> list:
        """RLlib's ``sample``; by default one rollout fragment of every bulk game (fragment x games steps)."""
        if num_timesteps is None and num_episodes is None and self.config.batch_mode == "truncate_episodes":
            num_timesteps = self.config.get_rollout_fragment_length(self.worker_index) * self._games
        return super().sample(num_timesteps=num_timesteps, num_episodes=num_episodes, **kwargs)

    def _new_id(self) -> str:
        self._next_id += 1
        return f"{self._id_prefix}{self._next_id:x}"

    def _bulk_reset(self) -> None:
        """New games in every row; seats mapped to modules; nothing carried over."""
        rules = cluedo_env.raw_env(**rules_env_config(self.config.env_config)).engine.config
        n, P = self._games, rules.players
        if self._eng is None or self._eng.batch_size != n or self._eng.config != rules:
            self._eng = VectorEngine(rules, n, autoreset=False)
        self._eng.reset(self._seed_value)
        self._seed_value += 1  # a later reset (a fallback, a new env) deals other games
        self.P = P
        options = dict(dict(self.config.env_config).get(INPUTS_KEY) or {})
        self._D, self._A = input_sizes(rules, options)
        self._plain = not options  # the engine's observation and actions
        if not self._plain:
            self._actions = LearnerActions(bool(options.get("macro_moves")), bool(options.get("macro_accuse")))
            self._inputs = [_SeatInputs(options, self._seed_value * 7919 + 13 * s + 5) for s in range(P)]
        self._module_ids = list(self.module.keys())
        stateful = [m for m in self._module_ids if self.module[m].is_stateful()]
        if stateful:  # the bulk draw passes no recurrent state, and chunks of one seat may share a batch key
            raise ValueError(f"BulkSelfPlayRunner samples stateless modules only; {stateful} are stateful "
                             "(use sampler: rllib)")  # fmt: skip
        train = self.config.policies_to_train
        bots = list(dict(self.config.env_config).get(BOTS_KEY) or [])
        self._n_modules = len(self._module_ids)
        self._trained = np.array([self._is_trained(mid, train) for mid in self._module_ids] + [False] * len(bots))
        self._make_bots(bots, rules)
        W = self._D + self._A
        self._game_id = [""] * n  # the game's (multi-agent) episode id
        self._slot_module = np.zeros((n, P), np.int64)  # index into _names (the modules, then the bots)
        self._slot_id = np.empty((n, P), object)  # each seat's episode id
        self._slot_t = np.zeros((n, P), np.int64)  # steps of the seat's episode returned so far
        self._pend = np.zeros((n, P), bool)  # the seat's last decision is still open (carried over)
        self._pend_obs = np.zeros((n, P, W), np.int8)
        self._pend_act = np.zeros((n, P), np.int64)
        self._pend_logp = np.zeros((n, P), np.float32)
        self._pend_dist = np.zeros((n, P, self._A), np.float32)
        self._pend_seq = np.zeros((n, P), np.int64)
        self._acc = np.zeros((n, P), np.float64)  # reward since the seat's last decision
        self._ret = np.zeros((n, P), np.float64)  # the game's rewards so far, per seat (metrics)
        self._steps = np.zeros((n, P), np.int64)  # the game's decisions so far, per seat (metrics)
        self._start = np.full(n, time.perf_counter())
        self._map_seats(np.arange(n))
        self._bulk_needs_reset = False
        # the module's spaces (a flat Box of observation + mask), as the episodes carry them
        mod = self.module[self._module_ids[0]]
        self._factory = EpisodeFactory(mod.observation_space, mod.action_space)

    def _make_bots(self, specs: list[str], rules: Any) -> None:
        """One batched player per (seat, bot spec), each behind its seat's view; names join the module ids."""
        register_player_prefixes([spec for spec in specs if spec != LEAGUE])  # in this (env runner) process
        self._names = self._module_ids + list(specs)
        self._views = [PlayerView(self._eng, s) for s in range(rules.players)]
        base = self._seed_value * 7919

        def make(spec: str, seed: int) -> Agent:
            if spec != LEAGUE:
                return make_agent(spec, seed=seed)
            opts = dict(dict(self.config.env_config).get(INPUTS_KEY) or {})
            return LeagueAgent(seed=seed, pool=self._league_pool, **{k: opts[k] for k in INPUT_OPTIONS if k in opts})

        self._bots = [[make(spec, base + 101 * s + b) for b, spec in enumerate(specs)] for s in range(rules.players)]

    def league(self) -> tuple[list, Any]:
        """(league pools, the module to snapshot): for :func:`cluedo_env.training.rllib.league.add_snapshot`. The
        snapshot is
        the first module of ``selfplay.policies`` (``main``) as this runner holds it (just synced)."""
        of = dict(self.config.env_config).get(LEAGUE_OF_KEY) or next(iter(self.module.keys()))
        return [self._league_pool], self.module[of]

    @staticmethod
    def _is_trained(mid: str, train: Any) -> bool:
        if train is None:
            return True
        if callable(train):
            return bool(train(mid, None))
        return mid in train

    def _map_seats(self, games: np.ndarray) -> None:
        """New episode ids and modules (or bots) for the seats of ``games`` (new games)."""
        index = {m: i for i, m in enumerate(self._names)}
        fn = self.config.policy_mapping_fn
        for g in games.tolist():
            ref = GameRef(self._new_id())
            self._game_id[g] = ref.id_
            for s in range(self.P):
                mid = fn(agent_id(s), ref)
                if mid not in index:
                    raise ValueError(f"policy_mapping_fn mapped {agent_id(s)} to {mid!r}, which is neither a module "
                                     f"of this MultiRLModule nor a bot ({', '.join(self._names)})")  # fmt: skip
                self._slot_module[g, s] = index[mid]
                self._slot_id[g, s] = self._new_id()
        self._slot_t[games] = 0
        self._pend[games] = False
        self._acc[games] = 0.0
        self._ret[games] = 0.0
        self._steps[games] = 0
        self._start[games] = time.perf_counter()
        for s, agents in enumerate(self._bots):  # the bots and the seats' notebooks start the new games too
            for agent in agents:
                agent.reset(self._views[s], games)
        if not self._plain:
            for s, inputs in enumerate(self._inputs):
                inputs.reset(self._views[s], games)

    # ---------------------------------------------------------------- sampling
    def _bulk_sample(self, num_timesteps: int, explore: bool) -> list[SingleAgentEpisode]:
        eng, n, P, D, A = self._eng, self._games, self.P, self._D, self._A
        steps = max(1, math.ceil(num_timesteps / n))
        W = D + A
        obs = np.empty((steps, n, W), np.int8)  # [k, g]: what the seat to act in game g saw at step k
        actor = np.empty((steps, n), np.int64)
        act = np.empty((steps, n), np.int64)
        logp = np.empty((steps, n), np.float32)
        dist = np.empty((steps, n, A), np.float32)
        prev_rew = np.empty((steps, n), np.float32)  # reward of the acting seat's previous decision
        ends: list[_Ended] = []
        runners = self.config.num_env_runners or 1
        t_global = (self.num_env_steps_sampled_lifetime // runners) * runners
        rows = np.arange(n)
        view = np.empty((n, D), np.int8)
        modules = [self.module[m] for m in self._module_ids]
        n_mod = self._n_modules
        hooks = [(self._views[s], agent.observe_step) for s, agents in enumerate(self._bots) for agent in agents
                 if type(agent).observe_step is not Agent.observe_step]  # fmt: skip
        device = getattr(self, "_device", None)
        agent_steps = np.zeros(P, np.int64)
        module_steps = np.zeros(len(modules), np.int64)
        stamp = np.empty(steps + 1)
        t_module = t_env = 0.0
        stamp[0] = time.perf_counter()
        for k in range(steps):
            t0 = time.perf_counter()
            a = eng.actor.astype(np.int64)
            actor[k] = a
            prev_rew[k] = self._acc[rows, a]
            self._acc[rows, a] = 0.0
            slot_mod = self._slot_module[rows, a]
            if self._plain:  # the engine's observation and actions
                eng.observe(player=a, out=view)
                obs[k, :, :D] = view
                obs[k, :, D:] = eng.legal_action_mask
                to_engine = None
            else:  # each seat's learner inputs, where a module plays it
                to_engine = self._learner_rows(a, np.flatnonzero(slot_mod < n_mod), obs[k])
            for m in np.unique(slot_mod).tolist():
                sel = np.flatnonzero(slot_mod == m)
                if m >= n_mod:  # a bot: each seat's player for its games
                    self._bot_actions(m - n_mod, a, sel, act[k])
                    continue
                x, lp, lg = draw_actions(modules[m], obs[k, sel] if len(sel) < n else obs[k], explore,
                                         t_global + k * n * runners, self._gen, device)  # fmt: skip
                act[k, sel], logp[k, sel], dist[k, sel] = x, lp, lg
                module_steps[m] += len(sel)
            engine_act = act[k]
            if to_engine is not None:
                engine_act = act[k].copy()
                for idx, emask, accuse in to_engine:
                    engine_act[idx] = self._actions.to_engine(act[k, idx], emask, accuse)
            agent_steps += np.bincount(a, minlength=P)
            t1 = time.perf_counter()
            res = eng.step(engine_act)
            for seat_view, hook in hooks:
                hook(seat_view)
            self._acc += res.rewards
            self._ret += res.rewards
            self._steps[rows, a] += 1
            over = np.flatnonzero(res.terminated | res.truncated)
            if len(over):
                finals = np.empty((len(over), P, W), np.int8)
                finals[:, :, D:] = 0
                finals[:, :, D] = 1  # a finished game's last observation allows only action 0 (as the envs show it)
                for s in range(P):
                    finals[:, s, :D] = (eng.observe(player=s, idx=over) if self._plain
                                        else self._inputs[s].learner_inputs(self._views[s], over)[0])  # fmt: skip
                now = time.perf_counter()
                for j, g in enumerate(over.tolist()):
                    ends.append(_Ended(k, g, bool(res.terminated[g]), bool(res.truncated[g]) and not res.terminated[g],
                                       finals[j], self._acc[g].copy(), self._slot_module[g].copy(),
                                       self._slot_id[g].copy(), self._game_id[g], self._pend[g].copy(),
                                       self._slot_t[g].copy()))  # fmt: skip
                    self._finished.append((int(self._steps[g].sum()), self._ret[g].copy(), self._steps[g].copy(),
                                           self._slot_module[g].copy(), now - float(self._start[g])))  # fmt: skip
                eng.reset_games(over)
                self._map_seats(over)
            stamp[k + 1] = t2 = time.perf_counter()
            t_module += t1 - t0
            t_env += t2 - t1
        episodes = self._episodes(obs, actor, act, logp, dist, prev_rew, ends, stamp)
        ts = n * steps
        self.metrics.log_value(RLMODULE_INFERENCE_TIMER, t_module / steps)
        self.metrics.log_value(ENV_STEP_TIMER, t_env / steps)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=ts)
        self._log_counts(ts, len(ends), agent_steps, module_steps)
        return episodes

    def _learner_rows(self, actor: np.ndarray, games: np.ndarray, out: np.ndarray) -> list[tuple]:
        """Fill ``out[games]`` with each acting seat's learner inputs (observation, then the mask in the learner's
        action space); return, per seat, (games, engine masks, macro accusation chooser) to map actions back."""
        D = self._D
        back = []
        for s in range(self.P):
            idx = games[actor[games] == s]
            if len(idx) == 0:
                continue
            view = self._views[s]
            x, accuse = self._inputs[s].learner_inputs(view, idx)
            emask = view.legal_action_mask_of(idx)
            out[idx, :D] = x
            out[idx, D:] = self._actions.mask(emask)
            back.append((idx, emask, accuse))
        return back

    def _bot_actions(self, b: int, actor: np.ndarray, games: np.ndarray, out: np.ndarray) -> None:
        """``out[games]``: bot ``b``'s actions where it plays the seat to act (the one seat-dispatch loop)."""
        players = {s: agents[b] for s, agents in enumerate(self._bots)}
        where = np.zeros(len(actor), bool)
        where[games] = True
        act_by_seat(actor, players, lambda player, s, idx: player.act(self._views[s], idx), out, where=where)

    def _episodes(self, obs, actor, act, logp, dist, prev_rew, ends, stamp) -> list[SingleAgentEpisode]:
        """Each seat's chunk of the fragment: complete transitions only (see the module docstring).

        The decisions are grouped by (row, seat, game of the row): a stable sort keeps each group in time order.
        """
        steps, n = actor.shape
        P = self.P
        fragment = _Fragment(obs, act, logp, dist, prev_rew, stamp, int(self._weights_seq_no))
        by_row: dict[int, list[_Ended]] = {}
        count = np.zeros((steps + 1, n), np.int64)
        for e in ends:
            by_row.setdefault(e.game, []).append(e)
            count[e.step + 1, e.game] += 1
        game = np.cumsum(count, 0)[:steps]  # (steps, n): games of the row ended before step k
        span = int(game.max()) + 1
        rows = np.broadcast_to(np.arange(n), (steps, n))
        key = ((rows * P + actor) * span + game).ravel()  # decision k * n + g
        order = np.argsort(key, kind="stable")
        cuts = np.flatnonzero(np.diff(key[order])) + 1
        out: list[SingleAgentEpisode] = []
        first = game == 0
        acted = np.zeros((n, P), bool)  # the seat decided in the row's first game of this fragment
        acted[rows[first], actor[first]] = True
        # first, seats whose open decision was their last in a game that ended (before a new game's decisions
        # of the same seat replace the open one)
        for g, row_ends in by_row.items():
            for s in np.flatnonzero(row_ends[0].open & ~acted[g]).tolist():
                self._seat_chunk(out, g, s, np.zeros(0, np.int64), row_ends[0], True, fragment)
        for group in np.split(order, cuts):
            g = int(group[0] % n)
            j = int(game.flat[group[0]])
            row_ends = by_row.get(g, ())
            end = row_ends[j] if j < len(row_ends) else None
            self._seat_chunk(out, g, int(actor.flat[group[0]]), group // n, end, j == 0, fragment)
        return out

    def _seat_chunk(self, out, g, s, ks, end, first, fragment: _Fragment) -> None:
        """Seat ``s``'s decisions ``ks`` in one game of row ``g`` (``end``: that game ended in this fragment)."""
        obs, act, logp, dist, prev_rew, stamp, seq_now = fragment
        if end is None:  # the row's current game
            module, sid, gid = int(self._slot_module[g, s]), self._slot_id[g, s], self._game_id[g]
            was_open, returned = bool(self._pend[g, s]), int(self._slot_t[g, s])
        else:
            module, sid, gid = int(end.modules[s]), end.seat_ids[s], end.game_id
            was_open, returned = bool(end.open[s]), int(end.returned[s])
        if not self._trained[module]:
            return  # a frozen module or a bot: nothing returned, nothing carried
        carried = first and was_open  # an open decision from the last fragment (same game)
        m = len(ks) + int(carried)
        if m == 0:
            return  # the seat did not act in this game (yet)
        n_done = m if end is not None else m - 1  # complete transitions
        if n_done > 0:
            o = obs[ks, g]
            a, lp, d = act[ks, g], logp[ks, g], dist[ks, g]
            r = prev_rew[ks[1:], g] if len(ks) > 1 else np.zeros(0, np.float32)
            seq = np.full(len(ks), seq_now, np.int64)
            if carried:
                o = np.concatenate([self._pend_obs[g, s][None], o])
                a = np.concatenate([self._pend_act[g, s : s + 1], a])
                lp = np.concatenate([self._pend_logp[g, s : s + 1], lp])
                d = np.concatenate([self._pend_dist[g, s][None], d])
                seq = np.concatenate([self._pend_seq[g, s : s + 1], seq])
                if len(ks):
                    r = np.concatenate([prev_rew[ks[:1], g], r])
            if end is not None:
                o = np.concatenate([o, end.finals[s][None]])
                r = np.concatenate([r, np.float32([end.rewards[s]])])
            t0 = returned if first else 0
            last = int(ks[-1]) + 1 if len(ks) else 0
            out.append(self._factory.make(EpisodeChunk(
                id_=sid, observations=o, actions=a[:n_done], rewards=r.astype(np.float32), lookback=0,
                extra={Columns.ACTION_DIST_INPUTS: d[:n_done], Columns.ACTION_LOGP: lp[:n_done],
                       WEIGHTS_SEQ_NO: seq[:n_done]},
                terminated=end is not None and end.terminated, truncated=end is not None and end.truncated,
                t_started=t0,
                start_time=float(stamp[int(ks[0]) if len(ks) else 0]), last_time=float(stamp[last]),
                agent_id=agent_id(s), module_id=self._module_ids[module], multi_agent_episode_id=gid,
            )))  # fmt: skip
        if end is None:  # the last decision stays open: the next fragment starts the seat's chunk with it
            k = int(ks[-1]) if len(ks) else -1
            if k >= 0:
                self._pend_obs[g, s] = obs[k, g]
                self._pend_act[g, s] = act[k, g]
                self._pend_logp[g, s] = logp[k, g]
                self._pend_dist[g, s] = dist[k, g]
                self._pend_seq[g, s] = seq_now
            self._pend[g, s] = True
            if first:
                self._slot_t[g, s] += n_done
            else:
                self._slot_t[g, s] = n_done

    # ---------------------------------------------------------------- metrics
    def _log_counts(self, env_steps: int, episodes: int, agent_steps: np.ndarray, module_steps: np.ndarray) -> None:
        """The step and episode counters RLlib's multi-agent runner logs (``_increase_sampled_metrics``)."""
        log = self.metrics.log_value
        log(NUM_ENV_STEPS_SAMPLED, env_steps, reduce="sum")
        log(NUM_ENV_STEPS_SAMPLED_LIFETIME, env_steps, reduce="lifetime_sum", with_throughput=True)
        log(NUM_EPISODES, episodes, reduce="sum")
        log(NUM_EPISODES_LIFETIME, episodes, reduce="lifetime_sum")
        for s, c in enumerate(agent_steps.tolist()):
            if c:
                log((NUM_AGENT_STEPS_SAMPLED, agent_id(s)), c, reduce="sum")
                log((NUM_AGENT_STEPS_SAMPLED_LIFETIME, agent_id(s)), c, reduce="lifetime_sum")
        for m, c in enumerate(module_steps.tolist()):
            if c:
                log((NUM_MODULE_STEPS_SAMPLED, self._module_ids[m]), c, reduce="sum")
                log((NUM_MODULE_STEPS_SAMPLED_LIFETIME, self._module_ids[m]), c, reduce="lifetime_sum")

    def get_metrics(self) -> Any:
        """Episode metrics of the newest finished games (RLlib's window per runner), then RLlib's reduce."""
        if self._finished:
            win = max(1, math.ceil(self.config.metrics_num_episodes_for_smoothing / (self.config.num_env_runners or 1)))
            for length, ret, steps, mods, sec in self._finished[-win:]:
                agents = {agent_id(s): float(ret[s]) for s in range(len(ret))}
                modules: dict[str, float] = {}
                for s, m in enumerate(mods.tolist()):
                    modules[self._names[m]] = modules.get(self._names[m], 0.0) + float(ret[s])
                self._log_episode_metrics(length, float(ret.sum()), sec, agents, modules,
                                          {agent_id(s): int(c) for s, c in enumerate(steps.tolist())})  # fmt: skip
            self._finished.clear()
        return super().get_metrics()


__all__ = [
    "BOTS_KEY", "INPUTS_KEY", "LEAGUE_OF_KEY", "BulkSelfPlayRunner",
    "GameRef", "input_sizes", "rules_env_config", "seat_mapping",
]  # fmt: skip
