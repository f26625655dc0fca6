"""What a trained belief-feature policy does: when it accuses, and how often its gambles are right.

    python scripts/policy_stats.py runs/vs_heuristic_belief/model.zip --opponents heuristic --steps 400

Plays the checkpoint (most probable legal action) as the learner of the single-agent env it was
trained in (belief features and macro accusation required), against ``--opponents``, and counts:
episodes and wins; accusations made with a solved notebook (certain) and without (a gamble on
the notebook's most likely triple), with how many gambles were right; decisions by kind. The
truth of a gamble is read from the engine's hidden state, by this script only, after the fact.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.training.learner_core import LearnerCore  # noqa: E402
from cluedo_env.training.learner_options import LearnerOptions  # noqa: E402
from cluedo_env.training.sb3.checkpoints import CheckpointError, load_model, policy_fn, rules_of  # noqa: E402

from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from cluedo_env.rules import actions as A  # noqa: E402

KINDS = ("roll/passage/stay/end", "move", "suggest", "show", "accuse")


def policy_stats(path: str, opponents: str, steps: int, num_envs: int = 256, seed: int = 5) -> dict:
    model = load_model(path)
    meta = model.cluedo_meta
    if not (meta.get("belief") and meta.get("macro_accuse")):
        raise CheckpointError(f"checkpoint {path}: trained without belief features and the macro accusation")
    options = LearnerOptions(num_envs, rules_of(meta), opponents=opponents, seat="random",
                             macro_moves=meta["macro_moves"], belief=True, macro_accuse=True, seed=seed)
    core = LearnerCore(options)
    fn = policy_fn(model, deterministic=True)
    obs = core.reset(seed)
    out = {"episodes": 0, "wins": 0, "certain": 0, "gambles": 0, "gambles_right": 0}
    kinds = np.zeros(len(KINDS), np.int64)
    for _ in range(steps):
        a = fn(obs, core.action_masks())
        eng_a = core.to_engine(a)
        kind = np.searchsorted([A.MOVE0, A.SUGGEST0, A.SHOW0, A.ACCUSE0], eng_a, side="right")
        kinds += np.bincount(kind, minlength=len(KINDS))
        acc = np.flatnonzero(kind == 4)
        if len(acc):
            solved = obs[acc, -1] == 1  # belief_solved, the last slot
            t = eng_a[acc] - A.ACCUSE0
            cards = np.stack(A.triple_cards(t), 1)
            right = (core.eng.owner[acc[:, None], cards] < 0).all(1)  # hidden: read after the decision
            out["certain"] += int(solved.sum())
            out["gambles"] += int((~solved).sum())
            out["gambles_right"] += int((right & ~solved).sum())
        obs, rew, _, _, ended = core.step(a)
        out["wins"] += int((rew > 0).sum())
        out["episodes"] += int(ended.sum())
    out["win_rate"] = out["wins"] / max(out["episodes"], 1)
    out["decisions"] = {k: int(n) for k, n in zip(KINDS, kinds, strict=True)}
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--opponents", default="heuristic")
    ap.add_argument("--steps", type=int, default=400, help="learner decisions per game slot")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    out = policy_stats(args.checkpoint, args.opponents, args.steps, args.num_envs, args.seed)
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main))
