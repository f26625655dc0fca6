"""The notebook player (agents/players/notebook_player.py): the yardstick baseline.

It must know exactly its own hand and the cards shown to it, nothing more (so an unrefuted
suggestion does not solve anything for it), suggest only open cards, accuse when one open
card per category is left (never wrongly), play legally everywhere, and sit between the
random player and the heuristic in strength.
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.agents.play.head_to_head import head_to_head
from cluedo_env.agents.play.registry import available_agents, make_agent
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.players.notebook_player import NotebookAgent
from cluedo_env.agents.players.random_player import RandomAgent
from helpers import config, position

from cluedo_env.engine.reference import Game
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, card_id

ENVELOPE = ["Plum", "Wrench", "Study"]


def _engine(g: Game) -> VectorEngine:
    eng = VectorEngine(g.config, 1)
    eng.import_game(0, g.to_dict())
    return eng


def _with_history(g: Game, records: list[dict]) -> Game:
    d = g.to_dict()
    d["history"] = records
    return Game.from_dict(d, seed=0)


def _sugg(player, cards, passed=(), refuted_by=(), shown=()):
    return {"type": "suggestion", "player": player, "cards": list(cards), "passed": list(passed),
            "refuted_by": list(refuted_by), "shown": list(shown)}  # fmt: skip


def _act(eng: VectorEngine, seed: int = 0, seat: int = 0) -> tuple[int, NotebookAgent]:
    view = PlayerView(eng, seat)
    agent = NotebookAgent(seed=seed)
    agent.reset(view, np.array([0]))
    return int(agent.act(view, np.array([0]))[0]), agent


def test_registered_by_name():
    assert "notebook" in available_agents()
    agent = make_agent("notebook", seed=3)
    assert isinstance(agent, NotebookAgent) and agent.name == "notebook"


def test_an_unrefuted_suggestion_teaches_it_nothing():
    """The heuristic solves the case from a suggestion nobody could refute; the notebook does not."""
    g = position(config("cards", players=3), envelope=ENVELOPE, phase="post")
    g = _with_history(g, [_sugg(0, ENVELOPE, passed=[1, 2])])
    action, agent = _act(_engine(g))
    assert action == A.END_TURN
    hand = set(g.to_dict()["hands"][0])
    assert {CARD_NAMES[c] for c in np.flatnonzero(agent.open[0])} == set(CARD_NAMES) - hand


def test_suggests_only_open_cards_and_crosses_off_shown_ones():
    g = position(config("cards", players=3), envelope=ENVELOPE, phase="suggest")
    hands = g.to_dict()["hands"]
    shown = next(c for c in hands[1] if card_id(c) < 6)  # a suspect of seat 1
    g = _with_history(g, [_sugg(0, [shown, "Wrench", "Study"], refuted_by=[1], shown=[shown])])
    closed = set(hands[0]) | {shown}
    named = set()
    for seed in range(40):
        action, _ = _act(_engine(g), seed=seed)
        assert A.SUGGEST0 <= action < A.SHOW0
        s, w, r = A.triple_of(action - A.SUGGEST0)
        cards = {CARD_NAMES[s], CARD_NAMES[6 + w], CARD_NAMES[12 + r]}
        assert not cards & closed
        named |= cards
    assert len(named) > 6  # uniformly among the open ones, not one fixed choice


def test_accuses_when_one_candidate_per_category_is_left():
    """Seat 0 of 3 in the card game: its hand and the cards shown to it leave only the envelope open."""
    cfg = config("cards", players=3)
    g = position(cfg, envelope=ENVELOPE, phase="post")
    hands = g.to_dict()["hands"]
    mine = set(hands[0])
    others = [(p, c) for p in (1, 2) for c in hands[p] if c not in mine]
    history = [_sugg(0, ["Plum", "Wrench", "Study"], refuted_by=[p], shown=[c]) for p, c in others]
    # Records are only stored, not replayed: each one just says "p showed c to seat 0".
    g = _with_history(g, history)
    action, agent = _act(_engine(g))
    assert A.describe(action) == "ACCUSE(Plum, Wrench, Study)"
    # One card fewer shown: not solved, no accusation.
    g = _with_history(position(cfg, envelope=ENVELOPE, phase="post"), history[:-1])
    action, _ = _act(_engine(g))
    assert action == A.END_TURN


@pytest.mark.parametrize(
    "preset, players, flags",
    [("classic", 4, {}), ("classic", 3, {"accusation_in_room": True}), ("seed000", 5, {}), ("cards", 6, {}),
     ("cards", 4, {"refutation": "all", "accuse_after_suggestion": False})],
)  # fmt: skip
def test_always_legal_never_wrong_and_games_end(preset, players, flags):
    cfg = config(preset, players=players, **flags)
    agents = [NotebookAgent(seed=s) if s % 2 == 0 else RandomAgent(seed=s) for s in range(players)]
    records = play_games(cfg, agents, 40, batch_size=20, seed=1)
    assert len(records) == 40
    assert all(a.fallbacks == 0 for a in agents if isinstance(a, NotebookAgent))
    notebook_seats = [s for s in range(players) if s % 2 == 0]
    assert sum(r.wrong_accusations[s] for r in records for s in notebook_seats) == 0
    assert not any(r.ending == "truncated" for r in records)  # no notebook walks in circles for ever


def test_two_notebooks_left_alone_on_the_board_finish_their_games():
    """Random players accuse at once and drop out; the two notebooks must still solve every game (they once
    walked back into the envelope's room, where nobody can refute, for ever)."""
    cfg = config("classic", players=4)
    agents = [NotebookAgent(seed=s) if s % 2 else RandomAgent(seed=s) for s in range(4)]
    records = play_games(cfg, agents, 100, batch_size=50, seed=3)
    assert [r.ending for r in records].count("truncated") == 0
    assert all(r.winner in (1, 3) for r in records)


def test_between_random_and_heuristic():
    cfg = config("cards", players=4)
    vs_random = head_to_head(cfg, "notebook", "random", 200, seed=0, batch_size=50)
    assert vs_random.win_rate > 0.85  # parity 0.25; measured 0.995 in 400 games
    vs_heuristic = head_to_head(cfg, "heuristic", "notebook", 200, seed=0, batch_size=50)
    assert vs_heuristic.win_rate > 0.6  # parity 0.25; measured 0.83 in 400 games
