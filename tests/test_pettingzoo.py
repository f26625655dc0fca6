"""The PettingZoo AEC env: PettingZoo's own tests, the engine's observations, information hiding, illegal moves.

Configurations: presets classic, seed000 and cards with 2 (classic only; the others need 3), 4 and 6
players. Observations through the env are compared byte for byte with ``VectorEngine.observe`` of
the same state (the env's snapshot imported into a batch-1 engine), on positions from long random
games. Information hiding (R-G7) is checked through the env: hidden facts (another player's hand,
the envelope, the card shown in someone else's refutation) are changed consistently with the
public record, the edited state is loaded into a second env, and every agent that cannot know
sees the same observation, info and spectator render.
"""

from __future__ import annotations

import contextlib
import copy
import io
import pickle
import random
import re
import warnings
from typing import Any

import numpy as np
import pettingzoo
import pytest
from helpers import HANDS4, accuse, position, show, suggest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, TerminateIllegalWrapper

import cluedo_env
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.envs import aec
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, card_category, card_id, room_id, suspect_id, weapon_id
from cluedo_env.rules.config import ConfigError, RulesConfig

CONFIGS = [("classic", 2), ("classic", 4), ("classic", 6), ("seed000", 3), ("seed000", 4), ("seed000", 6),
           ("cards", 3), ("cards", 4), ("cards", 6)]  # fmt: skip
IDS = [f"{p}:{n}" for p, n in CONFIGS]
# PettingZoo's api_test warns about dict observations for every env not on its own list of classic games.
EXPECTED_WARNINGS = ("Observation is not a NumPy array", "Observation space for each agent probably should be")


@contextlib.contextmanager
def only_expected_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(EXPECTED_WARNINGS)]
    assert not unexpected, unexpected


def rare_accusations(env: Any, rng: random.Random, accuse_p: float = 0.002) -> int:
    """A random legal action of the agent to act, accusing only rarely so that games run long."""
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    others = legal[legal < A.ACCUSE0]
    pool = others if len(others) and rng.random() >= accuse_p else legal
    return int(pool[rng.randrange(len(pool))])


def quiet(fn):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


# ================================================================ PettingZoo's own tests
@pytest.mark.parametrize("preset,players", CONFIGS, ids=IDS)
def test_pettingzoo_api_test(preset, players):
    with only_expected_warnings():
        quiet(lambda: api_test(cluedo_env.env(preset=preset, players=players), num_cycles=200))
        quiet(lambda: api_test(cluedo_env.raw_env(preset=preset, players=players), num_cycles=50))


@pytest.mark.parametrize("preset,players", CONFIGS, ids=IDS)
def test_pettingzoo_seed_test(preset, players):
    seed_test(lambda: cluedo_env.env(preset=preset, players=players), num_cycles=100)


class FakeWindow:
    """Stands in for render.HumanWindow where there is no display; records what it was shown."""

    shown: list[tuple[dict, int | None]] = []

    def __init__(self, title: str = "Cluedo", **_: Any) -> None:
        self.title = title
        self.unpicklable = lambda: None  # a real window does not pickle either

    def show(self, frame: Any, viewer: int | None = None) -> None:
        FakeWindow.shown.append((frame, viewer))

    def close(self) -> None:
        pass


@pytest.fixture
def fake_window(monkeypatch):
    from cluedo_env import render

    FakeWindow.shown = []
    monkeypatch.setattr(render, "HumanWindow", FakeWindow)
    return FakeWindow


@pytest.mark.parametrize("preset,players", CONFIGS, ids=IDS)
def test_pettingzoo_render_test(preset, players, fake_window):
    render_test(lambda render_mode=None: cluedo_env.env(preset=preset, players=players, render_mode=render_mode))
    assert len(fake_window.shown) == 5 and all(viewer is None for _, viewer in fake_window.shown)


def test_human_mode_without_display_says_so(monkeypatch):
    from cluedo_env import render

    monkeypatch.setattr(render, "display_available", lambda: False)
    env = cluedo_env.env(render_mode="human")  # constructing needs no display
    env.reset(seed=0)
    with pytest.raises(render.NoDisplayError, match="rgb_array"):
        env.render()


