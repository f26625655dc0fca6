"""Belief features (agents/learner/belief.py) and the learner's action-space options (LearnerActions).

The belief features are the deducer's notebook for the learner's seat: they must be sound
(every proved fact true of the hidden deal), hide what the seat may not know, and the macro
accusation must accuse the envelope once the notebook is solved.
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.agents.learner.belief import BELIEF_MEANING, BELIEF_PIECES, BeliefTracker, belief_layout, belief_size
from cluedo_env.agents.play.runner import seat_actions
from cluedo_env.agents.players.base import sample_legal
from cluedo_env.agents.players.heuristic import HeuristicAgent
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import LearnerOptions
from cluedo_env.training.single_agent import (
    NUM_MACRO_ACTIONS,
    CluedoSingleAgentEnv,
    LearnerActions,
    num_actions,
)
from helpers import config, swap_hidden
from references.belief import features_reference

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, NUM_ROOMS


def _truth(eng: VectorEngine, seats: np.ndarray) -> np.ndarray:
    """(B, P + 1, 21) true holders, seat-relative (holder k = k seats left of ``seats[g]``; envelope last)."""
    P = eng.P
    holder = np.where(eng.owner < 0, P, eng.owner).astype(np.int64)  # (B, 21) absolute
    rel = np.where(holder < P, (holder - seats[:, None]) % P, P)
    out = np.zeros((eng.batch_size, P + 1, NUM_CARDS), bool)
    out[np.arange(eng.batch_size)[:, None], rel, np.arange(NUM_CARDS)[None, :]] = True
    return out


def _envelope_triple(eng: VectorEngine) -> np.ndarray:
    out = np.zeros(eng.batch_size, np.int64)
    for g in range(eng.batch_size):
        s, w, r = np.sort(np.flatnonzero(eng.owner[g] < 0))
        out[g] = (s * 6 + (w - 6)) * NUM_ROOMS + (r - 12)
    return out


def test_layout_and_size():
    for players in range(2, 7):
        lay = belief_layout(players)
        name, shape, at = lay[-1]
        assert at + int(np.prod(shape)) == belief_size(players)
    assert belief_size(4) == 214
    assert [n for n, _, _ in belief_layout(4)] == ["belief_holds", "belief_lacks", "belief_category", "belief_solved"]
    assert BELIEF_PIECES == tuple(BELIEF_MEANING)  # every piece documented, in order


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("cards", 3), ("classic", 6)])
def test_features_are_sound_and_a_solved_notebook_accuses_the_envelope(preset, players):
    """Heuristic players play whole games; the tracker follows a random seat in each game.
    Every proved fact holds in the hidden deal, and once solved the best accusation is the envelope."""
    cfg = config(preset, players=players, max_turns=300)
    B = 24
    eng = VectorEngine(cfg, B)
    eng.reset(5)
    views = [PlayerView(eng, s) for s in range(players)]
    agents = [HeuristicAgent(seed=s) for s in range(players)]
    for a, v in zip(agents, views, strict=True):
        a.reset(v, np.arange(B))
    seats = np.random.default_rng(0).integers(0, players, B)
    tracker = BeliefTracker(views, seed=0)
    tracker.reset(np.arange(B), seats)
    lay = {n: (shape, at) for n, shape, at in belief_layout(players)}
    H = players + 1
    truth_triple = _envelope_triple(eng)
    solved_seen = 0
    for _ in range(400):
        live = np.flatnonzero(~eng.done)
        if not len(live):
            break
        tracker.update(live)
        f = tracker.features(live)
        assert np.array_equal(f, features_reference(tracker, live))  # the compiled features are the statement's
        holds = f[:, lay["belief_holds"][1] : lay["belief_holds"][1] + H * NUM_CARDS].reshape(-1, H, NUM_CARDS)
        lacks = f[:, lay["belief_lacks"][1] : lay["belief_lacks"][1] + H * NUM_CARDS].reshape(-1, H, NUM_CARDS)
        truth = _truth(eng, seats)[live]
        assert not (holds.astype(bool) & ~truth).any(), "a proved holding is false"
        assert not (lacks.astype(bool) & truth).any(), "a proved absence is false"
        assert (holds[:, 0].astype(bool) == truth[:, 0]).all(), "the seat's own hand is known exactly"
        solved = f[:, lay["belief_solved"][1]] == 1
        assert (solved == (f[:, lay["belief_category"][1] : lay["belief_category"][1] + 3] == 1).all(1)).all()
        if solved.any():
            g = live[solved]
            best = tracker.best_accusations(g, np.ones((len(g), 324), bool))
            assert (best == truth_triple[g]).all()
            solved_seen += len(g)
        eng.step(seat_actions(eng, agents, views))
    assert solved_seen > 0


def test_features_do_not_depend_on_hidden_cards():
    """Swapping an unnamed envelope card with an unnamed card of another hand leaves the seat's features
    byte-identical; its own hand is in them (the converse: changing what it knows changes them)."""
    cfg = config("classic", players=4)
    B = 6
    eng = VectorEngine(cfg, B)
    eng.reset(3)
    views = [PlayerView(eng, s) for s in range(4)]
    agents = [HeuristicAgent(seed=s) for s in range(4)]
    for a, v in zip(agents, views, strict=True):
        a.reset(v, np.arange(B))
    rng = np.random.default_rng(1)
    checked = converse = 0

    def features(snap: dict, seat: int) -> np.ndarray:
        e = VectorEngine(cfg, 1)
        e.import_game(0, snap)
        t = BeliefTracker([PlayerView(e, s) for s in range(4)], seed=0)
        t.reset(np.array([0]), seat)
        t.update(np.array([0]))
        return t.features(np.array([0]))[0]

    for step in range(120):
        if step % 10 == 0:
            for g in range(B):
                if eng.done[g]:
                    continue
                snap = eng.export_game(g)
                seat = int(rng.integers(4))
                alt = swap_hidden(snap, seat, rng)
                if alt is None:
                    continue
                assert np.array_equal(features(snap, seat), features(alt, seat))
                other = swap_hidden(snap, (seat + 1) % 4, rng)  # may swap a card of this seat's hand
                if other is not None and sorted(other["hands"][seat]) != sorted(snap["hands"][seat]):
                    assert not np.array_equal(features(snap, seat), features(other, seat))
                    converse += 1
                checked += 1
        if eng.done.all():
            break
        eng.step(seat_actions(eng, agents, views))
    assert checked >= 20 and converse >= 3


def test_best_accusation_keeps_to_the_legal_ones():
    cfg = config("classic", players=4)
    eng = VectorEngine(cfg, 3)
    eng.reset(0)
    t = BeliefTracker([PlayerView(eng, s) for s in range(4)], seed=0)
    t.reset(np.arange(3), np.array([0, 1, 2]))
    t.update(np.arange(3))
    legal = np.zeros((3, 324), bool)
    legal[0, 5] = True  # one legal triple: it is the answer
    legal[1, [(s * 6 + w) * 9 + 4 for s in range(6) for w in range(6)]] = True  # only room 4
    legal[2] = True
    best = t.best_accusations(np.arange(3), legal)
    assert best[0] == 5 and best[1] % 9 == 4
    hand = eng.owner[2] == 2  # seat 2's own cards are never accused when others are open
    s, w, r = best[2] // 54, (best[2] // 9) % 6, best[2] % 9
    assert not hand[s] and not hand[6 + w] and not hand[12 + r]


def test_action_space_sizes_and_masks():
    assert num_actions(False) == 870 and num_actions(True) == NUM_MACRO_ACTIONS == 682
    assert num_actions(True, True) == 359 and num_actions(False, True) == 547
    eng = VectorEngine(config("classic", players=4), 4)
    eng.reset(0)
    mask = eng.legal_action_mask
    for mm in (False, True):
        la = LearnerActions(mm, True)
        m = la.mask(mask)
        assert m.shape == (4, la.n)
        assert (m[:, la.accuse_id] == mask[:, A.ACCUSE0 :].any(1)).all()
        assert (m[:, : la.accuse_id].sum(1) > 0).all()
    with pytest.raises(ValueError, match="needs belief"):
        LearnerCore(LearnerOptions(2, "classic", macro_accuse=True))
    with pytest.raises(TypeError, match="PolicyAgent"):
        LearnerCore(LearnerOptions(2, "classic", belief=True, opponents=lambda obs, mask: mask.argmax(1)))


@pytest.mark.parametrize("macro_moves", [False, True])
def test_learner_env_with_belief_plays_only_legal_actions(macro_moves):
    """Random legal learner actions for many steps: every mapped action is legal (illegal_action='raise'),
    the macro accusation becomes the engine accusation of the belief's best triple."""
    core = LearnerCore(LearnerOptions(32, "classic", opponents="heuristic", seat="random", macro_moves=macro_moves,
                       belief=True, macro_accuse=True, seed=2))  # fmt: skip
    obs = core.reset(2)
    assert obs.shape == (32, 2628 + 214) and core.n_actions == num_actions(macro_moves, True)
    rng = np.random.default_rng(0)
    accused = 0
    for _ in range(150):
        m = core.action_masks()
        a = sample_legal(m, rng)
        eng_a = core.to_engine(a)
        acc = np.flatnonzero(a == core.actions.accuse_id)
        if len(acc):
            legal = core.eng.legal_action_mask[acc, A.ACCUSE0 :]
            assert (eng_a[acc] == A.ACCUSE0 + core.belief.best_accusations(acc, legal)).all()
            accused += len(acc)
        obs, rew, term, trunc, ended = core.step(a)
        assert obs.shape[1] == core.obs_size
    assert accused > 0
    out = LearnerActions(macro_moves, True).to_engine(np.array([-1, core.n_actions]), core.eng.legal_action_mask[:2])
    assert (out == -1).all()


