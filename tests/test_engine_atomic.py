"""Engine operations change all or nothing: ``import_game``, ``step``, the AEC env's edges.

A refused ``import_game`` leaves every slot of the batch as it was (no half-written slot), and so
does a refused ``step`` (no game of the batch changed, the random generator untouched: the engine
goes on exactly as an engine that never saw the bad call). The PettingZoo env refuses a step before
``reset`` or after the game with a clear error, and a refused ``load_snapshot`` does not consume
chance. Random mutations of snapshots (Hypothesis) are imported whole or not at all.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import make_config

B = 6


def _engine(preset: str = "classic", players: int = 4, seed: int = 0, steps: int = 25) -> VectorEngine:
    """An engine whose games are some random legal steps in (different phases in different slots)."""
    eng = VectorEngine(make_config(preset, players=players, max_turns=200), B)
    eng.reset(seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        eng.step(_calm_actions(eng, rng))
    return eng


def _calm_actions(eng: VectorEngine, rng: np.random.Generator) -> np.ndarray:
    """One legal action per game, avoiding accusations when anything else is legal (-1 for finished games)."""
    mask = eng.legal_action_mask
    out = np.full(eng.batch_size, -1, np.int64)
    for g in range(eng.batch_size):
        legal = np.flatnonzero(mask[g])
        if eng.phase[g] == A.OVER or not len(legal):
            continue
        calm = legal[legal < A.ACCUSE0]
        out[g] = int(rng.choice(calm if len(calm) else legal))
    return out


def _state(eng: VectorEngine) -> tuple[list[dict[str, Any]], np.ndarray]:
    return [eng.export_game(i) for i in range(eng.batch_size)], eng.legal_action_mask.copy()


def _assert_unchanged(eng: VectorEngine, before: tuple[list[dict[str, Any]], np.ndarray]) -> None:
    games, mask = _state(eng)
    assert games == before[0], "a refused operation changed a game of the batch"
    assert np.array_equal(mask, before[1])


def _good(eng: VectorEngine, i: int = 1) -> dict[str, Any]:
    return json.loads(json.dumps(eng.export_game(i)))


BAD_EDITS = [
    ("history seat 9", lambda d: d["history"].append(
        {"type": "accusation", "player": 9, "cards": ["Plum", "Rope", "Hall"], "correct": False})),  # fmt: skip
    ("passed [7]", lambda d: d["history"].append(
        {"type": "suggestion", "player": d["current"], "cards": ["Plum", "Rope", "Hall"], "passed": [7],
         "refuted_by": [], "shown": []})),  # fmt: skip
    ("turn_count 10**10", lambda d: d.update(turn_count=10**10)),
    ("404 history records", lambda d: d.update(history=[
        {"type": "suggestion", "player": 0, "cards": ["Plum", "Rope", "Hall"], "passed": [], "refuted_by": [],
         "shown": []}] * 404)),  # fmt: skip
    ("other rules", lambda d: d["rules"].update(players=3)),
    ("current 1.7", lambda d: d.update(current=1.7)),
    ("eliminated 'false'", lambda d: d["eliminated"].__setitem__(0, "false")),
    ("winner 9", lambda d: d.update(winner=9)),
    ("not a snapshot", lambda d: d.clear()),
]


@pytest.mark.parametrize("name,edit", BAD_EDITS, ids=[n for n, _ in BAD_EDITS])
@pytest.mark.parametrize("slot", [0, B - 1])
def test_refused_import_changes_no_slot(name, edit, slot):
    eng = _engine()
    snap = _good(eng, 2)
    edit(snap)
    before = _state(eng)
    with pytest.raises(ValueError):
        eng.import_game(slot, snap)
    _assert_unchanged(eng, before)
    eng.step(_calm_actions(eng, np.random.default_rng(1)))  # and the batch steps on


@pytest.mark.parametrize("index", [-1, -B, B, 10**9, 1.5, "0", None])
def test_import_game_refuses_an_index_outside_the_batch(index):
    eng = _engine()
    before = _state(eng)
    with pytest.raises((ValueError, IndexError, TypeError)) as info:
        eng.import_game(index, _good(eng, 2))
    assert str(index) in str(info.value) or repr(index) in str(info.value), str(info.value)
    _assert_unchanged(eng, before)


def test_imported_game_is_the_snapshot_and_plays_on():
    src, eng = _engine(seed=3, steps=40), _engine(seed=4, steps=10)
    snap = _good(src, 4)
    others = [eng.export_game(i) for i in range(B) if i != 2]
    eng.import_game(2, snap)
    assert eng.export_game(2) == snap
    assert [eng.export_game(i) for i in range(B) if i != 2] == others
    rng = np.random.default_rng(0)
    for _ in range(20):
        eng.step(_calm_actions(eng, rng))


@pytest.mark.parametrize("game", range(B))
@pytest.mark.parametrize("bad", [9999, -5, A.NUM_ACTIONS])
def test_step_with_one_bad_action_changes_no_game(game, bad):
    eng = _engine()
    twin = _engine()
    actions = _calm_actions(eng, np.random.default_rng(7))
    wrong = actions.copy()
    if eng.phase[game] == A.OVER:
        pytest.skip("a finished game ignores its action")
    wrong[game] = bad
    before = _state(eng)
    with pytest.raises(A.IllegalActionError) as info:
        eng.step(wrong)
    assert f"game {game}" in str(info.value) and str(bad) in str(info.value)
    _assert_unchanged(eng, before)
    eng.step(actions)  # the same legal step as an engine that never saw the refusal, dice included
    twin.step(actions)
    assert _state(eng)[0] == _state(twin)[0]


@pytest.mark.parametrize(
    "actions",
    [np.zeros(B, np.float64), np.zeros(B + 1, np.int64), np.zeros((B, 1), np.int64), ["0"] * B, None],
)
def test_step_refuses_actions_of_the_wrong_type_or_shape(actions):
    eng = _engine()
    before = _state(eng)
    with pytest.raises(ValueError):  # IllegalActionError is a ValueError
        eng.step(actions)
    _assert_unchanged(eng, before)


def test_a_full_history_is_refused_before_the_step_not_after():
    """A snapshot whose history would overflow the engine's arrays is refused at import, so no later
    step of the batch can fail half-way (a 404-record snapshot)."""
    eng = _engine(steps=0)
    snap = _good(eng, 0)
    cap = eng.H
    snap["history"] = [{"type": "suggestion", "player": 0, "cards": ["Plum", "Rope", "Hall"], "passed": [],
                        "refuted_by": [], "shown": []}] * (cap + 1)  # fmt: skip
    before = _state(eng)
    with pytest.raises(ValueError):
        eng.import_game(0, snap)
    _assert_unchanged(eng, before)


SNAPSHOT_POOL = [_good(_engine(p, n, seed, steps), slot) for p, n, seed, steps, slot in
                 [("classic", 4, 0, 30, 0), ("cards", 3, 1, 12, 1), ("seed000", 3, 2, 50, 2)]]  # fmt: skip


@st.composite
def _mutated(draw: Any) -> dict[str, Any]:
    snap = copy.deepcopy(draw(st.sampled_from(SNAPSHOT_POOL)))
    node: Any = snap
    parent, key = None, None
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]
    value = draw(st.none() | st.booleans() | st.integers(-10, 10**10) | st.floats() | st.text(max_size=6)
                 | st.sampled_from(["Hall", "Plum", "over", "refute", "false"])
                 | st.lists(st.integers(-2, 9), max_size=4))  # fmt: skip
    if parent is not None:
        parent[key] = value
    return snap


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated(), st.integers(0, B - 1))
def test_mutated_snapshot_imports_whole_or_not_at_all(snap, slot):
    eng = VectorEngine(make_config(snap["rules"]) if isinstance(snap.get("rules"), dict) and _rules_ok(snap)
                       else make_config("classic"), B)  # fmt: skip
    eng.reset(slot)
    before = _state(eng)
    try:
        eng.import_game(slot, snap)
    except ValueError:
        _assert_unchanged(eng, before)
        return
    others = [eng.export_game(i) for i in range(B) if i != slot]
    assert others == [g for i, g in enumerate(before[0]) if i != slot]
    rng = np.random.default_rng(slot)
    for _ in range(5):
        eng.step(_calm_actions(eng, rng))


def _rules_ok(snap: dict[str, Any]) -> bool:
    try:
        make_config(snap["rules"])
    except ValueError:
        return False
    return True


# ============================================================================ the PettingZoo env's edges
def test_raw_env_step_before_reset_is_a_clear_error():
    import cluedo_env

    env = cluedo_env.raw_env(preset="cards", players=3)
    with pytest.raises(Exception) as info:
        env.step(0)
    assert not isinstance(info.value, (AttributeError, KeyError)), repr(info.value)
    assert "reset" in str(info.value)


def test_raw_env_step_after_the_game_is_a_clear_error():
    import cluedo_env

    env = cluedo_env.raw_env(preset="cards", players=3)
    env.reset(seed=1)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))
    assert not env.agents
    with pytest.raises(Exception) as info:
        env.step(0)
    assert not isinstance(info.value, (AttributeError, KeyError)), repr(info.value)
    assert "reset" in str(info.value)


def test_refused_load_snapshot_does_not_consume_chance():
    import cluedo_env
    from cluedo_env.engine.snapshot import SnapshotError

    a, b = (cluedo_env.raw_env(preset="classic", players=4) for _ in range(2))
    a.reset(seed=5)
    b.reset(seed=5)
    bad = a.snapshot()
    bad["current"] = 1.7
    with pytest.raises(SnapshotError):
        a.load_snapshot(bad)
    for _ in range(60):  # the same first-legal play in both: dice must agree
        for env in (a, b):
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        assert a.snapshot() == b.snapshot()
        if not a.agents:
            break
