"""Threads under load: one engine on one thread and on two, quiet and with other busy processes on the machine.

    python scripts/bench_under_load.py                  # batch 4096, 8192, 16384; quiet, 1 busy, 2 niced busy
    python scripts/bench_under_load.py --docs           # also the "under load" table of docs/benchmarks.md

Running several experiments side by side is how an RL environment is used, so the engine's default thread count
must not lose to one thread when the machine is shared. For each condition (``quiet``: nothing of ours beside the
engine; ``busy``: one other process spinning on a core; ``niced``: two such processes at ``nice 19``) and each
batch, the workload is the full-length game loop with masks (``scripts/bench.py``'s ``full`` workload), with one
thread and two threads alternating in each repeat, so a drifting machine falls on both alike; the speed-up is the
median of the repeats' ratios. The default (``VectorEngine()`` without ``threads``) is one thread, so its row is the
one-thread column; the two-thread column is what ``threads=2`` (or ``CLUEDO_NUM_THREADS=2``) gives.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's scripts package (gen_docs) beside the installed ones
    sys.path.insert(0, str(ROOT))

from cluedo_env.cli.bench import machine_info, run_loop  # noqa: E402
from cluedo_env.engine.vector_engine import VectorEngine  # noqa: E402
from cluedo_env.rules.config import RulesConfig  # noqa: E402

CONDITIONS = {"quiet": (0, 0), "busy": (1, 0), "niced": (2, 19)}  # name -> (busy processes, their nice level)
_SPIN = "import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"


@contextmanager
def busy_processes(count: int, nice: int, seconds: float):
    """``count`` processes spinning on a core each (at ``nice``) for at most ``seconds``, ended on leaving."""
    procs = [subprocess.Popen([sys.executable, "-c", _SPIN.format(seconds=seconds)],
                              preexec_fn=(lambda: os.nice(nice)) if nice else None) for _ in range(count)]  # fmt: skip
    try:
        time.sleep(0.2 if procs else 0)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def measure(batch: int, condition: str, repeats: int, seconds: float, seed: int) -> dict[str, Any]:
    """Agent-steps/s of one and two threads (medians) and the median ratio, under ``condition``."""
    cfg = RulesConfig.from_preset("classic", players=4)
    engines = {k: VectorEngine(cfg, batch_size=batch, autoreset=True, threads=k) for k in (1, 2)}
    for eng in engines.values():
        eng.reset(seed=seed)
        run_loop(eng, "full", 0.3, None, min_steps=20)
    rates: dict[int, list[float]] = {1: [], 2: []}
    count, nice = CONDITIONS[condition]
    with busy_processes(count, nice, seconds=repeats * seconds * 4 + 30):
        for _ in range(repeats):
            for k, eng in engines.items():
                rates[k].append(run_loop(eng, "full", seconds, None)["rate"])
    for eng in engines.values():
        eng.close()
    ratios = [two / one for one, two in zip(rates[1], rates[2], strict=True)]
    return {"batch_size": batch, "condition": condition, "one_thread": statistics.median(rates[1]),
            "two_threads": statistics.median(rates[2]), "speedup": statistics.median(ratios),
            "speedup_range": [min(ratios), max(ratios)]}  # fmt: skip


def table(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [[r["condition"], f"{r['batch_size']:,}", f"{r['one_thread'] / 1e6:.2f}M", f"{r['two_threads'] / 1e6:.2f}M",
             f"x{r['speedup']:.2f} ({r['speedup_range'][0]:.2f}-{r['speedup_range'][1]:.2f})"]
            for r in rows]  # fmt: skip


COLUMNS = ["condition", "batch", "1 thread (the default), agent-steps/s", "threads=2", "2 threads / 1 (range)"]
WHAT = ("One engine, classic 4 players, full-length games with masks, on one thread (the default) and on two "
        "(`threads=2`), alternating in each repeat: quiet, with one other busy process on the 2-core machine, and "
        "with two busy processes at `nice 19`. The default stays on one thread because the second one loses its "
        "gain, or more, as soon as another process wants a core.")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[4096, 8192, 16384])
    ap.add_argument("--conditions", nargs="+", choices=list(CONDITIONS), default=list(CONDITIONS))
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=0.5, help="seconds per timed loop")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--docs", action="store_true", help="write the table into docs/data/benchmarks.json and the page")
    args = ap.parse_args(argv)
    command = "python scripts/bench_under_load.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"# {command.strip()}  (load average before: {os.getloadavg()[0]:.2f})", flush=True)
    rows = []
    for condition in args.conditions:
        for batch in args.batch_sizes:
            rows.append(measure(batch, condition, args.repeats, args.seconds, args.seed))
            print("  ".join(table(rows[-1:])[0]), flush=True)
    if args.docs:
        from scripts.gen_docs import _machine, replace_table

        info = machine_info()
        replace_table("under_load", {"title": "Vectorized engine under load", "what": WHAT, "columns": COLUMNS,
                                     "rows": table(rows), "command": command.replace(" --docs", "").strip(),
                                     "machine": _machine(info, "2"), "date": info["date"][:10]},
                      after="threads")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
