"""Compare the speed of two checkouts, interleaved on one core: the ratio a noisy shared machine can give.

    PYTHONPATH=. .venv/bin/python scripts/bench_compare.py --before /tmp/old_checkout --players deducer expert
    PYTHONPATH=. .venv/bin/python scripts/bench_compare.py --before /tmp/old --players deducer --pairs 30
    PYTHONPATH=. .venv/bin/python scripts/bench_compare.py --before /tmp/old --players pretrained:champion \
        --presets classic
    PYTHONPATH=. .venv/bin/python scripts/bench_compare.py --before /tmp/old --players engine:mask engine:packed \
        --presets classic seed000 --games 200 --batch 4096

Why: on a shared machine one core's speed moves by half from one minute to the next (``ref ms`` in
``scripts/bench_players.py``), so "before" and "after" measured a minute apart differ by more than most changes,
and two processes side by side get cores of different speeds. Here two warm worker processes, one per checkout
(``--before``, and this one), both pinned to the same core (``--core``, Linux ``taskset``), play the same games in
turn: run k of each is a pair measured seconds apart, at nearly the same speed of the core. The table gives the
median games per CPU second of each side and the median of the pairs' ratios (after / before) with the range of
its middle half; the ratio is the figure to read.

Each run is :func:`cluedo_env.agents.play.runner.play_games` with four equal players (seeds as in
``bench_players.py``); the
workers time it with ``time.process_time``. ``engine:mask``, ``engine:obs`` and ``engine:packed`` time the engine
instead (``scripts/bench.py``'s ``full`` workload on one thread, ``--games`` steps of ``--batch`` games whose play
has spread over the whole length of a game: sample, step,
mask, and the int8 or packed observation); a checkout without packed observations writes int8 ones for
``engine:packed``, so that row compares the packed encoder with the int8 one it replaces. Those rows give
agent-steps per CPU second (the other rows: games per CPU second).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The worker: reads "player preset games batch seed" lines, answers CPU seconds of one play_games call.
# The worker runs in either checkout, whose layout is read from its files, not tried by importing (an editable
# install would answer a missing module from the other checkout):
# - agents/ and training/ installed as cluedo_env.agents and cluedo_env.training (pyproject.toml's package-dir):
#   the worker maps those names to the checkout's folders itself, since it runs the checkout uninstalled;
# - before that, top-level packages agents/ and training/;
# - before agents/ was ordered by concept, its registry and runner at the top of agents/.
# Compared across these moves, the same calls stand on both sides.
_WORKER = """
import importlib.util, os, sys, time
if "cluedo_env.agents" in open("pyproject.toml").read():
    import cluedo_env
    for folder in ("agents", "training"):
        spec = importlib.util.spec_from_file_location(
            "cluedo_env." + folder, os.path.abspath(folder + "/__init__.py"),
            submodule_search_locations=[os.path.abspath(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        setattr(cluedo_env, folder, module)
        spec.loader.exec_module(module)
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    import cluedo_env.training.pretrained  # registers ckpt: and pretrained: (the trained players)
elif os.path.exists("agents/play/runner.py"):
    from agents.play.registry import make_agent
    from agents.play.runner import play_games
else:
    from agents.registry import make_agent
    from agents.runner import play_games
from cluedo_env.rules.config import RulesConfig
from cluedo_env.engine.vector_engine import VectorEngine
import inspect
import numpy as np
ONE_THREAD = {"threads": 1} if "threads" in inspect.signature(VectorEngine).parameters else {}
ENGINES = {}
def engine(kind, preset, steps, batch, seed):
    # one engine per preset and batch, kept: its games are spread over their whole length (a fresh batch starts
    # every game at once, with the short histories of an opening, which are cheaper to observe than the average)
    eng = ENGINES.get((preset, batch))
    if eng is None:
        eng = ENGINES[(preset, batch)] = VectorEngine(preset, batch_size=batch, autoreset=True, **ONE_THREAD)
        eng.reset(seed=seed)
        for _ in range(1500):
            eng.step(eng.sample_full_game_actions())
    packed = kind == "packed" and hasattr(eng, "packed_observation_size")
    buf = np.empty((batch, eng.packed_observation_size if packed else eng.observation_size),
                   np.uint8 if packed else np.int8)
    c0 = time.process_time()
    for _ in range(steps):
        eng.step(eng.sample_full_game_actions())
        eng.legal_action_mask
        if kind != "mask":
            eng.observe(out=buf, packed=True) if packed else eng.observe(out=buf)
    return time.process_time() - c0
for line in sys.stdin:
    player, preset, games, batch, seed = line.split()
    if player.startswith("engine:"):
        print(engine(player[7:], preset, int(games), int(batch), int(seed)), flush=True)
        continue
    config = RulesConfig.from_preset(preset)
    agents = [make_agent(player, seed=int(seed) + s) for s in range(config.players)]
    c0 = time.process_time()
    play_games(config, agents, int(games), batch_size=int(batch), seed=int(seed))
    print(time.process_time() - c0, flush=True)
"""


class _Worker:
    """A Python process in ``checkout`` that plays games on request (pinned to ``core`` where taskset exists)."""

    def __init__(self, checkout: Path, core: int | None) -> None:
        env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": "1"}
        cmd = [sys.executable, "-c", _WORKER]
        if core is not None:
            cmd = ["taskset", "-c", str(core), *cmd]
        self.proc = subprocess.Popen(cmd, cwd=checkout, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)  # fmt: skip

    def run(self, player: str, preset: str, games: int, batch: int, seed: int) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{player} {preset} {games} {batch} {seed}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker in {self.proc.args} stopped (exit code {self.proc.wait()})")
        return float(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def _quartiles(x: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(x, n=4, method="inclusive") if len(x) > 1 else [x[0], x[0], x[0]]
    return q[0], q[2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="the other checkout (a folder with agents/ ...)")
    ap.add_argument("--after", type=Path, default=ROOT, help="default: this checkout")
    ap.add_argument("--players", nargs="+", default=["deducer"])
    ap.add_argument("--presets", nargs="+", default=["classic", "cards"])
    ap.add_argument("--games", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--pairs", type=int, default=12, help="runs of each side per cell, interleaved")
    ap.add_argument("--warmup", type=int, default=64, help="games of each side's untimed first run per cell")
    ap.add_argument("--core", type=int, default=0, help="the core both workers run on (-1: not pinned)")
    args = ap.parse_args(argv)
    for player in args.players:
        if player.startswith("engine:") and player[7:] not in ("mask", "obs", "packed"):
            ap.error(f"unknown engine workload {player!r} (allowed: engine:mask, engine:obs, engine:packed)")
    for side in (args.before, args.after):
        if not any((side / "agents" / path).is_file() for path in ("play/runner.py", "runner.py")):
            ap.error(f"{side} is not a checkout of this project (no agents/play/runner.py)")
    core = None if args.core < 0 or not _has_taskset() else args.core
    before, after = _Worker(args.before.resolve(), core), _Worker(args.after.resolve(), core)
    print(f"# {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"# before: {args.before}, after: {args.after}, core: {core if core is not None else 'not pinned'}")
    print(f"{'players':<14}{'preset':<9}{'batch':>6}{'games':>7}{'pairs':>6}{'before /cpu-s':>16}"
          f"{'after /cpu-s':>15}{'after / before':>16}{'middle half':>16}")  # fmt: skip
    try:
        for player in args.players:
            for preset in args.presets:
                for w in (before, after):
                    w.run(player, preset, args.warmup, min(args.batch, args.warmup), 1000)
                rb, ra = [], []
                for k in range(args.pairs):
                    first, second = (before, after) if k % 2 == 0 else (after, before)  # alternate who goes first
                    t1 = first.run(player, preset, args.games, args.batch, k)
                    t2 = second.run(player, preset, args.games, args.batch, k)
                    tb, ta = (t1, t2) if first is before else (t2, t1)
                    rb.append(tb)
                    ra.append(ta)
                ratios = [b / a for b, a in zip(rb, ra, strict=True)]  # speed ratio: after / before
                lo, hi = _quartiles(ratios)
                work = args.games * (args.batch if player.startswith("engine:") else 1)  # agent-steps or games
                label = player if player.startswith("engine:") else "4x " + player
                print(f"{label:<14}{preset:<9}{args.batch:>6}{args.games:>7}{args.pairs:>6}"
                      f"{work / statistics.median(rb):>16.0f}{work / statistics.median(ra):>15.0f}"
                      f"{statistics.median(ratios):>16.3f}{f'{lo:.3f}-{hi:.3f}':>16}", flush=True)  # fmt: skip
    finally:
        before.close()
        after.close()
    return 0


def _has_taskset() -> bool:
    from shutil import which

    return which("taskset") is not None


if __name__ == "__main__":
    sys.exit(main())
