"""The Ray RLlib backend: PPO on the batched learner env (vs_bots) or multi-agent self-play.

:mod:`~cluedo_env.training.rllib.train` (the training loop, ``python -m cluedo_env.training --backend rllib``),
:mod:`~cluedo_env.training.rllib.config` (its YAML config), :mod:`~cluedo_env.training.rllib.algorithm` (the
``PPOConfig``),
:mod:`~cluedo_env.training.rllib.bench` (sampling rates), :mod:`~cluedo_env.training.rllib.module` (the masked module,
``rllib:``
players), :mod:`~cluedo_env.training.rllib.league` (frozen snapshots), :mod:`~cluedo_env.training.rllib.vector_env`,
:mod:`~cluedo_env.training.rllib.bulk_runner` and :mod:`~cluedo_env.training.rllib.selfplay_runner` (sampling).
Importing this
package imports nothing; its modules need the ``rllib`` extra (ray).
"""
