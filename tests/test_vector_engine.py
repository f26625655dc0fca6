"""Edge cases of the vectorized engine's batch API (``cluedo_env.engine.vector_engine.VectorEngine``).

Game mechanics are checked against the reference engine in ``test_differential.py``; this
file checks what is particular to a batch: batch size 1, games ending at different steps,
autoreset, ``reset_games``, the all-or-nothing validation of ``step``, determinism,
``sample_random_actions``, snapshot import/export and construction errors.
"""

from __future__ import annotations

import json
import pickle
import re

import numpy as np
import pytest
from helpers import ENVELOPE, HANDS4, move, position, suggest

from cluedo_env.engine.reference import Game
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import load_board
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0
from cluedo_env.rules.config import ConfigError, RulesConfig

BOARD = load_board()
STATE_ARRAYS = (
    "pos weapon_room owner envelope phase current refuter roll turn_count eliminated dragged winner terminated "
    "truncated rewards last_roll move_dest hist_len hist_kind hist_player hist_triple hist_correct hist_response "
    "special suggest_set accuse_set show chance sampler"
).split()


def cfg(preset: str = "classic", **flags) -> RulesConfig:
    return RulesConfig.from_preset(preset, **flags)


def state(eng: VectorEngine) -> dict[str, np.ndarray]:
    """Copies of every state array (and the derived legal blocks) of the engine."""
    return {name: getattr(eng, name).copy() for name in STATE_ARRAYS}


def assert_same_state(a: dict[str, np.ndarray], b: dict[str, np.ndarray], rows=None) -> None:
    for name in STATE_ARRAYS:
        x, y = (a[name], b[name]) if rows is None else (a[name][rows], b[name][rows])
        assert np.array_equal(x, y), f"state array {name} differs"


def no_accusations(eng: VectorEngine, rng: np.random.Generator, keep: float = 0.0) -> np.ndarray:
    """Uniform legal actions, with sampled accusations replaced (prob. 1 - keep) by a uniform other legal action."""
    acts = eng.sample_random_actions(rng)
    drop = np.flatnonzero((acts >= A.ACCUSE0) & (rng.random(eng.batch_size) >= keep))
    if len(drop):
        m = eng.legal_action_mask[drop, : A.ACCUSE0]
        acts[drop] = np.where(m, rng.random(m.shape), -1.0).argmax(1)
    return acts


def wrong_accusation(eng: VectorEngine, i: int) -> int:
    """An accusation that does not match game i's envelope (another suspect, same weapon and room)."""
    s, w, r = (int(c) for c in eng.envelope[i])
    return A.ACCUSE0 + A.triple_index((s + 1) % 6, w - WEAPON_CARD0, r - ROOM_CARD0)


def fresh_start_legal(config: RulesConfig) -> list[int]:
    """The legal actions of seat 0 at the start of a new game (tokens on their start squares)."""
    if not config.has_board:
        return list(range(A.SUGGEST0, A.SHOW0))
    accusations = [] if config.accusation_in_room else list(range(A.ACCUSE0, A.NUM_ACTIONS))
    return [A.ROLL, *accusations]


def assert_fresh_game(eng: VectorEngine, i: int, end_flags: bool = True) -> None:
    """Slot i holds a newly dealt game (R-S1..R-S5); ``end_flags``: terminated/truncated are False too
    (not checked right after an autoreset, where they report the game that just ended)."""
    assert eng.turn_count[i] == 0 and eng.current[i] == 0 and eng.actor[i] == 0 and eng.refuter[i] == -1
    assert eng.phase[i] == (A.START if eng.has_board else A.SUGGEST)
    assert eng.roll[i] == 0 and eng.hist_len[i] == 0 and eng.winner[i] == -1
    assert not eng.eliminated[i].any() and not eng.dragged[i].any()
    assert not eng.move_dest[i].any()
    if end_flags:
        assert not eng.terminated[i] and not eng.truncated[i]
    if eng.has_board:
        assert eng.pos[i].tolist() == list(BOARD.starts)
        assert len(set(eng.weapon_room[i].tolist())) == 6  # R-S3
    owner = eng.owner[i]
    env = eng.envelope[i].tolist()
    assert sorted(np.flatnonzero(owner == -1).tolist()) == env
    assert env[0] < WEAPON_CARD0 <= env[1] < ROOM_CARD0 <= env[2] < NUM_CARDS
    sizes = np.bincount(owner[owner >= 0], minlength=eng.P)
    assert sizes.sum() == 18 and sizes.max() - sizes.min() <= 1
    assert np.flatnonzero(eng.legal_action_mask[i]).tolist() == fresh_start_legal(eng.config)
    Game.from_dict(eng.export_game(i))  # a valid snapshot


