"""The OpenSpiel game ``python_cluedo`` (cluedo_env.openspiel): chance nodes, privacy, resampling, OpenSpiel's checks.

Kept to seconds: short games (small ``max_turns``) and few simulations.
"""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import cluedo_env.openspiel  # noqa: E402, F401 - registers python_cluedo
from cluedo_env.openspiel.core import dice_outcomes  # noqa: E402
from cluedo_env.openspiel.resample import consistent, knowledge  # noqa: E402
from cluedo_env.rules import actions as A  # noqa: E402
from cluedo_env.rules.cards import ROOM_CARD0, WEAPON_CARD0  # noqa: E402
from cluedo_env.rules.config import ConfigError  # noqa: E402


def load(**params):
    return pyspiel.load_game("python_cluedo", params)


def deal(game, envelope, deck, rooms=()):
    state = game.new_initial_state()
    for outcome in [*envelope, *deck, *rooms]:
        assert state.is_chance_node()
        state.apply_action(outcome)
    return state


def play_random(state, rng, steps, accuse=0.02):
    """Random play that rarely accuses, so games run long; stops after ``steps`` actions or at the end."""
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        legal = state.legal_actions()
        calm = [a for a in legal if a < A.ACCUSE0]
        state.apply_action(int(rng.choice(calm if calm and rng.random() > accuse else legal)))
    return state


def test_parameters_and_bad_input():
    game = load(preset="seed000", players=3, max_turns=50)
    cfg = game.config
    assert (cfg.dice, cfg.refutation, cfg.accusation_in_room, cfg.max_turns) == (2, "all", True, 50)
    assert load(preset="classic", accusation_in_room="true").config.accusation_in_room is True
    assert game.num_distinct_actions() == A.NUM_ACTIONS and game.max_chance_outcomes() == 21
    with pytest.raises(ConfigError, match="accuse_after_suggestion"):
        load(accuse_after_suggestion="yes")
    with pytest.raises(ConfigError, match="players"):
        load(preset="cards", players=2)  # R-C1: 3 to 6
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter"):
        load(colour="red")


def test_chance_nodes_deal_and_dice():
    """R-S4 envelope per category, R-S5 card by card clockwise, R-S3 six different rooms, R-D1 true dice odds."""
    game = load(preset="classic", players=4, dice=2)
    state = game.new_initial_state()
    assert [o for o, _ in state.chance_outcomes()] == list(range(WEAPON_CARD0))
    envelope = (2, WEAPON_CARD0 + 1, ROOM_CARD0 + 4)
    deck = [c for c in range(21) if c not in envelope]
    random.Random(3).shuffle(deck)
    for c in envelope:
        state.apply_action(c)
    left = state.chance_outcomes()
    assert len(left) == 18 and abs(sum(p for _, p in left) - 1) < 1e-12
    for c in deck:
        state.apply_action(c)
    for r in (3, 0, 8, 5, 1):
        state.apply_action(r)
    assert [o for o, _ in state.chance_outcomes()] == [2, 4, 6, 7]
    with pytest.raises(A.IllegalActionError):
        state.apply_action(3)  # R-S3: a room already taken
    state.apply_action(7)
    g = state._core.game
    assert g.envelope == envelope and g.weapon_room == [3, 0, 8, 5, 1, 7]
    assert g.hands == [sorted(deck[s::4]) for s in range(4)]
    assert state.current_player() == 0
    state.apply_action(A.ROLL)
    assert state.is_chance_node()
    two = dict(state.chance_outcomes())
    assert two == dict(dice_outcomes(2)) and two[7] == pytest.approx(6 / 36) and two[2] == pytest.approx(1 / 36)
    assert dict(dice_outcomes(1)) == {k: pytest.approx(1 / 6) for k in range(1, 7)}
    state.apply_action(9)
    assert g.roll == 9


@pytest.mark.parametrize("params", [dict(preset="cards", players=3, max_turns=30),
                                    dict(preset="classic", players=3, max_turns=20),
                                    dict(preset="seed000", players=4, max_turns=20)])  # fmt: skip
def test_openspiel_random_sim_test(params):
    pyspiel.random_sim_test(load(**params), num_sims=2, serialize=True, verbose=False)


def test_clone_serialize_and_pickle_are_plain_replays():
    game = load(preset="classic", players=4, max_turns=40)
    state = play_random(game.new_initial_state(), np.random.default_rng(1), 150)
    clone = state.clone()
    assert clone.history() == state.history() and str(clone) == str(state)
    play_random(clone, np.random.default_rng(2), 20)
    assert clone.history() != state.history() and len(state.history()) == len(state._core.actions())
    back = game.deserialize_state(state.serialize())
    assert back.history() == state.history() and back._core.game.to_dict() == state._core.game.to_dict()
    data = state._core.__getstate__()
    assert set(data) == {"config", "actions"} and all(type(a) is int for a in data["actions"])
    again = pickle.loads(pickle.dumps(state._core))
    assert again.game.to_dict() == state._core.game.to_dict() and again.log == state._core.log
    assert copy.deepcopy(state._core).game.to_dict() == state._core.game.to_dict()
    with pytest.raises(ValueError, match="first line"):
        game.deserialize_state("cos\nsystem\n")
    with pytest.raises(ValueError, match="not an action"):
        game.deserialize_state("python_cluedo actions\n3; rm")


def _views(state, seat):
    return (state.information_state_string(seat), tuple(state.information_state_tensor(seat)),
            state.observation_string(seat), tuple(state.observation_tensor(seat)))  # fmt: skip


