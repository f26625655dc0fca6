"""PPO on Ray RLlib (new API stack) for Cluedo: batched learner-vs-players, or multi-agent self-play.

    python -m cluedo_env.training --backend rllib --config configs/rllib_vs_heuristic.yaml     # local Ray
    python -m cluedo_env.training --backend rllib --config configs/rllib_vs_heuristic.yaml --address auto  # a cluster
    python -m cluedo_env.training --backend rllib --config configs/rllib_vs_heuristic.yaml --resume  # from run_dir
    python -m cluedo_env.training --backend rllib --config configs/rllib_vs_heuristic.yaml --bench 1 2  # sampling rate

Checkpoints are ``Algorithm.save_to_path`` folders ``run_dir/checkpoints/iter_NNNNNN``;
``run_dir/latest.txt`` names the newest. ``rllib:run_dir/checkpoints/iter_NNNNNN`` is a player for
``scripts/evaluate.py`` once :mod:`cluedo_env.training.rllib.module` is imported (this module imports it).
The config's keys and setups: :mod:`cluedo_env.training.rllib.config`; the algorithm it builds:
:mod:`cluedo_env.training.rllib.algorithm`.
See docs/training.md for the cluster launch and docs/benchmarks.md for the measured throughput.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import ray
from cluedo_env.agents.play import tournament
from cluedo_env.training import dispatch
from cluedo_env.training.precision import PRECISIONS
from cluedo_env.training.resume_check import check_same_run
from cluedo_env.training.rllib import config as rllib_config
from cluedo_env.training.rllib.algorithm import build_config, init_ray
from cluedo_env.training.rllib.bench import bench, breakdown
from cluedo_env.training.rllib.config import LEARNER_DEFAULTS, SAMPLERS, RllibConfig, load_config
from cluedo_env.training.rllib.module import trust_checkpoint

from cluedo_env.errors import CheckpointError, TrainConfigError, UsageError, run_cli
from cluedo_env.files import check_writable_dir, clean_stale_tmp, lock_dir, write_text_atomic
from cluedo_env.options import ArgumentParser, int_in


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The checkpoint ``latest.txt`` names, if that folder exists; else the newest ``checkpoints/iter_*``."""
    run_dir = Path(run_dir)
    marker = run_dir / "latest.txt"
    if marker.is_file():
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
        path = Path(text) if Path(text).is_absolute() else run_dir / text
        if text and path.is_dir():
            return path
    found = sorted(p for p in (run_dir / "checkpoints").glob("iter_*") if p.is_dir())
    return found[-1] if found else None


def resume_candidates(run_dir: str | Path) -> list[Path]:
    """Checkpoints to try on ``--resume``, best first: the one ``latest.txt`` names, then the others newest first."""
    run_dir = Path(run_dir)
    first = latest_checkpoint(run_dir)
    rest = sorted((p for p in (run_dir / "checkpoints").glob("iter_*") if p.is_dir()), reverse=True)
    return ([first] if first is not None else []) + [p for p in rest if p != first]


def save(algo: Any, run_dir: str | Path, iteration: int) -> Path:
    run_dir = Path(run_dir)
    rel = Path("checkpoints") / f"iter_{iteration:06d}"
    algo.save_to_path(str((run_dir / rel).resolve()))
    trust_checkpoint(run_dir / rel)  # the pickles this run wrote itself: its evaluations load them
    tmp = run_dir / ".latest.txt.tmp"
    tmp.write_text(str(rel) + "\n")
    tmp.replace(run_dir / "latest.txt")
    return run_dir / rel


def _main_return(result: dict[str, Any]) -> float | None:
    """Mean episode return of the learning module (``main`` in self-play; the one module of vs_bots)."""
    er = result.get("env_runners", {})
    value = er.get("module_episode_returns_mean", {}).get("main", er.get("episode_return_mean"))
    return None if value is None else float(value)


def evaluate(checkpoint: Path, cfg: RllibConfig, out: Path) -> dict[str, Any]:
    """The checkpoint's ``main`` against ``eval.opponents``, seats rotated (:mod:`cluedo_env.agents.play.tournament`),
    on the rules it trained on (``env:``).

    Writes ``tournament.md``/``.json``/``.png`` into ``out`` and returns the summary.
    """
    config = cfg.rules_config
    opponents = list(cfg.eval.opponents or ["random"] * (config.players - 1))
    match = tournament.play_match(config, [f"rllib:{checkpoint}", *opponents], cfg.eval.games,
                                  seed=cfg.seed)  # fmt: skip
    summary = tournament.summarize(match, config)
    tournament.write_tournament(summary, Path(out))
    return summary


