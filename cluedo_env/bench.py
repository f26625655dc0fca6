"""Benchmark uniformly random legal play on the vectorized engine (:class:`VectorEngine`).

    cluedo bench                  # full grid (about 4-5 minutes); also python scripts/bench.py
    cluedo bench --quick          # batch 1, 64, 4096; classic:4 and cards:4; 1 s
    cluedo bench --batch-sizes 1024 4096 --configs classic:4 seed000:3 --seconds 5
    cluedo bench --profile        # cProfile of 200 steps, batch 4096, classic:4

For every config (``preset:players``) and batch size B, one engine with ``autoreset=True`` is reset,
warmed up, then timed with ``time.perf_counter`` for ``--seconds`` in two loops, each repeated
``--repeats`` times (medians are reported):

* **mask**: ``a = eng.sample_random_actions(rng); eng.step(a); eng.legal_action_mask`` - the
  (B, 870) mask is materialised every step, as a policy reading it would;
* **mask+obs**: the same plus ``eng.observe()`` (the acting player's (B, D) int8 observation),
  skipped if the engine has no ``observe`` yet.

What is reported:

* agent-steps/s = B x steps / seconds: each step is one decision of one agent in each of the B games;
* games/s: games finished per second, from the end flags that ``step`` returns (they report the end
  of a game in the step that ended it, even though autoreset has already started a new one there);
* decisions/game = agent-steps / games finished (steady state, Little's law);
* bytes/game: the engine's own per-game arrays (``nbytes`` of the numpy attributes whose first axis is
  B, divided by B; the materialised mask included); tables shared by all games (board, path trie,
  precomputed moves) are listed apart as ``shared_bytes``;
* peak/game: the ``tracemalloc`` peak while building the engine, resetting it and playing 20 steps with
  mask and observation (temporaries included; numpy reports its buffers to tracemalloc), divided by B.
  This pass is separate from the timed loops, since tracing slows allocation. The process peak RSS
  (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and its growth per measurement also go to the JSON;
  it only grows when a new process-wide peak is set, so it is indicative only.

Results are printed as a table and written to ``--json`` (default ``results/bench.json``) with the
machine (platform, CPUs, numpy and Python versions, date).
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
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from cluedo_env.config import ConfigError, RulesConfig
from cluedo_env.errors import (
    ArgumentParser,
    UsageError,
    check_writable_file,
    float_in,
    int_in,
    seed_type,
    write_text_atomic,
)
from cluedo_env.vector_engine import VectorEngine

DEFAULT_BATCHES = [1, 64, 1024, 4096, 16384]
DEFAULT_CONFIGS = ["classic:3", "classic:4", "classic:6", "cards:4"]
QUICK_BATCHES = [1, 64, 4096]
QUICK_CONFIGS = ["classic:4", "cards:4"]
MEMORY_STEPS = 20


def parse_config(spec: str) -> tuple[str, RulesConfig]:
    """``preset:players`` (or just ``preset``, 4 players) -> (label, RulesConfig)."""
    preset, _, players = spec.partition(":")
    if players and not players.isdigit():
        raise ConfigError(f"config {spec!r}: {players!r} is not a number of players (preset:players, e.g. classic:4)")
    cfg = RulesConfig.from_preset(preset, players=int(players) if players else 4)
    return f"{preset}:{cfg.players}", cfg


def machine_info() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def maxrss_bytes() -> int:
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def _arrays(obj: Any) -> list[np.ndarray]:
    """The numpy arrays among ``obj``'s attributes, and one level down (board, path trie)."""
    out = []
    for value in vars(obj).values():
        if isinstance(value, np.ndarray):
            out.append(value)
        elif hasattr(value, "__dict__") and not isinstance(value, type):
            out.extend(v for v in vars(value).values() if isinstance(v, np.ndarray))
    return out


def engine_bytes(eng: VectorEngine) -> tuple[int, int]:
    """(per-game bytes, shared bytes): per-game arrays have B as their first axis."""
    seen: set[int] = set()
    per_game = shared = 0
    for arr in _arrays(eng):
        if id(arr) in seen:
            continue
        seen.add(id(arr))
        if arr.ndim and arr.shape[0] == eng.B:
            per_game += arr.nbytes
        else:
            shared += arr.nbytes
    return per_game, shared


def run_loop(
    eng: VectorEngine, rng: np.random.Generator, seconds: float, obs: bool, min_steps: int = 1
) -> tuple[int, int, float]:
    """Step random legal actions for ``seconds`` (and at least ``min_steps``); (steps, games, elapsed)."""
    steps = games = 0
    observe = eng.observe if obs else None
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        result = eng.step(eng.sample_random_actions(rng))
        _mask = eng.legal_action_mask
        if observe is not None:
            _obs = observe()
        games += int(np.count_nonzero(result.terminated | result.truncated))
        steps += 1
        now = time.perf_counter()
        if now >= deadline and steps >= min_steps:
            break
    return steps, games, now - t0


