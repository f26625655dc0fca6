"""The single-agent Cluedo env as a Stable-Baselines3 ``VecEnv`` (N games in one batched engine).

    from cluedo_env.training.sb3.vec_env import CluedoVecEnv
    venv = CluedoVecEnv(1024, "classic", opponents="heuristic", seat="random", macro_moves=True, seed=0)
    model = MaskablePPO("MlpPolicy", venv)          # sb3-contrib reads venv.env_method("action_masks")

The learner, the opponents, rewards, macro moves and seeding are those of
:mod:`cluedo_env.training.single_agent` (this is a thin front end over
:class:`~cluedo_env.training.learner_core.LearnerCore`).
SB3's conventions: ``step_wait`` autoresets finished games; ``infos[i]["terminal_observation"]``
holds the last observation of a finished episode and ``infos[i]["TimeLimit.truncated"]`` is True
when it was cut at ``max_turns`` (R-E3). ``infos[i]["seat"]`` is the learner's seat in the game
that just ended (or is going on), ``infos[i]["unplayed"]`` is True at the end of the one forced
step of a game that ended before the learner's first decision (see
:mod:`cluedo_env.training.single_agent`: such games are episodes too, so ``VecMonitor`` statistics
match ``scripts/evaluate.py``). ``action_masks()`` returns the (N, A) bool legal actions;
``env_method("action_masks")`` returns them row by row, which is what
``sb3_contrib.common.maskable.utils.get_action_masks`` stacks. ``seed(s)`` takes effect at the next
``reset()``, as in SB3.

Actions must be integers: a float array (``3.5``) or strings raise
:class:`~cluedo_env.rules.actions.IllegalActionError` instead of being truncated; an illegal or
out-of-range action raises it too, naming the action as given (``9999``) and the legal ones.

This module needs stable-baselines3; :mod:`cluedo_env.training.single_agent` does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import OPTION_NAMES, LearnerOptions, keywords_of
from cluedo_env.training.single_agent import _rules, _spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from cluedo_env.envs.learner_actions import as_actions
from cluedo_env.rules.config import RulesConfig


class CluedoVecEnv(VecEnv):
    """``batch_size`` games, the learner in one seat of each; keyword arguments as
    :class:`~cluedo_env.training.learner_options.LearnerOptions` (SB3 reads the batch as ``num_envs``)."""

    def __init__(self, batch_size: int = 1024, config: RulesConfig | str | dict | None = None, *,
                 preset: str | None = None, seed: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        env_keywords = [*keywords_of(type(self).__init__), *OPTION_NAMES]
        options = LearnerOptions.from_keywords(type(self).__name__, env_keywords, batch_size, _rules(config, preset),
                                               seed=seed, **kwargs)  # fmt: skip
        self.core = LearnerCore(options)
        obs_space, act_space = _spaces(self.core)
        self.render_mode = None
        super().__init__(batch_size, obs_space, act_space)  # SB3 calls the batch num_envs
        self._actions: np.ndarray | None = None
        self._next_seed = seed

    # ---- VecEnv API
    def seed(self, seed: int | None = None) -> list[int | None]:
        self._next_seed = seed
        return [seed] * self.num_envs

    def reset(self) -> np.ndarray:
        seed, self._next_seed = self._next_seed, None  # None: go on with the current random streams
        return self.core.reset(seed).copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = as_actions(actions, self.num_envs, self.core.n_actions)  # refuse floats before any step

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        seats = self.core.seat.copy()
        unplayed = self.core.unplayed.copy()
        try:
            obs, rew, term, trunc, ended = self.core.step(self._actions)
        finally:
            self._actions = None
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(ended):
            infos[i] = {"terminal_observation": self.core.final_obs[i].copy(),
                        "TimeLimit.truncated": bool(trunc[i]), "seat": int(seats[i]),
                        "unplayed": bool(unplayed[i])}  # fmt: skip
        return obs.copy(), rew.copy(), ended.copy(), infos

    def close(self) -> None:
        pass

    def action_masks(self) -> np.ndarray:
        """(N, A) bool: the learner's legal actions in every game."""
        return self.core.action_masks()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        idx = self._indices(indices)
        if method_name == "action_masks":
            return list(self.core.action_masks()[idx])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    # ---- extras
    def set_opponents(self, opponents: Any, seed: int | None = None) -> None:
        """New opponents; call ``reset()`` afterwards to start fresh games with them."""
        self.core.set_opponents(opponents, seed=seed)

    @property
    def skipped_games(self) -> int:
        """Games dropped (``unplayed_games="skip"``) since the last reset."""
        return self.core.skipped_games


__all__ = ["CluedoVecEnv"]
