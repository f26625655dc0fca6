"""Accusation features: what the expert weighs before a risky accusation, as learner inputs.

With the compact observation alone a learner sees coarse envelope probabilities (above 0, 1/4, 1/2, 3/4 per
card, facts-only marginals) and cannot tell a 90% accusation from a 45% one. These slots, appended to the
learner observation, say what the expert (:class:`cluedo_env.agents.players.expert.ExpertAgent`) computes before
one, with its own machinery for the learner's seat (its notebook, opponent models and deal sampler; the seat's
:class:`~cluedo_env.engine.views.PlayerView` only), wherever the learner may accuse (its seat to act, an
accusation open, R-A1). Two kinds of learner have them:

* the advised learner (:mod:`cluedo_env.envs.learner_actions`, ``advisor=...``) whose advisor is an expert: it
  decides only *when* to accuse, and the slots come from its advisor;
* any other learner with ``accusation_features=True``: the slots come from an expert at its defaults that only
  perceives (:func:`perception_expert`; it never chooses an action), and the policy makes every decision
  itself. Its ``expert_rule`` slot stays 0: the slots say what the seat knows, not what a rule-based player
  would do with it.

The slots:

* ``decides`` (1): the learner decides here (else every slot is 0);
* ``sampled`` (1): at most ``MAX_HYPOTHESES`` = 24 solution triples are left under the
  expert's assumed facts (:meth:`ExpertAgent.model_bits` from round ``naive_accuse_rounds``) and
  the notebook has no contradiction, so ``p1`` was estimated (as the expert estimates it:
  :meth:`ExpertAgent.triple_probabilities`, ``accusation_samples`` sampled deals);
* ``p1`` (10): thermometer, ``p1 >= P1_LEVELS[k]`` (0.3 0.4 0.5 0.6 0.7 0.8 0.85 0.9 0.95 0.99),
  ``p1`` = the probability of the most likely solution triple among the accusations open now;
* ``ess_ok`` (1): the effective sample size of those deals is at least the expert's ``min_ess``;
* ``danger`` (6): thermometer, ``danger >= DANGER_LEVELS[k]`` (0.02 0.05 0.1 0.2 0.3 0.5),
  :meth:`ExpertAgent.danger`: the estimated chance that an opponent solves the case before our
  next turn (public information);
* ``hypotheses`` (8): thermometer, ``hypotheses <= HYP_LEVELS[k]`` (1 2 3 4 6 8 12 24): the
  solution triples left under the assumed facts;
* ``expert_rule`` (1, advised learners only): the expert's own rule at its defaults would accuse now:
  ``sampled``, ``ess_ok`` and ``p1 >= max(0.5, (1 - danger) ** rounds)`` (``rounds`` = 2 on the
  board, 1 in the card game);
* ``round`` (5): thermometer, ``turn_count // players >= ROUND_LEVELS[k]`` (2 4 6 8 12).

Action 1 of the advised space then accuses the triple ``p1`` is about (kept per game in
:attr:`AccusationFeatures.best` when the observation is built), and is open only where one was
sampled (:meth:`AccusationFeatures.restrict`): with more than 24 hypotheses left, or a
contradiction, the learner may only follow its advisor. (Measured: with action 1 open at every
accusation decision, a policy starting from random weights learned within 400k steps never to
accuse anywhere, P(accuse) 0.001 even where the expert's rule accuses: most decisions are hopeless
accusations, and exploration died before the useful ones were found.)

The advisor itself should never take a risk (the learner decides those): e.g.
``expert{"floor": 1.01, "accuse_assumed": false, "max_hypotheses": 0}`` accuses only on proof
(``max_hypotheses`` 0: it does not sample for its own accusation check, which could never pass).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import LearnerActions
from cluedo_env.rules import actions as A

MAX_HYPOTHESES = 24
_ADVISED = LearnerActions(advised=True)  # its ``decides``: where the advised learner decides
EXPERT_FLOOR = 0.5  # the expert's default floor, for the ``expert_rule`` slot
P1_LEVELS = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99])
DANGER_LEVELS = np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.5])
HYP_LEVELS = np.array([1, 2, 3, 4, 6, 8, 12, 24])
ROUND_LEVELS = np.array([2, 4, 6, 8, 12])

# (name, width, meaning) in order: the layout of the slots appended to the learner observation.
ACCUSATION_PIECES: tuple[tuple[str, int, str], ...] = (
    ("decides", 1, "1 where the learner decides (its seat to act, an accusation open); else all slots 0"),
    ("sampled", 1, f"1 where at most {MAX_HYPOTHESES} solution triples are left (assumed facts) and p1 was sampled"),
    ("p1", len(P1_LEVELS), "p1 >= 0.3 0.4 0.5 0.6 0.7 0.8 0.85 0.9 0.95 0.99 (best open triple's probability)"),
    ("ess_ok", 1, "1 where the sampled deals' effective sample size is at least the expert's min_ess"),
    ("danger", len(DANGER_LEVELS), "danger >= 0.02 0.05 0.1 0.2 0.3 0.5: an opponent solves before our next turn"),
    ("hypotheses", len(HYP_LEVELS), "solution triples left (assumed facts) <= 1 2 3 4 6 8 12 24"),
    ("expert_rule", 1, "1 where the expert's rule at its defaults accuses: p1 >= max(0.5, (1 - danger) ** rounds) "
                       "(advised learners; else 0)"),
    ("round", len(ROUND_LEVELS), "rounds played (turn_count // players) >= 2 4 6 8 12"),
)
ACCUSATION_SIZE = sum(w for _, w, _ in ACCUSATION_PIECES)


def accusation_layout() -> dict[str, tuple[int, int]]:
    """``{piece: (offset, width)}`` of the accusation slots (offsets from their start)."""
    out, k = {}, 0
    for name, width, _ in ACCUSATION_PIECES:
        out[name] = (k, width)
        k += width
    return out


def is_expert(agent: Any) -> bool:
    """Whether ``agent`` can compute the accusation features (an
    :class:`cluedo_env.agents.players.expert.ExpertAgent`)."""
    from cluedo_env.agents.players.expert import ExpertAgent

    return isinstance(agent, ExpertAgent)


class AccusationFeatures:
    """Builds the accusation slots of games for one learner; keeps each game's best open triple (:attr:`best`)."""

    size = ACCUSATION_SIZE

    def __init__(self) -> None:
        self.best = np.full(0, -1, np.int64)  # (B,) triple index p1 is about, -1: none

    def encode(self, expert: Any, view: PlayerView, idx: np.ndarray, rule: bool = True) -> np.ndarray:
        """(n, ACCUSATION_SIZE) int8 slots of games ``idx`` for ``view``'s seat, from ``expert``'s machinery;
        ``rule``: fill the ``expert_rule`` slot (advised learners), else it stays 0."""
        idx = np.asarray(idx, np.int64)
        n = len(idx)
        B = view.batch_size
        if len(self.best) != B:
            self.best = np.full(B, -1, np.int64)
        self.best[idx] = -1
        out = np.zeros((n, ACCUSATION_SIZE), np.int8)
        if n == 0:
            return out
        lay = accusation_layout()
        mask = view.legal_action_mask_of(idx)
        decides = _ADVISED.decides(mask)  # where the advised learner decides (R-A1)
        rows = np.flatnonzero(decides)
        if len(rows) == 0:
            return out
        g = idx[rows]
        nb = perceive(expert, view, g)

        def put(name: str, r: np.ndarray, bits: np.ndarray) -> None:
            o, w = lay[name]
            out[r, o : o + w] = bits.reshape(len(r), w)

        put("decides", rows, np.ones(len(rows), np.int8))
        _, hyp = expert.hypotheses(view, g)
        put("hypotheses", rows, hyp[:, None] <= HYP_LEVELS[None, :])
        danger = expert.danger(view, g)
        put("danger", rows, danger[:, None] >= DANGER_LEVELS[None, :])
        rounds_played = view.turn_count[g] // view.num_players
        put("round", rows, rounds_played[:, None] >= ROUND_LEVELS[None, :])
        samp = (hyp <= MAX_HYPOTHESES) & (hyp >= 1) & ~nb.bad[g]
        s = np.flatnonzero(samp)
        if len(s):
            r, gs = rows[s], g[s]
            probs, ess = expert.triple_probabilities(gs, view)
            probs = np.where(mask[r, A.ACCUSE0 :], probs, -1.0)
            best = probs.argmax(1)
            p1 = probs[np.arange(len(s)), best]
            ess_ok = ess >= expert.min_ess
            put("sampled", r, np.ones(len(s), np.int8))
            put("p1", r, p1[:, None] >= P1_LEVELS[None, :])
            put("ess_ok", r, ess_ok)
            if rule:
                put("expert_rule", r, ess_ok & (p1 >= expert.risk_threshold(view, danger[s], EXPERT_FLOOR)))
            self.best[gs] = best
        return out

    def restrict(self, mask: np.ndarray, games: np.ndarray) -> np.ndarray:
        """The advised (n, 2) ``mask`` of ``games`` with action 1 closed where no best open triple was sampled."""
        games = np.asarray(games, np.int64)
        has = self.best[games] >= 0 if len(self.best) else np.zeros(len(games), bool)
        mask[:, 1] &= has
        return mask

    def accuse(self, games: np.ndarray, legal: np.ndarray, fallback) -> np.ndarray:
        """(k,) triple indices to accuse in ``games``: the kept best open triple, else ``fallback(rows, legal)``."""
        games = np.asarray(games, np.int64)
        best = self.best[games] if len(self.best) else np.full(len(games), -1, np.int64)
        rows = np.arange(len(games))
        ok = best >= 0
        ok[ok] = legal[rows[ok], best[ok]]
        out = best.copy()
        miss = np.flatnonzero(~ok)
        if len(miss):
            out[miss] = fallback(miss, legal[miss])
        return out


