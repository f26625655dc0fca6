"""Benchmark the vectorized engine (:class:`VectorEngine`) on the workloads users run.

    .venv/bin/python scripts/bench.py                      # the default grid (about 4 minutes)
    .venv/bin/python scripts/bench.py --quick              # classic:4 and seed000:4 at batch 1, 64, 4096 (~40 s)
    .venv/bin/python scripts/bench.py --configs classic:4 --batch-sizes 4096 --workloads full --seconds 5
    .venv/bin/python scripts/bench.py --compile            # cold compile and cached start-up times
    .venv/bin/python scripts/bench.py --threads 2          # also one engine split over 1..N threads, batch 8192
    .venv/bin/python scripts/bench.py --soak 10000000      # RSS before/after 10M agent-steps (leak check)
    .venv/bin/python scripts/bench.py --profile            # cProfile of the full workload, batch 4096

Workloads (one engine with ``autoreset=True`` per config and batch size):

* **full** (the headline): the engine's ``sample_full_game_actions()``: uniform random legal play,
  except that a drawn accusation is kept only on a 1% coin (else END_TURN, or ROLL at a turn's
  start). Games run their full length (~440 decisions with 4 players: movement, suggestions,
  refutations), as the games of agents that learned not to accuse blindly do;
* **uniform**: ``sample_random_actions()``: uniform random legal play. Nearly every turn starts with
  an accusation (324 of ~325 legal actions), so a 4-player game lasts ~3 decisions: this measures
  dealing and accusing, not play;
* **bots**: whole games between four batched ``heuristic`` players (``cluedo_env.agents.play.runner.play_games``),
  the players' own time included: what an evaluation run costs.

Each loop runs for ``--seconds``, ``--repeats`` times, after a warm-up; the tables give medians.
Per step: ``actions = sampler(); eng.step(actions); eng.legal_action_mask`` (**mask**), plus
``eng.observe(out=buf)`` (**+obs**, the acting player's (B, D) int8 observation into a reused
buffer) or ``eng.observe(out=buf, packed=True)`` (**+packed**, the same information as bits, a fifth of
the bytes). Every engine runs on one thread (``threads=1``) except in the ``--threads`` rows, where one
engine splits its batch over 1, 2, ... N threads (``VectorEngine(threads=k)``) and the speed-up over one
thread is given. agent-steps/s = B x steps / seconds (one decision in each of B games per step); the
``cpu`` column divides by this process's CPU time instead of the wall clock, which is what a
shared machine still shows of the code's own speed. decisions/game: the mean length of 128 games
of the workload's player played to their end; games/s = (mask agent-steps/s) / (decisions/game),
the steady state of the autoresetting batch. bytes/game: the engine's per-game arrays (first
axis B) divided by B; the shared tables (board, move tables) are listed apart.
Results also go to ``--json`` (default ``results/bench.json``) with the machine and its load.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.errors import UsageError, run_cli
from cluedo_env.files import check_writable_file, write_text_atomic
from cluedo_env.options import ArgumentParser
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError, RulesConfig

DEFAULT_BATCHES = [1, 64, 1024, 4096, 16384]
DEFAULT_CONFIGS = ["classic:4", "classic:6", "seed000:4", "cards:4"]
DEFAULT_WORKLOADS = ["full", "uniform", "bots"]
QUICK_BATCHES = [1, 64, 4096]
QUICK_CONFIGS = ["classic:4", "seed000:4"]
BOT_GAMES = 400  # games per bots measurement


def parse_config(spec: str) -> tuple[str, RulesConfig]:
    """``preset:players`` (or just ``preset``, 4 players) -> (label, RulesConfig)."""
    preset, _, players = spec.partition(":")
    if players and not players.isdigit():
        raise ConfigError(f"config {spec!r}: {players!r} is not a number of players (preset:players, e.g. classic:4)")
    cfg = RulesConfig.from_preset(preset, players=int(players) if players else 4)
    return f"{preset}:{cfg.players}", cfg


def machine_info() -> dict[str, Any]:
    import numba

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    return {
        "platform": platform.platform(),
        "cpus_usable": usable,
        "load_average": os.getloadavg(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "numba": numba.__version__,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def maxrss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def current_rss_bytes() -> int:
    """Resident set size now (Linux /proc; falls back to the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return maxrss_bytes()


def engine_bytes(eng: VectorEngine) -> tuple[int, int]:
    """(per-game bytes, shared bytes): per-game arrays have B as their first axis."""
    per_game = sum(a.nbytes for a in eng.state)
    shared = sum(a.nbytes for a in (*eng.tables, *eng.moves) if isinstance(a, np.ndarray))
    return per_game // eng.batch_size, shared


def sampler(eng: VectorEngine, workload: str):
    return eng.sample_full_game_actions if workload == "full" else eng.sample_random_actions


OBSERVATIONS = {"mask": None, "obs": "int8", "packed": "packed"}  # table column: the observation each step writes


def run_loop(
    eng: VectorEngine, workload: str, seconds: float, obs: str | None, min_steps: int = 1
) -> dict[str, float]:
    """Step the workload's actions for ``seconds``; agent-steps per wall and CPU second. ``obs``: also write the
    acting player's observation each step, ``"int8"`` or ``"packed"``, or None."""
    sample = sampler(eng, workload)
    packed = obs == "packed"
    if obs is not None:
        buf = np.empty((eng.batch_size, eng.packed_observation_size if packed else eng.observation_size),
                       np.uint8 if packed else np.int8)  # fmt: skip
    steps = 0
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = t0 + seconds
    while True:
        eng.step(sample())
        _mask = eng.legal_action_mask
        if obs is not None:
            eng.observe(out=buf, packed=packed)
        steps += 1
        now = time.perf_counter()
        if now >= deadline and steps >= min_steps:
            break
    wall, cpu = now - t0, max(time.process_time() - c0, 1e-9)
    n = eng.batch_size * steps
    return {"rate": n / wall, "cpu_rate": n / cpu, "steps": n,
            "wall": wall}  # fmt: skip


def game_length(cfg: RulesConfig, workload: str, seed: int, games: int = 128) -> float:
    """Mean decisions per game of the workload's player: ``games`` games played to their end.

    Measured apart because a timed loop of a few seconds at a large batch sees few games end,
    and those are the short ones (every game starts at once).
    """
    eng = VectorEngine(cfg, batch_size=games)
    eng.reset(seed=seed + 1)
    sample = sampler(eng, workload)
    decisions = 0
    while (eng.phase != A.OVER).any():
        decisions += int(np.count_nonzero(eng.phase != A.OVER))
        eng.step(sample())
    return decisions / games


def bench_engine(
    label: str, cfg: RulesConfig, batch_size: int, workload: str, args: argparse.Namespace
) -> dict[str, Any]:
    eng = VectorEngine(cfg, batch_size=batch_size, autoreset=True, threads=1)
    eng.reset(seed=args.seed)
    run_loop(eng, workload, min(0.5, args.seconds / 4), "int8", min_steps=20)  # warm-up, games under way
    for obs in OBSERVATIONS.values():  # every kernel the timed loops call compiled (or loaded) before they start
        run_loop(eng, workload, 0.0, obs, min_steps=2)
    out: dict[str, Any] = {"config": label, "batch_size": batch_size, "workload": workload}
    for key, obs in OBSERVATIONS.items():
        runs = [run_loop(eng, workload, args.seconds, obs) for _ in range(args.repeats)]
        out[key] = statistics.median(r["rate"] for r in runs)
        out[key + "_cpu"] = statistics.median(r["cpu_rate"] for r in runs)
    out["decisions_per_game"] = game_length(cfg, workload, args.seed)
    out["games_per_s"] = out["mask"] / out["decisions_per_game"]  # steady state, with the mask loop
    out["bytes_per_game"], out["shared_bytes"] = engine_bytes(eng)
    return out


def bench_bots(label: str, cfg: RulesConfig, batch_size: int, args: argparse.Namespace) -> dict[str, Any]:
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games

    players = [make_agent("heuristic", seed=args.seed + p) for p in range(cfg.players)]
    games = max(BOT_GAMES, batch_size)
    play_games(cfg, players, min(games, 64), batch_size=min(batch_size, 64), seed=args.seed)  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    records = play_games(cfg, players, games, batch_size=batch_size, seed=args.seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"config": label, "batch_size": batch_size, "workload": "bots", "games_per_s": len(records) / wall,
            "games_per_cpu_s": len(records) / cpu, "games": len(records)}  # fmt: skip


THREAD_BATCH = 8192  # the batch of the --threads rows


def bench_threads(label: str, cfg: RulesConfig, max_threads: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One engine of ``THREAD_BATCH`` games split over 1, 2, 4 ... ``max_threads`` threads (``VectorEngine(threads=k)``,
    the kernels release the GIL), each measured as the one-thread rows; ``speedup``: over one thread. The counts
    alternate within each repeat, so a shared machine's load falls on all of them alike.

    ``ceiling``: for each k > 1, k engines of ``THREAD_BATCH / k`` games stepped at once, each by a thread of its
    own, over one thread: the same games and cores with no hand-over between the threads, what the machine gives
    k threads at that moment (on a shared machine it moves with the other tenants' load). Speed-ups are medians of
    each repeat's ratio; more, shorter repeats (``--seconds 0.25 --repeats 12``) follow a drifting machine closer."""
    counts = sorted({1, max_threads, *(k for k in (2, 4, 8, 16, 32, 64) if k < max_threads)})
    engines = {k: VectorEngine(cfg, batch_size=THREAD_BATCH, autoreset=True, threads=k) for k in counts}
    apart = {k: [VectorEngine(cfg, batch_size=THREAD_BATCH // k, autoreset=True, threads=1) for _ in range(k)]
             for k in counts if k > 1}  # fmt: skip
    for eng in [*engines.values(), *(e for group in apart.values() for e in group)]:
        eng.reset(seed=args.seed)
        run_loop(eng, "full", 0.3, "packed", min_steps=20)
    rates: dict[tuple[int, str], list[float]] = {(k, key): [] for k in counts for key in OBSERVATIONS}
    ceilings: dict[tuple[int, str], list[float]] = {(k, key): [] for k in apart for key in OBSERVATIONS}
    for _ in range(args.repeats):
        for key, obs in OBSERVATIONS.items():
            for k, eng in engines.items():
                rates[(k, key)].append(run_loop(eng, "full", args.seconds, obs)["rate"])
            for k, group in apart.items():
                ceilings[(k, key)].append(_at_once(group, args.seconds, obs))
    rows = []
    for k, eng in engines.items():
        row: dict[str, Any] = {"config": label, "batch_size": THREAD_BATCH, "workload": f"full, {k} thread(s)",
                               "threads": k}  # fmt: skip
        for key in OBSERVATIONS:
            one = rates[(1, key)]
            row[key] = statistics.median(rates[(k, key)])
            row[key + "_speedup"] = _median_ratio(rates[(k, key)], one)
            if k > 1:
                row[key + "_ceiling"] = _median_ratio(ceilings[(k, key)], one)
        rows.append(row)
        eng.close()
    return rows


def _median_ratio(rates: list[float], one: list[float]) -> float:
    """The median of the repeats' ratios (each over the one-thread rate measured seconds apart): a shared machine's
    speed drifts between repeats, and a ratio of medians mixes a fast minute with a slow one."""
    return statistics.median(r / o for r, o in zip(rates, one, strict=True))


def _at_once(engines: list[VectorEngine], seconds: float, obs: str | None) -> float:
    """Agent-steps/s of ``engines`` each stepped by a thread of its own at the same time (their rates summed)."""
    results: list[dict[str, float]] = []
    threads = [threading.Thread(target=lambda e=e: results.append(run_loop(e, "full", seconds, obs)))
               for e in engines]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(r["rate"] for r in results)


# What a newcomer waits for on an empty numba cache, each in a fresh process (code, what it measures).
_COMPILE_STEPS = {
    "env": ("import cluedo_env; e=cluedo_env.env(); e.reset(seed=0)\n"
            "import numpy as np\n"
            "for _ in range(100):\n"
            "    obs, r, term, trunc, _ = e.last()\n"
            "    e.step(None if term or trunc else int(np.flatnonzero(obs['action_mask'])[0]))",
            "import cluedo_env, env(), reset and 100 steps"),
    "deducers": ("from cluedo_env.agents.play.registry import make_agent\n"
                 "from cluedo_env.agents.play.runner import play_games\n"
                 "from cluedo_env.rules.config import RulesConfig\n"
                 "play_games(RulesConfig.from_preset('classic'), [make_agent('deducer', seed=s) for s in range(4)], 1)",
                 "four deducers finish their first game"),
    "warmup": ("from cluedo_env.cli.warmup import main; main([], output=lambda _: None)",
               "every kernel of the package (cluedo warmup)"),
}


def compile_times() -> dict[str, float]:
    """Seconds of each start-up of :data:`_COMPILE_STEPS` in a fresh process on an empty numba cache (``cold``),
    and of the first one again on the cache it left (``env_cached``); ``*_cpu`` the CPU seconds of that process
    (user + system), the figure to compare on a loaded machine, where the wall time also counts the waits."""
    out: dict[str, float] = {}
    for name, (code, _) in _COMPILE_STEPS.items():
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            timed = f"import time\nt=time.perf_counter()\n{code}\nprint(time.perf_counter()-t)"
            kinds = ("cold", "cached") if name == "env" else ("cold",)
            for kind in kinds:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                done = subprocess.run([sys.executable, "-c", timed], env=env, capture_output=True, text=True,
                                      check=True)  # fmt: skip
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                out[f"{name}_{kind}"] = float(done.stdout.strip().splitlines()[-1])
                out[f"{name}_{kind}_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out


def soak(steps: int, seed: int) -> dict[str, Any]:
    """RSS before and after ``steps`` agent-steps of the full workload with mask and observation."""
    eng = VectorEngine("classic", batch_size=4096, autoreset=True)
    eng.reset(seed=seed)
    run_loop(eng, "full", 1.0, "int8")
    before = current_rss_bytes()
    done = 0
    samples = []
    while done < steps:
        r = run_loop(eng, "full", 5.0, "int8")
        done += r["steps"]
        samples.append((done, current_rss_bytes()))
    return {"agent_steps": done, "rss_before": before, "rss_after": samples[-1][1], "samples": samples}


def fmt(x: float | None) -> str:
    if x is None or x != x:
        return "-"
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e4 else f"{x:,.0f}"


def _cpu_or_speedup(r: dict[str, Any], key: str) -> str:
    """The (cpu) column: per CPU second, or for a --threads row the speed-up over one thread."""
    if key + "_speedup" in r:
        return f"x{r[key + '_speedup']:.2f}"
    return fmt(r.get(key + "_cpu"))


def print_table(rows: list[dict[str, Any]], header: bool = True) -> None:
    if header:
        print(f"{'config':<11}{'workload':<20}{'batch':>6}  {'mask':>8} {'(cpu)':>8}  {'+obs':>8} {'(cpu)':>8}"
              f"  {'+packed':>8} {'(cpu)':>8}  {'games/s':>9}  {'dec/game':>8}  {'bytes/game':>10}")  # fmt: skip
    for r in rows:
        print(f"{r['config']:<11}{r['workload']:<20}{r['batch_size']:>6}  {fmt(r.get('mask')):>8} "
              f"{_cpu_or_speedup(r, 'mask'):>8}  {fmt(r.get('obs')):>8} {_cpu_or_speedup(r, 'obs'):>8}  "
              f"{fmt(r.get('packed')):>8} {_cpu_or_speedup(r, 'packed'):>8}  "
              f"{fmt(r.get('games_per_s')):>9}  {fmt(r.get('decisions_per_game')):>8}  "
              f"{r.get('bytes_per_game', '-'):>10}")  # fmt: skip


def print_markdown(rows: list[dict[str, Any]]) -> None:
    """The table as markdown."""
    print("| config | workload | batch | agent-steps/s, mask | (per CPU s) | + observation | (per CPU s) | "
          "+ packed observation | (per CPU s) | games/s | decisions/game | bytes/game |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['config']} | {r['workload']} | {r['batch_size']} | {fmt(r.get('mask'))} | "
              f"{_cpu_or_speedup(r, 'mask')} | {fmt(r.get('obs'))} | {_cpu_or_speedup(r, 'obs')} | "
              f"{fmt(r.get('packed'))} | {_cpu_or_speedup(r, 'packed')} | "
              f"{fmt(r.get('games_per_s'))} | {fmt(r.get('decisions_per_game'))} | "
              f"{r.get('bytes_per_game', '-')} |")  # fmt: skip


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = ArgumentParser(
        prog=prog, description=__doc__.split("\n\n")[0], epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    ap.add_argument("--configs", nargs="+", default=None, help=f"preset:players (default {' '.join(DEFAULT_CONFIGS)})")
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=None, help=f"default {DEFAULT_BATCHES}")
    ap.add_argument("--workloads", nargs="+", choices=DEFAULT_WORKLOADS, default=DEFAULT_WORKLOADS)
    ap.add_argument("--seconds", type=float, default=1.5, help="seconds per timed loop")
    ap.add_argument("--repeats", type=int, default=3, help="timed loops per measurement (the median is reported)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_CONFIGS} x {QUICK_BATCHES}, 1 s x 3")
    ap.add_argument("--threads", type=int, default=0,
                    help=f"also split one engine of batch {THREAD_BATCH} over 1, 2, 4 .. N threads")  # fmt: skip
    ap.add_argument("--compile", action="store_true", help="measure cold and cached start-up (subprocesses)")
    ap.add_argument("--soak", type=int, default=0, metavar="STEPS", help="RSS before/after STEPS agent-steps")
    ap.add_argument("--profile", action="store_true", help="cProfile 300 steps of full + obs at batch 4096 and exit")
    ap.add_argument("--json", "--out", default="results/bench.json",
                    help="where to write the results ('' for nowhere)")  # fmt: skip
    ap.add_argument("--markdown", action="store_true", help="also print the table as markdown (for the README)")
    args = ap.parse_args(argv)
    if not 0 < args.seconds < float("inf"):
        raise UsageError(f"--seconds {args.seconds} is out of range (a finite number > 0, e.g. 1.5)")
    for name, value, lo in (("repeats", args.repeats, 1), ("seed", args.seed, 0), ("threads", args.threads, 0),
                            ("soak", args.soak, 0)):  # fmt: skip
        if value < lo:
            raise UsageError(f"--{name} {value} is out of range (an integer >= {lo})")
    if args.json:
        check_writable_file(args.json, "--json")  # before minutes of measuring
    if args.quick:
        args.seconds, args.repeats = 1.0, 3
    configs = args.configs or (QUICK_CONFIGS if args.quick else DEFAULT_CONFIGS)
    batch_sizes = args.batch_sizes or (QUICK_BATCHES if args.quick else DEFAULT_BATCHES)
    if any(b < 1 for b in batch_sizes):
        raise UsageError(f"--batch-sizes {min(batch_sizes)} is out of range (positive integers, e.g. 1 64 4096)")
    parsed = [parse_config(c) for c in configs]

    if args.profile:
        eng = VectorEngine(parsed[0][1], batch_size=4096, autoreset=True, threads=1)
        eng.reset(seed=args.seed)
        run_loop(eng, "full", 0.5, "int8")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(300):
            eng.step(eng.sample_full_game_actions())
            _mask = eng.legal_action_mask
            eng.observe()
        prof.disable()
        stream = io.StringIO()
        pstats.Stats(prof, stream=stream).sort_stats("tottime").print_stats(15)
        print(stream.getvalue())
        return 0

    report: dict[str, Any] = {"machine": machine_info(), "results": []}
    if args.compile:
        report["compile_seconds"] = compile_times()
        c = report["compile_seconds"]
        for name, (_, what) in _COMPILE_STEPS.items():
            print(f"{what}: {c[name + '_cold']:.1f} s on an empty numba cache (CPU {c[name + '_cold_cpu']:.1f} s)")
        print(f"the same env start-up on a warm cache: {c['env_cached']:.2f} s (CPU {c['env_cached_cpu']:.2f} s)")
    rows = report["results"]
    for label, cfg in parsed:
        for batch_size in batch_sizes:
            for workload in args.workloads:
                if workload == "bots":
                    if batch_size < 64:  # the bots' Python per step dominates below that
                        continue
                    rows.append(bench_bots(label, cfg, batch_size, args))
                else:
                    rows.append(bench_engine(label, cfg, batch_size, workload, args))
                print_table(rows[-1:], header=len(rows) == 1)
        if args.threads > 1:
            split = bench_threads(label, cfg, args.threads, args)
            rows += split
            print_table(split, header=False)
            for r in split[1:]:
                print(f"{'':<11}{r['threads']} engines apart{'':<6}{THREAD_BATCH // r['threads']:>6}  "
                      + "  ".join(f"{'x' + format(r[key + '_ceiling'], '.2f'):>17}" for key in OBSERVATIONS)
                      + "  (each on its own thread, no hand-over: the machine's ceiling now)")
    if args.soak:
        report["soak"] = s = soak(args.soak, args.seed)
        print(f"RSS over {s['agent_steps']:,} agent-steps: {s['rss_before'] / 2**20:.1f} MiB -> "
              f"{s['rss_after'] / 2**20:.1f} MiB")  # fmt: skip
    if args.markdown:
        print()
        print_markdown(rows)
    print("\nagent-steps/s (median of repeats): mask = sample + step + mask; "
          "+obs = also the acting player's int8 observation; +packed = the same as bits;")  # fmt: skip
    print("(cpu) = per CPU second of this process. machine:", report["machine"])
    if args.json:
        path = Path(args.json)
        write_text_atomic(path, json.dumps(report, indent=1))
        print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
