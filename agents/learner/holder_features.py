"""Holder probabilities: who the seat believes holds each card, as learner inputs (``holder_probabilities=True``).

Why: a suggestion is worth what it teaches, and that depends on who probably holds each named card. The belief
features say only what is proved (holds, lacks), and the compact observation's ``envelope_prob`` only the
envelope's row of the facts' own marginals, so a learner cannot tell a suggestion that will be answered by a card
it almost knows from one that splits an open question. (``scripts/suggestion_information.py`` scores a player's
suggestions by the expert's measure; docs/results.md has the figures.) The expert scores suggestions on its holder
probabilities; these slots give the learner the same numbers.

Source: an expert at its defaults that only perceives
(:func:`cluedo_env.agents.learner.accusation_features.perception_expert`, the same per-seat expert that computes
the accusation features), its
:meth:`cluedo_env.agents.players.expert.ExpertAgent.probabilities`: deals sampled under the seat's facts, blended
with the deducer's model by effective sample size. They are what the seat believes, from its
:class:`~cluedo_env.engine.views.PlayerView` only; the policy makes every decision.

Layout (appended after the accusation slots when both are on; int8, 0 or 1; seat-relative holders as in the
belief features: holder 0 is the seat itself, holder k the player k seats to its left, holder P the envelope):

==================  ==============  ==========================================================================
piece               shape           meaning
==================  ==============  ==========================================================================
holder_prob         (H, 21, 6)      [h, c, k] = 1 if P(holder h holds card c) >= 0.02 0.2 0.4 0.6 0.8 0.98
==================  ==============  ==========================================================================

Size: ``holder_size(P) = (P + 1) * 21 * 6`` (630 for 4 players). Graded values are thermometer codes, as in
the compact observation (an MLP without input normalisation learns badly from raw numbers beside 0/1 slots).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from cluedo_env.agents.learner.accusation_features import perceive

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules.cards import NUM_CARDS

HOLDER_LEVELS = np.array([0.02, 0.2, 0.4, 0.6, 0.8, 0.98])
HOLDER_MEANING = ("[h, c, k] = 1 if the seat's probability that holder `h` (0: the seat, k: k seats to its left, "
                  "last: the envelope) holds card `c` is at least 0.02, 0.2, 0.4, 0.6, 0.8, 0.98 (k = 0..5; the "
                  "perceiving expert's `probabilities`, from sampled deals)")  # fmt: skip


def holder_shape(players: int) -> tuple[int, int, int]:
    """Shape of the ``holder_prob`` piece for ``players`` players: (holders, cards, levels)."""
    return players + 1, NUM_CARDS, len(HOLDER_LEVELS)


def holder_size(players: int) -> int:
    """Slots of the holder probabilities for ``players`` players."""
    return int(np.prod(holder_shape(players)))


def seat_relative(prob: np.ndarray, seat: int) -> np.ndarray:
    """(n, H, 21) holder probabilities by absolute seat (envelope last) -> by position after ``seat`` (the seat
    first, the envelope still last), the belief features' order."""
    P = prob.shape[1] - 1
    order = np.append((seat + np.arange(P)) % P, P)
    return prob[:, order]


def encode_holders(expert: Any, view: PlayerView, idx: np.ndarray) -> np.ndarray:
    """(n, holder_size) int8 slots of games ``idx`` for ``view``'s seat, from ``expert``'s probabilities (its
    notebook brought up to date with the view first)."""
    idx = np.asarray(idx, np.int64)
    n, P = len(idx), view.num_players
    if n == 0:
        return np.zeros((0, holder_size(P)), np.int8)
    perceive(expert, view, idx)
    prob = seat_relative(expert.probabilities(view, idx), view.seat)
    # a tiny tolerance: a proved card (probability 1 in any float arithmetic) always fills its top level
    bits = prob[..., None] >= HOLDER_LEVELS - 1e-9
    return bits.reshape(n, -1).astype(np.int8)


def encode_holders_by_seat(experts: dict[int, Any], views: Any, seats: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """(n, holder_size): :func:`encode_holders` of games ``idx`` whose learner sits in ``seats`` (n,), each with
    that seat's expert and view."""
    idx = np.asarray(idx, np.int64)
    seats = np.asarray(seats, np.int64)
    out = np.zeros((len(idx), holder_size(views[0].num_players)), np.int8)
    for s in np.unique(seats):
        r = np.flatnonzero(seats == s)
        out[r] = encode_holders(experts[int(s)], views[int(s)], idx[r])
    return out


__all__ = ["HOLDER_LEVELS", "HOLDER_MEANING", "encode_holders", "encode_holders_by_seat", "holder_shape",
           "holder_size", "seat_relative"]  # fmt: skip
