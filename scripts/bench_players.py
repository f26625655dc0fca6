"""Benchmark the rule-based players: games per second of four equal players, on one core.

    PYTHONPATH=. .venv/bin/python scripts/bench_players.py     # deducer, expert, heuristic x classic, cards
    PYTHONPATH=. .venv/bin/python scripts/bench_players.py --players deducer --presets classic --games 2048
    PYTHONPATH=. .venv/bin/python scripts/bench_players.py --players deducer --profile    # cProfile, top 30

Why: issue 16 sets speed targets for the rule-based players (4 deducers >= 1,000 classic
games/s and >= 2,000 cards games/s, 4 experts >= 300 classic games/s), at the batch size the
evaluator uses (1024). Each cell plays ``--games`` games with :func:`agents.runner.play_games`
after a warm-up run (numba compilation, caches), ``--repeat`` times; the table gives the
median games/s and decisions/s (player actions, i.e. engine steps of live games), and games per
CPU second of the process (less sensitive to other load on a shared machine; numba and numpy
run single-threaded here, so CPU time is the time one core spends).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

from agents.registry import make_agent
from agents.runner import play_games
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
    ap.add_argument("--top", type=int, default=30, help="profile lines to print")
    args = ap.parse_args(argv)

    print(f"# {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# cpus: {os.cpu_count()}, numba threads: {os.environ.get('NUMBA_NUM_THREADS', 'default')}")
    header = (
        f"{'players':<14}{'preset':<9}{'batch':>6}{'games':>7}{'games/s':>10}{'decisions/s':>13}"
        f"{'games/cpu-s':>13}{'runs (wall s)':>22}"
    )
    print(header)
    for player in args.players:
        for preset in args.presets:
            _one_run(player, preset, args.warmup, min(args.batch, args.warmup), args.seed + 1000)
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
                f"{decs / med:>13.0f}{args.games / statistics.median(cpus):>13.0f}{runs:>22}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
