"""Training learned Cluedo players: a shared core and two backends, each in its own subpackage.

The core, at the top of this package, is what both backends use: the learner env
(:mod:`cluedo_env.training.learner_options` and :mod:`cluedo_env.training.learner_core`), its Gymnasium front ends
(:mod:`cluedo_env.training.single_agent`), the trained players by name (:mod:`cluedo_env.training.players`,
:mod:`cluedo_env.training.pretrained`),
the training precisions (:mod:`cluedo_env.training.precision`) and the backend dispatcher
(:mod:`cluedo_env.training.dispatch`).
:mod:`cluedo_env.training.sb3` trains with MaskablePPO (sb3-contrib), :mod:`cluedo_env.training.rllib` with Ray RLlib;
they never
import each other.

``python -m cluedo_env.training --config configs/train_vs_random.yaml`` trains (``--backend rllib`` for an RLlib
config);
``cluedo evaluate --players ckpt:runs/x/model.zip random random random`` (or ``scripts/evaluate.py``)
evaluates the checkpoint (:mod:`cluedo_env.training.players` registers the ``ckpt:`` / ``rllib:`` loaders a name needs).
"""
