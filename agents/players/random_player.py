"""The uniformly random legal player."""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.players.base import Agent, sample_legal

from cluedo_env.engine.views import PlayerView


class RandomAgent(Agent):
    """Picks a uniformly random legal action (accuses at once most of the time: 324 of ~330 options)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        return sample_legal(view.legal_action_mask_of(idx), self.rng)


__all__ = [
    "RandomAgent",
]
