"""Speed of the whole MaskablePPO loop (collection + update): learner steps per second, per setting.

    python scripts/bench_training.py --config configs/train_cards_vs_heuristic.yaml
    python scripts/bench_training.py --config configs/experiments/train_vs_heuristic_factored_finetune.yaml \\
        --precision float32 bfloat16 --threads 1 2 --iterations 4

The training loop (learner steps/s against heuristic players) is two different workloads: collection (the env,
the opponents, the learner's notebook, the policy's forward passes) and the PPO update (the network's forward and
backward passes). This runs a
training config as ``cluedo_env.training.sb3.train`` builds it (env, policy, PPO settings; a fresh network unless
``--keep-init``: the network costs the same, but a trained policy plays longer games), times each PPO
iteration with SB3's rollout callbacks, and prints one row per (precision, torch threads):

- ``collect s``: rollout collection (``n_steps`` x ``num_envs`` learner steps), per iteration;
- ``update s``: the rest of the iteration, i.e. the PPO update (``n_epochs`` passes over the rollout);
- ``steps/s``: learner steps per second of collection + update, the loop's speed without evaluations and
  checkpoints (a run's ``state.json`` gives the speed with them: they add the evaluation games);
- the first iteration is a warm-up (numba's compiled kernels load, caches fill) and is not counted.

Nothing is written to the config's ``run_dir`` (a temporary folder is used).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402


def bench(config: str, precision: str, threads: int, iterations: int, keep_init: bool = False) -> dict:
    """One setting: ``iterations`` timed PPO iterations after one warm-up iteration."""
    import torch
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.train import Trainer
    from stable_baselines3.common.callbacks import BaseCallback

    with tempfile.TemporaryDirectory() as tmp:
        over = {"precision": precision} if precision != "float32" else {}  # (so it also runs on older checkouts)
        if not keep_init:
            over["init_from"] = None
        cfg = load_train_config(config, run_dir=tmp, torch_threads=threads, **over)
        trainer = Trainer(cfg, progress=False)
        model = trainer._build()
        torch.set_num_threads(threads)
        marks: list[tuple[float, float]] = []  # (rollout start, rollout end) per iteration

        class Clock(BaseCallback):
            def _on_rollout_start(self) -> None:
                marks.append((time.perf_counter(), 0.0))

            def _on_rollout_end(self) -> None:
                marks[-1] = (marks[-1][0], time.perf_counter())

            def _on_step(self) -> bool:
                return True

        per_iteration = model.n_steps * model.n_envs
        model.learn((iterations + 1) * per_iteration, callback=Clock(), progress_bar=False)
        end = time.perf_counter()
        starts = [m[0] for m in marks] + [end]  # the update of iteration i ends where rollout i + 1 starts
        collect = [m[1] - m[0] for m in marks][1:]
        update = [starts[i + 1] - marks[i][1] for i in range(len(marks))][1:]
        trainer.env.close()
    c, u = statistics.median(collect), statistics.median(update)
    return {"config": Path(config).name, "precision": precision, "threads": threads, "steps": per_iteration,
            "collect_s": c, "update_s": u, "steps_per_s": per_iteration / (c + u),
            "collect_steps_per_s": per_iteration / c}  # fmt: skip


def main(argv: list[str] | None = None) -> list[dict]:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", nargs="+", default=["configs/train_cards_vs_heuristic.yaml"], metavar="YAML")
    ap.add_argument("--precision", nargs="+", choices=["float32", "bfloat16"], default=["float32", "bfloat16"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2], help="torch threads (default: 1 2)")
    ap.add_argument("--iterations", type=int, default=3, help="timed PPO iterations per setting (median)")
    ap.add_argument("--keep-init", action="store_true",
                    help="start from the config's init_from weights (a trained policy plays longer games than a "
                         "fresh one, so collection is slower per learner step); default: a fresh network")  # fmt: skip
    args = ap.parse_args(argv)
    import torch

    print(f"# python scripts/bench_training.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    try:
        from cluedo_env.training.precision import fast_bfloat16

        hardware = "yes" if fast_bfloat16() else "no (emulated: slower)"
    except ImportError:  # a checkout from before training/sb3/lean_policy.py
        hardware = "?"
    print(f"# torch {torch.__version__}; bfloat16 in hardware: {hardware}")
    head = f"{'config':44s} {'precision':9s} {'threads':>7s} {'steps':>6s} {'collect s':>9s} {'update s':>8s}"
    print(head + f" {'steps/s':>8s} {'collect steps/s':>15s}")
    rows = []
    for config in args.config:
        for precision in args.precision:
            for threads in args.threads:
                r = bench(config, precision, threads, args.iterations, args.keep_init)
                rows.append(r)
                cells = f"{r['collect_s']:9.2f} {r['update_s']:8.2f} {r['steps_per_s']:8.0f}"
                print(f"{r['config']:44s} {precision:9s} {threads:7d} {r['steps']:6d} {cells} "
                      f"{r['collect_steps_per_s']:15.0f}", flush=True)  # fmt: skip
    return rows


if __name__ == "__main__":
    sys.exit(run_cli(main))
