"""Benchmark the vectorized engine on the workloads users run (the same as ``cluedo bench``).

    .venv/bin/python scripts/bench.py --quick
    .venv/bin/python scripts/bench.py --help       # workloads, grid, --compile, --threads, --soak, --profile

The benchmark lives in :mod:`cluedo_env.cli.bench` so that the installed ``cluedo bench`` runs it too.
"""

import sys

from cluedo_env.cli.bench import main
from cluedo_env.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(lambda argv: main(argv, prog="scripts/bench.py")))
