"""End-to-end demo: train a Cluedo player briefly to beat three rule-based players, then show the shipped champions.

    python scripts/demo.py                                   # about 1 min on 2 CPU cores (after cluedo warmup)
    python scripts/demo.py --timesteps 4096 --games 40       # a few seconds: does it all work?

Steps (all seeded, ``--seed``):

1. MaskablePPO (sb3-contrib) learns one seat of the 4-player card game (preset ``cards``) against three
   ``heuristic`` players with the recipe of ``configs/train_cards_vs_heuristic.yaml`` (factored suggestion head,
   the accusation open once the seat's notebook is solved, belief features, potential-based shaping), shortened to
   ``--timesteps`` learner steps (rounded up to whole rollouts of 2,048 games x 16 steps; the full run's 1.5M
   steps win 74%, ``pretrained:cards_vs_heuristic``), in bfloat16 where the CPU multiplies it in hardware (AMX or
   AVX512-BF16), else in float32 (emulated bfloat16 is slower). The run goes to ``OUT/train`` (``model.zip``,
   TensorBoard logs, ``summary.json``) via :mod:`cluedo_env.training.sb3.train`.
2. The tournament evaluator (``scripts/evaluate.py``, seats rotated) plays ``--games`` games of the trained
   checkpoint against three heuristic players, then the same games with two other players in its seat: a
   ``heuristic`` one (parity, about 25%) and ``belief_random`` (the learner's own notebook and accusation rule,
   every other choice random: what the network learned beyond "accuse once solved"). Reports go to ``OUT/eval*``.
3. The table: win rates with 95% Wilson intervals, wrong accusations.
4. The shipped champions against the ladder, as measured in their model cards (``training/pretrained/index.json``,
   :func:`cluedo_env.training.pretrained.catalogue`; no games are played for it).

A second demo into the same ``--out`` replaces the first one's outputs; a folder that holds anything else is
refused, so that nothing but an earlier demo is ever removed.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.errors import UsageError, run_cli  # noqa: E402
from cluedo_env.files import LOCK_NAME, check_writable_dir, lock_dir, write_text_atomic  # noqa: E402
from cluedo_env.options import ArgumentParser, int_in, seed_type  # noqa: E402

RECIPE = ROOT / "configs" / "train_cards_vs_heuristic.yaml"
PRESET = "cards"
OPPONENT = "heuristic"
# the seat's baselines: (player name, what it shows)
BASELINES = (("heuristic", "a heuristic player (parity: 25%)"),
             ("belief_random", "belief_random: its notebook and accusation, random play"))  # fmt: skip
# the shipped players shown in step 4, and the ladder their cards measured
CHAMPIONS = ("champion", "cards_champion", "cards_vs_heuristic")
MARKER = "demo.json"  # written first into --out: the folder is a demo's, which a later demo may replace
OUTPUTS = ("train", "eval", *(f"eval_{name}" for name, _ in BASELINES), MARKER)


def _say(text: str = "") -> None:
    print(text, flush=True)


def _cpu_s() -> float:
    """CPU seconds of this process so far, all threads (user + system): on a shared machine the honest cost."""
    return time.process_time()


def _claim(out: Path) -> None:
    """Make ``out`` this demo's: empty, or an earlier demo's (its outputs removed); anything else is refused."""
    present = sorted(p.name for p in out.iterdir() if p.name != LOCK_NAME)
    if present and MARKER not in present:
        raise UsageError(f"--out {str(out)!r} holds files that are not an earlier demo's ({', '.join(present[:4])}); "
                         "choose an empty or new folder")  # fmt: skip
    foreign = [name for name in present if name not in OUTPUTS]
    if foreign:
        raise UsageError(f"--out {str(out)!r} holds an earlier demo and other files ({', '.join(foreign[:4])}); "
                         "choose an empty or new folder")  # fmt: skip
    if present:
        _say(f"replacing the earlier demo in {out}")
        for name in present:
            path = out / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    write_text_atomic(out / MARKER, json.dumps({"status": "running"}) + "\n")


def _overrides(args: Any, run_dir: Path) -> dict:
    """The recipe's settings changed for the demo: its length (whole rollouts: SB3 collects nothing less), no
    evaluations during training, float32 where this CPU would emulate bfloat16 (slower than float32 there);
    ``--num-envs`` and a tiny ``--timesteps`` shorten the rollout."""
    import yaml
    from cluedo_env.training.precision import fast_bfloat16

    recipe = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    games = recipe["env"]["num_envs"] if args.num_envs is None else args.num_envs
    n_steps = min(recipe["ppo"]["n_steps"], max(1, args.timesteps // games))  # a tiny run still makes one update
    rollout = games * n_steps
    precision = recipe.get("precision", "float32")
    if precision == "bfloat16" and not fast_bfloat16():
        precision = "float32"
    return {"run_dir": str(run_dir), "total_timesteps": -(-args.timesteps // rollout) * rollout, "seed": args.seed,
            "precision": precision, "checkpoint_every": 0, "eval": {"every": 0, "games": 0}, "env": {"num_envs": games},
            "ppo": {"n_steps": n_steps, "batch_size": min(recipe["ppo"]["batch_size"], rollout)}}  # fmt: skip


def _ci(lo: float, hi: float) -> str:
    return f"{100 * lo:.1f}-{100 * hi:.1f}%"


def _seat_rows(results: list[tuple[str, dict]]) -> list[str]:
    """Markdown rows of the seat's players: win rate, Wilson interval, wins, wrong accusations."""
    from cluedo_env.agents.play.stats import wilson_interval

    rows = []
    for label, result in results:
        e, games = result["entries"][0], result["games"]
        lo, hi = wilson_interval(e["wins"], games)
        rows.append(f"| {label} | {100 * e['wins'] / games:.1f}% | {_ci(lo, hi)} | {e['wins']} / {games} | "
                    f"{e['wrong_accusations']} |")  # fmt: skip
    return rows


