"""Benchmark the vectorized engine on the workloads users run (the same as ``cluedo bench``).

    .venv/bin/python scripts/bench.py --quick
    .venv/bin/python scripts/bench.py --help       # workloads, grid, --compile, --threads, --soak, --profile
    .venv/bin/python scripts/bench.py --docs --configs classic:4 cards:4 --batch-sizes 1 4096 --workloads full

The benchmark lives in :mod:`cluedo_env.cli.bench` so that the installed ``cluedo bench`` runs it too. ``--docs``
(this script only) puts the run's ``full`` rows into the docs' engine table (``docs/data/benchmarks.json``, the
figures it replaces go) and renders ``docs/benchmarks.md`` again (``scripts/gen_docs.py``).
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's scripts package (gen_docs) beside the installed ones
    sys.path.insert(0, str(ROOT))

from cluedo_env.cli.bench import main  # noqa: E402
from cluedo_env.errors import run_cli  # noqa: E402


def run(argv: list[str]) -> int:
    if "--docs" not in argv:
        return main(argv, prog="scripts/bench.py")
    argv = [a for a in argv if a != "--docs"]
    if "--json" not in argv and "--out" not in argv:
        argv += ["--json", "results/bench.json"]
    flag = "--json" if "--json" in argv else "--out"
    out = Path(argv[argv.index(flag) + 1])
    code = main(argv, prog="scripts/bench.py")
    from scripts.gen_docs import replace_engine_table

    replace_engine_table(json.loads(out.read_text()), "python scripts/bench.py " + " ".join(argv))
    print("docs/data/benchmarks.json and docs/benchmarks.md: the engine table replaced by this run")
    return code


if __name__ == "__main__":
    sys.exit(run_cli(run))
