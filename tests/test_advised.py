"""The advised action space: a rule-based advisor plays the learner's seat, the learner decides only when to accuse.

R-A1 (a player may accuse on their own turn, at its start or after the move or suggestion) is
where the learner decides; every other decision of its seat is the advisor's.
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import LearnerOptions

from cluedo_env.envs.learner_actions import LearnerActions
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError


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
    core = LearnerCore(LearnerOptions(8, "classic", opponents="heuristic", seat="random", belief=True,
                                      observation="compact", advisor="deducer", seed=3))  # fmt: skip
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
    core = LearnerCore(LearnerOptions(8, "classic", opponents="random", seat=0, belief=True, advisor="deducer", seed=5))
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
        LearnerCore(LearnerOptions(2, "classic", **kwargs))


def _tiny_advised_config(tmp_path, advisor: str) -> dict:
    """A 256-step advised training run against heuristic players (compact observation), no evaluation."""
    return {
        "run_dir": str(tmp_path / "advised"),
        "total_timesteps": 256,
        "checkpoint_every": 256,
        "env": {"num_envs": 16, "opponents": "heuristic", "belief": True, "observation": "compact",
                "macro_moves": False, "advisor": advisor},
        "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1, "net_arch": [32]},
        "eval": {"every": 0, "games": 0},
    }  # fmt: skip


def test_advised_checkpoint_plays_by_name(tmp_path) -> None:
    """A tiny advised run: the checkpoint records its advisor, and the ckpt: player plays whole games with it,
    never an illegal action."""
    pytest.importorskip("sb3_contrib")
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.training.sb3.checkpoints import load_model
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.train import TrainConfigError, Trainer

    from cluedo_env.rules.config import make_config

    cfg = _tiny_advised_config(tmp_path, "deducer")
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


# ================================================================= expert advisor: accusation features
RISKLESS_EXPERT = 'expert{"floor": 1.01, "accuse_assumed": false, "max_hypotheses": 0}'


def test_expert_advisor_adds_the_accusation_features() -> None:
    """An expert advisor appends the accusation slots to the learner observation (and only an expert does);
    every slot is 0 or 1, ``decides`` is set wherever the learner is asked, and action 1 is open only where
    ``p1`` was sampled and accuses the triple it is about."""
    from cluedo_env.agents.learner.accusation_features import ACCUSATION_PIECES, ACCUSATION_SIZE, accusation_layout
    from cluedo_env.agents.learner.compact_observation import compact_size

    from cluedo_env.rules.config import make_config

    assert ACCUSATION_SIZE == sum(w for _, w, _ in ACCUSATION_PIECES) == 33
    cfg = make_config("classic", players=4)
    plain = LearnerCore(LearnerOptions(2, cfg, opponents="random", belief=True, observation="compact",
                                       advisor="deducer", seed=1))  # fmt: skip
    assert not plain.accusation_features and plain.obs_size == compact_size(cfg)
    core = LearnerCore(LearnerOptions(16, cfg, opponents="deducer", seat="random", belief=True, observation="compact",
                                      advisor=RISKLESS_EXPERT, seed=4))  # fmt: skip
    assert core.accusation_features and core.obs_size == compact_size(cfg) + ACCUSATION_SIZE
    lay = accusation_layout()
    start = core.obs_size - ACCUSATION_SIZE
    obs = core.reset(seed=4)
    sampled = 0
    for _ in range(120):
        assert obs.shape == (16, core.obs_size)
        feats = obs[:, start:]
        assert set(np.unique(feats)) <= {0, 1}
        live = ~core.unplayed
        assert (feats[live, lay["decides"][0]] == 1).all()
        best = core.accusation.best[np.arange(16)]
        has = live & (feats[:, lay["sampled"][0]] == 1)
        assert (best[has] >= 0).all() and (best[~has] == -1).all()
        sampled += int(has.sum())
        mask = core.action_masks()
        assert not mask[~has, 1].any()  # action 1 only where a best open triple was sampled
        ones = np.flatnonzero(has & mask[:, 1])
        if len(ones):  # action 1 accuses the kept best open triple
            eng = core.to_engine(np.ones(len(ones), np.int64), ones)
            assert (eng == A.ACCUSE0 + best[ones]).all()
        act = np.where(mask[:, 1], feats[:, lay["expert_rule"][0]], 0).astype(np.int64)  # the expert's own rule
        obs, *_ = core.step(act)
    assert sampled > 0


@pytest.mark.parametrize("perceiving", [False, True], ids=["advisor", "perception_expert"])
def test_accusation_features_do_not_depend_on_hidden_cards(perceiving: bool) -> None:
    """Swapping an unnamed envelope card with an unnamed card of another hand leaves the seat's accusation
    features (and its best open triple) unchanged: they come from its view only. Both sources: a riskless expert
    advisor, and the expert at its defaults that only perceives (no ``expert_rule`` slot)."""
    from cluedo_env.agents.learner.accusation_features import AccusationFeatures, perception_expert
    from cluedo_env.agents.play.registry import make_agent
    from helpers import hidden_swaps

    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView
    from cluedo_env.rules.config import make_config

    cfg = make_config("classic", players=4)
    one = np.array([0])

    def features(snap: dict, seat: int) -> tuple[np.ndarray, int]:
        e = VectorEngine(cfg, 1)
        e.import_game(0, snap)
        v = PlayerView(e, seat)
        expert = perception_expert(0) if perceiving else make_agent(RISKLESS_EXPERT, seed=0)
        expert.reset(v, one)
        acc = AccusationFeatures()
        return acc.encode(expert, v, one, rule=not perceiving)[0], int(acc.best[0])

    checked = decided = sampled = 0
    for snap, alt, seat in hidden_swaps():
        f0, b0 = features(snap, seat)
        f1, b1 = features(alt, seat)
        assert np.array_equal(f0, f1) and b0 == b1
        checked += 1
        decided += int(f0[0])
        sampled += int(f0[1])
    assert checked >= 30 and decided >= 5 and sampled >= 1


def test_expert_advised_checkpoint_plays_by_name(tmp_path) -> None:
    """A tiny run with an expert advisor: the checkpoint records the accusation features, and the ckpt: player
    rebuilds the same inputs and plays whole games, never an illegal action."""
    pytest.importorskip("sb3_contrib")
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model, save_model_atomic
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.train import Trainer

    from cluedo_env.errors import CheckpointError
    from cluedo_env.rules.config import make_config

    cfg = _tiny_advised_config(tmp_path, RISKLESS_EXPERT)
    Trainer(load_train_config(None, **cfg), progress=False).run()
    path = tmp_path / "advised" / "model.zip"
    model = load_model(path)
    meta = model.cluedo_meta
    assert meta["advisor"] == RISKLESS_EXPERT and meta["accusation_features"] is True and meta["n_actions"] == 2
    player = make_agent(f'ckpt:{path}{{"deterministic": false}}', seed=0)
    assert player.accusation_features
    others = [make_agent("deducer", seed=k) for k in range(3)]
    records = play_games(make_config("classic", players=4), [player, *others], 16, batch_size=8, seed=1)
    assert len(records) == 16
    assert player._advisor.fallbacks == 0
    assert player._accusation is not None and len(player._accusation.best) == 8
    model.cluedo_meta = {**meta, "advisor": "deducer"}  # features recorded, but a deducer advisor cannot give them
    save_model_atomic(model, tmp_path / "bad.zip")
    with pytest.raises(CheckpointError, match="not an expert"):
        PolicyAgent(tmp_path / "bad.zip")