# ============================================================================ batch size 1
_SMALL = [
    cfg("classic", players=4, max_turns=40),
    cfg("seed000", players=3, max_turns=60),
    cfg("cards", players=5, max_turns=40),
]


@pytest.mark.parametrize("config", _SMALL, ids=["classic", "seed000", "cards"])
def test_batch_size_one_plays_full_games(config):
    rng = np.random.default_rng(1)
    ends = set()
    for seed in range(12):
        eng = VectorEngine(config, batch_size=1)
        eng.reset(seed=seed)
        g = Game.from_dict(eng.export_game(0))
        steps = 0
        while eng.phase[0] != A.OVER:
            acts = no_accusations(eng, rng, keep=(0.0, 0.05, 0.3, 1.0)[seed % 4])
            assert acts.shape == (1,) and eng.legal_action_mask[0, acts[0]]
            eng.step(acts)
            g.step(int(acts[0]), roll=int(eng.last_roll[0]) if acts[0] == A.ROLL else None)
            assert np.flatnonzero(eng.legal_action_mask[0]).tolist() == g.legal_actions()
            steps += 1
            assert steps < 20 * config.max_turns
        assert g.is_over and eng.export_game(0) == g.to_dict()
        assert eng.done[0] and eng.actor[0] == -1 and not eng.legal_action_mask[0].any() and eng.legal_counts()[0] == 0
        assert eng.sample_random_actions(rng).tolist() == [-1]
        rewards = eng.rewards[0].tolist()
        if eng.truncated[0]:
            assert rewards == [0.0] * config.players and eng.winner[0] == -1 and eng.turn_count[0] == config.max_turns
            ends.add("truncated")
        elif eng.winner[0] >= 0:
            assert rewards == [1.0 if p == eng.winner[0] else -1.0 for p in range(config.players)]
            ends.add("won")
        else:
            assert rewards == [-1.0] * config.players and eng.eliminated[0].all()  # R-E4
            ends.add("no winner")
    assert "truncated" in ends and len(ends) >= 2, ends


# ============================================================================ games ending at different steps
def test_games_finish_at_different_steps_and_stay_finished():
    config = cfg("classic", players=4, max_turns=30)
    eng = VectorEngine(config, batch_size=24)
    eng.reset(seed=3)
    rng = np.random.default_rng(3)
    keep = np.linspace(0.0, 1.0, eng.batch_size)  # from no accusations (truncated) to uniform (quick eliminations)
    finished_at = np.full(eng.batch_size, -1)
    frozen: dict[int, dict] = {}
    step = 0
    while (eng.phase != A.OVER).any():
        acts = eng.sample_random_actions(rng)
        over = eng.phase == A.OVER
        assert (acts[over] == -1).all() and (acts[~over] >= 0).all()
        drop = np.flatnonzero((acts >= A.ACCUSE0) & (rng.random(eng.batch_size) >= keep))
        m = eng.legal_action_mask[drop, : A.ACCUSE0]
        acts[drop] = np.where(m, rng.random(m.shape), -1.0).argmax(1)
        res = eng.step(acts)
        step += 1
        for i in np.flatnonzero(eng.phase == A.OVER):
            snap = eng.export_game(int(i))
            if finished_at[i] < 0:  # it ended in this step: the step reports it
                finished_at[i] = step
                assert eng.done[i]
                assert eng.rewards[i].any() == bool(eng.terminated[i])  # +-1 on termination, 0 on truncation
                assert np.array_equal(res.rewards[i], eng.rewards[i])
                frozen[int(i)] = snap
            else:  # finished earlier: nothing changes, its result included, and no reward is paid twice
                assert snap == frozen[int(i)]
                assert not res.rewards[i].any()
            assert eng.actor[i] == -1 and not eng.legal_action_mask[i].any() and eng.legal_counts()[i] == 0
            assert eng.done[i]
        assert step < 20 * config.max_turns
    assert (finished_at > 0).all()
    assert len(set(finished_at.tolist())) >= 5, finished_at  # really different steps
    assert eng.truncated.any() and eng.terminated.any()


