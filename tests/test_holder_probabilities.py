"""The holder probabilities for a learner without an advisor (``holder_probabilities=True``).

* the learner env appends ``(P + 1) * 21 * 6`` slots after the compact observation (and after the accusation slots
  when both are on); the policy keeps the whole action space;
* the slots agree with what the seat has proved (its belief features, seat-relative holders): a card a holder is
  proved to hold fills that holder's top level, a card it is proved to lack fills none, and the seat's own row is
  its hand;
* they never depend on hidden cards (swapping an unnamed envelope card with an unnamed card of another hand);
* bad settings are refused by name, in the learner options, a training config and a checkpoint;
* a tiny run (imitation, then PPO) records the option, and the ``ckpt:`` player rebuilds the same inputs and plays
  whole games.
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.agents.learner.accusation_features import ACCUSATION_SIZE
from cluedo_env.agents.learner.compact_observation import compact_layout, compact_size
from cluedo_env.agents.learner.holder_features import (
    HOLDER_LEVELS,
    encode_holders,
    holder_shape,
    holder_size,
    seat_relative,
)
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import LearnerOptions
from helpers import quiet_actions

from cluedo_env.checks import OptionTypeError
from cluedo_env.envs.learner_actions import num_actions
from cluedo_env.rules.config import ConfigError, make_config


def _core(batch: int = 16, seed: int = 3, players: int = 4, **over) -> LearnerCore:
    options = {"opponents": "expert", "seat": "random", "macro_moves": True, "belief": True,
               "observation": "compact", "holder_probabilities": True, "seed": seed, **over}  # fmt: skip
    return LearnerCore(LearnerOptions(batch, make_config("classic", players=players), **options))


def test_seat_relative_puts_the_seat_first_and_the_envelope_last() -> None:
    prob = np.arange(5 * 21, dtype=float).reshape(1, 5, 21)  # 4 seats and the envelope, by absolute seat
    rel = seat_relative(prob, 2)
    assert [int(rel[0, h, 0]) // 21 for h in range(5)] == [2, 3, 0, 1, 4]


@pytest.mark.parametrize("players", [3, 4, 6])
def test_the_slots_agree_with_what_the_seat_has_proved(players: int) -> None:
    core = _core(batch=12, players=players)
    cfg = core.config
    P, H = players, players + 1
    assert core.holder_probabilities and not core.accusation_features and not core.advisors
    assert core.obs_size == compact_size(cfg) + holder_size(P)
    assert core.n_actions == num_actions(True, False)  # the whole macro space
    belief = {p.name: p for p in compact_layout(cfg)}
    start = core.obs_size - holder_size(P)
    rng = np.random.default_rng(0)
    obs = core.reset(seed=3)
    proved = 0
    for _ in range(120):
        slots = obs[:, start:].reshape(len(obs), *holder_shape(P))
        assert set(np.unique(slots)) <= {0, 1}
        assert (np.diff(slots.astype(int), axis=-1) <= 0).all()  # a thermometer: levels fill from the lowest
        holds = obs[:, belief["belief_holds"].offset :][:, : H * 21].reshape(-1, H, 21) == 1
        lacks = obs[:, belief["belief_lacks"].offset :][:, : H * 21].reshape(-1, H, 21) == 1
        live = ~core.unplayed & ~core.eng.done
        assert (slots[..., -1][holds & live[:, None, None]] == 1).all()  # proved held: the top level
        assert (slots[..., 0][lacks & live[:, None, None]] == 0).all()  # proved lacking: no level at all
        hand = core.eng.owner == core.seat[:, None]  # (N, 21) the seat's own cards
        assert np.array_equal(slots[live, 0, :, -1] == 1, hand[live].astype(bool))
        proved += int((holds & live[:, None, None])[:, 1:].sum())
        mask = core.action_masks()
        assert np.array_equal(mask[~core.unplayed], core.actions.mask(core.eng.legal_action_mask)[~core.unplayed])
        obs, *_ = core.step(quiet_actions(core, rng))
    assert proved > 0  # opponents' cards were proved and checked, not only the seat's own hand


def test_both_extra_pieces_come_in_order() -> None:
    core = _core(batch=4, accusation_features=True)
    assert core.obs_size == compact_size(core.config) + ACCUSATION_SIZE + holder_size(4)
    obs = core.reset(seed=1)
    own = obs[:, -holder_size(4):].reshape(4, *holder_shape(4))[:, 0, :, -1]
    assert np.array_equal(own == 1, core.eng.owner == core.seat[:, None])


def test_holder_slots_do_not_depend_on_hidden_cards() -> None:
    """Swapping an unnamed envelope card with an unnamed card of another hand leaves the seat's holder slots
    unchanged: they come from its view only."""
    from cluedo_env.agents.learner.accusation_features import perception_expert
    from helpers import hidden_swaps

    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView

    cfg = make_config("classic", players=4)
    one = np.array([0])

    def slots(snap: dict, seat: int) -> np.ndarray:
        e = VectorEngine(cfg, 1)
        e.import_game(0, snap)
        v = PlayerView(e, seat)
        expert = perception_expert(0)
        expert.reset(v, one)
        return encode_holders(expert, v, one)[0]

    checked = informed = 0
    for snap, alt, seat in hidden_swaps():
        s0 = slots(snap, seat)
        assert np.array_equal(s0, slots(alt, seat))
        checked += 1
        informed += int(s0.reshape(holder_shape(4))[1:, :, -1].any())  # an opponent's card known
    assert checked >= 30 and informed >= 5


@pytest.mark.parametrize("over, error, match", [
    ({"belief": False, "observation": "full"}, ConfigError, "holder_probabilities=True needs belief=True"),
    ({"macro_moves": False, "advisor": "deducer"}, ConfigError, "holder_probabilities=True is for learners without"),
    ({"holder_probabilities": 1}, OptionTypeError, "holder_probabilities must be True or False"),
])  # fmt: skip
def test_bad_settings_are_refused_by_name(over, error, match) -> None:
    with pytest.raises(error, match=match):
        _core(batch=2, **over)


def test_a_training_config_checks_the_option(tmp_path) -> None:
    from cluedo_env.training.sb3.config import load_train_config

    from cluedo_env.errors import TrainConfigError

    with pytest.raises(TrainConfigError, match="env.holder_probabilities=True needs belief=True"):
        load_train_config(None, run_dir=str(tmp_path / "r"), env={"belief": False, "holder_probabilities": True})


def test_a_checkpoint_with_holder_probabilities_plays_by_name(tmp_path) -> None:
    """A tiny run (imitation, then PPO) records the option; the ckpt: player rebuilds the same inputs (its own
    perceiving expert) and plays whole games; checkpoints that claim the slots without the notebook, or with an
    advisor, are refused."""
    pytest.importorskip("sb3_contrib")
    from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model, save_model_atomic
    from helpers import train_tiny_perceiving_run

    from cluedo_env.errors import CheckpointError

    path, meta, player = train_tiny_perceiving_run(tmp_path, holder_probabilities=True)
    assert meta["holder_probabilities"] is True and meta["accusation_features"] is False
    assert meta["obs_size"] == compact_size(make_config("classic", players=4)) + holder_size(4)
    assert player._perceiver is not None
    model = load_model(path)
    for bad, match in (({"belief": False}, "holder_probabilities without belief"),
                       ({"advisor": "deducer"}, "holder_probabilities with an advisor")):  # fmt: skip
        model.cluedo_meta = {**meta, **bad}
        save_model_atomic(model, tmp_path / "bad.zip")
        with pytest.raises(CheckpointError, match=match):
            PolicyAgent(tmp_path / "bad.zip")


def test_levels_are_increasing_probabilities() -> None:
    assert (np.diff(HOLDER_LEVELS) > 0).all() and 0 < HOLDER_LEVELS[0] and HOLDER_LEVELS[-1] < 1
