"""cluedo_env: a faithful, fast, vectorized Cluedo environment for reinforcement learning.

Importing this package registers the environments under one namespace, ``cluedo_env``, version
``v0``, each named as its library names games:

* Gymnasium: ``gymnasium.make("cluedo_env/Cluedo-v0", **kwargs)`` (one learner seat, opponents in
  the others; :mod:`cluedo_env.training.single_agent`) and ``gymnasium.make_vec("cluedo_env/Cluedo-v0",
  num_envs=N)`` (its batched VectorEnv). Without a prior import, ``gymnasium.make("cluedo_env:cluedo_env/Cluedo-v0")``
  imports the package itself (Gymnasium 1.x loads no plugin entry points).
* PettingZoo: ``pettingzoo.make("aec", "cluedo_env/cluedo_v0", **config)``, or as PettingZoo's
  classic games are imported, ``from cluedo_env import cluedo_v0; cluedo_v0.env(**config)``
  (:mod:`cluedo_env.envs.aec`). ``cluedo_env.env`` and ``cluedo_env.raw_env`` are the same
  functions. The same game as a ``ParallelEnv`` (every seat at every step; :mod:`cluedo_env.envs.parallel`):
  ``cluedo_env.parallel_env(**config)``, ``pettingzoo.make("parallel", "cluedo_env/cluedo_v0", **config)``
  (PettingZoo 1.27 and later; older releases have no registry) or ``cluedo_v0.parallel_env(**config)``.

Registration only records entry-point strings: no env module (numpy engine, spaces) is imported
until an env is made.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.2.0"

GYMNASIUM_ID = "cluedo_env/Cluedo-v0"
PETTINGZOO_ID = "cluedo_env/cluedo_v0"

_GYMNASIUM_ENTRY = "cluedo_env.training.single_agent:CluedoSingleAgentEnv"
_GYMNASIUM_VECTOR_ENTRY = "cluedo_env.training.single_agent:CluedoVectorEnv"
_PETTINGZOO_ENTRY = "cluedo_env.envs.aec:env"
_PETTINGZOO_PARALLEL_ENTRY = "cluedo_env.envs.parallel:parallel_env"


# The names users reach for, each loaded from its module on first use (PEP 562), so that
# ``import cluedo_env`` stays cheap: registration needs no engine, no numba, no spaces.
_LAZY = {
    "env": "cluedo_env.envs",
    "raw_env": "cluedo_env.envs",
    "parallel_env": "cluedo_env.envs",
    "RulesConfig": "cluedo_env.rules.config",
    "make_config": "cluedo_env.rules.config",
    "VectorEngine": "cluedo_env.engine.vector_engine",
    "Game": "cluedo_env.engine.reference",
    "PlayerView": "cluedo_env.engine.views",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'cluedo_env' has no attribute {name!r}")


def register_gymnasium() -> None:
    """Register ``"cluedo_env/Cluedo-v0"`` (env and vector entry points) with Gymnasium; idempotent."""
    try:
        import gymnasium
    except ImportError:  # gymnasium is a dependency; without it only the Gymnasium envs are missing
        return
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(GYMNASIUM_ID, entry_point=_GYMNASIUM_ENTRY, vector_entry_point=_GYMNASIUM_VECTOR_ENTRY)


def register_pettingzoo() -> None:
    """Register ``"cluedo_env/cluedo_v0"`` with PettingZoo (AEC and parallel); idempotent.

    PettingZoo has a registry (``pettingzoo.make``) from 1.27 on; with an older release there is nothing to
    register in, and the envs are built by their functions (``cluedo_env.env``, ``cluedo_env.parallel_env``).
    """
    try:
        import pettingzoo
    except ImportError:  # pettingzoo is a dependency; without it only the PettingZoo env is missing
        return
    namespace, name = PETTINGZOO_ID.split("/")[0], PETTINGZOO_ID.split("/")[1].rsplit("_v", 1)[0]
    for kind, entry in (("aec", _PETTINGZOO_ENTRY), ("parallel", _PETTINGZOO_PARALLEL_ENTRY)):
        registry = getattr(pettingzoo, f"{kind}_registry", None)
        if registry is None or not hasattr(pettingzoo, "register"):
            return
        if (namespace, name) not in {(spec.namespace, spec.name) for spec in registry.values()}:
            pettingzoo.register(kind, PETTINGZOO_ID, entry_point=entry)


register_gymnasium()
register_pettingzoo()

__all__ = [
    "GYMNASIUM_ID",
    "Game",
    "PlayerView",
    "RulesConfig",
    "VectorEngine",
    "make_config",
    "PETTINGZOO_ID",
    "__version__",
    "env",
    "parallel_env",
    "raw_env",
    "register_gymnasium",
    "register_pettingzoo",
]