# ================================================================ conventions
def test_metadata_agents_and_cached_spaces():
    env = cluedo_env.env(preset="classic", players=4)
    raw = env.unwrapped
    assert isinstance(raw, aec.raw_env) and isinstance(raw, pettingzoo.AECEnv)
    assert isinstance(env, OrderEnforcingWrapper)
    assert isinstance(env.env, AssertOutOfBoundsWrapper) and isinstance(env.env.env, TerminateIllegalWrapper)
    assert raw.metadata["name"] == "cluedo_v0" and raw.metadata["is_parallelizable"] is False
    assert raw.metadata["render_modes"] == ["ansi", "rgb_array", "human"] and raw.metadata["render_fps"] > 0
    assert env.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agents
    env.reset(seed=0)
    assert env.agents == env.possible_agents and env.agent_selection == "player_0"  # R-S1: Scarlet first
    D = VectorEngine(RulesConfig(), 1).observation_size
    for agent in env.possible_agents:
        obs_space, act_space = env.observation_space(agent), env.action_space(agent)
        assert obs_space is env.observation_space(agent) and act_space is env.action_space(agent)
        assert act_space.n == A.NUM_ACTIONS
        assert obs_space["observation"].shape == (D,) and obs_space["observation"].dtype == np.int8
        assert obs_space["action_mask"].shape == (A.NUM_ACTIONS,) and obs_space["action_mask"].dtype == np.int8
        obs = env.observe(agent)
        assert obs_space.contains(obs) and obs["observation"].dtype == np.int8 and obs["action_mask"].dtype == np.int8
        assert env.infos[agent] == {}
    assert env.observation_space("player_0") is not env.observation_space("player_1")  # seeded apart


def test_registered_with_pettingzoo():
    env = pettingzoo.make("aec", cluedo_env.PETTINGZOO_ID, preset="cards", players=3)
    assert isinstance(env, OrderEnforcingWrapper) and env.unwrapped.config.board == "none"
    assert env.unwrapped.config.players == 3


def test_config_by_keywords_yaml_and_rules_config():
    env = cluedo_env.env(preset="seed000", players=6, max_turns=200)
    assert env.unwrapped.config == RulesConfig.from_preset("seed000", players=6, max_turns=200)
    env = cluedo_env.env(config="configs/cards.yaml")
    assert env.unwrapped.config.board == "none" and env.unwrapped.config.preset == "cards"
    cfg = RulesConfig.from_preset("classic", players=3, dice=2)
    assert cluedo_env.raw_env(config=cfg).config is cfg
    assert cluedo_env.raw_env(config=cfg, max_turns=9).config.max_turns == 9
    assert cluedo_env.raw_env(refutation="all").config.refutation == "all"
    with pytest.raises(ConfigError, match="unknown config key"):
        cluedo_env.env(playerz=3)
    with pytest.raises(ConfigError, match="players"):
        cluedo_env.env(preset="cards", players=2)
    with pytest.raises(TypeError, match="either"):
        cluedo_env.env(config="classic", preset="cards")
    with pytest.raises(ValueError, match="render_mode"):
        cluedo_env.env(render_mode="video")
    with pytest.raises(ValueError, match="render_viewer"):
        cluedo_env.env(render_viewer="player_9")


def test_usage_example_in_the_docstring_runs():
    doc = aec.__doc__
    block = doc.split("::\n\n", 1)[1].split("\n\n``env(", 1)[0]
    code = "\n".join(line[4:] for line in block.splitlines())
    assert "cluedo_env.env(" in code and 8 <= len(code.splitlines()) <= 15
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "aec docstring", "exec"), {})
    assert "Scarlet" in out.getvalue()  # the ansi render was printed


def test_reset_seed_seeds_the_deal_and_the_dice():
    def trajectory(seed: int) -> list:
        env = cluedo_env.raw_env(preset="classic", players=3)
        env.reset(seed=seed)
        rng = random.Random(0)
        snaps = [env.snapshot()]
        for _ in range(60):
            env.step(rare_accusations(env, rng, 0.0))
            snaps.append(env.snapshot())
        return snaps

    a, b, c = trajectory(5), trajectory(5), trajectory(6)
    assert a == b and a != c
    assert any(s["roll"] for s in a)  # dice were rolled, from the seeded generator


def test_reset_without_seed_continues_the_generator():
    env = cluedo_env.raw_env()
    env.reset(seed=1)
    first = env.snapshot()
    env.reset()
    assert env.snapshot() != first


