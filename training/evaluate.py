"""The tournament evaluator with trained checkpoints available as players (``ckpt:path``).

    python -m training.evaluate --players ckpt:runs/vs_random/model.zip random random random --games 1000

Same options and outputs as ``scripts/evaluate.py``; this only registers the ``ckpt:`` prefix
(:mod:`training.policy`) first, since the agents package may not import the training code.
"""

from __future__ import annotations

import sys

import training.policy  # noqa: F401 - registers the ckpt: prefix
from cluedo_env.errors import run_cli
from training.train import _evaluate_module


def main(argv: list[str] | None = None, prog: str | None = None) -> dict:
    return _evaluate_module().main(argv, prog=prog)


if __name__ == "__main__":
    sys.exit(run_cli(main))
