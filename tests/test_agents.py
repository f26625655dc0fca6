"""Rule-based players (random, heuristic), movement planning and the player registry.

Legality is checked by the engine itself: ``VectorEngine.step`` raises IllegalActionError on
any illegal action, so a run that completes proves every action was legal; the heuristic
also counts the illegal choices it had to replace (``fallbacks``), which must stay 0.
"""

from __future__ import annotations

import inspect

import cluedo_env.agents.planning.movement as planning_module
import cluedo_env.agents.players.heuristic as heuristic_module
import numpy as np
import pytest
from cluedo_env.agents.planning.movement import (
    choose_moves,
    move_scores,
    travel_turns,
    turn_start_choice,
    turns_to_enter,
)
from cluedo_env.agents.play.registry import (
    UnknownAgentError,
    available_agents,
    make_agent,
    register_agent,
    register_prefix,
)
from cluedo_env.agents.play.runner import play_games, seat_actions
from cluedo_env.agents.players.base import Agent
from cluedo_env.agents.players.heuristic import HeuristicAgent
from cluedo_env.agents.players.random_player import RandomAgent
from helpers import BOARD, config, position, swap_hidden

from cluedo_env.engine.reference import Game
from cluedo_env.engine.state import ACCUSATION
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import HIDDEN, PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import ROOM_LOC0
from cluedo_env.rules.cards import CARD_NAMES, KITCHEN, ROOMS, STUDY, room_id
from cluedo_env.rules.config import RulesConfig

ALL_CONFIGS = (
    [("classic", p, {}) for p in range(2, 7)]
    + [("seed000", p, {}) for p in range(3, 7)]
    + [("cards", p, {}) for p in range(3, 7)]
    + [
        ("classic", 4, {"suggestion_on_entry": "optional"}),
        ("classic", 4, {"refutation": "all"}),
        ("classic", 4, {"accuse_after_suggestion": False}),
        ("classic", 4, {"accusation_in_room": True}),
        ("classic", 3, {"accusation_in_room": True, "suggestion_on_entry": "optional", "dice": 2}),
        ("cards", 4, {"refutation": "all", "accuse_after_suggestion": False}),
    ]
)


def _ids(case):
    preset, players, flags = case
    return f"{preset}:{players}" + "".join(f",{k}={v}" for k, v in flags.items())


# ==================================================================== legality, every preset
@pytest.mark.parametrize("case", ALL_CONFIGS, ids=[_ids(c) for c in ALL_CONFIGS])
def test_random_and_heuristic_always_legal_and_games_end(case):
    preset, players, flags = case
    cfg = config(preset, players=players, **flags)
    # All heuristic: long games through every phase; then heuristic and random mixed: random
    # players get eliminated early, so eliminated refuters and last players are exercised.
    lineups = [["h"] * players, ["h" if s % 2 else "r" for s in range(players)]]
    for k, lineup in enumerate(lineups):
        agents = [HeuristicAgent(seed=10 * k + s) if c == "h" else RandomAgent(seed=10 * k + s) for s, c in
                  enumerate(lineup)]  # fmt: skip
        records = play_games(cfg, agents, 48, batch_size=24, seed=k)
        assert len(records) == 48
        assert all(a.fallbacks == 0 for a in agents if isinstance(a, HeuristicAgent))
        if k == 0:  # heuristic players accuse only when certain: every game is won by a right accusation
            assert all(r.ending == "accusation" and r.winner >= 0 for r in records), [r.ending for r in records]


@pytest.mark.parametrize("preset", ["classic", "seed000", "cards"])
def test_random_players_alone_are_always_legal(preset):
    cfg = config(preset, players=5)
    records = play_games(cfg, [RandomAgent(seed=s) for s in range(5)], 300, batch_size=100, seed=1)
    assert len(records) == 300


