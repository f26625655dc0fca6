"""Imitation: the learner's network trained to play as a rule-based teacher before PPO (``imitation`` in a config).

Why: PPO from random weights explores a 682-action game in which almost every accusation loses; after millions of
steps such a learner still plays far below the rule-based ladder. A network that first learns to choose as the
expert does starts PPO where the expert is, and PPO then only has to find where the expert is wrong.

How (one *round*, repeated until ``imitation.games`` games have been played):

* ``games_per_round`` games are played with the teacher in every seat (:func:`cluedo_env.agents.play.runner.play_games`,
  ``batch_games`` at once). Each seat is a :class:`Recorder`: it builds that seat's learner inputs exactly as a
  trained checkpoint playing as a bot does (:class:`cluedo_env.agents.learner.inputs.LearnerInputs`: the same
  observation,
  notebook and compact pieces, from the seat's :class:`~cluedo_env.engine.views.PlayerView` only), asks the
  teacher, plays the teacher's action and records the inputs, the legal actions of the learner's space and the
  learner actions that play the teacher's choice (:func:`~cluedo_env.envs.learner_actions.engine_targets`).
* With ``learner_plays`` (DAgger), once ``learner_plays_after`` games are imitated each seat of each game is played
  by the network (its likeliest legal action, as at play time) with that probability; the teacher is still asked at
  every decision and its choice is the label. Labels from the teacher's games alone do not cover the positions the
  network reaches itself: an imitated network plays the teacher's choice less often in its own games than in the
  teacher's.
* When a game ends, each decision of a seat gets the value target ``gamma ** (decisions left) * reward``.
* The network trains ``epochs`` passes over the round's decisions in shuffled minibatches of ``batch_size``: the
  cross-entropy of the teacher's choice (minus the log of the total probability of the learner actions that play
  it: two macro moves may lead to the same square) plus ``value_coef`` times the value's squared error. Then the
  decisions are dropped: memory stays at one round.
* After each round the policy and ``imitation/state.json`` (rounds done, wall time, torch RNG) are written
  atomically to the run folder; ``--resume`` continues from the last round written.

Every decision at play time is then the network's: the teacher is only a source of labels.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from cluedo_env.agents.learner.inputs import LearnerInputs
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.players.base import Agent
from cluedo_env.training.sb3.checkpoints import policy_fn
from cluedo_env.training.sb3.config import EnvSettings, TrainConfig
from cluedo_env.training.sb3.resume import check_resume_config, set_torch_rng_state, torch_rng_state

from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import LearnerActions, engine_targets
from cluedo_env.files import write_text_atomic
from cluedo_env.rules import actions as A

_MASKED = -1e8  # as the policy's masked logits


LearnerPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (learner inputs, legal learner actions) -> actions


class Recorder(LearnerInputs, Agent):
    """Plays one seat as ``teacher`` does and records every decision it makes there (see the module docstring).

    ``inputs``: the learner inputs the policy takes (its ``belief``, ``observation``, ``packed_observation``,
    ``accusation_features``, ``holder_probabilities``). ``network`` (with ``share`` > 0): in that share of the
    games, drawn at each game's start, the network plays the seat and the teacher only labels (DAgger).
    """

    def __init__(self, teacher: Agent, actions: LearnerActions, inputs: EnvSettings, seed: int,
                 network: LearnerPolicy | None = None, share: float = 0.0) -> None:  # fmt: skip
        self.teacher = teacher
        self.network = network
        self.share = share if network is not None else 0.0
        self._draw = np.random.default_rng([seed, 1])
        self.name = f"recorder({getattr(teacher, 'name', type(teacher).__name__)})"
        self.actions = actions
        self.use_belief = inputs.belief
        self.observation = inputs.observation
        self.packed_observation = inputs.packed_observation
        self.accusation_features = inputs.accusation_features
        self.holder_probabilities = inputs.holder_probabilities
        self.seed = seed
        self.clear()
        self._episode = np.zeros(0, np.int64)  # (B,) episode number of each slot's current game
        self._count = np.zeros(0, np.int64)  # (B,) this seat's decisions in it so far
        self._open = np.zeros(0, bool)  # (B,) the slot's game has not ended yet
        self._network_plays = np.zeros(0, bool)  # (B,) the network plays this seat in the slot's current game

    def clear(self) -> None:
        """Drop the recorded decisions (their games must have ended)."""
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.targets: list[np.ndarray] = []
        self.keys: list[np.ndarray] = []  # (n, 3) slot, episode, decision number
        self.outcomes: list[tuple[int, int, float, int]] = []  # slot, episode, reward, decisions
        self.network_decisions = 0  # decisions recorded where the network played

    def _grow(self, B: int) -> None:
        if len(self._episode) != B:
            self._episode = np.zeros(B, np.int64)
            self._count = np.zeros(B, np.int64)
            self._open = np.zeros(B, bool)
            self._network_plays = np.zeros(B, bool)

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        LearnerInputs.reset(self, view, idx)
        self.teacher.reset(view, idx)
        self._grow(view.batch_size)
        self._episode[idx] += 1
        self._count[idx] = 0
        self._open[idx] = True
        self._network_plays[idx] = self._draw.random(len(idx)) < self.share

    def observe_step(self, view: PlayerView) -> None:
        self.teacher.observe_step(view)
        over = np.flatnonzero(self._open & (view.phase == A.OVER))
        if len(over):
            reward = view.reward[over]
            self.outcomes += zip(over.tolist(), self._episode[over].tolist(), reward.tolist(),
                                 self._count[over].tolist(), strict=True)  # fmt: skip
            self._open[over] = False

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        obs, accuse = self.learner_inputs(view, idx)
        chosen = self.teacher.act(view, idx)
        engine_mask = view.legal_action_mask_of(idx)
        legal = self.actions.mask(engine_mask)
        self.obs.append(np.array(obs))
        self.masks.append(legal)
        self.targets.append(engine_targets(chosen, engine_mask, self.actions.macro_moves))
        self.keys.append(np.stack([idx, self._episode[idx], self._count[idx]], 1))
        self._count[idx] += 1
        rows = np.flatnonzero(self._network_plays[idx])
        if not len(rows):
            return chosen
        self.network_decisions += len(rows)
        sub_accuse = None if accuse is None else lambda r, ok: accuse(rows[r], ok)
        played = np.array(chosen, np.int64)
        played[rows] = self.actions.to_engine(self.network(obs[rows], legal[rows]), engine_mask[rows], sub_accuse)
        return played

    def samples(self, gamma: float) -> dict[str, np.ndarray]:
        """The decisions of ended games: ``obs``, ``masks``, ``targets`` and ``values`` (discounted outcome)."""
        if not self.obs:
            return {}
        keys = np.concatenate(self.keys)
        out = np.array(self.outcomes, np.float64).reshape(-1, 4)
        if not len(out):
            return {}
        game_key = keys[:, 0] * (1 << 32) + keys[:, 1]
        ended_key = out[:, 0].astype(np.int64) * (1 << 32) + out[:, 1].astype(np.int64)
        order = np.argsort(ended_key)
        row = order[np.minimum(np.searchsorted(ended_key[order], game_key), len(order) - 1)]
        ended = ended_key[row] == game_key
        left = out[row, 3] - 1 - keys[:, 2]
        values = (out[row, 2] * gamma**left).astype(np.float32)
        pick = np.flatnonzero(ended)
        return {"obs": np.concatenate(self.obs)[pick], "masks": np.concatenate(self.masks)[pick],
                "targets": np.concatenate(self.targets)[pick], "values": values[pick]}  # fmt: skip


def imitation_losses(policy, obs: torch.Tensor, masks: torch.Tensor, targets: torch.Tensor, values: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """(policy loss, value loss, accuracy) of a minibatch: the teacher's choice's cross-entropy under the masked
    policy, the value's squared error, and how often the policy's likeliest action plays the teacher's choice."""
    features = policy.extract_features(obs, policy.features_extractor)
    latent_pi, latent_vf = policy.mlp_extractor(features)
    logits = policy.action_net(latent_pi).float() + (masks.float() - 1.0) * -_MASKED
    logp = torch.log_softmax(logits, -1)
    chosen = torch.logsumexp(logp + (targets.float() - 1.0) * -_MASKED, -1)
    value = policy.value_net(latent_vf).float().reshape(-1)
    accuracy = targets.gather(1, logits.argmax(1, keepdim=True)).float().mean()
    return -chosen.mean(), torch.mean((value - values) ** 2), accuracy


