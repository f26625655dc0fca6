"""Movement planning around the tokens that block (agents/planning/movement.py ``blocking=True``,
agents/planning/blocking.py).

R-M2: a move's path may not enter or end on a square occupied by a suspect token (all six block).
R-M6: a door whose square in front is occupied is blocked; a token in a room whose doors are all blocked
is trapped. The planner's default (``blocking=False``) takes the board as empty and must not change.
"""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import numpy as np
import pytest
from cluedo_env.agents.planning.movement import (
    _blocking_inputs,
    _kernel_rows,
    blocked_travel_turns,
    blocking_tokens,
    choose_moves,
    empty_board_tables,
    move_scores,
    turn_start_choice,
    turn_tables,
)
from cluedo_env.agents.play.registry import UnknownAgentError, check_player_names, make_agent
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.players.deducer import DeducerAgent
from cluedo_env.agents.players.expert import ExpertAgent
from cluedo_env.agents.players.random_player import RandomAgent
from helpers import BOARD, LegalityChecked, config, position

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.errors import UsageError
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0
from cluedo_env.rules.cards import NUM_ROOMS, room_id

FAR = 10**6


def _engine(*games):
    eng = VectorEngine(games[0].config, len(games))
    for i, g in enumerate(games):
        eng.import_game(i, g.to_dict())
    return eng, PlayerView(eng, 0)


def _value(**rooms):
    v = np.zeros((1, NUM_ROOMS))
    for name, x in rooms.items():
        v[0, room_id(name.replace("_", " "))] = x
    return v


def _square(rc):
    return BOARD.square_of[rc]


# ------------------------------------------------------------------ hand-made positions
# The Dining Room has two doors: one faces (12, 8), the other (16, 6). Plum (nobody's token with four
# players, so it stays put) stands on (12, 8): that door is blocked (R-M6) and the squares next to it
# are far from the room; Scarlet, on (14, 9) with 3 pips to walk, should head for the south door.
def _dining_room_position():
    return position(phase="move", roll=3, suspects={"Scarlet": (14, 9), "Plum": (12, 8)})


def test_a_blocked_door_sends_the_move_to_the_open_one():
    """R-M2, R-M6: with Plum in front of the Dining Room's east door, the square 2 pips from the open south
    door beats the squares next to the blocked one, which the empty board rates as good."""
    eng, view = _engine(_dining_room_position())
    idx = np.array([0])
    v = _value(Dining_Room=1.0)
    action = int(choose_moves(view, idx, v, blocking=True)[0])
    assert action == A.MOVE0 + _square((16, 8))
    scores = move_scores(view, idx, v, blocking=True)[0]
    assert scores[_square((16, 8))] > scores[_square((11, 9))]  # 2 pips from (12, 8) on the empty board
    assert scores[_square((16, 8))] > scores[_square((13, 9))]
    assert np.isneginf(scores[~view.legal_action_mask[0, A.MOVE0 : A.SUGGEST0]]).all()


def test_without_blocking_the_old_choice_is_unchanged():
    """R-M2, R-M6 are ignored by default: the same choice and the same scores as the empty-board planner."""
    eng, view = _engine(_dining_room_position())
    idx = np.array([0])
    v = _value(Dining_Room=1.0)
    old = int(choose_moves(view, idx, v)[0])
    assert old == A.MOVE0 + _square((11, 9))  # 2 pips from the (blocked) east door, lowest id among the best
    assert int(choose_moves(view, idx, v, blocking=False)[0]) == old
    np.testing.assert_array_equal(move_scores(view, idx, v, blocking=False), move_scores(view, idx, v))