# ==================================================================== strength
@pytest.mark.parametrize("preset", ["classic", "cards"])
def test_heuristic_clearly_beats_random_players(preset):
    cfg = config(preset, players=4)
    wins = 0
    games = 0
    for rot in range(4):  # the heuristic in every seat
        agents = [RandomAgent(seed=rot * 10 + s) for s in range(4)]
        agents[rot] = HeuristicAgent(seed=rot)
        records = play_games(cfg, agents, 75, batch_size=75, seed=rot)
        wins += sum(r.winner == rot for r in records)
        games += len(records)
    assert games == 300
    assert wins / games > 0.85  # chance is 0.25; measured about 0.99


def test_planning_helps_the_heuristic_against_random_walkers():
    """The same notebook walking at random loses clearly to one that plans its moves."""

    class Walker(HeuristicAgent):
        def act(self, view, idx):
            out = super().act(view, idx)
            phase, mask = view.phase[idx], view.legal_action_mask[idx]
            sel = np.flatnonzero((phase == A.MOVE) | ((phase == A.START) & (out < A.MOVE0)))
            if len(sel):
                m = mask[sel].copy()
                m[:, A.SUGGEST0 :] = False
                m[:, A.END_TURN] &= ~m[:, : A.END_TURN].any(1)
                out[sel] = [np.flatnonzero(row)[self.rng.integers(row.sum())] for row in m]
            return out

    cfg = config("classic", players=4)
    wins = games = 0
    for rot in range(2):
        agents = [Walker(seed=s) if (s + rot) % 2 else HeuristicAgent(seed=s) for s in range(4)]
        records = play_games(cfg, agents, 100, batch_size=100, seed=rot)
        wins += sum(isinstance(agents[r.winner], Walker) is False for r in records)
        games += len(records)
    assert wins / games > 0.7  # measured about 0.9


# ==================================================================== hidden information
def test_heuristic_touches_the_game_only_through_its_player_view():
    for module in (heuristic_module, planning_module):
        source = inspect.getsource(module)
        assert "_eng" not in source and "VectorEngine" not in source and ".owner" not in source


def _decide(cfg, snapshot, seat, seed):
    eng = VectorEngine(cfg, 1)
    eng.import_game(0, snapshot)
    view = PlayerView(eng, seat)
    agent = HeuristicAgent(seed=seed)
    agent.reset(view, np.array([0]))
    action = agent.act(view, np.array([0]))
    return int(action[0]), agent.open[0].copy()


@pytest.mark.parametrize("preset", ["classic", "seed000", "cards"])
def test_heuristic_decisions_do_not_depend_on_hidden_cards(preset):
    """Positions from real games; moving hidden cards between the envelope and another hand
    (consistently with everything public and everything this seat saw) changes nothing."""
    cfg = config(preset, players=4)
    rng = np.random.default_rng(0)
    B = 16
    eng = VectorEngine(cfg, B)
    eng.reset(5)
    views = [PlayerView(eng, s) for s in range(4)]
    agents = [HeuristicAgent(seed=s) for s in range(4)]
    for agent, view in zip(agents, views, strict=True):
        agent.reset(view, np.arange(B))
    checked = differ = 0
    for step in range(400):
        if eng.done.all():
            break
        actor = eng.actor
        if checked < 60:
            for i in np.flatnonzero(actor >= 0)[step % 4 :: 4][:3]:
                seat = int(actor[i])
                snap = eng.export_game(int(i))
                alt = swap_hidden(snap, seat, rng)
                if alt is None:
                    continue
                differ += alt["envelope"] != snap["envelope"]
                a1, open1 = _decide(cfg, snap, seat, seed=step)
                a2, open2 = _decide(cfg, alt, seat, seed=step)
                assert a1 == a2, (step, int(i), A.describe(a1), A.describe(a2))
                assert (open1 == open2).all()
                checked += 1
        actions = np.full(B, -1, np.int64)
        for seat in range(4):
            idx = np.flatnonzero(actor == seat)
            if len(idx):
                actions[idx] = agents[seat].act(views[seat], idx)
        eng.step(actions)
    assert checked >= 40 and differ == checked