# ================================================================ turns, rewards, ends
def _refute_position() -> dict:
    """Seat 0 (Scarlet) in the Hall to suggest; seat 1 holds Mustard and Dagger (helpers.HANDS4)."""
    return position(suspects={"Scarlet": "Hall"}, phase="suggest", hands=HANDS4).to_dict()


def test_the_refuter_acts_out_of_turn():
    env = cluedo_env.env()
    env.reset(seed=0)
    env.unwrapped.load_snapshot(_refute_position())
    assert env.agent_selection == "player_0"
    env.step(suggest("Mustard", "Dagger", "Hall"))
    assert env.agent_selection == "player_1"  # R-G6: seat 1 holds two named cards and must show one
    obs = env.last()[0]
    assert set(np.flatnonzero(obs["action_mask"])) == {show("Mustard"), show("Dagger")}
    for agent in ("player_0", "player_2", "player_3"):
        assert not env.observe(agent)["action_mask"].any()
    from cluedo_env.engine.observation import split

    pieces = split(obs["observation"], env.unwrapped.config)
    assert pieces["to_act"][0] == 1 and pieces["pending_suggester"][3] == 1  # seat 0 is 3 to seat 1's left
    env.step(show("Dagger"))
    assert env.agent_selection == "player_0"  # back to the suggester, who may accuse or end (R-G8)
    assert set(np.flatnonzero(env.last()[0]["action_mask"])) == {A.END_TURN} | set(range(A.ACCUSE0, A.NUM_ACTIONS))
    assert env.unwrapped.snapshot()["history"][-1]["shown"] == ["Dagger"]


def test_a_correct_accusation_ends_the_game_with_rewards():
    env = cluedo_env.env()
    env.reset(seed=0)
    snap = position(envelope=["Plum", "Wrench", "Study"], current=1, eliminated=[0]).to_dict()
    env.unwrapped.load_snapshot(snap)
    assert env.agent_selection == "player_1"
    env.step(accuse("Plum", "Wrench", "Study"))
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0, "player_2": -1.0, "player_3": -1.0}  # R-E1
    seen = {}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        assert termination and not truncation and info == {} and not obs["action_mask"].any()
        seen[agent] = reward
        env.step(None)
    assert seen == {"player_0": -1.0, "player_1": 1.0, "player_2": -1.0, "player_3": -1.0} and env.agents == []


def test_cumulative_rewards_reach_an_agent_that_acted_earlier():
    env = cluedo_env.env(players=3)
    env.reset(seed=0)
    env.unwrapped.load_snapshot(position(RulesConfig(players=3), envelope=["Plum", "Wrench", "Study"]).to_dict())
    env.step(accuse("Green", "Rope", "Hall"))  # seat 0 wrong: eliminated, turn passes (R-A4)
    assert env.agent_selection == "player_1" and env._cumulative_rewards["player_0"] == 0
    env.step(accuse("Green", "Rope", "Hall"))  # seat 1 wrong too: seat 2 is the last standing (R-E2)
    assert all(env.terminations.values())
    rewards = {}
    for agent in env.agent_iter():
        rewards[agent] = env.last()[1]
        env.step(None)
    assert rewards == {"player_0": -1.0, "player_1": -1.0, "player_2": 1.0}


@pytest.mark.parametrize("preset,players", [("classic", 3), ("cards", 4)], ids=["classic:3", "cards:4"])
def test_truncation_after_max_turns(preset, players):
    env = cluedo_env.env(preset=preset, players=players, max_turns=7)
    env.reset(seed=3)
    rng = random.Random(3)
    steps = 0
    for _agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            assert truncation and not termination and reward == 0  # R-E3: no winner
            env.step(None)
            continue
        env.step(rare_accusations(env, rng, 0.0))
        steps += 1
    snap = env.unwrapped.snapshot()
    assert snap["truncated"] and snap["turn_count"] == 7 and steps >= 7


def test_load_snapshot_of_a_finished_game():
    env = cluedo_env.env()
    env.reset(seed=0)
    snap = env.unwrapped.snapshot()
    env.step(accuse(*(CARD_NAMES[card_id(c)] for c in snap["envelope"])))
    done = env.unwrapped.snapshot()
    env2 = cluedo_env.env()
    env2.reset(seed=1)
    env2.unwrapped.load_snapshot(done)
    assert all(env2.terminations.values()) and env2.rewards["player_0"] == 1.0