@pytest.mark.parametrize("ignored", [-1, 0, 3, 869, 12345])
def test_step_ignores_the_action_given_to_a_finished_game(ignored):
    eng = VectorEngine(cfg("classic", players=2), batch_size=3)
    eng.reset(seed=0)
    eng.step(np.array([wrong_accusation(eng, 0), A.ROLL, A.ROLL]))
    assert eng.phase[0] == A.OVER and eng.winner[0] == 1  # R-E2: the other player is the last one standing
    before = eng.export_game(0)
    live_action = int(np.flatnonzero(eng.legal_action_mask[1])[0])
    res = eng.step(np.array([ignored, live_action, int(np.flatnonzero(eng.legal_action_mask[2])[0])]))
    after = eng.export_game(0)
    assert after == before and after["rewards"] == [-1.0, 1.0]  # the finished game's result is kept
    assert res.rewards[0].tolist() == [0.0, 0.0]  # and this step paid it nothing


# ============================================================================ autoreset
def _lockstep_until_a_game_ends(config: RulesConfig, batch: int, seed: int):
    """Two engines with the same seed, one autoresetting, stepped with the same actions until a game ends.

    Returns both engines, the games that ended, and the StepResult of the autoresetting engine's last step.
    """
    plain = VectorEngine(config, batch_size=batch)
    auto = VectorEngine(config, batch_size=batch, autoreset=True)
    plain.reset(seed=seed)
    auto.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(500):
        acts = no_accusations(plain, rng, keep=0.3)
        plain.step(acts)
        result = auto.step(acts)
        ended = np.flatnonzero(plain.phase == A.OVER)
        if len(ended):
            return plain, auto, ended, result
        assert_same_state(state(plain), state(auto))
    raise AssertionError("no game ended")


@pytest.mark.parametrize(
    "config", [cfg("classic", players=4, max_turns=12), cfg("cards", players=3, max_turns=9)], ids=["classic", "cards"]
)
def test_autoreset_restarts_finished_games_in_the_same_step(config):
    plain, auto, ended, _ = _lockstep_until_a_game_ends(config, batch=16, seed=11)
    others = np.setdiff1d(np.arange(16), ended)
    assert len(others)  # the batch mixes games that ended and games that go on
    for i in ended:
        assert_fresh_game(auto, int(i), end_flags=False)
    mine, theirs = state(auto), state(plain)
    for name in ("pos", "owner", "envelope", "phase", "current", "turn_count", "eliminated", "hist_len"):
        assert np.array_equal(mine[name][others], theirs[name][others]), name
    # Play on: an autoresetting engine never leaves a game over after a step.
    rng = np.random.default_rng(0)
    for _ in range(300):
        auto.step(auto.sample_random_actions(rng))
        assert (auto.phase != A.OVER).all() and (auto.actor >= 0).all() and (auto.legal_counts() > 0).all()


def test_autoreset_reports_the_end_in_the_step_that_ended_the_game():
    """The step that ends a game reports it (terminated/truncated, final rewards) in the StepResult it returns,
    while the state arrays already hold the fresh game; the next step's result no longer reports it.
    Otherwise a learner never sees the end.

    Compared with an engine without autoreset, stepped with the same seed and actions.
    """
    config = cfg("classic", players=4, max_turns=12)
    plain, auto, ended, result = _lockstep_until_a_game_ends(config, batch=16, seed=11)
    assert plain.terminated[ended].any() or plain.truncated[ended].any()
    for i in ended:
        assert auto.turn_count[i] == 0 and auto.phase[i] == A.START  # restarted in the same step
        assert (result.terminated[i], result.truncated[i]) == (plain.terminated[i], plain.truncated[i]), (
            f"game {i}: the step that ended it reports terminated={result.terminated[i]}, "
            f"truncated={result.truncated[i]} with autoreset, but terminated={plain.terminated[i]}, "
            f"truncated={plain.truncated[i]} without"
        )
        assert result.rewards[i].tolist() == plain.rewards[i].tolist(), (
            f"game {i}: rewards of the ending step are {result.rewards[i].tolist()} with autoreset, "
            f"{plain.rewards[i].tolist()} without"
        )
        # The state arrays describe the new game.
        assert not auto.terminated[i] and not auto.truncated[i] and not auto.rewards[i].any()
    not_ended = np.setdiff1d(np.arange(16), ended)
    assert not result.terminated[not_ended].any() and not result.truncated[not_ended].any()
    acts = no_accusations(auto, np.random.default_rng(1))
    acts[ended] = A.ROLL
    nxt = auto.step(acts)
    assert not nxt.terminated[ended].any() and not nxt.truncated[ended].any() and not nxt.rewards[ended].any()


