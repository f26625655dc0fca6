"""The PettingZoo parallel view: PettingZoo's own tests, the same game as env(), masks, information hiding, errors.

The parallel env drives the AEC env's game; these tests check that it is that game (records and every seat's
observation compared step by step with ``cluedo_env.env()`` on the same seed and actions), that its masks are
never all zeros and allow only the no-op to the seats not to act, and that a seat's observation and info do not
change when facts hidden from it change (R-G7).
"""

from __future__ import annotations

import contextlib
import copy
import io
import pickle
import random
import sys
import types
import warnings

import numpy as np
import pettingzoo
import pytest
from helpers import accuse, position, swap_hidden
from pettingzoo.test import parallel_api_test, parallel_seed_test

import cluedo_env
from cluedo_env import cluedo_v0, record
from cluedo_env.envs import parallel
from cluedo_env.envs.parallel import NOOP, CluedoParallelEnv
from cluedo_env.errors import UnknownAgentError
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, card_id
from cluedo_env.rules.config import ConfigError, RulesConfig

CONFIGS = [("classic", 2), ("classic", 4), ("seed000", 3), ("seed000", 6), ("cards", 4), ("cards", 6)]
IDS = [f"{p}:{n}" for p, n in CONFIGS]


def rare_accusation(mask: np.ndarray, rng: random.Random, accuse_p: float = 0.01) -> int:
    """A random legal engine action from an (870,) or (871,) mask, accusing rarely so that games run long."""
    legal = np.flatnonzero(mask[: A.NUM_ACTIONS])
    others = legal[legal < A.ACCUSE0]
    pool = others if len(others) and rng.random() >= accuse_p else legal
    return int(pool[rng.randrange(len(pool))])


def actor_of(infos: dict) -> str:
    acting = [agent for agent, info in infos.items() if info["acting"]]
    assert len(acting) == 1, infos
    return acting[0]


# ================================================================ PettingZoo's own tests
@pytest.mark.parametrize("preset,players", CONFIGS, ids=IDS)
def test_parallel_api_test(preset, players):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(io.StringIO()) as out:
            parallel_api_test(cluedo_env.parallel_env(preset=preset, players=players), num_cycles=500)
    assert "Passed Parallel API test" in out.getvalue()
    assert not [str(w.message) for w in caught]


@pytest.mark.parametrize("preset,players", CONFIGS, ids=IDS)
def test_parallel_seed_test(preset, players):
    parallel_seed_test(lambda: cluedo_env.parallel_env(preset=preset, players=players), num_cycles=100)


def test_same_seed_same_game_and_reset_without_seed_goes_on():
    def game(env: CluedoParallelEnv, seed: int | None) -> list:
        obs, infos = env.reset(seed=seed)
        rng = random.Random(0)
        out = [env.snapshot()]
        while env.agents:
            actor = actor_of(infos)
            obs, rewards, term, trunc, infos = env.step({actor: rare_accusation(obs[actor]["action_mask"], rng)})
            out.append(env.snapshot())
        return out

    a, b = cluedo_env.parallel_env(players=3, max_turns=30), cluedo_env.parallel_env(players=3, max_turns=30)
    assert game(a, 5) == game(b, 5)
    assert game(a, None) != game(b, 6)  # a goes on with its generator: not the deal of a fresh seed


# ================================================================ the same game as env()
@pytest.mark.parametrize("preset,players,seed,max_turns",
                         [("classic", 4, 1, 400), ("classic", 2, 2, 400), ("seed000", 6, 3, 400),
                          ("cards", 3, 4, 400), ("classic", 3, 5, 9)],
                         ids=["classic:4", "classic:2", "seed000:6", "cards:3", "truncated"])  # fmt: skip
def test_play_equals_env_on_the_same_seed(preset, players, seed, max_turns):
    """The same action choices through env() and parallel_env(): the same records, observations, masks, rewards."""
    aec = record.AECRecorder(cluedo_env.env(preset=preset, players=players, max_turns=max_turns))
    par = cluedo_env.parallel_env(preset=preset, players=players, max_turns=max_turns)
    aec.reset(seed=seed)
    obs, infos = par.reset(seed=seed)
    rec = record.Recorder(par.snapshot(), seed=seed)
    rng = random.Random(seed)
    returns = dict.fromkeys(par.possible_agents, 0.0)
    steps = 0
    while par.agents:
        actor = actor_of(infos)
        assert actor == aec.agent_selection
        for agent in par.possible_agents:
            want = aec.observe(agent)
            assert np.array_equal(obs[agent]["observation"], want["observation"]), (steps, agent)
            assert np.array_equal(obs[agent]["action_mask"][:NOOP], want["action_mask"]), (steps, agent)
            assert obs[agent]["action_mask"][NOOP] == (agent != actor)
        action = rare_accusation(obs[actor]["action_mask"], rng, 0.02)
        player = int(par.engine.actor[0])
        actions = {agent: NOOP for agent in par.agents} | {actor: action}
        obs, rewards, term, trunc, infos = par.step(actions)
        rec.add(player, action, int(par.engine.last_roll[0]) if action == A.ROLL else None)
        aec.step(action)
        for agent, r in rewards.items():
            returns[agent] += r
        steps += 1
    assert steps > 20
    theirs = {}
    for agent in aec.agent_iter():  # the AEC env hands each seat its final reward
        _, theirs[agent], termination, truncation, _ = aec.last()
        assert termination == term[agent] and truncation == trunc[agent]
        aec.step(None)
    assert returns == theirs and set(returns.values()) <= {-1.0, 0.0, 1.0}
    assert all(trunc.values()) == (set(returns.values()) == {0.0}) and all(trunc.values()) >= (max_turns < 100)
    ours, recorded = rec.finish(par.snapshot()), aec.record()
    assert ours == recorded
    assert record.check(ours) == ours["final"]  # the record replays through the reference engine