def test_leak_other_hands_do_not_change_a_seats_views():
    """R-G7: swapping cards between two other seats' hands changes nothing seat 0 sees; those seats see it."""
    game = load(preset="cards", players=3, max_turns=20)
    envelope = (0, WEAPON_CARD0, ROOM_CARD0)
    deck = [c for c in range(21) if c not in envelope]
    swapped = list(deck)
    swapped[1], swapped[2] = swapped[2], swapped[1]  # positions 1 and 2: seats 1 and 2
    a, b = deal(game, envelope, deck), deal(game, envelope, swapped)
    assert a._core.game.hands[1] != b._core.game.hands[1]
    assert _views(a, 0) == _views(b, 0)
    assert _views(a, 1) != _views(b, 1) and _views(a, 2) != _views(b, 2)


def test_leak_cards_shown_to_others_stay_hidden():
    """R-G6, R-G7: which card seat 2 shows seat 1 is seen by those two only."""
    game = load(preset="cards", players=3, max_turns=20)
    envelope = (0, WEAPON_CARD0 + 1, ROOM_CARD0)
    # seat 2 holds the deck's cards 2, 5, 8, ...: suspect 3 and weapon card 8; seat 0 none of 3, 8, 13
    deck = [1, 2, 3, 4, 5, 8, 6, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20]
    hands = [sorted(deck[s::3]) for s in range(3)]
    assert {3, 8} <= set(hands[2]) and not {3, 8, 13} & set(hands[0])
    suggest = A.SUGGEST0 + A.triple_index(3, 8 - WEAPON_CARD0, 13 - ROOM_CARD0)
    worlds = []
    for shown in (3, 8):
        state = deal(game, envelope, deck)
        state.apply_action(A.SUGGEST0 + A.triple_index(1, 1, 1))  # seat 0 suggests first (R-C2)
        state.apply_action(state.legal_actions()[0] if state.current_player() != 0 else A.END_TURN)
        while state.current_player() != 1:
            state.apply_action(A.END_TURN if A.END_TURN in state.legal_actions() else state.legal_actions()[0])
        state.apply_action(suggest)  # seat 0 passes (holds no named card), seat 2 must show
        assert state.current_player() == 2 and set(state.legal_actions()) == {A.SHOW0 + 3, A.SHOW0 + 8}
        state.apply_action(A.SHOW0 + shown)
        worlds.append(state)
    assert _views(worlds[0], 0) == _views(worlds[1], 0)
    assert "p2 SHOW(?)" in worlds[0].information_state_string(0)
    for seat in (1, 2):
        assert worlds[0].information_state_string(seat) != worlds[1].information_state_string(seat)
        assert worlds[0].observation_tensor(seat) != worlds[1].observation_tensor(seat)


@pytest.mark.parametrize("preset", ["cards", "classic", "seed000"])
def test_resample_is_consistent_with_the_information_state(preset):
    """Every resampled world has the same information state for the seat, and a deal that agrees with it."""
    game = load(preset=preset, players=4, max_turns=60)
    rng = np.random.default_rng(5)
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    checked = changed = 0
    for g in range(6):
        state = play_random(game.new_initial_state(), rng, 40 + 30 * g)
        if state.is_terminal() or state.is_chance_node():
            continue
        for seat in range(4):
            world = state.resample_from_infostate(seat, sampler)
            assert world.information_state_string(seat) == state.information_state_string(seat)
            assert world.information_state_tensor(seat) == state.information_state_tensor(seat)
            if seat == state.current_player():  # the actor's options follow from what it knows
                assert world.legal_actions() == state.legal_actions()
            wg = world._core.game
            assert consistent(knowledge(state._core, seat), wg.envelope, wg.hands)
            assert wg.hands[seat] == state._core.game.hands[seat]
            changed += wg.hands != state._core.game.hands
            checked += 1
    assert checked >= 8 and changed >= checked // 2  # the hidden cards really are redrawn


def test_play_through_openspiel_equals_the_vector_engine():
    """The differential test: the vector engine deals and rolls with its own RNG and picks random legal actions;
    the OpenSpiel state gets the same deal, dice totals and actions and ends in the same snapshot."""
    from cluedo_env.engine.reference import Game
    from cluedo_env.engine.vector_engine import VectorEngine

    for preset, players in (("classic", 4), ("cards", 3), ("seed000", 3)):
        game = load(preset=preset, players=players, max_turns=40)
        eng = VectorEngine(game.config, 1, threads=1)
        rng = np.random.default_rng(11)
        for seed in range(3):
            eng.reset(seed)
            dealt = Game.from_dict(eng.export_game(0))
            deck = [dealt.hands[k % players][k // players] for k in range(18)]
            state = deal(game, dealt.envelope, deck, dealt.weapon_room)
            assert state._core.game.to_dict() == eng.export_game(0)
            while not eng.done[0]:
                action = int(eng.sample_random_actions(rng)[0])
                assert state.current_player() == int(eng.actor[0])
                eng.step(np.array([action]))
                state.apply_action(action)
                if action == A.ROLL:
                    state.apply_action(int(eng.last_roll[0]))
                assert state._core.game.to_dict() == eng.export_game(0)
            assert state.is_terminal() and state.returns() == [float(r) for r in eng.rewards[0]]


def test_ismcts_runs_on_the_game():
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(preset="cards", players=3, max_turns=30)
    state = play_random(game.new_initial_state(), np.random.default_rng(3), 40)
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, max_simulations=30, random_state=rs)
    action = bot.step(state)
    assert action in state.legal_actions()
