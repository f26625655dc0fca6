"""How fast an RLlib config samples: ``python -m cluedo_env.training --backend rllib --config X --bench N ...``.

:func:`breakdown` splits a vs_bots env step's time between the env and the module, in this process; :func:`bench`
measures the env runners' sampling rate with the learner idle (docs/benchmarks.md has the figures).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from cluedo_env.training.rllib.algorithm import build_config, module_config, vector_env_config
from cluedo_env.training.rllib.config import RllibConfig
from cluedo_env.training.rllib.module import MaskedPPOTorchRLModule, module_actions
from cluedo_env.training.rllib.vector_env import make_vector_env


def breakdown(cfg: RllibConfig, steps: int = 4000, log=print) -> dict[str, Any]:
    """Where a sampled step's time goes (vs_bots), in this process with one torch thread, no Ray:
    the env alone (random legal learner actions), then the env with the module choosing the actions
    (one batched forward pass and a categorical draw per env step). A runner's rate below the second
    figure is RLlib's own per-step cost (episode objects, connectors)."""
    torch.set_num_threads(1)
    n = int(cfg.env_runners["num_envs_per_env_runner"])
    venv = make_vector_env(vector_env_config(cfg, num_envs=n))
    n_act = int(venv.unwrapped.single_action_space.n)
    options = cfg.learner.module_options()
    model = {**module_config(cfg), "cluedo": options}
    module = MaskedPPOTorchRLModule(observation_space=venv.single_observation_space,
                                    action_space=venv.unwrapped.single_action_space, model_config=model)  # fmt: skip
    gen = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)

    def random_legal(obs: np.ndarray) -> np.ndarray:
        mask = obs[:, -n_act:] > 0
        return (np.cumsum(mask, 1) > (rng.random(len(mask)) * mask.sum(1)).astype(np.int64)[:, None]).argmax(1)

    def policy(obs: np.ndarray) -> np.ndarray:
        return module_actions(module, obs[:, :-n_act], obs[:, -n_act:], False, gen)

    row: dict[str, Any] = {"num_envs": n, "opponents": cfg.to_dict()["opponents"], **options}
    for name, choose in (("env_only", random_legal), ("env_and_module", policy)):
        obs, _ = venv.reset(seed=cfg.seed)
        for _ in range(4):  # warm-up
            obs, *_ = venv.step(choose(obs))
        done = 0
        t0 = time.perf_counter()
        while done < steps:
            obs, *_ = venv.step(choose(obs))
            done += n
        row[f"{name}_steps_per_s"] = round(done / (time.perf_counter() - t0), 1)
    log(json.dumps(row))
    return row


def bench(cfg: RllibConfig, runners: list[int], steps: int = 4000, log=print,
          checkpoint: str | Path | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Sampling throughput (env steps/s over all runners) with N remote env runners, the learner idle.

    Each runner samples ``steps`` env steps in ``sample()`` calls of one rollout fragment each
    (``rollout_fragment_length`` x ``num_envs_per_env_runner`` steps), as training does. ``checkpoint``: the
    runners act with that run's modules (an algorithm checkpoint of the same config) instead of fresh ones: an
    untrained module accuses at once, so its games (episodes) last 1-3 steps, which a learning run soon leaves.
    """
    rows = []
    for n in runners:
        runners_cfg = {**cfg.env_runners, "num_env_runners": n}
        frag = runners_cfg.get("rollout_fragment_length")
        envs = int(runners_cfg["num_envs_per_env_runner"])
        bulk_games = cfg.setup == "vs_bots" or cfg.sampler == "bulk"  # runners that step envs games per call
        chunk = (int(frag) if isinstance(frag, int) else 200) * (envs if bulk_games else 1)
        ppo = dict(cfg.ppo)
        if isinstance(frag, int):  # RLlib checks the batch against runners x envs x fragment; the learner is idle
            ppo["train_batch_size_per_learner"] = frag * envs * max(n, 1)
            ppo["minibatch_size"] = min(int(ppo["minibatch_size"]), frag * envs * max(n, 1))
        algo = build_config(dataclasses.replace(cfg, env_runners=runners_cfg, ppo=ppo)).build_algo()
        group = algo.env_runner_group
        if checkpoint is not None:
            algo.restore_from_path(str(Path(checkpoint).resolve()))
            group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)

        def sample(r, k=steps, chunk=chunk):
            n = 0
            while n < k:
                n += sum(len(e) for e in r.sample(num_timesteps=min(chunk, k - n), explore=True))
            return n

        remote = n > 0
        warm = functools.partial(sample, k=max(1, steps // 4))
        group.foreach_env_runner(warm, local_env_runner=not remote)  # warm-up
        t0 = time.perf_counter()
        counts = group.foreach_env_runner(sample, local_env_runner=not remote)
        dt = time.perf_counter() - t0
        total = int(sum(counts))
        row = {"num_env_runners": n, "num_envs_per_env_runner": envs, "modules": str(checkpoint or "fresh"),
               "env_steps": total, "seconds": round(dt, 3),
               "env_steps_per_s": round(total / dt, 1), "per_runner": round(total / dt / max(n, 1), 1)}  # fmt: skip
        log(json.dumps(row))
        rows.append(row)
        algo.stop()
    return rows


__all__ = ["bench", "breakdown"]
