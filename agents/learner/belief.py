"""Belief features: the deducer's notebook as observation pieces, and the notebook's best accusation.

A learned policy sees the game through its observation (``VectorEngine.observe``): its hand, the
history, what was shown to it. Turning that into "which three cards are in the envelope" is a
deduction (agents/knowledge/propagation.py) that a small MLP does not learn from a few million steps. With
belief features on (training config key ``env.belief``), the observation gets the conclusions of
a :class:`cluedo_env.agents.knowledge.notebook.Notebook` kept for the learner's seat, so that "accuse now" and "which
cards are still open" become simple functions of the input. The notebook only reads the seat's
:class:`~cluedo_env.engine.views.PlayerView`, so the features hide what the seat may not know, as the
observation does.

Pieces appended after the engine's observation (int8, 0 or 1; H = P + 1 holders, seat-relative:
holder 0 is the seat itself, holder k the player k seats to its left, holder P the envelope):

==================  ============  ==============================================================
piece               shape         meaning
==================  ============  ==============================================================
belief_holds        (H, 21)       proved: holder h holds card c (the envelope row: c is in it)
belief_lacks        (H, 21)       proved: holder h does not hold card c
belief_category     (3,)          the envelope's suspect / weapon / room is proved
belief_solved       (1,)          all three envelope cards are proved (accusing is safe)
==================  ============  ==============================================================

Size: ``belief_size(P) = 2 * (P + 1) * 21 + 4`` (214 for 4 players).

:meth:`BeliefTracker.best_accusations` is the target of the learner's "accuse" macro action
(``macro_accuse``): of the accusations that are legal now, the triple whose cards are most
likely in the envelope under the notebook's per-card marginals (a proved card has probability 1,
so a solved notebook accuses its solution). It does not decide *when* to accuse: the policy does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from cluedo_env.agents.compiled import KERNEL
from cluedo_env.agents.knowledge.facts import CAT_SLICES, envelope_card, notebook_solved
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.players.base import Agent, sample_legal
from numba import njit

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS


def belief_size(players: int) -> int:
    """Length of the belief features for ``players`` players."""
    return 2 * (players + 1) * NUM_CARDS + 4


def belief_layout(players: int) -> list[tuple[str, tuple[int, ...], int]]:
    """(name, shape, offset) of each piece, offsets from the start of the belief features."""
    H = players + 1
    out, at = [], 0
    for name, shape in (("belief_holds", (H, NUM_CARDS)), ("belief_lacks", (H, NUM_CARDS)),
                        ("belief_category", (3,)), ("belief_solved", (1,))):  # fmt: skip
        out.append((name, shape, at))
        at += int(np.prod(shape))
    return out


# What each piece says, in layout order (docs/observation.md is generated from this).
BELIEF_MEANING = {
    "belief_holds": "proved: holder `h` holds card `c` (row `P`, the envelope: `c` is in it)",
    "belief_lacks": "proved: holder `h` does not hold card `c`",
    "belief_category": "the envelope's suspect / weapon / room is proved",
    "belief_solved": "all three envelope cards are proved (an accusation now is certain)",
}
BELIEF_PIECES = tuple(name for name, _, _ in belief_layout(2))


class BeliefTracker:
    """Deducer notebooks for a batch of games where the tracked seat may differ from game to game.

    ``views[s]`` is seat s's :class:`PlayerView` of one engine. One :class:`Notebook` per seat is
    made on first use; game g is read with the notebook of ``seats[g]`` (the seat given at
    :meth:`reset`). Notebook options default to the deducer's (exact envelope facts once at most 8
    solution hypotheses are left).
    """

    def __init__(self, views: Sequence[PlayerView], seed: int | None = None, **notebook_options) -> None:
        self.views = list(views)
        self.P = self.views[0].num_players
        self.B = self.views[0].batch_size
        self.seed = seed
        self.options = {"exact_triples": 8, **notebook_options}
        self.notebooks: dict[int, Notebook] = {}
        self.seat = np.full(self.B, -1, np.int64)  # (B,) the seat tracked in each game
        E = self.P
        # (P, H) absolute holder for each seat-relative holder (the envelope stays last).
        self._order = np.array([[(s + k) % self.P for k in range(self.P)] + [E] for s in range(self.P)], np.int64)

    @classmethod
    def for_player(cls, current: BeliefTracker | None, view: PlayerView, seed: int | None = None) -> BeliefTracker:
        """The tracker of a player in ``view.seat`` in every game: ``current`` if it already
        follows this view, else a new one with every game started (players call it in reset and act)."""
        if current is not None and current.B == view.batch_size and current.views[0] is view:
            return current
        t = cls([view] * view.num_players, seed=seed)
        t.reset(np.arange(view.batch_size), view.seat)
        return t

    @property
    def size(self) -> int:
        return belief_size(self.P)

    def _notebook(self, s: int) -> Notebook:
        nb = self.notebooks.get(s)
        if nb is None:
            seed = None if self.seed is None else self.seed * 31 + s
            nb = self.notebooks[s] = Notebook(self.B, self.P, s, seed=seed, **self.options)
        return nb

    def _by_seat(self, idx: np.ndarray):
        seats = self.seat[idx]
        if len(seats) and seats.min() < 0:
            raise ValueError(f"games {idx[seats < 0][:5].tolist()} are not tracked: reset them first")
        for s in np.flatnonzero(np.bincount(seats, minlength=self.P)):  # the seats present, in order
            rows = np.flatnonzero(seats == s)
            yield int(s), rows, idx[rows]

    def reset(self, idx: np.ndarray, seats: np.ndarray | int) -> None:
        """Games ``idx`` start anew, tracked for ``seats`` (one per game, or one for all)."""
        idx = np.asarray(idx, np.int64)
        self.seat[idx] = seats
        for s, _, gi in self._by_seat(idx):
            v = self.views[s]
            self._notebook(s).reset(gi, v.hand[gi], v.hand_sizes[gi])

    def update(self, idx: np.ndarray) -> None:
        """Take in what happened in games ``idx`` since the last update."""
        idx = np.asarray(idx, np.int64)
        for s, _, gi in self._by_seat(idx):
            self._notebook(s).update(self.views[s], gi)

    def features(self, idx: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """(n, belief_size) int8 features of games ``idx`` (call :meth:`update` first)."""
        idx = np.asarray(idx, np.int64)
        if out is None:
            out = np.empty((len(idx), self.size), np.int8)
        for s, rows, gi in self._by_seat(idx):  # compiled, one call per seat (statement: tests/references/belief.py)
            nb = self._notebook(s)
            belief_features_kernel(nb.has, nb.no, nb.bad, gi, rows, self._order[s], out)
        return out

    def envelope_probabilities(self, idx: np.ndarray) -> np.ndarray:
        """(n, 21) the notebook's probability that each card is in the envelope (its marginals' envelope row)."""
        idx = np.asarray(idx, np.int64)
        out = np.zeros((len(idx), NUM_CARDS))
        for s, rows, gi in self._by_seat(idx):
            out[rows] = self._notebook(s).marginals(gi)[:, -1]
        return out

    def solved(self, idx: np.ndarray) -> np.ndarray:
        """(n,) bool: the notebook of games ``idx`` proves all three envelope cards (the belief_solved slot)."""
        idx = np.asarray(idx, np.int64)
        out = np.zeros(len(idx), bool)
        for s, rows, gi in self._by_seat(idx):
            out[rows] = self._notebook(s).solved(gi)
        return out

    def envelope_candidates(self, idx: np.ndarray) -> np.ndarray:
        """(n, 3) per category (suspect, weapon, room), the cards the notebook has not ruled out of the
        envelope (1 where the category's envelope card is proved): the possible triples are their product."""
        idx = np.asarray(idx, np.int64)
        out = np.zeros((len(idx), 3), np.int64)
        for s, rows, gi in self._by_seat(idx):
            nb = self._notebook(s)
            has, no = nb.has[gi, nb.E], nb.no[gi, nb.E]  # (k, 21): proved in / proved out of the envelope
            for k, sl in enumerate(CAT_SLICES):
                out[rows, k] = np.where(has[:, sl].any(1), 1, (~no[:, sl]).sum(1))
        return np.maximum(out, 1)  # an inconsistent notebook (every card ruled out) still counts one

    def envelope_unknown(self, idx: np.ndarray) -> np.ndarray:
        """(n,) cards whose envelope status the notebook has not proved (neither in it nor out of it)."""
        idx = np.asarray(idx, np.int64)
        out = np.zeros(len(idx), np.int64)
        for s, rows, gi in self._by_seat(idx):
            nb = self._notebook(s)
            out[rows] = (~(nb.has[gi, nb.E] | nb.no[gi, nb.E])).sum(1)
        return out

    def best_probability(self, idx: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """(n,) the probability :meth:`best_accusations`'s triple is the envelope under the notebook's per-card
        marginals (the product of its three envelope marginals; 1 for a solved notebook). ``legal``: (n, 324)."""
        idx = np.asarray(idx, np.int64)
        s, w, r = A.triple_cards(self.best_accusations(idx, legal))  # card ids
        p = self.envelope_probabilities(idx)
        rows = np.arange(len(idx))
        return p[rows, s] * p[rows, w] * p[rows, r]

    def best_accusations(self, idx: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """(n,) triple index (s * 6 + w) * 9 + r: the legal accusation (``legal`` (n, 324) bool, each
        row with one at least) whose cards are most likely in the envelope (sum of log marginals)."""
        idx = np.asarray(idx, np.int64)
        out = np.zeros(len(idx), np.int64)
        for s, rows, gi in self._by_seat(idx):
            p = self._notebook(s).marginals(gi)[:, -1]  # (k, 21) envelope row
            logp = np.log(np.clip(p, 1e-9, 1.0))
            ls, lw, lr = (logp[:, sl] for sl in CAT_SLICES)
            score = (ls[:, :, None, None] + lw[:, None, :, None] + lr[:, None, None, :]).reshape(len(gi), -1)
            score = np.where(legal[rows], score, -np.inf)
            out[rows] = score.argmax(1)
        return out


class BeliefRandomAgent(Agent):
    """The ablation of the belief-feature learner: its notebook and accusation, no learned play.

    Accuses :meth:`BeliefTracker.best_accusations` as soon as the notebook is solved (where an
    accusation is legal), otherwise plays a uniformly random legal action that is not an
    accusation (squares, suggestions and shown cards at random). What a trained policy wins
    above this player is what it learned beyond "accuse when the deducer would".
    """

    name = "belief_random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.tracker: BeliefTracker | None = None

    def _ensure(self, view: PlayerView) -> BeliefTracker:
        self.tracker = BeliefTracker.for_player(self.tracker, view, self.seed)
        return self.tracker

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        self._ensure(view).reset(np.asarray(idx, np.int64), view.seat)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        t = self._ensure(view)
        t.update(idx)
        mask = view.legal_action_mask_of(idx)
        legal_acc = mask[:, A.ACCUSE0 :]
        other = mask.copy()
        other[:, A.ACCUSE0 :] = False
        solved = t.solved(idx)
        accuse = (solved & legal_acc.any(1)) | ~other.any(1)
        out = np.empty(len(idx), np.int64)
        rows = np.flatnonzero(~accuse)
        out[rows] = sample_legal(other[rows], self.rng)
        rows = np.flatnonzero(accuse)
        if len(rows):
            out[rows] = A.ACCUSE0 + t.best_accusations(idx[rows], legal_acc[rows])
        return out


__all__ = [
    "BELIEF_MEANING", "BELIEF_PIECES", "BeliefRandomAgent", "BeliefTracker", "belief_layout",
    "belief_size",
]  # fmt: skip


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**KERNEL)
def belief_features_kernel(
    has: np.ndarray, no: np.ndarray, bad: np.ndarray, gi: np.ndarray, rows: np.ndarray, order: np.ndarray,
    out: np.ndarray,
) -> None:  # fmt: skip
    """:meth:`cluedo_env.agents.learner.belief.BeliefTracker.features` of one seat's notebook: for games ``gi`` (k,),
    into rows
    ``rows``
    of ``out`` (n, 2 H 21 + 4) int8, the cells ``has`` then ``no`` (B, H, 21) with holders in ``order`` (H,), then
    per category whether its envelope card is proved, then "solved" (three proved and no contradiction)."""
    H = order.shape[0]
    E = has.shape[1] - 1
    hw = H * NUM_CARDS
    for j in range(gi.shape[0]):
        g, r = gi[j], rows[j]
        for a in range(H):
            h = order[a]
            for c in range(NUM_CARDS):
                out[r, a * NUM_CARDS + c] = has[g, h, c]
                out[r, hw + a * NUM_CARDS + c] = no[g, h, c]
        for cat in range(3):
            out[r, 2 * hw + cat] = envelope_card(has, g, E, cat) >= 0
        out[r, 2 * hw + 3] = notebook_solved(has, bad, g, E)