# ================================================================ illegal actions
def test_raw_env_raises_on_an_illegal_action_and_changes_nothing():
    env = cluedo_env.raw_env()
    env.reset(seed=0)
    before = env.snapshot()
    obs_before = env.observe("player_0")["observation"].copy()
    with pytest.raises(A.IllegalActionError, match=r"SHOW\(Scarlet\).*phase 'start'"):
        env.step(A.SHOW0)
    with pytest.raises(A.IllegalActionError, match="out of range"):
        env.step(A.NUM_ACTIONS)
    for bad in (3.0, "ROLL", None, True, np.array([0])):
        with pytest.raises(A.IllegalActionError, match="integer"):
            env.step(bad)
    assert env.snapshot() == before and env.agent_selection == "player_0"
    assert np.array_equal(env.observe("player_0")["observation"], obs_before)
    env.step(np.int64(A.ROLL))  # numpy integers are fine
    assert env.snapshot()["phase"] in ("move", "post", "start")


def test_env_terminates_the_game_on_an_illegal_action():
    env = cluedo_env.env()
    env.reset(seed=0)
    env.last()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(A.SHOW0)  # TerminateIllegalWrapper: the game ends, the offender loses
    assert all(env.terminations.values()) and all(env.truncations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0, "player_2": 0, "player_3": 0}
    assert env._cumulative_rewards["player_0"] == -1.0
    for _agent in env.agent_iter():
        env.step(None)
    assert env.agents == []
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="action space"):
        env.step(A.NUM_ACTIONS)  # AssertOutOfBoundsWrapper


def test_illegal_show_by_the_refuter_costs_the_refuter():
    env = cluedo_env.env()
    env.reset(seed=0)
    env.unwrapped.load_snapshot(_refute_position())
    env.step(suggest("Mustard", "Dagger", "Hall"))
    env.last()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(show("Hall"))  # seat 1 does not hold the Hall
    assert env.rewards["player_1"] == -1.0 and env.rewards["player_0"] == 0


# ================================================================ pickling
def _clone(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize("preset,players", CONFIGS, ids=IDS)
def test_pickle_fresh_and_mid_game(preset, players, fake_window):
    """A pickled env, fresh or in mid-game (wrapped or raw), goes on exactly as the original, dice included."""
    fresh = _clone(cluedo_env.env(preset=preset, players=players))
    fresh.reset(seed=0)
    for make in (cluedo_env.env, cluedo_env.raw_env):
        env = make(preset=preset, players=players, render_mode="human")
        env.reset(seed=11)
        rng = random.Random(1)
        for _ in range(40):
            env.step(rare_accusations(env, rng))
        env.render()  # a (fake) window is open: it must not travel
        twin = _clone(env)
        assert twin.unwrapped._window is None and twin.agent_selection == env.agent_selection
        rng1, rng2 = random.Random(2), random.Random(2)
        for _ in range(150):
            if not env.agents or env.terminations[env.agent_selection]:
                break
            a1, a2 = rare_accusations(env, rng1), rare_accusations(twin, rng2)
            assert a1 == a2
            env.step(a1)
            twin.step(a2)
            for agent in env.possible_agents:
                o1, o2 = env.observe(agent), twin.observe(agent)
                assert np.array_equal(o1["observation"], o2["observation"])
                assert np.array_equal(o1["action_mask"], o2["action_mask"])
        assert env.unwrapped.snapshot() == twin.unwrapped.snapshot()


# ================================================================ the engine's observations
def _positions(preset: str, players: int, games: int, steps: int, seed: int) -> list[dict]:
    """Snapshots from random games through raw_env, accusing rarely, at every step."""
    env = cluedo_env.raw_env(preset=preset, players=players, max_turns=120)
    rng = random.Random(seed)
    env.reset(seed=seed)
    out = []
    for _ in range(games):
        env.reset()
        for _ in range(steps):
            out.append(env.snapshot())
            if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                break
            env.step(rare_accusations(env, rng, 0.01))
    return out


@pytest.mark.parametrize("preset,players", CONFIGS, ids=IDS)
def test_observations_and_masks_are_the_engines(preset, players):
    """Every agent's observation and mask through the env equal VectorEngine's for the same state."""
    env = cluedo_env.raw_env(preset=preset, players=players, max_turns=120)
    env.reset(seed=0)
    eng = VectorEngine(env.config, batch_size=1)
    seats = np.arange(players)
    kinds: set[str] = set()
    snaps = _positions(preset, players, games=3, steps=250, seed=players)
    for snap in snaps[::2]:
        env.load_snapshot(snap)
        eng.import_game(0, snap)
        want = eng.observe(player=seats, idx=np.zeros(players, np.int64))
        actor = int(eng.actor[0])
        for p, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)
            assert np.array_equal(obs["observation"], want[p]), (agent, snap["phase"])
            mask = eng.legal_action_mask[0] if p == actor else np.zeros(A.NUM_ACTIONS, bool)
            assert np.array_equal(obs["action_mask"].astype(bool), mask), (agent, snap["phase"])
        kinds.add(snap["phase"])
        kinds.update(rec["type"] for rec in snap["history"])
        if len(snap["history"]) > 8:
            kinds.add("window overflow")
    expected = {"start", "move", "suggest", "refute", "post", "suggestion", "window overflow"}
    if preset == "cards":
        expected -= {"start", "move"}
    if preset == "seed000":
        expected -= {"post"}  # no accusation after a suggestion (R-G8), nor on a square (R-A1)
    assert expected <= kinds, expected - kinds


