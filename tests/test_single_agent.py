"""The single-agent envs over the batched engine: API, masks, autoreset, seats, seeding, macro moves."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from cluedo_env.agents.players.base import Agent, sample_legal
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import LearnerOptions
from cluedo_env.training.single_agent import (
    ENV_ID,
    NUM_MACRO_ACTIONS,
    CluedoSingleAgentEnv,
    CluedoVectorEnv,
    macro_mask,
    macro_to_engine,
)

from cluedo_env.rules import actions as A
from cluedo_env.rules.board import ROOM_LOC0

pytest.importorskip("stable_baselines3")
from cluedo_env.training.sb3.vec_env import CluedoVecEnv  # noqa: E402


def _play(venv, steps: int, rng: np.random.Generator):
    """Random legal learner actions; yields (obs, rew, done, infos)."""
    for _ in range(steps):
        a = sample_legal(venv.action_masks(), rng)
        yield venv.step(a)


@pytest.mark.parametrize("macro", [False, True])
def test_gymnasium_env_checkers(macro):
    from gymnasium.utils.env_checker import check_env as gym_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    env = CluedoSingleAgentEnv(preset="classic", players=4, opponents="heuristic", macro_moves=macro)
    gym_check(env, skip_render_check=True)
    sb3_check(CluedoSingleAgentEnv(preset="cards", players=3, macro_moves=macro), warn=False)
    env = gymnasium.make(ENV_ID, preset="classic", players=3)
    obs, info = env.reset(seed=3)
    assert obs.shape == (2628,) and obs.dtype == np.int8 and "seat" in info
    mask = env.unwrapped.action_masks()
    assert mask.shape == (870,) and mask.any()


def test_gym_env_episode_and_autoreset():
    env = CluedoSingleAgentEnv(preset="classic", players=4, seat="random")
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    episodes = 0
    for _ in range(300):
        obs, r, term, trunc, info = env.step(int(sample_legal(env.action_masks()[None], rng)[0]))
        assert obs.shape == (2628,)
        if term or trunc:
            assert r in (-1.0, 1.0) or trunc
            episodes += 1
            obs, _ = env.reset()
        else:
            assert r == 0.0
    assert episodes > 10
    with pytest.raises(RuntimeError):
        CluedoSingleAgentEnv().step(0)


@pytest.mark.parametrize("seat", [0, 2, "random"])
def test_vecenv_shapes_masks_terminal_obs(seat):
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    venv = CluedoVecEnv(64, "classic", seed=0, seat=seat, opponents="random")
    obs = venv.reset()
    assert obs.shape == (64, 2628) and obs.dtype == np.int8
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (64, 870) and masks.dtype == bool and masks.any(1).all()
    rng = np.random.default_rng(1)
    ended = 0
    for obs, rew, done, infos in _play(venv, 100, rng):
        assert obs.shape == (64, 2628) and rew.shape == (64,) and done.shape == (64,)
        assert set(np.unique(rew)) <= {-1.0, 0.0, 1.0}
        assert (rew[~done] == 0).all()
        for i in np.flatnonzero(done):
            assert infos[i]["terminal_observation"].shape == (2628,)
            assert "TimeLimit.truncated" in infos[i]
            assert rew[i] != 0 or infos[i]["TimeLimit.truncated"]
        assert all("terminal_observation" not in infos[i] for i in np.flatnonzero(~done))
        # the learner is the one to act in every game, and its seat is fixed when asked for
        core = venv.core
        assert ((core.eng.actor == core.seat) | core.unplayed).all()
        if seat != "random":
            assert (core.seat == seat).all()
        ended += done.sum()
    assert ended > 0


class _SeatSpy(Agent):
    """A random player that checks it is asked only where its seat is to act."""

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)
        self.calls = 0
        self.seats: set[int] = set()

    def act(self, view, idx):
        assert (view.actor[idx] == view.seat).all()
        self.calls += len(idx)
        self.seats.add(view.seat)
        return sample_legal(view.legal_action_mask[idx], self.rng)


def test_opponents_act_only_in_their_seat_and_mixes():
    spy = _SeatSpy(0)
    calls = []

    def frozen(obs, mask):  # a "frozen policy": first legal action
        calls.append(len(obs))
        assert obs.shape[1] == 2628 and mask.shape[1] == 870
        return mask.argmax(1)

    core = LearnerCore(LearnerOptions(32, "classic", opponents=[spy, "heuristic", frozen], seat="random", seed=0))
    core.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert ((core.eng.actor == core.seat) | core.unplayed).all()
        core.step(sample_legal(core.action_masks(), rng))
    assert core.players[0][0] is spy and spy.calls > 0 and sum(calls) > 0
    copies = [p for p in core.players[0].values()]
    assert len({id(p) for p in copies}) == 4  # deep-copied per seat
    with pytest.raises(ValueError):
        LearnerCore(LearnerOptions(4, "classic", opponents=["random", "random"]))


def test_one_opponent_name_with_a_random_seat_shares_one_player_per_seat(monkeypatch):
    """``opponents: deducer`` with a random learner seat: seat s is played by one deducer in every game where the
    learner sits elsewhere (one call per seat and round, one notebook per game and seat); mixed names keep one
    player per (position, seat). Every opponent action stays legal (the engine raises otherwise) and each player
    acts only where its seat is to act."""
    from cluedo_env.agents.players.deducer import DeducerAgent

    calls: list[tuple[int, int]] = []
    act = DeducerAgent.act

    def spy(self, view, idx):
        assert (view.actor[idx] == view.seat).all() and (view.seat != core.seat[idx]).all()
        calls.append((id(self), view.seat))
        return act(self, view, idx)

    monkeypatch.setattr(DeducerAgent, "act", spy)
    core = LearnerCore(LearnerOptions(32, "cards", opponents="deducer", seat="random", seed=0))
    assert all(core.players[k] is core.players[0] for k in range(3)) and len(core._agents) == 4
    core.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        assert ((core.eng.actor == core.seat) | core.unplayed).all()
        core.step(sample_legal(core.action_masks(), rng))
    assert {seat for _, seat in calls} == {0, 1, 2, 3} and len({obj for obj, _ in calls}) == 4
    mixed = LearnerCore(LearnerOptions(4, "cards", opponents=["deducer", "deducer", "heuristic"], seat="random",
                                       seed=0))  # fmt: skip
    assert len(mixed._agents) == 12 and mixed.players[0] is not mixed.players[1]
    fixed = LearnerCore(LearnerOptions(4, "cards", opponents="deducer", seat=2, seed=0))
    assert len(fixed._agents) == 3 and [list(row) for row in fixed.players] == [[3], [0], [1]]


def test_fixed_seat_spy_sits_left_of_learner():
    spy = _SeatSpy(0)
    core = LearnerCore(LearnerOptions(16, "classic", opponents=[spy, "random", "random"], seat=1, seed=0))
    core.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        core.step(sample_legal(core.action_masks(), rng))
    assert spy.seats <= {2}


def test_seeds_reproducible():
    def run(seed):
        venv = CluedoVecEnv(32, "classic", seed=seed, seat="random", opponents="heuristic")
        out = [venv.reset()]
        rng = np.random.default_rng(5)
        for obs, rew, done, _ in _play(venv, 40, rng):
            out += [obs, rew, done]
        return out

    a, b, c = run(7), run(7), run(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_gymnasium_vector_env_same_step():
    venv = CluedoVectorEnv(16, "classic", seat=0, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    obs, _ = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    seen_final = False
    for _ in range(40):
        obs, rew, term, trunc, infos = venv.step(sample_legal(venv.action_masks(), rng))
        assert obs.shape == (16, 2628)
        if (term | trunc).any():
            seen_final = True
            assert infos["_final_obs"].tolist() == (term | trunc).tolist()
            assert infos["final_obs"][np.flatnonzero(term | trunc)[0]].shape == (2628,)
    assert seen_final


def test_macro_moves():
    core = LearnerCore(LearnerOptions(64, "classic", seat=0, macro_moves=True, seed=0))
    core.reset(seed=0)
    full = core.eng.legal_action_mask.copy()
    m = core.action_masks()
    assert m.shape == (64, NUM_MACRO_ACTIONS)
    assert (m[:, 13:] == full[:, A.SUGGEST0 :]).all()
    rng = np.random.default_rng(0)
    moved = 0
    for _ in range(80):
        full = core.eng.legal_action_mask.copy()
        m = macro_mask(full)
        playing = ~core.unplayed  # games over before the learner's first decision: only the forced action 0
        assert (m[playing] == core.action_masks()[playing]).all()
        a = sample_legal(core.action_masks(), rng)
        eng = macro_to_engine(a, full)
        assert full[np.arange(64), eng][playing].all()  # always a legal engine action
        mv = np.flatnonzero((a >= 4) & (a < 13) & playing)
        for i in mv:
            room = ROOM_LOC0 + a[i] - 4
            dests = np.flatnonzero(full[i, A.MOVE0 : A.SUGGEST0])
            if room in dests:
                assert eng[i] == A.MOVE0 + room  # enters the room when it can
        moved += len(mv)
        core.step(a)
    assert moved > 0


@pytest.mark.parametrize("end_on_elimination", [False, True])
def test_final_observation_is_the_finished_games_last_view(end_on_elimination):
    """A game whose episode ends during the opponents' rounds waits, untouched, until the step's other games are at
    the learner's turn; its final observation is then built and the game restarts. The final observation must be
    the learner's view of the finished game itself (its exported state), whichever way it ended."""
    from cluedo_env.engine.vector_engine import VectorEngine

    core = LearnerCore(LearnerOptions(16, "classic", seed=3, opponents="heuristic", seat="random",
                       end_on_elimination=end_on_elimination))  # fmt: skip
    core.keep_final_snapshots = True
    core.reset(seed=3)
    rng = np.random.default_rng(0)
    checked = rewarded = 0
    for _ in range(300):
        _, rew, term, trunc, ended = core.step(sample_legal(core.action_masks(), rng))
        for i in np.flatnonzero(ended):
            snapshot, seat = core.final_snapshots[int(i)]
            eng = VectorEngine(core.config, 1, autoreset=False)
            eng.import_game(0, snapshot)
            assert eng.phase[0] == A.OVER or eng.eliminated[0, seat]
            assert np.array_equal(core.final_obs[i], eng.observe(player=seat, idx=np.array([0]))[0])
            assert not np.array_equal(core.final_obs[i], core.observe()[i])  # the next game is shown already
            rewarded += int(rew[i] != 0)
            checked += 1
    assert checked > 20 and rewarded > 0
    assert core.episodes == checked  # each ended episode counted once, however long it waited