# ============================================================================ reset_games
def test_reset_games_restarts_only_the_given_slots():
    config = cfg("classic", players=5)
    eng = VectorEngine(config, batch_size=7)
    eng.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(40):
        eng.step(no_accusations(eng, rng))
    assert (eng.turn_count > 0).all()
    before = state(eng)
    eng.reset_games(np.array([1, 4]))
    for i in (1, 4):
        assert_fresh_game(eng, i)
    assert_same_state(before, state(eng), rows=[0, 2, 3, 5, 6])
    # New deals come from the engine's RNG: not the same as each other.
    assert not np.array_equal(eng.owner[1], eng.owner[4]) or not np.array_equal(eng.envelope[1], eng.envelope[4])
    # An empty list changes nothing.
    snap = state(eng)
    eng.reset_games(np.array([], np.int64))
    assert_same_state(snap, state(eng))


def test_reset_games_restarts_a_finished_game():
    eng = VectorEngine(cfg("classic", players=2), batch_size=3)
    eng.reset(seed=5)
    eng.step(np.array([A.ROLL, wrong_accusation(eng, 1), A.ROLL]))
    assert eng.phase[1] == A.OVER and eng.terminated[1] and eng.winner[1] == 1  # R-E2
    kept = state(eng)
    eng.reset_games([1])
    assert_fresh_game(eng, 1)
    assert_same_state(kept, state(eng), rows=[0, 2])


# ============================================================================ step validation
def _mixed_batch(seed: int = 4, batch: int = 8, steps: int = 25):
    """An engine whose games are in different phases (and one finished game)."""
    eng = VectorEngine(cfg("classic", players=3), batch_size=batch)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        acts = no_accusations(eng, rng)
        if eng.phase[batch - 1] in (A.START, A.POST):  # the last game ends by wrong accusations
            acts[batch - 1] = wrong_accusation(eng, batch - 1)
        eng.step(acts)
    assert eng.phase[batch - 1] == A.OVER and (eng.phase[:-1] != A.OVER).all()
    assert len(set(eng.phase[:-1].tolist())) >= 2, eng.phase
    return eng, rng


def _first_illegal(eng: VectorEngine, i: int) -> int:
    return int(np.flatnonzero(~eng.legal_action_mask[i])[0])


def test_illegal_action_in_one_game_raises_and_changes_no_game():
    eng, rng = _mixed_batch()
    acts = no_accusations(eng, rng)
    acts[eng.phase == A.OVER] = -1
    assert (eng.phase[:5] != A.OVER).all()
    bad = _first_illegal(eng, 5)
    acts[5] = bad
    snaps = [eng.export_game(i) for i in range(eng.batch_size)]
    arrays, rng_state, mask = state(eng), eng.rng.bit_generator.state, eng.legal_action_mask.copy()
    expected = rf"^game 5: illegal action {re.escape(A.describe(bad))} \(id {bad}\) for player {eng.actor[5]}"
    with pytest.raises(A.IllegalActionError, match=expected) as info:
        eng.step(acts)
    assert "1 game(s) of 8" in str(info.value) and "no game was changed" in str(info.value)
    assert [eng.export_game(i) for i in range(eng.batch_size)] == snaps
    assert_same_state(arrays, state(eng))
    assert eng.rng.bit_generator.state == rng_state  # the chance streams (in the state) did not move either
    assert np.array_equal(eng.legal_action_mask, mask)
    # The same actions with the illegal one fixed go through.
    acts[5] = int(np.flatnonzero(eng.legal_action_mask[5])[0])
    eng.step(acts)


def test_illegal_actions_in_several_games_name_the_first():
    eng, rng = _mixed_batch()
    acts = no_accusations(eng, rng)
    acts[[2, 6]] = [_first_illegal(eng, 2), _first_illegal(eng, 6)]
    with pytest.raises(A.IllegalActionError, match=r"^game 2: .*2 game\(s\) of 8 had an illegal action"):
        eng.step(acts)


@pytest.mark.parametrize("bad", [A.NUM_ACTIONS, 870, 1000, -5, -1])
def test_out_of_range_action_on_a_live_game_raises(bad):
    eng, rng = _mixed_batch()
    acts = no_accusations(eng, rng)
    acts[3] = bad
    before = state(eng)
    with pytest.raises(A.IllegalActionError, match=rf"^game 3: illegal action {re.escape(str(bad))} \(out of range"):
        eng.step(acts)
    assert_same_state(before, state(eng))


@pytest.mark.parametrize(
    "make",
    [
        lambda acts: acts[:-1],  # too short
        lambda acts: np.concatenate([acts, acts[:1]]),  # too long
        lambda acts: acts[:, None],  # (B, 1)
        lambda acts: np.stack([acts, acts]),  # (2, B)
        lambda acts: np.int64(acts[0]),  # a scalar
        lambda acts: acts.astype(np.float64),  # float
        lambda acts: acts > 0,  # bool
        lambda acts: acts.astype(str),  # strings
    ],
    ids=["short", "long", "column", "2d", "scalar", "float", "bool", "str"],
)
def test_actions_of_wrong_shape_or_dtype_raise(make):
    eng, rng = _mixed_batch()
    acts = no_accusations(eng, rng)
    acts[eng.phase == A.OVER] = -1
    before = state(eng)
    with pytest.raises(A.IllegalActionError, match=r"actions must be a \(8,\) integer array"):
        eng.step(make(acts))
    assert_same_state(before, state(eng))