# ==================================================================== heuristic scenarios
def _engine(g):
    eng = VectorEngine(g.config, 1)
    eng.import_game(0, g.to_dict())
    return eng


def _act(eng, seat=0, agent=None):
    view = PlayerView(eng, seat)
    agent = agent or HeuristicAgent(seed=0)
    agent.reset(view, np.array([0]))
    return int(agent.act(view, np.array([0]))[0]), agent


def _with_history(g, records):
    d = g.to_dict()
    d["history"] = records
    return Game.from_dict(d, seed=0)


def test_heuristic_accuses_after_an_unrefuted_suggestion_of_open_cards():
    envelope = ["Plum", "Wrench", "Study"]
    g = position(config("cards", players=3), envelope=envelope, phase="post")
    g = _with_history(g, [{"type": "suggestion", "player": 0, "cards": envelope, "passed": [1, 2],
                           "refuted_by": [], "shown": []}])  # fmt: skip
    action, agent = _act(_engine(g))
    assert A.describe(action) == "ACCUSE(Plum, Wrench, Study)"
    # Without the "nobody could refute" rule it only crosses off and ends the turn.
    action, _ = _act(_engine(g), agent=HeuristicAgent(seed=0, use_unrefuted=False))
    assert action == A.END_TURN


def test_heuristic_crosses_off_shown_cards_and_keeps_the_rest_open():
    g = position(config("classic", players=3), envelope=["Plum", "Wrench", "Study"], phase="post",
                 suspects={"Scarlet": "Hall"})  # fmt: skip
    shown_by_1 = next(c for c in g.to_dict()["hands"][1] if CARD_NAMES.index(c) < 6)
    g = _with_history(g, [{"type": "suggestion", "player": 0, "cards": [shown_by_1, "Wrench", "Hall"],
                           "passed": [], "refuted_by": [1], "shown": [shown_by_1]}])  # fmt: skip
    action, agent = _act(_engine(g))
    assert action == A.END_TURN
    hand0 = set(g.to_dict()["hands"][0])
    expected_open = {c for c in CARD_NAMES if c not in hand0 and c != shown_by_1}
    assert {CARD_NAMES[c] for c in np.flatnonzero(agent.open[0])} == expected_open


def test_heuristic_with_accusation_in_room_walks_to_the_solution_room_first():
    cfg = config("seed000", players=3)
    envelope = ["Plum", "Wrench", "Study"]
    hist = [{"type": "suggestion", "player": 0, "cards": envelope, "passed": [1, 2], "refuted_by": [], "shown": []}]
    # Solved (nobody could refute), but in the Kitchen: no accusation possible here (R-A1 variant);
    # the passage leads to the Study.
    g = _with_history(position(cfg, envelope=envelope, phase="start", suspects={"Scarlet": "Kitchen"}), hist)
    action, _ = _act(_engine(g))
    assert action == A.PASSAGE
    g = _with_history(position(cfg, envelope=envelope, phase="start", suspects={"Scarlet": "Study"}), hist)
    action, _ = _act(_engine(g))
    assert A.describe(action) == "ACCUSE(Plum, Wrench, Study)"


def test_heuristic_suggests_the_current_room_with_open_suspect_and_weapon():
    g = position(config("classic", players=4), phase="suggest", suspects={"Scarlet": "Lounge"})
    hand = set(g.to_dict()["hands"][0])
    for seed in range(20):
        action, _ = _act(_engine(g), agent=HeuristicAgent(seed=seed))
        s, w, r = A.triple_of(action - A.SUGGEST0)
        assert A.SUGGEST0 <= action < A.SHOW0 and ROOMS[r] == "Lounge"
        assert CARD_NAMES[s] not in hand and CARD_NAMES[6 + w] not in hand


