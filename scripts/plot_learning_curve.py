"""Learning curve of a training run: training-episode win rate and evaluator win rates (95% CI).

    python scripts/plot_learning_curve.py runs/vs_random --out runs/vs_random/learning_curve.png

Reads ``run_dir/monitor.csv`` (VecMonitor: one row per learner episode: reward, length, time) and
``run_dir/evals.jsonl`` (periodic tournament evaluations, one curve per opponent lineup), and with an imitation
phase ``run_dir/imitation/log.jsonl`` (a panel of its own: how often the network plays the teacher's choice).
The training curve is the share of
episodes won (reward +1) in windows of learner steps; episodes lost by the learner's own
elimination count as losses. The evaluation points use the evaluator's seat rotation. A run with
reward shaping (``env.shaping`` in ``run_dir/state.json``'s config) logs shaped returns, which do not
say who won: its plot shows the evaluations only.

An RLlib run (``training/rllib/train.py``: ``run_dir/progress.jsonl``, one row per iteration, and
``run_dir/eval_NNNNNN/tournament.json``) has no per-episode log: its training curve is
(mean return + 1) / 2 over RLlib's recent episodes, which is the win rate when no game is cut at
``max_turns`` (rewards are +1, -1, and 0 only on truncation).
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
    rllib = not (run / "monitor.csv").is_file() and (run / "progress.jsonl").is_file()
    if rllib:
        centre, rate, count, train_label, eval_rows = _rllib_run(run)
    else:
        centre, rate, count = _sb3_training_curve(run, args.bins)
        train_label, eval_rows = "training episodes won (VecMonitor)", None

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    imitation = _imitation_rounds(run)
    if imitation:
        fig, (ax_im, ax) = plt.subplots(1, 2, figsize=(10.4, 3.8), gridspec_kw={"width_ratios": [1, 1.6]})
        games = [r["games"] for r in imitation]
        ax_im.plot(games, [r["accuracy"] for r in imitation], marker=".", label="plays the teacher's choice")
        ax_im.set_xlabel("teacher games imitated")
        ax_im.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1000:g}k"))
        ax_im.set_ylim(0, 1)
        ax_im.set_title("imitation", fontsize=10)
        ax_im.legend(fontsize=8, loc="lower right")
    else:
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
    if not rllib and _shaped(run):
        print(f"{run}: trained with env.shaping, so monitor.csv's returns are shaped: evaluations only")
    else:
        ax.plot(centre[count > 0], rate[count > 0], label=train_label)
    evals = run / "evals.jsonl"
    if eval_rows is not None or evals.is_file():
        rows = eval_rows if eval_rows is not None else [
            json.loads(line) for line in evals.read_text().splitlines() if line.strip()]  # fmt: skip
        lineups: dict[str, list[dict]] = {}  # one curve per opponent lineup (eval.opponents may list several)
        for r in rows:
            lineups.setdefault(" ".join(map(str, r["opponents"])), []).append(r)
        for opp, group in lineups.items():
            x = np.array([r["timesteps"] for r in group])
            y = np.array([r["win_rate"] for r in group])
            lo = np.array([r["ci95"][0] for r in group])
            hi = np.array([r["ci95"][1] for r in group])
            ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o-", capsize=3, label=f"evaluator vs {opp} (95% CI)")
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


def _imitation_rounds(run: Path) -> list[dict]:
    """The rounds of the run's imitation phase (``imitation/log.jsonl``; empty without one)."""
    path = run / "imitation" / "log.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _shaped(run: Path) -> bool:
    """Whether the SB3 run in ``run`` was trained with reward shaping (its ``state.json`` config says so)."""
    try:
        config = json.loads((run / "state.json").read_text()).get("config", {})
    except (OSError, json.JSONDecodeError):
        return False
    return bool((config.get("env") or {}).get("shaping"))


def _sb3_training_curve(run: Path, bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Share of VecMonitor episodes won, in ``bins`` windows of learner steps."""
    data = np.genfromtxt(run / "monitor.csv", delimiter=",", skip_header=2)
    data = data.reshape(-1, 3)
    steps = np.cumsum(data[:, 1])
    won = data[:, 0] > 0
    edges = np.linspace(0, steps[-1], bins + 1)
    which = np.clip(np.searchsorted(edges, steps, side="right") - 1, 0, bins - 1)
    count = np.bincount(which, minlength=bins)
    rate = np.bincount(which, won, minlength=bins) / np.maximum(count, 1)
    return (edges[:-1] + edges[1:]) / 2, rate, count


def _rllib_run(run: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, list[dict]]:
    """An RLlib run: (steps, (mean return + 1) / 2, ones, label, evaluator rows in evals.jsonl's format)."""
    rows = [json.loads(line) for line in (run / "progress.jsonl").read_text().splitlines() if line.strip()]
    by_iter = {int(r["iteration"]): r for r in rows if r.get("main_return") is not None}  # a resume repeats rows
    steps = {i: float(r["env_steps_lifetime"]) for i, r in by_iter.items()}
    x = np.array([steps[i] for i in sorted(by_iter)])
    y = np.array([(float(by_iter[i]["main_return"]) + 1) / 2 for i in sorted(by_iter)])
    evals = []
    for folder in sorted(run.glob("eval_*")):
        it = int(folder.name.split("_")[1])
        path = folder / "tournament.json"
        if path.is_file() and it in steps:
            entry = json.loads(path.read_text())["entries"][0]
            opponents = [e["player"] for e in json.loads(path.read_text())["entries"][1:]]
            evals.append({"timesteps": steps[it], "win_rate": entry["win_rate"], "ci95": entry["ci95"],
                          "opponents": [o.split("#")[0] for o in opponents]})  # fmt: skip
    return x, y, np.ones(len(x), int), "training: (mean return + 1) / 2, RLlib's recent episodes", evals


if __name__ == "__main__":
    sys.exit(run_cli(main))
