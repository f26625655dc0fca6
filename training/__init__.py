"""Training learned Cluedo players: a shared core and two backends, each in its own subpackage.

The core, at the top of this package, is what both backends use: the learner env
(:mod:`training.learner_options` and :mod:`training.learner_core`), its Gymnasium front ends
(:mod:`training.single_agent`), the trained players by name (:mod:`training.players`, :mod:`training.pretrained`),
the training precisions (:mod:`training.precision`) and the backend dispatcher (:mod:`training.dispatch`).
:mod:`training.sb3` trains with MaskablePPO (sb3-contrib), :mod:`training.rllib` with Ray RLlib; they never
import each other.

``python -m training --config configs/train_vs_random.yaml`` trains (``--backend rllib`` for an RLlib config);
``cluedo evaluate --players ckpt:runs/x/model.zip random random random`` (or ``scripts/evaluate.py``)
evaluates the checkpoint (:mod:`training.players` registers the ``ckpt:`` / ``rllib:`` loaders a name needs).
"""