# ================================================================ masks, infos, spaces
def test_one_seat_acts_the_others_have_the_no_op_and_no_mask_is_empty():
    env = cluedo_env.parallel_env(preset="classic", players=4)
    obs, infos = env.reset(seed=7)
    rng = random.Random(7)
    phases = set()
    while True:
        actor = actor_of(infos) if env.agents else None
        for agent in env.possible_agents:
            space = env.observation_space(agent)
            assert space is env.observation_space(agent) and space.contains(obs[agent])
            mask = obs[agent]["action_mask"]
            assert mask.dtype == np.int8 and mask.any()  # a masked softmax is always defined
            if agent == actor:
                assert mask[NOOP] == 0
                assert np.array_equal(mask[:NOOP].astype(bool), env.engine.legal_action_mask[0])
            else:
                assert np.flatnonzero(mask).tolist() == [NOOP]
        if actor is None:
            break
        phases.add(int(env.engine.phase[0]))
        obs, rewards, term, trunc, infos = env.step({actor: rare_accusation(obs[actor]["action_mask"], rng)})
    assert A.REFUTE in phases  # the refuter acted out of turn (R-G6)
    assert env.action_space("player_0").n == NOOP + 1 == A.NUM_ACTIONS + 1
    assert env.metadata["name"] == "cluedo_v0" and isinstance(env, pettingzoo.ParallelEnv)


def test_the_refuter_acts_out_of_turn_and_rewards_go_to_their_seats():
    from helpers import HANDS4, show, suggest

    env = cluedo_env.parallel_env()
    env.reset(seed=0)
    obs, infos = env.load_snapshot(position(suspects={"Scarlet": "Hall"}, phase="suggest", hands=HANDS4).to_dict())
    assert actor_of(infos) == "player_0"
    obs, rewards, term, trunc, infos = env.step({"player_0": suggest("Mustard", "Dagger", "Hall")})
    assert actor_of(infos) == "player_1"  # R-G6: seat 1 holds two named cards
    assert set(np.flatnonzero(obs["player_1"]["action_mask"])) == {show("Mustard"), show("Dagger")}
    obs, rewards, term, trunc, infos = env.step({"player_1": show("Dagger"), "player_2": NOOP})
    assert actor_of(infos) == "player_0" and rewards == dict.fromkeys(env.possible_agents, 0.0)
    snap = position(envelope=["Plum", "Wrench", "Study"], current=2, eliminated=[0]).to_dict()
    obs, infos = env.load_snapshot(snap)
    obs, rewards, term, trunc, infos = env.step({"player_2": accuse("Plum", "Wrench", "Study")})
    assert rewards == {"player_0": -1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}  # R-E1
    assert all(term.values()) and not any(trunc.values()) and env.agents == []
    assert not any(info["acting"] for info in infos.values())


