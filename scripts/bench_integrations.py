"""Collection speed through TorchRL: the native batched env beside the generic PettingZoo route.

    python scripts/bench_integrations.py                       # N = 1,024, 4 players, random opponents
    python scripts/bench_integrations.py --batch 256 --batches 3 --out results.json

Every route is driven by TorchRL's own single-process collector (``torchrl.collectors.Collector``, the
class that was ``SyncDataCollector`` before torchrl 0.14) with a random masked policy (uniform among the
legal actions of each row's ``action_mask``), and timed after one warm-up batch:

* ``native``: :class:`cluedo_env.training.torchrl_env.CluedoTorchRLEnv`, N games in one engine, a frame is
  one learner decision (the opponents' moves up to its next decision included);
* ``native, compact_obs``: the same with ``Collector(compact_obs=True)``, which stores no ``("next",
  "observation")`` copy (the int8 observation is most of a frame's bytes);
* ``pettingzoo``: ``PettingZooWrapper(cluedo_env.env(), use_mask=True)``, one game, a frame is one AEC step
  (one seat's action; every seat is played by the random policy).

The torch threads are set to ``--torch-threads`` (1 by default: on a small shared machine torch's own
threads contend with the engine's and slow a step down). Timings only: the tests run this script with
tiny sizes and assert nothing about speed.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.files import write_atomic  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402


def masked_random_policy(generator: Any = None) -> Any:
    """A policy for any TorchRL env with ``action_mask`` entries: a uniform legal action beside each mask.

    A mask row that allows nothing (a seat not to act in a multi-agent tensordict) gets action 0, which the
    env ignores.
    """
    import torch
    from cluedo_env.training.torchrl_env import sample_masked

    def policy(td: Any) -> Any:
        for key in list(td.keys(include_nested=True, leaves_only=True)):
            name = key if isinstance(key, str) else key[-1]
            if name != "action_mask" or (not isinstance(key, str) and key[0] == "next"):
                continue
            mask = td.get(key)
            none = ~mask.any(-1, keepdim=True)
            action = sample_masked(mask | (none & (torch.arange(mask.shape[-1]) == 0)), generator)
            td.set(key[:-1] + ("action",) if isinstance(key, tuple) else "action", action)
        return td

    return policy


def _collect(env: Any, frames_per_batch: int, batches: int, **collector_kwargs: Any) -> dict[str, Any]:
    """Frames timed, per wall-clock second and per CPU second of this process: ``batches`` batches after one
    warm-up batch. On a shared machine the CPU-time rate is what one free core would give."""
    import torch
    from torchrl.collectors import Collector

    collector = Collector(env, masked_random_policy(torch.Generator().manual_seed(0)),
                          frames_per_batch=frames_per_batch, total_frames=frames_per_batch * (batches + 1),
                          auto_register_policy_transforms=False, **collector_kwargs)  # fmt: skip
    frames, t0, c0 = 0, 0.0, 0.0
    for i, batch in enumerate(collector):
        if i == 0:
            t0, c0 = time.perf_counter(), time.process_time()
            continue
        frames += batch.numel()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    collector.shutdown()
    return {"frames": frames, "frames_per_s": round(frames / seconds), "frames_per_cpu_s": round(frames / cpu)}


def bench_native(batch: int, steps: int, batches: int, compact_obs: bool, players: int) -> dict[str, Any]:
    from cluedo_env.training.torchrl_env import CluedoTorchRLEnv

    env = CluedoTorchRLEnv(batch, seed=0, seat="random", players=players)
    rates = _collect(env, batch * steps, batches, compact_obs=compact_obs)
    return {"route": "native, compact_obs" if compact_obs else "native", "batch": batch,
            "frame": "learner decision", **rates}  # fmt: skip


def bench_pettingzoo(frames_per_batch: int, batches: int, players: int) -> dict[str, Any]:
    from torchrl.envs import PettingZooWrapper

    import cluedo_env

    env = PettingZooWrapper(cluedo_env.env(players=players), use_mask=True, seed=0)
    rates = _collect(env, frames_per_batch, batches)
    return {"route": "pettingzoo", "batch": 1, "frame": "AEC step (one seat)", **rates}


def table(rows: list[dict[str, Any]]) -> str:
    head = f"{'route':<22} {'batch':>6} {'frame':<20} {'frames':>9} {'frames/s':>10} {'frames/CPU-s':>13}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['route']:<22} {r['batch']:>6} {r['frame']:<20} {r['frames']:>9} {r['frames_per_s']:>10,} "
                     f"{r['frames_per_cpu_s']:>13,}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1024, help="games in the native env (default 1024)")
    ap.add_argument("--steps", type=int, default=32, help="native env steps per collected batch (default 32)")
    ap.add_argument("--batches", type=int, default=4, help="timed batches after a warm-up one (default 4)")
    ap.add_argument("--pz-frames", type=int, default=2000, help="frames per batch of the PettingZoo route")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    for name in ("batch", "steps", "batches", "pz_frames", "torch_threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    import torch

    torch.set_num_threads(args.torch_threads)
    rows = [bench_native(args.batch, args.steps, args.batches, False, args.players),
            bench_native(args.batch, args.steps, args.batches, True, args.players),
            bench_pettingzoo(args.pz_frames, args.batches, args.players)]  # fmt: skip
    print(table(rows), flush=True)
    if args.out:
        meta = {"command": "python scripts/bench_integrations.py " + " ".join(argv or sys.argv[1:]),
                "torch_threads": args.torch_threads, "players": args.players}  # fmt: skip
        write_atomic(args.out, lambda f: json.dump({"meta": meta, "rows": rows}, f, indent=1))
    return rows


if __name__ == "__main__":
    sys.exit(run_cli(main))
