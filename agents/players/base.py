"""The interface every batched player implements.

A player sits in one seat of every game of a batch. It sees the games only through a
:class:`cluedo_env.engine.views.PlayerView` (public state, its own hand, the history with other
people's shown cards hidden), so it cannot use hidden information even by mistake.

The runner (tournament, env wrappers) calls, for each seat's player:
    reset(view, idx)  when games ``idx`` start (also at the very start, with every game)
    act(view, idx)    when the seat must act in games ``idx``; returns one legal action each
A player that keeps a notebook updates it from ``view.new_records(...)`` inside ``act``
(or on every call to ``observe_step`` if it wants to follow each step).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from cluedo_env.engine.kernels import all_legal_rows, suggestion_room_rows
from cluedo_env.engine.views import PlayerView


class Agent(ABC):
    name: str = "agent"

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:  # noqa: B027 - optional hook
        """Games ``idx`` start anew: forget what was known about them."""

    def observe_step(self, view: PlayerView) -> None:  # noqa: B027 - optional hook
        """Called after every engine step, for players that follow the game as it goes."""

    @abstractmethod
    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """(len(idx),) int64 legal actions for games ``idx``, where this seat is to act."""


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random True column per row of a (n, A) bool mask (each row needs one)."""
    counts = mask.sum(1)
    if (counts == 0).any():
        raise ValueError("a row of the mask has no legal action")
    rank = (rng.random(len(mask)) * counts).astype(np.int64)
    return (np.cumsum(mask, axis=1) > rank[:, None]).argmax(1)


def suggestion_room(mask: np.ndarray) -> np.ndarray:
    """(n,) the room of the legal suggestions in each row of an (n, 870) mask, -1 where none is legal.

    On the board a suggestion names the room the player stands in (R-G1), so the mask already says
    which room that is: players read it here instead of re-deriving the rule from positions.
    """
    mask = np.ascontiguousarray(mask, bool)
    out = np.empty(len(mask), np.int64)
    suggestion_room_rows(mask, out)
    return out


def replace_illegal(out: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """Replace, in place, every action of ``out`` that ``mask`` (n, A) does not allow by a random
    legal one; return how many were replaced (a player's safety net, counted so tests can demand 0)."""
    if all_legal_rows(out, mask):  # compiled: the usual case, every choice legal
        return 0
    rows = np.arange(len(out))
    ok = (out >= 0) & mask[rows, np.clip(out, 0, mask.shape[1] - 1)]
    bad = np.flatnonzero(~ok)
    out[bad] = sample_legal(mask[bad], rng)
    return len(bad)


__all__ = [
    "Agent",
    "replace_illegal",
    "sample_legal",
    "suggestion_room",
]
