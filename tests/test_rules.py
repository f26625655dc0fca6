"""One or more scenario tests for every rule ID of shared/RULES.md, against the reference engine.

Each test is named after the rule it checks (``test_R_M4_...``). Positions are built from
snapshots (tests/helpers.py); expected values are worked out by hand from shared/BOARD.md,
and the comment next to each says how.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from helpers import (
    BOARD,
    ENVELOPE,
    HANDS4,
    accuse,
    config,
    dests,
    dests_after_roll,
    kinds,
    loc,
    move,
    position,
    show,
    suggest,
    where,
)

from cluedo_env.engine.history import Accusation, Suggestion
from cluedo_env.engine.reference import Game
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import (
    CARD_NAMES,
    NUM_CARDS,
    PLAYING_CARD_NAMES,
    ROOM_CARD0,
    ROOMS,
    SUSPECTS,
    WEAPON_CARD0,
    WEAPONS,
    card_id,
)
from cluedo_env.rules.config import ConfigError, RulesConfig

STARTS = {
    "Scarlet": (24, 7),
    "Mustard": (17, 0),
    "White": (0, 9),
    "Green": (0, 14),
    "Peacock": (6, 23),
    "Plum": (19, 23),
}
ALL_ACCUSATIONS = 324  # R-A1: any suspect, weapon and room
ROOM_TRIPLES = 36  # suspect x weapon with the room fixed (R-G1, R-A1 variant)


def deal4(cfg=None, **kw) -> Game:
    """``position`` with the fixed four-player deal HANDS4 / ENVELOPE (Plum, Wrench, Study)."""
    return position(cfg, hands=HANDS4, envelope=ENVELOPE, **kw)


# =====================================================================================
# S. Setup
# =====================================================================================
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_R_S1_seats_and_scarlet_moves_first(players):
    g = Game(config(players=players), seed=3)
    assert g.num_players == players
    assert len(g.hands) == players and len(g.eliminated) == players
    assert g.current == 0 and g.actor == 0  # Scarlet always moves first
    assert g.phase == A.START


def test_R_S1_player_counts():
    assert RulesConfig().players == 4
    for players in (2, 3, 4, 5, 6):
        assert RulesConfig.from_preset("classic", players=players).players == players
    for players in (0, 1, 7):
        with pytest.raises(ConfigError, match=f"players={players}"):
            RulesConfig.from_preset("classic", players=players)


def test_R_S1_player_p_controls_suspect_p():
    # White (seat 2) on her start (0,9): the only neighbour is (1,9).
    g = position(current=2)
    g.step(A.ROLL, roll=1)
    assert dests(g) == {(1, 9)}
    g.step(move((1, 9)))
    assert where(g, "White") == (1, 9)
    assert where(g, "Scarlet") == STARTS["Scarlet"]


@pytest.mark.parametrize("players", [2, 4, 6])
def test_R_S2_all_six_tokens_on_start_squares(players):
    g = Game(config(players=players), seed=11)
    d = g.to_dict()
    assert d["suspects"] == {s: list(rc) for s, rc in STARTS.items()}
    assert [BOARD.squares[p] for p in g.pos] == list(STARTS.values())


def test_R_S2_unplayed_tokens_block_and_can_be_summoned():
    # Two players: Plum is nobody's token but still blocks (R-M2) and can be summoned (R-G3).
    g = position(config(players=2), suspects={"Plum": (23, 7)})
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}  # Scarlet is walled in
    g = position(config(players=2), suspects={"Scarlet": "Hall"}, phase="suggest")
    g.step(suggest("Plum", "Rope", "Hall"))
    assert where(g, "Plum") == "Hall"


def test_R_S3_weapons_in_six_different_rooms():
    layouts = set()
    for seed in range(200):
        g = Game(config(), seed=seed)
        assert len(g.weapon_room) == 6
        assert len(set(g.weapon_room)) == 6, g.weapon_room
        assert all(0 <= r < 9 for r in g.weapon_room)
        layouts.add(tuple(g.weapon_room))
    assert len(layouts) > 150  # placed at random, not a fixed layout


def test_R_S4_envelope_one_of_each_kind_unseen():
    seen = [set(), set(), set()]
    for seed in range(300):
        g = Game(config(), seed=seed)
        s, w, r = g.envelope
        assert 0 <= s < WEAPON_CARD0 <= w < ROOM_CARD0 <= r < NUM_CARDS
        held = {c for hand in g.hands for c in hand}
        assert not held & {s, w, r}
        for i, c in enumerate((s, w, r)):
            seen[i].add(c)
    assert seen == [set(range(6)), set(range(6, 12)), set(range(12, 21))]  # each card can be drawn


@pytest.mark.parametrize(
    "preset,players,sizes",
    [
        ("classic", 2, [9, 9]),
        ("classic", 3, [6, 6, 6]),
        ("classic", 4, [5, 5, 4, 4]),
        ("classic", 5, [4, 4, 4, 3, 3]),
        ("classic", 6, [3, 3, 3, 3, 3, 3]),
        ("cards", 4, [5, 5, 4, 4]),
        ("seed000", 5, [4, 4, 4, 3, 3]),
    ],
)
def test_R_S5_deal_starts_at_seat_0_sizes_differ_by_one(preset, players, sizes):
    # Dealt one at a time from seat 0: the first 18 % P seats get the extra card.
    for seed in range(20):
        g = Game(config(preset, players=players), seed=seed)
        assert [len(h) for h in g.hands] == sizes
        cards = sorted(c for hand in g.hands for c in hand)
        assert cards == sorted(set(range(NUM_CARDS)) - set(g.envelope))


def test_R_S5_deal_is_shuffled():
    deals = {tuple(map(tuple, Game(config(), seed=seed).hands)) for seed in range(50)}
    assert len(deals) == 50


def test_R_S6_own_hand_known_and_fixed():
    g = Game(config(), seed=5)
    hands = [list(h) for h in g.hands]
    assert all(h == sorted(h) for h in hands)  # the order of a hand carries no information
    assert g.to_dict()["hands"] == [[CARD_NAMES[c] for c in h] for h in hands]
    rng = random.Random(5)
    for _ in range(300):
        if g.is_over:
            break
        legal = [a for a in g.legal_actions() if a < A.ACCUSE0] or g.legal_actions()
        g.step(rng.choice(legal))
        assert g.hands == hands


# =====================================================================================
# T. Turn structure
# =====================================================================================
def test_R_T1_roll_then_move():
    g = position()
    assert kinds(g) == {"ROLL": 1, "ACCUSE": ALL_ACCUSATIONS}
    g.step(A.ROLL, roll=4)
    assert g.phase == A.MOVE and g.roll == 4 and g.to_dict()["roll"] == 4
    assert set(kinds(g)) == {"MOVE"}  # after rolling, the player must move


def test_R_T1_roll_from_rng_in_range():
    rolls = set()
    for seed in range(60):
        g = Game(config(), seed=seed)
        g.step(A.ROLL)
        rolls.add(g.roll)
    assert rolls == {1, 2, 3, 4, 5, 6}


def test_R_T1_roll_closed_when_trapped():
    # Scarlet's start (24,7) has one neighbour, (23,7).
    g = position(suspects={"Mustard": (23, 7)})
    assert "ROLL" not in kinds(g)
    with pytest.raises(A.IllegalActionError):
        g.step(A.ROLL, roll=3)


@pytest.mark.parametrize(
    "start,target", [("Study", "Kitchen"), ("Kitchen", "Study"), ("Lounge", "Conservatory"), ("Conservatory", "Lounge")]
)
def test_R_T2_passage_from_corner_room(start, target):
    g = position(suspects={"Scarlet": start})
    assert kinds(g) == {"ROLL": 1, "PASSAGE": 1, "ACCUSE": ALL_ACCUSATIONS}
    g.step(A.PASSAGE)
    assert where(g, "Scarlet") == target
    assert g.phase == A.SUGGEST and g.roll == 0  # counts as entering: suggest there (R-G2)
    assert {a - A.SUGGEST0 for a in g.legal_actions()} == {
        A.triple_index(s, w, ROOMS.index(target)) for s in range(6) for w in range(6)
    }


def test_R_T2_no_passage_outside_corner_rooms():
    for place in ("Hall", "Ballroom", "Dining Room", "Billiard Room", "Library", (18, 6), (20, 17)):
        g = position(suspects={"Scarlet": place})
        assert "PASSAGE" not in kinds(g), place


def test_R_T2_passage_only_at_turn_start():
    # Scarlet walks into the Lounge from the square in front of its door: no passage later that turn.
    g = position(suspects={"Scarlet": (18, 6)})
    g.step(A.ROLL, roll=5)
    g.step(move("Lounge"))
    assert "PASSAGE" not in kinds(g)  # suggest phase: suggestions only
    g.step(suggest("Plum", "Rope", "Lounge"))
    while g.phase == A.REFUTE:
        g.step(g.legal_actions()[0])
    assert g.phase == A.POST and g.current == 0
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}
    with pytest.raises(A.IllegalActionError):
        g.step(A.PASSAGE)


def test_R_T2_passage_usable_when_doors_blocked():
    g = position(suspects={"Scarlet": "Lounge", "Mustard": (18, 6)})
    assert kinds(g) == {"PASSAGE": 1, "ACCUSE": ALL_ACCUSATIONS}  # trapped: no ROLL, but no END_TURN either


def test_R_T3_dragged_token_may_stay_and_suggest_on_its_next_turn_only():
    # Scarlet (seat 0) in the Hall suggests Mustard: Mustard is dragged from (17,0) into the Hall.
    g = deal4(suspects={"Scarlet": "Hall"}, phase="suggest")
    g.step(suggest("Mustard", "Rope", "Hall"))
    assert where(g, "Mustard") == "Hall" and g.dragged == [False, True, False, False]
    while g.phase == A.REFUTE:
        g.step(g.legal_actions()[0])
    g.step(A.END_TURN)
    assert g.current == 1
    assert kinds(g) == {"ROLL": 1, "STAY": 1, "ACCUSE": ALL_ACCUSATIONS}
    g.step(A.STAY)
    assert g.phase == A.SUGGEST and where(g, "Mustard") == "Hall"
    g.step(suggest("Scarlet", "Dagger", "Hall"))  # refuted at once by White (Hall)
    assert g.phase == A.REFUTE and g.actor == 2
    g.step(show("Hall"))
    g.step(A.END_TURN)
    assert g.dragged == [False, False, False, False]  # the flag is gone after that turn
    for _ in range(3):  # White, Green, Scarlet roll 1 and stop
        p = g.current
        g.step(A.ROLL, roll=1)
        g.step(g.legal_actions()[0] if p != 0 else move((17, 11)))
        g.step(A.END_TURN)
    assert g.current == 1 and where(g, "Mustard") == "Hall"
    assert kinds(g) == {"ROLL": 1, "ACCUSE": ALL_ACCUSATIONS}  # no second suggestion without leaving


def test_R_T3_flag_lapses_if_not_used():
    g = deal4(suspects={"Scarlet": "Hall"}, phase="suggest")
    g.step(suggest("Mustard", "Rope", "Hall"))
    while g.phase == A.REFUTE:
        g.step(g.legal_actions()[0])
    g.step(A.END_TURN)
    g.step(A.ROLL, roll=1)  # Mustard leaves instead of staying
    g.step(move((17, 11)))
    g.step(A.END_TURN)
    assert g.dragged[1] is False


def test_R_T3_not_opened_when_already_in_the_room():
    g = deal4(suspects={"Scarlet": "Hall", "Mustard": "Hall"}, phase="suggest")
    g.step(suggest("Mustard", "Rope", "Hall"))
    assert g.dragged == [False, False, False, False]  # nothing moved: nothing to transfer
    while g.phase == A.REFUTE:
        g.step(g.legal_actions()[0])
    g.step(A.END_TURN)
    assert g.current == 1 and "STAY" not in kinds(g)


def test_R_T3_no_stay_for_a_token_that_entered_itself():
    g = position(suspects={"Scarlet": "Hall"})
    assert kinds(g) == {"ROLL": 1, "ACCUSE": ALL_ACCUSATIONS}
    with pytest.raises(A.IllegalActionError):
        g.step(A.STAY)


def test_R_T4_accuse_at_turn_start():
    g = deal4()
    legal = g.legal_actions()
    assert [a for a in legal if a >= A.ACCUSE0] == list(range(A.ACCUSE0, A.NUM_ACTIONS))
    g.step(accuse("Plum", "Wrench", "Study"))  # without moving, from a start square
    assert g.is_over and g.winner == 0 and where(g, "Scarlet") == STARTS["Scarlet"]


def test_R_T5_end_turn_only_when_locked_in_a_room():
    # Dining Room doors (12,8) and (16,6) both blocked; no passage; not dragged.
    g = position(suspects={"Scarlet": "Dining Room", "Mustard": (12, 8), "White": (16, 6)})
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}
    g.step(A.END_TURN)
    assert where(g, "Scarlet") == "Dining Room"
    assert g.current == 1 and g.phase == A.START and g.turn_count == 1
    assert g.history == []  # no suggestion was made


def test_R_T5_end_turn_when_walled_in_on_a_square():
    # (17,10) has two neighbours only, (17,9) and (17,11) (staircase above, Hall below).
    g = position(suspects={"Scarlet": (17, 10), "Mustard": (17, 9), "White": (17, 11)})
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}


def test_R_T5_no_end_turn_when_another_option_is_open():
    g = position()
    assert "END_TURN" not in kinds(g)
    g = position(suspects={"Scarlet": "Dining Room", "Mustard": (12, 8), "White": (16, 6)}, dragged=[0])
    assert kinds(g) == {"STAY": 1, "ACCUSE": ALL_ACCUSATIONS}  # locked in but dragged: may suggest
    g = position(suspects={"Scarlet": "Study", "Mustard": (20, 17)})
    assert kinds(g) == {"PASSAGE": 1, "ACCUSE": ALL_ACCUSATIONS}  # locked in a corner room
    with pytest.raises(A.IllegalActionError):
        g.step(A.END_TURN)


# =====================================================================================
# D. Dice
# =====================================================================================
def test_R_D1_one_die_classic():
    rolls = []
    for seed in range(200):
        g = Game(config(), seed=seed)
        g.step(A.ROLL)
        rolls.append(g.roll)
    assert set(rolls) == set(range(1, 7))


def test_R_D1_two_dice_variant():
    rolls = []
    for seed in range(400):
        g = Game(config("seed000"), seed=seed)
        g.step(A.ROLL)
        rolls.append(g.roll)
    assert set(rolls) == set(range(2, 13))
    assert rolls.count(7) > rolls.count(2) + rolls.count(12)  # a sum of two dice, not uniform


@pytest.mark.parametrize("preset,bad,good", [("classic", (0, 7), (1, 6)), ("seed000", (1, 13), (2, 12))])
def test_R_D1_forced_roll_out_of_range_raises(preset, bad, good):
    for roll in bad:
        g = Game(config(preset), seed=0)
        before = g.to_dict()
        with pytest.raises(ValueError, match=f"forced roll {roll}"):
            g.step(A.ROLL, roll=roll)
        assert g.to_dict() == before
    for roll in good:
        g = Game(config(preset), seed=0)
        g.step(A.ROLL, roll=roll)
        assert g.roll == roll


# =====================================================================================
# M. Movement
# =====================================================================================
def test_R_M1_orthogonal_steps_over_walkable_squares():
    # (20,16): neighbours (19,16), (21,16), (20,15) (Hall's door square) and (20,17) (Study's).
    g = position(suspects={"Scarlet": (20, 16)})
    assert dests_after_roll(g, 1) == {(19, 16), (21, 16), (20, 15), (20, 17), "Hall", "Study"}
    # Diagonal (19,17) / (21,15) are two pips away, never one.
    assert (19, 17) in dests_after_roll(g, 2) and (21, 15) in dests_after_roll(g, 2)


def test_R_M1_start_square_one_neighbour():
    g = position()
    assert dests_after_roll(g, 1) == {(23, 7)}


def test_R_M2_no_square_twice_so_never_back_to_start():
    # (7,6) is a corner of the 2x2 corridor block (6,6),(6,7),(7,6),(7,7): a 4-step loop exists.
    g = position(suspects={"Scarlet": (7, 6)})
    got = dests_after_roll(g, 4)
    assert (7, 6) not in got
    assert {"Kitchen", "Ballroom"} <= got  # fronts (7,4) and (5,7) are 2 pips away


def test_R_M2_tokens_block_paths_and_squares():
    # Study -> Hall is 3 pips through (20,17),(20,16),(20,15). With (20,16) taken the way round is
    # (20,17),(19,17),(19,16),(19,15),(20,15): 5 pips.
    free = position(suspects={"Scarlet": "Study"})
    blocked = position(suspects={"Scarlet": "Study", "Mustard": (20, 16)})
    assert "Hall" in dests_after_roll(free, 3)
    assert "Hall" not in dests_after_roll(blocked, 3)
    assert "Hall" not in dests_after_roll(blocked, 4)
    assert "Hall" in dests_after_roll(blocked, 5)
    assert (20, 16) in dests_after_roll(free, 2)
    assert (20, 16) not in dests_after_roll(blocked, 2)  # never ends on an occupied square


def test_R_M2_eliminated_and_unplayed_tokens_block():
    g = position(suspects={"Mustard": (23, 7)}, eliminated=[1])
    assert "ROLL" not in kinds(g)
    g = position(config(players=3), suspects={"Green": (23, 7)})  # Green is nobody's token
    assert "ROLL" not in kinds(g)


def test_R_M3_exact_pips_on_corridor():
    # From (24,7): 1 pip -> (23,7); 2 pips -> (22,7) or (23,8), never back onto (23,7).
    g = position()
    assert dests_after_roll(g, 1) == {(23, 7)}
    assert dests_after_roll(g, 2) == {(22, 7), (23, 8)}
    assert dests_after_roll(g, 3) == {(21, 7), (22, 8)}


def test_R_M3_exact_pips_from_a_room():
    # Study: the first pip lands on (20,17); the second on one of its three walkable neighbours.
    g = position(suspects={"Scarlet": "Study"})
    assert dests_after_roll(g, 1) == {(20, 17)}
    assert dests_after_roll(g, 2) == {(19, 17), (20, 16), (20, 18)}
    # Squares are reached with an exact count: (20,15) is 3 pips away, 5 by a detour, never 4.
    assert (20, 15) in dests_after_roll(g, 3)
    assert (20, 15) not in dests_after_roll(g, 4)
    assert (20, 15) in dests_after_roll(g, 5)


def test_R_M4_room_entered_with_at_most_pips():
    # Study to Hall needs 3 pips (BOARD.md); any larger roll also gets in.
    g = position(suspects={"Scarlet": "Study"})
    for roll in (1, 2):
        assert "Hall" not in dests_after_roll(g, roll)
    for roll in (3, 4, 5, 6):
        assert "Hall" in dests_after_roll(g, roll)
    assert dests_after_roll(g, 3) == {(18, 17), (19, 16), (19, 18), (20, 15), (20, 19), (21, 16), "Hall"}


def test_R_M4_enter_after_last_pip_lands_on_door_square():
    g = position(suspects={"Scarlet": (20, 16)})
    assert {"Hall", "Study"} <= dests_after_roll(g, 1)


@pytest.mark.parametrize("roll", [1, 2, 3, 4, 5, 6])
def test_R_M4_token_on_door_square_enters_with_any_roll(roll):
    g = position(suspects={"Scarlet": (20, 15)})
    assert "Hall" in dests_after_roll(g, roll)


def test_R_M4_entering_ends_the_move():
    g = position(suspects={"Scarlet": (20, 15)})
    g.step(A.ROLL, roll=6)
    g.step(move("Hall"))
    assert where(g, "Scarlet") == "Hall" and g.phase == A.SUGGEST


def test_R_M4_rooms_are_not_passed_through():
    # Through the Hall, (17,11) would be 4 pips from the Study; round the Hall it is 10.
    assert BOARD.distance[loc("Study"), loc((17, 11))] == 10
    g = position(suspects={"Scarlet": "Study"})
    for roll in (4, 5, 6):
        assert not {(17, 11), (17, 12)} & dests_after_roll(g, roll)


def test_R_M4_door_cells_and_touching_squares_are_not_doors():
    for cell in [(19, 6), (4, 18), (21, 17), (6, 4), (12, 7)]:
        assert cell not in BOARD.square_of  # lowercase door cells are room cells
    # (19,7) touches the Lounge door cell, (4,17) a Conservatory cell, (21,16) the Study door cell.
    assert dests_after_roll(position(suspects={"Scarlet": (19, 7)}), 1) == {(18, 7), (20, 7), (19, 8)}
    assert dests_after_roll(position(suspects={"Scarlet": (4, 17)}), 1) == {(3, 17), (5, 17), (4, 16)}
    assert dests_after_roll(position(suspects={"Scarlet": (21, 16)}), 1) == {(20, 16), (21, 15), (22, 16)}
    assert "Conservatory" in dests_after_roll(position(suspects={"Scarlet": (4, 17)}), 2)  # via (5,18)


def test_R_M5_leaving_costs_a_pip_and_no_reentry():
    # Hall: doors onto (17,11), (17,12), (20,15). One pip: exactly those three, never the Hall.
    g = position(suspects={"Scarlet": "Hall"})
    assert dests_after_roll(g, 1) == {(17, 11), (17, 12), (20, 15)}
    for roll in range(1, 7):
        assert "Hall" not in dests_after_roll(g, roll)
    # Leaving by (17,11) then stepping onto (17,12), the other Hall door square, does not re-enter.
    assert (17, 12) in dests_after_roll(g, 2)


def test_R_M6_blocked_door():
    g = position(suspects={"Scarlet": "Hall", "Mustard": (17, 11)})
    assert dests_after_roll(g, 1) == {(17, 12), (20, 15)}
    # Study's only door square (20,17) taken: no way in from (19,17), whatever the roll.
    g = position(suspects={"Scarlet": (19, 17), "Mustard": (20, 17)})
    for roll in range(1, 7):
        assert "Study" not in dests_after_roll(g, roll)
    g = position(suspects={"Scarlet": (19, 17)})
    assert "Study" in dests_after_roll(g, 1)


def test_R_M6_trapped_in_room():
    g = position(suspects={"Scarlet": "Billiard Room", "Mustard": (9, 17), "White": (13, 22)})
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}
    g = position(suspects={"Scarlet": "Billiard Room", "Mustard": (9, 17)})  # one door still free
    assert kinds(g) == {"ROLL": 1, "ACCUSE": ALL_ACCUSATIONS}
    assert dests_after_roll(g, 1) == {(13, 22)}


def test_R_M7_rooms_have_no_capacity():
    others = {s: "Hall" for s in SUSPECTS[1:]}
    g = position(config(players=6), suspects={**others, "Scarlet": (17, 11)}, weapons={w: "Hall" for w in WEAPONS})
    g.step(A.ROLL, roll=2)
    assert "Hall" in dests(g)
    g.step(move("Hall"))
    assert all(where(g, s) == "Hall" for s in SUSPECTS)
    assert g.weapon_room == [ROOMS.index("Hall")] * 6


def test_R_M8_no_destination_forfeits_the_move():
    # (24,7) -> (23,7) free, but both its onward squares (22,7) and (23,8) are taken.
    g = deal4(suspects={"Mustard": (22, 7), "White": (23, 8)})
    assert "ROLL" in kinds(g)
    g.step(A.ROLL, roll=2)
    assert g.phase == A.POST and g.roll == 2 and where(g, "Scarlet") == STARTS["Scarlet"]
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}  # no suggestion; may accuse
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.winner == 0
    g = deal4(suspects={"Mustard": (22, 7), "White": (23, 8)})
    g.step(A.ROLL, roll=1)
    assert dests(g) == {(23, 7)}  # an odd roll still has its square


def test_R_M9_staircase_not_walkable():
    x_cells = [(r, c) for r, line in enumerate(BOARD.grid) for c, ch in enumerate(line) if ch == "X"]
    assert len(x_cells) == 35
    assert not set(x_cells) & set(BOARD.square_of)
    g = position(suspects={"Scarlet": (12, 9)})  # next to the staircase (12,10)
    assert dests_after_roll(g, 1) == {(11, 9), (13, 9), (12, 8), "Dining Room"}  # (12,8): Dining door


# =====================================================================================
# G. Suggestions
# =====================================================================================
def test_R_G1_suggestion_names_the_room_the_token_is_in():
    g = position(suspects={"Scarlet": "Library"}, phase="suggest")
    legal = g.legal_actions()
    assert len(legal) == ROOM_TRIPLES
    assert {A.triple_of(a - A.SUGGEST0)[2] for a in legal} == {ROOMS.index("Library")}
    with pytest.raises(A.IllegalActionError):
        g.step(suggest("Plum", "Rope", "Hall"))


def test_R_G1_no_suggestion_outside_a_room():
    g = position()
    g.step(A.ROLL, roll=1)
    g.step(move((23, 7)))
    assert g.phase == A.POST and "SUGGEST" not in kinds(g)


def test_R_G2_entering_obliges_a_suggestion():
    g = position(suspects={"Scarlet": (20, 15)})
    g.step(A.ROLL, roll=3)
    g.step(move("Hall"))
    assert kinds(g) == {"SUGGEST": ROOM_TRIPLES}  # no END_TURN, no accusation first
    for action in (A.END_TURN, accuse("Plum", "Rope", "Hall")):
        with pytest.raises(A.IllegalActionError):
            g.step(action)


def test_R_G2_optional_suggestion_variant():
    cfg = config(suggestion_on_entry="optional")
    g = position(cfg, suspects={"Scarlet": (20, 15)})
    g.step(A.ROLL, roll=3)
    g.step(move("Hall"))
    assert kinds(g) == {"END_TURN": 1, "SUGGEST": ROOM_TRIPLES, "ACCUSE": ALL_ACCUSATIONS}
    g.step(A.END_TURN)  # declined: the right lapses at the end of the turn
    assert g.current == 1 and g.history == []
    for _ in (1, 2, 3):
        g.step(A.ROLL, roll=1)
        g.step(g.legal_actions()[0])
        g.step(A.END_TURN)
    assert g.current == 0 and where(g, "Scarlet") == "Hall"
    assert kinds(g) == {"ROLL": 1, "ACCUSE": ALL_ACCUSATIONS}


def test_R_G2_optional_suggestion_seed000():
    g = position(config("seed000"), suspects={"Scarlet": (20, 15)})
    g.step(A.ROLL, roll=7)
    g.step(move("Hall"))
    # optional suggestion, and the accusation must name the Hall (accusation_in_room)
    assert kinds(g) == {"END_TURN": 1, "SUGGEST": ROOM_TRIPLES, "ACCUSE": ROOM_TRIPLES}


def test_R_G3_suspect_and_weapon_moved_into_the_room():
    g = deal4(suspects={"Scarlet": "Hall"}, weapons={"Rope": "Kitchen", "Dagger": "Hall"}, phase="suggest")
    g.step(suggest("Green", "Rope", "Hall"))
    assert where(g, "Green") == "Hall" and g.weapon_room[WEAPONS.index("Rope")] == ROOMS.index("Hall")
    assert g.weapon_room[WEAPONS.index("Dagger")] == ROOMS.index("Hall")  # the other weapon stays too
    assert g.dragged == [False, False, False, True]
    d = g.to_dict()
    assert d["suspects"]["Green"] == "Hall" and d["weapons"]["Rope"] == "Hall"
    # They stay there afterwards: nothing moves them back when the turn ends.
    while g.phase == A.REFUTE:
        g.step(g.legal_actions()[0])
    g.step(A.END_TURN)
    assert where(g, "Green") == "Hall" and g.weapon_room[WEAPONS.index("Rope")] == ROOMS.index("Hall")


def test_R_G3_weapon_already_there_and_unplayed_suspect():
    g = deal4(suspects={"Scarlet": "Hall"}, weapons={"Rope": "Hall"}, phase="suggest")
    weapons = list(g.weapon_room)
    g.step(suggest("Plum", "Rope", "Hall"))  # Plum is nobody's token in a 4-player game
    assert g.weapon_room == weapons
    assert where(g, "Plum") == "Hall" and g.dragged == [False] * 4


def test_R_G4_own_cards_and_own_character_may_be_named():
    # Scarlet holds Scarlet, Candlestick and Kitchen: nobody else can refute.
    g = deal4(suspects={"Scarlet": "Kitchen"}, phase="suggest")
    g.step(suggest("Scarlet", "Candlestick", "Kitchen"))
    assert where(g, "Scarlet") == "Kitchen"
    rec = g.history[-1]
    assert rec.passed == [1, 2, 3] and rec.refuted_by == [] and g.phase == A.POST


def test_R_G5_one_suggestion_per_entry_and_turn():
    g = deal4(suspects={"Scarlet": "Hall"}, phase="suggest")
    g.step(suggest("Green", "Rope", "Hall"))
    g.step(show("Hall"))  # Mustard has none of them; White shows the Hall
    assert "SUGGEST" not in kinds(g)  # no second suggestion this turn
    with pytest.raises(A.IllegalActionError):
        g.step(suggest("White", "Rope", "Hall"))


def test_R_G5_no_second_suggestion_without_leaving():
    # In the Hall at turn start after suggesting there last turn: roll (to leave) or accuse only.
    g = deal4(suspects={"Scarlet": "Hall"})
    assert kinds(g) == {"ROLL": 1, "ACCUSE": ALL_ACCUSATIONS}
    g.step(A.ROLL, roll=6)
    assert "Hall" not in dests(g)


def test_R_G6_refutation_starts_at_left_and_stops_at_first():
    # Scarlet suggests Green, Dagger, Hall: Mustard (Dagger), White (Hall), Green (Green) could all
    # refute; Mustard, on her left, is asked first and is the only one asked.
    g = deal4(suspects={"Scarlet": "Hall"}, phase="suggest")
    g.step(suggest("Green", "Dagger", "Hall"))
    assert g.phase == A.REFUTE and g.actor == 1 and g.current == 0
    assert g.legal_actions() == [show("Dagger")]
    g.step(show("Dagger"))
    rec = g.history[-1]
    assert (rec.passed, rec.refuted_by, rec.shown) == ([], [1], [card_id("Dagger")])
    assert g.phase == A.POST and g.actor == 0


def test_R_G6_refutation_wraps_round_and_records_passes():
    # White (seat 2) in the Study suggests Scarlet, Dagger, Study: Green (3) has none, then Scarlet (0).
    g = deal4(suspects={"White": "Study"}, phase="suggest", current=2)
    g.step(suggest("Scarlet", "Dagger", "Study"))
    assert g.actor == 0 and g.legal_actions() == [show("Scarlet")]
    g.step(show("Scarlet"))
    rec = g.history[-1]
    assert (rec.suggester, rec.passed, rec.refuted_by) == (2, [3], [0])
    assert g.current == 2 and g.phase == A.POST


def test_R_G6_never_reaches_the_suggester():
    # Mustard holds Mustard, Dagger and Billiard Room; nobody else holds any of them.
    g = deal4(suspects={"Mustard": "Billiard Room"}, phase="suggest", current=1)
    g.step(suggest("Mustard", "Dagger", "Billiard Room"))
    rec = g.history[-1]
    assert rec.passed == [2, 3, 0] and rec.refuted_by == [] and g.phase == A.POST and g.actor == 1


def test_R_G6_unrefuted_suggestion():
    g = deal4(suspects={"Scarlet": "Study"}, phase="suggest")
    g.step(suggest("Plum", "Wrench", "Study"))  # the envelope: nobody holds any
    rec = g.history[-1]
    assert rec.passed == [1, 2, 3] and rec.refuted_by == [] and rec.shown == []
    assert g.phase == A.POST


def test_R_G6_refuter_chooses_among_matching_cards_only():
    # Mustard suggests White, Lead Pipe, Hall: White (seat 2, next after Mustard) holds all three.
    g = deal4(suspects={"Mustard": "Hall"}, phase="suggest", current=1)
    g.step(suggest("White", "Lead Pipe", "Hall"))
    assert g.actor == 2 and g.current == 1
    assert g.legal_actions() == sorted([show("White"), show("Lead Pipe"), show("Hall")])
    before = g.to_dict()
    with pytest.raises(A.IllegalActionError):
        g.step(show("Lounge"))  # White's card, but not named
    with pytest.raises(A.IllegalActionError):
        g.step(show("Scarlet"))  # not White's card
    assert g.to_dict() == before
    g.step(show("Lead Pipe"))
    assert g.history[-1].shown == [card_id("Lead Pipe")] and g.history[-1].refuted_by == [2]


def test_R_G6_eliminated_player_still_refutes():
    g = deal4(suspects={"Scarlet": "Hall"}, phase="suggest", eliminated=[1])
    g.step(suggest("Green", "Dagger", "Hall"))
    assert g.actor == 1 and g.legal_actions() == [show("Dagger")]


def test_R_G6_refutation_all_variant():
    g = deal4(config(refutation="all"), suspects={"Scarlet": "Hall"}, phase="suggest")
    g.step(suggest("Green", "Dagger", "Hall"))
    assert g.actor == 1
    g.step(show("Dagger"))
    assert g.actor == 2 and g.legal_actions() == [show("Hall")]
    g.step(show("Hall"))
    assert g.actor == 3 and g.legal_actions() == [show("Green")]
    g.step(show("Green"))
    rec = g.history[-1]
    assert rec.refuted_by == [1, 2, 3] and rec.passed == []
    assert rec.shown == [card_id(c) for c in ("Dagger", "Hall", "Green")]
    assert g.phase == A.POST and g.actor == 0


def test_R_G6_refutation_all_with_a_pass_in_between():
    # Scarlet in the Study suggests Mustard, Revolver, Study: Mustard yes, White no, Green yes.
    g = deal4(config(refutation="all"), suspects={"Scarlet": "Study"}, phase="suggest")
    g.step(suggest("Mustard", "Revolver", "Study"))
    g.step(show("Mustard"))
    assert g.actor == 3
    g.step(show("Revolver"))
    rec = g.history[-1]
    assert (rec.refuted_by, rec.passed) == ([1, 3], [2])


def test_R_G7_public_record_of_a_suggestion():
    g = deal4(suspects={"Scarlet": "Study"}, phase="suggest")
    g.step(suggest("Mustard", "Revolver", "Study"))
    g.step(show("Mustard"))
    assert g.history == [Suggestion(0, 1, WEAPONS.index("Revolver"), ROOMS.index("Study"), [], [1], [1])]
    assert g.to_dict()["history"] == [
        {
            "type": "suggestion",
            "player": 0,
            "cards": ["Mustard", "Revolver", "Study"],
            "passed": [],
            "refuted_by": [1],
            "shown": ["Mustard"],
        }
    ]


def test_R_G7_public_record_of_an_accusation():
    g = deal4()
    g.step(accuse("Green", "Rope", "Hall"))
    assert g.to_dict()["history"] == [
        {"type": "accusation", "player": 0, "cards": ["Green", "Rope", "Hall"], "correct": False}
    ]


def test_R_G8_accuse_after_suggestion_same_turn():
    # Unrefuted suggestion, then the accusation in the same turn.
    g = deal4(suspects={"Scarlet": "Study"}, phase="suggest")
    g.step(suggest("Plum", "Wrench", "Study"))
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.is_over and g.winner == 0 and g.rewards == [1.0, -1.0, -1.0, -1.0]


def test_R_G8_end_turn_after_suggestion():
    g = deal4(suspects={"Scarlet": "Study"}, phase="suggest")
    g.step(suggest("Plum", "Wrench", "Study"))
    g.step(A.END_TURN)
    assert g.current == 1 and g.phase == A.START and g.turn_count == 1


def test_R_G8_variant_turn_ends_with_the_suggestion():
    cfg = config(accuse_after_suggestion=False)
    g = deal4(cfg, suspects={"Scarlet": "Study"}, phase="suggest")
    # accusation possible in place of the suggestion
    assert kinds(g) == {"SUGGEST": ROOM_TRIPLES, "ACCUSE": ALL_ACCUSATIONS}
    g.step(suggest("Plum", "Wrench", "Study"))  # unrefuted
    assert g.current == 1 and g.phase == A.START and g.turn_count == 1
    g = deal4(cfg, suspects={"Scarlet": "Study"}, phase="suggest")
    g.step(suggest("Mustard", "Wrench", "Study"))
    g.step(show("Mustard"))  # refuted: the turn ends with the refutation too
    assert g.current == 1 and g.phase == A.START
    g = deal4(cfg, suspects={"Scarlet": "Study"}, phase="suggest")
    g.step(accuse("Plum", "Wrench", "Study"))  # in place of the suggestion
    assert g.winner == 0


# =====================================================================================
# A. Accusations
# =====================================================================================
def test_R_A1_accuse_after_a_move():
    g = deal4()
    g.step(A.ROLL, roll=1)
    g.step(move((23, 7)))
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}


def test_R_A1_accusation_in_room_variant():
    cfg = config(accusation_in_room=True)
    g = deal4(cfg)
    assert kinds(g) == {"ROLL": 1}  # not in a room: no accusation
    g.step(A.ROLL, roll=1)
    g.step(move((23, 7)))
    assert g.current == 1 and g.phase == A.START  # nothing left to decide: the turn ends
    g = deal4(cfg, suspects={"Scarlet": "Hall"})
    assert kinds(g) == {"ROLL": 1, "ACCUSE": ROOM_TRIPLES}
    assert {A.triple_of(a - A.ACCUSE0)[2] for a in g.legal_actions() if a >= A.ACCUSE0} == {ROOMS.index("Hall")}
    with pytest.raises(A.IllegalActionError):
        g.step(accuse("Plum", "Wrench", "Study"))
    g = deal4(cfg, suspects={"Scarlet": "Study"})
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.winner == 0


def test_R_A2_accusation_is_announced_and_checked():
    g = deal4()
    g.step(accuse("Plum", "Wrench", "Hall"))
    assert g.history == [Accusation(0, 5, WEAPONS.index("Wrench"), ROOMS.index("Hall"), False)]
    g = deal4()
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.history == [Accusation(0, 5, WEAPONS.index("Wrench"), ROOMS.index("Study"), True)]


def test_R_A3_correct_accusation_wins_and_ends():
    g = deal4(current=2)
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.is_over and g.terminated and not g.truncated and g.winner == 2
    assert g.legal_actions() == [] and g.actor == -1
    with pytest.raises(A.IllegalActionError):
        g.step(A.ROLL)


@pytest.mark.parametrize("wrong", [("Green", "Wrench", "Study"), ("Plum", "Rope", "Study"), ("Plum", "Wrench", "Hall")])
def test_R_A4_wrong_accusation_eliminates(wrong):
    g = deal4(current=1)
    g.step(accuse(*wrong))
    assert g.eliminated == [False, True, False, False] and not g.is_over
    assert g.current == 2 and g.phase == A.START and g.turn_count == 1  # the accusation ended the turn


def test_R_A4_eliminated_player_skipped_but_still_refutes_and_can_be_moved():
    g = deal4(current=1)
    g.step(accuse("Green", "Rope", "Hall"))
    seen = []
    for _ in range(6):  # two rounds of ROLL 1 / END_TURN
        seen.append(g.current)
        g.step(A.ROLL, roll=1)
        g.step(g.legal_actions()[0])
        if g.phase == A.POST:
            g.step(A.END_TURN)
    assert seen == [2, 3, 0, 2, 3, 0]
    # Scarlet in the Hall names Mustard: the eliminated Mustard is dragged in and refutes (Dagger).
    g = deal4(suspects={"Scarlet": "Hall"}, phase="suggest", eliminated=[1])
    g.step(suggest("Mustard", "Dagger", "Hall"))
    assert where(g, "Mustard") == "Hall"
    assert g.actor == 1 and g.legal_actions() == sorted([show("Mustard"), show("Dagger")])


def test_R_A5_eliminated_token_on_door_square_moved_into_room():
    g = deal4(suspects={"Scarlet": (17, 11)})
    g.step(accuse("Green", "Rope", "Hall"))
    assert where(g, "Scarlet") == "Hall"
    g = deal4(suspects={"Scarlet": (5, 18)})  # Conservatory door square
    g.step(accuse("Green", "Rope", "Hall"))
    assert where(g, "Scarlet") == "Conservatory"


def test_R_A5_eliminated_token_elsewhere_stays_and_blocks():
    # (17,10) is no door square: Scarlet's token stays there and still blocks Mustard at (17,9),
    # whose neighbours are (16,9), (17,8) and (17,10).
    g = deal4(suspects={"Scarlet": (17, 10), "Mustard": (17, 9)})
    g.step(accuse("Green", "Rope", "Hall"))
    assert where(g, "Scarlet") == (17, 10) and g.current == 1
    assert dests_after_roll(g, 1) == {(16, 9), (17, 8)}


def test_R_A5_door_square_freed():
    # Mustard blocks the only Study door; eliminated there, it is moved into the Study.
    g = deal4(suspects={"Scarlet": "Study", "Mustard": (20, 17)}, current=1)
    assert kinds(position(suspects={"Scarlet": "Study", "Mustard": (20, 17)})) == {"PASSAGE": 1, "ACCUSE": 324}
    g.step(accuse("Green", "Rope", "Hall"))
    assert where(g, "Mustard") == "Study"
    for _ in range(2):  # White and Green take quick turns
        g.step(A.ROLL, roll=1)
        g.step(g.legal_actions()[0])
        g.step(A.END_TURN)
    assert g.current == 0 and kinds(g) == {"ROLL": 1, "PASSAGE": 1, "ACCUSE": ALL_ACCUSATIONS}
    assert dests_after_roll(g, 1) == {(20, 17)}


def test_R_A6_one_accusation_per_player():
    g = deal4(current=0)
    g.step(accuse("Green", "Rope", "Hall"))
    for _ in range(12):  # Scarlet never acts again, so never accuses again
        assert g.actor != 0
        g.step(A.ROLL, roll=1)
        g.step(g.legal_actions()[0])
        if g.phase == A.POST:
            g.step(A.END_TURN)
    assert sum(isinstance(h, Accusation) and h.accuser == 0 for h in g.history) == 1


# =====================================================================================
# E. End of the game
# =====================================================================================
def test_R_E1_correct_accusation_rewards():
    g = deal4(current=3)
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.rewards == [-1.0, -1.0, -1.0, 1.0] and g.winner == 3
    d = g.to_dict()
    assert d["winner"] == 3 and d["terminated"] is True and d["phase"] == "over"


def test_R_E2_last_standing_wins():
    g = position(config(players=2), envelope=ENVELOPE)
    g.step(accuse("Green", "Rope", "Hall"))
    assert g.is_over and g.winner == 1 and g.rewards == [-1.0, 1.0] and g.terminated
    g = position(config(players=3), envelope=ENVELOPE)
    g.step(accuse("Green", "Rope", "Hall"))
    assert not g.is_over and g.current == 1
    g.step(accuse("Green", "Rope", "Hall"))
    assert g.is_over and g.winner == 2 and g.rewards == [-1.0, -1.0, 1.0]


def test_R_E2_last_standing_plays_on():
    g = position(config(players=2, last_standing="plays_on"), envelope=ENVELOPE)
    g.step(accuse("Green", "Rope", "Hall"))
    assert not g.is_over and g.current == 1 and g.phase == A.START
    g.step(A.ROLL, roll=1)
    g.step(move((17, 1)))
    g.step(A.END_TURN)
    assert g.current == 1  # the last player keeps taking turns
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.winner == 1 and g.rewards == [-1.0, 1.0]


def test_R_E2_seed000_plays_on():
    g = position(config("seed000", players=3), envelope=ENVELOPE, suspects={s: "Hall" for s in SUSPECTS[:3]})
    g.step(accuse("Green", "Rope", "Hall"))
    g.step(accuse("Green", "Rope", "Hall"))
    assert not g.is_over and g.current == 2


def test_R_E3_truncation_after_max_turns():
    g = position(config(max_turns=3))
    for p, sq in ((0, (23, 7)), (1, (17, 1)), (2, (1, 9))):
        assert g.current == p and not g.is_over
        g.step(A.ROLL, roll=1)
        g.step(move(sq))
        g.step(A.END_TURN)
    assert g.is_over and g.truncated and not g.terminated
    assert g.winner == -1 and g.rewards == [0.0, 0.0, 0.0, 0.0] and g.legal_actions() == []
    assert g.to_dict()["winner"] is None and g.turn_count == 3


def test_R_E3_accusation_turns_count():
    g = position(config(max_turns=2), envelope=ENVELOPE)
    g.step(accuse("Green", "Rope", "Hall"))
    assert not g.is_over
    g.step(accuse("Green", "Rope", "Hall"))
    assert g.truncated and g.rewards == [0.0] * 4


def test_R_E4_all_eliminated_no_winner():
    g = position(config(players=2, last_standing="plays_on"), envelope=ENVELOPE)
    g.step(accuse("Green", "Rope", "Hall"))
    g.step(accuse("Green", "Rope", "Hall"))
    assert g.is_over and g.terminated and not g.truncated
    assert g.winner == -1 and g.rewards == [-1.0, -1.0]


def test_R_E4_cards_variant_all_eliminated():
    g = position(config("cards", players=3), envelope=ENVELOPE)
    for p in range(3):
        assert g.current == p
        g.step(suggest("Plum", "Wrench", "Study"))
        g.step(accuse("Green", "Rope", "Hall"))
    assert g.is_over and g.rewards == [-1.0, -1.0, -1.0] and g.winner == -1


# =====================================================================================
# C. Card-only variant
# =====================================================================================
def test_R_C1_no_board_tokens_or_dice():
    g = Game(config("cards"), seed=1)
    assert g.pos == [] and g.weapon_room == []
    d = g.to_dict()
    assert d["suspects"] is None and d["weapons"] is None
    assert g.phase == A.SUGGEST
    assert kinds(g) == {"SUGGEST": 324}
    with pytest.raises(A.IllegalActionError):
        g.step(A.ROLL)


@pytest.mark.parametrize("players,sizes", [(3, [6, 6, 6]), (4, [5, 5, 4, 4]), (5, [4, 4, 4, 3, 3]), (6, [3] * 6)])
def test_R_C1_three_to_six_players_dealt_evenly(players, sizes):
    g = Game(config("cards", players=players), seed=2)
    assert [len(h) for h in g.hands] == sizes


def test_R_C1_two_players_rejected():
    with pytest.raises(ConfigError, match="3 to 6"):
        config("cards", players=2)
    with pytest.raises(ConfigError, match="3 to 6"):
        config(board="none", players=2)


def test_R_C2_any_triple_and_refutation_from_the_left():
    g = position(config("cards"), hands=HANDS4, envelope=ENVELOPE, current=2, phase="suggest")
    # White may name any room, e.g. the Kitchen, from nowhere; Green (3) passes, Scarlet (0) refutes.
    g.step(suggest("Peacock", "Candlestick", "Kitchen"))
    assert g.actor == 3 and g.legal_actions() == [show("Peacock")]
    g.step(show("Peacock"))
    assert g.history[-1].refuted_by == [3] and g.history[-1].passed == []
    g = position(config("cards"), hands=HANDS4, envelope=ENVELOPE, current=2, phase="suggest")
    g.step(suggest("Plum", "Candlestick", "Kitchen"))
    assert g.actor == 0 and g.legal_actions() == sorted([show("Candlestick"), show("Kitchen")])
    g.step(show("Kitchen"))
    assert g.history[-1].passed == [3] and g.history[-1].refuted_by == [0]


def test_R_C3_accuse_or_end_turn_then_plays_on():
    g = position(config("cards"), hands=HANDS4, envelope=ENVELOPE)
    g.step(suggest("Plum", "Wrench", "Study"))  # unrefuted
    assert kinds(g) == {"END_TURN": 1, "ACCUSE": ALL_ACCUSATIONS}
    g.step(A.END_TURN)
    assert g.current == 1 and g.phase == A.SUGGEST
    g.step(suggest("Plum", "Wrench", "Study"))
    g.step(accuse("Plum", "Rope", "Study"))  # wrong: eliminated, the game goes on
    assert g.eliminated == [False, True, False, False] and g.current == 2
    # three wrong accusations leave one player, who keeps playing (plays_on)
    g.step(suggest("Plum", "Wrench", "Study"))
    g.step(accuse("Plum", "Rope", "Study"))
    g.step(suggest("Plum", "Wrench", "Study"))
    g.step(accuse("Plum", "Rope", "Study"))
    assert not g.is_over and g.current == 0
    g.step(suggest("Plum", "Wrench", "Study"))
    g.step(A.END_TURN)
    assert g.current == 0 and not g.is_over
    g.step(suggest("Green", "Wrench", "Study"))
    g.step(show("Green"))  # eliminated Green still refutes
    g.step(accuse("Plum", "Wrench", "Study"))
    assert g.winner == 0 and g.rewards == [1.0, -1.0, -1.0, -1.0]


def test_R_C3_truncation():
    g = Game(config("cards", max_turns=2), seed=0)
    for _ in range(2):
        g.step(g.legal_actions()[0])
        while g.phase == A.REFUTE:
            g.step(g.legal_actions()[0])
        g.step(A.END_TURN)
    assert g.truncated and g.rewards == [0.0] * 4


def test_R_C4_playing_card_names():
    assert len(PLAYING_CARD_NAMES) == NUM_CARDS == len(set(PLAYING_CARD_NAMES))
    suspects = PLAYING_CARD_NAMES[:6]
    assert sorted(suspects) == sorted(f"{r} of {s}" for s in ("spades", "clubs") for r in ("Jack", "Queen", "King"))
    assert list(PLAYING_CARD_NAMES[6:12]) == ["Ace of spades"] + [f"{n} of spades" for n in range(2, 7)]
    assert list(PLAYING_CARD_NAMES[12:21]) == ["Ace of diamonds"] + [f"{n} of diamonds" for n in range(2, 10)]
    assert CARD_NAMES[0] == "Scarlet" and PLAYING_CARD_NAMES[0] == "Jack of spades"


def _shared_rules() -> Path | None:
    """shared/RULES.md beside the checkout (the source of truth), if this machine has it."""
    here = Path(__file__).resolve().parents
    found = [p / "shared" / "RULES.md" for p in here[1:3] if (p / "shared" / "RULES.md").exists()]
    return found[0] if found else None


DOCS_RULES = Path(__file__).resolve().parents[1] / "docs" / "RULES.md"


def test_docs_copy_of_rules_is_current():
    """docs/RULES.md is the users' copy of shared/RULES.md; it must not drift."""
    shared = _shared_rules()
    if shared is None:
        pytest.skip("shared/RULES.md is not next to the checkout")
    assert DOCS_RULES.read_text() == shared.read_text(), "copy shared/RULES.md to docs/RULES.md"


def test_rule_ids_all_covered():
    """Every rule ID in RULES.md has at least one test here named after it."""
    rules = _shared_rules() or DOCS_RULES
    ids = sorted(set(re.findall(r"\*\*R-([A-Z])(\d+)\*\*", rules.read_text())))
    names = [n for n in globals() if n.startswith("test_R_")]
    missing = [f"R-{a}{b}" for a, b in ids if not any(n.startswith(f"test_R_{a}{b}_") for n in names)]
    assert ids and missing == []
