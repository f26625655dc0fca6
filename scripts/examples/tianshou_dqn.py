"""DQN with Tianshou on the PettingZoo AEC env: one learning seat, three random masked seats.

    python scripts/examples/tianshou_dqn.py --steps 200000 --num-envs 8 --eval-games 400

Tianshou's multi-agent route (``tianshou.env.PettingZooEnv`` over ``cluedo_env.env()``, one algorithm per seat in
``MultiAgentOffPolicyAlgorithm``): an env step is one seat's action, and each seat learns from its own
transitions. A seat's result (+1 / -1) is posted on the step that ends the game, which is usually another
seat's step, so the learner sees it only through its n-step return: ``n_step_return_horizon`` must be at least
the number of players (here 4), or a seat's last transition never carries the game's result.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tianshou.algorithm import DQN  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode  # noqa: E402

import cluedo_env  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from scripts.examples.evaluation import report, win_rate  # noqa: E402

PLAYERS = 4


def make_env() -> PettingZooEnv:
    return PettingZooEnv(cluedo_env.env(players=PLAYERS))


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200_000, help="env steps (every seat's actions) in all")
    ap.add_argument("--num-envs", type=int, default=8)
    ap.add_argument("--eval-games", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    env = make_env()
    train_envs = DummyVectorEnv([make_env for _ in range(args.num_envs)])
    train_envs.seed(args.seed)
    obs_size = env.observation_space["observation"].shape[0]
    net = Net(state_shape=obs_size, action_shape=env.action_space.n, hidden_sizes=[args.hidden, args.hidden])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99,
                  n_step_return_horizon=PLAYERS, target_update_freq=500)  # n >= players: see the docstring
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[learner] + [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space)] * (PLAYERS - 1),
        env=env,
    )  # fmt: skip
    buffer = VectorReplayBuffer(100_000, args.num_envs)
    collector = Collector(algorithm, train_envs, buffer, exploration_noise=True)
    collector.reset()
    per_round = 16 * args.num_envs
    t0, steps = time.perf_counter(), 0
    with policy_within_training_step(algorithm.policy):  # what Tianshou's own trainer does around a step
        while steps < args.steps:
            steps += collector.collect(n_step=per_round).n_collected_steps
            with torch_train_mode(algorithm):
                for _ in range(max(1, per_round // 32)):  # one gradient step per 32 env steps
                    algorithm.update(buffer, sample_size=64)
    seconds = time.perf_counter() - t0

    def greedy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            q = net(obs)[0].masked_fill(torch.from_numpy(mask) == 0, -torch.inf)
        return q.argmax(-1).numpy()

    result = win_rate(greedy, args.eval_games, seed=args.seed + 1)
    print(report("tianshou", steps, seconds, result))
    return {"steps": steps, "seconds": seconds, **result}


if __name__ == "__main__":
    main()
