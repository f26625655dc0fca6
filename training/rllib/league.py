"""League play on RLlib: frozen snapshots of the learning module as opponents inside the env runners.

``opponents: [heuristic, league, league]`` with ``league.snapshot_every: K`` in a ``vs_bots`` config:
every K training iterations, :func:`snapshot_callback` (an ``on_train_result`` callback) makes every
env runner copy its own module (which holds the weights just synced from the learner) into the
:class:`LeaguePool` of its env; at most ``league.max_snapshots`` are kept, the oldest dropped first.
Each seat named ``league`` is a :class:`LeagueAgent`: at the start of every game it draws one of the
pool's snapshots for that game (uniformly) and plays it for the whole game, sampling from the
masked policy. The snapshots live in the env runner process: nothing crosses the network but the
callback itself, and the snapshots run batched, one forward pass per snapshot per opponent step.

Until the first snapshot (and after a resume, until the next one), the pool is empty and league
seats play uniformly random legal moves. Snapshots are not saved in checkpoints.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from cluedo_env.agents.learner.inputs import LearnerInputs
from cluedo_env.agents.players.base import Agent, sample_legal
from cluedo_env.training.rllib.module import module_actions

from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import LearnerActions


class LeaguePool:
    """Frozen modules, oldest first, each with a version number that never changes."""

    def __init__(self, max_snapshots: int = 8) -> None:
        self.max_snapshots = int(max_snapshots)
        self.modules: dict[int, Any] = {}
        self.next_version = 0

    def __len__(self) -> int:
        return len(self.modules)

    def add(self, module: Any, max_snapshots: int | None = None) -> int:
        """Keep a frozen copy of ``module`` (eval mode); drop the oldest beyond ``max_snapshots``."""
        if max_snapshots is not None:
            self.max_snapshots = int(max_snapshots)
        frozen = copy.deepcopy(module)
        frozen.eval()
        version = self.next_version
        self.modules[version] = frozen
        self.next_version += 1
        while len(self.modules) > self.max_snapshots:
            del self.modules[min(self.modules)]
        return version

    def versions(self) -> list[int]:
        return sorted(self.modules)


class LeagueAgent(LearnerInputs, Agent):
    """A seat played by the league's snapshots: one snapshot per game, drawn when the game starts.

    Sees the game through its ``PlayerView`` only and builds the learner's inputs (belief features
    from its own notebook, the macro action spaces), as the learning module does; copies (one per
    seat it may sit in) share the pool.
    """

    name = "league"

    def __init__(self, seed: int | None = None, macro_moves: bool = False, macro_accuse: bool = False,
                 belief: bool = False, observation: str = "full", packed_observation: bool = False,
                 pool: LeaguePool | None = None) -> None:  # fmt: skip
        self.pool = pool if pool is not None else LeaguePool()
        self.actions = LearnerActions(macro_moves, macro_accuse)
        self.use_belief = bool(belief)
        self.observation = observation
        self.packed_observation = bool(packed_observation)
        self.seed = seed
        self._belief = None
        self._rng = np.random.default_rng(seed)
        self._gen = torch.Generator().manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
        self.game_version = np.zeros(0, np.int64)  # per game: the snapshot it plays (-1: random legal moves)

    def __deepcopy__(self, memo: dict) -> LeagueAgent:
        """Copies share the pool; each gets its own notebook, draws and per-game versions."""
        new = copy.copy(self)
        new._belief = None
        new._rng = np.random.default_rng(self._rng.integers(2**63))
        new._gen = torch.Generator().manual_seed(int(self._rng.integers(2**63)))
        new.game_version = self.game_version.copy()
        return new

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        super().reset(view, idx)
        idx = np.asarray(idx, np.int64)
        if len(self.game_version) != view.batch_size:
            self.game_version = np.full(view.batch_size, -1, np.int64)
        versions = self.pool.versions()
        if versions:
            self.game_version[idx] = np.asarray(versions)[self._rng.integers(0, len(versions), len(idx))]
        else:
            self.game_version[idx] = -1

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        obs, accuse = self.learner_inputs(view, idx)
        mask = view.legal_action_mask_of(idx)
        learner_mask = self.actions.mask(mask)
        chosen = np.zeros(len(idx), np.int64)
        version = self.game_version[idx]
        for v in np.unique(version):
            rows = np.flatnonzero(version == v)
            module = self.pool.modules.get(int(v))
            if module is None:  # no snapshot yet (or dropped): random legal moves
                chosen[rows] = sample_legal(learner_mask[rows], self._rng)
            else:
                chosen[rows] = module_actions(module, obs[rows], learner_mask[rows], False, self._gen)
        return self.actions.to_engine(chosen, mask, accuse)


def league_pools(env: Any) -> list[LeaguePool]:
    """The distinct pools of the league seats of a vector env (any wrapper around ``CluedoVectorEnv``)."""
    core = getattr(getattr(env, "unwrapped", env), "core", None)
    if core is None:
        return []
    pools: dict[int, LeaguePool] = {}
    for row in core.players:
        for player in row.values():
            if isinstance(player, LeagueAgent):
                pools[id(player.pool)] = player.pool
    return list(pools.values())


def add_snapshot(env_runner: Any, max_snapshots: int) -> int:
    """On an env runner: freeze its learning module into its league pools; returns the pool size.

    A vs_bots runner's pools are its env's league seats and its module is the learner's; a runner with its own
    league (the bulk self-play runner) says which pools and module through ``league()``."""
    if hasattr(env_runner, "league"):
        pools, module = env_runner.league()
    else:
        pools, module = league_pools(env_runner.env), env_runner.module
    size = 0
    for pool in pools:
        pool.add(module, max_snapshots)
        size = len(pool)
    return size


def snapshot_callback(every: int, max_snapshots: int) -> Callable[..., None]:
    """An ``on_train_result`` callback that snapshots the learning module every ``every`` iterations."""

    def on_train_result(*, algorithm: Any, result: dict, **kwargs: Any) -> None:
        if every <= 0 or algorithm.iteration % every:
            return
        sizes = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: add_snapshot(runner, max_snapshots), local_env_runner=False)  # fmt: skip
        if not sizes:  # no remote runners: the local one samples
            sizes = [add_snapshot(algorithm.env_runner, max_snapshots)]
        result["league_snapshots"] = int(max(sizes, default=0))

    return on_train_result


__all__ = ["LeagueAgent", "LeaguePool", "add_snapshot", "league_pools", "snapshot_callback"]
