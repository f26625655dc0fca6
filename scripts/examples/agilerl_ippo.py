"""IPPO with AgileRL on the PettingZoo parallel env: one policy shared by the four seats, the masks honoured.

    python scripts/examples/agilerl_ippo.py --steps 100000 --num-envs 16 --eval-games 200

AgileRL 2.58 needs a virtualenv of its own (docs/integrations.md; ``scripts/check_agilerl.py`` builds one and runs
this file). The route is AgileRL's multi-agent one: ``IPPO`` on :func:`cluedo_env.parallel_env`, whose agent ids
``player_0`` .. ``player_3`` AgileRL groups by their prefix into one homogeneous group, ``player``: one actor and
one critic, shared by every seat. Every seat is in every step; only the acting seat's action is applied, and a
seat that is not to act has the no-op id 870 alone in its mask (the parallel env's docstring).

The mask travels inside the observation, not in ``info["action_mask"]``: ``IPPO.get_action`` masks the logits
with the info's mask, but ``IPPO.learn`` recomputes log-probabilities and entropy with the actor called on the
observation alone, that is, unmasked, so the PPO ratio would compare an unmasked probability with the masked one
recorded in the rollout (and the no-op steps of the waiting seats would train the no-op logit). Here each seat's
observation is its own int8 observation followed by its 871-entry mask, and :class:`MaskedActor` masks the logits
with that tail whenever no mask is given, in acting and in learning alike. The waiting seats' steps then have
probability 1 under both, so they add nothing to the policy gradient; they train the shared critic on real states.

The rollout is collected here, not by ``agilerl.training.train_multi_agent_on_policy``: ``IPPO.learn`` computes
GAE with ``next_non_terminal = 1 - dones[t + 1]`` (``dones[t]`` = "observation t starts a game", CleanRL's
convention), and that loop clears its done flags whenever a game ends, so a game's last step would be bootstrapped
from the next game. :class:`ParallelGames` steps ``--num-envs`` parallel envs in this process and resets a finished
game at once, so every stored transition is a real one and the start flags are exact. And :func:`collect` hands
the four seats' transitions to ``learn`` under one agent id: with several ids in a group, ``IPPO.learn`` pairs
observations and actions with other transitions' log-probabilities and advantages (see :func:`collect`), and
the policy does not learn (0.0% against random players after 65k steps; 99.5% after 33k with the one id).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
from gymnasium import spaces

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agilerl.algorithms import IPPO  # noqa: E402
from agilerl.networks.actors import StochasticActor  # noqa: E402
from agilerl.networks.value_networks import ValueNetwork  # noqa: E402
from cluedo_env.agents.play.stats import wilson_interval  # noqa: E402

import cluedo_env  # noqa: E402
from cluedo_env.envs.parallel import NUM_PARALLEL_ACTIONS  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402


class MaskedActor(StochasticActor):
    """AgileRL's stochastic actor, masked by the last :data:`NUM_PARALLEL_ACTIONS` entries of its observation
    (1 = legal) when the caller passes no mask: ``IPPO.learn`` passes none."""

    def forward(self, obs, action_mask=None):
        if action_mask is None:
            action_mask = obs[..., -NUM_PARALLEL_ACTIONS:] > 0.5
        return super().forward(obs, action_mask)


class ParallelGames:
    """``n`` :func:`cluedo_env.parallel_env` games stepped in turn, each reset as soon as it ends.

    Observations are ``{agent: (n, D + 871) int8}``: each seat's observation, then its mask. ``step`` returns the
    next observations, the rewards ``{agent: (n,) float32}`` and ``ended`` ``(n,) bool`` (that game ended on this
    step: terminated or truncated; its row of the next observations is the new game's first).
    """

    def __init__(self, n: int, seed: int):
        self.envs = [cluedo_env.parallel_env(players=4) for _ in range(n)]
        self.agents = list(self.envs[0].possible_agents)
        self.seed = seed
        self.rows = [self._row(env.reset(seed=seed + i)[0]) for i, env in enumerate(self.envs)]
        self.games_started = n

    def _row(self, observations: dict) -> dict[str, np.ndarray]:
        return {a: np.concatenate([observations[a]["observation"], observations[a]["action_mask"]])
                for a in self.agents}  # fmt: skip

    def observations(self) -> dict[str, np.ndarray]:
        return {a: np.stack([row[a] for row in self.rows]) for a in self.agents}

    def step(self, actions: dict[str, np.ndarray]):
        rewards = {a: np.zeros(len(self.envs), np.float32) for a in self.agents}
        ended = np.zeros(len(self.envs), bool)
        for i, env in enumerate(self.envs):
            obs, reward, _, _, _ = env.step({a: int(np.ravel(actions[a])[i]) for a in self.agents})
            for a in self.agents:
                rewards[a][i] = reward[a]
            if not env.agents:  # the game ended: every seat terminated or truncated at once
                ended[i] = True
                obs, _ = env.reset(seed=self.seed + self.games_started)
                self.games_started += 1
            self.rows[i] = self._row(obs)
        return self.observations(), rewards, ended


def observation_space(env_row_size: int) -> spaces.Box:
    return spaces.Box(0, 127, (env_row_size,), np.int8)


def make_agent(games: ParallelGames, args) -> IPPO:
    """IPPO over one group ``player``: a :class:`MaskedActor` and a critic, shared by the four seats."""
    size = games.observations()[games.agents[0]].shape[1]
    obs_space, act_space = observation_space(size), spaces.Discrete(NUM_PARALLEL_ACTIONS)
    net = {"encoder_config": {"hidden_size": [args.hidden]}, "head_config": {"hidden_size": [args.hidden]}}
    actor = MaskedActor(obs_space, act_space, **net)
    critic = ValueNetwork(obs_space, encoder_config=net["encoder_config"],
                          head_config={"hidden_size": [args.hidden], "output_activation": None})  # fmt: skip
    learn_step = args.num_envs * args.rollout
    return IPPO([obs_space] * len(games.agents), [act_space] * len(games.agents), agent_ids=games.agents,
                actor_networks=[actor], critic_networks=[critic], learn_step=learn_step,
                batch_size=max(2, learn_step * len(games.agents) // 4), lr=3e-4, update_epochs=4,
                ent_coef=0.01)  # fmt: skip


def collect(agent: IPPO, games: ParallelGames, obs: dict, starts: np.ndarray, steps: int):
    """``steps`` vector steps, then one ``agent.learn``; returns the observations and start flags to go on from.

    The four seats' transitions reach ``learn`` as one agent's, ``player_0``, with ``4 * n`` columns (seat-major):
    ``IPPO.learn`` flattens a group's observations and actions seat by seat, but its log-probabilities, values and
    advantages step by step, so with several seats in a group they would pair with other transitions. With one
    key the two orders agree, and GAE still runs down each column, one seat of one game."""
    fields = [[] for _ in range(6)]  # states, actions, log-probs, rewards, dones, values: (4n, ...) per step
    for _ in range(steps):
        action, log_prob, _, value = agent.get_action(obs)
        next_obs, reward, ended = games.step(action)
        seats = (obs, action, log_prob, reward, {a: starts.astype(np.float32) for a in games.agents}, value)
        for field, item in zip(fields, seats, strict=True):
            field.append(np.concatenate([item[a] for a in games.agents]))
        obs, starts = next_obs, ended
    one = games.agents[0]
    last_obs = np.concatenate([obs[a] for a in games.agents])
    last_starts = np.tile(starts, len(games.agents)).astype(np.float32)
    agent.learn(tuple({one: field} for field in fields) + ({one: last_obs}, {one: last_starts}))
    return obs, starts


def evaluate(agent: IPPO, games: int, num_envs: int, seed: int) -> dict:
    """The greedy shared policy in seat 0 against three uniformly random players (each samples its own mask),
    ``games`` games through the parallel env; a win is seat 0's final reward +1."""
    play = ParallelGames(min(num_envs, games), seed)
    rng = np.random.default_rng(seed)
    obs, wins, done = play.observations(), 0, 0
    me = play.agents[0]
    active = np.ones(len(play.envs), bool)  # rows still counting: no more than ``games`` games start
    started = len(play.envs)
    while done < games:
        mask = obs[me][:, -NUM_PARALLEL_ACTIONS:].astype(bool)
        agent.get_action({me: obs[me]})  # leaves seat 0's masked distribution on the shared actor's head
        greedy = agent.actors["player"].head_net.dist.logits.argmax(-1).cpu().numpy()
        actions = {me: greedy}
        for a in play.agents[1:]:
            legal = obs[a][:, -NUM_PARALLEL_ACTIONS:].astype(bool)
            actions[a] = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
        assert mask[np.arange(len(greedy)), greedy].all(), "the greedy action is always legal"
        obs, reward, ended = play.step(actions)
        for i in np.flatnonzero(ended & active):
            done += 1
            wins += int(reward[me][i] > 0)
            active[i] = started < games
            started += int(active[i])
    lo, hi = wilson_interval(wins, games)
    return {"games": games, "win_rate": wins / games, "ci95": (lo, hi)}


def main(argv: list[str] | None = None) -> dict:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100_000, help="parallel-env steps (one per game per step) in all")
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--rollout", type=int, default=64, help="steps per env between updates")
    ap.add_argument("--eval-games", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # IPPO.learn shuffles its minibatches with numpy's global generator
    games = ParallelGames(args.num_envs, args.seed)
    agent = make_agent(games, args)
    obs, starts = games.observations(), np.zeros(args.num_envs, bool)
    updates = max(1, args.steps // (args.num_envs * args.rollout))
    t0 = time.perf_counter()
    for _ in range(updates):
        obs, starts = collect(agent, games, obs, starts, args.rollout)
    seconds = time.perf_counter() - t0
    steps = updates * args.num_envs * args.rollout
    result = evaluate(agent, args.eval_games, args.num_envs, seed=10_000 + args.seed)
    lo, hi, pct = *result["ci95"], 100 * result["win_rate"]
    print(f"AgileRL IPPO: {steps} parallel-env steps ({steps * len(games.agents)} seat transitions) in {seconds:.0f} s "
          f"({steps / seconds:,.0f} steps/s with training); greedy seat 0 vs three random players: {pct:.1f}% "
          f"(95% CI {100 * lo:.1f}-{100 * hi:.1f}%, {result['games']} games)")  # fmt: skip
    return {"steps": steps, "seconds": seconds, **result}


if __name__ == "__main__":
    main()
