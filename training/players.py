"""Trained players by name: ``ckpt:PATH`` (MaskablePPO), ``rllib:PATH`` (RLlib), ``pretrained:NAME``.

Their loaders need torch or ray, so :mod:`cluedo_env.agents.play.registry` does not import them; each registers its
prefix when its module is imported (:mod:`cluedo_env.training.sb3.checkpoints`,
:mod:`cluedo_env.training.rllib.module`). The
command line, the scripts and the trainers name players through :func:`check_player_names`, which
imports the loaders that the names need, then checks every name before any game starts.
"""

from __future__ import annotations

import importlib

from cluedo_env.agents.play import registry

from cluedo_env.errors import UsageError

# prefix -> (module that registers it, the pip extra that installs what it needs)
LOADERS: dict[str, tuple[str, str]] = {
    "ckpt": ("cluedo_env.training.sb3.checkpoints", "train"),
    "rllib": ("cluedo_env.training.rllib.module", "rllib"),
    "pretrained": ("cluedo_env.training.pretrained", "train"),
}


def register_player_prefixes(names: list[str]) -> None:
    """Import the loaders behind the ``ckpt:`` / ``rllib:`` players named in ``names`` (torch / ray only then)."""
    for prefix, (module, extra) in LOADERS.items():
        if any(isinstance(n, str) and n.startswith(prefix + ":") for n in names):
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise UsageError(
                    f"{prefix}: players need {module}, which cannot be imported ({exc}) "
                    f"(install the extra: pip install -e '.[{extra}]')"
                ) from exc


def check_player_names(names: list[str], allowed_extra: tuple[str, ...] = ()) -> None:
    """Register the loaders ``names`` need, then check every name
    (:func:`cluedo_env.agents.play.registry.check_player_names`)."""
    register_player_prefixes(names)
    registry.check_player_names(names, allowed_extra)


__all__ = ["LOADERS", "check_player_names", "register_player_prefixes"]