# ==================================================================== planning
def _planning_engine(*games):
    eng = VectorEngine(games[0].config, len(games))
    for i, g in enumerate(games):
        eng.import_game(i, g.to_dict())
    return eng, PlayerView(eng, 0)


def _value(**rooms):
    v = np.zeros((1, 9))
    for name, x in rooms.items():
        v[0, room_id(name.replace("_", " "))] = x
    return v


def _front(room):
    sq = BOARD.room_fronts[room_id(room)][0]
    return BOARD.squares[sq]


def test_expected_turns_to_enter():
    T = turns_to_enter(1, 12)
    assert T[0] == 1 and T[1] == 1  # on or next to the door square: any roll enters
    assert T[2] == pytest.approx(1 + 1 / 6)  # only a 1 falls short, then one more turn
    assert (np.diff(T) >= 0).all()
    assert turns_to_enter(2, 12)[12] < T[12]  # two dice travel faster
    S = travel_turns(1)
    k, s = ROOM_LOC0 + KITCHEN, STUDY
    assert S[k, s] == 1.0  # the secret passage: one turn
    assert S[k, KITCHEN] == 2.0  # re-entering the room one is in


def test_a_valuable_room_now_beats_every_square():
    g = position(phase="move", roll=4, suspects={"Scarlet": _front("Lounge")})
    eng, view = _planning_engine(g)
    assert view.legal_action_mask[0, A.MOVE0 + ROOM_LOC0 + room_id("Lounge")]
    action = choose_moves(view, np.array([0]), _value(Lounge=1.0))
    assert A.describe(int(action[0])) == "MOVE(Lounge)"
    # All rooms equally valuable: still a room entered now (the Lounge or the Dining Room, 4 pips away).
    action = int(choose_moves(view, np.array([0]), np.ones((1, 9)))[0])
    assert A.describe(action) in ("MOVE(Lounge)", "MOVE(Dining Room)")


def test_squares_lead_toward_the_valuable_room():
    g = position(phase="move", roll=5, suspects={"Scarlet": _front("Lounge")})
    eng, view = _planning_engine(g)
    for target in ("Billiard Room", "Kitchen", "Dining Room"):
        value = np.zeros((1, 9))
        value[0, room_id(target)] = 1.0
        action = int(choose_moves(view, np.array([0]), value)[0])
        dest = action - A.MOVE0
        legal = np.flatnonzero(view.legal_action_mask[0, A.MOVE0 : A.SUGGEST0])
        assert dest in legal
        if ROOM_LOC0 + room_id(target) in legal:  # reachable now: go in
            assert dest == ROOM_LOC0 + room_id(target)
            continue
        S = travel_turns(1)[:, room_id(target)]
        assert S[dest] == S[legal].min()  # the destination closest in expected turns
        assert S[dest] < S[BOARD.square_of[_front("Lounge")]]
    scores = move_scores(view, np.array([0]), _value(Lounge=1.0))
    assert np.isneginf(scores[0, ~view.legal_action_mask[0, A.MOVE0 : A.SUGGEST0]]).all()


def test_the_passage_is_taken_when_its_room_is_the_valuable_one():
    g = position(phase="start", suspects={"Scarlet": "Kitchen"})
    eng, view = _planning_engine(g)
    idx = np.array([0])
    assert turn_start_choice(view, idx, _value(Study=1.0))[0] == A.PASSAGE
    assert turn_start_choice(view, idx, _value(Ballroom=1.0))[0] == A.ROLL
    assert turn_start_choice(view, idx, np.zeros((1, 9)))[0] == A.ROLL
    # Through the passage and on: the Hall is 3 pips from the Study, far from the Kitchen.
    assert turn_start_choice(view, idx, _value(Hall=1.0))[0] == A.PASSAGE


