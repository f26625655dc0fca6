"""The Ray RLlib backend: PPO on the batched learner env (vs_bots) or multi-agent self-play.

:mod:`~training.rllib.train` (the training loop, ``python -m training --backend rllib``),
:mod:`~training.rllib.config` (its YAML config), :mod:`~training.rllib.algorithm` (the ``PPOConfig``),
:mod:`~training.rllib.bench` (sampling rates), :mod:`~training.rllib.module` (the masked module, ``rllib:``
players), :mod:`~training.rllib.league` (frozen snapshots), :mod:`~training.rllib.vector_env`,
:mod:`~training.rllib.bulk_runner` and :mod:`~training.rllib.selfplay_runner` (sampling). Importing this
package imports nothing; its modules need the ``rllib`` extra (ray).
"""
