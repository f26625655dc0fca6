"""RLlib (new API stack) pieces for Cluedo: masked PPO module, random-legal bot module, ``rllib:`` players.

* :class:`MaskedPPOTorchRLModule`: RLlib's default PPO torch module on ``obs["observation"]`` (cast to
  float), with the env's ``obs["action_mask"]`` applied to the logits (illegal actions get
  ``FLOAT_MIN``), in exploration, inference and training alike. Same idea as RLlib's
  ``examples/rl_modules/classes/action_masking_rlm.py``, but for this env's key names and int8 spaces.
* :class:`RandomLegalRLModule`: no parameters, never trained; picks a uniformly random legal action
  from the mask. It is the ``random`` bot as an RLlib module, so bot seats run inside RLlib.
* :class:`RllibAgent`: a module from an RLlib checkpoint as a batched player (``agents.base.Agent``);
  it sees the game only through its ``PlayerView`` (``view.observe(idx)`` is the env's observation).

Importing this module registers the ``rllib:`` prefix with :mod:`agents.registry`::

    make_agent("rllib:runs/rllib_vs_random/checkpoint")                 # module "main", greedy
    make_agent("rllib:runs/rllib_vs_random/checkpoint", deterministic=False, module="main")

The path is an algorithm checkpoint (``Algorithm.save_to_path``) or an RLModule folder inside one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from agents.base import Agent, replace_illegal
from cluedo_env.engine.views import PlayerView

OBS_KEY = "observation"
MASK_KEY = "action_mask"


def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
    """(mask as float, batch whose OBS is the float observation), without changing the caller's batch."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or OBS_KEY not in obs or MASK_KEY not in obs:
        raise ValueError(f"a masked module needs Dict observations with keys {OBS_KEY!r} and {MASK_KEY!r}")
    out = dict(batch)
    out[Columns.OBS] = torch.as_tensor(obs[OBS_KEY]).float()
    return torch.as_tensor(obs[MASK_KEY]).float(), out


def _apply_mask(outs: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
    outs[Columns.ACTION_DIST_INPUTS] = outs[Columns.ACTION_DIST_INPUTS] + torch.clamp(torch.log(mask), min=FLOAT_MIN)
    return outs


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch module on ``obs["observation"]`` with ``obs["action_mask"]`` applied to the logits."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or MASK_KEY not in observation_space.spaces:
            raise ValueError(f"MaskedPPOTorchRLModule needs a Dict observation space with {OBS_KEY!r} and {MASK_KEY!r}")
        self.observation_space_with_mask = observation_space
        inner = observation_space[OBS_KEY]  # the networks see the observation only, as floats
        super().__init__(observation_space=gym.spaces.Box(0.0, 127.0, inner.shape, np.float32), **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self.observation_space_with_mask

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = _split(batch)
        return _apply_mask(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = _split(batch)
        return _apply_mask(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = _split(batch)
        return _apply_mask(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if isinstance(batch[Columns.OBS], dict):
            _, batch = _split(batch)
        return super().compute_values(batch, embeddings)


class RandomLegalRLModule(RLModule):
    """A bot as an RLlib module: a uniformly random legal action from ``obs["action_mask"]``; never trained."""

    def setup(self) -> None:
        self._rng = np.random.default_rng()

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask = batch[Columns.OBS][MASK_KEY]
        mask = mask.cpu().numpy() if isinstance(mask, torch.Tensor) else np.asarray(mask)
        mask = mask.reshape(-1, mask.shape[-1]) > 0
        out = np.zeros(len(mask), np.int64)
        rows = mask.any(1)  # an all-zero mask (a finished game's last observation) is never acted on
        if rows.any():
            out[rows] = _sample_rows(mask[rows], self._rng)
        return {Columns.ACTIONS: out}

    def _forward_train(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("RandomLegalRLModule is a bot, never trained (leave it out of policies_to_train)")

    def get_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        pass

    def compile(self, *args: Any, **kwargs: Any) -> None:  # what TorchRLModule callers may call
        pass


def _sample_rows(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    counts = mask.sum(1)
    rank = (rng.random(len(mask)) * counts).astype(np.int64)
    return (np.cumsum(mask, axis=1) > rank[:, None]).argmax(1)


# ------------------------------------------------------------------ checkpoints as players
def module_path(path: str | os.PathLike, module: str = "main") -> Path:
    """The RLModule folder for ``module`` in an algorithm checkpoint (or ``path`` itself if it is one)."""
    path = Path(path)
    inner = path / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / module
    if inner.is_dir():
        return inner
    if (path / "class_and_ctor_args.pkl").is_file() or (path / "module_state.pkl").is_file():
        return path
    raise FileNotFoundError(f"{path}: not an RLlib algorithm checkpoint with module {module!r}, nor an RLModule folder")


def load_module(path: str | os.PathLike, module: str = "main") -> RLModule:
    return RLModule.from_checkpoint(module_path(path, module))


class RllibAgent(Agent):
    """An RLlib module (from a checkpoint) as a batched player; greedy by default, ``deterministic=False`` samples."""

    def __init__(self, path: str | os.PathLike, seed: int | None = None, deterministic: bool = True,
                 module: str = "main") -> None:  # fmt: skip
        self.path = str(path)
        self.module = load_module(path, module)
        self.module.eval()
        self.deterministic = deterministic
        self.name = f"rllib:{path}"
        self.illegal = 0  # actions the safety net replaced (the mask makes this 0; tests check it)
        torch_seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**63)
        self._gen = torch.Generator().manual_seed(torch_seed)
        self._rng = np.random.default_rng(seed)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        obs = view.observe(idx)
        mask = view.legal_action_mask[idx]
        batch = {Columns.OBS: {OBS_KEY: torch.from_numpy(np.ascontiguousarray(obs)),
                               MASK_KEY: torch.from_numpy(mask.astype(np.int8))}}  # fmt: skip
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            if self.deterministic:
                out = logits.argmax(-1)
            else:
                out = torch.multinomial(torch.softmax(logits, -1), 1, generator=self._gen)[:, 0]
        out = out.numpy().astype(np.int64)
        self.illegal += replace_illegal(out, np.asarray(mask, bool), self._rng)
        return out


def _rllib_factory(spec: str, seed: int | None = None, **kwargs: Any) -> RllibAgent:
    return RllibAgent(spec, seed=seed, **kwargs)


def register() -> None:
    from agents.registry import register_prefix

    register_prefix("rllib", _rllib_factory, replace=True)


register()

__all__ = ["MaskedPPOTorchRLModule", "RandomLegalRLModule", "RllibAgent", "load_module", "module_path"]
