"""Benchmark the players: games per second of four equal players, on one core.

    PYTHONPATH=. .venv/bin/python scripts/bench_players.py     # deducer, expert, heuristic x classic, cards
    PYTHONPATH=. .venv/bin/python scripts/bench_players.py --players deducer --presets classic --games 2048
    PYTHONPATH=. .venv/bin/python scripts/bench_players.py --players deducer --profile    # cProfile, top 30
    PYTHONPATH=. .venv/bin/python scripts/bench_players.py --players deducer --kernels    # compiled vs Python time
    PYTHONPATH=. .venv/bin/python scripts/bench_players.py --players pretrained:cards_champion --presets cards

The speed of the rule-based players at the batch size the evaluator uses (1024). Each cell plays ``--games``
games with :func:`cluedo_env.agents.play.runner.play_games` after a warm-up run (numba compilation, caches),
``--repeat``
times; the table gives the
median games/s and decisions/s (player actions, i.e. engine steps of live games), and games per
CPU second of the process (less sensitive to other load on a shared machine; numba and numpy
run single-threaded here, so CPU time is the time one core spends). The last column, ``ref ms``, is the CPU time
of a fixed compiled loop measured just before the cell: how fast this core runs at that minute. On a shared machine
it moves by half from one minute to the next, and the players' figures with it; compare cells and runs at similar
``ref ms``, and two commits with ``scripts/bench_compare.py`` (both in turn on one core).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import cProfile
import os
import pstats
import statistics
import sys
import time

import numpy as np
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import play_games
from cluedo_env.training.players import check_player_names
from numba import njit

from cluedo_env.engine.numba_internals import is_kernel
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.rules.config import RulesConfig


def _one_run(player: str, preset: str, games: int, batch: int, seed: int) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, decisions and wrong accusations of one ``play_games`` call with four
    ``player`` players."""
    config = RulesConfig.from_preset(preset)
    agents = [make_agent(player, seed=seed + s) for s in range(config.players)]
    decisions = [0]
    for agent in agents:  # count decisions: every act() call returns one action per game asked
        act = agent.act

        def counted(view, idx, _act=act):
            decisions[0] += len(idx)
            return _act(view, idx)

        agent.act = counted  # type: ignore[method-assign]
    t0, c0 = time.perf_counter(), time.process_time()
    records = play_games(config, agents, games, batch_size=batch, seed=seed)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    wrong = sum(sum(r.wrong_accusations) for r in records)
    return dt, cpu, decisions[0], wrong


@njit(cache=True, nogil=True)
def _reference_loop(n: int) -> float:
    """A fixed compiled workload: logarithms and products, as the players' kernels do them."""
    acc = 0.0
    for i in range(1, n):
        x = (i % 1000 + 1) * 0.001
        acc += x * np.log2(x) * ((i & 7) + 1)
    return acc


def reference_ms(n: int = 2_000_000) -> float:
    """CPU milliseconds of :func:`_reference_loop` (the best of three): this core's speed now (lower is faster)."""
    _reference_loop(10)
    best = float("inf")
    for _ in range(3):
        c0 = time.process_time()
        _reference_loop(n)
        best = min(best, time.process_time() - c0)
    return 1e3 * best


@contextlib.contextmanager
def _timed_kernels(cpu: dict[str, float], calls: collections.Counter):
    """Time, in process CPU seconds, every call of a compiled kernel from the players' Python code and every engine
    step, into ``cpu`` / ``calls`` by name.

    Why not cProfile: it charges ~1 us to each of the players' many small Python calls, so it overstates their
    Python glue by about half; this wraps only the kernels (a few thousand calls), so the rest of the run's CPU
    time is the glue (numpy calls, allocations, dispatch) as it runs unprofiled. The kernels are rebound where the
    players' modules imported them (``agents.*`` except the kernel modules, whose kernels call each other compiled)
    and put back afterwards.
    """
    clock = time.process_time

    def timed(name, f):
        def call(*args, **kwargs):
            t = clock()
            try:
                return f(*args, **kwargs)
            finally:
                cpu[name] += clock() - t
                calls[name] += 1

        # a cluedo_env.agents.compiled.EntryPoint compiles through it: its machine code is timed
        if hasattr(f, "compile"):
            call.compile = lambda signature: timed(name, f.compile(signature))
        return call

    saved, wrappers = [], {}
    for mname, module in list(sys.modules.items()):
        if not mname.startswith("cluedo_env.agents") or mname.endswith("kernels"):
            continue
        for key, value in list(vars(module).items()):
            if is_kernel(value):
                wrapper = wrappers.setdefault(id(value), timed(value.__name__, value))
                saved.append((module, key, value))
                setattr(module, key, wrapper)
    step = VectorEngine.step
    VectorEngine.step = timed("engine step (VectorEngine.step)", step)
    try:
        yield
    finally:
        VectorEngine.step = step
        for module, key, value in saved:
            setattr(module, key, value)


