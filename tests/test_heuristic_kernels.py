"""The compiled heuristic player (agents/players/heuristic.py) plays exactly as its numpy statement.

A compiled player and a :class:`references.heuristic.HeuristicReference` with the same seed sit in the same seat
and are asked the same questions; every answer must be equal, over whole games on each preset, for the heuristic
player and the notebook player (which changes the room values and records its suggestions).
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.players.heuristic import HeuristicAgent
from cluedo_env.agents.players.notebook_player import NotebookAgent
from helpers import config
from references.heuristic import HeuristicReference


class NotebookReference(NotebookAgent, HeuristicReference):
    """The notebook player on the numpy statement of the heuristic's act."""


class Twin:
    """Asks a compiled player and its reference the same questions and insists on the same answers."""

    def __init__(self, compiled, reference) -> None:
        self.compiled, self.reference = compiled, reference
        self.decisions = 0
        self.phases: set[int] = set()

    def reset(self, view, idx) -> None:
        self.compiled.reset(view, idx)
        self.reference.reset(view, idx)

    def observe_step(self, view) -> None:
        pass

    def act(self, view, idx):
        a = self.compiled.act(view, idx)
        b = self.reference.act(view, idx)
        assert np.array_equal(a, b), np.flatnonzero(a != b)[:5]
        assert np.array_equal(self.compiled.open, self.reference.open)
        self.decisions += len(idx)
        self.phases |= set(np.unique(view.phase[idx]).tolist())
        return a


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("classic", 6), ("cards", 3), ("cards", 5)])
@pytest.mark.parametrize("kind", ["heuristic", "notebook"])
def test_compiled_heuristic_plays_as_its_reference(preset, players, kind):
    cfg = config(preset, players=players)
    make = (HeuristicAgent, HeuristicReference) if kind == "heuristic" else (NotebookAgent, NotebookReference)
    twins = [Twin(make[0](seed=s), make[1](seed=s)) for s in range(players)]
    records = play_games(cfg, twins, 48, batch_size=16, seed=7)
    assert len(records) == 48
    assert all(t.compiled.fallbacks == 0 for t in twins)
    assert sum(t.decisions for t in twins) > 48 * 10
    phases = set().union(*(t.phases for t in twins))
    assert {2, 3, 4} <= phases  # suggestions, refutations and POST were all compared (and START/MOVE on a board)
    if cfg.has_board:
        assert {0, 1} <= phases