def test_rolling_toward_a_blocked_door_loses_to_the_passage():
    """R-M6, R-T2: from the Lounge the Dining Room is 3 pips away through its south door; with Plum on the
    square in front of that door the way round is long, and the passage to the Conservatory (worth half as
    much) wins. On the empty board rolling wins."""
    g = position(phase="start", suspects={"Scarlet": "Lounge", "Plum": (16, 6)})
    eng, view = _engine(g)
    idx = np.array([0])
    v = _value(Dining_Room=1.0, Conservatory=0.5)
    assert turn_start_choice(view, idx, v)[0] == A.ROLL
    assert turn_start_choice(view, idx, v, blocking=False)[0] == A.ROLL
    assert turn_start_choice(view, idx, v, blocking=True)[0] == A.PASSAGE


def test_no_token_on_a_square_gives_the_empty_board_tables():
    """R-M2 only concerns squares: tokens in rooms block nothing, so the tables are the empty board's exactly."""
    rooms = {"Mustard": "Kitchen", "White": "Hall", "Green": "Study", "Peacock": "Lounge", "Plum": "Library"}
    eng, view = _engine(position(phase="move", roll=5, suspects={"Scarlet": (14, 9), **rooms}))
    idx = np.array([0])
    for v in (_value(Dining_Room=1.0), np.linspace(0.1, 0.9, 9)[None]):
        np.testing.assert_array_equal(move_scores(view, idx, v, blocking=True), move_scores(view, idx, v))
    locs = np.arange(NUM_LOCATIONS)
    for dice in (1, 2):  # the kernel itself, with nothing to go round
        S, S_roll = _kernel_rows(blocking_tokens(view, idx), np.zeros(NUM_LOCATIONS, np.int64), locs, dice)
        np.testing.assert_array_equal(S, empty_board_tables(dice)[0])
        np.testing.assert_array_equal(S_roll, empty_board_tables(dice)[1])


# ------------------------------------------------------------------ the kernel against a plain search
def _reference_distances(blocked: set[int]) -> np.ndarray:
    """(197, 9) fewest pips from each location to each room around ``blocked`` squares, FAR if none (R-M1..R-M6):
    a breadth-first search from the location over free squares (from a room: through its open doors, one
    pip), to the square in front of an open door of the room. Occupied squares themselves: FAR."""
    out = np.full((NUM_LOCATIONS, NUM_ROOMS), FAR, np.int64)
    for src in range(NUM_LOCATIONS):
        if src in blocked:
            continue
        d: dict[int, int] = {}
        if src >= ROOM_LOC0:
            d = {f: 1 for f in BOARD.room_fronts[src - ROOM_LOC0] if f not in blocked}
        else:
            d = {src: 0}
        queue = deque(d)
        while queue:
            s = queue.popleft()
            for nb in BOARD.neighbors[s]:
                if nb not in blocked and nb not in d:
                    d[nb] = d[s] + 1
                    queue.append(nb)
        for r in range(NUM_ROOMS):
            reach = [d[f] for f in BOARD.room_fronts[r] if f in d]
            out[src, r] = min(reach, default=FAR)
    return out


