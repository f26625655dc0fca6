"""Trained players shipped with the package: ``pretrained:NAME`` wherever a player is named.

    cluedo evaluate --players pretrained:vs_heuristic heuristic heuristic heuristic --games 2000
    cluedo play --players human pretrained:vs_heuristic deducer heuristic
    make_agent("pretrained:vs_heuristic")          # after importing cluedo_env.training.pretrained

The checkpoints live in ``training/pretrained/`` (installed with the package) beside
``index.json``, which says for each name its file and its model card: the training config,
learner steps, wall time, machine, and the measured win rates with the commands that measured
them (``docs/results.md`` shows the same cards). Players are :class:`~cluedo_env.training.sb3.checkpoints.PolicyAgent`
over the checkpoint, so they rebuild the inputs they were trained on from their own view.

A name may cover several table sizes: its entry's ``tables`` maps a number of players to the entry trained for
it (``{"3": "champion_3p", "4": "champion", ...}``), and ``pretrained:NAME`` then plays, at each reset, the
network of the table it sits at (:class:`TableSizedAgent`; a table it has no network for is a clear error). The
size-specific entries stay playable by their own names, and ``init_from: pretrained:NAME`` in a training config
takes the entry's own file.

:func:`export` writes a shipped copy of a training checkpoint: the policy's weights in float16
and a fresh optimizer (training state is not needed to play), which keeps a [256, 256] policy
near 3.5 MB; the weights are read back into float32 when the player loads.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from cluedo_env.agents.play.registry import register_prefix
from cluedo_env.agents.players.base import Agent
from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model, save_model_atomic
from cluedo_env.training.sb3.safe_checkpoint import ROLLOUT_STATE

from cluedo_env.engine.views import PlayerView
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
    for name, entry in data.items():
        tables = entry.get("tables", {})
        if not isinstance(tables, dict) or not all(_table_ok(k, v, name, data) for k, v in tables.items()):
            raise CheckpointError(f"{path}: {name}'s tables must map a number of players (3 to 6) to a shipped "
                                  f"player without tables of its own, got {tables!r}")  # fmt: skip
    return data


def _table_ok(players: Any, member: Any, name: str, data: dict) -> bool:
    """A ``tables`` item: a number of players (3 to 6, as text) to the entry itself or to one without tables."""
    return players in ("3", "4", "5", "6") and (member == name or member in data and "tables" not in data[member])


def path_of(name: str, directory: Path | None = None) -> Path:
    """The checkpoint file of pretrained player ``name``; a clear error naming the available ones."""
    players = catalogue(directory)
    if name not in players:
        shown = ", ".join(f"pretrained:{n}" for n in sorted(players)) or "none shipped in this install"
        raise UsageError(f"unknown pretrained player {name!r} (available: {shown})")
    return (directory or DIRECTORY) / players[name]["file"]


def tables_of(name: str, directory: Path | None = None) -> dict[int, str]:
    """``{players: entry}`` of the networks ``pretrained:name`` plays (empty: the entry's own file, one size)."""
    path_of(name, directory)  # a clear error for an unknown name
    return {int(k): v for k, v in sorted(catalogue(directory)[name].get("tables", {}).items())}


class TableSizedAgent(Agent):
    """``pretrained:NAME`` where the name covers several table sizes: at each reset it plays the network trained for
    the table's number of players, loaded on first use (one network per size: the belief features and the
    observation grow with the table, so no single network's inputs fit every size)."""

    def __init__(self, name: str, tables: dict[int, str], seed: int | None = None, **kwargs: Any) -> None:
        self.name = f"pretrained:{name}"
        self.tables = dict(tables)
        self.seed = seed
        self._kwargs = kwargs
        self._agents: dict[int, PolicyAgent] = {}
        self._playing: PolicyAgent | None = None

    def network_for(self, players: int) -> PolicyAgent:
        """The player for a table of ``players``; a clear error naming the sizes it covers."""
        if players not in self.tables:
            sizes = ", ".join(str(n) for n in self.tables)
            networks = ", ".join(f"pretrained:{v}" for v in self.tables.values())
            raise CheckpointError(f"{self.name} plays tables of {sizes} players, not {players} ({networks})")
        if players not in self._agents:
            agent = PolicyAgent(path_of(self.tables[players]), seed=self.seed, **self._kwargs)
            agent.name = self.name
            self._agents[players] = agent
        return self._agents[players]

    def __deepcopy__(self, memo: dict) -> TableSizedAgent:
        """Copies share the networks (read-only here) and get their own notebooks (PolicyAgent.__deepcopy__)."""
        new = copy.copy(self)
        new._agents = {n: copy.deepcopy(a, memo) for n, a in self._agents.items()}
        new._playing = None
        return new

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        self._playing = self.network_for(view.config.players)
        self._playing.reset(view, idx)

    def observe_step(self, view: PlayerView) -> None:
        if self._playing is not None:
            self._playing.observe_step(view)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        if self._playing is None:
            raise RuntimeError(f"{self.name} acts before its first reset (which picks the network for the table)")
        return self._playing.act(view, idx)


def _factory(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    tables = tables_of(spec)
    if tables:
        return TableSizedAgent(spec, tables, seed=seed, **kwargs)
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
    players[name] = {**players.get(name, {}), "file": out.name, "card": card}  # its tables, if any, stay
    write_text_atomic(directory / INDEX, json.dumps(players, indent=1, sort_keys=True) + "\n")
    return out


def set_tables(name: str, tables: dict[int, str], directory: Path | None = None) -> None:
    """Make ``pretrained:name`` play the entry ``tables[players]`` at a table of that many players (include the
    entry's own size, mapped to itself); the index is checked as it will be read before it is written."""
    directory = directory or DIRECTORY
    players = catalogue(directory)
    path_of(name, directory)
    players[name] = {**players[name], "tables": {str(n): v for n, v in sorted(tables.items())}}
    for other, entry in players.items():
        if not all(_table_ok(k, v, other, players) for k, v in entry.get("tables", {}).items()):
            raise UsageError(f"{name}'s tables {tables!r}: each must map 3 to 6 players to {name} itself or to a "
                             "shipped player without tables of its own")  # fmt: skip
    write_text_atomic(directory / INDEX, json.dumps(players, indent=1, sort_keys=True) + "\n")


register()

__all__ = ["DIRECTORY", "TableSizedAgent", "catalogue", "export", "path_of", "register", "set_tables", "tables_of"]