@pytest.mark.parametrize(
    "convert", [list, lambda a: a.astype(np.int32), lambda a: a.astype(np.int16)], ids=["list", "int32", "int16"]
)
def test_actions_as_a_list_or_narrow_integers_are_accepted(convert):
    eng, rng = _mixed_batch()
    acts = no_accusations(eng, rng)
    acts[eng.phase == A.OVER] = -1
    twin, _ = _mixed_batch()
    eng.step(convert(acts))
    twin.step(acts)
    assert_same_state(state(eng), state(twin))


# ============================================================================ determinism
def _trajectory(seed: int, batch: int, config: RulesConfig, steps: int = 80):
    eng = VectorEngine(config, batch_size=batch)
    eng.reset(seed=seed)
    rng = np.random.default_rng(123)
    out = [state(eng)]
    for _ in range(steps):
        eng.step(no_accusations(eng, rng, keep=0.02))
        out.append(state(eng))
    return out


@pytest.mark.parametrize(
    "config",
    [cfg("classic", players=4), cfg("seed000", players=6), cfg("cards", players=3)],
    ids=["classic", "seed000", "cards"],
)
def test_same_seed_and_batch_size_give_identical_trajectories(config):
    a, b = _trajectory(5, 12, config), _trajectory(5, 12, config)
    for t, (x, y) in enumerate(zip(a, b, strict=True)):
        for name in STATE_ARRAYS:
            assert np.array_equal(x[name], y[name]), f"step {t}: {name} differs"
    c = _trajectory(6, 12, config)
    assert not np.array_equal(a[0]["owner"], c[0]["owner"])  # another seed deals other cards
    assert any(not np.array_equal(x["hist_triple"], y["hist_triple"]) for x, y in zip(a, c, strict=True))
    if config.has_board:
        assert any(not np.array_equal(x["pos"], y["pos"]) for x, y in zip(a, c, strict=True))


def test_sample_random_actions_is_reproducible_with_a_given_rng():
    eng = VectorEngine(cfg("classic"), batch_size=64)
    eng.reset(seed=0)
    a = eng.sample_random_actions(np.random.default_rng(9))
    b = eng.sample_random_actions(np.random.default_rng(9))
    assert np.array_equal(a, b)
    assert a.dtype == np.int64 and a.shape == (64,)


# ============================================================================ sample_random_actions
@pytest.mark.parametrize(
    "config",
    [
        cfg("classic", players=6, max_turns=60),
        cfg("seed000", players=4, max_turns=40),
        cfg("cards", players=4),
        cfg("classic", players=3, accusation_in_room=True, suggestion_on_entry="optional", refutation="all"),
    ],
    ids=["classic", "seed000", "cards", "flags"],
)
def test_sample_random_actions_returns_only_legal_actions(config):
    eng = VectorEngine(config, batch_size=64)
    eng.reset(seed=8)
    rng = np.random.default_rng(8)
    seen = set()
    for _ in range(400):
        acts = eng.sample_random_actions(rng)
        live = eng.phase != A.OVER
        assert (acts[~live] == -1).all()
        assert eng.legal_action_mask[np.flatnonzero(live), acts[live]].all()
        seen.update(
            np.searchsorted(
                [A.PASSAGE, A.STAY, A.END_TURN, A.MOVE0, A.SUGGEST0, A.SHOW0, A.ACCUSE0], acts[live], side="right"
            ).tolist()
        )
        drop = np.flatnonzero((acts >= A.ACCUSE0) & (rng.random(eng.batch_size) > 0.02))
        m = eng.legal_action_mask[drop, : A.ACCUSE0]
        acts[drop] = np.where(m, rng.random(m.shape), -1.0).argmax(1)
        eng.step(acts)
    kinds = {0, 3, 4, 5, 6, 7} if config.has_board else {3, 5, 6, 7}  # ROLL, END, MOVE, SUGGEST, SHOW, ACCUSE
    assert kinds <= seen, seen


def _filled(snapshot: dict, batch: int) -> VectorEngine:
    game = Game.from_dict(snapshot)
    eng = VectorEngine(game.config, batch_size=batch)
    for i in range(batch):
        eng.import_game(i, snapshot)
    return eng


