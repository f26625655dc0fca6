"""The imitation phase (training/sb3/imitation.py) and the labels it learns from.

* ``engine_targets`` marks exactly the learner actions that play an engine action (macro moves: the rooms whose
  nearest legal square is the teacher's square; none: the room nearest to it);
* a :class:`Recorder` records one decision per action its seat took, labels legal in the learner's space, and
  value targets that are the seat's discounted outcome;
* the losses train: a small batch is learned by heart;
* an imitation phase interrupted after a round and resumed ends with the same weights as one run straight through;
* with ``learner_plays`` (DAgger) the network plays the seats drawn for it while the labels stay the teacher's;
* config checks refuse what the phase cannot label.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import config

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.envs.learner_actions import MACRO0, engine_targets, macro_to_engine
from cluedo_env.errors import TrainConfigError
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import ROOM_LOC0, load_board
from cluedo_env.rules.cards import NUM_ROOMS


def test_engine_targets_mark_the_learner_actions_that_play_an_engine_action():
    eng = VectorEngine(config("classic"), 256, autoreset=True)
    eng.reset(3)
    rng = np.random.default_rng(0)
    dist = load_board().distance[:, ROOM_LOC0 : ROOM_LOC0 + NUM_ROOMS]
    checked_moves = unreachable = 0
    for _ in range(120):
        mask = eng.legal_action_mask.copy()
        acts = eng.sample_random_actions(rng)
        full = engine_targets(acts, mask, macro_moves=False)
        assert (full.sum(1) == 1).all() and (full.argmax(1) == acts).all()
        macro = engine_targets(acts, mask, macro_moves=True)
        assert macro.shape == (256, 682) and macro.any(1).all()
        for i in np.flatnonzero((acts >= A.MOVE0) & (acts < A.SUGGEST0)):
            marked = set(np.flatnonzero(macro[i]).tolist())
            goes = {k: int(macro_to_engine(np.array([MACRO0 + k]), mask[i : i + 1])[0]) for k in range(NUM_ROOMS)}
            playing = {MACRO0 + k for k, a in goes.items() if a == acts[i]}
            if playing:
                assert marked == playing
            else:  # no macro move goes there: the one toward the room nearest to the square
                unreachable += 1
                assert marked == {MACRO0 + int(dist[acts[i] - A.MOVE0].argmin())}
            checked_moves += 1
        other = (acts < A.MOVE0) | (acts >= A.SUGGEST0)
        shift = np.where(acts >= A.SUGGEST0, A.SUGGEST0 - (MACRO0 + NUM_ROOMS), 0)
        assert (macro[other].argmax(1) == (acts - shift)[other]).all() and (macro[other].sum(1) == 1).all()
        eng.step(acts)
    assert checked_moves > 50 and unreachable > 0


def _recorders(preset="classic", seed=0):
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.training.sb3.config import EnvSettings
    from cluedo_env.training.sb3.imitation import Recorder

    from cluedo_env.envs.learner_actions import LearnerActions

    inputs = EnvSettings(preset=preset, belief=True, observation="compact")
    return [Recorder(make_agent("expert", seed=seed + s), LearnerActions(True), inputs, seed=s) for s in range(4)]


def test_recorders_label_every_decision_with_legal_targets_and_the_discounted_outcome():
    from cluedo_env.agents.play.runner import play_games

    recorders = _recorders("cards")
    records = play_games(config("cards"), recorders, 24, seed=5, batch_size=8)
    gamma = 0.9
    parts = [r.samples(gamma) for r in recorders]
    for p in parts:
        assert (p["targets"] & ~p["masks"]).sum() == 0 and p["targets"].any(1).all()
        assert p["obs"].dtype == np.int8 and len(p["obs"]) == len(p["values"])
    # values: outcome * gamma ** (decisions left), the outcome +1, -1 or 0; a game's last decision carries it whole
    values = np.concatenate([p["values"] for p in parts])
    k = np.log(np.abs(values[values != 0])) / np.log(gamma)
    assert np.allclose(k, np.round(k), atol=1e-3) and (k > -1e-3).all()
    wins = sum(r.winner >= 0 for r in records)
    last_of_winner = sum(int((p["values"] == 1.0).sum()) for p in parts)
    assert last_of_winner == wins  # one +1 per game won: the winner's winning decision
    decisions = sum(len(p["values"]) for p in parts)
    assert decisions == sum(len(k) for r in recorders for k in r.keys)  # every game ended: nothing dropped


class _Spy:
    """A player that remembers the actions it chose (the teacher's labels)."""

    def __init__(self, inner):
        self.inner, self.chosen = inner, []

    def reset(self, view, idx):
        self.inner.reset(view, idx)

    def observe_step(self, view):
        self.inner.observe_step(view)

    def act(self, view, idx):
        out = self.inner.act(view, idx)
        self.chosen.append(np.array(out))
        return out


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_the_network_plays_its_seats_and_the_teacher_labels_them(share):
    """DAgger: where the network plays a seat, the engine gets the network's action (in the learner's space, turned
    into an engine action) and the recorded label is still the teacher's choice; each game's seat is drawn once."""
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.agents.players.base import sample_legal
    from cluedo_env.training.sb3.config import EnvSettings
    from cluedo_env.training.sb3.imitation import Recorder

    from cluedo_env.envs.learner_actions import LearnerActions

    rng = np.random.default_rng(0)
    picks = []

    def network(obs, legal):
        assert obs.dtype == np.int8 and obs.shape[0] == legal.shape[0]
        picks.append(sample_legal(legal.astype(bool), rng))
        return picks[-1]

    class Watched(Recorder):
        def act(self, view, idx):
            out = super().act(view, idx)
            self.played.append((np.array(out), view.legal_action_mask_of(idx), self._network_plays[idx].copy()))
            return out

    inputs = EnvSettings(preset="cards", belief=True, observation="compact")
    actions = LearnerActions(True)
    spy = _Spy(make_agent("heuristic", seed=1))
    seat0 = Watched(spy, actions, inputs, seed=3, network=network, share=share)
    seat0.played = []
    others = [Recorder(make_agent("heuristic", seed=s), actions, inputs, seed=s) for s in (4, 5, 6)]
    play_games(config("cards"), [seat0, *others], 32, seed=2, batch_size=8)

    taught = np.concatenate(spy.chosen)
    played = np.concatenate([p[0] for p in seat0.played])
    by_network = np.concatenate([p[2] for p in seat0.played])
    assert seat0.network_decisions == by_network.sum()
    assert (np.concatenate(seat0.targets) == engine_targets(taught, np.concatenate([p[1] for p in seat0.played]),
                                                             True)).all()  # fmt: skip
    assert (played[~by_network] == taught[~by_network]).all()
    if share == 0.0:
        assert not by_network.any() and not picks
        return
    from_network = actions.to_engine(np.concatenate(picks), np.concatenate([p[1] for p in seat0.played])[by_network])
    assert (played[by_network] == from_network).all() and (played[by_network] != taught[by_network]).any()
    games = np.concatenate(seat0.keys)[:, :2]  # (slot, episode): the draw holds for a whole game
    per_game = {}
    for key, net in zip(map(tuple, games), by_network, strict=True):
        assert per_game.setdefault(key, net) == net
    shares = np.mean(list(per_game.values()))
    assert shares == 1.0 if share == 1.0 else 0.2 < shares < 0.8


def test_imitation_losses_learn_a_batch_by_heart():
    import torch
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.training.sb3.factored_policy import FactoredMaskablePolicy, accuse0_of, suggest0_of
    from cluedo_env.training.sb3.imitation import imitation_losses
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv
    from sb3_contrib import MaskablePPO

    torch.manual_seed(0)
    recorders = _recorders("cards")
    play_games(config("cards"), recorders, 8, seed=1, batch_size=8)
    data = recorders[0].samples(0.99)
    env = CluedoVecEnv(2, config("cards"), seed=0, macro_moves=True, belief=True, observation="compact")
    model = MaskablePPO(FactoredMaskablePolicy, env, n_steps=8, batch_size=16, seed=0,
                        policy_kwargs={"net_arch": [64], "suggest0": suggest0_of(True),
                                       "accuse0": accuse0_of(True, False)})  # fmt: skip
    policy = model.policy
    batch = [torch.from_numpy(data[k]) for k in ("obs", "masks", "targets", "values")]
    opt = torch.optim.Adam(policy.parameters(), lr=3e-3)
    first = None
    for _ in range(150):
        pi, v, acc = imitation_losses(policy, *batch)
        first = first if first is not None else (pi.item(), v.item(), acc.item())
        opt.zero_grad()
        (pi + v).backward()
        opt.step()
    assert pi.item() < 0.3 * first[0] and v.item() < 0.5 * first[1]
    assert acc.item() > 0.9 > first[2]


def _tiny(run_dir, **over):
    from cluedo_env.training.sb3.config import load_train_config

    cfg = {
        "run_dir": str(run_dir), "seed": 0, "total_timesteps": 256, "checkpoint_every": 256, "policy": "factored",
        "env": {"preset": "cards", "num_envs": 16, "opponents": "random", "seat": "random", "macro_moves": True,
                "belief": True, "observation": "compact"},
        "imitation": {"teacher": "expert", "games": 24, "games_per_round": 8, "batch_games": 8, "batch_size": 64},
        "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1, "net_arch": [32]},
        "eval": {"every": 0, "games": 0},
    }  # fmt: skip
    for k, v in over.items():
        cfg[k] = {**cfg.get(k, {}), **v} if isinstance(v, dict) else v
    return load_train_config(None, **cfg)


def test_an_interrupted_imitation_resumes_to_the_weights_of_a_straight_run(tmp_path, monkeypatch):
    import torch
    from cluedo_env.training.sb3.imitation import Imitation
    from cluedo_env.training.sb3.train import Trainer

    straight = Trainer(_tiny(tmp_path / "a", total_timesteps=0), progress=False)
    straight.run()
    log = [json.loads(x) for x in (tmp_path / "a" / "imitation" / "log.jsonl").read_text().splitlines()]
    assert [r["rounds"] for r in log] == [1, 2, 3] and log[-1]["games"] == 24
    assert (tmp_path / "a" / "checkpoints" / "step_0000000000.zip").is_file()  # PPO starts from it

    train = Imitation._train
    calls = []

    def stop_after_two(self, *args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return train(self, *args)

    monkeypatch.setattr(Imitation, "_train", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        Trainer(_tiny(tmp_path / "b", total_timesteps=0), progress=False).run()
    assert json.loads((tmp_path / "b" / "imitation" / "state.json").read_text())["rounds"] == 2
    with pytest.raises(TrainConfigError, match="holds an earlier run"):  # a new run there would mix with it
        Trainer(_tiny(tmp_path / "b", total_timesteps=0), progress=False).run()
    monkeypatch.setattr(Imitation, "_train", train)
    with pytest.raises(TrainConfigError, match="imitation.epochs"):  # resuming is for the same run
        Trainer(_tiny(tmp_path / "b", total_timesteps=0, imitation={"epochs": 3}), resume=True, progress=False).run()
    resumed = Trainer(_tiny(tmp_path / "b", total_timesteps=0), resume=True, progress=False)
    resumed.run()
    a, b = straight.model.policy.state_dict(), resumed.model.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("over, match", [
    ({"env": {"macro_accuse": True}}, "imitation labels every decision"),
    ({"imitation": {"teacher": "no_such_player"}}, "no_such_player"),
    ({"imitation": {"games": 0}}, "imitation.games"),
    ({"imitation": {"learning_rate": 0}}, "imitation.learning_rate"),
    ({"imitation": {"learner_plays": 1.5}}, "imitation.learner_plays"),
    ({"imitation": {"learner_plays_after": -1}}, "imitation.learner_plays_after"),
])  # fmt: skip
def test_imitation_settings_are_checked(tmp_path, over, match):
    from cluedo_env.training.sb3.train import Trainer

    with pytest.raises(TrainConfigError, match=match):
        Trainer(_tiny(tmp_path / "r", **over), progress=False)


def test_the_network_plays_seats_once_its_games_are_imitated(tmp_path):
    """``learner_plays_after``: the first round is the teacher's alone; from the second the network plays seats."""
    from cluedo_env.training.sb3.train import Trainer

    cfg = _tiny(tmp_path / "r", total_timesteps=0, imitation={"learner_plays": 0.5, "learner_plays_after": 8})
    Trainer(cfg, progress=False).run()
    log = [json.loads(x) for x in (tmp_path / "r" / "imitation" / "log.jsonl").read_text().splitlines()]
    assert log[0]["network_played"] == 0 and all(0.1 < r["network_played"] < 0.9 for r in log[1:])


def test_each_evaluation_lineup_is_played_and_logged(tmp_path):
    from cluedo_env.training.sb3.train import Trainer

    lineups = [["random", "random", "random"], ["heuristic", "random", "heuristic"]]
    cfg = _tiny(tmp_path / "r", total_timesteps=0, imitation={"games": 8}, eval={"games": 8, "batch_size": 8,
                                                                                 "opponents": lineups})  # fmt: skip
    Trainer(cfg, progress=False).run()
    rows = [json.loads(x) for x in (tmp_path / "r" / "evals.jsonl").read_text().splitlines()]
    assert [r["opponents"] for r in rows[:2]] == lineups and all(r["games"] == 8 for r in rows)
    assert all(r["timesteps"] == 0 and "wrong_accusations" in r for r in rows)
    best = json.loads((tmp_path / "r" / "best.json").read_text())
    assert best["opponents"] == lineups[0]  # the first lineup selects
    with pytest.raises(TrainConfigError, match=r"eval.opponents\[1\]"):
        Trainer(_tiny(tmp_path / "q", eval={"opponents": [lineups[0], ["random"]]}), progress=False)
