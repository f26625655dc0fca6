"""Training learned Cluedo players: MaskablePPO (sb3-contrib) on the batched single-agent env.

``python -m training --config configs/train_vs_random.yaml`` trains; ``training.sb3.checkpoints``
loads checkpoints and registers the ``ckpt:`` player prefix (``make_agent("ckpt:runs/x/model.zip")``);
``cluedo evaluate --players ckpt:runs/x/model.zip random random random`` (or ``scripts/evaluate.py``)
evaluates it (:mod:`training.players` registers the ``ckpt:`` / ``rllib:`` loaders a name needs).
"""
