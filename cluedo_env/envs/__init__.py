"""PettingZoo environments: :func:`env` (wrapped, as PettingZoo's classic games are), :class:`raw_env`, and
:func:`parallel_env` (every seat at every step, the same game; :mod:`cluedo_env.envs.parallel`).

See :mod:`cluedo_env.envs.aec` for the conventions (agents, spaces, rewards, illegal moves,
rendering viewpoint) and a usage example.
"""

from cluedo_env.envs.aec import env, raw_env
from cluedo_env.envs.parallel import parallel_env

__all__ = ["env", "parallel_env", "raw_env"]