def memory_pass(cfg: RulesConfig, batch: int, has_obs: bool) -> int:
    """tracemalloc peak (bytes) of building, resetting and stepping an engine (mask and obs)."""
    tracemalloc.start()
    try:
        eng = VectorEngine(cfg, batch_size=batch, autoreset=True)
        eng.reset(seed=1)
        rng = np.random.default_rng(1)
        for _ in range(MEMORY_STEPS):
            eng.step(eng.sample_random_actions(rng))
            _mask = eng.legal_action_mask
            if has_obs:
                _obs = eng.observe()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_one(label: str, cfg: RulesConfig, batch: int, seconds: float, repeats: int, seed: int) -> dict[str, Any]:
    rss0 = maxrss_bytes()
    eng = VectorEngine(cfg, batch_size=batch, autoreset=True)
    has_obs = hasattr(eng, "observe")
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)

    warm_steps, _, _ = run_loop(eng, rng, min(0.5, seconds / 4), has_obs, min_steps=20)
    obs_dim = int(eng.observe().shape[1]) if has_obs else None

    rates: dict[str, list[float]] = {"mask": [], "mask+obs": []}
    games_s: list[float] = []
    dec_game: list[float] = []
    for _ in range(repeats):
        steps, games, elapsed = run_loop(eng, rng, seconds, False)
        rates["mask"].append(batch * steps / elapsed)
        games_s.append(games / elapsed)
        dec_game.append(batch * steps / games if games else float("nan"))
        if has_obs:
            steps, _, elapsed = run_loop(eng, rng, seconds, True)
            rates["mask+obs"].append(batch * steps / elapsed)

    _mask = eng.legal_action_mask  # count the materialised mask among the engine's arrays
    per_game, shared = engine_bytes(eng)
    rss1 = maxrss_bytes()
    del eng, _mask
    traced = memory_pass(cfg, batch, has_obs)

    def med(xs: list[float]) -> float | None:
        return statistics.median(xs) if xs else None

    return {
        "config": label,
        "rules": cfg.to_dict(),
        "batch": batch,
        "repeats": repeats,
        "seconds": seconds,
        "warmup_steps": warm_steps,
        "mask_steps_per_s": med(rates["mask"]),
        "mask_obs_steps_per_s": med(rates["mask+obs"]),
        "mask_steps_per_s_all": rates["mask"],
        "mask_obs_steps_per_s_all": rates["mask+obs"],
        "games_per_s": med(games_s),
        "decisions_per_game": med(dec_game),
        "obs_dim": obs_dim,
        "engine_bytes_per_game": per_game / batch,
        "engine_shared_bytes": shared,
        "tracemalloc_peak_bytes_per_game": traced / batch,
        "tracemalloc_steps": MEMORY_STEPS,
        "maxrss_bytes_after": rss1,
        "maxrss_growth_bytes": rss1 - rss0,
    }


