"""Training learned Cluedo players: MaskablePPO (sb3-contrib) on the batched single-agent env.

``python -m training.train --config configs/train_vs_random.yaml`` trains; ``training.policy``
loads checkpoints and registers the ``ckpt:`` player prefix (``make_agent("ckpt:runs/x/model.zip")``);
``python -m training.evaluate --players ckpt:runs/x/model.zip random random random`` runs the
tournament evaluator with that prefix available.
"""
