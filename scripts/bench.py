"""Benchmark random legal play on the vectorized engine: a thin caller of ``cluedo bench``.

    python scripts/bench.py --quick       # the same as: cluedo bench --quick

The code and the full description are in :mod:`cluedo_env.bench` (``cluedo bench --help``).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cluedo_env.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
