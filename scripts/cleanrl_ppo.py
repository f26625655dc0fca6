"""Masked PPO in one file, plain PyTorch, CleanRL style: learn Cluedo against three random players.

    python scripts/cleanrl_ppo.py                                   # 200k steps, then 1,000 evaluation games
    python scripts/cleanrl_ppo.py --total-timesteps 400000 --opponents heuristic --save runs/ppo.pt

Everything a reader needs to follow the algorithm is here: the env is the project's Gymnasium
vector env (``gymnasium.make_vec("cluedo_env/Cluedo-v0")``, N games in one batched engine, the
learner at a random seat), the policy a small MLP whose logits are masked with
``info["action_mask"]`` (illegal actions get a logit of -1e8, so they are never sampled and carry
no gradient), and the update clipped PPO with GAE (Schulman et al. 2017; Huang et al. 2022,
"The 37 implementation details of PPO"). Defaults: the macro-move action space (682 actions) and
no entropy bonus (an entropy bonus pushes toward uniform play, i.e. blind accusations).

The vector env autoresets in Gymnasium's default ``NEXT_STEP`` mode: the step after a game ends
returns the next game's first observation, ignores that row's action and pays 0. Those
transitions belong to no episode, so they are left out of the losses (``valid``); the step that
ended the game bootstraps nothing (``done``). Truncation (``max_turns``) is rare here and is
treated as an ending too.

At the end the greedy policy (most probable legal action) plays ``--eval-games`` new games at a
random seat and the win rate is printed with a 95% Wilson interval. Every game counts, including
those that end before the learner's first move, so the number is the one ``scripts/evaluate.py``
gives (``--save`` writes the weights; ``policy_from_file`` turns them into ``fn(obs, mask)``,
which ``cluedo_env.agents.learner.callable_player`` plays: ``--players py:scripts/cleanrl_ppo.py:saved_policy``
with ``CLEANRL_PPO_WEIGHTS`` pointing at the file, and ``CLEANRL_PPO_MACRO_MOVES=0`` for a policy
trained with ``--no-macro-moves``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import cluedo_env  # noqa: E402  (registers "cluedo_env/Cluedo-v0")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--total-timesteps", type=int, default=200_000, help="learner decisions over all games")
    p.add_argument("--num-envs", type=int, default=512, help="games stepped at once")
    p.add_argument("--num-steps", type=int, default=32, help="steps per game per rollout")
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--anneal-lr", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=128, help="width of the two hidden layers")
    p.add_argument("--preset", default="classic")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--opponents", default="random", help="a player name for every other seat")
    p.add_argument("--macro-moves", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--eval-games", type=int, default=1000)
    p.add_argument(
        "--threads", type=int, default=1, help="torch threads (0: torch's default; one is best for this small net)"
    )
    p.add_argument("--save", type=Path, default=None, help="write the weights (and the env options) here")
    p.add_argument("--json", type=Path, default=None, help="write the final numbers here as JSON")
    return p.parse_args(argv)


def make_env(args: argparse.Namespace, num_envs: int) -> gymnasium.vector.VectorEnv:
    return gymnasium.make_vec(cluedo_env.GYMNASIUM_ID, num_envs=num_envs, vectorization_mode="vector_entry_point",
                              preset=args.preset, players=args.players, opponents=args.opponents, seat="random",
                              macro_moves=args.macro_moves)  # fmt: skip


def layer(n_in: int, n_out: int, std: float = math.sqrt(2)) -> nn.Linear:
    """Orthogonal weights, zero bias (CleanRL's ``layer_init``)."""
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    """Separate actor and critic MLPs over the int8 observation."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                    layer(hidden, 1, 1.0))  # fmt: skip
        self.actor = nn.Sequential(layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                   layer(hidden, n_actions, 0.01))  # fmt: skip

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def dist(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        logits = self.actor(obs).masked_fill(~mask, -1e8)  # illegal actions: never sampled, no gradient
        return torch.distributions.Categorical(logits=logits)


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def train(args: argparse.Namespace) -> tuple[Agent, dict]:
    torch.manual_seed(args.seed)
    envs = make_env(args, args.num_envs)
    N, T = args.num_envs, args.num_steps
    obs_size = envs.single_observation_space.shape[0]
    n_actions = int(envs.single_action_space.n)
    agent = Agent(obs_size, n_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs_buf = torch.zeros((T, N, obs_size))
    mask_buf = torch.zeros((T, N, n_actions), dtype=torch.bool)
    act_buf = torch.zeros((T, N), dtype=torch.long)
    logp_buf, rew_buf, val_buf = torch.zeros((T, N)), torch.zeros((T, N)), torch.zeros((T, N))
    done_buf = torch.zeros((T, N))  # the episode ended at this step: bootstrap nothing from the next one
    valid_buf = torch.zeros((T, N), dtype=torch.bool)  # False: NEXT_STEP's reset step, in no episode

    obs_np, info = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(obs_np, dtype=torch.float32)
    next_mask = torch.as_tensor(info["action_mask"], dtype=torch.bool)
    next_valid = torch.ones(N, dtype=torch.bool)
    returns: list[float] = []
    ep_return = np.zeros(N)
    num_updates = max(1, args.total_timesteps // (N * T))
    start = time.time()
    for update in range(1, num_updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / num_updates) * args.learning_rate
        for t in range(T):
            obs_buf[t], mask_buf[t], valid_buf[t] = next_obs, next_mask, next_valid
            with torch.no_grad():
                dist = agent.dist(next_obs, next_mask)
                action = dist.sample()
                logp_buf[t], val_buf[t] = dist.log_prob(action), agent.value(next_obs)
            act_buf[t] = action
            obs_np, reward, term, trunc, info = envs.step(action.numpy())
            done = term | trunc
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32)
            done_buf[t] = torch.as_tensor(done, dtype=torch.float32)
            ep_return += reward
            returns.extend(ep_return[done].tolist())
            ep_return[done] = 0.0
            next_obs = torch.as_tensor(obs_np, dtype=torch.float32)
            next_mask = torch.as_tensor(info["action_mask"], dtype=torch.bool)
            next_valid = torch.as_tensor(~done)  # the next step of a finished game is its reset step

        with torch.no_grad():  # GAE; a done step cuts the chain, so reset steps never leak backwards
            next_value = agent.value(next_obs)
            adv = torch.zeros((T, N))
            last = torch.zeros(N)
            for t in reversed(range(T)):
                nxt = next_value if t == T - 1 else val_buf[t + 1]
                nonterminal = 1.0 - done_buf[t]
                delta = rew_buf[t] + args.gamma * nxt * nonterminal - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_buf

        keep = valid_buf.reshape(-1)
        b_obs, b_mask = obs_buf.reshape(-1, obs_size)[keep], mask_buf.reshape(-1, n_actions)[keep]
        b_act, b_logp = act_buf.reshape(-1)[keep], logp_buf.reshape(-1)[keep]
        b_adv, b_ret, b_val = adv.reshape(-1)[keep], ret.reshape(-1)[keep], val_buf.reshape(-1)[keep]
        for _ in range(args.update_epochs):
            for idx in torch.tensor_split(torch.randperm(len(b_obs)), args.num_minibatches):
                dist = agent.dist(b_obs[idx], b_mask[idx])
                ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v = agent.value(b_obs[idx])
                v_clipped = b_val[idx] + (v - b_val[idx]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((v - b_ret[idx]) ** 2, (v_clipped - b_ret[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * dist.entropy().mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        recent = returns[-2000:]
        win = float(np.mean(np.asarray(recent) == 1.0)) if recent else float("nan")
        print(f"update {update}/{num_updates}  steps {update * N * T}  episodes {len(returns)}  "
              f"train win rate (last {len(recent)}) {win:.3f}  {time.time() - start:.0f}s", flush=True)  # fmt: skip
    envs.close()
    return agent, {"train_seconds": time.time() - start, "train_steps": num_updates * N * T}


def greedy(agent: Agent):
    """The most probable legal action: ``fn(obs (n, D), mask (n, A)) -> (n,)``."""

    def fn(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = agent.actor(torch.as_tensor(obs, dtype=torch.float32))
            return logits.masked_fill(~torch.as_tensor(mask, dtype=torch.bool), -1e8).argmax(-1).numpy()

    fn.batched = True  # type: ignore[attr-defined]  (cluedo_env.agents.learner.callable_player: call it with many games at once)
    fn.macro_moves = agent.actor[-1].out_features != 870  # type: ignore[attr-defined]  (682: macro moves)
    return fn


def evaluate(args: argparse.Namespace, agent: Agent, games: int, num_envs: int = 250) -> dict:
    """Win rate of the greedy policy over ``games`` new games (every game counts) at a random seat."""
    envs = make_env(args, min(num_envs, games))
    policy = greedy(agent)
    obs, info = envs.reset(seed=args.seed + 1)
    results: list[float] = []
    ep_return = np.zeros(envs.num_envs)
    while len(results) < games:
        obs, reward, term, trunc, info = envs.step(policy(obs, info["action_mask"]))
        ep_return += reward
        done = term | trunc
        results.extend(ep_return[done].tolist())
        ep_return[done] = 0.0
    envs.close()
    wins = int(np.sum(np.asarray(results[:games]) == 1.0))
    low, high = wilson(wins, games)
    return {"eval_games": games, "eval_wins": wins, "eval_win_rate": wins / games, "eval_ci95": [low, high]}


def policy_from_file(path: str | os.PathLike):
    """A batched ``fn(obs, mask) -> actions`` from weights written by ``--save``."""
    saved = torch.load(path, map_location="cpu", weights_only=True)  # tensors and plain values: nothing runs
    agent = Agent(saved["obs_size"], saved["n_actions"], saved["hidden"])
    agent.load_state_dict(saved["state_dict"])
    return greedy(agent)


def saved_policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``py:scripts/cleanrl_ppo.py:saved_policy`` for the evaluator: the weights named by ``CLEANRL_PPO_WEIGHTS``."""
    global _SAVED
    if _SAVED is None:
        _SAVED = policy_from_file(os.environ["CLEANRL_PPO_WEIGHTS"])
    return _SAVED(obs, mask)


saved_policy.batched = True  # type: ignore[attr-defined]
saved_policy.macro_moves = os.environ.get("CLEANRL_PPO_MACRO_MOVES", "1") == "1"  # type: ignore[attr-defined]
_SAVED = None


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    agent, stats = train(args)
    stats.update(evaluate(args, agent, args.eval_games))
    low, high = stats["eval_ci95"]
    print(f"greedy policy vs 3 {args.opponents}: won {stats['eval_wins']} of {stats['eval_games']} games = "
          f"{stats['eval_win_rate']:.1%} (95% CI {low:.1%}-{high:.1%}); trained {stats['train_steps']} steps in "
          f"{stats['train_seconds']:.0f} s")  # fmt: skip
    if args.save is not None:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        obs_size = agent.actor[0].in_features
        n_actions = agent.actor[-1].out_features
        torch.save({"state_dict": agent.state_dict(), "obs_size": obs_size, "n_actions": n_actions,
                    "hidden": args.hidden, "macro_moves": args.macro_moves}, args.save)  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps(stats, indent=2) + "\n")
    return stats


if __name__ == "__main__":
    main()
