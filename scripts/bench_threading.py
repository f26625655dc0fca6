"""Three ways to share one engine's batch among threads, measured side by side.

    python scripts/bench_threading.py                 # batch 1,024, 4,096, 16,384; quiet and with a busy process
    python scripts/bench_threading.py --docs          # also the "thread designs" table of docs/benchmarks.md

The designs, each playing the same games (``--check`` asserts it) on two threads:

* ``worker pool``: the engine's own (``VectorEngine(threads=2)``, :mod:`cluedo_env.engine.thread_host`): workers
  that stay in a compiled loop and take blocks of games from a job record, two hand-overs a step (the sampler's and
  the step's).
* ``prange``: numba's ``parallel=True`` with ``prange`` over blocks of games, one parallel region for the sampler and
  two for the step (its all-or-nothing check, then its actions), on each threading layer numba has here
  (``workqueue``; ``omp``; ``tbb`` when Intel TBB is installed: ``--tbb-lib`` names its folder). A parallel region's
  arguments cannot be tuples (numba issue #5282), so each region takes the engine's typed tuples (``State``,
  ``Rules``, ``Tables`` ...) unpacked into their arrays and builds them again in the loop body
  (:func:`prange_kernels` writes that code).
* ``sub-engines``: two engines of half the batch each, one per thread, each stepped by one compiled call that samples,
  steps (and observes); the calling thread steps one, a ``ThreadPoolExecutor`` thread the other.

Each layer runs in a worker process of its own (numba fixes a process's layer at its first parallel region); the
workers take their turns from this process, so every design is timed in the same minutes, alternating, repeat after
repeat. The workload is ``scripts/bench.py``'s ``full`` (full-length games, masks), with and without writing the int8
observation each step; the ratio to ``worker pool`` is the median of the repeats' ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's scripts package (gen_docs) beside the installed ones
    sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from cluedo_env.engine import kernels, samplers  # noqa: E402
from cluedo_env.engine.compile_options import KERNEL  # noqa: E402
from cluedo_env.engine.entry_points import compiled_entry  # noqa: E402
from cluedo_env.engine.movement import MoveTables  # noqa: E402
from cluedo_env.engine.observation import Offsets, encode  # noqa: E402
from cluedo_env.engine.state import Rules, State, Tables  # noqa: E402
from cluedo_env.engine.vector_engine import FULL_GAME_KEEP_ACCUSATION, VectorEngine  # noqa: E402
from cluedo_env.rules.config import RulesConfig  # noqa: E402

LAYERS = ("workqueue", "omp", "tbb")
DESIGNS = ("one thread", "worker pool", "sub-engines", *(f"prange/{layer}" for layer in LAYERS))
BLOCKS_PER_THREAD = 2  # prange's blocks: the best of 1, 2 and 8 per thread on omp and tbb at batch 1,024-16,384
KEEP = FULL_GAME_KEEP_ACCUSATION


# ----------------------------------------------------------------------------------------------------- prange
def _fields(var: str, cls: type) -> str:
    return "".join(f"    {var}_{f} = {var}.{f}\n" for f in cls._fields)


def _rebuilt(var: str, cls: type, rows: bool = False, per_thread: tuple[str, ...] = ()) -> str:
    """``cls(...)`` of the unpacked fields of ``var``: each sliced to the block's games (``rows``), or the thread's
    own row for the fields in ``per_thread``."""
    parts = [f"{var}_{f}[lo:lo + m]" if rows else f"{var}_{f}[t]" if f in per_thread else f"{var}_{f}"
             for f in cls._fields]  # fmt: skip
    return f"{cls.__name__}({', '.join(parts)})"


def prange_kernels() -> dict[str, Any]:
    """The three parallel regions' kernels (sampler, step, observation), compiled on first use."""
    s, r, tb, mv, w, o = "s", "rules", "tables", "moves", "work", "o"
    state, moves, work = _rebuilt(s, State, rows=True), _rebuilt(mv, MoveTables, per_thread=("stack",)), _rebuilt(
        w, kernels.Scratch, per_thread=kernels.Scratch._fields)  # fmt: skip
    source = f"""
def sample_full(s, tables, keep, out, blocks):
{_fields(s, State)}{_fields(tb, Tables)}
    for i in prange(blocks.shape[0] - 1):
        lo = blocks[i]
        m = blocks[i + 1] - lo
        samplers.sample_full_game({state}, {_rebuilt(tb, Tables)}, keep, out[lo:lo + m])


def step(s, rules, tables, moves, work, blocks, actions, autoreset, rewards, terminated, truncated, firsts, counts):
{_fields(s, State)}{_fields(r, Rules)}{_fields(tb, Tables)}{_fields(mv, MoveTables)}{_fields(w, kernels.Scratch)}
    everyone = actions[:0] == 0
    for i in prange(blocks.shape[0] - 1):
        lo = blocks[i]
        m = blocks[i + 1] - lo
        first, count = kernels.first_illegal({state}, actions[lo:lo + m], everyone)
        firsts[i] = lo + first
        counts[i] = count
    if counts.sum():
        return firsts[np.flatnonzero(counts)[0]], counts.sum()
    for i in prange(blocks.shape[0] - 1):
        t = numba.get_thread_id()
        lo = blocks[i]
        m = blocks[i + 1] - lo
        kernels.apply_actions({state}, {_rebuilt(r, Rules)}, {_rebuilt(tb, Tables)}, {moves}, {work},
                              actions[lo:lo + m], everyone, autoreset, rewards[lo:lo + m], terminated[lo:lo + m],
                              truncated[lo:lo + m])
    return -1, 0


def observe(s, rules, o, games, seats, out, blocks):
{_fields(s, State)}{_fields(r, Rules)}{_fields(o, Offsets)}
    for i in prange(blocks.shape[0] - 1):
        lo = blocks[i]
        m = blocks[i + 1] - lo
        encode({state}, {_rebuilt(r, Rules)}, {_rebuilt(o, Offsets)}, games[:m], seats[lo:lo + m], out[lo:lo + m],
               False)
"""
    scope = {"prange": prange, "numba": numba, "np": np, "kernels": kernels, "samplers": samplers, "encode": encode,
             "State": State, "Rules": Rules, "Tables": Tables, "MoveTables": MoveTables, "Scratch": kernels.Scratch,
             "Offsets": Offsets}  # fmt: skip
    exec(compile(source, "<bench_threading.prange_kernels>", "exec"), scope)  # our own source, written above
    options = {"parallel": True, "nogil": True, "error_model": "numpy"}
    return {name: njit(**options)(scope[name]) for name in ("sample_full", "step", "observe")}