def test_observations_while_stepping_match_a_fresh_load():
    """The env's incremental observation state equals a rebuild from the snapshot at every step."""
    env = cluedo_env.raw_env(preset="seed000", players=4)
    other = cluedo_env.raw_env(preset="seed000", players=4)
    env.reset(seed=4)
    other.reset(seed=0)
    rng = random.Random(4)
    for _ in range(400):
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break
        env.step(rare_accusations(env, rng, 0.01))
        other.load_snapshot(env.snapshot())
        for agent in env.possible_agents:
            assert np.array_equal(env.observe(agent)["observation"], other.observe(agent)["observation"])


# ================================================================ information hiding
def _named(snap: dict) -> set[int]:
    out = set()
    for rec in snap["history"]:
        s, w, r = rec["cards"]
        out |= {suspect_id(s), 6 + weapon_id(w), 12 + room_id(r)}
    return out


def _holders(snap: dict) -> dict[int, int]:
    holder = {card_id(c): p for p, hand in enumerate(snap["hands"]) for c in hand}
    holder.update({card_id(c): -1 for c in snap["envelope"]})
    return holder


def _with_holders(snap: dict, holder: dict[int, int]) -> dict:
    out = copy.deepcopy(snap)
    out["hands"] = [[CARD_NAMES[c] for c in sorted(holder) if holder[c] == p] for p in range(len(snap["hands"]))]
    out["envelope"] = [CARD_NAMES[c] for c in sorted(holder) if holder[c] == -1]
    return out


def _hidden_edits(snap: dict, rng: random.Random) -> list[tuple[str, str, dict, set[int]]]:
    """Edits of hidden facts that keep every record of the history true: (kind, what, edited snapshot, who may know)."""
    P = len(snap["hands"])
    holder = _holders(snap)
    free = [c for c in range(21) if c not in _named(snap)]  # never named: no record says anything about them
    accusers = {rec["player"] for rec in snap["history"] if rec["type"] == "accusation"}
    edits = []
    held = [c for c in free if holder[c] >= 0]
    pairs = [(x, y) for x in held for y in held if x < y and holder[x] != holder[y]]
    if pairs:
        x, y = rng.choice(pairs)
        h = dict(holder)
        h[x], h[y] = holder[y], holder[x]
        edits.append(("hands", f"{CARD_NAMES[x]} <-> {CARD_NAMES[y]}", _with_holders(snap, h), {holder[x], holder[y]}))
    pairs = [(x, y) for x in free if holder[x] == -1 for y in held if card_category(x) == card_category(y)]
    if pairs:
        x, y = rng.choice(pairs)
        h = dict(holder)
        h[x], h[y] = holder[y], -1
        what = f"envelope {CARD_NAMES[x]} -> {CARD_NAMES[y]}"
        edits.append(("envelope", what, _with_holders(snap, h), {holder[y]} | accusers))
    shown = []
    for i, rec in enumerate(snap["history"]):
        if rec["type"] != "suggestion":
            continue
        s, w, r = rec["cards"]
        for j, (q, card) in enumerate(zip(rec["refuted_by"], rec["shown"], strict=True)):
            held_too = [other for other in (s, w, r) if other != card and holder[card_id(other)] == q]
            shown += [(i, j, rec["player"], q, other) for other in held_too]
    if shown:
        i, j, s, q, other = rng.choice(shown)
        edited = copy.deepcopy(snap)
        edited["history"][i]["shown"][j] = other  # the refuter holds that card too: the record stays true
        edits.append(("shown card", f"record {i}: seat {q} showed {other} to seat {s}", edited, {s, q}))
    assert all(0 <= p < P for *_, knows in edits for p in knows)
    return edits


