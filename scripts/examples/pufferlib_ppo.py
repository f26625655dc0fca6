"""PufferLib's native env interface over the batched engine, trained by a short masked PPO.

    pip install pufferlib==3.0.0      # builds from source and downloads Raylib: needs internet access
    python scripts/examples/pufferlib_ppo.py --steps 1000000 --num-envs 256 --eval-games 400

``CluedoPufferEnv`` is a ``pufferlib.PufferEnv`` with ``num_agents = N``: one learner seat in each of N games of
one engine (:class:`cluedo_env.training.learner_core.LearnerCore`, random opponents), written straight into
PufferLib's shared buffers (``observations``, ``rewards``, ``terminals``, ``truncations``), no emulation layer and
no Python loop over games. PufferLib's trainers have no action masks, so the observation is the learner's int8
observation followed by its int8 mask (``A`` more slots), and the policy masks its own logits from it. Autoreset
is PufferLib's: the step that ends a game returns the next game's first observation, ``terminals`` marks it.
The PPO below is plain torch on those buffers, so the example shows the env side; PufferLib's ``PuffeRL``
trainer takes the same env.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pufferlib  # noqa: E402
from cluedo_env.training.learner_core import LearnerCore  # noqa: E402
from cluedo_env.training.learner_options import LearnerOptions  # noqa: E402

from cluedo_env.options import ArgumentParser  # noqa: E402
from scripts.examples.evaluation import report, win_rate  # noqa: E402


class CluedoPufferEnv(pufferlib.PufferEnv):
    """N learner games as N PufferLib agents; observation = int8 observation + int8 mask."""

    def __init__(self, num_envs: int, seed: int = 0, buf=None, **options) -> None:
        self.core = LearnerCore(LearnerOptions(num_envs, seed=seed, **options))
        self.obs_size, self.n_actions = self.core.obs_size, self.core.n_actions
        self.single_observation_space = gymnasium.spaces.Box(0, 127, (self.obs_size + self.n_actions,), np.int8)
        self.single_action_space = gymnasium.spaces.Discrete(self.n_actions)
        self.num_agents = num_envs
        super().__init__(buf)  # PufferLib allocates (or adopts) the shared buffers here
        self.seed = seed

    def _write(self, obs: np.ndarray) -> None:
        self.observations[:, : self.obs_size] = obs
        self.observations[:, self.obs_size :] = self.core.action_masks()

    def reset(self, seed: int | None = None):
        self._write(self.core.reset(self.seed if seed is None else seed))
        return self.observations, []

    def step(self, actions):
        obs, rew, term, trunc, _ = self.core.step(np.asarray(actions, np.int64))
        self._write(obs)  # autoreset: finished games already show their next game
        self.rewards[:] = rew
        self.terminals[:] = term
        self.truncations[:] = trunc
        return self.observations, self.rewards, self.terminals, self.truncations, []


class Policy(nn.Module):
    def __init__(self, obs_size: int, n_actions: int, hidden: int) -> None:
        super().__init__()
        self.obs_size = obs_size
        self.body = nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi, self.v = nn.Linear(hidden, n_actions), nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(x[:, : self.obs_size].float())
        return self.pi(h).masked_fill(x[:, self.obs_size :] == 0, -1e9), self.v(h).squeeze(-1)


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000, help="env steps (learner decisions) in all")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--rollout", type=int, default=32)
    ap.add_argument("--eval-games", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    env = CluedoPufferEnv(args.num_envs, seed=args.seed, seat="random", opponents="random")
    net = Policy(env.obs_size, env.n_actions, args.hidden)
    optim = torch.optim.Adam(net.parameters(), lr=3e-4)
    obs = torch.from_numpy(env.reset()[0].copy())
    t0, steps, T, N = time.perf_counter(), 0, args.rollout, args.num_envs
    while steps < args.steps:
        buf = {k: [] for k in ("obs", "act", "logp", "val", "rew", "done")}
        with torch.no_grad():
            for _ in range(T):
                logits, value = net(obs)
                dist = torch.distributions.Categorical(logits=logits)
                act = dist.sample()
                o, r, term, trunc, _ = env.step(act.numpy())
                for k, v in (("obs", obs), ("act", act), ("logp", dist.log_prob(act)), ("val", value),
                             ("rew", torch.from_numpy(r.copy())), ("done", torch.from_numpy(term | trunc))):
                    buf[k].append(v)  # fmt: skip
                obs = torch.from_numpy(o.copy())
            next_value = net(obs)[1]
        steps += T * N
        b = {k: torch.stack(v) for k, v in buf.items()}
        adv, last = torch.zeros(T, N), torch.zeros(N)  # GAE (gamma 0.99, lambda 0.95), cut at game ends
        for t in reversed(range(T)):
            nv = next_value if t == T - 1 else b["val"][t + 1]
            live = 1.0 - b["done"][t].float()
            delta = b["rew"][t] + 0.99 * nv * live - b["val"][t]
            last = delta + 0.99 * 0.95 * live * last
            adv[t] = last
        ret = (adv + b["val"]).flatten()
        flat = {k: v.flatten(0, 1) for k, v in b.items()}
        adv = adv.flatten()
        for _ in range(4):
            for idx in torch.randperm(T * N).chunk(4):
                logits, value = net(flat["obs"][idx])
                dist = torch.distributions.Categorical(logits=logits)
                ratio = (dist.log_prob(flat["act"][idx]) - flat["logp"][idx]).exp()
                a = (adv[idx] - adv[idx].mean()) / (adv[idx].std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
                loss = pg + 0.5 * (value - ret[idx]).pow(2).mean() - 0.01 * dist.entropy().mean()
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                optim.step()
    seconds = time.perf_counter() - t0

    def greedy(o: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net(torch.from_numpy(np.concatenate([o, mask], axis=1)))[0].argmax(-1).numpy()

    result = win_rate(greedy, args.eval_games, seed=args.seed + 1)
    print(report("pufferlib", steps, seconds, result))
    return {"steps": steps, "seconds": seconds, **result}


if __name__ == "__main__":
    main()
