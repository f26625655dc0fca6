"""Checkpoints of trained policies: atomic saving, checked loading, and a player for the evaluator.

A checkpoint is an sb3-contrib ``MaskablePPO`` zip whose model carries ``cluedo_meta`` (format,
rules, action space, observation size). :func:`load_model` refuses, with a
:class:`CheckpointError` saying why, a file that is missing, not a zip, not a MaskablePPO model,
or made for another action space or observation size than asked for.

Importing this module registers the ``ckpt:`` prefix with :mod:`agents.registry`, so that
``make_agent("ckpt:runs/vs_random/model.zip")`` builds a :class:`PolicyAgent` (deterministic,
the most probable legal action; ``make_agent("ckpt:path", deterministic=False)`` samples).
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from cluedo_env.config import RulesConfig, make_config
from cluedo_env.envs.single_agent import macro_mask, macro_to_engine, num_actions
from cluedo_env.views import PlayerView

FORMAT = "cluedo_env.maskable_ppo.v1"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message says which file and why."""


def make_meta(config: RulesConfig, macro_moves: bool, obs_size: int, **extra: Any) -> dict[str, Any]:
    return {"format": FORMAT, "rules": config.to_dict(), "macro_moves": bool(macro_moves),
            "n_actions": num_actions(macro_moves), "obs_size": int(obs_size), **extra}  # fmt: skip


def save_model_atomic(model, path: str | os.PathLike) -> Path:
    """``model.save`` into ``path`` via a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            model.save(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_atomic(path: str | os.PathLike, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_model(path: str | os.PathLike, env=None, *, obs_size: int | None = None, n_actions: int | None = None,
               device: str = "cpu", **kwargs):  # fmt: skip
    """A MaskablePPO model from ``path``; raises :class:`CheckpointError` for anything unusable."""
    from sb3_contrib import MaskablePPO

    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path}: no such file")
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"checkpoint {path}: not a zip file (truncated or not a saved model?)")
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise CheckpointError(f"checkpoint {path}: unreadable zip ({exc})") from exc
    if not {"data", "policy.pth"} <= names:
        raise CheckpointError(f"checkpoint {path}: not a Stable-Baselines3 model (has {sorted(names)})")
    try:
        model = MaskablePPO.load(path, device=device, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any failure inside SB3's loader means a bad file
        raise CheckpointError(f"checkpoint {path}: cannot be loaded as a MaskablePPO model ({exc!r})") from exc
    meta = getattr(model, "cluedo_meta", None)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {path}: no Cluedo metadata (format {FORMAT!r}); not made by training.train")
    got_obs = int(model.observation_space.shape[0])
    got_act = int(model.action_space.n)
    if env is not None:
        obs_size = obs_size if obs_size is not None else int(env.observation_space.shape[0])
        n_actions = n_actions if n_actions is not None else int(env.action_space.n)
    if obs_size is not None and got_obs != obs_size:
        raise CheckpointError(
            f"checkpoint {path}: made for observations of size {got_obs} (rules {meta['rules'].get('preset')}, "
            f"{meta['rules'].get('players')} players), these rules give {obs_size}"
        )
    if n_actions is not None and got_act != n_actions:
        raise CheckpointError(
            f"checkpoint {path}: made for {got_act} actions (macro_moves={meta['macro_moves']}), this env has "
            f"{n_actions} (macro_moves={n_actions != 870})"
        )
    if env is not None:  # again, now with the env (sizes checked): SB3 rebuilds the buffers for its n_envs
        model = MaskablePPO.load(path, env=env, device=device, **kwargs)
    return model


def policy_fn(model, deterministic: bool = True):
    """``fn(obs, mask) -> actions`` in the model's own action space, batched, without gradients."""
    import torch

    policy = model.policy

    def fn(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            obs_t = torch.as_tensor(np.asarray(obs), dtype=torch.float32, device=policy.device)
            dist = policy.get_distribution(obs_t, action_masks=np.asarray(mask))
            return dist.get_actions(deterministic=deterministic).cpu().numpy().astype(np.int64)

    return fn


class PolicyAgent(Agent):
    """A trained checkpoint as a batched player (Agent interface); sees only its PlayerView."""

    def __init__(self, path: str | os.PathLike, seed: int | None = None, deterministic: bool = True) -> None:
        self.path = str(path)
        self.model = load_model(path)
        self.meta = self.model.cluedo_meta
        self.macro_moves = bool(self.meta["macro_moves"])
        self.deterministic = deterministic
        self.name = f"ckpt:{path}"
        if seed is not None:
            import torch

            torch.manual_seed(seed)
        self._fn = policy_fn(self.model, deterministic)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        obs = view.observe(idx)
        if obs.shape[1] != self.meta["obs_size"]:
            cfg: RulesConfig = view.config
            raise CheckpointError(
                f"checkpoint {self.path}: made for observations of size {self.meta['obs_size']} "
                f"({self.meta['rules'].get('preset')}, {self.meta['rules'].get('players')} players); "
                f"this game ({cfg.preset}, {cfg.players} players) gives {obs.shape[1]}"
            )
        mask = view.legal_action_mask[idx]
        if self.macro_moves:
            return macro_to_engine(self._fn(obs, macro_mask(mask)), mask)
        return self._fn(obs, mask)


def _ckpt_factory(spec: str, seed: int | None = None, **kwargs) -> PolicyAgent:
    return PolicyAgent(spec, seed=seed, **kwargs)


def register() -> None:
    from agents.registry import register_prefix

    register_prefix("ckpt", _ckpt_factory, replace=True)


register()

__all__ = ["CheckpointError", "PolicyAgent", "load_model", "make_meta", "policy_fn", "save_model_atomic"]


def rules_of(meta: dict) -> RulesConfig:
    """The rules a checkpoint was trained with."""
    return make_config(meta["rules"])
