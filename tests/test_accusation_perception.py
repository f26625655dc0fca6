"""The accusation features for a learner without an advisor (``accusation_features=True``).

* the learner env appends the 33 slots to the observation, computed for the learner's seat by an expert that only
  perceives: the policy keeps the whole action space and every decision, and the ``expert_rule`` slot stays 0;
* ``decides`` is 1 exactly where the learner may accuse (R-A1), and the slots are what an expert of the seat computes
  from the same view (the env and a standalone expert agree);
* bad settings are refused by name, in the learner options and in a training config;
* a tiny run (imitation, then PPO) records the option in its checkpoint, and the ``ckpt:`` player rebuilds the same
  inputs and plays whole games.
(That the slots never depend on hidden cards: tests/test_advised.py, for both sources of the slots.)
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.agents.learner.accusation_features import ACCUSATION_SIZE, accusation_layout
from cluedo_env.agents.learner.compact_observation import compact_size
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import LearnerOptions
from helpers import quiet_actions

from cluedo_env.checks import OptionTypeError
from cluedo_env.envs.learner_actions import num_actions
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError, make_config


def _core(batch: int = 16, seed: int = 3, **over) -> LearnerCore:
    options = {"opponents": "expert", "seat": "random", "macro_moves": True, "belief": True,
               "observation": "compact", "accusation_features": True, "seed": seed, **over}  # fmt: skip
    return LearnerCore(LearnerOptions(batch, make_config("classic", players=4), **options))


def test_the_slots_are_appended_and_the_policy_keeps_every_decision() -> None:
    core = _core()
    cfg = core.config
    assert core.accusation_features and not core.advisors
    assert core.obs_size == compact_size(cfg) + ACCUSATION_SIZE
    assert core.n_actions == num_actions(True, False)  # the whole macro space: no advised Discrete(2)
    lay = accusation_layout()
    start = core.obs_size - ACCUSATION_SIZE
    rng = np.random.default_rng(0)
    obs = core.reset(seed=3)
    sampled = 0
    for _ in range(150):
        feats = obs[:, start:]
        assert set(np.unique(feats)) <= {0, 1}
        assert not feats[:, lay["expert_rule"][0]].any()  # what the seat knows, not what a rule would do
        may_accuse = core.eng.legal_action_mask[:, A.ACCUSE0 :].any(1) & ~core.unplayed
        assert np.array_equal(feats[:, lay["decides"][0]] == 1, may_accuse)
        sampled += int(feats[:, lay["sampled"][0]].sum())
        mask = core.action_masks()
        assert np.array_equal(mask[~core.unplayed], core.actions.mask(core.eng.legal_action_mask)[~core.unplayed])
        obs, *_ = core.step(quiet_actions(core, rng))
    assert sampled > 0


def test_the_env_slots_are_a_standalone_experts_of_the_same_view() -> None:
    """The env's slots of a game equal those a fresh perceiving expert computes from an imported copy of it (the
    seat's view of it: the env's experts read nothing else)."""
    from cluedo_env.agents.learner.accusation_features import AccusationFeatures, perception_expert

    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView

    core = _core(batch=8, seed=5)
    start = core.obs_size - ACCUSATION_SIZE
    lay = accusation_layout()
    rng = np.random.default_rng(1)
    obs = core.reset(seed=5)
    checked = 0
    for _ in range(60):
        for g in np.flatnonzero(obs[:, start + lay["sampled"][0]] == 1)[:2]:
            e = VectorEngine(core.config, 1)
            e.import_game(0, core.eng.export_game(int(g)))
            v = PlayerView(e, int(core.seat[g]))
            expert = perception_expert(0)
            expert.reset(v, np.array([0]))
            mine = AccusationFeatures().encode(expert, v, np.array([0]), rule=False)[0]
            # p1 and ess_ok are estimates from sampled deals (another random stream); the rest is exact
            for name in ("decides", "sampled", "danger", "hypotheses", "expert_rule", "round"):
                o, w = lay[name]
                assert np.array_equal(mine[o : o + w], obs[g, start + o : start + o + w]), name
            checked += 1
        obs, *_ = core.step(quiet_actions(core, rng))
    assert checked > 0


@pytest.mark.parametrize("over, error, match", [
    ({"belief": False, "observation": "full"}, ConfigError, "needs belief=True"),
    ({"macro_moves": False, "advisor": "deducer"}, ConfigError, "without an advisor"),
    ({"accusation_features": "yes"}, OptionTypeError, "accusation_features must be True or False"),
])  # fmt: skip
def test_bad_settings_are_refused_by_name(over, error, match) -> None:
    with pytest.raises(error, match=match):
        _core(batch=2, **over)


def test_a_training_config_checks_the_option(tmp_path) -> None:
    from cluedo_env.training.sb3.config import load_train_config

    from cluedo_env.errors import TrainConfigError

    env = {"belief": False, "accusation_features": True}
    with pytest.raises(TrainConfigError, match="env.accusation_features=True needs belief=True"):
        load_train_config(None, run_dir=str(tmp_path / "r"), env=env)


def test_a_perceiving_checkpoint_plays_by_name(tmp_path) -> None:
    """A tiny run (imitation, then PPO) records the option; the ckpt: player rebuilds the same inputs (its own
    perceiving expert, the whole action space) and plays whole games; a checkpoint that claims the slots without
    the notebook they are read from is refused."""
    pytest.importorskip("sb3_contrib")
    from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model, save_model_atomic
    from helpers import train_tiny_perceiving_run

    from cluedo_env.errors import CheckpointError

    path, meta, player = train_tiny_perceiving_run(tmp_path, accusation_features=True)
    assert meta["accusation_features"] is True and meta.get("advisor") is None
    assert meta["obs_size"] == compact_size(make_config("classic", players=4)) + ACCUSATION_SIZE
    assert player._perceiver is not None and player._advisor is None
    model = load_model(path)
    model.cluedo_meta = {**meta, "belief": False}
    save_model_atomic(model, tmp_path / "bad.zip")
    with pytest.raises(CheckpointError, match="accusation_features without belief"):
        PolicyAgent(tmp_path / "bad.zip")
