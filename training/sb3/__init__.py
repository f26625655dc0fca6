"""The Stable-Baselines3 backend: MaskablePPO on the batched learner VecEnv.

:mod:`~training.sb3.train` (the training loop, ``python -m training``), :mod:`~training.sb3.config` (its
YAML config), :mod:`~training.sb3.resume` (``--resume``), :mod:`~training.sb3.vec_env` (the SB3 VecEnv),
:mod:`~training.sb3.lean_policy` and :mod:`~training.sb3.factored_policy` (the policies),
:mod:`~training.sb3.checkpoints` (loading checkpoints, ``ckpt:`` players). Importing this package imports
nothing; its modules need the ``train`` extra (torch, sb3-contrib).
"""
