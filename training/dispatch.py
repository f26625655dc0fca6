"""The one place that picks the training backend: ``python -m cluedo_env.training`` and ``cluedo train``.

    python -m cluedo_env.training --config configs/train_vs_random.yaml                      # MaskablePPO (sb3)
    python -m cluedo_env.training --backend rllib --config configs/rllib_vs_random.yaml      # Ray RLlib

``--backend sb3`` (the default) runs :mod:`cluedo_env.training.sb3.train`, ``--backend rllib`` runs
:mod:`cluedo_env.training.rllib.train`; every other argument goes to that backend's command line (``--help`` shows
it). The backends never import each other: each one's parser takes ``--backend`` only so that its help
lists the choice (:func:`add_backend_argument`), and this module imports the chosen one by name.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from cluedo_env.errors import UsageError

# backend -> (the module whose ``main`` trains, the pip extra that installs what it needs)
BACKENDS: dict[str, tuple[str, str]] = {
    "sb3": ("cluedo_env.training.sb3.train", "train"),
    "rllib": ("cluedo_env.training.rllib.train", "rllib"),
}
DEFAULT_BACKEND = "sb3"


def backend_of(argv: list[str]) -> str:
    """The ``--backend`` an argument list names (the last one given), else :data:`DEFAULT_BACKEND`."""
    backend = DEFAULT_BACKEND
    for i, arg in enumerate(argv):
        if arg == "--backend" and i + 1 < len(argv):
            backend = argv[i + 1]
        elif arg.startswith("--backend="):
            backend = arg.split("=", 1)[1]
    if backend not in BACKENDS:
        raise UsageError(f"--backend {backend!r} is not allowed (choose from {', '.join(BACKENDS)})")
    return backend


def add_backend_argument(parser: argparse.ArgumentParser, backend: str) -> None:
    """``--backend`` in a backend's parser: listed in its help, read by :func:`main` before the parser runs.

    Run straight (``python -m cluedo_env.training.sb3.train``), a backend refuses another one's name
    (:func:`check_backend`) rather than importing the other side.
    """
    others = ", ".join(f"{b}: cluedo train --backend {b} --help" for b in BACKENDS if b != backend)
    parser.add_argument("--backend", choices=list(BACKENDS), default=backend,
                        help=f"the training backend ({backend}: this one; {others})")  # fmt: skip


def check_backend(given: str, backend: str) -> None:
    """Refuse ``--backend given`` in the parser of ``backend`` (only :func:`main` switches backends)."""
    if given != backend:
        raise UsageError(f"--backend {given}: this command trains with {backend}; run python -m cluedo_env.training "
                         f"--backend {given} (or cluedo train --backend {given})")  # fmt: skip


def main(argv: list[str] | None = None, prog: str | None = None) -> Any:
    """Run the backend ``argv`` names with the whole of ``argv``; returns what its ``main`` returns."""
    argv = list(argv) if argv is not None else sys.argv[1:]
    backend = backend_of(argv)
    module, extra = BACKENDS[backend]
    try:  # by name: a backend's heavy dependencies (torch and sb3, or ray) load only when it is chosen
        trainer = importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(f"--backend {backend} needs {module} ({exc}) "
                         f"(install it: pip install -e '.[{extra}]')") from exc
    return trainer.main(argv, prog=prog)


__all__ = ["BACKENDS", "DEFAULT_BACKEND", "add_backend_argument", "backend_of", "check_backend", "main"]