def _node_id(env_runner: Any = None) -> str:
    return ray.get_runtime_context().get_node_id()


def env_runner_nodes(algo: Any) -> list[str]:
    """The Ray node id of each remote env runner (where the sampling runs; the local one if none)."""
    nodes = algo.env_runner_group.foreach_env_runner(_node_id, local_env_runner=False)
    return list(nodes) or [_node_id()]


def train(cfg: RllibConfig, *, address: str | None = None, resume: bool = False, log=print) -> dict[str, Any]:
    """Train for ``cfg.iterations`` iterations (counting those of a resumed run); returns a summary.

    The run_dir is this run's while it trains (a second run into it is refused with the holder's pid), and
    a run_dir with checkpoints is continued only with ``resume``, never mixed with a new run's.
    """
    if not isinstance(cfg, RllibConfig):
        raise TrainConfigError(f"train takes an RllibConfig, got a {type(cfg).__name__} (build one with "
                               "load_config(path, **overrides) or RllibConfig.from_dict)")  # fmt: skip
    with lock_dir(cfg.run_dir, "run_dir"):
        if not resume and resume_candidates(cfg.run_dir):
            raise TrainConfigError(f"run_dir {cfg.run_dir!r} holds an earlier run's checkpoints (continue it "
                                   "with --resume, or choose another run_dir)")  # fmt: skip
        return _train(cfg, address=address, resume=resume, log=log)


# What may change between an RLlib run and its --resume: how long it trains and how it is saved and watched.
SAFE_TO_CHANGE = ("iterations", "checkpoint_every", "eval", "run_dir", "ray")
RUN_CONFIG = "config.json"  # the config a run started with, in its run_dir