def _deal4(config=None, **kw) -> Game:
    return position(config, hands=HANDS4, envelope=ENVELOPE, **kw)


def _uniform_positions() -> dict[str, tuple[Game, int]]:
    """Named positions and their number of legal actions (worked out from RULES.md)."""
    out = {}
    out["start"] = (_deal4(), 1 + 324)  # ROLL + any accusation (R-T1, R-T4)
    out["start-kitchen-dragged"] = (_deal4(suspects={"Scarlet": "Kitchen"}, dragged=[0]), 3 + 324)  # + PASSAGE, STAY
    g = _deal4(suspects={"Scarlet": "Kitchen"}, phase="suggest")
    out["suggest"] = (g, 36)  # R-G1: 6 suspects x 6 weapons in the Kitchen
    g = _deal4(suspects={"Scarlet": "Kitchen"}, phase="suggest")
    g.step(suggest("Mustard", "Dagger", "Kitchen"))  # Mustard holds Mustard and Dagger; Kitchen is Scarlet's
    out["refute-2"] = (g, 2)
    g = _deal4(suspects={"Mustard": "Hall"}, phase="suggest", current=1)
    g.step(suggest("White", "Lead Pipe", "Hall"))  # White holds all three
    out["refute-3"] = (g, 3)
    g = _deal4(phase="move", roll=5)
    out["move"] = (g, len(g.legal_actions()))
    g = _deal4(suspects={"Scarlet": "Kitchen"}, phase="post")
    out["post"] = (g, 1 + 324)
    seed000 = RulesConfig.from_preset("seed000", players=4)
    out["suggest-optional-in-room"] = (_deal4(seed000, suspects={"Scarlet": "Hall"}, phase="suggest"), 1 + 36 + 36)
    cards = RulesConfig.from_preset("cards", players=4)
    out["cards-suggest"] = (_deal4(cards), 324)
    return out


_POSITIONS = _uniform_positions()


