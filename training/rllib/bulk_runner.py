"""An RLlib env runner that samples the batched Cluedo env in bulk (``sampler: bulk`` in a vs_bots config).

RLlib's ``SingleAgentEnvRunner`` steps our vector env (N games per call) but does its bookkeeping per
game and per step: ``add_env_step`` on one ``SingleAgentEpisode`` per game, the env-to-module and
module-to-env connector pipelines that split the batch into N items and stack them back, a new
episode object (and an ignored autoreset row) per finished game. Measured: 150-320 µs per game-step
(docs/benchmarks.md), several times the env and the module together.

:class:`BulkEnvRunner` keeps RLlib's runner for everything but ``sample(num_timesteps=...)``
(construction, the module and its weight sync, ``get_state``/``set_state``, checkpoints, the
``on_environment_created`` / ``on_sample_end`` callbacks, the league snapshots of
:mod:`cluedo_env.training.rllib.league`, which read ``runner.env`` and ``runner.module``). Its sampling loop:

* steps the learner core of the env (:class:`~cluedo_env.training.learner_core.LearnerCore`, inside the
  ``CluedoVectorEnv`` that RLlib's ``make_env`` built) directly, with the core's same-step autoreset:
  no ignored reset rows, every row of every call is a learner decision;
* one batched forward pass of ``self.module`` per step (``forward_exploration`` with RLlib's ``t``,
  or ``forward_inference`` for ``explore=False``), the module's masked logits, a categorical draw
  (Gumbel-max; ``explore=False``: the argmax, logp 0, as RLlib's deterministic distribution);
* writes observations (observation then mask, the layout the module takes), actions, rewards,
  terminated/truncated, ``action_logp`` and ``action_dist_inputs`` (the ``Columns`` keys RLlib's
  episodes carry in ``extra_model_outputs``, with ``weights_seq_no``) into numpy arrays for the
  whole fragment;
* builds the ``SingleAgentEpisode`` objects once, at the end: finished episodes, and each game's
  unfinished one cut at the fragment's end, continued (same id, ``t_started``, a lookback buffer of
  ``episode_lookback_horizon`` = 1 step, as ``episode.cut()`` gives) by the next ``sample()``;
* logs the metrics RLlib's runner logs (env/agent/module steps and episodes sampled, lifetime
  counts, and per finished episode its length, return and duration over all its chunks).

Anything else (``num_episodes=...``, ``random_actions=True``) falls back to RLlib's own loop, after
which the bulk loop starts fresh games. Per-episode callbacks (``on_episode_start/step/end``) and
custom connector pipelines are not supported: the runner refuses such a config at construction.

Episode objects: RLlib's constructor costs ~60 µs (space structs and length checks per buffer),
more than a whole learner decision here; :func:`make_episode` fills the same attributes directly
(``fast=False`` calls the constructor; tests check that both give the same object). This relies on
the attribute layout of ray 2.60's ``SingleAgentEpisode``/``InfiniteLookbackBuffer`` (the version
``constraints.txt`` pins); :func:`check_episode_layout` compares the two layouts when the runner
starts and falls back to the constructor if they differ.
"""

from __future__ import annotations

import math
import time
import uuid
from typing import Any, NamedTuple

import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import _REWARDS_BOX_SPACE, SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import (
    ENV_STEP_TIMER,
    EPISODE_DURATION_SEC_MEAN,
    EPISODE_LEN_MAX,
    EPISODE_LEN_MEAN,
    EPISODE_LEN_MIN,
    EPISODE_RETURN_MAX,
    EPISODE_RETURN_MEAN,
    EPISODE_RETURN_MIN,
    RLMODULE_INFERENCE_TIMER,
    WEIGHTS_SEQ_NO,
)
from ray.rllib.utils.spaces.space_utils import get_base_struct_from_space

_EPISODE_CALLBACKS = ("on_episode_created", "on_episode_start", "on_episode_step", "on_episode_end")


# ------------------------------------------------------------------------------ episode objects
def _buffer(data: Any, lookback: int, space: Any = None, struct: Any = None) -> InfiniteLookbackBuffer:
    """An ``InfiniteLookbackBuffer`` as its constructor makes it (``space`` set afterwards as the episode does)."""
    buf = _new_buffer(InfiniteLookbackBuffer)
    buf.__dict__ = {"data": data, "lookback": lookback, "finalized": not isinstance(data, list), "_space": space,
                    "_space_struct": struct}  # fmt: skip
    return buf


