"""What the compile helper (:mod:`cluedo_env.engine.compile_ahead`) saves on an empty numba cache.

    python scripts/bench_cold_start.py                 # each start-up of cluedo bench --compile, with and without
    python scripts/bench_cold_start.py --repeats 3
    python scripts/bench_cold_start.py --docs          # also the "compile helper" table of docs/benchmarks.md

Each start-up of ``cluedo bench --compile`` (``env()`` with a reset and 100 steps; four deducers' first game; ``cluedo
warmup``) runs in a fresh process on an empty numba cache of its own, once with the helper (the default) and once
with ``CLUEDO_COMPILE_AHEAD=0``, alternating, so that both see the same minutes of a shared machine. Wall seconds and,
in brackets, the CPU seconds of the process and its helper; the median over the repeats.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's scripts package (gen_docs) beside the installed ones
    sys.path.insert(0, str(ROOT))

from cluedo_env.cli.bench import _COMPILE_STEPS  # noqa: E402
from cluedo_env.engine.compile_ahead import ENV_SWITCH  # noqa: E402


def cold_start(code: str, ahead: bool) -> tuple[float, float]:
    """(wall, CPU) seconds of ``code`` in a fresh process on an empty numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, ENV_SWITCH: "1" if ahead else "0"}
        timed = f"import time\nt=time.perf_counter()\n{code}\nprint(time.perf_counter()-t)"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-c", timed], env=env, capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(done.stdout.strip().splitlines()[-1]), cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--steps", nargs="+", choices=list(_COMPILE_STEPS), default=list(_COMPILE_STEPS))
    ap.add_argument("--docs", action="store_true", help="write the table into docs/data/benchmarks.json and the page")
    args = ap.parse_args(argv)
    command = "python scripts/bench_cold_start.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"# load average before: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for name in args.steps:
        code, what = _COMPILE_STEPS[name]
        runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for repeat in range(args.repeats):
            for ahead in ((True, False) if repeat % 2 == 0 else (False, True)):
                runs[ahead].append(cold_start(code, ahead))
        cells = []
        for ahead in (True, False):
            wall = statistics.median(w for w, _ in runs[ahead])
            cpu = statistics.median(c for _, c in runs[ahead])
            cells.append(f"{wall:.1f} s (CPU {cpu:.1f} s)")
        print(f"{what}: with the helper {cells[0]}, without {cells[1]}", flush=True)
        rows.append([what, *cells])
    if args.docs:
        write_docs(rows, command.replace(" --docs", "").strip())
    return 0


COLUMNS = ["on an empty numba cache", "with the helper (the default)", "without (`CLUEDO_COMPILE_AHEAD=0`)"]
WHAT = ("What the compile helper (`cluedo_env.engine.compile_ahead`) saves a newcomer: each start-up in a fresh "
        "process on an empty numba cache, with the helper and without, alternating; wall seconds (the median), and the "
        "CPU seconds of the process and its helper. The helper compiles the step's move search beside the engine's "
        "other kernels, and a deducer's decisions beside its notebook's.")


def write_docs(rows: list[list[Any]], command: str) -> None:
    from cluedo_env.cli.bench import machine_info
    from scripts.gen_docs import _machine, replace_table

    info = machine_info()
    replace_table("compile_helper", {"title": "Compile helper", "what": WHAT, "columns": COLUMNS, "rows": rows,
                                     "command": command, "machine": _machine(info, "2"), "date": info["date"][:10]},
                  after="thread_designs")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
