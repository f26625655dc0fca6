"""The advised action space: a rule-based advisor plays the learner's seat, the learner decides only when to accuse.

R-A1 (a player may accuse on their own turn, at its start or after the move or suggestion) is
where the learner decides; every other decision of its seat is the advisor's.
"""

from __future__ import annotations

import numpy as np
import pytest

from cluedo_env.envs.learner_actions import LearnerActions
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError
from training.learner_core import LearnerCore


def _engine_mask(accuse_open: list[bool]) -> np.ndarray:
    m = np.zeros((len(accuse_open), A.NUM_ACTIONS), bool)
    m[:, A.END_TURN] = True
    for i, ok in enumerate(accuse_open):
        m[i, A.ACCUSE0 : A.ACCUSE0 + 5] = ok
    return m


def test_advised_space_masks_and_maps_actions() -> None:
    """0 = the advisor's action (asked only for the rows that chose it), 1 = the belief's accusation."""
    acts = LearnerActions(advised=True)
    assert acts.n == 2
    mask = _engine_mask([True, False, True])
    assert acts.decides(mask).tolist() == [True, False, True]
    assert acts.mask(mask).tolist() == [[True, True], [True, False], [True, True]]
    asked: list[list[int]] = []

    def advice(rows: np.ndarray) -> np.ndarray:
        asked.append(rows.tolist())
        return np.full(len(rows), A.END_TURN)

    out = acts.to_engine(np.array([1, 0, 0]), mask, accuse=lambda rows, legal: legal.argmax(1), advice=advice)
    assert out.tolist() == [A.ACCUSE0, A.END_TURN, A.END_TURN]
    assert asked == [[1, 2]]
    assert acts.to_engine(np.array([2]), mask[:1], accuse=None, advice=advice).tolist() == [-1]  # out of range
    with pytest.raises(ValueError, match="replaces macro_moves"):
        LearnerActions(macro_moves=True, advised=True)
    assert LearnerActions().decides(mask).all()  # the other spaces decide everything


def test_advised_env_asks_the_learner_only_where_it_may_accuse() -> None:
    """Always following the deducer advisor: every decision shown is the learner's own, with an accusation open
    (R-A1); the advisor plays everything else, and games run to their end (+1 or -1)."""
    core = LearnerCore(8, "classic", opponents="heuristic", seat="random", belief=True, observation="compact",
                       advisor="deducer", seed=3)  # fmt: skip
    core.reset(seed=3)
    ended_games, rewards = 0, []
    for _ in range(150):
        assert core.action_masks().shape == (8, 2)
        live = ~core.unplayed
        assert core.actions.decides(core.engine_mask())[live].all()
        assert (core.eng.actor == core.seat)[live].all()
        _, rew, term, trunc, ended = core.step(np.zeros(8, np.int64))
        ended_games += int(ended.sum())
        rewards += rew[ended].tolist()
    assert ended_games >= 8
    assert set(rewards) <= {-1.0, 1.0}


def test_advised_env_accusing_at_once_ends_each_episode_in_one_decision() -> None:
    core = LearnerCore(8, "classic", opponents="random", seat=0, belief=True, advisor="deducer", seed=5)
    core.reset(seed=5)
    for _ in range(5):
        mask = core.action_masks()
        act = np.where(mask[:, 1], 1, 0)
        _, rew, term, trunc, ended = core.step(act)
        accused = mask[:, 1] & ~core.unplayed
        assert ended[accused].all() and term[accused].all()  # a right accusation wins, a wrong one eliminates


@pytest.mark.parametrize(
    "kwargs, match",
    [({"advisor": "deducer"}, "needs belief=True"),
     ({"advisor": "deducer", "belief": True, "macro_moves": True}, "replaces macro_moves"),
     ({"advisor": "", "belief": True}, "player name")],
)  # fmt: skip
def test_advised_env_config_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        LearnerCore(2, "classic", **kwargs)


def test_advised_checkpoint_plays_by_name(tmp_path) -> None:
    """A tiny advised run: the checkpoint records its advisor, and the ckpt: player plays whole games with it,
    never an illegal action."""
    pytest.importorskip("sb3_contrib")
    from agents.registry import make_agent
    from agents.runner import play_games
    from cluedo_env.rules.config import make_config
    from training.policy import load_model
    from training.train import TrainConfigError, Trainer, load_train_config

    cfg = {
        "run_dir": str(tmp_path / "advised"),
        "total_timesteps": 256,
        "checkpoint_every": 256,
        "env": {"num_envs": 16, "opponents": "heuristic", "belief": True, "observation": "compact",
                "macro_moves": False, "advisor": "deducer"},
        "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1, "net_arch": [32]},
        "eval": {"every": 0, "games": 0},
    }  # fmt: skip
    Trainer(load_train_config(None, **cfg), progress=False).run()
    meta = load_model(tmp_path / "advised" / "model.zip").cluedo_meta
    assert meta["advisor"] == "deducer" and meta["n_actions"] == 2
    # a checkpoint name may carry options (as the evaluation of an advised run does: eval.deterministic=false)
    player = make_agent(f'ckpt:{tmp_path / "advised" / "model.zip"}{{"deterministic": false}}', seed=0)
    assert player.deterministic is False
    others = [make_agent("heuristic", seed=k) for k in range(3)]
    records = play_games(make_config("classic", players=4), [player, *others], 16, batch_size=8, seed=1)
    assert len(records) == 16
    assert player._advisor is not None and player._advisor.fallbacks == 0
    bad = {**cfg, "env": {**cfg["env"], "macro_accuse": True}}
    with pytest.raises(TrainConfigError, match="env.advisor needs"):
        load_train_config(None, **bad)
