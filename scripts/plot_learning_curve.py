"""Learning curve of a training run: training-episode win rate and evaluator win rates (95% CI).

    python scripts/plot_learning_curve.py runs/vs_random --out docs/learning_curve_vs_random.png

Reads ``run_dir/monitor.csv`` (VecMonitor: one row per learner episode: reward, length, time) and
``run_dir/evals.jsonl`` (periodic tournament evaluations). The training curve is the share of
episodes won (reward +1) in windows of learner steps; episodes lost by the learner's own
elimination count as losses. The evaluation points use the evaluator's seat rotation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from cluedo_env.errors import run_cli
from cluedo_env.options import ArgumentParser


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default=None)
    ap.add_argument("--bins", type=int, default=40)
    args = ap.parse_args(argv)
    run = Path(args.run_dir)
    data = np.genfromtxt(run / "monitor.csv", delimiter=",", skip_header=2)
    data = data.reshape(-1, 3)
    steps = np.cumsum(data[:, 1])
    won = data[:, 0] > 0
    edges = np.linspace(0, steps[-1], args.bins + 1)
    which = np.clip(np.searchsorted(edges, steps, side="right") - 1, 0, args.bins - 1)
    count = np.bincount(which, minlength=args.bins)
    rate = np.bincount(which, won, minlength=args.bins) / np.maximum(count, 1)
    centre = (edges[:-1] + edges[1:]) / 2

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(centre[count > 0], rate[count > 0], label="training episodes won (VecMonitor)")
    evals = run / "evals.jsonl"
    if evals.is_file():
        rows = [json.loads(line) for line in evals.read_text().splitlines() if line.strip()]
        x = np.array([r["timesteps"] for r in rows])
        y = np.array([r["win_rate"] for r in rows])
        lo = np.array([r["ci95"][0] for r in rows])
        hi = np.array([r["ci95"][1] for r in rows])
        opp = " ".join(rows[-1]["opponents"]) if rows else ""
        ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o", capsize=3, label=f"evaluator vs {opp} (95% CI)")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate")
    ax.set_ylim(0, 1)
    ax.axhline(0.25, color="grey", linestyle="--", linewidth=1)
    ax.set_title(args.title or run.name, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
