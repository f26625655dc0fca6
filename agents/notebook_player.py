"""The notebook player: a yardstick between the random player and the heuristic.

Why it exists: strength targets of the rule-based players (issue 16) are stated against a
fixed, simple baseline that other implementations can reproduce exactly. This player is that
baseline. It knows only

* its own hand (R-S6) and
* the cards shown to it (R-G6, R-G7),

and crosses those off. Nothing else: no "nobody refuted, so it is the envelope" inference
(that is what makes :class:`agents.heuristic.HeuristicAgent` stronger), no passes, no hand sizes.

Play: suggests, uniformly at random, one open card (not known to be outside the envelope) of
each category (on the board the room is the one it stands in, R-G1, and it walks toward open
rooms with :mod:`agents.planning`); shows a uniformly random named card it holds; accuses
when one open card per category is left. Its facts are always true, so it never accuses
wrongly.
"""

from __future__ import annotations

from agents.heuristic import HeuristicAgent


class NotebookAgent(HeuristicAgent):
    """Own hand and shown cards crossed off; random open suggestions; accuses at one open card per category."""

    name = "notebook"

    def __init__(self, seed: int | None = None) -> None:
        # The heuristic's notebook without its one inference (an unrefuted suggestion solves categories).
        super().__init__(seed=seed, use_unrefuted=False)


__all__ = ["NotebookAgent"]
