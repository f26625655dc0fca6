"""Cluedo as PettingZoo's classic games are packaged: ``from cluedo_env import cluedo_v0``.

    env = cluedo_v0.env(preset="classic", players=4)   # wrapped (illegal move: the game ends, -1)
    raw = cluedo_v0.raw_env(preset="cards", players=3)  # bare AECEnv (illegal move: IllegalActionError)
    par = cluedo_v0.parallel_env(players=4)              # ParallelEnv: every seat at every step, the same game

The module name carries the version, as ``pettingzoo.classic.chess_v6`` does; the same env is
``pettingzoo.make("aec", "cluedo_env/cluedo_v0")``. Conventions: :mod:`cluedo_env.envs.aec`.
"""

from cluedo_env.envs.aec import env, raw_env
from cluedo_env.envs.parallel import parallel_env

__all__ = ["env", "parallel_env", "raw_env"]
