"""Benchmark the PettingZoo AEC env (one game, batch of one) under random legal play.

    .venv/bin/python scripts/bench_aec.py                    # default grid, about 2 minutes
    .venv/bin/python scripts/bench_aec.py --quick            # classic:4 only
    .venv/bin/python scripts/bench_aec.py --configs classic:4 cards:3 --seconds 3 --repeats 5
    .venv/bin/python scripts/bench_aec.py --profile          # cProfile of env() on classic:4

Each measurement plays for ``--seconds`` and is repeated ``--repeats`` times; the table gives the
median and the best of the repeats, by the wall clock (``time.perf_counter``), and the best rate per
CPU second of this process (``time.process_time``), which is what a machine shared with other jobs
still shows of the code's own speed. Loops, all fetching the observation and the action mask of the
agent to act at every step:

* **env()**: ``cluedo_env.env(...)``, the wrapped env (OrderEnforcing, AssertOutOfBounds,
  TerminateIllegal): ``obs = env.last()[0]``, a random legal action from ``obs["action_mask"]``,
  ``env.step(action)``, and ``env.reset()`` as soon as the game is over, as PettingZoo's own
  ``pettingzoo.test.performance_benchmark`` does;
* **raw_env**: the same loop on ``cluedo_env.raw_env(...)``;
* **env() agent_iter**: the canonical ``for agent in env.agent_iter(): env.last(); env.step(...)``
  loop, which after each game also steps every agent once with ``None`` (observing it) before the
  next ``reset()``;
* **engine B=1**: for scale, the ``VectorEngine`` the env steps, at batch size 1, alone (the same
  policy from the engine's sampler, ``step``, ``legal_action_mask``, ``observe()``).

Policies: ``full`` (the headline) is the benchmark player of ``scripts/bench.py``
(``VectorEngine.sample_full_game_actions``), here drawn from the mask: uniform among the legal
actions, but a drawn accusation is kept only on a 1% coin, else END_TURN (or ROLL at a turn's
start, or another legal non-accusation). Games run their full length (~440 decisions with 4
players) through rolls, moves, suggestions and refutations. ``uniform`` draws uniformly among the
legal actions; then nearly every turn starts with an accusation (324 of ~325 legal actions) and a
4-player game lasts 3 decisions, so that loop measures resets and accusations.

agent-steps/s counts decisions: steps with a legal action (``None`` steps of finished agents are
not counted, though the agent_iter loop spends time on them). The random draw uses ``random.Random``
on ``mask.nonzero()[0]``; ``env.action_space(agent).sample(mask)`` draws from the same distribution
but costs gymnasium ~10 us more per step, which is the policy's cost, not the env's.
Results also go to ``--json`` (default ``results/bench_aec.json``) with the machine and its load.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import cluedo_env
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.errors import run_cli
from cluedo_env.options import ArgumentParser
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import RulesConfig

DEFAULT_CONFIGS = ["classic:4", "classic:6", "seed000:4", "cards:4", "classic:4:uniform"]
TARGET = ("classic:4", "full", 50_000)  # env(), observation and mask every step, full-length games
KEEP_ACCUSATION = 0.01  # as VectorEngine.sample_full_game_actions
LOOPS = {"env": "env()", "raw_env": "raw_env", "env_agent_iter": "env() agent_iter", "engine_b1": "engine B=1"}


def parse_config(spec: str) -> tuple[str, dict[str, Any], str]:
    """``preset[:players[:policy]]`` -> (label, env kwargs, policy)."""
    preset, players, policy = (spec.split(":") + ["", ""])[:3]
    kwargs = {"preset": preset, "players": int(players) if players else 4}
    policy = policy or "full"
    if policy not in ("uniform", "full"):
        raise SystemExit(f"unknown policy {policy!r} in {spec!r}: use full or uniform")
    return f"{preset}:{kwargs['players']}" + ("" if policy == "full" else f":{policy}"), kwargs, policy


def machine_info() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def chooser(policy: str, seed: int) -> Any:
    """A function mask -> action: uniform among the legal actions, or the ``full`` player."""
    rand = random.Random(seed).random

    def uniform(mask: np.ndarray) -> int:
        legal = mask.nonzero()[0]
        return int(legal[int(rand() * len(legal))])

    def full(mask: np.ndarray) -> int:
        legal = mask.nonzero()[0]
        action = int(legal[int(rand() * len(legal))])
        if action >= A.ACCUSE0 and rand() >= KEEP_ACCUSATION:
            if mask[A.END_TURN]:
                return A.END_TURN
            if mask[A.ROLL]:
                return A.ROLL
            k = int(np.searchsorted(legal, A.ACCUSE0))
            if k:
                return int(legal[int(rand() * k)])
        return action

    return uniform if policy == "uniform" else full


def play(env: Any, policy: str, seconds: float, seed: int) -> tuple[int, int, float, float]:
    """PettingZoo's performance-benchmark loop: (decisions, games, wall seconds, CPU seconds)."""
    choose = chooser(policy, seed)
    env.reset(seed=seed)
    steps = games = 0
    c0, t0 = time.process_time(), time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _ in range(200):
            env.step(choose(env.last()[0]["action_mask"]))
            steps += 1
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                games += 1
                env.reset()
        now = time.perf_counter()
        if now >= deadline:
            return steps, games, now - t0, time.process_time() - c0