# ================================================================ information hiding
def _hidden_edits(snap: dict, rng: np.random.Generator) -> list[tuple[dict, set[int]]]:
    """Edits of hidden facts that keep the public record true: (edited snapshot, the seats that may tell)."""
    named = {c for rec in snap["history"] for c in rec["cards"]}
    holder = {c: p for p, hand in enumerate(snap["hands"]) for c in hand}
    edits = []
    for seat in range(len(snap["hands"])):
        edited = swap_hidden(snap, seat, rng)  # an envelope card <-> a card of another seat's hand, both unnamed
        if edited is not None:
            changed = {p for p, (a, b) in enumerate(zip(snap["hands"], edited["hands"], strict=True)) if a != b}
            accusers = {rec["player"] for rec in snap["history"] if rec["type"] == "accusation"}
            edits.append((edited, changed | accusers))
    for i, rec in enumerate(snap["history"]):  # the refuter held another named card: it could have shown that
        if rec["type"] == "suggestion" and rec["shown"]:
            q, card = rec["refuted_by"][0], rec["shown"][0]
            other = [c for c in rec["cards"] if c != card and holder.get(c) == q]
            if other:
                edited = copy.deepcopy(snap)
                edited["history"][i]["shown"][0] = other[0]
                edits.append((edited, {rec["player"], q}))
    free = [c for c in CARD_NAMES if c not in named and c in holder]
    pairs = [(x, y) for x in free for y in free if card_id(x) < card_id(y) and holder[x] != holder[y]]
    if pairs:  # two unnamed cards swapped between two hands
        x, y = pairs[rng.integers(len(pairs))]
        edited = copy.deepcopy(snap)
        for card, src, dst in ((x, holder[x], holder[y]), (y, holder[y], holder[x])):
            edited["hands"][src].remove(card)
            edited["hands"][dst] = sorted(edited["hands"][dst] + [card], key=card_id)
        edits.append((edited, {holder[x], holder[y]}))
    return edits


def _view(obs: dict, infos: dict, agent: str) -> tuple:
    return obs[agent]["observation"].tobytes(), obs[agent]["action_mask"].tobytes(), infos[agent]


@pytest.mark.parametrize("preset,players", [("classic", 4), ("seed000", 3), ("cards", 6)],
                         ids=["classic:4", "seed000:3", "cards:6"])
def test_a_seat_cannot_tell_facts_hidden_from_it(preset, players):
    """LEAK test: change another seat's hand, the envelope or a card shown to others; a seat that may not know
    sees the same observation, mask and info; a seat that may know sees a change (so the test can fail)."""
    rng = np.random.default_rng(players)
    play, base, edit = (cluedo_env.parallel_env(preset=preset, players=players, max_turns=150) for _ in range(3))
    obs, infos = play.reset(seed=players)
    base.reset(seed=0)
    edit.reset(seed=0)
    pyrng = random.Random(players)
    checked = told = 0
    steps = 0
    while play.agents and steps < 400:
        if steps % 10 == 0:
            snap = play.snapshot()
            seen, seen_infos = base.load_snapshot(snap)
            for edited, knows in _hidden_edits(snap, rng):
                other, other_infos = edit.load_snapshot(edited)
                for p, agent in enumerate(play.possible_agents):
                    same = _view(other, other_infos, agent) == _view(seen, seen_infos, agent)
                    if p not in knows:
                        assert same, f"LEAK: {agent} can tell a hidden edit at step {steps}"
                        checked += 1
                    else:
                        told += not same
        actor = actor_of(infos)
        obs, _, _, _, infos = play.step({actor: rare_accusation(obs[actor]["action_mask"], pyrng, 0.002)})
        steps += 1
    assert checked > 50 and told > 5, (checked, told)


# ================================================================ illegal moves and bad input
def _started(**kwargs) -> tuple[CluedoParallelEnv, dict, dict]:
    env = cluedo_env.parallel_env(players=3, **kwargs)
    obs, infos = env.reset(seed=0)
    return env, obs, infos


def test_an_illegal_move_ends_the_game_for_the_offenders():
    env, obs, infos = _started()
    assert actor_of(infos) == "player_0"  # R-S1: Scarlet first
    legal = int(np.flatnonzero(obs["player_0"]["action_mask"])[0])
    illegal = int(np.flatnonzero(obs["player_0"]["action_mask"][:NOOP] == 0)[0])
    cases = [({"player_0": illegal}, {"player_0"}),
             ({"player_0": NOOP}, {"player_0"}),  # the no-op is not the acting seat's
             ({"player_0": legal, "player_2": A.ROLL}, {"player_2"}),  # a seat not to act moved
             ({"player_0": illegal, "player_1": legal}, {"player_0", "player_1"})]  # fmt: skip
    for actions, offenders in cases:
        env.reset(seed=0)
        before = env.snapshot()
        obs, rewards, term, trunc, infos = env.step(actions)
        assert rewards == {a: -1.0 if a in offenders else 0.0 for a in env.possible_agents}, actions
        assert all(term.values()) and not any(trunc.values()) and env.agents == []
        assert all(np.flatnonzero(o["action_mask"]).tolist() == [NOOP] for o in obs.values())
        assert env.snapshot() == before  # no move was applied
        assert not any(info["acting"] for info in infos.values())


def test_raise_mode_names_the_move_and_changes_nothing():
    env, obs, infos = _started(illegal_action="raise")
    before = env.snapshot()
    legal = int(np.flatnonzero(obs["player_0"]["action_mask"])[0])
    with pytest.raises(A.IllegalActionError, match=r"player_0: illegal action .*phase 'start'.*action_mask"):
        env.step({"player_0": A.ACCUSE0 - 1})
    with pytest.raises(A.IllegalActionError, match=rf"player_1: illegal .*player_0 is to act.*NOOP \(id {NOOP}\)"):
        env.step({"player_0": legal, "player_1": A.ROLL})
    with pytest.raises(A.IllegalActionError, match="player_0: illegal action NOOP"):
        env.step({"player_0": NOOP})
    assert env.snapshot() == before and env.agents == env.possible_agents