class PrangeLoop:
    """The ``full`` workload on one engine's arrays, stepped by the parallel regions of :func:`prange_kernels`."""

    kernels: dict[str, Any] | None = None

    def __init__(self, cfg: RulesConfig, batch: int, threads: int, seed: int) -> None:
        if PrangeLoop.kernels is None:
            PrangeLoop.kernels = prange_kernels()
        numba.set_num_threads(threads)
        self.eng = e = VectorEngine(cfg, batch_size=batch, autoreset=True, threads=1)
        e.reset(seed=seed)
        self.blocks = np.linspace(0, batch, BLOCKS_PER_THREAD * threads + 1).astype(np.int64)
        self.moves = e.moves._replace(stack=np.zeros((threads, *e.moves.stack.shape), e.moves.stack.dtype))
        self.work = kernels.Scratch(*(np.zeros((threads, *a.shape), a.dtype) for a in e.work))
        self.actions = np.zeros(batch, np.int64)
        self.out = (np.zeros((batch, cfg.players), np.float32), np.zeros(batch, bool), np.zeros(batch, bool))
        self.firsts, self.counts = np.zeros((2, len(self.blocks) - 1), np.int64)
        self.games, self.seats = np.arange(batch, dtype=np.int64), np.full(batch, -1, np.int64)
        self.obs = np.zeros((batch, e.observation_size), np.int8)

    def __call__(self, observe: bool) -> None:
        e, k = self.eng, self.kernels
        k["sample_full"](e.state, e.tables, KEEP, self.actions, self.blocks)
        illegal = k["step"](e.state, e.rules, e.tables, self.moves, self.work, self.blocks, self.actions, True,
                            *self.out, self.firsts, self.counts)  # fmt: skip
        assert illegal == (-1, 0), illegal
        if observe:
            k["observe"](e.state, e.rules, e.obs_offsets, self.games, self.seats, self.obs, self.blocks)


# ------------------------------------------------------------------------------------------------ sub-engines
@njit(**KERNEL)
def _fused_step(s, rules, tables, moves, work, keep, actions, active, rewards, terminated, truncated, o, games, seats,
                obs, observe) -> None:  # fmt: skip
    """One sub-engine's step in one call: the ``full`` player's actions, the step, the observation (``observe``)."""
    samplers.sample_full_game(s, tables, keep, actions)
    kernels.step(s, rules, tables, moves, work, actions, active, True, rewards, terminated, truncated)
    if observe:
        encode(s, rules, o, games, seats, obs, False)


