"""Collection speed of the single-agent SB3 VecEnv: learner steps per second.

    python scripts/bench_single_agent.py --num-envs 1024 --opponents random --steps 200
    python scripts/bench_single_agent.py --num-envs 512 --opponents heuristic --belief   # + belief features
    python scripts/bench_single_agent.py --num-envs 512 --opponents heuristic --belief --observation compact
    python scripts/bench_single_agent.py --num-envs 512 --opponents expert --belief --observation compact \
        --holder-probabilities          # + a perceiving expert's slots (--accusation-features: the other kind)

Two numbers per setting: ``env``: the env alone (the learner's actions are random legal ones,
drawn from ``action_masks()``, which is built every step as MaskablePPO does); ``env+policy``: with
a fresh MaskablePPO policy choosing the actions (batched torch forward on CPU, masks applied), as
during a rollout. A learner step includes every opponent move up to the learner's next decision.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.agents.players.base import sample_legal  # noqa: E402
from cluedo_env.training.sb3.vec_env import CluedoVecEnv  # noqa: E402

from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402


def bench(num_envs: int, opponents: str, steps: int, macro: bool, seat, policy: bool, net_arch,
          belief: bool = False, observation: str = "full", **perceive: bool) -> float:  # fmt: skip
    """Learner steps per second of one setting; ``perceive``: ``accusation_features``, ``holder_probabilities``."""
    venv = CluedoVecEnv(num_envs, "classic", seed=0, opponents=opponents, seat=seat, macro_moves=macro,
                        belief=belief, macro_accuse=belief, observation=observation, **perceive)  # fmt: skip
    obs = venv.reset()
    rng = np.random.default_rng(0)
    fn = None
    if policy:
        from cluedo_env.training.sb3.checkpoints import policy_fn
        from sb3_contrib import MaskablePPO

        model = MaskablePPO("MlpPolicy", venv, policy_kwargs={"net_arch": {"pi": net_arch, "vf": net_arch}},
                            n_steps=8, batch_size=64)  # fmt: skip
        fn = policy_fn(model, deterministic=False)
    for _ in range(3):  # warm-up
        venv.step(sample_legal(venv.action_masks(), rng))
    t0 = time.perf_counter()
    for _ in range(steps):
        mask = venv.action_masks()
        a = fn(obs, mask) if fn else sample_legal(mask, rng)
        obs, _, _, _ = venv.step(a)
    return steps * num_envs / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--opponents", nargs="+", default=["random"])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--net-arch", type=int, nargs="+", default=[128, 128])
    ap.add_argument("--belief", action="store_true",
                    help="belief features and macro accusation (agents/learner/belief.py), every setting")  # fmt: skip
    ap.add_argument("--observation", choices=["full", "compact"], default="full",
                    help="the learner observation (compact needs --belief; agents/learner/compact_observation.py)")
    for flag, what in (("--accusation-features", "the accusation slots"),
                       ("--holder-probabilities", "the seat's holder probabilities")):  # fmt: skip
        ap.add_argument(flag, action="store_true", help=f"{what} from a perceiving expert (needs --belief; "
                                                        "agents/learner/inputs.py)")  # fmt: skip
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    perceive = {"accusation_features": args.accusation_features, "holder_probabilities": args.holder_probabilities}
    perceive = {k: v for k, v in perceive.items() if v}  # only what is asked for: the env's defaults otherwise
    rows = []
    for opp in args.opponents:
        for macro in (False, True):
            for seat in (0, "random"):
                for policy in (False, True):
                    sps = bench(args.num_envs, opp, args.steps, macro, seat, policy, args.net_arch, args.belief,
                                args.observation, **perceive)
                    row = {"opponents": opp, "macro_moves": macro, "belief": args.belief,
                           "observation": args.observation, "accusation_features": args.accusation_features,
                           "holder_probabilities": args.holder_probabilities, "seat": seat,
                           "mode": "env+policy" if policy else "env", "num_envs": args.num_envs,
                           "learner_steps_per_s": round(sps)}  # fmt: skip
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(run_cli(main))