def test_stay_when_dragged_into_a_valuable_room():
    g = position(phase="start", suspects={"Scarlet": "Hall"}, dragged=[0])
    eng, view = _planning_engine(g)
    idx = np.array([0])
    assert turn_start_choice(view, idx, _value(Hall=1.0, Lounge=1.0))[0] == A.STAY
    assert turn_start_choice(view, idx, _value(Lounge=1.0))[0] == A.ROLL


def test_planning_is_batched_and_matches_one_game_at_a_time():
    games = [
        position(phase="move", roll=4, suspects={"Scarlet": _front("Lounge")}),
        position(phase="start", suspects={"Scarlet": "Kitchen"}),
        position(phase="move", roll=6),
        position(phase="start", suspects={"Scarlet": "Hall"}, dragged=[0]),
    ]
    eng, view = _planning_engine(*games)
    rng = np.random.default_rng(0)
    values = rng.random((4, 9)) * (rng.random((4, 9)) < 0.5)
    moves, starts = np.array([0, 2]), np.array([1, 3])
    together = choose_moves(view, moves, values[moves])
    for k, i in enumerate(moves):
        assert choose_moves(view, np.array([i]), values[[i]])[0] == together[k]
    together = turn_start_choice(view, starts, values[starts])
    for k, i in enumerate(starts):
        assert turn_start_choice(view, np.array([i]), values[[i]])[0] == together[k]
    # No legal MOVE in START games: -1.
    assert (choose_moves(view, starts, values[starts]) == -1).all()
    with pytest.raises(ValueError, match="room_value"):
        choose_moves(view, moves, values)


def test_random_tie_breaks_pick_only_best_destinations():
    g = position(phase="move", roll=6)
    eng, view = _planning_engine(g)
    zero = np.zeros((1, 9))
    picks = {int(choose_moves(view, np.array([0]), zero, rng=np.random.default_rng(s))[0]) for s in range(30)}
    legal = set(np.flatnonzero(view.legal_action_mask[0]).tolist())
    assert picks <= legal and len(picks) > 1


@pytest.mark.parametrize("seeded", [False, True])
def test_compiled_move_choice_equals_the_scores_numpy_computes(seeded):
    """choose_moves and turn_start_choice run compiled on the empty board's tables; they must pick what the numpy
    statements pick (move_scores and the tie rule, from the same random numbers; _turn_start_from_rows), on MOVE
    and START positions from play (values with exact ties and all-zero values too)."""
    from cluedo_env.agents.planning.movement import _choose_from_scores, _turn_start_from_rows, empty_board_tables

    eng = VectorEngine(RulesConfig.from_preset("classic"), 256)
    eng.reset(3)
    players, rng = [HeuristicAgent(seed=s) for s in range(4)], np.random.default_rng(1)
    views = [PlayerView(eng, s) for s in range(4)]
    for player, view in zip(players, views, strict=True):
        player.reset(view, np.arange(eng.batch_size))
    checked = started = 0
    for _ in range(120):
        for seat, view in enumerate(views):
            idx = np.flatnonzero((eng.actor == seat) & (eng.phase == A.MOVE))
            if not len(idx):
                continue
            values = rng.random((len(idx), 9)) * (rng.random((len(idx), 9)) < 0.4)
            values[::3] = np.round(values[::3], 1)  # equal room values: tied destinations
            got = choose_moves(view, idx, values, rng=np.random.default_rng(7) if seeded else None)
            want = _choose_from_scores(move_scores(view, idx, values), np.random.default_rng(7) if seeded else None)
            assert (got == want).all()
            checked += len(idx)
            starts = np.flatnonzero((eng.actor == seat) & (eng.phase == A.START))
            if len(starts):  # the turn's start, compiled too: the numpy choice on the empty board's rows
                values = rng.random((len(starts), 9)) * (rng.random((len(starts), 9)) < 0.4)
                values[::3] = np.round(values[::3], 1)
                values[::7] = 0.0  # nothing worth anything: the fallback
                x = view.pos[starts, seat].astype(np.int64)
                target = BOARD.passage[x].astype(np.int64)
                S, S_roll = empty_board_tables(view.config.dice)
                want = _turn_start_from_rows(values, view.legal_action_mask[starts, : A.MOVE0], x, target,
                                             S[np.maximum(target, 0)], S_roll[x])  # fmt: skip
                assert (turn_start_choice(view, starts, values) == want).all()
                started += len(starts)
        eng.step(seat_actions(eng, players, views))
    assert checked > 1000 and started > 1000