class SubEngines:
    """The ``full`` workload on ``threads`` engines of a part of the batch each, one call per engine and step."""

    def __init__(self, cfg: RulesConfig, batch: int, threads: int, seed: int) -> None:
        cuts = np.linspace(0, batch, threads + 1).astype(int)
        self.engines = [VectorEngine(cfg, batch_size=int(hi - lo), autoreset=True, threads=1)
                        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]  # fmt: skip
        self.calls = []
        for e in self.engines:
            e.reset(seed=seed)  # (other games than one engine of the whole batch: a game's streams hang on its slot)
            n = e.batch_size
            args = (e.state, e.rules, e.tables, e.moves, e.work, KEEP, np.zeros(n, np.int64), np.zeros(0, bool),
                    np.zeros((n, cfg.players), np.float32), np.zeros(n, bool), np.zeros(n, bool), e.obs_offsets,
                    np.arange(n, dtype=np.int64), np.full(n, -1, np.int64), np.zeros((n, e.observation_size), np.int8))
            entry = compiled_entry(_fused_step, *args, True)
            self.calls.append((entry, args))
        self.pool = ThreadPoolExecutor(threads - 1)

    def __call__(self, observe: bool) -> None:
        (first, first_args), *rest = self.calls
        futures = [self.pool.submit(entry, *args, observe) for entry, args in rest]
        first(*first_args, observe)
        for f in futures:
            f.result()


class EngineLoop:
    """The ``full`` workload on one engine (``threads`` 1: one thread; 2: the worker pool)."""

    def __init__(self, cfg: RulesConfig, batch: int, threads: int, seed: int) -> None:
        self.eng = VectorEngine(cfg, batch_size=batch, autoreset=True, threads=threads)
        self.eng.reset(seed=seed)
        self.obs = np.zeros((batch, self.eng.observation_size), np.int8)

    def __call__(self, observe: bool) -> None:
        self.eng.step(self.eng.sample_full_game_actions(KEEP))
        if observe:
            self.eng.observe(out=self.obs)


# --------------------------------------------------------------------------------------------------- workers
def _loop(design: str, batch: int, seed: int) -> Any:
    cfg = RulesConfig.from_preset("classic", players=4)
    if design == "one thread":
        return EngineLoop(cfg, batch, 1, seed)
    if design == "worker pool":
        return EngineLoop(cfg, batch, 2, seed)
    if design == "sub-engines":
        return SubEngines(cfg, batch, 2, seed)
    return PrangeLoop(cfg, batch, 2, seed)


def worker() -> None:
    """Answer the timing requests (one JSON object a line) that :func:`main` sends on stdin."""
    loops: dict[tuple[str, int], Any] = {}
    for line in sys.stdin:
        ask = json.loads(line)
        key = (ask["design"], ask["batch"])
        if key not in loops:
            loops[key] = _loop(*key, ask["seed"])
            for _ in range(20):
                loops[key](True)
        loop = loops[key]
        steps, t0 = 0, time.perf_counter()
        while (now := time.perf_counter()) < t0 + ask["seconds"] or steps < 5:
            loop(ask["observe"])
            steps += 1
        print(json.dumps({"rate": ask["batch"] * steps / (now - t0), "layer": _layer()}), flush=True)


def _layer() -> str | None:
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel region has run in this process
        return None


def check_same_play(batch: int = 512, steps: int = 300) -> None:
    """The prange loop and the worker pool play the same games, step for step (``--check``)."""
    cfg = RulesConfig.from_preset("classic", players=4)
    ours, pool = PrangeLoop(cfg, batch, 2, seed=3), EngineLoop(cfg, batch, 2, seed=3)
    for _ in range(steps):
        ours(True)
        pool(True)
    for name in State._fields:
        assert np.array_equal(getattr(ours.eng, name), getattr(pool.eng, name)), name
    assert np.array_equal(ours.obs, pool.obs)
    print(f"prange ({_layer()}) and the worker pool: the same {batch} games for {steps} steps, observations included")


# ------------------------------------------------------------------------------------------------------ main
class Workers:
    """One worker process per threading layer; ``ask`` times a design in the worker that runs it."""

    def __init__(self, layers: list[str], tbb_lib: str | None) -> None:
        self.procs: dict[str, subprocess.Popen] = {}
        for layer in layers:
            env = {**os.environ, "NUMBA_THREADING_LAYER": layer}
            if layer == "tbb" and tbb_lib:
                env["LD_LIBRARY_PATH"] = tbb_lib + os.pathsep + env.get("LD_LIBRARY_PATH", "")
            self.procs[layer] = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                                 stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip

    def ask(self, design: str, **request: Any) -> dict[str, Any]:
        layer = design.split("/")[1] if design.startswith("prange/") else "workqueue"
        proc = self.procs[layer]
        proc.stdin.write(json.dumps({"design": design, **request}) + "\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the {layer} worker stopped (is its threading layer installed here?)")
        return json.loads(answer)

    def close(self) -> None:
        for p in self.procs.values():
            p.stdin.close()
            p.wait()


