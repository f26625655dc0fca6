"""Tournaments, round robins and head-to-heads between players (the same as ``cluedo evaluate``).

    python scripts/evaluate.py --players heuristic random random random --games 1000 --out results/eval
    python scripts/evaluate.py --help       # tournaments, --round-robin, --head-to-head, --record

The command lives in :mod:`cluedo_env.cli.evaluate`, the tournament library in :mod:`cluedo_env.agents.play.tournament`.
"""

import sys

from cluedo_env.cli.evaluate import main
from cluedo_env.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(lambda argv: main(argv, prog="scripts/evaluate.py")))