_new_buffer = InfiniteLookbackBuffer.__new__


class EpisodeChunk(NamedTuple):
    """One stretch of one agent's game, in the fields RLlib's ``SingleAgentEpisode`` is built from."""

    id_: str
    observations: np.ndarray
    """(lookback + len + 1, D): one more row than the steps (the observation after the last action)."""
    actions: np.ndarray
    """(lookback + len,)"""
    rewards: np.ndarray
    """(lookback + len,) float32"""
    extra: dict[str, np.ndarray]
    """Extra model outputs by column (logp, distribution inputs, weights' sequence number), each (lookback + len,)."""
    terminated: bool
    truncated: bool
    t_started: int
    lookback: int
    start_time: float | None = None
    last_time: float | None = None
    agent_id: str | None = None
    """With ``module_id`` and ``multi_agent_episode_id``: set for one seat's part of a multi-agent game (batched
    self-play, :mod:`cluedo_env.training.rllib.selfplay_runner`), as a ``MultiAgentEpisode``'s agent episodes have
    them; the
    learner then batches the chunk under that module."""
    module_id: str | None = None
    multi_agent_episode_id: str | None = None


class EpisodeFactory:
    """Builds numpy ``SingleAgentEpisode`` chunks from arrays for one pair of spaces."""

    def __init__(self, observation_space: Any, action_space: Any, fast: bool = True) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self._obs_struct = get_base_struct_from_space(observation_space)
        self._act_struct = get_base_struct_from_space(action_space)
        self._rew_struct = get_base_struct_from_space(_REWARDS_BOX_SPACE)
        self._none_struct = get_base_struct_from_space(None)
        self.fast = bool(fast) and check_episode_layout(observation_space, action_space)

    def make(self, chunk: EpisodeChunk) -> SingleAgentEpisode:
        """The episode of one chunk (see :class:`EpisodeChunk`)."""
        (id_, observations, actions, rewards, extra, terminated, truncated, t_started, lookback, start_time,
         last_time, agent_id, module_id, multi_agent_episode_id) = chunk  # fmt: skip
        n_infos = len(observations)
        if not self.fast:
            ep = SingleAgentEpisode(id_=id_, observations=observations, observation_space=self.observation_space,
                                    infos=[{} for _ in range(n_infos)], actions=actions,
                                    action_space=self.action_space, rewards=rewards, terminated=terminated,
                                    truncated=truncated, extra_model_outputs=extra, t_started=t_started,
                                    len_lookback_buffer=lookback, agent_id=agent_id, module_id=module_id,
                                    multi_agent_episode_id=multi_agent_episode_id)  # fmt: skip
            ep._start_time, ep._last_step_time = start_time, last_time
            return ep
        none = self._none_struct
        ep = SingleAgentEpisode.__new__(SingleAgentEpisode)
        ep.id_, ep.agent_id, ep.module_id, ep.multi_agent_episode_id = id_, agent_id, module_id, multi_agent_episode_id
        ep._observation_space = self.observation_space
        ep.observations = _buffer(observations, lookback, self.observation_space, self._obs_struct)
        ep.infos = _buffer([{} for _ in range(n_infos)], lookback, None, none)
        ep._action_space = self.action_space
        ep.actions = _buffer(actions, lookback, self.action_space, self._act_struct)
        ep.rewards = _buffer(rewards, lookback, _REWARDS_BOX_SPACE, self._rew_struct)
        ep.is_terminated, ep.is_truncated = bool(terminated), bool(truncated)
        ep.extra_model_outputs = {k: _buffer(v, lookback, None, none) for k, v in extra.items()}
        ep.t_started = int(t_started)
        ep.t = len(rewards) - min(lookback, len(rewards)) + int(t_started)
        ep._custom_data = {}
        ep._start_time, ep._last_step_time = start_time, last_time
        ep._last_added_observation = ep._last_added_infos = None
        return ep