@pytest.mark.parametrize("dice", [1, 2])
def test_kernel_matches_a_plain_search_on_random_placements(dice):
    """R-M2, R-M6: per game, the kernel's tables equal :func:`turn_tables` of a plain breadth-first search's
    distances (unreachable: T = inf; a trapped room cannot be re-entered by walking out and back)."""
    rng = np.random.default_rng(dice)
    n, seat = 24, 1
    pos = rng.integers(0, NUM_LOCATIONS, (n, 6))
    pos[: n // 2] = rng.integers(0, NUM_SQUARES, (n // 2, 6))  # crowded boards: every token on a square
    pos[1] = [188, 189, 190, 191, 192, 193]  # nothing on a square
    pos[2] = [*BOARD.starts[:5], 194]  # only on the start squares, dead ends
    pos[0, :] = [BOARD.room_fronts[0][0], 3, BOARD.room_fronts[6][0], 40, 150, 60]  # Kitchen and Lounge trapped
    view = SimpleNamespace(pos=pos, seat=seat, num_players=4, config=SimpleNamespace(dice=dice))
    rows = np.repeat(np.arange(n), NUM_LOCATIONS)
    locs = np.tile(np.arange(NUM_LOCATIONS), n)
    S, S_roll = _kernel_rows(blocking_tokens(view, np.arange(n)), rows, locs, dice)
    S_b, S_roll_b = blocked_travel_turns(view, np.arange(n), rows, locs)  # the same where anybody can move
    T = _blocking_inputs(dice)[-1]
    for g in range(n):
        blocked = {int(p) for t, p in enumerate(pos[g]) if t != seat and p < NUM_SQUARES}
        dist = np.minimum(_reference_distances(blocked), len(T) - 1)
        trapped = np.array([all(f in blocked for f in BOARD.room_fronts[r]) for r in range(NUM_ROOMS)])
        S_ref, S_roll_ref = turn_tables(dist, T, np.where(trapped, np.inf, 2.0))
        block = slice(g * NUM_LOCATIONS, (g + 1) * NUM_LOCATIONS)
        np.testing.assert_array_equal(S[block], S_ref)
        np.testing.assert_array_equal(S_roll[block], S_roll_ref)
        free = np.ones(NUM_LOCATIONS, bool)
        free[list(blocked)] = False
        np.testing.assert_array_equal(S_b[block][free], S_ref[free])
        np.testing.assert_array_equal(S_roll_b[block][free], S_roll_ref[free])
    assert np.isinf(S[:NUM_LOCATIONS][ROOM_LOC0 + 6]).sum() >= 1  # the trapped Lounge: no walking route out


def test_only_other_tokens_block():
    """R-M2: the mover's own token is never an obstacle; ``persistent`` keeps only tokens that will not move
    before the mover's next turn (nobody's suspects, eliminated players')."""
    pos = np.array([[10, 20, 30, 40, 50, 196]])
    view = SimpleNamespace(pos=pos, seat=2, num_players=4, eliminated=np.array([[False, True, False, False]]))
    np.testing.assert_array_equal(blocking_tokens(view, np.array([0])), [[10, 20, -1, 40, 50, 196]])
    np.testing.assert_array_equal(blocking_tokens(view, np.array([0]), persistent=True), [[-1, 20, -1, -1, 50, 196]])


# ------------------------------------------------------------------ the players
@pytest.mark.parametrize("preset", ["classic", "seed000"])
def test_blocking_aware_players_always_choose_legal_actions(preset):
    """R-M2, R-M6 are the engine's: whatever the planner believes, every action is in the legal mask."""
    cfg = config(preset, players=4, max_turns=300)
    agents = [
        LegalityChecked(DeducerAgent(seed=0, blocking_aware=True)),
        LegalityChecked(ExpertAgent(seed=1, blocking_aware=True)),
        RandomAgent(2),
        LegalityChecked(DeducerAgent(seed=3, blocking_aware=True)),
    ]
    records = play_games(cfg, agents, 32, batch_size=32, seed=11)
    assert len(records) == 32
    assert all(a.inner.fallbacks == 0 for a in agents if isinstance(a, LegalityChecked))


def test_players_take_the_option_by_name():
    """``NAME{JSON}`` passes constructor options (agents/play/registry.py), so a variant plays by name."""
    expert = make_agent('expert{"blocking_aware": true}', seed=3)
    assert isinstance(expert, ExpertAgent) and expert.blocking_aware and expert.seed == 3
    deducer = make_agent('deducer{"blocking_aware": false}', seed=0)
    assert type(deducer) is DeducerAgent and not deducer.blocking_aware
    check_player_names(['expert{"blocking_aware": false}', "deducer"])
    for bad in ("expert{blocking_aware}", 'expert["blocking_aware"]', 'nobody{"x": 1}'):
        with pytest.raises(UsageError):
            check_player_names([bad])
    with pytest.raises(UnknownAgentError):
        make_agent("expert{not json}")
