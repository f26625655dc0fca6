"""Trained players shipped with the package: ``pretrained:NAME`` wherever a player is named.

    cluedo evaluate --players pretrained:vs_heuristic heuristic heuristic heuristic --games 2000
    cluedo play --players human pretrained:vs_heuristic deducer heuristic
    make_agent("pretrained:vs_heuristic")          # after importing cluedo_env.training.pretrained

The checkpoints live in ``training/pretrained/`` (installed with the package) beside
``index.json``, which says for each name its file and its model card: the training config,
learner steps, wall time, machine, and the measured win rates with the commands that measured
them (``docs/results.md`` shows the same cards). Players are :class:`~cluedo_env.training.sb3.checkpoints.PolicyAgent`
over the checkpoint, so they rebuild the inputs they were trained on from their own view.

:func:`export` writes a shipped copy of a training checkpoint: the policy's weights in float16
and a fresh optimizer (training state is not needed to play), which keeps a [256, 256] policy
near 3.5 MB; the weights are read back into float32 when the player loads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch
from cluedo_env.agents.play.registry import register_prefix
from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model, save_model_atomic
from cluedo_env.training.sb3.safe_checkpoint import ROLLOUT_STATE

from cluedo_env.errors import CheckpointError, UsageError
from cluedo_env.files import write_text_atomic

DIRECTORY = Path(__file__).resolve().parent / "pretrained"
INDEX = "index.json"


def catalogue(directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """``{name: {"file": ..., "card": {...}}}`` of the shipped players (empty if none)."""
    path = (directory or DIRECTORY) / INDEX
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: the pretrained players' index cannot be read ({exc})") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) and "file" in v for v in data.values()):
        raise CheckpointError(f"{path}: expected {{name: {{'file': ..., 'card': ...}}}}")
    return data


def path_of(name: str, directory: Path | None = None) -> Path:
    """The checkpoint file of pretrained player ``name``; a clear error naming the available ones."""
    players = catalogue(directory)
    if name not in players:
        shown = ", ".join(f"pretrained:{n}" for n in sorted(players)) or "none shipped in this install"
        raise UsageError(f"unknown pretrained player {name!r} (available: {shown})")
    return (directory or DIRECTORY) / players[name]["file"]


def _factory(spec: str, seed: int | None = None, **kwargs: Any) -> PolicyAgent:
    agent = PolicyAgent(path_of(spec), seed=seed, **kwargs)
    agent.name = f"pretrained:{spec}"
    return agent


def register() -> None:
    """Register the ``pretrained:`` prefix with :mod:`cluedo_env.agents.play.registry` (done on import)."""
    register_prefix("pretrained", _factory, replace=True)


def export(checkpoint: str | os.PathLike, name: str, card: dict[str, Any], directory: Path | None = None) -> Path:
    """Write a shipped copy of ``checkpoint`` as ``pretrained:name`` with its model card; returns the file.

    The copy keeps what playing needs: the policy's weights (float16) and the checkpoint's
    ``cluedo_meta``. A fresh optimizer replaces the trained one's state (Adam's moments would
    triple the size and matter only to resume training, which is what the run's own checkpoints are for),
    and the rollout state SB3 pickles with a model (the last observation of each training game: 2 MB for
    2,048 games) is dropped.
    """
    directory = directory or DIRECTORY
    model = load_model(checkpoint)
    for attr in ROLLOUT_STATE:  # the last observations of every training game (2,048 x 958 bytes and more)
        setattr(model, attr, None)
    policy = model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=1e-4, **policy.optimizer_kwargs)
    policy.to(torch.float16)
    out = save_model_atomic(model, directory / f"{name}.zip")
    players = catalogue(directory)
    players[name] = {"file": out.name, "card": card}
    write_text_atomic(directory / INDEX, json.dumps(players, indent=1, sort_keys=True) + "\n")
    return out


register()

__all__ = ["DIRECTORY", "catalogue", "export", "path_of", "register"]