@pytest.mark.parametrize("mode", ["lose", "raise"])
def test_malformed_actions_raise_whatever_the_mode(mode):
    env, obs, infos = _started(illegal_action=mode)
    before = env.snapshot()
    legal = int(np.flatnonzero(obs["player_0"]["action_mask"])[0])
    with pytest.raises(A.IllegalActionError, match="player_0 is to act.*missing"):
        env.step({"player_1": NOOP})
    with pytest.raises(A.IllegalActionError, match="must be an integer"):
        env.step({"player_0": float(legal)})
    with pytest.raises(A.IllegalActionError, match="must be an integer"):
        env.step({"player_0": legal, "player_1": True})
    with pytest.raises(A.IllegalActionError, match=rf"outside 0..{NOOP}"):
        env.step({"player_0": NOOP + 1})
    with pytest.raises(UnknownAgentError, match="player_7"):
        env.step({"player_0": legal, "player_7": NOOP})
    with pytest.raises(TypeError, match="dict"):
        env.step([legal])
    assert env.snapshot() == before
    env.step({"player_0": np.int64(legal), "player_1": np.array(NOOP)})  # numpy integers are integers


def test_bad_construction_and_step_outside_a_game():
    with pytest.raises(ConfigError, match="illegal_action"):
        cluedo_env.parallel_env(illegal_action="ignore")
    with pytest.raises(ConfigError, match="unknown config key"):
        cluedo_env.parallel_env(playerz=3)
    env = cluedo_env.parallel_env(preset="cards", players=3)
    assert env.agents == [] and env.config == RulesConfig.from_preset("cards", players=3)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    with pytest.raises(UnknownAgentError):
        env.observation_space("player_3")
    snap = position(RulesConfig(players=3), envelope=["Plum", "Wrench", "Study"]).to_dict()
    env = cluedo_env.parallel_env(players=3)
    env.reset(seed=0)
    env.load_snapshot(snap)
    env.step({"player_0": accuse("Plum", "Wrench", "Study")})
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": NOOP})
    obs, infos = env.load_snapshot(env.snapshot())  # a finished game: no agents, every mask the no-op
    assert env.agents == [] and all(np.flatnonzero(o["action_mask"]).tolist() == [NOOP] for o in obs.values())


def test_pickled_mid_game_goes_on_the_same():
    env = cluedo_env.parallel_env(players=4, render_mode="ansi")
    obs, infos = env.reset(seed=3)
    rng = random.Random(3)
    for _ in range(30):
        actor = actor_of(infos)
        obs, _, _, _, infos = env.step({actor: rare_accusation(obs[actor]["action_mask"], rng, 0.0)})
    twin = pickle.loads(pickle.dumps(env))
    for _ in range(60):
        actor = actor_of(infos)
        action = {actor: rare_accusation(obs[actor]["action_mask"], rng, 0.0)}
        obs, *_, infos = env.step(action)
        twin.step(action)
    assert env.snapshot() == twin.snapshot() and env.render() == twin.render() and "Scarlet" in env.render()


# ================================================================ registration and packaging
def test_registered_exported_and_packaged():
    env = pettingzoo.make("parallel", cluedo_env.PETTINGZOO_ID, preset="cards", players=3)
    assert isinstance(env, CluedoParallelEnv) and env.config.board == "none"
    assert cluedo_env.parallel_env is parallel.parallel_env is cluedo_v0.parallel_env
    assert "parallel_env" in cluedo_env.__all__ and "parallel_env" in cluedo_env.envs.__all__


def test_registration_is_skipped_by_a_pettingzoo_without_a_registry(monkeypatch):
    """PettingZoo before 1.27 has no ``aec_registry``/``register``: registering must do nothing, not fail."""
    old = types.ModuleType("pettingzoo")
    old.ParallelEnv, old.AECEnv = pettingzoo.ParallelEnv, pettingzoo.AECEnv
    monkeypatch.setitem(sys.modules, "pettingzoo", old)
    cluedo_env.register_pettingzoo()
    assert not hasattr(old, "aec_registry")


def test_usage_example_in_the_docstring_runs():
    block = parallel.__doc__.split("::\n\n", 1)[1].split("\n\nWhy", 1)[0]
    code = "\n".join(line[4:] for line in block.splitlines())
    assert "cluedo_env.parallel_env(" in code
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "parallel docstring", "exec"), {})
    assert "player_0" in out.getvalue()
