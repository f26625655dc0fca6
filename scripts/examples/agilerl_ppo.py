"""PPO with AgileRL on the Gymnasium vector env, the action mask in ``info["action_mask"]``.

    python scripts/examples/agilerl_ppo.py --steps 300000 --num-envs 64 --eval-games 200

AgileRL 2.58 needs a virtualenv of its own (docs/integrations.md; ``scripts/check_agilerl.py`` builds one and runs
this file). Its ``PPO.get_action(obs, action_mask=...)`` takes the (N, A) mask the vector env puts in
``info["action_mask"]`` (1 = legal) and masks the logits itself, so the observation stays the plain int8 Box.
``autoreset_mode=SAME_STEP``: the step that ends a game returns the next game's first observation, so every
recorded transition is a real one (Gymnasium's default NEXT_STEP would record one ignored action per game end).

The rollout is collected here, not by ``agilerl.rollouts.collect_rollouts``: its rollout buffer computes GAE with
``next_non_terminal = 1 - dones[t + 1]`` (CleanRL's convention, ``dones[t]`` = "observation t starts a game"), but
``collect_rollouts`` stores the done of transition t at t, which cuts the return one step before each game's end
and bootstraps the last step from the next game. This loop stores the episode-start flags the buffer expects.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agilerl.algorithms import PPO  # noqa: E402

import cluedo_env  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from scripts.examples.evaluation import report, win_rate  # noqa: E402


def collect(agent: PPO, venv, obs: np.ndarray, info: dict, starts: np.ndarray, steps: int):
    """``steps`` vector steps into ``agent.rollout_buffer``, then its returns and advantages; returns the env's
    state to go on from (observation, info, and which rows start a new game)."""
    agent.rollout_buffer.reset()
    for _ in range(steps):
        mask = info["action_mask"]
        action, log_prob, _, value = agent.get_action(obs, action_mask=mask)
        next_obs, reward, terminated, truncated, info = venv.step(action)
        agent.rollout_buffer.add(obs=obs, action=action, reward=reward, done=starts, value=value,
                                 log_prob=log_prob, next_obs=next_obs, action_mask=mask)  # fmt: skip
        obs, starts = next_obs, np.logical_or(terminated, truncated)
    last_value = agent.get_action(obs, action_mask=info["action_mask"])[3]
    agent.rollout_buffer.compute_returns_and_advantages(last_value=last_value, last_done=starts)
    return obs, info, starts


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300_000, help="env steps (learner decisions) in all")
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--rollout", type=int, default=64, help="steps per env between updates")
    ap.add_argument("--eval-games", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    venv = gymnasium.make_vec(cluedo_env.GYMNASIUM_ID, num_envs=args.num_envs, seat="random", opponents="random",
                              autoreset_mode=AutoresetMode.SAME_STEP)  # fmt: skip
    learn_step = args.num_envs * args.rollout
    agent = PPO(venv.single_observation_space, venv.single_action_space, num_envs=args.num_envs,
                learn_step=learn_step, batch_size=max(1, learn_step // 4), lr=3e-4, update_epochs=4,
                ent_coef=0.01, net_config={"encoder_config": {"hidden_size": [args.hidden]},
                                           "head_config": {"hidden_size": [args.hidden]}})  # fmt: skip
    obs, info = venv.reset(seed=args.seed)
    starts = np.zeros(args.num_envs, bool)
    updates = max(1, args.steps // learn_step)
    t0 = time.perf_counter()
    for _ in range(updates):
        obs, info, starts = collect(agent, venv, obs, info, starts, args.rollout)
        agent.learn()
    seconds = time.perf_counter() - t0

    def greedy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        agent.get_action(obs, action_mask=mask)  # leaves the masked distribution on the actor's head
        return agent.actor.head_net.dist.logits.argmax(-1).cpu().numpy()

    result = win_rate(greedy, args.eval_games, seed=args.seed + 1)
    steps = updates * learn_step
    print(report("AgileRL", steps, seconds, result))
    return {"steps": steps, "seconds": seconds, **result}


if __name__ == "__main__":
    main()