def _view(env: Any, agent: str) -> tuple[bytes, dict]:
    return env.observe(agent)["observation"].tobytes(), dict(env.infos[agent])


@pytest.mark.parametrize("preset,players", [("classic", 4), ("classic", 6), ("seed000", 3), ("cards", 4), ("cards", 6)],
                         ids=["classic:4", "classic:6", "seed000:3", "cards:4", "cards:6"])  # fmt: skip
def test_information_hiding_through_the_env(preset, players):
    rng = random.Random(players)
    base = cluedo_env.raw_env(preset=preset, players=players, max_turns=120, render_mode="ansi")
    edit = cluedo_env.raw_env(preset=preset, players=players, max_turns=120, render_mode="ansi")
    base.reset(seed=0)
    edit.reset(seed=0)
    count: dict[str, int] = {}
    for snap in _positions(preset, players, games=3, steps=300, seed=10 + players)[::15]:
        base.load_snapshot(snap)
        for kind, what, edited, knows in _hidden_edits(snap, rng):
            edit.load_snapshot(edited)
            assert edit.agent_selection == base.agent_selection
            for p, agent in enumerate(base.possible_agents):
                if p in knows:
                    continue
                assert _view(edit, agent) == _view(base, agent), f"LEAK: {agent} can tell {what}"
            assert edit.render() == base.render(), f"LEAK: the spectator render shows {what}"
            count[kind] = count.get(kind, 0) + 1
    assert len(count) == 3 and min(count.values()) >= 3, count


def test_a_seat_sees_its_own_hand_change():
    env, other = cluedo_env.raw_env(), cluedo_env.raw_env()
    env.reset(seed=0)
    snap = env.snapshot()
    holder = _holders(snap)
    x = next(c for c in range(21) if holder[c] == 0)
    y = next(c for c in range(21) if holder[c] == 1)
    holder[x], holder[y] = 1, 0
    other.reset(seed=0)
    other.load_snapshot(_with_holders(snap, holder))
    assert _view(env, "player_0") != _view(other, "player_0") and _view(env, "player_2") == _view(other, "player_2")


# ================================================================ rendering
def test_render_modes_and_the_viewer_policy(fake_window):
    snaps = _positions("classic", 4, games=1, steps=200, seed=2)
    snap = next(s for s in reversed(snaps) if any(r["type"] == "suggestion" and r["shown"] for r in s["history"]))
    envs = {mode: cluedo_env.env(render_mode=mode, max_turns=120) for mode in ("ansi", "rgb_array", "human")}
    for env in envs.values():
        env.reset(seed=0)
        env.unwrapped.load_snapshot(snap)
    text = envs["ansi"].render()
    assert isinstance(text, str) and "Scarlet" in text
    image = envs["rgb_array"].render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert envs["human"].render() is None and fake_window.shown[-1][1] is None
    # Default: a spectator's view. No hand is listed (R-S6 is for the seat itself), no shown card.
    for hand in snap["hands"]:
        assert not re.search(r"hand: " + re.escape(", ".join(hand)), text)
    viewer = cluedo_env.env(render_mode="ansi", render_viewer="player_2", max_turns=120)
    viewer.reset(seed=0)
    viewer.unwrapped.load_snapshot(snap)
    assert viewer.render() != text and ", ".join(snap["hands"][2]) in viewer.render()
    rgb2 = cluedo_env.env(render_mode="rgb_array")
    rgb2.reset(seed=0)
    assert not np.array_equal(rgb2.render(), image)  # another position, another picture
