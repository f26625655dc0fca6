"""cluedo_env: a faithful, fast, vectorized Cluedo environment for reinforcement learning.

PettingZoo: ``cluedo_env.env(**config)`` (wrapped as PettingZoo's classic games are) and
``cluedo_env.raw_env``; importing this package registers ``"cluedo/cluedo_v0"`` so that
``pettingzoo.make("aec", "cluedo/cluedo_v0", **config)`` works (see :mod:`cluedo_env.envs.aec`).
"""

from __future__ import annotations

from typing import Any

PETTINGZOO_ID = "cluedo/cluedo_v0"


def __getattr__(name: str) -> Any:  # PEP 562: the env module (gymnasium, spaces) loads on first use
    if name in ("env", "raw_env"):
        from cluedo_env import envs

        return getattr(envs, name)
    raise AttributeError(f"module 'cluedo_env' has no attribute {name!r}")


def _register_pettingzoo() -> None:
    try:
        import pettingzoo
    except ImportError:  # pettingzoo is a dependency; without it only the PettingZoo env is missing
        return
    if not any(spec.namespace == "cluedo" and spec.name == "cluedo" for spec in pettingzoo.aec_registry.values()):
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="cluedo_env.envs.aec:env")


_register_pettingzoo()
