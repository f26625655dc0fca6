"""PettingZoo environments: :func:`env` (wrapped, as PettingZoo's classic games are) and :class:`raw_env`.

See :mod:`cluedo_env.envs.aec` for the conventions (agents, spaces, rewards, illegal moves,
rendering viewpoint) and a usage example.
"""

from cluedo_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