def check_episode_layout(observation_space: Any, action_space: Any) -> bool:
    """Whether :class:`EpisodeFactory`'s direct build gives what ``SingleAgentEpisode(...)`` gives (this ray)."""
    obs = np.zeros((3,) + tuple(observation_space.shape), observation_space.dtype)
    args = dict(id_="x", observations=obs, actions=np.zeros(2, np.int64), rewards=np.zeros(2, np.float32),
                extra={Columns.ACTION_LOGP: np.zeros(2, np.float32)}, terminated=True, truncated=False,
                t_started=4, lookback=1)  # fmt: skip
    slow = EpisodeFactory.__new__(EpisodeFactory)
    slow.observation_space, slow.action_space, slow.fast = observation_space, action_space, False
    fast = EpisodeFactory.__new__(EpisodeFactory)
    fast.__dict__.update(observation_space=observation_space, action_space=action_space, fast=True,
                         _obs_struct=get_base_struct_from_space(observation_space),
                         _act_struct=get_base_struct_from_space(action_space),
                         _rew_struct=get_base_struct_from_space(_REWARDS_BOX_SPACE),
                         _none_struct=get_base_struct_from_space(None))  # fmt: skip
    a, b = slow.make(EpisodeChunk(**args)), fast.make(EpisodeChunk(**args))
    return episode_layout(a) == episode_layout(b)


def episode_layout(ep: SingleAgentEpisode) -> dict[str, Any]:
    """Attribute names and plain values of an episode and of its buffers (data compared by shape/content)."""

    def plain(v: Any) -> Any:
        if isinstance(v, InfiniteLookbackBuffer):
            return {k: plain(x) for k, x in sorted(vars(v).items())}
        if isinstance(v, np.ndarray):
            return ("array", v.dtype.str, v.shape, v.tobytes())
        if isinstance(v, dict):
            return {k: plain(x) for k, x in sorted(v.items())}
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)

    names = [n for cls in type(ep).__mro__ for n in getattr(cls, "__slots__", ())] + sorted(getattr(ep, "__dict__", {}))
    return {k: plain(getattr(ep, k)) for k in sorted(set(names)) if hasattr(ep, k)}