@pytest.mark.parametrize("name", list(_POSITIONS))
def test_sample_random_actions_is_uniform_over_the_legal_actions(name):
    game, n_legal = _POSITIONS[name]
    legal = game.legal_actions()
    assert len(legal) == n_legal
    assert n_legal >= 2
    eng = _filled(game.to_dict(), batch=400)
    assert np.flatnonzero(eng.legal_action_mask[0]).tolist() == legal
    rng = np.random.default_rng(len(name))
    calls = max(50, 200 * n_legal // eng.batch_size)
    counts = np.zeros(A.NUM_ACTIONS, np.int64)
    for _ in range(calls):
        counts += np.bincount(eng.sample_random_actions(rng), minlength=A.NUM_ACTIONS)
    total = calls * eng.batch_size
    assert counts.sum() == total and counts[np.setdiff1d(np.arange(A.NUM_ACTIONS), legal)].sum() == 0
    expected = total / n_legal
    assert (counts[legal] > 0).all(), "some legal action is never sampled"
    chi2 = float(((counts[legal] - expected) ** 2 / expected).sum())
    df = n_legal - 1
    assert chi2 < df + 8 * np.sqrt(2 * df) + 10, f"chi-square {chi2:.1f} with {df} degrees of freedom"
    # Each block in proportion to its size, e.g. ROLL 1/325 at a turn start (no bias to a block).
    for lo, hi in ((0, A.MOVE0), (A.MOVE0, A.SUGGEST0), (A.SUGGEST0, A.SHOW0), (A.SHOW0, A.ACCUSE0), (A.ACCUSE0, 870)):
        k = sum(lo <= a < hi for a in legal)
        share = counts[lo:hi].sum() / total
        assert abs(share - k / n_legal) < 5 * np.sqrt(k / n_legal * (1 - k / n_legal) / total) + 1e-9, (lo, share)


# ============================================================================ import / export
def _collect_positions(config: RulesConfig, seeds: range, phases: set[int]) -> list[dict]:
    """Snapshots of random mid-game positions of reference games, several per wanted phase."""
    out: list[dict] = []
    rng = np.random.default_rng(seeds.start)
    for seed in seeds:
        g = Game(config, seed=seed)
        while not g.is_over:
            legal = g.legal_actions()
            acts = [a for a in legal if a < A.ACCUSE0] if rng.random() > 0.01 else legal
            g.step(int(rng.choice(acts or legal)))
            if g.phase in phases and rng.random() < 0.1:
                out.append(json.loads(json.dumps(g.to_dict())))  # through JSON, as a stored snapshot would be
        out.append(g.to_dict())  # and the finished game
    return out


@pytest.mark.parametrize(
    "config",
    [
        cfg("classic", players=4, max_turns=60),
        cfg("seed000", players=3, max_turns=40),
        cfg("cards", players=5, max_turns=50),
        cfg("classic", players=6, max_turns=60, refutation="all"),
    ],
    ids=["classic", "seed000", "cards", "classic-refutation-all"],
)
def test_import_export_round_trip_on_random_positions(config):
    phases = {A.START, A.MOVE, A.SUGGEST, A.REFUTE, A.POST}
    snaps = _collect_positions(config, range(8), phases)
    seen = {s["phase"] for s in snaps}
    wanted = (
        {"start", "move", "suggest", "refute", "post", "over"}
        if config.has_board
        else {"suggest", "refute", "post", "over"}
    )
    if not config.accuse_after_suggestion:  # seed000: no accusation after a suggestion, none on a square (R-G8, R-A1)
        wanted.remove("post")
    assert wanted <= seen, seen
    eng = VectorEngine(config, batch_size=5)
    eng.reset(seed=0)
    rng = np.random.default_rng(0)
    for n, snap in enumerate(snaps):
        i = n % eng.batch_size
        others = [eng.export_game(j) for j in range(eng.batch_size) if j != i]
        eng.import_game(i, snap)
        assert eng.export_game(i) == snap
        assert [eng.export_game(j) for j in range(eng.batch_size) if j != i] == others  # only slot i changed
        g = Game.from_dict(snap)
        assert eng.actor[i] == g.actor
        assert np.flatnonzero(eng.legal_action_mask[i]).tolist() == g.legal_actions()
        assert eng.legal_counts()[i] == len(g.legal_actions())
        if g.is_over:
            continue
        # The imported game plays on like the reference game.
        a = int(rng.choice(g.legal_actions()))
        acts = np.full(eng.batch_size, -1)
        acts[i] = a
        live = np.flatnonzero(eng.phase != A.OVER)
        for j in live[live != i]:
            acts[j] = int(np.flatnonzero(eng.legal_action_mask[j])[0])
        eng.step(acts)
        g.step(a, roll=int(eng.last_roll[i]) if a == A.ROLL else None)
        assert eng.export_game(i) == g.to_dict()
        assert np.flatnonzero(eng.legal_action_mask[i]).tolist() == g.legal_actions()


def test_import_recomputes_move_destinations():
    g = _deal4(phase="move", roll=3)  # Scarlet on her start square (24, 7) with 3 pips
    eng = VectorEngine(g.config, batch_size=2)
    eng.reset(seed=0)
    eng.import_game(1, g.to_dict())
    assert np.flatnonzero(eng.move_dest[1]).tolist() == [a - A.MOVE0 for a in g.legal_actions()]
    eng.step(np.array([A.ROLL, g.legal_actions()[0]]))
    g.step(g.legal_actions()[0])
    assert eng.export_game(1) == g.to_dict()
    assert move((24, 7)) not in g.legal_actions()


@pytest.mark.parametrize(
    "other",
    [
        cfg("classic", players=3),
        cfg("classic", players=4, refutation="all"),
        cfg("classic", players=4, max_turns=399),
        cfg("seed000", players=4),
        cfg("cards", players=4),
        cfg("classic", players=4, dice=2),
    ],
    ids=["players", "refutation", "max_turns", "seed000", "cards", "dice"],
)
def test_import_of_a_snapshot_with_other_rules_raises(other):
    eng = VectorEngine(cfg("classic", players=4), batch_size=3)
    eng.reset(seed=1)
    before = state(eng)
    snap = Game(other, seed=0).to_dict()
    with pytest.raises(ValueError, match="rules"):
        eng.import_game(1, snap)
    assert_same_state(before, state(eng))


def test_import_of_a_malformed_snapshot_raises_and_changes_nothing():
    eng = VectorEngine(cfg("classic", players=4), batch_size=2)
    eng.reset(seed=1)
    before = state(eng)
    snap = eng.export_game(0)
    snap["phase"] = "refute"  # no refuter, no suggestion
    with pytest.raises(ValueError):
        eng.import_game(1, snap)
    with pytest.raises(ValueError):
        eng.import_game(1, {"schema": "nope"})
    assert_same_state(before, state(eng))


# ============================================================================ construction
@pytest.mark.parametrize("batch_size", [0, -1, 2.5, "8", None])
def test_bad_batch_size_raises(batch_size):
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        VectorEngine("classic", batch_size=batch_size)


def test_numpy_integer_batch_size_is_accepted():
    eng = VectorEngine("classic", batch_size=np.int64(3))
    eng.reset(seed=0)
    assert eng.batch_size == 3 and eng.legal_action_mask.shape == (3, A.NUM_ACTIONS)


@pytest.mark.parametrize(
    "config,message",
    [
        ("nosuch", "unknown preset 'nosuch'"),
        ({"players": 9}, "players=9"),
        ({"preset": "cards", "players": 2}, "players=2"),
        ({"dice": 3}, "dice=3"),
        ({"refutation": "some"}, "refutation='some'"),
        ({"max_turns": 0}, "max_turns=0"),
        ({"colour": "red"}, "unknown config key"),
    ],
)
def test_bad_config_raises_a_clear_error(config, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        VectorEngine(config, batch_size=2)


def test_legal_mask_and_counts_agree_after_reset():
    for config in (cfg("classic", players=2), cfg("seed000", players=5), cfg("cards", players=6)):
        eng = VectorEngine(config, batch_size=9)
        eng.reset(seed=4)
        assert eng.legal_action_mask.shape == (9, A.NUM_ACTIONS) and eng.legal_action_mask.dtype == bool
        assert np.array_equal(eng.legal_counts(), eng.legal_action_mask.sum(1))
        for i in range(eng.batch_size):
            assert_fresh_game(eng, i)
        assert not eng.show.any() and (eng.refuter == -1).all()  # nobody is asked to refute yet


def test_step_with_active_mask_leaves_inactive_games_untouched():
    config = cfg("classic", players=4)
    eng = VectorEngine(config, batch_size=6)
    eng.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(10):
        eng.step(no_accusations(eng, rng))
    before = state(eng)
    active = np.array([True, False, True, False, True, False])
    acts = no_accusations(eng, rng)
    acts[~active] = 12345  # ignored: not even validated
    eng.step(acts, active=active)
    after = state(eng)
    for per_step_output in ("last_roll", "rewards"):  # describe this step, not the game
        after[per_step_output] = before[per_step_output]
    assert_same_state(before, after, rows=[1, 3, 5])
    with pytest.raises(ValueError, match="active must be"):
        eng.step(no_accusations(eng, rng), active=np.ones(3, bool))


def test_the_game_loop_compiles_on_first_use_not_when_the_engine_is_made():
    """Making an engine compiles nothing here (a helper compiles the move search meanwhile, on an empty cache); the
    first reset or step types (or compiles) both, the first observation the encoder, and a pickled engine does the
    same."""
    loop = {"_k_new", "_k_step"}
    eng = VectorEngine("classic", 2)
    assert not {*loop, "_k_obs"} & eng.__dict__.keys()
    eng.reset(seed=0)
    assert loop <= eng.__dict__.keys() and "_k_obs" not in eng.__dict__
    first = eng.observe()
    assert "_k_obs" in eng.__dict__
    twin = pickle.loads(pickle.dumps(eng))
    assert not {*loop, "_k_obs"} & twin.__dict__.keys()
    np.testing.assert_array_equal(twin.observe(), first)
    twin.step(twin.mask.argmax(1))
    assert loop <= twin.__dict__.keys() and twin._k_step is eng._k_step and twin._k_obs is eng._k_obs


def test_an_engine_hands_a_helper_the_move_search_only(monkeypatch):
    """On an empty cache the step's move search compiles ahead, in a helper, when the engine is made; nothing else of
    the engine's does (the encoder would hold up a player's kernels queued behind it)."""
    from cluedo_env.engine import compile_ahead, kernels

    asked = []
    monkeypatch.setattr(compile_ahead, "submit", lambda kernels: asked.append([d for d, _ in kernels]) or False)
    VectorEngine("classic", 2)
    assert asked == [[kernels._roll]]


def test_entry_points_are_shared_by_engines_whose_arguments_type_alike():
    """A new engine takes the compiled entry points of an earlier one when every argument would type the same
    (``_layout``): same dtypes, dimensions, layouts and flags, whatever the sizes; anything numba types apart
    gets its own."""
    from cluedo_env.engine.entry_points import _layout

    a, b = VectorEngine("classic", 2), VectorEngine(RulesConfig.from_preset("cards", players=6), 5)
    assert a._k_step is b._k_step and a._k_obs is b._k_obs
    x = np.zeros((3, 4), np.int64)
    assert _layout(x) == _layout(np.ones((7, 2), np.int64))
    ro = x.view()
    ro.flags.writeable = False
    for other in (x.astype(np.int32), np.asfortranarray(np.zeros((3, 4), np.int64)), x[:, ::2], ro, x[None]):
        assert _layout(other) != _layout(x)
    assert _layout((x, 1)) != _layout((x, 1.0)) and _layout((x, True)) != _layout((x, 1))