def fmt_rate(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def fmt_bytes(x: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(x) < 1024 or unit == "GiB":
            return f"{x:,.0f} {unit}" if unit == "B" else f"{x:,.1f} {unit}"
        x /= 1024
    return ""


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        "config",
        "batch",
        "mask steps/s",
        "mask+obs steps/s",
        "games/s",
        "decisions/game",
        "bytes/game",
        "peak/game",
    )
    lines = [head]
    for r in rows:
        lines.append((
            r["config"], str(r["batch"]), fmt_rate(r["mask_steps_per_s"]), fmt_rate(r["mask_obs_steps_per_s"]),
            fmt_rate(r["games_per_s"]), f"{r['decisions_per_game']:.2f}", fmt_bytes(r["engine_bytes_per_game"]),
            fmt_bytes(r["tracemalloc_peak_bytes_per_game"]),
        ))  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for n, line in enumerate(lines):
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))]
        print("  ".join(cells))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def profile(seed: int, steps: int = 200, batch: int = 4096, top: int = 25) -> None:
    """cProfile ``steps`` steps of classic:4 at ``batch`` (mask every step); print the top functions."""
    eng = VectorEngine(RulesConfig.from_preset("classic", players=4), batch_size=batch, autoreset=True)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    run_loop(eng, rng, 0.0, False, None, min_steps=20)  # warm-up
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(steps):
        eng.step(eng.sample_random_actions(rng))
        _mask = eng.legal_action_mask
    prof.disable()
    elapsed = time.perf_counter() - t0
    print(
        f"cProfile: classic:4, batch {batch}, {steps} steps with the mask, {elapsed:.2f} s under the profiler "
        f"({elapsed / steps * 1e3:.2f} ms/step)\n"
    )
    for key in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats(key).print_stats(top)
        print(f"=== top {top} by {key} ===")
        print(out.getvalue().split("\n", 4)[-1].strip("\n") + "\n")


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = ArgumentParser(
        prog=prog, description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )  # fmt: skip
    ap.add_argument("--batch-sizes", type=int_in(1, 1 << 20), nargs="+", default=None, metavar="B",
                    help=f"games stepped at once (1..{1 << 20}; default {DEFAULT_BATCHES})")  # fmt: skip
    ap.add_argument("--configs", nargs="+", default=None, metavar="PRESET:PLAYERS",
                    help=f"preset:players, default {DEFAULT_CONFIGS}")  # fmt: skip
    ap.add_argument("--seconds", type=float_in(0.0), default=None, help="seconds per timed measurement (default 2.0)")
    ap.add_argument("--repeats", type=int_in(1, 1000), default=3, help="timed repeats (1..1000); medians reported")
    ap.add_argument("--out", "--json", dest="json", default="results/bench.json", metavar="FILE",
                    help="the JSON file of the results (default results/bench.json)")  # fmt: skip
    ap.add_argument("--seed", type=seed_type, default=0, help="seed of the games and the random players (default 0)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"batch sizes {QUICK_BATCHES}, configs {QUICK_CONFIGS}, 1 s (explicit options win)",
    )
    ap.add_argument(
        "--profile", action="store_true", help="instead of the grid: cProfile 200 steps at batch 4096 for classic:4"
    )
    args = ap.parse_args(argv)
    if args.json:
        check_writable_file(args.json, "--out")

    if args.profile:
        profile(args.seed)
        return
    batches = args.batch_sizes or (QUICK_BATCHES if args.quick else DEFAULT_BATCHES)
    specs = args.configs or (QUICK_CONFIGS if args.quick else DEFAULT_CONFIGS)
    seconds = args.seconds if args.seconds is not None else (1.0 if args.quick else 2.0)
    if seconds <= 0:
        raise UsageError(f"--seconds {seconds} is out of range (a number > 0)")
    configs = [parse_config(s) for s in specs]

    info = machine_info()
    print(
        f"{info['platform']}, {info['cpus_usable']}/{info['cpu_count']} CPUs, Python {info['python']}, "
        f"numpy {info['numpy']}; {seconds:g} s x {args.repeats} per measurement, medians"
    )
    rows = []
    for label, cfg in configs:
        for batch in batches:
            row = bench_one(label, cfg, batch, seconds, args.repeats, args.seed)
            rows.append(row)
            print(
                f"  {label:<10} B={batch:<6} mask {fmt_rate(row['mask_steps_per_s']):>12} steps/s, "
                f"mask+obs {fmt_rate(row['mask_obs_steps_per_s']):>12} steps/s",
                flush=True,
            )
    print()
    print_table(rows)
    if rows and rows[0]["obs_dim"] is None:
        print("\n(the engine has no observe() yet: mask+obs not measured)")
    print(
        f"\nsteps/s = agent-steps (B x steps) per second; decisions/game = agent-steps / games finished; "
        f"bytes/game = engine arrays with B rows / B; peak/game = tracemalloc peak over build + reset + "
        f"{MEMORY_STEPS} steps / B."
    )

    path = Path(args.json)
    result = {
        "machine": info,
        "settings": {
            "batch_sizes": batches,
            "configs": [c for c, _ in configs],
            "seconds": seconds,
            "repeats": args.repeats,
            "seed": args.seed,
            "quick": args.quick,
        },
        "measures": {
            "steps_per_s": "agent-steps per second = batch x steps / perf_counter seconds, median of repeats",
            "mask": "sample_random_actions + step + legal_action_mask each step, autoreset=True",
            "mask+obs": "the same plus observe() (acting player) each step",
            "games_per_s": "games finished per second in the mask loop",
            "engine_bytes_per_game": "sum of nbytes of the engine's numpy attributes with batch rows / batch",
            "tracemalloc_peak_bytes_per_game": "tracemalloc peak over build + reset + steps / batch",
            "maxrss": "resource.getrusage(RUSAGE_SELF).ru_maxrss, process-wide peak, indicative only",
        },
        "results": rows,
    }
    write_text_atomic(path, json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    from cluedo_env.errors import run_cli

    sys.exit(run_cli(main))
