"""The Stable-Baselines3 backend: MaskablePPO on the batched learner VecEnv.

:mod:`~cluedo_env.training.sb3.train` (the training loop, ``python -m cluedo_env.training``),
:mod:`~cluedo_env.training.sb3.config` (its
YAML config), :mod:`~cluedo_env.training.sb3.resume` (``--resume``), :mod:`~cluedo_env.training.sb3.vec_env` (the SB3
VecEnv),
:mod:`~cluedo_env.training.sb3.lean_policy` and :mod:`~cluedo_env.training.sb3.factored_policy` (the policies),
:mod:`~cluedo_env.training.sb3.checkpoints` (loading checkpoints, ``ckpt:`` players). Importing this package imports
nothing; its modules need the ``train`` extra (torch, sb3-contrib).
"""