def _kernel_table(player: str, preset: str, games: int, batch: int, seed: int, top: int) -> None:
    """One run with :func:`_timed_kernels`: CPU seconds in each kernel, the kernels' total and the rest."""
    cpu: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter = collections.Counter()
    with _timed_kernels(cpu, calls):
        _, total, _, _ = _one_run(player, preset, games, batch, seed)
    inside = sum(cpu.values())
    print(f"\n## CPU time by kernel: 4 x {player}, {preset}, {games} games at batch {batch}: {total:.3f} s, "
          f"{games / total:.0f} games/cpu-s")  # fmt: skip
    print(f"{'kernel':<36}{'cpu s':>8}{'share':>7}{'calls':>8}{'us/call':>9}")
    for name, t in sorted(cpu.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{name:<36}{t:>8.3f}{t / total:>7.1%}{calls[name]:>8}{t / calls[name] * 1e6:>9.1f}")
    print(f"{'all kernels and engine steps':<36}{inside:>8.3f}{inside / total:>7.1%}")
    print(f"{'the rest (Python, numpy, dispatch)':<36}{total - inside:>8.3f}{(total - inside) / total:>7.1%}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", nargs="+", default=["deducer", "expert", "heuristic"])
    ap.add_argument("--presets", nargs="+", default=["classic", "cards"])
    ap.add_argument("--games", type=int, default=1024, help="games per run (default: one batch)")
    ap.add_argument("--batch", type=int, default=1024, help="batch size (the evaluator uses 1024)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per cell (median reported)")
    ap.add_argument("--warmup", type=int, default=64, help="games of the untimed warm-up run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true", help="profile one run per cell with cProfile")
    ap.add_argument(
        "--kernels",
        action="store_true",
        help="one run per cell with the CPU time of every compiled kernel, and of the rest",
    )
    ap.add_argument("--top", type=int, default=30, help="profile lines to print")
    args = ap.parse_args(argv)
    check_player_names(args.players)  # registers ckpt: and pretrained: where named; a bad name fails here

    print(f"# {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# cpus: {os.cpu_count()}, numba threads: {os.environ.get('NUMBA_NUM_THREADS', 'default')}")
    header = (
        f"{'players':<14}{'preset':<9}{'batch':>6}{'games':>7}{'games/s':>10}{'decisions/s':>13}"
        f"{'games/cpu-s':>13}{'runs (wall s)':>22}{'ref ms':>8}"
    )
    print(header)
    for player in args.players:
        for preset in args.presets:
            _one_run(player, preset, args.warmup, min(args.batch, args.warmup), args.seed + 1000)
            if args.kernels:
                _kernel_table(player, preset, args.games, args.batch, args.seed, args.top)
                continue
            if args.profile:
                prof = cProfile.Profile()
                prof.enable()
                _one_run(player, preset, args.games, args.batch, args.seed)
                prof.disable()
                print(f"\n## profile: 4 x {player}, {preset}")
                pstats.Stats(prof).sort_stats("cumulative").print_stats(args.top)
                pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
                continue
            times, cpus, decs = [], [], 0
            ref = reference_ms()
            for r in range(args.repeat):
                dt, cpu, decs, wrong = _one_run(player, preset, args.games, args.batch, args.seed + r)
                times.append(dt)
                cpus.append(cpu)
                if wrong and player == "deducer":
                    print(f"!! {wrong} wrong accusations by the deducer", file=sys.stderr)
            med = statistics.median(times)
            runs = " ".join(f"{t:.2f}" for t in times)
            print(
                f"{'4x ' + player:<14}{preset:<9}{args.batch:>6}{args.games:>7}{args.games / med:>10.0f}"
                f"{decs / med:>13.0f}{args.games / statistics.median(cpus):>13.0f}{runs:>22}{ref:>8.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