def tbb_available(tbb_lib: str | None) -> bool:
    env = {**os.environ, "NUMBA_THREADING_LAYER": "tbb"}
    if tbb_lib:
        env["LD_LIBRARY_PATH"] = tbb_lib
    probe = "import numba\n@numba.njit(parallel=True)\ndef f(n):\n    return sum([1 for _ in numba.prange(n)])\nf(4)"
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True).returncode == 0


COLUMNS = ["condition", "batch", "observation", "one thread", "worker pool (kept)", "sub-engines", "prange workqueue",
           "prange omp", "prange tbb"]  # fmt: skip
WHAT = ("Two threads sharing one batch three ways, classic 4 players, full-length games with masks, with and without "
        "the int8 observation each step: agent-steps/s, and in brackets the median ratio to the worker pool over the "
        "repeats, all designs alternating in the same minutes (`busy`: one other process spinning on the 2-core "
        "machine). The worker pool is the engine's (`threads=2`); `prange` is numba's `parallel=True` on each "
        "threading layer; `sub-engines` is two engines of half the batch, one compiled call per step each, on a thread "
        "pool. The engine keeps the worker pool: no other design comes within 5% of it at every batch on a quiet "
        "machine.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1024, 4096, 16384])
    ap.add_argument("--conditions", nargs="+", choices=["quiet", "busy"], default=["quiet", "busy"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.6, help="seconds per timed loop")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tbb-lib", help="folder of libtbb.so.12 (pip's tbb wheel puts it in the environment's lib/)")
    ap.add_argument("--check", action="store_true",
                    help="assert first that prange and the worker pool play the same games")
    ap.add_argument("--docs", action="store_true", help="write the table into docs/data/benchmarks.json and the page")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker()
        return 0
    if args.check:
        check_same_play()
    layers = ["workqueue", "omp"] + (["tbb"] if tbb_available(args.tbb_lib) else [])
    designs = [d for d in DESIGNS if not d.startswith("prange/") or d.split("/")[1] in layers]
    command = "python scripts/bench_threading.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"# {command.strip()}  (layers: {', '.join(layers)}; load average before: {os.getloadavg()[0]:.2f})",
          flush=True)  # fmt: skip
    from scripts.bench_under_load import busy_processes

    workers = Workers(layers, args.tbb_lib)
    rows = []
    try:
        for condition in args.conditions:
            for batch in args.batch_sizes:
                for observe in (False, True):
                    rates: dict[str, list[float]] = {d: [] for d in designs}
                    with busy_processes(1 if condition == "busy" else 0, 0, seconds=600):
                        for repeat in range(args.repeats):
                            order = designs if repeat % 2 == 0 else designs[::-1]
                            for d in order:
                                rates[d].append(workers.ask(d, batch=batch, observe=observe, seconds=args.seconds,
                                                            seed=args.seed)["rate"])  # fmt: skip
                    rows.append(_row(condition, batch, observe, rates))
                    print("  ".join(table(rows[-1:])[0]), flush=True)
    finally:
        workers.close()
    if args.docs:
        from cluedo_env.cli.bench import machine_info
        from scripts.gen_docs import _machine, replace_table

        info = machine_info()
        replace_table("thread_designs", {"title": "Thread designs", "what": WHAT, "columns": COLUMNS,
                                         "rows": table(rows), "command": command.replace(" --docs", "").strip(),
                                         "machine": _machine(info, "2"), "date": info["date"][:10]},
                      after="under_load")  # fmt: skip
    return 0


def _row(condition: str, batch: int, observe: bool, rates: dict[str, list[float]]) -> dict[str, Any]:
    pool = rates["worker pool"]
    return {"condition": condition, "batch": batch, "observe": observe,
            "rates": {d: statistics.median(r) for d, r in rates.items()},
            "ratios": {d: statistics.median(x / c for x, c in zip(r, pool, strict=True)) for d, r in rates.items()}}


def table(rows: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for r in rows:
        cells = [r["condition"], f"{r['batch']:,}", "int8" if r["observe"] else "-"]
        for d in ("one thread", "worker pool", "sub-engines", *(f"prange/{layer}" for layer in LAYERS)):
            rate = r["rates"].get(d)
            cells.append("-" if rate is None else f"{rate / 1e6:.2f}M" if d == "worker pool"
                         else f"{rate / 1e6:.2f}M (x{r['ratios'][d]:.2f})")  # fmt: skip
        out.append(cells)
    return out


if __name__ == "__main__":
    sys.exit(main())
