"""Batched RLlib sampling: the learner-vs-players vector env inside RLlib's ``SingleAgentEnvRunner``.

RLlib's single-agent env runner builds its env with ``gymnasium.make_vec(..., vectorization_mode=
"vector_entry_point")``; this module registers ``"cluedo_vector_v0"`` with Ray's env registry, whose
vector entry point is ``gymnasium.make_vec("cluedo_env/Cluedo-v0", num_envs=N)``, i.e.
:class:`~cluedo_env.training.single_agent.CluedoVectorEnv`: N games in one batched engine, the learner in
one seat of each, the opponents (any :func:`cluedo_env.agents.play.registry.make_agent` player, or the league's
frozen snapshots, :mod:`cluedo_env.training.rllib.league`) played inside the env. One RLlib env step is one
learner decision in each of N games, so RLlib's per-call costs (connectors, the torch forward pass)
are paid once per N games instead of once per move of one game.

:class:`MaskedObservations` turns the env's ``(N, D)`` int8 observations and ``infos["action_mask"]``
into one ``(N, D + A)`` int8 array (observation, then mask) that
:class:`~cluedo_env.training.rllib.module.MaskedPPOTorchRLModule` splits, and drops the other infos (RLlib's
``DictInfoToList`` would otherwise split every info array into N per-game dicts, every step).

Autoreset: the env's ``NEXT_STEP`` mode is what ray 2.60's runner expects (the step after the one
that ends an episode is the reset of that row; its action is ignored).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from cluedo_env.training.players import register_player_prefixes
from cluedo_env.training.rllib.config import LEARNER_DEFAULTS, learner_options, opponent_specs
from cluedo_env.training.rllib.league import LeagueAgent
from gymnasium import spaces
from ray.tune.registry import register_env

from cluedo_env import GYMNASIUM_ID

VECTOR_ENV_NAME = "cluedo_vector_v0"


class MaskedObservations(gymnasium.vector.VectorWrapper):
    """``CluedoVectorEnv`` with the mask appended to the observation: ``(N, D + A)`` int8, the last A the mask
    (uint8 rows when the env hands out packed observations: the packed row, then the mask).

    One flat array, not a dict: RLlib splits the batch into N per-game items and stacks them back
    every step, a plain row copy for an array but a tree walk per game for a dict (measured:
    docs/training.md). :class:`~cluedo_env.training.rllib.module.MaskedPPOTorchRLModule` splits it again.
    Infos are dropped (an empty dict each step): the mask is all RLlib needs, and RLlib's
    ``DictInfoToList`` would turn every info array into N dicts per step.
    """

    def __init__(self, env: gymnasium.vector.VectorEnv) -> None:
        super().__init__(env)
        dim = int(env.single_observation_space.shape[0]) + int(env.single_action_space.n)
        self._dtype = np.dtype(env.single_observation_space.dtype)
        high = 255 if self._dtype == np.uint8 else 127
        self.single_observation_space = spaces.Box(0, high, (dim,), self._dtype)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, env.num_envs)

    def _obs(self, obs: np.ndarray, infos: dict[str, Any]) -> np.ndarray:
        return np.concatenate([obs, infos["action_mask"].astype(self._dtype, copy=False)], 1)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._obs(obs, infos), {}

    def step(self, actions: Any):
        obs, rew, term, trunc, infos = self.env.step(np.asarray(actions))
        return self._obs(obs, infos), rew, term, trunc, {}


def make_vector_env(env_config: dict[str, Any]) -> gymnasium.vector.VectorEnv:
    """Ray's env creator: ``env_config`` holds ``num_envs`` (set by RLlib), the rules, ``learner`` keys (a
    ``learner:`` section as plain data, :class:`cluedo_env.training.rllib.config.LearnerSettings`), ``opponents``
    and ``seed``; returns the masked-dict vector env."""
    cfg = dict(env_config)
    num_envs = int(cfg.pop("num_envs", 1))
    seed = cfg.pop("seed", None)
    opponents = cfg.pop("opponents", "random")
    learner = {**LEARNER_DEFAULTS, **cfg.pop("learner", {})}
    preset = cfg.pop("preset", "classic")
    players = int(cfg.get("players", 4))
    specs = opponent_specs(opponents, players)
    register_player_prefixes(specs)  # the loaders of ckpt: / rllib: opponents, in this (env runner) process
    if "league" in specs:
        league = LeagueAgent(seed=seed, **learner_options(learner))
        specs = [league if s == "league" else s for s in specs]
    env = gymnasium.make_vec(GYMNASIUM_ID, num_envs=num_envs, vectorization_mode="vector_entry_point",
                             preset=preset, opponents=specs, seed=seed, **learner, **cfg)  # fmt: skip
    return MaskedObservations(env)


def reseed_opponents(env_runner: Any = None, env: Any = None, env_context: Any = None, **kwargs: Any) -> None:
    """``on_environment_created`` callback: distinct opponent seeds per env runner.

    Ray hands the vector entry point a plain dict without the runner's index, so every runner would
    build its bots with the config's seed; this rebuilds them with ``seed + 1009 * worker_index``.
    """
    core = getattr(env, "core", None)
    if core is None or env_context is None:
        return
    base = env_context.get("seed")
    if base is None:
        return
    core.set_opponents(core.specs, seed=int(base) + 1009 * int(getattr(env_context, "worker_index", 0) or 0))


def register() -> None:
    """Register :data:`VECTOR_ENV_NAME` with Ray's env registry (idempotent)."""
    register_env(VECTOR_ENV_NAME, make_vector_env)


__all__ = ["VECTOR_ENV_NAME", "MaskedObservations", "make_vector_env", "register", "reseed_opponents"]
