"""The trained players shipped with the package (``pretrained:NAME``, training/pretrained.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from cluedo_env.agents.play.registry import make_agent  # noqa: E402
from cluedo_env.agents.play.runner import play_games  # noqa: E402
from cluedo_env.training import pretrained  # noqa: E402
from cluedo_env.training.players import check_player_names  # noqa: E402

from cluedo_env.errors import CheckpointError, UsageError  # noqa: E402
from cluedo_env.rules.config import make_config  # noqa: E402

SHIPPED = sorted(pretrained.catalogue())
CARD_FIELDS = {"config", "learner_steps", "wall_time", "machine", "win_rates"}


def test_the_package_ships_pretrained_players_within_10_mb():
    assert SHIPPED, "no pretrained player in training/pretrained/index.json"
    total = sum(pretrained.path_of(name).stat().st_size for name in SHIPPED)
    assert total <= 10 * 2**20, f"{total / 2**20:.1f} MB of checkpoints (the budget is 10 MB)"


@pytest.mark.parametrize("name", SHIPPED)
def test_each_pretrained_player_has_a_model_card(name):
    card = pretrained.catalogue()[name]["card"]
    assert CARD_FIELDS <= set(card), f"model card of {name} lacks {CARD_FIELDS - set(card)}"
    for row in card["win_rates"]:
        assert {"opponents", "games", "win_rate", "ci95", "command"} <= set(row)


@pytest.mark.parametrize("name", SHIPPED)
def test_each_pretrained_player_plays_100_games_against_bots_without_an_illegal_action(name):
    """Any illegal action would raise in the engine's step; every game must reach its end."""
    check_player_names([f"pretrained:{name}"])
    agent = make_agent(f"pretrained:{name}", seed=0)
    rules = agent.meta["rules"]
    config = make_config(rules)
    others = [make_agent(n, seed=s) for s, n in enumerate(["heuristic", "deducer", "random"][: config.players - 1])]
    games = play_games(config, [agent, *others], 100, batch_size=100, seed=7)
    assert len(games) == 100
    assert all(g.ending in ("accusation", "last_standing", "all_eliminated", "truncated") for g in games)


def test_an_unknown_pretrained_name_is_a_clear_error():
    with pytest.raises(UsageError, match=r"unknown pretrained player 'nope' \(available: pretrained:"):
        make_agent("pretrained:nope")


def test_export_writes_a_playable_copy_and_its_card(tmp_path):
    """Re-exporting a shipped player gives the same actions (its weights are already float16)."""
    name = SHIPPED[0]
    card = {"config": "test"}
    out = pretrained.export(pretrained.path_of(name), "copy", card, directory=tmp_path)
    assert out.is_file() and pretrained.catalogue(tmp_path)["copy"] == {"file": "copy.zip", "card": card}
    from cluedo_env.training.sb3.checkpoints import PolicyAgent

    a, b = PolicyAgent(pretrained.path_of(name)), PolicyAgent(out)
    obs = np.random.default_rng(0).integers(0, 3, (64, a.meta["obs_size"])).astype(np.float32)
    mask = np.ones((64, a.meta["n_actions"]), bool)
    assert (a._fn(obs, mask) == b._fn(obs, mask)).all()
    assert b.model._last_obs is None  # no rollout state shipped (the last observation of every training game)


def test_a_broken_index_is_a_checkpoint_error(tmp_path):
    (tmp_path / "index.json").write_text(json.dumps({"x": {"no_file": 1}}))
    with pytest.raises(CheckpointError, match="index.json"):
        pretrained.catalogue(tmp_path)
