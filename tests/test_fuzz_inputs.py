"""Property tests (Hypothesis): random mutations of valid inputs give a valid result or the project's clear error.

Configs, YAML files, snapshots, game records, training configs and actions are mutated at a
random place (a value replaced by any JSON value, a key or item removed, a key added); whatever
comes of it must be either accepted (and then usable: the game plays on, the record replays) or
refused with the project's own exception type, whose message names what was wrong. Never another
exception, never a changed input, never a changed game on a refused action.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluedo_env.engine.reference import Game
from cluedo_env.engine.snapshot import SnapshotError
from cluedo_env.errors import CluedoError, TrainConfigError
from cluedo_env.record import Recorder, RecordError, check, load
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError, RulesConfig, load_config

FAST = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 9, -1, 10**10, 404])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["false", "true", "0", "Hall", "Plum", "Rope", "over", "refute", "classic", "cards", "random"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated(draw: Any, doc: Any) -> Any:
    """A deep copy of ``doc`` with one random change somewhere inside it."""
    doc = copy.deepcopy(doc)
    parent, key = None, None
    node = doc
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):  # walk down a random path
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]
    how = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
    if parent is None:
        return draw(JSON) if how == "replace" else doc
    if how == "replace":
        parent[key] = draw(JSON)
    elif how == "delete":
        del parent[key]
    elif isinstance(parent, dict):
        parent[draw(st.text(max_size=8))] = draw(JSON)
    else:
        parent.insert(draw(st.integers(0, len(parent))), draw(JSON))
    return doc


def _played(preset: str, players: int, seed: int, steps: int) -> Game:
    """A game some random legal steps in (rarely accusing), so that history and phases vary."""
    g = Game(RulesConfig.from_preset(preset, players=players, max_turns=60), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.is_over:
            break
        legal = g.legal_actions()
        calm = [a for a in legal if a < A.ACCUSE0] or legal
        g.step(int(rng.choice(calm)))
    return g


SNAPSHOTS = [
    json.loads(json.dumps(_played(preset, players, seed, steps).to_dict()))
    for preset, players, seed, steps in [("classic", 4, 1, 40), ("classic", 3, 2, 0), ("cards", 4, 3, 25),
                                         ("seed000", 3, 4, 60), ("cards", 6, 5, 500)]  # fmt: skip
]


def _record(preset: str, seed: int) -> dict:
    g = Game(RulesConfig.from_preset(preset, players=3, max_turns=30), seed=seed)
    rec = Recorder(g.to_dict(), seed=seed, players=["random"] * 3)
    rng = np.random.default_rng(seed)
    while not g.is_over:
        legal = g.legal_actions()
        action = int(rng.choice([a for a in legal if a < A.ACCUSE0] or legal))
        actor = g.actor
        g.step(action)
        rec.add(actor, action, g.roll if action == A.ROLL else None)
    return json.loads(json.dumps(rec.finish(g.to_dict())))


RECORDS = [_record("cards", 1), _record("classic", 2)]


# ============================================================================ rules configs
FIELDS = ["board", "dice", "suggestion_on_entry", "refutation", "accuse_after_suggestion", "accusation_in_room",
          "last_standing", "players", "max_turns", "preset", "colour"]  # fmt: skip


@FAST
@given(st.dictionaries(st.sampled_from(FIELDS), SCALARS | JSON, max_size=5))
def test_rules_from_any_mapping_is_valid_or_a_config_error(data):
    try:
        cfg = RulesConfig.from_dict(data)
    except ConfigError as exc:
        assert str(exc) and "(" in str(exc)
        return
    assert type(cfg.players) is int and 2 <= cfg.players <= 6
    assert type(cfg.max_turns) is int and 1 <= cfg.max_turns <= 10_000
    assert type(cfg.dice) is int and type(cfg.accusation_in_room) is bool


@FAST
@given(st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_any_file_as_rules_file_is_a_config_or_a_config_error(content):
    fd, path = tempfile.mkstemp(suffix=".yaml")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        try:
            cfg = load_config(path)
        except ConfigError as exc:
            assert path in str(exc)
            return
        assert isinstance(cfg, RulesConfig)
    finally:
        os.unlink(path)


# ============================================================================ snapshots
@FAST
@given(st.sampled_from(range(len(SNAPSHOTS))).flatmap(lambda k: mutated(SNAPSHOTS[k])))
def test_mutated_snapshot_loads_and_plays_or_is_a_snapshot_error(snap):
    before = copy.deepcopy(snap)
    try:
        game = Game.from_dict(snap)
    except SnapshotError as exc:
        assert str(exc)
        assert snap == before or _nan_in(before)  # the input is never modified
        return
    assert snap == before or _nan_in(before)
    again = game.to_dict()
    assert Game.from_dict(again).to_dict() == again  # what loads, saves and loads the same
    for _ in range(5):  # and plays on
        legal = game.legal_actions()
        if game.is_over or not legal:
            break
        game.step(legal[0])


def _nan_in(x: Any) -> bool:
    if isinstance(x, float):
        return math.isnan(x)
    if isinstance(x, dict):
        return any(_nan_in(v) for v in x.values())
    if isinstance(x, list):
        return any(_nan_in(v) for v in x)
    return False


@pytest.mark.parametrize(
    "edit,fragment",
    [
        (lambda d: d["eliminated"].__setitem__(1, "false"), "eliminated[1]='false'"),
        (lambda d: d.update(terminated="false"), "terminated='false'"),
        (lambda d: d.update(current=1.7), "current=1.7"),
        (lambda d: d.update(current=True), "current=True"),
        (lambda d: d.update(turn_count=-1), "turn_count=-1"),
        (lambda d: d.update(turn_count=10**10), "turn_count=10000000000"),
        (lambda d: d.update(winner=9), "winner=9"),
        (lambda d: d.update(refuter=-2), "refuter=-2"),
        (lambda d: d["history"].append({"type": "accusation", "player": 9, "cards": ["Plum", "Rope", "Hall"],
                                        "correct": False}), "history[0].player=9"),  # fmt: skip
        (lambda d: d["history"].append({"type": "suggestion", "player": 0, "cards": ["Plum", "Rope", "Hall"],
                                        "passed": [7], "refuted_by": [], "shown": []}),
         "history[0].passed[0]=7"),  # fmt: skip
        (lambda d: d.update(history=[{"type": "accusation", "player": 0, "cards": ["Plum", "Rope", "Hall"],
                                      "correct": False}] * 404), "history has 404 entries"),  # fmt: skip
        (lambda d: d["rules"].update(max_turns=10**12), "max_turns=1000000000000"),
        (lambda d: d.update(rewards=[float("nan")] * 3), "rewards[0]=nan"),
    ],
)
def test_issue_cases_of_silently_accepted_snapshots(edit, fragment):
    """Inputs once accepted: each is a SnapshotError naming the field and what is allowed."""
    d = copy.deepcopy(SNAPSHOTS[1])  # classic, 3 players, at the start
    edit(d)
    with pytest.raises(SnapshotError) as info:
        Game.from_dict(d)
    assert fragment in str(info.value) and "(" in str(info.value), str(info.value)
    assert isinstance(info.value, CluedoError)


# ============================================================================ records
@FAST
@given(st.sampled_from(range(len(RECORDS))).flatmap(lambda k: mutated(RECORDS[k])))
def test_mutated_record_replays_or_is_a_record_error(rec):
    before = copy.deepcopy(rec)
    try:
        final = check(rec)
    except RecordError as exc:
        assert str(exc)
    else:
        assert final == rec["final"]
    assert rec == before or _nan_in(before)


@FAST
@given(st.binary(max_size=300) | st.sampled_from([b"[" * 50_000, b'{"schema": ' * 3000, b"\xff\xfe", b"null"]))
def test_any_file_as_record_is_loaded_or_a_record_error(content):
    fd, path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        with pytest.raises(RecordError) as info:
            load(path)
        assert path in str(info.value)
    finally:
        os.unlink(path)


# ============================================================================ training configs
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_training_config_is_valid_or_a_train_config_error(data):
    train = pytest.importorskip("cluedo_env.training.sb3.config")  # the `train` extra (torch, sb3-contrib)
    cfg = data.draw(mutated(train.TrainConfig().to_dict()))
    try:
        built = train.TrainConfig.from_dict(cfg if isinstance(cfg, dict) else {"x": 1})
    except TrainConfigError as exc:
        assert str(exc) and "(" in str(exc), str(exc)
        return
    assert built.total_timesteps >= 0 and built.env.num_envs >= 1


# ============================================================================ actions
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(range(len(SNAPSHOTS))),
    st.lists(st.integers(-2000, 3000) | st.sampled_from([-1, 0, A.NUM_ACTIONS, 2**63 - 1, -(2**63)]), max_size=12),
)
def test_random_actions_are_played_or_refused_without_change(k, actions):
    game = Game.from_dict(SNAPSHOTS[k], seed=k)
    for action in actions:
        before = game.to_dict()
        legal = game.legal_actions()
        if action in legal:
            game.step(action)
            continue
        with pytest.raises(A.IllegalActionError):
            game.step(np.int64(action) if -(2**63) <= action < 2**63 else action)
        assert game.to_dict() == before and game.legal_actions() == legal
