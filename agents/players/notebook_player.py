"""The notebook player: a yardstick between the random player and the heuristic.

Why it exists: strength targets of the rule-based players are stated against a
fixed, simple baseline that other implementations can reproduce exactly. This player is that
baseline. It knows only

* its own hand (R-S6) and
* the cards shown to it (R-G6, R-G7),

and crosses those off. Nothing else: no "nobody refuted, so it is the envelope" inference
(that is what makes :class:`cluedo_env.agents.players.heuristic.HeuristicAgent` stronger), no passes, no hand sizes.

Play: suggests, uniformly at random, one open card (not known to be outside the envelope) of
each category (on the board the room is the one it stands in, R-G1, and it walks toward open
rooms with :mod:`cluedo_env.agents.planning.movement`, first to those it has suggested in least recently); shows a
uniformly random named card it holds; accuses when one open card per category is left. Its
facts are always true, so it never accuses wrongly.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.players.heuristic import HeuristicAgent

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules.cards import NUM_ROOMS


class NotebookAgent(HeuristicAgent):
    """Own hand and shown cards crossed off; random open suggestions; accuses at one open card per category."""

    name = "notebook"

    def __init__(self, seed: int | None = None) -> None:
        # The heuristic's notebook without its one inference (an unrefuted suggestion solves categories).
        super().__init__(seed=seed, use_unrefuted=False)
        self.visited = np.zeros((0, NUM_ROOMS), np.int64)  # (B, 9) when it last suggested there (0: never)
        self.clock = np.zeros(0, np.int64)  # (B,) suggestions made so far

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        super().reset(view, idx)
        if len(self.visited) != view.batch_size:
            self.visited = np.zeros((view.batch_size, NUM_ROOMS), np.int64)
            self.clock = np.zeros(view.batch_size, np.int64)
        idx = np.asarray(idx, np.int64)
        self.visited[idx] = 0
        self.clock[idx] = 0

    def room_value(self, idx: np.ndarray) -> np.ndarray:
        """The open rooms it has suggested in least recently (never, first).

        Without this a notebook whose open rooms are the envelope's (where nobody can refute,
        and it learns nothing) and a far one walks back into the near one for ever: the board
        game would never end.
        """
        value = super().room_value(idx)
        when = np.where(value > 0, self.visited[idx], np.iinfo(np.int64).max)
        return np.where(when == when.min(1, keepdims=True), value, 0.0)

    def _suggested(self, idx: np.ndarray, triple: np.ndarray) -> None:
        self.clock[idx] += 1
        self.visited[idx, triple % NUM_ROOMS] = self.clock[idx]


__all__ = ["NotebookAgent"]