# ------------------------------------------------------------------------------------ actions
def draw_actions(module: Any, obs: np.ndarray, explore: bool, t: int, gen: torch.Generator,
                 device: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(actions, logp, dist inputs) of ``module`` for (n, D + A) int8 rows (observation, then the mask).

    One batched forward pass (``forward_exploration`` with RLlib's ``t``, or ``forward_inference`` for
    ``explore=False``), the module's masked logits, then a draw from them (``explore=False``: the argmax,
    logp 0, as RLlib's deterministic distribution). Used by both bulk runners.
    """
    x = torch.from_numpy(obs)
    if device is not None and torch.device(device).type != "cpu":  # num_gpus_per_env_runner > 0
        x = x.to(device)
    batch = {Columns.OBS: x}
    with torch.no_grad():
        if explore:
            logits = module.forward_exploration(batch, t=t)[Columns.ACTION_DIST_INPUTS].cpu()
            logp_all = torch.log_softmax(logits, -1)
            # Inverse CDF: the first action whose CDF exceeds the draw has probability > 0 (a masked one has
            # exactly 0), cheaper than Gumbel noise per action. exp of a masked log-probability (about -3e38)
            # underflows, and torch's CPU exp takes a slow path on such inputs (14 ms instead of 2 for 2,048 x 359):
            # clamped at -80 (exp: 2e-35, a normal float32) it is fast, and the mask sets masked actions to 0.
            # float32 throughout (float64 cost 2.6 ms more a call); u * total can round up to total, so a draw
            # past the last legal action (about 1 in 2**24) takes the last legal action.
            legal = torch.from_numpy(obs[:, -logits.shape[1] :]).to(torch.float32)
            cdf = logp_all.clamp(min=-80.0).exp_().mul_(legal).cumsum_(-1)
            u = torch.rand((len(cdf), 1), generator=gen).mul_(cdf[:, -1:])
            actions = torch.searchsorted(cdf, u, right=True)[:, 0]
            past = torch.nonzero(actions >= cdf.shape[1])[:, 0]
            if len(past):
                actions[past] = legal.shape[1] - 1 - legal[past].flip(-1).argmax(-1)
            logp = logp_all.gather(-1, actions[:, None])[:, 0]
        else:
            logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].cpu()
            actions = logits.argmax(-1)
            logp = torch.zeros(len(actions), dtype=torch.float32)  # RLlib's deterministic distribution: 0
    return actions.numpy(), logp.numpy(), logits.numpy()


# ------------------------------------------------------------------------------------ the runners
class BulkSampling:
    """``_sample`` of both bulk runners (mixed in before RLlib's runner class): ``num_timesteps=...`` runs the
    bulk loop (``_bulk_reset`` first where needed, then ``_bulk_sample``); anything else (``num_episodes``,
    ``random_actions``) falls back to RLlib's own loop, after which the bulk games restart."""

    _bulk_needs_reset: bool

    def _sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None, explore: bool,
                random_actions: bool = False, force_reset: bool = False) -> list:  # fmt: skip
        if num_timesteps is None or random_actions:
            out = super()._sample(num_timesteps=num_timesteps, num_episodes=num_episodes,  # type: ignore[misc]
                                  explore=explore, random_actions=random_actions, force_reset=True)  # fmt: skip
            self._bulk_needs_reset = True
            return out
        if force_reset or self._bulk_needs_reset:
            self._bulk_reset()
        return self._bulk_sample(int(num_timesteps), bool(explore))


class BulkEnvRunner(BulkSampling, SingleAgentEnvRunner):
    """``SingleAgentEnvRunner`` whose ``sample(num_timesteps=...)`` steps the Cluedo vector env in bulk.

    See the module docstring. Selected by ``sampler: bulk`` in a vs_bots config
    (``config.env_runners(env_runner_cls=BulkEnvRunner)``).
    """

    def __init__(self, *, config: Any, **kwargs: Any) -> None:
        _check_supported(config)
        super().__init__(config=config, **kwargs)
        self._bulk_needs_reset = True
        self._bulk_obs: np.ndarray | None = None  # (N, D + A) int8: the observation each game's next action sees
        self._gen = torch.Generator()
        self._gen.manual_seed(
            int(self._seed) if self._seed is not None else int(np.random.SeedSequence().entropy % 2**63)
        )
        self._factory: EpisodeFactory | None = None
        self._id_prefix, self._next_id = uuid.uuid4().hex[:20], 0
        self._finished: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # (end order, len, ret, sec)

    # ---------------------------------------------------------------- env
    def make_env(self) -> None:
        super().make_env()
        self._bulk_needs_reset = True

    def _core(self) -> Any:
        core = getattr(self.env.unwrapped, "core", None)
        if core is None or not hasattr(core, "final_obs"):
            raise TypeError(
                "BulkEnvRunner samples the Cluedo vector env (cluedo_env.training.rllib.vector_env); "
                f"got {self.env.unwrapped}"
            )
        return core

    def _bulk_reset(self) -> None:
        """New games in every row (the initial reset is seeded, as RLlib's runner seeds it)."""
        obs, _ = self._try_env_reset(seed=self._seed if self._needs_initial_reset else None, options=None)
        self._needs_initial_reset = False
        n = self.num_envs
        self._bulk_obs = np.ascontiguousarray(obs, dtype=self.env.single_observation_space.dtype)
        self._carry_id: list[str | None] = [None] * n  # an unfinished episode continued from the last fragment
        self._carry_t = np.zeros(n, np.int64)  # its steps so far
        self._carry_ret = np.zeros(n, np.float64)  # its return so far
        self._carry_start = np.full(n, time.perf_counter())
        # the last step of each row (a continued episode's lookback): obs, action, logp, dist inputs, reward
        self._carry_lookback: tuple[np.ndarray, ...] | None = None
        self._bulk_needs_reset = False
        self._factory = EpisodeFactory(self.env.single_observation_space, self.env.single_action_space)

    # ---------------------------------------------------------------- sampling
    def _actions(self, obs: np.ndarray, explore: bool, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(actions, logp, dist inputs) for (N, D + A) observation rows: one forward pass and a draw."""
        return draw_actions(self.module, obs, explore, t, self._gen, getattr(self, "_device", None))

    def _bulk_sample(self, num_timesteps: int, explore: bool) -> list[SingleAgentEpisode]:
        core = self._core()
        n = self.num_envs
        steps = max(1, math.ceil(num_timesteps / n))
        d = int(core.obs_size)
        width = self._bulk_obs.shape[1]
        n_act = width - d
        # Slot 0 of the step arrays (``*_x``) holds each row's last step of the previous fragment (the lookback of
        # a continued episode), so an episode chunk is one slice of them, not a concatenation per episode.
        dtype = self._bulk_obs.dtype  # int8, or uint8 rows of packed observations
        obs_x = np.empty((n, steps + 2, width), dtype)
        act_x = np.empty((n, steps + 1), np.int64)
        logp_x = np.empty((n, steps + 1), np.float32)
        dist_x = np.empty((n, steps + 1, n_act), np.float32)
        rew_x = np.empty((n, steps + 1), np.float32)
        lb = self._carry_lookback
        if lb is not None:
            obs_x[:, 0], act_x[:, 0], logp_x[:, 0], dist_x[:, 0], rew_x[:, 0] = lb
        obs = obs_x[:, 1:]  # obs[i, k]: what game i's k-th action saw; k=steps: the next
        act, logp, dist, rew = act_x[:, 1:], logp_x[:, 1:], dist_x[:, 1:], rew_x[:, 1:]
        term = np.empty((n, steps), bool)
        trunc = np.empty((n, steps), bool)
        ended = np.empty((n, steps), bool)
        finals = np.empty((n, steps, width), dtype)  # [i, k]: game i's last observation if its episode ended at k
        stamp = np.empty(steps + 1)
        obs[:, 0] = self._bulk_obs
        runners = self.config.num_env_runners or 1
        t_global = (self.num_env_steps_sampled_lifetime // runners) * runners
        final_mask = np.zeros(n_act, dtype)
        final_mask[0] = 1  # a finished game's last observation allows only action 0 (as the NEXT_STEP env shows it)
        t_module = t_env = 0.0
        stamp[0] = time.perf_counter()
        for k in range(steps):
            t0 = time.perf_counter()
            a, lp, logits = self._actions(obs[:, k], explore, t_global + k * n * runners)
            act[:, k], logp[:, k], dist[:, k] = a, lp, logits
            t1 = time.perf_counter()
            o, r, te, tr, en = core.step(a)
            rew[:, k], term[:, k], trunc[:, k], ended[:, k] = r, te, tr, en
            if en.any():
                idx = np.flatnonzero(en)
                finals[idx, k, :d] = core.final_obs[idx]
                finals[idx, k, d:] = final_mask
            obs[:, k + 1, :d] = o
            obs[:, k + 1, d:] = core.action_masks()
            stamp[k + 1] = t2 = time.perf_counter()
            t_module += t1 - t0
            t_env += t2 - t1
        self._bulk_obs = np.ascontiguousarray(obs[:, steps])
        episodes = self._episodes(obs_x, act_x, logp_x, dist_x, rew_x, term, trunc, ended, finals, stamp)
        ts = n * steps
        self.metrics.log_value(RLMODULE_INFERENCE_TIMER, t_module / steps)
        self.metrics.log_value(ENV_STEP_TIMER, t_env / steps)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=ts)
        self._increase_sampled_metrics(ts, int(ended.sum()))
        return episodes

    def _episodes(self, obs_x, act_x, logp_x, dist_x, rew_x, term, trunc, ended, finals,
                  stamp) -> list[SingleAgentEpisode]:  # fmt: skip
        """The fragment's episode chunks: finished ones first (as RLlib returns them), then the cut ones.

        ``*_x``: the fragment's steps after a slot 0 holding the previous fragment's last step (step k is slot
        k + 1; ``obs_x`` has one more, the next observation)."""
        n, steps = ended.shape
        make = self._factory.make
        seq = np.full(steps + 2, self._weights_seq_no, np.int64)
        has_lookback = self._carry_lookback is not None
        done: list[SingleAgentEpisode] = []
        cut: list[SingleAgentEpisode] = []
        fin_order, fin_len, fin_ret, fin_sec = [], [], [], []
        new_lookback = (obs_x[:, steps].copy(), act_x[:, -1].copy(), logp_x[:, -1].copy(), dist_x[:, -1].copy(),
                        rew_x[:, -1].copy())  # fmt: skip
        cum = np.cumsum(rew_x[:, 1:], 1, dtype=np.float64)
        any_end = ended.any(1)
        for i in range(n):
            start = 0
            for e in [*(np.flatnonzero(ended[i]).tolist() if any_end[i] else ()), None]:
                stop = steps if e is None else e + 1
                if stop <= start:
                    continue  # the row's game ended at the last step: the next fragment starts its next episode
                carried = start == 0 and self._carry_id[i] is not None
                lookback = 1 if carried and has_lookback else 0
                lo = start + 1 - lookback  # first slot of the chunk (the lookback step included)
                ep_obs = (
                    obs_x[i, lo : stop + 2]
                    if e is None
                    else np.concatenate([obs_x[i, lo : stop + 1], finals[i, e : e + 1]])
                )
                chunk = slice(lo, stop + 1)  # the chunk's steps
                extra = {Columns.ACTION_DIST_INPUTS: dist_x[i, chunk], Columns.ACTION_LOGP: logp_x[i, chunk],
                         WEIGHTS_SEQ_NO: seq[: stop + 1 - lo]}  # fmt: skip
                if carried:
                    id_ = self._carry_id[i]
                else:  # unique per runner (a random prefix) without a uuid4() per episode
                    self._next_id += 1
                    id_ = f"{self._id_prefix}{self._next_id:x}"
                t_started = int(self._carry_t[i]) if carried else 0
                began = float(self._carry_start[i]) if carried else float(stamp[start])
                ep = make(EpisodeChunk(
                    id_=id_, observations=ep_obs, actions=act_x[i, chunk], rewards=rew_x[i, chunk], extra=extra,
                    terminated=e is not None and bool(term[i, e]),
                    truncated=e is not None and bool(trunc[i, e]) and not bool(term[i, e]),
                    t_started=t_started, lookback=lookback, start_time=began, last_time=float(stamp[stop]),
                ))  # fmt: skip
                ret = float(cum[i, stop - 1] - (cum[i, start - 1] if start else 0.0))
                if e is None:
                    self._carry_id[i] = id_
                    self._carry_t[i] = t_started + stop - start
                    self._carry_ret[i] = (self._carry_ret[i] if carried else 0.0) + ret
                    self._carry_start[i] = began
                    cut.append(ep)
                else:
                    if not (ep.is_terminated or ep.is_truncated):  # an episode ended without either flag
                        ep.is_terminated = True
                    fin_order.append(e)
                    fin_len.append(t_started + stop - start)
                    fin_ret.append((self._carry_ret[i] if carried else 0.0) + ret)
                    fin_sec.append(float(stamp[stop]) - began)
                    done.append(ep)
                start = stop
            if ended[i, -1]:
                self._carry_id[i] = None  # a fresh game starts the next fragment
                self._carry_t[i] = 0
                self._carry_ret[i] = 0.0
                self._carry_start[i] = float(stamp[steps])
        self._carry_lookback = new_lookback
        if fin_order:
            self._finished.append(
                (np.asarray(fin_order), np.asarray(fin_len), np.asarray(fin_ret), np.asarray(fin_sec))
            )
        return done + cut

    # ---------------------------------------------------------------- metrics
    def get_metrics(self) -> Any:
        """RLlib's episode metrics for the episodes finished since the last call, then RLlib's own reduce.

        Episode return/length/duration are windowed over ``metrics_num_episodes_for_smoothing /
        num_env_runners`` episodes, so only the newest that many are logged (the same window values
        RLlib's runner would hold), not one call per finished episode.
        """
        if self._finished:
            order = np.concatenate([f[0] for f in self._finished])
            parts = [np.concatenate([f[j] for f in self._finished]) for j in (1, 2, 3)]
            self._finished.clear()
            win = max(1, math.ceil(self.config.metrics_num_episodes_for_smoothing / (self.config.num_env_runners or 1)))
            keep = np.argsort(order, kind="stable")[-win:]
            for length, ret, sec in zip(*(p[keep] for p in parts), strict=True):
                self._log_episode_metrics(int(length), float(ret), float(sec))
        return super().get_metrics()


def _check_supported(config: Any) -> None:
    """The bulk loop makes no per-episode callbacks and runs no connector pipelines: refuse configs that need them."""
    used = [name for name in _EPISODE_CALLBACKS if getattr(config, f"callbacks_{name}", None)]
    classes = config.callbacks_class if isinstance(config.callbacks_class, list) else [config.callbacks_class]
    for cls in classes:
        if isinstance(cls, type):
            used += [f"{cls.__name__}.{name}" for name in _EPISODE_CALLBACKS
                     if getattr(cls, name, None) is not getattr(RLlibCallback, name)]  # fmt: skip
    if used:
        raise ValueError(f"BulkEnvRunner makes no per-episode callbacks; this config has {used} (use sampler: rllib)")
    if config._env_to_module_connector is not None or config._module_to_env_connector is not None:
        raise ValueError(
            "BulkEnvRunner runs no connector pipelines; this config has custom connectors (use sampler: rllib)"
        )


# the keys RLlib's runner logs per episode, here for reference and tests
EPISODE_METRICS = (EPISODE_LEN_MEAN, EPISODE_RETURN_MEAN, EPISODE_DURATION_SEC_MEAN, EPISODE_LEN_MIN,
                   EPISODE_RETURN_MIN, EPISODE_LEN_MAX, EPISODE_RETURN_MAX)  # fmt: skip

__all__ = ["EPISODE_METRICS", "BulkEnvRunner", "BulkSampling", "EpisodeFactory", "check_episode_layout",
           "draw_actions", "episode_layout"]  # fmt: skip
