"""The RLlib algorithm a config describes: the ``PPOConfig`` of a vs_bots or a self-play run, and Ray's start.

:func:`build_config` turns a checked config (:mod:`cluedo_env.training.rllib.config`) into RLlib's ``PPOConfig``: the
env
(the batched learner env of :mod:`cluedo_env.training.rllib.vector_env`, or the PettingZoo env for self-play), the env
runner (RLlib's, or the bulk runners of :mod:`cluedo_env.training.rllib.bulk_runner` /
:mod:`cluedo_env.training.rllib.selfplay_runner`),
the masked module (:mod:`cluedo_env.training.rllib.module`) and the league's snapshot callback
(:mod:`cluedo_env.training.rllib.league`).
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np
import ray
from cluedo_env.training.precision import warn_if_emulated
from cluedo_env.training.rllib import league, vector_env
from cluedo_env.training.rllib.bulk_runner import BulkEnvRunner
from cluedo_env.training.rllib.config import LEAGUE, RllibConfig, opponent_specs
from cluedo_env.training.rllib.module import MaskedPPOTorchRLModule
from cluedo_env.training.rllib.selfplay_runner import (
    BOTS_KEY,
    INPUTS_KEY,
    LEAGUE_OF_KEY,
    BulkSelfPlayRunner,
    input_sizes,
    rules_env_config,
    seat_mapping,
)
from cluedo_env.training.typed_config import plain
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

import cluedo_env

ENV_NAME = "cluedo_v0"

def make_env(env_config: dict[str, Any]):
    """RLlib's ``PettingZooEnv`` around the bare AEC env (illegal actions raise)."""
    return PettingZooEnv(cluedo_env.raw_env(**rules_env_config(env_config)))


def register() -> None:
    register_env(ENV_NAME, make_env)


def selfplay_mapping(cfg: RllibConfig) -> Any:
    """The ``policy_mapping_fn`` of a selfplay config (picklable: it goes to every env runner)."""
    sp = cfg.selfplay
    return functools.partial(seat_mapping, policies=sp.policies + sp.bots, mapping=sp.mapping,
                             players=cfg.rules_config.players)  # fmt: skip


def flat_spaces(cfg: RllibConfig) -> tuple[Any, Any]:
    """(observation, action) spaces of one seat as the bulk self-play runner feeds its modules: the observation
    (the engine's, or the learner inputs of ``learner:``) then the legal mask, in one int8 row (the layout of the
    batched vs_bots env)."""
    rules = cluedo_env.raw_env(**dict(cfg.env)).engine.config
    width, n_act = input_sizes(rules, cfg.selfplay_inputs())
    return gym.spaces.Box(0, 127, (width + n_act,), np.int8), gym.spaces.Discrete(n_act)


def module_config(cfg: RllibConfig) -> dict[str, Any]:
    """The module's ``model_config``: ``model:`` and the run's ``precision`` (a warning where bfloat16 is emulated)."""
    warn_if_emulated(cfg.precision)
    return {**cfg.model, "precision": cfg.precision}


def vector_env_config(cfg: RllibConfig, **extra: Any) -> dict[str, Any]:
    """The ``env_config`` of the vs_bots vector env (plain data: Ray hands it to every env runner): the rules, the
    ``learner:`` options, the opponents and the seed, then ``extra``
    (:func:`cluedo_env.training.rllib.vector_env.make_vector_env` reads it)."""
    return {**cfg.env, "learner": plain(cfg.learner), "opponents": plain(cfg.opponents), "seed": cfg.seed, **extra}


def build_config(cfg: RllibConfig):
    """The ``PPOConfig`` for ``cfg`` (see :func:`cluedo_env.training.rllib.config.load_config`)."""
    er = {k: (int(v) if k.startswith("num_") else v) for k, v in cfg.env_runners.items()}
    config = PPOConfig().framework("torch").learners(**cfg.learners).training(**cfg.ppo)
    config = config.debugging(seed=cfg.seed)
    if cfg.setup == "vs_bots":
        return _vs_bots(config, cfg, er)
    return _selfplay(config, cfg, er)


def _vs_bots(config: Any, cfg: RllibConfig, er: dict[str, Any]) -> Any:
    """Single-agent PPO on the batched learner-vs-players env (:mod:`cluedo_env.training.rllib.vector_env`)."""
    vector_env.register()
    env_config = vector_env_config(cfg)
    model = {**module_config(cfg), "cluedo": cfg.learner.module_options()}  # read by rllib: players
    config = (
        # Discrete actions need no unsquashing or clipping; off, RLlib skips a per-game pass over them.
        config.environment(vector_env.VECTOR_ENV_NAME, env_config=env_config, disable_env_checking=True,
                           normalize_actions=False, clip_actions=False)  # fmt: skip
        .env_runners(**er, gym_env_vectorize_mode="vector_entry_point")
        .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model))
    )
    if cfg.sampler == "bulk":
        config = config.env_runners(env_runner_cls=BulkEnvRunner)
    callbacks: dict[str, Any] = {"on_environment_created": vector_env.reseed_opponents}
    if LEAGUE in opponent_specs(cfg.opponents, cfg.rules_config.players):
        callbacks["on_train_result"] = league.snapshot_callback(cfg.league.snapshot_every, cfg.league.max_snapshots)
    return config.callbacks(**callbacks)


def _selfplay(config: Any, cfg: RllibConfig, er: dict[str, Any]) -> Any:
    """Multi-agent PPO: every seat is a module of ``selfplay.policies`` (``selfplay.mapping``).

    ``sampler: rllib``: RLlib's multi-agent runner on the PettingZoo env, one game per env.
    ``sampler: bulk``: :class:`cluedo_env.training.rllib.selfplay_runner.BulkSelfPlayRunner`,
    ``num_envs_per_env_runner``
    games of one engine per runner; the modules take flat rows (:func:`flat_spaces`)."""
    register()
    sp = cfg.selfplay
    bulk = cfg.sampler == "bulk"
    spaces = dict(zip(("observation_space", "action_space"), flat_spaces(cfg), strict=True)) if bulk else {}
    inputs = cfg.selfplay_inputs()
    model = {**module_config(cfg), "cluedo": inputs} if inputs else module_config(cfg)  # read by rllib: players
    specs = {p: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model, **spaces)
             for p in sp.policies}  # fmt: skip
    config = (
        # RLlib's env check steps an unmasked action_space.sample(), which the bare env rightly rejects
        config.environment(ENV_NAME, env_config={**cfg.env, BOTS_KEY: list(sp.bots), INPUTS_KEY: inputs,
                                                 LEAGUE_OF_KEY: sp.policies[0]},
                           disable_env_checking=True)  # fmt: skip
        .env_runners(**er)  # num_env_runners, num_envs_per_env_runner, rollout_fragment_length, ...
        .multi_agent(policies=set(specs), policy_mapping_fn=selfplay_mapping(cfg),
                     policies_to_train=list(sp.train or sp.policies))  # fmt: skip
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    )
    if bulk:
        config = config.env_runners(env_runner_cls=BulkSelfPlayRunner)
    if LEAGUE in sp.bots:
        config = config.callbacks(on_train_result=league.snapshot_callback(cfg.league.snapshot_every,
                                                                           cfg.league.max_snapshots))  # fmt: skip
    return config


def init_ray(cfg: RllibConfig, address: str | None = None) -> None:
    """Start (or join, with ``address``) Ray once per process; a local Ray takes ``ray.num_cpus``."""
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=cfg.ray.num_cpus, include_dashboard=False)


__all__ = ["ENV_NAME", "build_config", "init_ray", "make_env", "module_config", "register", "vector_env_config"]