def play_agent_iter(env: Any, policy: str, seconds: float, seed: int) -> tuple[int, int, float, float]:
    """The canonical agent_iter loop, dead steps included: (decisions, games, wall seconds, CPU seconds)."""
    choose = chooser(policy, seed)
    env.reset(seed=seed)
    steps = games = 0
    c0, t0 = time.process_time(), time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(choose(obs["action_mask"]))
            steps += 1
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            return steps, games, now - t0, time.process_time() - c0
        env.reset()


def play_engine(cfg: RulesConfig, policy: str, seconds: float, seed: int) -> tuple[int, int, float, float]:
    """VectorEngine at batch 1 with mask and observation: (decisions, games, wall, CPU)."""
    eng = VectorEngine(cfg, batch_size=1, autoreset=True)
    eng.reset(seed=seed)
    sample = eng.sample_full_game_actions if policy == "full" else eng.sample_random_actions
    steps = games = 0
    c0, t0 = time.process_time(), time.perf_counter()
    deadline = t0 + seconds
    while True:
        result = eng.step(sample())
        _ = eng.legal_action_mask
        _ = eng.observe()
        games += int(result.terminated[0] or result.truncated[0])
        steps += 1
        now = time.perf_counter()
        if now >= deadline:
            return steps, games, now - t0, time.process_time() - c0


def measure(label: str, kwargs: dict[str, Any], policy: str, args: argparse.Namespace) -> dict[str, Any]:
    seconds, seed = args.seconds, args.seed
    loops = {
        "env": lambda: play(cluedo_env.env(**kwargs), policy, seconds, seed),
        "raw_env": lambda: play(cluedo_env.raw_env(**kwargs), policy, seconds, seed),
        "env_agent_iter": lambda: play_agent_iter(cluedo_env.env(**kwargs), policy, seconds, seed),
    }
    if not args.no_engine:
        cfg = RulesConfig.from_preset(kwargs["preset"], players=kwargs["players"])
        loops["engine_b1"] = lambda: play_engine(cfg, policy, seconds, seed)
    play(cluedo_env.env(**kwargs), policy, min(0.3, seconds), seed)  # warm up (board tables, caches)
    out: dict[str, Any] = {"config": label, "kwargs": kwargs, "policy": policy}
    for name, run in loops.items():
        rates, cpu_rates, per_game = [], [], []
        for _ in range(args.repeats):
            steps, games, wall, cpu = run()
            rates.append(steps / wall)
            cpu_rates.append(steps / cpu)
            per_game.append(steps / games if games else float("nan"))
        out[name] = {
            "median": statistics.median(rates),
            "best": max(rates),
            "all": rates,
            "per_cpu_second_best": max(cpu_rates),
            "per_cpu_second_all": cpu_rates,
            "decisions_per_game": statistics.median(per_game),
        }
    return out


def print_table(results: list[dict[str, Any]]) -> None:
    print("agent-steps/s: decisions per second with observation + action mask at every step")
    print("wall clock median / best of repeats; [per CPU second of this process, best]")
    line = f"{'config':<16}" + "".join(f"{LOOPS[c]:>28}" for c in LOOPS) + f"{'decisions/game':>16}"
    print(line)
    print("-" * len(line))
    for r in results:
        cells = ""
        for c in LOOPS:
            m = r.get(c)
            cells += f"{'-':>28}" if m is None else (
                f"{m['median']:>10,.0f} /{m['best']:>7,.0f} [{m['per_cpu_second_best']:>6,.0f}]")  # fmt: skip
        print(f"{r['config']:<16}{cells}{r['env']['decisions_per_game']:>16.1f}")


def profile(kwargs: dict[str, Any], policy: str, seconds: float) -> None:
    env = cluedo_env.env(**kwargs)
    prof = cProfile.Profile()
    prof.enable()
    play(env, policy, seconds, 0)
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(30)
    print(text.getvalue())


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--configs", nargs="+", default=DEFAULT_CONFIGS, help="preset:players[:policy], policy full (default)|uniform"
    )
    ap.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="classic:4 only, 1 s x 3")
    ap.add_argument("--no-engine", action="store_true", help="skip the VectorEngine B=1 column")
    ap.add_argument("--profile", action="store_true", help="cProfile env() on the first config and exit")
    ap.add_argument("--json", default="results/bench_aec.json", help="where to write the results ('' for nowhere)")
    args = ap.parse_args(argv)
    if args.quick:
        args.configs, args.seconds = ["classic:4"], 1.0
    specs = [parse_config(c) for c in args.configs]
    if args.profile:
        profile(specs[0][1], specs[0][2], args.seconds)
        return 0
    results = [measure(label, kw, policy, args) for label, kw, policy in specs]
    print_table(results)
    for r in results:
        if (r["config"], r["policy"]) == TARGET[:2]:
            m = r["env"]
            print(f"target: env() on {TARGET[0]}, full-length games, >= {TARGET[2]:,} agent-steps/s: best "
                  f"{m['best']:,.0f} wall-clock ({'met' if m['best'] >= TARGET[2] else 'NOT met'}), "
                  f"{m['per_cpu_second_best']:,.0f} per CPU second")  # fmt: skip
    info = machine_info()
    print(f"machine: {info['cpus_usable']} usable CPUs, load average {info['load_average']}, Python {info['python']}")
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        settings = {"configs": args.configs, "seconds": args.seconds, "repeats": args.repeats, "seed": args.seed}
        path.write_text(json.dumps({"machine": info, "settings": settings, "results": results}, indent=1) + "\n")
        print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