# ==================================================================== registry
def test_registry_builds_players_by_name():
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert isinstance(make_agent("heuristic", seed=1), HeuristicAgent)
    assert {"random", "heuristic"} <= set(available_agents())
    with pytest.raises(UnknownAgentError, match="available: .*heuristic"):
        make_agent("grandmaster")
    # Without training loaded, "ckpt:" is not implemented; with it (cluedo_env.training.sb3.checkpoints registers the
    # prefix),
    # a missing checkpoint is a clear error. Either way the message names the checkpoint.
    with pytest.raises((NotImplementedError, ValueError), match="checkpoint"):
        make_agent("ckpt:runs/x.pt")


def test_registry_can_be_extended():
    class Fixed(RandomAgent):
        name = "fixed"

    register_agent("test-fixed", lambda seed=None, **kw: Fixed(seed), replace=True)
    assert isinstance(make_agent("test-fixed", seed=3), Fixed)
    got = {}

    def loader(spec, seed=None, **kw):
        got["spec"] = spec
        return Fixed(seed)

    register_prefix("testckpt", loader, replace=True)
    assert isinstance(make_agent("testckpt:some/path.pt"), Agent) and got["spec"] == "some/path.pt"
    with pytest.raises(ValueError):
        register_agent("heuristic", lambda seed=None: Fixed(seed))


@pytest.mark.parametrize("name", ["deducer", "expert"])
def test_registry_names_the_lazy_players_clearly(name, monkeypatch):
    """The lazily imported players build by name; one whose module does not import is named in a clear error."""
    from cluedo_env.agents.play import registry

    assert isinstance(make_agent(name, seed=0), Agent)
    monkeypatch.setitem(registry._BUILTIN, name, ("cluedo_env.agents.players.no_such_module", "NoSuchAgent"))
    with pytest.raises(UnknownAgentError, match=f"{name}.*cannot be imported.*available: .*heuristic"):
        make_agent(name)


def test_records_between_gives_the_records_of_each_game_in_its_range():
    """``PlayerView.records_between(idx, start, stop)``, the one index helper of the notebooks' catch-up reads: the
    records start..stop-1 of each listed game, game by game in the order of ``idx``, as ``records`` gives them one by
    one; ``new_records(seen)`` is the whole batch from ``seen``."""
    cfg = config("classic", players=4)
    eng = VectorEngine(cfg, 6)
    eng.reset(3)
    rng = np.random.default_rng(0)
    for _ in range(300):
        eng.step(eng.sample_random_actions(rng))
    view = PlayerView(eng, 1)
    hl = eng.hist_len.astype(np.int64)
    assert hl.max() >= 3
    idx = np.array([4, 0, 2])
    start = np.array([1, 0, 5])
    stop = np.minimum(hl[idx], np.array([3, 2, 4]))  # the third range is empty
    rec = view.records_between(idx, start, stop)
    pairs = [(g, i) for g, a, b in zip(idx, start, stop, strict=True) for i in range(a, b)]
    assert list(zip(rec.game.tolist(), rec.index.tolist(), strict=True)) == pairs
    one = view.records(np.array([g for g, _ in pairs]), np.array([i for _, i in pairs]))
    for field in rec._fields:  # the compiled reader gives what the record-by-record reader gives, field by field
        assert getattr(rec, field).dtype == getattr(one, field).dtype, field
        assert np.array_equal(getattr(rec, field), getattr(one, field)), field
    with pytest.raises(IndexError, match="beyond the game's history"):
        view.records_between(idx[:1], np.array([0]), hl[idx[:1]] + 1)
    seen = np.minimum(hl, 2)
    whole = view.new_records(seen)
    assert whole.game.tolist() == [g for g in range(6) for _ in range(seen[g], hl[g])]