def check_resume(cfg: RllibConfig, run_dir: Path) -> None:
    """Refuse a ``--resume`` whose config differs from the one ``run_dir``'s run started with (``config.json``).

    A run saved before every ``learner:`` key was written holds only the keys it set: the others compare as their
    defaults (:data:`~cluedo_env.training.rllib.config.LEARNER_DEFAULTS`)."""
    try:
        saved = json.loads((run_dir / RUN_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = None  # a run from before configs were saved (or a damaged file): nothing to compare
    if isinstance(saved, dict) and isinstance(saved.get("learner"), dict):
        saved = {**saved, "learner": {**LEARNER_DEFAULTS, **saved["learner"]}}
    check_same_run(saved, cfg.to_dict(), run_dir, SAFE_TO_CHANGE)


def _train(cfg: RllibConfig, *, address: str | None, resume: bool, log) -> dict[str, Any]:
    run_dir = Path(cfg.run_dir)
    if resume:
        check_resume(cfg, run_dir)  # before Ray starts
    init_ray(cfg, address)
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        write_text_atomic(run_dir / RUN_CONFIG, json.dumps(cfg.to_dict(), indent=1, default=str) + "\n")
    algo = build_config(cfg).build_algo()
    start = 0
    progress = run_dir / "progress.jsonl"
    if resume:
        clean_stale_tmp(run_dir, log)
        for ckpt in resume_candidates(run_dir):
            try:
                algo.restore_from_path(str(ckpt.resolve()))
            except Exception as exc:  # noqa: BLE001 - any failure to restore means: try the next older one
                log(f"resume: skipped {ckpt} ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
                continue
            start = int(algo.iteration)
            log(f"resumed from {ckpt} at iteration {start}")
            break
        else:
            algo.stop()
            raise CheckpointError(f"--resume: no checkpoint in {run_dir} restores (start without --resume)")
    summary: dict[str, Any] = {"run_dir": str(run_dir), "checkpoint": None, "iterations": [],
                               "env_runner_nodes": env_runner_nodes(algo)}  # fmt: skip
    ckpt = None
    for it in range(start + 1, cfg.iterations + 1):
        t0 = time.perf_counter()
        result = algo.train()
        dt = time.perf_counter() - t0
        er = result.get("env_runners", {})
        row = {"iteration": it, "seconds": round(dt, 2),
               "env_steps": er.get("num_env_steps_sampled"), "agent_steps": er.get("num_agent_steps_sampled"),
               "episodes": er.get("num_episodes"), "main_return": _main_return(result),
               "env_steps_lifetime": er.get("num_env_steps_sampled_lifetime")}  # fmt: skip
        timers = result.get("timers", {})
        for key, name in (("env_runner_sampling_timer", "sample_s"), ("learner_update_timer", "learn_s")):
            if isinstance(timers.get(key), (int, float)):  # RLlib's own timers: sampling, and the learner update
                row[name] = round(float(timers[key]), 2)
        if "league_snapshots" in result:
            row["league_snapshots"] = result["league_snapshots"]
        summary["iterations"].append(row)
        with progress.open("a") as f:
            f.write(json.dumps(row, default=str) + "\n")
        log(json.dumps(row, default=str))
        last = it == cfg.iterations
        if last or (cfg.checkpoint_every and it % cfg.checkpoint_every == 0):
            ckpt = save(algo, run_dir, it)
            summary["checkpoint"] = str(ckpt)
            log(f"checkpoint {ckpt}")
            every = cfg.eval.every
            if every and (it % every == 0 or last):
                res = evaluate(ckpt, cfg, run_dir / f"eval_{it:06d}")
                summary.setdefault("evals", []).append({"iteration": it, "win_rate": res["entries"][0]["win_rate"]})
    algo.stop()
    return summary


def main(argv: list[str] | None = None, prog: str | None = None) -> dict[str, Any]:
    ap = ArgumentParser(prog=prog, description=__doc__.splitlines()[0],
                        epilog=rllib_config.__doc__.split("\n\n", 1)[1] + "\n\n" + __doc__.split("\n\n", 1)[1],
                        formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--config", required=True, metavar="YAML", help="a configs/rllib_*.yaml file")
    dispatch.add_backend_argument(ap, "rllib")
    ap.add_argument("--address", default=None, help="an existing Ray cluster (e.g. 'auto' or 'ray://head:10001')")
    ap.add_argument("--resume", action="store_true",
                    help="go on from run_dir/latest.txt, or the newest checkpoint that restores")  # fmt: skip
    ap.add_argument("--iterations", type=int_in(1, 10**9), default=None, metavar="N",
                    help="override the config's iterations")  # fmt: skip
    ap.add_argument("--run-dir", default=None, metavar="DIR", help="override the config's run_dir")
    ap.add_argument("--bench", nargs="+", type=int_in(0, 4096), metavar="N",
                    help="sampling rate with N env runners (0: the local one); no training")  # fmt: skip
    ap.add_argument("--sampler", choices=SAMPLERS, default=None,
                    help="override the config's sampler (vs_bots: rllib = RLlib's env runner, bulk = the bulk one)")
    ap.add_argument("--bench-steps", type=int_in(1, 10**9), default=4000, help="env steps per runner for --bench")
    ap.add_argument("--bench-from", default=None, metavar="CHECKPOINT",
                    help="--bench with the modules of this checkpoint of the config (a trained policy's games)")
    ap.add_argument("--precision", choices=list(PRECISIONS), default=None, help="override the config's precision")
    args = ap.parse_args(argv)
    dispatch.check_backend(args.backend, "rllib")
    given = (("iterations", args.iterations), ("run_dir", args.run_dir), ("sampler", args.sampler),
             ("precision", args.precision))  # fmt: skip
    overrides = {k: v for k, v in given if v is not None}
    cfg = load_config(args.config, **overrides)
    try:
        check_writable_dir(cfg.run_dir, "run_dir")
    except UsageError as exc:
        raise TrainConfigError(str(exc)) from None
    if args.resume and not resume_candidates(cfg.run_dir):
        raise CheckpointError(f"--resume: no checkpoint in {cfg.run_dir} (start without --resume)")
    if args.bench_from and not Path(args.bench_from).is_dir():
        raise CheckpointError(f"--bench-from {args.bench_from}: no such checkpoint folder (an algorithm checkpoint, "
                              "e.g. runs/NAME/checkpoints/iter_000064)")  # fmt: skip
    if args.bench:
        init_ray(cfg, args.address)
        parts = breakdown(cfg, args.bench_steps) if cfg.setup == "vs_bots" else None
        return {"breakdown": parts, "bench": bench(cfg, args.bench, args.bench_steps, checkpoint=args.bench_from)}
    return train(cfg, address=args.address, resume=args.resume)


if __name__ == "__main__":
    sys.exit(run_cli(main))
