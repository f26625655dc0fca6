"""PPO with TorchRL on the native batched env (cluedo_env.training.torchrl_env), masked actions.

    python scripts/examples/torchrl_ppo.py --steps 2000000 --num-envs 256 --eval-games 400

One learner seat (random each game) against three random players; TorchRL's collector, GAE and ClipPPOLoss, a
``MaskedCategorical`` over the env's ``action_mask``. The int8 observation is cast to float in the networks'
first layer. Prints the env steps/s through the loop (training included) and the win rate vs random players.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.training.torchrl_env import CluedoTorchRLEnv  # noqa: E402
from tensordict.nn import TensorDictModule  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator  # noqa: E402
from torchrl.objectives import ClipPPOLoss  # noqa: E402
from torchrl.objectives.value import GAE  # noqa: E402

from cluedo_env.options import ArgumentParser  # noqa: E402
from scripts.examples.evaluation import report, win_rate  # noqa: E402


def mlp(n_in: int, n_out: int, hidden: int) -> nn.Module:
    """int8 observation -> float -> two hidden layers."""
    return nn.Sequential(Float(), nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, n_out))  # fmt: skip


class Float(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float()


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2_000_000, help="env steps (learner decisions) in all")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--rollout", type=int, default=32, help="steps per env between updates")
    ap.add_argument("--eval-games", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    env = CluedoTorchRLEnv(args.num_envs, seed=args.seed, seat="random", opponents="random")
    obs_size = env.observation_spec["observation"].shape[-1]
    n_actions = env.action_spec.space.n
    policy_net = TensorDictModule(mlp(obs_size, n_actions, args.hidden), in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(policy_net, in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
                               distribution_class=MaskedCategorical, return_log_prob=True)  # fmt: skip
    critic = ValueOperator(mlp(obs_size, 1, args.hidden), in_keys=["observation"])
    frames = args.num_envs * args.rollout
    collector = Collector(env, actor, frames_per_batch=frames, total_frames=max(args.steps, frames),
                          auto_register_policy_transforms=False)  # fmt: skip
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
    loss_fn = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01)
    optim = torch.optim.Adam(loss_fn.parameters(), lr=3e-4)
    t0, done_steps = time.perf_counter(), 0
    for batch in collector:
        done_steps += batch.numel()
        advantage(batch)
        data = batch.reshape(-1)
        for _ in range(4):  # epochs over the batch, 4 minibatches each
            for idx in torch.randperm(len(data)).chunk(4):
                losses = loss_fn(data[idx])
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_fn.parameters(), 0.5)
                optim.step()
        collector.update_policy_weights_()
    seconds = time.perf_counter() - t0
    collector.shutdown()
    net = policy_net.module

    def greedy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = net(torch.from_numpy(obs)).masked_fill(torch.from_numpy(mask) == 0, -torch.inf)
        return logits.argmax(-1).numpy()

    result = win_rate(greedy, args.eval_games, seed=args.seed + 1)
    print(report("torchrl", done_steps, seconds, result))
    return {"steps": done_steps, "seconds": seconds, **result}


if __name__ == "__main__":
    main()
