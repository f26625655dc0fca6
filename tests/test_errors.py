"""Errors: illegal actions, bad configs, malformed snapshots, damaged board data; and the board facts.

Every error names what was wrong, and a refused action leaves the game exactly as it was.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from helpers import ENVELOPE, HANDS4, accuse, position, show, suggest

from cluedo_env.engine.reference import Game
from cluedo_env.engine.snapshot import SnapshotError
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_DOORS, NUM_SQUARES, BoardError, load_board, parse_board
from cluedo_env.rules.cards import PASSAGES, ROOMS
from cluedo_env.rules.config import PRESETS, ConfigError, RulesConfig, load_config, make_config

ROOT = Path(__file__).resolve().parents[1]
BOARD_TEXT = (ROOT / "cluedo_env" / "data" / "board.txt").read_text(encoding="utf-8")


# =====================================================================================
# Illegal actions
# =====================================================================================
def refused(g: Game, action: int, *fragments: str, roll: int | None = None) -> A.IllegalActionError:
    """Assert ``action`` raises IllegalActionError naming ``fragments`` and leaves ``g`` unchanged."""
    before = g.to_dict()
    legal = g.legal_actions()
    with pytest.raises(A.IllegalActionError) as info:
        g.step(action, roll=roll)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert g.to_dict() == before and g.legal_actions() == legal
    return info.value


def test_illegal_action_names_action_and_phase():
    g = Game(RulesConfig(), seed=0)
    refused(g, A.END_TURN, "END_TURN", "id 3", "'start'", "player 0")
    refused(g, A.STAY, "STAY", "'start'")
    refused(g, A.PASSAGE, "PASSAGE", "'start'")
    refused(g, suggest("Plum", "Rope", "Hall"), "SUGGEST(Plum, Rope, Hall)", "'start'")
    refused(g, show("Plum"), "SHOW(Plum)", "'start'")
    g.step(A.ROLL, roll=1)
    refused(g, A.ROLL, "ROLL", "'move'")
    refused(g, A.MOVE0 + 0, "MOVE((0,9))", "'move'")
    refused(g, A.MOVE0 + 188 + 7, "MOVE(Hall)", "'move'")
    refused(g, accuse("Plum", "Rope", "Hall"), "ACCUSE(Plum, Rope, Hall)", "'move'")


def test_illegal_action_in_suggest_refute_post_over():
    g = position(hands=HANDS4, envelope=ENVELOPE, suspects={"Mustard": "Hall"}, phase="suggest", current=1)
    refused(g, suggest("Plum", "Rope", "Study"), "SUGGEST(Plum, Rope, Study)", "'suggest'", "player 1")
    refused(g, A.END_TURN, "END_TURN", "'suggest'")
    g.step(suggest("White", "Lead Pipe", "Hall"))
    refused(g, show("Lounge"), "SHOW(Lounge)", "'refute'", "player 2")  # White's, but not named
    refused(g, show("Dagger"), "SHOW(Dagger)", "'refute'", "player 2")  # neither named nor White's
    g.step(show("Hall"))
    refused(g, A.ROLL, "ROLL", "'post'", "player 1")
    refused(g, suggest("Plum", "Rope", "Hall"), "'post'")
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.is_over
    err = refused(g, A.END_TURN, "END_TURN", "'over'", "0 legal actions")
    assert "no action is legal" in str(err)


@pytest.mark.parametrize("action", [-1, -870, A.NUM_ACTIONS, A.NUM_ACTIONS + 5, 10**9])
def test_out_of_range_action(action):
    g = Game(RulesConfig(), seed=0)
    refused(g, action, "out of range 0..869", f"id {action}", "'start'")


def test_forced_roll_out_of_range_leaves_state_and_rng_unchanged():
    g = Game(RulesConfig(), seed=9)
    before = g.to_dict()
    with pytest.raises(ValueError, match="forced roll 7 impossible with 1 dice"):
        g.step(A.ROLL, roll=7)
    assert g.to_dict() == before
    g.step(A.ROLL)
    fresh = Game(RulesConfig(), seed=9)
    fresh.step(A.ROLL)
    assert g.roll == fresh.roll  # the RNG was not touched by the refused step


def test_refused_action_does_not_touch_the_rng():
    g, fresh = Game(RulesConfig(), seed=4), Game(RulesConfig(), seed=4)
    for action in (A.END_TURN, A.NUM_ACTIONS, show("Hall")):
        with pytest.raises(A.IllegalActionError):
            g.step(action)
    g.step(A.ROLL)
    fresh.step(A.ROLL)
    assert g.roll == fresh.roll and g.to_dict() == fresh.to_dict()


@pytest.mark.parametrize("preset", ["classic", "seed000", "cards"])
def test_random_illegal_actions_refused_everywhere(preset):
    cfg = RulesConfig.from_preset(preset, max_turns=40)
    rng = random.Random(7)
    for seed in range(6):
        g = Game(cfg, seed=seed)
        while not g.is_over:
            legal = g.legal_actions()
            illegal = sorted(set(range(-2, A.NUM_ACTIONS + 2)) - set(legal))
            before = g.to_dict()
            for action in rng.sample(illegal, 4):
                with pytest.raises(A.IllegalActionError, match=f"phase '{A.PHASE_NAMES[g.phase]}'"):
                    g.step(action)
            assert g.to_dict() == before
            others = [a for a in legal if a < A.ACCUSE0]
            g.step(rng.choice(others) if others and rng.random() > 0.02 else rng.choice(legal))


# =====================================================================================
# Configs
# =====================================================================================
@pytest.mark.parametrize(
    "kwargs,fragments",
    [
        ({"players": 7}, ["players=7", "2 to 6"]),
        ({"players": 1}, ["players=1", "2 to 6"]),
        ({"players": "4"}, ["players='4'"]),
        ({"dice": 3}, ["dice=3", "[1, 2]"]),
        ({"dice": True}, ["dice=True"]),
        ({"refutation": "some"}, ["refutation='some'", "'first'", "'all'"]),
        ({"suggestion_on_entry": "never"}, ["suggestion_on_entry='never'", "'optional'"]),
        ({"last_standing": "draw"}, ["last_standing='draw'", "'plays_on'"]),
        ({"accuse_after_suggestion": "yes"}, ["accuse_after_suggestion='yes'"]),
        ({"board": "modern"}, ["board='modern'", "'none'"]),
        ({"max_turns": 0}, ["max_turns=0", "positive"]),
        ({"max_turns": -3}, ["max_turns=-3"]),
        ({"dice_count": 2}, ["dice_count", "allowed keys", "dice"]),
    ],
)
def test_bad_config_values(kwargs, fragments):
    with pytest.raises(ConfigError) as info:
        RulesConfig.from_preset("classic", **kwargs)
    assert isinstance(info.value, ValueError)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_unknown_preset():
    for call in (lambda: RulesConfig.from_preset("modern"), lambda: make_config("modern")):
        with pytest.raises(ConfigError, match=r"unknown preset 'modern' \(presets are: classic, seed000, cards"):
            call()
    with pytest.raises(ConfigError, match="unknown preset"):
        RulesConfig.from_dict({"preset": "modern"})


@pytest.mark.parametrize("preset", ["cards", "seed000"])
@pytest.mark.parametrize("players", [2, 7])
def test_three_to_six_player_presets(preset, players):
    with pytest.raises(ConfigError, match=f"players={players} is not allowed .* 3 to 6 players"):
        RulesConfig.from_preset(preset, players=players)


def test_presets_match_rules_table():
    classic, seed000, cards = (RulesConfig.from_preset(p) for p in ("classic", "seed000", "cards"))
    assert (classic.board, classic.dice, classic.suggestion_on_entry, classic.refutation) == (
        "classic",
        1,
        "mandatory",
        "first",
    )
    assert (classic.accuse_after_suggestion, classic.accusation_in_room, classic.last_standing) == (True, False, "wins")
    assert (seed000.dice, seed000.suggestion_on_entry, seed000.refutation) == (2, "optional", "all")
    assert (seed000.accuse_after_suggestion, seed000.accusation_in_room, seed000.last_standing) == (
        False,
        True,
        "plays_on",
    )
    assert (cards.board, cards.refutation, cards.last_standing, cards.accuse_after_suggestion) == (
        "none",
        "first",
        "plays_on",
        True,
    )
    assert {c.players for c in (classic, seed000, cards)} == {4}
    assert set(PRESETS) == {"classic", "seed000", "cards"}
    # every flag can be set on its own on top of a preset
    assert RulesConfig.from_preset("seed000", dice=1).dice == 1
    assert RulesConfig.from_preset("classic", refutation="all").refutation == "all"


@pytest.mark.parametrize("preset", ["classic", "seed000", "cards"])
def test_yaml_files_in_configs_load(preset):
    cfg = load_config(ROOT / "configs" / f"{preset}.yaml")
    assert cfg == RulesConfig.from_preset(preset, players=4)
    assert make_config(str(ROOT / "configs" / f"{preset}.yaml")) == cfg
    assert load_config(ROOT / "configs" / f"{preset}.yaml", players=5).players == 5  # overrides win


def test_yaml_variants(tmp_path):
    nested = tmp_path / "train.yaml"
    nested.write_text("rules:\n  preset: seed000\n  players: 3\n  max_turns: 50\n")
    assert load_config(nested) == RulesConfig.from_preset("seed000", players=3, max_turns=50)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert load_config(empty) == RulesConfig()


def test_malformed_yaml(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("preset: [classic\nplayers: 4\n")
    with pytest.raises(ConfigError, match="not valid YAML") as info:
        load_config(broken)
    assert str(broken) in str(info.value)
    listed = tmp_path / "list.yaml"
    listed.write_text("- classic\n- 4\n")
    with pytest.raises(ConfigError, match="must be a mapping of flags, got list"):
        load_config(listed)
    bad_value = tmp_path / "bad.yaml"
    bad_value.write_text("preset: classic\nplayers: 9\n")
    with pytest.raises(ConfigError, match="players=9") as info:
        load_config(bad_value)
    assert str(bad_value) in str(info.value)
    bad_key = tmp_path / "key.yaml"
    bad_key.write_text("preset: classic\ncolour: red\n")
    with pytest.raises(ConfigError, match=r"unknown config key\(s\) \['colour'\]"):
        load_config(bad_key)


def test_make_config_inputs():
    assert make_config() == RulesConfig()
    assert make_config("cards", players=5) == RulesConfig.from_preset("cards", players=5)
    assert make_config({"preset": "seed000", "players": 6}).players == 6
    assert make_config(RulesConfig(), dice=2).dice == 2
    with pytest.raises(ConfigError, match="unknown preset 'nothing'"):
        make_config("nothing")
    with pytest.raises((ConfigError, OSError), match="nothing.yaml"):
        make_config("nothing.yaml")  # a YAML file that is not there: an error naming it


# =====================================================================================
# Snapshots
# =====================================================================================
def snapshot(**kw) -> dict:
    return json.loads(json.dumps(position(hands=HANDS4, envelope=ENVELOPE, **kw).to_dict()))


def bad(d: dict, *fragments: str) -> None:
    with pytest.raises(SnapshotError) as info:
        Game.from_dict(d)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_snapshot_good_one_loads():
    d = snapshot()
    assert Game.from_dict(d).to_dict() == d


def test_snapshot_schema_and_fields():
    bad([], "schema")
    bad({**snapshot(), "schema": "something/2"}, "schema")
    for field in (
        "rules",
        "phase",
        "current",
        "refuter",
        "roll",
        "turn_count",
        "suspects",
        "weapons",
        "hands",
        "envelope",
    ):
        d = snapshot()
        del d[field]
        bad(d, f"snapshot lacks the field '{field}'")
    for field in ("eliminated", "dragged", "history", "winner", "terminated", "truncated"):
        d = snapshot()
        del d[field]
        bad(d, f"snapshot lacks the field '{field}'")


@pytest.mark.parametrize(
    "edit,fragments",
    [
        (lambda d: d.update(phase="dance"), ["phase 'dance'"]),
        (lambda d: d["suspects"].update(Scarlet=[0, 0]), ["[0, 0]", "walkable"]),  # off the board
        (lambda d: d["suspects"].update(Scarlet=[12, 10]), ["[12, 10]"]),  # the staircase (R-M9)
        (lambda d: d["suspects"].update(Scarlet=[19, 6]), ["[19, 6]"]),  # a door cell is a room cell
        (lambda d: d["suspects"].update(Scarlet=[99, 3]), ["[99, 3]"]),
        (lambda d: d["suspects"].update(Scarlet="Attic"), ["suspects.Scarlet", "Attic", "rooms are"]),
        (lambda d: d["suspects"].pop("Plum"), ["six suspects"]),
        (lambda d: d["weapons"].pop("Rope"), ["six weapons"]),
        (lambda d: d["weapons"].update(Rope="Attic"), ["weapons.Rope", "Attic"]),
        (lambda d: d["hands"][0].append("Joker"), ["hands[0][5]", "Joker", "cards are"]),
        (lambda d: d.update(envelope=["Plum", "Wrench"]), ["envelope has 2 entries", "3 entries"]),
        (lambda d: d.update(envelope=["Wrench", "Plum", "Study"]), ["envelope must be [suspect, weapon, room]"]),
        (lambda d: d["hands"][3].append("Scarlet"), ["21 cards"]),
        (lambda d: d["hands"][3].pop(), ["21 cards"]),
        (lambda d: d.update(hands=d["hands"][:3]), ["hands has 3 entries (a list of 4 entries)"]),
        (lambda d: d["hands"][2].append(d["hands"][3].pop()), ["differ by more than one"]),
        (lambda d: d.update(eliminated=[False] * 3), ["eliminated has 3 entries"]),
        (lambda d: d.update(dragged=[False] * 5), ["dragged has 5 entries"]),
        (lambda d: d.update(current=4), ["current=4"]),
        (lambda d: d.update(current="two"), ["current='two'", "0 to 3"]),
        (lambda d: d.update(eliminated=[True, False, False, False]), ["current=0"]),
        (lambda d: d.update(phase="refute"), ["refuter"]),
        (lambda d: d.update(refuter=2), ["refuter"]),
        (lambda d: d["suspects"].update(Mustard=[24, 7]), ["two suspect tokens on one square"]),
        (lambda d: d.update(phase="suggest"), ["phase 'suggest'"]),  # Scarlet stands on a square
        (lambda d: d.update(phase="move", roll=0), ["phase 'move' needs a roll in 1..6"]),
        (lambda d: d.update(phase="move", roll=7), ["roll=7", "0 to 6"]),
        (lambda d: d.update(phase="over"), ["terminated or truncated"]),
        (lambda d: d.update(history=[{"type": "rumour", "player": 0, "cards": ["Plum", "Rope", "Hall"]}]), ["rumour"]),
        (lambda d: d.update(history=[{"type": "accusation", "player": 0}]), ["history[0]"]),
        (lambda d: d.update(history=[{"type": "accusation", "player": 0, "cards": ["Rope", "Plum", "Hall"]}]), []),
        (lambda d: d["rules"].update(players=9), ["'rules'", "players=9"]),
        (lambda d: d["rules"].update(colour="red"), ["'rules'", "colour"]),
        (lambda d: d.update(roll=None), ["roll=None"]),
        (lambda d: d.update(eliminated=None), ["eliminated must be a list"]),
    ],
)
def test_malformed_snapshot(edit, fragments):
    d = snapshot()
    edit(d)
    bad(d, *fragments)


def test_snapshot_refute_phase_needs_the_pending_suggestion():
    # Mustard suggests White, Lead Pipe, Hall; White (2) holds all three and must show one.
    g = position(hands=HANDS4, envelope=ENVELOPE, suspects={"Mustard": "Hall"}, phase="suggest", current=1)
    g.step(suggest("White", "Lead Pipe", "Hall"))
    d = g.to_dict()
    assert Game.from_dict(d).legal_actions() == g.legal_actions()
    for edit in (
        lambda d: d.update(history=[]),
        lambda d: d.update(refuter=1),  # the suggester never refutes (R-G6)
        lambda d: d.update(current=3),  # the pending suggestion is Mustard's
        lambda d: d["history"].append(
            {"type": "accusation", "player": 1, "cards": ["Plum", "Rope", "Hall"], "correct": False}
        ),
    ):
        d = g.to_dict()
        edit(d)
        bad(d, "refute")


def test_snapshot_dragged_token_must_be_in_a_room_at_turn_start():
    d = snapshot(suspects={"Mustard": "Hall"}, dragged=[1])
    assert Game.from_dict(d).dragged[1]
    d = snapshot()
    d["dragged"] = [True, False, False, False]  # Scarlet on her start square cannot have been dragged
    bad(d, "dragged[0]")


# =====================================================================================
# The board
# =====================================================================================
DOORS = [  # BOARD.md: room, door cell, side, square in front
    ("Kitchen", (6, 4), "S", (7, 4)),
    ("Ballroom", (5, 8), "W", (5, 7)),
    ("Ballroom", (5, 15), "E", (5, 16)),
    ("Ballroom", (7, 9), "S", (8, 9)),
    ("Ballroom", (7, 14), "S", (8, 14)),
    ("Conservatory", (4, 18), "S", (5, 18)),
    ("Billiard Room", (9, 18), "W", (9, 17)),
    ("Billiard Room", (12, 22), "S", (13, 22)),
    ("Dining Room", (12, 7), "E", (12, 8)),
    ("Dining Room", (15, 6), "S", (16, 6)),
    ("Library", (16, 17), "W", (16, 16)),
    ("Library", (14, 20), "N", (13, 20)),
    ("Lounge", (19, 6), "N", (18, 6)),
    ("Hall", (18, 11), "N", (17, 11)),
    ("Hall", (18, 12), "N", (17, 12)),
    ("Hall", (20, 14), "E", (20, 15)),
    ("Study", (21, 17), "N", (20, 17)),
]


def test_board_facts():
    b = load_board()
    assert len(b.squares) == NUM_SQUARES == 188
    assert sum(line.count(".") for line in b.grid) == 182
    assert (b.rows, b.cols) == (25, 24)
    assert [b.squares[s] for s in b.starts] == [(24, 7), (17, 0), (0, 9), (0, 14), (6, 23), (19, 23)]
    assert len(b.doors) == NUM_DOORS == 17
    got = sorted((ROOMS[d.room], d.cell, d.side, b.squares[d.front]) for d in b.doors)
    assert got == sorted(DOORS)
    counts = [len({d.cell for d in b.doors if d.room == r}) for r in range(9)]
    assert counts == [1, 4, 1, 2, 2, 2, 1, 3, 1]  # Kitchen .. Study, as BOARD.md counts them
    assert {b.squares[f]: ROOMS[r] for f, r in b.front_room.items()} == {front: room for room, _, _, front in DOORS}
    for touching in [(4, 17), (21, 16), (19, 7)]:  # next to a room cell, but no door's square
        assert b.square_of[touching] not in b.front_room


def test_board_passages_and_staircase():
    b = load_board()
    assert len(PASSAGES) == 4  # 2 passages, both ways
    pairs = {
        (ROOMS[r], b.loc_name(b.passage_target(b.room_loc(r)))) for r in range(9) if b.passage_target(b.room_loc(r))
    }
    assert pairs == {("Kitchen", "Study"), ("Study", "Kitchen"), ("Conservatory", "Lounge"), ("Lounge", "Conservatory")}
    assert b.passage_target(b.room_loc(ROOMS.index("Hall"))) is None
    assert b.passage_target(b.square_of[(24, 7)]) is None
    stairs = [(r, c) for r, line in enumerate(b.grid) for c, ch in enumerate(line) if ch == "X"]
    assert stairs and not any(cell in b.square_of for cell in stairs)  # R-M9


def test_board_distances():
    b = load_board()
    study, hall, kitchen = (b.room_loc(ROOMS.index(n)) for n in ("Study", "Hall", "Kitchen"))
    assert b.distance[study, hall] == 3  # BOARD.md: (20,17) -> (20,16) -> (20,15) -> Hall
    assert b.distance[b.square_of[(20, 15)], hall] == 0  # on the door square: no pip to go in
    assert b.distance[hall, b.square_of[(20, 15)]] == 1  # stepping out costs one
    assert b.distance[b.square_of[(24, 7)], b.square_of[(23, 7)]] == 1
    assert b.distance[study, study] == 0
    assert b.distance[kitchen, study] > 12  # the passage is not a move
    assert b.distance.shape == (197, 197) and b.distance.max() < 255  # everything reachable


def test_parse_board_accepts_the_data_file():
    b = parse_board(BOARD_TEXT)
    assert b.squares == load_board().squares and b.doors == load_board().doors


def _without_line(text: str, start: str) -> str:
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(start))
    return "\n".join(lines[:i] + lines[i + 1 :])


def _map_cell(text: str, row: int, col: int, ch: str) -> str:
    lines = text.splitlines()
    top = lines.index("[map]") + 1
    line = lines[top + row]
    lines[top + row] = line[:col] + ch + line[col + 1 :]
    return "\n".join(lines)


@pytest.mark.parametrize(
    "damage,fragment",
    [
        (lambda t: _without_line(t, "Study "), "expected 17 doors, found 16"),
        (lambda t: _without_line(t, "Kitchen "), "expected 17 doors, found 16"),
        (lambda t: _map_cell(t, 12, 12, "."), "expected 188 walkable squares, found 189"),
        (lambda t: _map_cell(t, 24, 7, "#"), "walkable squares"),  # Scarlet's start removed
        (lambda t: _map_cell(t, 0, 9, "."), "start squares"),  # White's start made a plain square
        (lambda t: _map_cell(t, 3, 3, "Z"), "unknown map cell 'Z' at (3,3)"),
        (lambda t: _map_cell(t, 3, 3, "k"), "lowercase door cell"),  # a door nobody lists
        (lambda t: _map_cell(t, 21, 17, "S"), "door cell (21, 17) of Study"),
        (lambda t: t.replace("Study           21 17      N", "Study           21 17      E"), "side E"),
        (lambda t: t.replace("Study           21 17", "Attic           21 17"), "unknown room 'Attic'"),
        (lambda t: t.replace("[doors]", "[portes]"), "[doors]"),
        (lambda t: _map_cell(t, 20, 17, "#"), "expected 188 walkable squares, found 187"),
        (
            lambda t: _map_cell(_map_cell(t, 20, 17, "#"), 12, 12, "."),  # count kept, Study's door square gone
            "square in front of door (21, 17) of Study is not walkable: (20, 17)",
        ),
        (lambda t: t.replace("OOOOOO#1#HHHHHH#.#SSSSSS", "OOOOOO#1#HHHHHH#.#SSSSS"), "25 rows of 24 cells"),
    ],
)
def test_damaged_board_data(damage, fragment):
    text = damage(BOARD_TEXT)
    assert text != BOARD_TEXT
    with pytest.raises(BoardError) as info:
        parse_board(text)
    assert isinstance(info.value, ValueError)
    assert fragment in str(info.value), str(info.value)


# =====================================================================================
# Files, command lines and the one error style
# =====================================================================================
def test_rules_files_that_are_not_rules(tmp_path):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(256)))
    with pytest.raises(ConfigError, match=r"not a text file \(.*UTF-8 YAML\)"):
        load_config(binary)
    five = tmp_path / "five.yaml"
    five.write_text("rules: 5\n")
    with pytest.raises(ConfigError, match=r"'rules' must be a mapping of flags, got int"):
        load_config(five)
    with pytest.raises(ConfigError, match="it is a folder"):
        load_config(tmp_path)
    keys = tmp_path / "keys.yaml"
    keys.write_text("1: 2\n")
    with pytest.raises(ConfigError, match=r"unknown config key\(s\) \[1\]"):
        load_config(keys)


@pytest.mark.parametrize("value", [10**12, 10_001, True, 1.5, "400"])
def test_max_turns_has_a_sane_bound(value):
    """max_turns=10**12 used to reach the engine and ask for 931 GiB; now the config refuses it."""
    with pytest.raises(ConfigError, match=r"max_turns=.* is not allowed \(a positive integer up to 10000, R-E3\)"):
        RulesConfig.from_preset("classic", max_turns=value)
    assert RulesConfig.from_preset("classic", max_turns=10_000).max_turns == 10_000


def test_make_config_override_of_a_config_checks_keys():
    with pytest.raises(ConfigError, match="colour"):
        make_config(RulesConfig(), colour="red")


def test_every_error_type_is_a_cluedo_error():
    from cluedo_env.errors import CheckpointError, CluedoError, TrainConfigError, UsageError
    from cluedo_env.record import RecordError

    for cls in (ConfigError, SnapshotError, RecordError, A.IllegalActionError, CheckpointError, TrainConfigError,
                UsageError):  # fmt: skip
        assert issubclass(cls, CluedoError) and issubclass(cls, ValueError)


def test_deeply_nested_record_is_a_record_error(tmp_path):
    from cluedo_env.record import RecordError, load, validate

    deep = tmp_path / "deep.json"
    deep.write_text('{"schema": ' * 50_000 + "1" + "}" * 50_000)
    with pytest.raises(RecordError, match="nested too deeply"):
        load(deep)
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    with pytest.raises(RecordError):
        validate({"schema": "cluedo_env.record/1", "rules": nested})


def test_atomic_write_keeps_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    from cluedo_env import files

    path = tmp_path / "out.json"
    files.write_text_atomic(path, "old")

    def fail(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", fail)
    with pytest.raises(OSError):
        files.write_text_atomic(path, "new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_output_paths_are_checked_before_work(tmp_path):
    from cluedo_env.errors import UsageError
    from cluedo_env.files import check_writable_dir, check_writable_file

    (tmp_path / "f").write_text("x")
    assert check_writable_file(tmp_path / "new" / "deeper" / "x.json") == tmp_path / "new" / "deeper" / "x.json"
    assert not (tmp_path / "new").exists()  # checking creates nothing
    for call, fragment in (
        (lambda: check_writable_file(tmp_path), "is a directory"),
        (lambda: check_writable_file(tmp_path / "f" / "x.json"), "is a file, not a folder"),
        (lambda: check_writable_dir(tmp_path / "f"), "is a file, not a folder"),
        (lambda: check_writable_dir(tmp_path / "f" / "sub"), "is a file, not a folder"),
    ):
        with pytest.raises(UsageError, match=fragment):
            call()
    if os.geteuid() != 0:  # root may write anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(UsageError, match="not writable"):
            check_writable_dir(ro / "out")


def test_run_cli_statuses(capsys):
    from cluedo_env.errors import run_cli

    def bad(_argv):
        raise ConfigError("players=9 is not allowed (2 to 6)")

    assert run_cli(bad, []) == 2
    assert capsys.readouterr().err == "error: players=9 is not allowed (2 to 6)\n"
    with pytest.raises(ConfigError):
        run_cli(bad, ["--debug"])

    def interrupted(_argv):
        raise KeyboardInterrupt

    assert run_cli(interrupted, []) == 130 and "interrupted" in capsys.readouterr().err

    def disk_full(_argv):
        raise OSError(28, "No space left on device", "results/x.json")

    assert run_cli(disk_full, []) == 1
    assert capsys.readouterr().err.startswith("error: results/x.json: No space left on device (")
    assert run_cli(lambda argv: 3, []) == 3 and run_cli(lambda argv: {"a": 1}, []) == 0


def test_play_keeps_the_game_when_saving_fails_at_the_end(tmp_path, monkeypatch):
    """The record path is checked first; if saving still fails after the game, the record goes to the temp folder."""
    import tempfile

    from cluedo_env.cli import human_game as cli
    from cluedo_env.record import RecordError, check

    real_save = cli.save
    calls: list[str] = []

    def flaky(record, path, indent=None):
        calls.append(str(path))
        if len(calls) == 1:
            raise RecordError(f"cannot write record {path}: No space left on device (choose a writable file path)")
        return real_save(record, path, indent)

    monkeypatch.setattr(cli, "save", flaky)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out: list[str] = []
    record = cli.play(["random"] * 3, "cards", seed=2, record_path=tmp_path / "game.json", output=out.append)
    saved = list((tmp_path / "tmp").glob("cluedo_game_*.json"))
    assert len(saved) == 1 and calls[1] == str(saved[0])
    assert check(json.loads(saved[0].read_text())) == record["final"]
    assert "saved to" in out[-1] and str(saved[0]) in out[-1] and "Could not save" in out[-1]


def test_history_counts_of_a_game_outside_the_batch_is_an_index_error():
    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.rules.config import RulesConfig

    eng = VectorEngine(RulesConfig.from_preset("cards"), 4)
    eng.reset(0)
    suggestions, wrong, won = eng.history_counts([0, 3])
    assert suggestions.tolist() == [0, 0] and wrong.shape == (2, 4) and not won.any()  # nothing played yet
    for bad in ([4], [-1]):
        with pytest.raises(IndexError, match=r"game indices must be integers 0\.\.3"):
            eng.history_counts(bad)