def test_gymnasium_checkers_with_belief():
    from gymnasium.utils.env_checker import check_env as gym_check

    env = CluedoSingleAgentEnv(preset="classic", players=4, opponents="heuristic", macro_moves=True,
                               belief=True, macro_accuse=True)  # fmt: skip
    gym_check(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2842,) and env.action_masks().shape == (359,)


def test_belief_random_accuses_only_when_solved_and_always_rightly():
    """The ablation player: legal every step (the engine would raise), and every accusation it makes is
    correct, since it accuses only once its notebook is solved."""
    from cluedo_env.agents.play.registry import make_agent

    cfg = config("classic", players=4, max_turns=400)
    B = 16
    eng = VectorEngine(cfg, B)
    eng.reset(4)
    views = [PlayerView(eng, s) for s in range(4)]
    players = [make_agent("belief_random", seed=0)] + [make_agent("heuristic", seed=s) for s in (1, 2, 3)]
    for a, v in zip(players, views, strict=True):
        a.reset(v, np.arange(B))
    made = 0
    while not eng.done.all():
        actions = seat_actions(eng, players, views)
        mine = np.flatnonzero((actions >= A.ACCUSE0) & (eng.actor == 0))
        h = eng.hist_len[mine].astype(int)
        eng.step(actions)
        assert eng.hist_correct[mine, h].all()
        made += len(mine)
    assert made > 0