def test_records_between_hides_what_each_seat_may_not_see():
    """Every seat's compiled read of whole histories (accusations, hidden and visible shown cards) equals the
    record-by-record numpy read, and shows a card only to the suggester and the refuter (R-G7)."""
    cfg = config("classic", players=4)
    eng = VectorEngine(cfg, 16, autoreset=False)
    eng.reset(5)
    rng = np.random.default_rng(1)
    for step in range(600):  # random play that accuses only late, so histories hold suggestions and refutations
        mask = eng.legal_action_mask.copy()
        if step < 500:
            quiet = mask.copy()
            quiet[:, A.ACCUSE0 :] = False
            mask = np.where(quiet.any(1, keepdims=True), quiet, mask)
        live = mask.any(1)
        pick = np.where(mask, rng.random(mask.shape), -1.0).argmax(1)
        eng.step(np.where(live, pick, -1))
    hl = eng.hist_len.astype(np.int64)
    idx = np.arange(16)
    games, index = np.repeat(idx, hl), np.arange(hl.sum()) - np.repeat(np.cumsum(hl) - hl, hl)
    kinds = set()
    for seat in range(4):
        view = PlayerView(eng, seat)
        rec = view.records_between(idx, np.zeros(16, np.int64), hl)
        one = view.records(games, index)
        for field in rec._fields:
            assert np.array_equal(getattr(rec, field), getattr(one, field)), (seat, field)
        raw = eng.hist_response[games, index]
        shown = (raw >= 0) & ~rec.is_accusation[:, None]
        sees = (rec.player[:, None] == seat) | (np.arange(4)[None, :] == seat)
        assert np.array_equal(rec.response[shown & sees], raw[shown & sees])
        assert (rec.response[shown & ~sees] == HIDDEN).all()
        kinds |= {"hidden"} if (shown & ~sees).any() else set()
        kinds |= {"accusation"} if rec.is_accusation.any() else set()
    assert kinds == {"hidden", "accusation"}  # the games cover both cases


def test_legal_action_mask_of_is_the_rows_of_the_seat_mask():
    """``PlayerView.legal_action_mask_of(idx)`` (compiled) gives rows ``idx`` of ``legal_action_mask``: the engine's
    legal actions where the seat is to act (as refuter or on its turn), all False elsewhere and once a game is over."""
    cfg = config("classic", players=4)
    eng = VectorEngine(cfg, 32, autoreset=False)
    eng.reset(2)
    rng = np.random.default_rng(3)
    phases = set()
    for step in range(150):
        for seat in range(4):
            view = PlayerView(eng, seat)
            idx = rng.permutation(32)[: rng.integers(1, 33)]
            idx = np.concatenate([idx, idx[:2]])  # repeated games too
            assert np.array_equal(view.legal_action_mask_of(idx), view.legal_action_mask[idx])
        phases |= set(eng.phase.tolist())
        mask = eng.legal_action_mask.copy()
        if step < 120:  # no accusations yet, so the games suggest and refute
            quiet = mask.copy()
            quiet[:, A.ACCUSE0 :] = False
            mask = np.where(quiet.any(1, keepdims=True), quiet, mask)
        pick = np.where(mask, rng.random(mask.shape), -1.0).argmax(1)
        eng.step(np.where(mask.any(1), pick, -1))
    assert {A.START, A.MOVE, A.SUGGEST, A.REFUTE, A.OVER} <= phases
    with pytest.raises(IndexError, match="outside the batch"):
        PlayerView(eng, 0).legal_action_mask_of(np.array([32]))