def perceive(expert: Any, view: PlayerView, games: np.ndarray) -> Any:
    """Bring ``expert``'s notebook (and its refuter model) up to date with ``view`` in ``games``, as its own
    decisions do; returns the notebook."""
    nb = expert._ensure(view)
    nb.update(view, games)
    if expert.refuter_model:
        expert._refuters(view).update(view, games, nb.shown_by_me)
    return nb


def perception_expert(seed: int | None = None) -> Any:
    """An expert at its defaults whose machinery computes the slots of a learner without an advisor. It is
    reset with the learner's games and asked for nothing but the slots: every action stays the policy's."""
    from cluedo_env.agents.players.expert import ExpertAgent

    return ExpertAgent(seed=seed)


def encode_by_seat(features: AccusationFeatures, experts: dict[int, Any], views: Any, seats: np.ndarray,
                   idx: np.ndarray, rule: bool = True) -> np.ndarray:  # fmt: skip
    """(n, ACCUSATION_SIZE): :meth:`AccusationFeatures.encode` of games ``idx`` whose learner sits in ``seats``
    (n,), each with that seat's expert and view (``rule``: as in :meth:`AccusationFeatures.encode`)."""
    idx = np.asarray(idx, np.int64)
    seats = np.asarray(seats, np.int64)
    out = np.zeros((len(idx), ACCUSATION_SIZE), np.int8)
    for s in np.unique(seats):  # encode touches only the games it is given (their slots and best triple)
        r = np.flatnonzero(seats == s)
        out[r] = features.encode(experts[int(s)], views[int(s)], idx[r], rule)
    return out


__all__ = [
    "ACCUSATION_PIECES",
    "ACCUSATION_SIZE",
    "AccusationFeatures",
    "accusation_layout",
    "encode_by_seat",
    "is_expert",
    "perceive",
    "perception_expert",
]