def champion_rows(names: tuple[str, ...] = CHAMPIONS) -> list[dict]:
    """The shipped players' measured win rates, from their model cards, at every table size they cover: the rows
    whose command plays the player itself (not an ablation in its place), each
    ``{player, opponents, win_rate, ci95, games, wrong}``."""
    from cluedo_env.agents.play.stats import wilson_interval
    from cluedo_env.training.pretrained import catalogue

    shipped = catalogue()
    rows = []
    # a name that covers several table sizes shows the network of each (its tables, in order of size)
    members = [m for n in names if n in shipped for m in dict.fromkeys([*shipped[n].get("tables", {}).values(), n])]
    for name in dict.fromkeys(members):
        for item in shipped[name].get("card", {}).get("win_rates", []):
            if f"pretrained:{name}" not in str(item.get("command", "")):
                continue
            games = int(item["games"])
            ci = item.get("ci95") or wilson_interval(round(item["win_rate"] * games), games)
            opponents, _, wrong = str(item.get("opponents", "")).partition("; wrong accusations: ")
            rows.append({"player": f"pretrained:{name}", "opponents": opponents, "win_rate": float(item["win_rate"]),
                         "ci95": (float(ci[0]), float(ci[1])), "games": games, "wrong": wrong or None})  # fmt: skip
    return rows


def _train(args: Any, out: Path) -> dict:
    import cluedo_env.training.sb3.checkpoints  # noqa: F401 - registers the ckpt: prefix for the evaluator
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.train import Trainer

    over = _overrides(args, out / "train")
    cfg = load_train_config(RECIPE, **over)
    _say(f"[1/4] training MaskablePPO for {over['total_timesteps']:,} learner steps: one seat of the 4-player card "
         f"game against 3 heuristic players ({RECIPE.relative_to(ROOT)}, {over['env']['num_envs']} games x "
         f"{over['ppo']['n_steps']} steps per rollout, {over['precision']}, seed {args.seed}) -> "
         f"{out / 'train'}")  # fmt: skip
    w0, c0 = time.perf_counter(), _cpu_s()
    trained = Trainer(cfg, resume=False, progress=not args.no_progress).run()
    trained["demo_wall_s"], trained["demo_cpu_s"] = time.perf_counter() - w0, _cpu_s() - c0
    return trained


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timesteps", type=int_in(1, 10**12), default=400_000,
                    help="learner steps of training, up to whole rollouts (default 400000: 425984)")  # fmt: skip
    ap.add_argument("--games", type=int_in(1, 10**8), default=1000,
                    help="evaluation games of the trained player and of each baseline (default 1000)")  # fmt: skip
    ap.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    ap.add_argument("--seed", type=seed_type, default=0, help="seed of training and evaluation (default 0)")
    ap.add_argument("--num-envs", type=int_in(1, 1 << 16), default=None,
                    help="games played at once in training (default: the recipe's 2048)")  # fmt: skip
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    out = check_writable_dir(args.out, "--out")  # before minutes of training, not after
    with lock_dir(out, "--out"):
        _claim(out)
        return _run(args, out)


