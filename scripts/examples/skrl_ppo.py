"""PPO with skrl on the Gymnasium vector env, the action mask inside the observation.

    python scripts/examples/skrl_ppo.py --steps 1000000 --num-envs 256 --eval-games 400

skrl has no action masks of its own: ``mask_in_observation=True`` puts the int8 mask beside the observation
(``Dict({"action_mask", "observation"})``), skrl flattens the Dict into one tensor, and the policy takes it apart
again (``unflatten_tensorized_space``) to mask its logits. ``autoreset_mode=SAME_STEP``: skrl records a
transition per step and never resets a vector env itself, so the step that ends a game must already return the
next game's first observation (Gymnasium's default NEXT_STEP would record one bogus transition per game end).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from skrl.agents.torch.ppo import PPO, PPO_CFG  # noqa: E402
from skrl.envs.wrappers.torch import wrap_env  # noqa: E402
from skrl.memories.torch import RandomMemory  # noqa: E402
from skrl.models.torch import CategoricalMixin, DeterministicMixin, Model  # noqa: E402
from skrl.trainers.torch import SequentialTrainer  # noqa: E402
from skrl.utils.spaces.torch import unflatten_tensorized_space  # noqa: E402

import cluedo_env  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from scripts.examples.evaluation import report, win_rate  # noqa: E402


def body(n_in: int, n_out: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, n_out))  # fmt: skip


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden: int) -> None:
        Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        self.net = body(observation_space["observation"].shape[0], action_space.n, hidden)

    def compute(self, inputs, role=""):
        parts = unflatten_tensorized_space(self.observation_space, inputs["observations"])
        logits = self.net(parts["observation"].float())
        return logits.masked_fill(parts["action_mask"] == 0, -1e9), {}  # -1e9, not -inf: a finite entropy


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden: int) -> None:
        Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
        DeterministicMixin.__init__(self)
        self.net = body(observation_space["observation"].shape[0], 1, hidden)

    def compute(self, inputs, role=""):
        parts = unflatten_tensorized_space(self.observation_space, inputs["observations"])
        return self.net(parts["observation"].float()), {}


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000, help="env steps (learner decisions) in all")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--rollout", type=int, default=32, help="steps per env between updates")
    ap.add_argument("--eval-games", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    venv = gymnasium.make_vec(cluedo_env.GYMNASIUM_ID, num_envs=args.num_envs, seat="random", opponents="random",
                              mask_in_observation=True, autoreset_mode=AutoresetMode.SAME_STEP)  # fmt: skip
    env = wrap_env(venv, wrapper="gymnasium")
    device = env.device
    models = {"policy": Policy(env.observation_space, env.action_space, device, args.hidden),
              "value": Value(env.observation_space, env.action_space, device, args.hidden)}  # fmt: skip
    memory = RandomMemory(memory_size=args.rollout, num_envs=env.num_envs, device=device)
    cfg = PPO_CFG(rollouts=args.rollout, learning_epochs=4, mini_batches=4, learning_rate=3e-4,
                  entropy_loss_scale=0.01, value_loss_scale=0.5)  # fmt: skip
    cfg.experiment.write_interval = 0  # no TensorBoard files
    cfg.experiment.checkpoint_interval = 0
    agent = PPO(models=models, memory=memory, observation_space=env.observation_space,
                action_space=env.action_space, device=device, cfg=cfg)  # fmt: skip
    timesteps = max(1, args.steps // args.num_envs)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, "headless": True,
                                                            "disable_progressbar": True,
                                                            "close_environment_at_exit": False})  # fmt: skip
    t0 = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - t0
    net = models["policy"].net

    def greedy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = net(torch.from_numpy(obs).float()).masked_fill(torch.from_numpy(mask) == 0, -torch.inf)
        return logits.argmax(-1).numpy()

    result = win_rate(greedy, args.eval_games, seed=args.seed + 1)
    steps = timesteps * args.num_envs
    print(report("skrl", steps, seconds, result))
    return {"steps": steps, "seconds": seconds, **result}


if __name__ == "__main__":
    main()