def test_envelope_is_known_to_a_seat_exactly_where_it_has_accused():
    """R-A2: an accuser sees the solution; no one else does before the end. ``envelope_if_known_of`` (one compiled
    pass) must give the envelope in exactly the games where the seat has accused, -1 elsewhere, and refuse games
    outside the batch."""
    eng = VectorEngine(RulesConfig.from_preset("classic", players=4), 32)
    eng.reset(3)
    rng = np.random.default_rng(0)
    accused = 0
    for _ in range(60):
        mask = eng.legal_action_mask
        pick = np.where(mask, rng.random(mask.shape), -1.0).argmax(1)
        eng.step(np.where(mask.any(1), pick, -1))
        for seat in range(4):
            idx = rng.permutation(32)[: rng.integers(1, 33)]
            seen = eng.accused_at[idx, seat] >= 0
            want = np.where(seen[:, None], eng.envelope[idx], -1)
            assert np.array_equal(PlayerView(eng, seat).envelope_if_known_of(idx), want)
            accused += int(seen.sum())
    assert accused > 0  # random players accuse: both cases are met
    for bad in ([32], [-1]):
        with pytest.raises(IndexError, match="outside the batch of 32"):
            PlayerView(eng, 0).envelope_if_known_of(np.array(bad))
        with pytest.raises(IndexError, match="outside the batch of 32"):
            PlayerView(eng, 0).legal_action_mask_of(np.array(bad))


@pytest.mark.parametrize(
    "preset, options, players, endings",
    [
        ("classic", {"players": 3, "max_turns": 60}, "random", {"last_standing"}),
        ("cards", {"players": 3, "max_turns": 40}, "random", {"all_eliminated"}),  # R-E2: plays on
        ("classic", {"max_turns": 30}, "heuristic", {"accusation", "truncated"}),  # R-E3
    ],
)
def test_game_records_agree_with_each_games_history(monkeypatch, preset, options, players, endings):
    """The runner's records of the games that end together come from one compiled pass over their histories
    (``VectorEngine.history_counts``); each must say what its game's own history and counters say, checked the
    long way at the moment the games end (before their slots are refilled)."""
    import cluedo_env.agents.play.runner as runner_module

    real = runner_module._game_records
    seen = []

    def checked(eng, ended, seat_turns):
        got = real(eng, ended, seat_turns)
        assert len(got) == len(ended)
        for rec, i in zip(got, ended.tolist(), strict=True):
            h = int(eng.hist_len[i])
            kind, correct = eng.hist_kind[i, :h], eng.hist_correct[i, :h]
            wrong = (kind == ACCUSATION) & ~correct
            win = int(eng.winner[i])
            last_right = h > 0 and kind[-1] == ACCUSATION and bool(correct[-1])
            ending = ("truncated" if eng.truncated[i] else "all_eliminated" if win < 0
                      else "accusation" if last_right else "last_standing")  # fmt: skip
            assert rec.winner == win and rec.turns == int(eng.turn_count[i]) and rec.ending == ending
            assert rec.suggestions == int((kind != ACCUSATION).sum())
            byseat = np.bincount(eng.hist_player[i, :h][wrong].astype(np.int64), minlength=eng.P)
            assert rec.wrong_accusations == tuple(int(x) for x in byseat)
            assert rec.rounds == int(seat_turns[i].max())
            assert rec.winner_turns == (int(seat_turns[i, win]) if win >= 0 else 0)
            seen.append(rec.ending)
        return got

    monkeypatch.setattr(runner_module, "_game_records", checked)
    cfg = RulesConfig.from_preset(preset, **options)
    agents = [make_agent(players, seed=s) for s in range(cfg.players)]
    records = play_games(cfg, agents, 120, batch_size=16, seed=5)
    assert len(records) == len(seen) == 120
    assert endings <= set(seen)  # each way a game ends is met