def _run(args: Any, out: Path) -> dict:
    from cluedo_env.cli import evaluate

    trained = _train(args, out)
    model = trained["model"]
    common = ["--games", str(args.games), "--preset", PRESET, "--seed", str(args.seed)]
    if args.no_progress:
        common.append("--no-progress")
    _say(f"[2/4] tournament: the trained player vs {OPPONENT} x3, {args.games:,} games, seats rotated; then the same "
         f"games with {' and '.join(name for name, _ in BASELINES)} in its seat")  # fmt: skip
    w1, c1 = time.perf_counter(), _cpu_s()
    result = evaluate.main(["--players", f"ckpt:{model}", *[OPPONENT] * 3, *common, "--out", str(out / "eval")])
    baselines = {name: evaluate.main(["--players", name, *[OPPONENT] * 3, *common, "--out", str(out / f"eval_{name}")])
                 for name, _ in BASELINES}  # fmt: skip
    eval_wall, eval_cpu = time.perf_counter() - w1, _cpu_s() - c1

    steps = trained["timesteps"]
    _say(f"\n[3/4] one seat of the 4-player card game against three {OPPONENT} players, {args.games:,} games each "
         "(seats rotated; 95% Wilson intervals)")  # fmt: skip
    _say("| player in the seat | win rate | 95% CI | wins | wrong accusations |")
    _say("|---|---|---|---|---|")
    seat = [(f"trained here ({steps:,} steps)", result), *((label, baselines[name]) for name, label in BASELINES)]
    for row in _seat_rows(seat):
        _say(row)

    champions = champion_rows()
    _say("\n[4/4] the shipped players against the ladder, from their model cards (docs/results.md; measured once, "
         "not replayed here)")  # fmt: skip
    _say("| player | opponents | win rate | 95% CI | games | wrong accusations |")
    _say("|---|---|---|---|---|---|")
    for r in champions:
        _say(f"| {r['player']} | {r['opponents']} | {100 * r['win_rate']:.1f}% | {_ci(*r['ci95'])} | "
             f"{r['games']:,} | {r['wrong'] or '-'} |")  # fmt: skip
    if not champions:
        _say("| (no shipped players in this install) | | | | | |")
    elif any(r["wrong"] is None for r in champions):
        _say("(-: not counted in that model card)")

    t_wall, t_cpu = trained["demo_wall_s"], trained["demo_cpu_s"]
    _say(f"\ntraining {t_wall:.0f} s ({steps / t_wall:,.0f} learner steps/s; {t_cpu:.0f} CPU s), evaluation "
         f"{eval_wall:.0f} s ({eval_cpu:.0f} CPU s); model {model}; reports in {out}/eval*")  # fmt: skip
    summary = {"status": "done", "argv": list(argv_of(args)), "timesteps": steps, "train_wall_s": t_wall,
               "train_cpu_s": t_cpu, "eval_wall_s": eval_wall, "eval_cpu_s": eval_cpu,
               "seat": {label: {k: r["entries"][0][k] for k in ("wins", "win_rate", "ci95", "wrong_accusations")}
                        for label, r in seat}}  # fmt: skip
    write_text_atomic(out / MARKER, json.dumps(summary, indent=1) + "\n")
    return {"train": trained, "eval": result, "baselines": baselines, "champions": champions,
            "train_s": t_wall, "eval_s": eval_wall}  # fmt: skip


def argv_of(args: Any) -> list[str]:
    """The demo's settings as command-line words (recorded in ``OUT/demo.json``)."""
    words = ["--timesteps", str(args.timesteps), "--games", str(args.games), "--seed", str(args.seed)]
    return words + (["--num-envs", str(args.num_envs)] if args.num_envs is not None else [])


if __name__ == "__main__":
    sys.exit(run_cli(main))
