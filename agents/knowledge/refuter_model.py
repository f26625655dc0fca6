"""What a strong refuter's choice of card says about the cards it did not show.

A deducer or an expert that refutes our suggestion shows (:mod:`cluedo_env.agents.players.refutation`, R-G6):

1. a named card it has already shown us, if it holds one (we learn nothing new), else
2. the named card whose exclusion from the envelope teaches us fewest bits: one of the category
   where we have the most candidates left (rooms, 9 cards, usually).

So when such a player shows us a *new* card of a category where we have clearly fewer
candidates left than in the category of another named card ``d``, it would have shown ``d``
had it held it: it does not hold ``d``. The sound notebook ignores this (the card shown is
treated as uninformative); :class:`RefuterModel` collects these "holds not" facts per game, refuter
and card (``lacks``), to be *assumed* in probabilities (:mod:`cluedo_env.agents.knowledge.opponent_model`), never to
prove anything.

The candidates the refuter counts for us are estimated as it does
(:func:`cluedo_env.agents.players.refutation.suggester_candidates`), from public information: category size, minus our
hand's expected share of the category (the refuter does not know our hand), minus the cards it
showed us there, minus a third of every other refutation we received. A category counts as
"clearly" ahead when it leads by ``margin`` candidates. A refuter that breaks rule 1 (shows a new
card while holding a named card it had shown us before) does not play this way: it is marked
``deviant`` and its facts are not used.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import INLINE, KERNEL, EntryPoint
from cluedo_env.agents.knowledge.facts import CATEGORY_SIZE, category_of
from cluedo_env.agents.knowledge.types import RefuterState
from numba import njit

from cluedo_env.engine.views import PlayerView, Records
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0


class RefuterModel:
    """Per game: cards shown to this seat by each player, and the facts their choices imply."""

    def __init__(self, batch_size: int, players: int, seat: int, margin: float = 1.0) -> None:
        B, P = batch_size, players
        self.B, self.P, self.seat, self.margin = B, P, seat, margin
        self.processed = np.zeros(B, np.int64)
        self.shown = np.zeros((B, P, NUM_CARDS), bool)  # cards each player has shown us
        self.received = np.zeros(B, np.int64)  # refutations we received
        self.lacks = np.zeros((B, P, NUM_CARDS), bool)  # assumed: the player does not hold the card
        self.deviant = np.zeros((B, P), bool)  # refuted against rule 1 at least once
        self.state = RefuterState(self.shown, self.received, self.lacks, self.deviant)  # as the kernel takes them
        # typed once (cluedo_env.agents.compiled): a tuple is slow to type
        self._update = EntryPoint(refuter_update_kernel)

    def reset(self, idx: np.ndarray) -> None:
        self.processed[idx] = 0
        self.shown[idx] = False
        self.received[idx] = 0
        self.lacks[idx] = False
        self.deviant[idx] = False

    def _new_records(self, view: PlayerView, idx: np.ndarray) -> Records:
        """The complete records of games ``idx`` not read yet (the one being refuted is incomplete: left for later)."""
        limit = view.hist_len[idx].astype(np.int64) - (view.phase[idx] == A.REFUTE)
        rec = view.records_between(idx, np.minimum(self.processed[idx], limit), limit)
        self.processed[idx] = np.maximum(self.processed[idx], limit)
        return rec

    def update(self, view: PlayerView, idx: np.ndarray, shown_by_me: np.ndarray | None = None) -> None:
        """Take in the complete records of games ``idx`` not yet seen (our suggestions only).

        ``shown_by_me`` (B, P, 21): the cards we showed each player (the refuter knows we hold them).
        Compiled (:func:`cluedo_env.agents.knowledge.refuter_model.refuter_update_kernel`, record by record);
        :func:`tests.references.refuter_model.update_reference` is the numpy statement (the tests check both leave the
        same arrays).
        """
        rec = self._new_records(view, np.asarray(idx, np.int64))
        if len(rec.game) == 0:
            return
        shown = np.zeros((0, self.P, NUM_CARDS), bool) if shown_by_me is None else shown_by_me
        self._update(
            int(self.seat), rec, np.ascontiguousarray(shown, bool), view.hand_sizes[:, self.seat].astype(np.float64),
            float(self.margin), self.state,
        )  # fmt: skip


__all__ = ["RefuterModel"]


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**INLINE)
def _category_counts(cells: np.ndarray, g: int, k: int) -> tuple[float, float, float]:
    """How many cards of each category ``cells[g, k]`` (21,) bool marks, as floats (exact)."""
    n0 = n1 = n2 = 0.0
    for d in range(NUM_CARDS):
        if cells[g, k, d]:
            t = category_of(d)
            if t == 0:
                n0 += 1.0
            elif t == 1:
                n1 += 1.0
            else:
                n2 += 1.0
    return n0, n1, n2


@njit(**KERNEL)
def refuter_update_kernel(
    seat: int, rec: Records, shown_by_me: np.ndarray, hand: np.ndarray, margin: float, state: RefuterState
) -> None:
    """:func:`tests.references.refuter_model.update_reference` (the numpy statement) record by record: the
    records ``rec`` (``game`` (m,), ``is_accusation``, ``player``, ``triple`` (m, 3) category indices, ``response``
    (m, P), in order within each game) of this ``seat``'s suggestions update ``state`` in place: ``shown``,
    ``lacks`` (B, P, 21) bool, ``received`` (B,) int64 and ``deviant`` (B, P) bool. ``shown_by_me`` (B, P, 21)
    bool (shape (0, P, 21): none), ``hand`` (B,) float64 this seat's hand size. The same float operations, in the
    same order, as the statement, so the same comparisons."""
    game, is_acc, player, triple, response = rec.game, rec.is_accusation, rec.player, rec.triple, rec.response
    shown, received, lacks, deviant = state
    P = response.shape[1]
    have_mine = shown_by_me.shape[0] > 0
    for j in range(game.shape[0]):
        if is_acc[j] or player[j] != seat:
            continue
        g = game[j]
        cards = (np.int64(triple[j, 0]), WEAPON_CARD0 + np.int64(triple[j, 1]), ROOM_CARD0 + np.int64(triple[j, 2]))
        count = 0
        for k in range(P):
            c = np.int64(response[j, k])
            if c < 0:
                continue
            count += 1
            # What refuter k expects of our hand per category: what we showed it, the rest pro rata.
            m0, m1, m2 = _category_counts(shown_by_me, g, k) if have_mine else (0.0, 0.0, 0.0)
            rest = hand[g] - (m0 + m1 + m2)
            share0 = m0 + rest * CATEGORY_SIZE[0] / NUM_CARDS
            share1 = m1 + rest * CATEGORY_SIZE[1] / NUM_CARDS
            share2 = m2 + rest * CATEGORY_SIZE[2] / NUM_CARDS
            new = not shown[g, k, c]
            named_seen = shown[g, k, cards[0]] or shown[g, k, cards[1]] or shown[g, k, cards[2]]
            if new and named_seen:
                deviant[g, k] = True
            if new and not named_seen:
                s0, s1, s2 = _category_counts(shown, g, k)
                others = max(received[g] - (s0 + s1 + s2), 0.0) / 3.0  # exact counts: the same number
                left = (
                    CATEGORY_SIZE[0] - share0 - s0 - others,
                    CATEGORY_SIZE[1] - share1 - s1 - others,
                    CATEGORY_SIZE[2] - share2 - s2 - others,
                )
                bar = left[category_of(c)] + margin
                for d in cards:
                    if d != c and left[category_of(d)] >= bar:
                        lacks[g, k, d] = True
            shown[g, k, c] = True
        received[g] += count
