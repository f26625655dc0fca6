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
# every (name, table size) a shipped name plays: its own size (None: read from the checkpoint) or each of its tables
TABLES = [(n, size) for n in SHIPPED for size in (pretrained.tables_of(n) or [None])]


def test_the_package_ships_pretrained_players_within_10_mb_each_and_24_mb_in_all():
    assert SHIPPED, "no pretrained player in training/pretrained/index.json"
    sizes = {name: pretrained.path_of(name).stat().st_size for name in SHIPPED}
    assert max(sizes.values()) <= 10 * 2**20, f"over 10 MB: {[n for n, b in sizes.items() if b > 10 * 2**20]}"
    assert sum(sizes.values()) <= 24 * 2**20, f"{sum(sizes.values()) / 2**20:.1f} MB of checkpoints (budget 24 MB)"


@pytest.mark.parametrize("name", SHIPPED)
def test_each_pretrained_player_has_a_model_card(name):
    card = pretrained.catalogue()[name]["card"]
    assert CARD_FIELDS <= set(card), f"model card of {name} lacks {CARD_FIELDS - set(card)}"
    for row in card["win_rates"]:
        assert {"opponents", "games", "win_rate", "ci95", "command"} <= set(row)


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_each_pretrained_player_plays_100_games_against_bots_without_an_illegal_action(name, players):
    """Any illegal action would raise in the engine's step; every game must reach its end, at every table size the
    name covers (a name with tables plays the network of the table it sits at)."""
    check_player_names([f"pretrained:{name}"])
    agent = make_agent(f"pretrained:{name}", seed=0)
    network = agent if players is None else agent.network_for(players)
    config = make_config(network.meta["rules"])
    assert players in (None, config.players), f"pretrained:{pretrained.tables_of(name)[players]} plays other tables"
    names = ["heuristic", "deducer", "random", "expert", "heuristic"][: config.players - 1]
    others = [make_agent(n, seed=s) for s, n in enumerate(names)]
    games = play_games(config, [agent, *others], 100, batch_size=100, seed=7)
    assert len(games) == 100
    assert all(g.ending in ("accusation", "last_standing", "all_eliminated", "truncated") for g in games)


def test_a_name_with_tables_plays_the_network_of_the_table_it_sits_at():
    """pretrained:champion at a table of 3 is pretrained:champion_3p; at 4, its own file (same actions)."""
    from cluedo_env.agents.players.base import Agent

    assert pretrained.tables_of("champion")[3] == "champion_3p"
    for players, member in pretrained.tables_of("champion").items():
        agent = make_agent("pretrained:champion", seed=0)
        alone = pretrained.PolicyAgent(pretrained.path_of(member), seed=0)
        config = make_config({**alone.meta["rules"], "players": players})
        others: list[Agent] = [make_agent("heuristic", seed=s) for s in range(players - 1)]
        a = play_games(config, [agent, *others], 20, batch_size=20, seed=3)
        b = play_games(config, [alone, *[make_agent("heuristic", seed=s) for s in range(players - 1)]], 20,
                       batch_size=20, seed=3)  # fmt: skip
        assert a == b  # the same games, move for move as far as the records show
        assert agent.name == "pretrained:champion" and agent.network_for(players).path == str(
            pretrained.path_of(member)
        )


def test_a_table_no_network_covers_is_a_clear_error():
    agent = pretrained.TableSizedAgent("champion", {4: "champion"})
    config = make_config({**agent.network_for(4).meta["rules"], "players": 5})
    with pytest.raises(
        CheckpointError, match=r"pretrained:champion plays tables of 4 players, not 5 \(pretrained:champion\)"
    ):
        play_games(config, [agent, *[make_agent("random", seed=s) for s in range(4)]], 2, batch_size=2, seed=0)


def test_tables_that_name_an_unknown_entry_are_refused(tmp_path):
    (tmp_path / "index.json").write_text(json.dumps({"x": {"file": "x.zip", "tables": {"3": "nope"}}}))
    with pytest.raises(CheckpointError, match="tables must map"):
        pretrained.catalogue(tmp_path)
    (tmp_path / "index.json").write_text(json.dumps({"x": {"file": "x.zip"}}))
    with pytest.raises(UsageError, match="tables"):
        pretrained.set_tables("x", {7: "x"}, directory=tmp_path)
    pretrained.set_tables("x", {4: "x"}, directory=tmp_path)
    assert pretrained.tables_of("x", tmp_path) == {4: "x"}


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


def test_the_evaluator_seats_a_name_with_tables_at_any_size_it_covers_and_refuses_others_before_playing(tmp_path):
    from cluedo_env.cli.evaluate import main as evaluate_main

    out = tmp_path / "h2h"
    evaluate_main(["--head-to-head", "pretrained:cards_champion", "heuristic", "--preset", "cards",
                   "--rule", "players=3", "--games", "3", "--out", str(out)])  # fmt: skip
    report = json.loads((out / "head_to_head.json").read_text())
    assert report["a"] == "pretrained:cards_champion" and report["games"] == 3
    with pytest.raises(UsageError, match="was trained for 4 players"):
        evaluate_main(["--head-to-head", "pretrained:vs_heuristic", "heuristic", "--rule", "players=3", "--games", "3",
                       "--out", str(tmp_path / "refused")])  # fmt: skip
    assert not (tmp_path / "refused").exists()
