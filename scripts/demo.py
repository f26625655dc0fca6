"""End-to-end demo: train a Cluedo player briefly against random players, evaluate it, print the table.

    python scripts/demo.py                                   # a few minutes on 2 CPU cores
    python scripts/demo.py --timesteps 4096 --games 40       # a few seconds: does it all work?

Steps (all seeded, ``--seed``):

1. MaskablePPO (sb3-contrib) learns to play one seat of 4-player classic Cluedo against three
   random players, with the settings of ``configs/train_vs_random.yaml`` (macro moves, learner
   seat drawn per game), for ``--timesteps`` learner steps; the run goes to ``OUT/train``
   (``model.zip``, checkpoints, TensorBoard logs, ``monitor.csv``) via :mod:`cluedo_env.training.sb3.train`.
2. The tournament evaluator (``scripts/evaluate.py``, seats rotated) plays ``--games`` games of
   the trained checkpoint against three random players, then the same number with a random
   player in its place (the baseline: 25% is chance); reports go to ``OUT/eval*``.
3. The table (win rates with 95% Wilson intervals) is printed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.files import check_writable_dir  # noqa: E402
from cluedo_env.options import ArgumentParser, int_in, seed_type  # noqa: E402


def _say(text: str) -> None:
    print(text, flush=True)


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timesteps", type=int_in(1, 10**12), default=200_000,
                    help="learner steps of training (default 200000)")  # fmt: skip
    ap.add_argument("--games", type=int_in(1, 10**8), default=1000, help="evaluation games (default 1000)")
    ap.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    ap.add_argument("--seed", type=seed_type, default=0, help="seed of training and evaluation (default 0)")
    ap.add_argument("--num-envs", type=int_in(1, 1 << 16), default=None,
                    help="games played at once in training (default 512)")  # fmt: skip
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    check_writable_dir(args.out, "--out")  # before minutes of training, not after

    import cluedo_env.training.sb3.checkpoints  # noqa: F401 - registers the ckpt: prefix for the evaluator
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.train import Trainer

    from cluedo_env.cli import evaluate

    out = Path(args.out)
    over: dict = {"run_dir": str(out / "train"), "total_timesteps": args.timesteps, "seed": args.seed,
                  "eval": {"every": 0, "games": 0}}  # fmt: skip
    cfg = load_train_config(ROOT / "configs" / "train_vs_random.yaml", **over)
    num_envs = args.num_envs if args.num_envs is not None else cfg.env.num_envs
    n_steps = cfg.ppo.n_steps
    if args.timesteps < num_envs * n_steps:  # a tiny run still makes at least one PPO update
        n_steps = max(1, args.timesteps // num_envs)
    cfg = cfg.with_overrides(env={"num_envs": num_envs}, checkpoint_every=max(cfg.checkpoint_every, args.timesteps),
                             ppo={"n_steps": n_steps, "batch_size": min(cfg.ppo.batch_size, num_envs * n_steps)})
    env = cfg.env

    _say(f"[1/3] training MaskablePPO for {args.timesteps:,} learner steps against 3 random players "
         f"({env.preset}, {env.players} players, {env.num_envs} games at once, seed {args.seed}) "
         f"-> {cfg.run_dir}")  # fmt: skip
    t0 = time.perf_counter()
    trained = Trainer(cfg, resume=False, progress=not args.no_progress).run()
    t_train = time.perf_counter() - t0
    model = trained["model"]

    common = ["--games", str(args.games), "--preset", env.preset, "--seed", str(args.seed)]
    if args.no_progress:
        common.append("--no-progress")
    _say(f"[2/3] tournament: ckpt:{model} vs random x3, {args.games} games, seats rotated")
    t1 = time.perf_counter()
    result = evaluate.main(["--players", f"ckpt:{model}", "random", "random", "random", *common,
                            "--out", str(out / "eval")])  # fmt: skip
    _say("      baseline: a random player in the same seat (chance = 25%)")
    base = evaluate.main(["--players", "random", "random", "random", "random", *common,
                          "--out", str(out / "eval_baseline")])  # fmt: skip
    t_eval = time.perf_counter() - t1

    me, rnd = result["entries"][0], base["entries"][0]
    rows = [("trained (ckpt)", me), ("random (baseline)", rnd)]
    _say(f"\n[3/3] results: 4-player {env.preset}, against three random players, {result['games']} games each")
    _say("| player | win rate | 95% CI | wins |")
    _say("|---|---|---|---|")
    for label, e in rows:
        lo, hi = e["ci95"]
        ci = f"{100 * lo:.1f}-{100 * hi:.1f}%"
        _say(f"| {label} | {100 * e['win_rate']:.1f}% | {ci} | {e['wins']} / {result['games']} |")
    _say(f"\ntraining {t_train:.0f} s, evaluation {t_eval:.0f} s; model {model}; reports in {out}/eval*")
    return {"train": trained, "eval": result, "baseline": base, "train_s": t_train, "eval_s": t_eval}


if __name__ == "__main__":
    sys.exit(run_cli(main))