class Imitation:
    """The imitation phase of a training run (``cfg.imitation``), training ``model.policy`` in place."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, config, progress: bool = True) -> None:
        self.cfg = cfg
        self.im = cfg.imitation
        self.dir = run_dir / "imitation"
        self.state_path = self.dir / "state.json"
        self.config = config
        self.progress = progress
        self.gamma = cfg.ppo.gamma

    def done(self) -> bool:
        """Whether this run's imitation phase has played all its games."""
        state = self._state()
        return state is not None and state["games"] >= self.im.games

    def _state(self) -> dict | None:
        try:
            return json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def _recorders(self, seed: int, network: LearnerPolicy | None) -> list[Recorder]:
        env = self.cfg.env
        actions = LearnerActions(env.macro_moves)
        seeds = np.random.SeedSequence(seed).generate_state(2 * self.config.players)
        return [Recorder(make_agent(self.im.teacher, seed=int(seeds[2 * s])), actions, env, int(seeds[2 * s + 1]),
                         network, self.im.learner_plays) for s in range(self.config.players)]  # fmt: skip

    def run(self, model) -> dict:
        """Train ``model.policy`` until the phase is done (continuing a saved one); returns the last round's line."""
        im, policy = self.im, model.policy
        total, per_round = im.games, im.games_per_round
        state = self._state() or {"games": 0, "rounds": 0, "elapsed_s": 0.0}
        if state["games"]:  # resume: the same run (config), the weights and the generator of the last round written
            check_resume_config(state.get("config"), self.cfg, self.dir)
            saved = torch.load(self.dir / "policy.pt", weights_only=True)
            policy.load_state_dict(saved["policy"])
            set_torch_rng_state(state["torch_rng"])
        optimizer = torch.optim.Adam(policy.parameters(), lr=im.learning_rate)
        if state["games"]:
            optimizer.load_state_dict(saved["optimizer"])
        t0, line = time.perf_counter(), {}
        rounds = math.ceil(total / per_round)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=total, initial=state["games"], unit="game", desc="imitation", file=sys.stderr,
                       dynamic_ncols=True)  # fmt: skip
        while state["games"] < total:
            r = state["rounds"]
            games = min(per_round, total - state["games"])
            if bar is not None:
                bar.set_description(f"imitation {r + 1}/{rounds}: {im.teacher} plays")
            network = None
            if im.learner_plays and state["games"] >= im.learner_plays_after:  # DAgger: the network plays seats too
                policy.set_training_mode(False)
                network = policy_fn(model, deterministic=True)
            recorders = self._recorders(self.cfg.seed * 1_000_003 + r, network)
            play_games(self.config, recorders, games, seed=self.cfg.seed * 7919 + r,
                       batch_size=im.batch_games, progress=None if bar is None else bar.update)  # fmt: skip
            parts = [rec.samples(self.gamma) for rec in recorders]
            data = {k: np.concatenate([p[k] for p in parts if p]) for k in ("obs", "masks", "targets", "values")}
            if bar is not None:
                bar.set_description(f"imitation {r + 1}/{rounds}: network learns")
            line = self._train(policy, optimizer, data, r)
            line["network_played"] = sum(rec.network_decisions for rec in recorders) / max(1, len(data["values"]))
            state = {"games": state["games"] + games, "rounds": r + 1,
                     "elapsed_s": state["elapsed_s"] + time.perf_counter() - t0, "torch_rng": torch_rng_state(),
                     **line, "config": self.cfg.to_dict()}  # fmt: skip
            t0 = time.perf_counter()
            self._save(policy, optimizer, state)
            if bar is not None:
                played = f", network played {100 * line['network_played']:.0f}%" if network is not None else ""
                bar.set_postfix_str(f"loss {line['policy_loss']:.3f}, match {100 * line['accuracy']:.1f}%{played}")
        if bar is not None:
            bar.close()
        print(f"imitation: {state['games']:,} {im.teacher} games in {state['elapsed_s'] / 60:.1f} min; the "
              f"network plays the teacher's choice {100 * state.get('accuracy', 0):.1f}% of the time", file=sys.stderr)
        return state

    def _train(self, policy, optimizer, data: dict[str, np.ndarray], round_no: int) -> dict:
        im = self.im
        n = len(data["values"])
        gen = np.random.default_rng(self.cfg.seed * 31 + round_no)
        bs = im.batch_size
        sums = np.zeros(3)
        steps = 0
        policy.set_training_mode(True)
        for _ in range(im.epochs):
            order = gen.permutation(n)
            for lo in range(0, n, bs):
                b = order[lo : lo + bs]
                obs = torch.from_numpy(data["obs"][b])
                masks, targets = torch.from_numpy(data["masks"][b]), torch.from_numpy(data["targets"][b])
                values = torch.from_numpy(data["values"][b])
                pi_loss, v_loss, acc = imitation_losses(policy, obs, masks, targets, values)
                loss = pi_loss + im.value_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), self.cfg.ppo.max_grad_norm)
                optimizer.step()
                sums += (pi_loss.item(), v_loss.item(), acc.item())
                steps += 1
        policy.set_training_mode(False)
        pi, v, acc = sums / max(1, steps)
        return {"decisions": int(n), "policy_loss": pi, "value_loss": v, "accuracy": acc}

    def _save(self, policy, optimizer, state: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / "policy.pt.tmp"
        torch.save({"policy": policy.state_dict(), "optimizer": optimizer.state_dict()}, tmp)
        tmp.replace(self.dir / "policy.pt")
        write_text_atomic(self.state_path, json.dumps(state, indent=1))
        with open(self.dir / "log.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps({k: v for k, v in state.items() if k not in ("torch_rng", "config")}) + "\n")


__all__ = ["Imitation", "Recorder", "imitation_losses"]
