"""The heuristic player: a detective's notebook, batched over games.

For every game the notebook keeps which of the 21 cards may still be in the envelope
("open"). It learns only what its seat may know (:class:`cluedo_env.engine.views.PlayerView`):

* its own hand is crossed off (R-S6);
* a card shown to it is crossed off (R-G6, R-G7);
* a suggestion of its own that nobody could refute: each named card it does not hold
  is in the envelope (no other player holds it), so that category is solved.

(``use_unrefuted=False`` turns the last rule off: that notebook can loop forever between
rooms whose cards are all in the envelope, since it never learns anything there.)
It does no further reasoning (no "could not refute" facts about others, no hand sizes,
no clauses): that is the deducer's job (agents/players/deducer.py).

Play:

* START (board): accuse if solved and the accusation is open (R-T4; with
  ``accusation_in_room`` only from the solution room), otherwise roll, take the passage or
  stay, toward the nearest room whose card is still open (agents/planning/movement.py);
* MOVE: the destination with the best value per turn toward open rooms;
* SUGGEST: the current room (or a random open room without a board), with a suspect and
  a weapon chosen at random among the open ones; an accusation instead when solved and
  the variant allows it here (R-G8 ``accuse_after_suggestion=false``, R-G2 optional);
* REFUTE: shows one of the legal cards at random;
* POST: accuses when exactly one candidate is left in each category, else ends the turn.

Every action is checked against the legal mask; an illegal choice (a bug) falls back to
a random legal action and is counted in ``fallbacks`` so tests can insist on zero.

The notebook, the accusation and the random choices are compiled (the kernels at the end of this module), the moves
are :mod:`cluedo_env.agents.planning.movement`'s; :class:`tests.references.heuristic.HeuristicReference` is the same
player in
numpy, the readable statement that the tests play against it decision by decision.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import INLINE, KERNEL
from cluedo_env.agents.knowledge.facts import CATEGORY_COUNT, FIRST_OF
from cluedo_env.agents.planning.movement import choose_moves, turn_start_choice
from cluedo_env.agents.players.base import Agent, replace_illegal
from numba import njit

from cluedo_env.engine.views import PlayerView, Records
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0


class HeuristicAgent(Agent):
    """Crosses off cards, walks to open rooms, suggests open cards, accuses when one candidate per category is left."""

    name = "heuristic"

    def __init__(self, seed: int | None = None, use_unrefuted: bool = True) -> None:
        self.rng = np.random.default_rng(seed)
        self.use_unrefuted = use_unrefuted
        self.open: np.ndarray = np.zeros((0, NUM_CARDS), bool)  # (B, 21) may be in the envelope
        self.hand: np.ndarray = np.zeros((0, NUM_CARDS), bool)  # (B, 21) own cards (R-S6), read at reset
        self.seen: np.ndarray = np.zeros(0, np.int64)  # (B,) history records already read
        self.fallbacks = 0  # illegal choices replaced by a random legal action (should stay 0)

    # ------------------------------------------------------------------ notebook
    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        B = view.batch_size
        if self.open.shape[0] != B:
            self.open = np.ones((B, NUM_CARDS), bool)
            self.hand = np.zeros((B, NUM_CARDS), bool)
            self.seen = np.zeros(B, np.int64)
        idx = np.asarray(idx, np.int64)
        self.hand[idx] = view.hand[idx]
        self.open[idx] = ~self.hand[idx]
        self.seen[idx] = 0

    def _update(self, view: PlayerView, idx: np.ndarray) -> None:
        """Read the new history records of games ``idx`` into the notebook.

        Only the records of games ``idx`` are read (as :meth:`cluedo_env.agents.knowledge.notebook.Notebook.update`
        does); the
        other games' records wait for their seat's next turn to act there, and give the same notebook then.
        """
        hist_len = view.hist_len[idx]
        rec = view.records_between(idx, self.seen[idx], hist_len)
        self.seen[idx] = hist_len
        self._read(view, rec)

    def _read(self, view: PlayerView, rec: Records) -> None:
        """Cross off the cards the records show this seat, and solve the categories of its unrefuted suggestions
        (compiled: :func:`read_records_kernel`)."""
        read_records_kernel(view.seat, rec.game, rec.is_accusation, rec.player, rec.triple, rec.response, self.hand,
                            self.open, self.use_unrefuted)  # fmt: skip

    def room_value(self, idx: np.ndarray) -> np.ndarray:
        """(n, 9) 1.0 for each room whose card is still open."""
        return self.open[idx, ROOM_CARD0:].astype(np.float64)

    # -------------------------------------------------------------------- acting
    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        n = len(idx)
        if n == 0:
            return np.zeros(0, np.int64)
        self._update(view, idx)
        mask = view.legal_action_mask_of(idx)
        phase = view.phase[idx]
        out, need = np.empty(n, np.int64), np.empty(n, np.int8)
        act_kernel(idx, phase, mask, self.open, out, need)  # accusations, END_TURN in POST; what is left to do
        sel = np.flatnonzero(need == NEED_START)
        if len(sel):
            out[sel] = turn_start_choice(view, idx[sel], self.room_value(idx[sel]), mask=mask[sel])
        sel = np.flatnonzero(need == NEED_MOVE)
        if len(sel):
            out[sel] = choose_moves(view, idx[sel], self.room_value(idx[sel]), mask=mask[sel], rng=self.rng)
        board = view.config.has_board
        u = self.rng.random(draws_needed(need, board))  # suggestions' and refutations' random numbers
        random_choices_kernel(u, idx, need, mask, self.open, out, board, np.empty(n, np.int64))
        if type(self)._suggested is not HeuristicAgent._suggested:
            sel = np.flatnonzero(need == NEED_SUGGEST)
            self._suggested(idx[sel], out[sel] - A.SUGGEST0)
        self.fallbacks += replace_illegal(out, mask, self.rng)
        return out

    def _suggested(self, idx: np.ndarray, triple: np.ndarray) -> None:
        """Called with the triple indices the player just chose to suggest in games ``idx`` (a hook for subclasses)."""


__all__ = ["HeuristicAgent"]


# ---------------------------------------------------------------------------------------------- compiled kernels
# What each row still needs after :func:`act_kernel` (``need``): nothing, a planned START or MOVE choice
# (cluedo_env.agents.planning.movement), a random suggestion or a random card to show (:func:`random_choices_kernel`).
NEED_NONE, NEED_START, NEED_MOVE, NEED_SUGGEST, NEED_REFUTE = 0, 1, 2, 3, 4


@njit(**KERNEL)
def read_records_kernel(
    seat: int,
    game: np.ndarray,
    is_accusation: np.ndarray,
    player: np.ndarray,
    triple: np.ndarray,
    response: np.ndarray,
    hand: np.ndarray,
    open_: np.ndarray,
    use_unrefuted: bool,
) -> None:
    """Cross off, in ``open_`` (B, 21) bool, the cards shown to ``seat`` in its own suggestions among the records
    (a :class:`cluedo_env.engine.views.Records`' arrays); with ``use_unrefuted``, a suggestion of its own that
    nobody refuted solves each category whose named card is not in ``hand`` (B, 21) bool.

    In the reference's order: every shown card first, then per category every unrefuted record's "cross off the
    category", then every one's "its card stays open" (numpy's fancy assignments over all records at once)."""
    m = game.shape[0]
    P = response.shape[1]
    for k in range(m):
        if is_accusation[k] or player[k] != seat:
            continue
        for p in range(P):
            if response[k, p] >= 0:
                open_[game[k], response[k, p]] = False
    if not use_unrefuted:
        return
    for cat in range(3):
        for step in range(2):  # 0: cross off the category; 1: the named card stays open
            for k in range(m):
                if is_accusation[k] or player[k] != seat:
                    continue
                nobody = True
                for p in range(P):
                    if response[k, p] >= 0:
                        nobody = False
                if not nobody:
                    continue
                g = game[k]
                card = FIRST_OF[cat] + triple[k, cat]
                if hand[g, card]:  # mine: nothing learned about this category
                    continue
                if step == 0:
                    for c in range(FIRST_OF[cat], FIRST_OF[cat] + CATEGORY_COUNT[cat]):
                        open_[g, c] = False
                else:
                    open_[g, card] = True


@njit(**KERNEL)
def act_kernel(idx: np.ndarray, phase: np.ndarray, mask: np.ndarray, open_: np.ndarray, out: np.ndarray,
               need: np.ndarray) -> None:  # fmt: skip
    """The choices that need no planning and no random number, for games ``idx`` (n,) in ``phase`` (n,) with legal
    ``mask`` (n, 870): an accusation where one open card is left per category and accusing it is legal; END_TURN
    in POST; else -1 in ``out`` (n,), with ``need`` (n,) saying what the row still needs."""
    for i in range(idx.shape[0]):
        g = idx[i]
        solved = True
        pick = 0
        for cat in range(3):
            count, first = 0, -1
            for c in range(FIRST_OF[cat], FIRST_OF[cat] + CATEGORY_COUNT[cat]):
                if open_[g, c]:
                    count += 1
                    if first < 0:
                        first = c - FIRST_OF[cat]
            solved = solved and count == 1
            pick = pick * CATEGORY_COUNT[cat] + max(first, 0)  # (s * 6 + w) * 9 + r, argmax's 0 for an empty category
        out[i] = -1
        need[i] = NEED_NONE
        if solved and mask[i, A.ACCUSE0 + pick]:
            out[i] = A.ACCUSE0 + pick
        elif phase[i] == A.START:
            need[i] = NEED_START
        elif phase[i] == A.MOVE:
            need[i] = NEED_MOVE
        elif phase[i] == A.SUGGEST:
            need[i] = NEED_SUGGEST
        elif phase[i] == A.REFUTE:
            need[i] = NEED_REFUTE
        elif phase[i] == A.POST:
            out[i] = A.END_TURN


@njit(**INLINE)
def _random_open(u: np.ndarray, at: int, open_: np.ndarray, g: int, first: int, size: int) -> int:
    """``_random_true``: one uniform number per card of the category (``u[at : at + size]``, all used), the largest
    open one wins; 0 if none is open."""
    best, pick = -1.0, 0
    for c in range(size):
        v = u[at + c] if open_[g, first + c] else -1.0
        if v > best:
            best, pick = v, c
    return pick


def draws_needed(need: np.ndarray, has_board: bool) -> int:
    """How many uniform numbers :func:`random_choices_kernel` uses for rows ``need``: 6 + 6 (+ 9 without a board)
    per suggestion, 21 per refutation."""
    suggest = int(np.count_nonzero(need == NEED_SUGGEST))
    refute = int(np.count_nonzero(need == NEED_REFUTE))
    per_suggestion = CATEGORY_COUNT[0] + CATEGORY_COUNT[1] + (0 if has_board else CATEGORY_COUNT[2])
    return suggest * per_suggestion + NUM_CARDS * refute


@njit(**KERNEL)
def random_choices_kernel(u: np.ndarray, idx: np.ndarray, need: np.ndarray, mask: np.ndarray, open_: np.ndarray,
                          out: np.ndarray, has_board: bool, code: np.ndarray) -> None:  # fmt: skip
    """The random choices of the rows ``need`` marks, from the uniform numbers ``u`` (:func:`draws_needed` of them,
    drawn at once by the caller: passing a ``Generator`` to a kernel costs ~20 us a call) used in the reference's
    order of draws: every NEED_SUGGEST row's suspect, then their weapons, then (no board) their rooms; then every
    NEED_REFUTE row's card. ``code`` (n,) scratch.

    SUGGEST: a random open suspect and weapon; the room the mask's suggestions name on a board (R-G1), a random
    open room without one. REFUTE: a random legal card to show."""
    n = idx.shape[0]
    at = 0
    for i in range(n):
        if need[i] == NEED_SUGGEST:
            code[i] = _random_open(u, at, open_, idx[i], FIRST_OF[0], CATEGORY_COUNT[0])
            at += CATEGORY_COUNT[0]
    for i in range(n):
        if need[i] == NEED_SUGGEST:
            code[i] = code[i] * CATEGORY_COUNT[1] + _random_open(u, at, open_, idx[i], FIRST_OF[1], CATEGORY_COUNT[1])
            at += CATEGORY_COUNT[1]
    for i in range(n):
        if need[i] == NEED_SUGGEST:
            if has_board:  # suggestion_room: the room of the first legal suggestion, -1 if none
                room = -1
                for t in range(A.SHOW0 - A.SUGGEST0):
                    if mask[i, A.SUGGEST0 + t]:
                        room = t % CATEGORY_COUNT[2]
                        break
            else:
                room = _random_open(u, at, open_, idx[i], FIRST_OF[2], CATEGORY_COUNT[2])
                at += CATEGORY_COUNT[2]
            out[i] = A.SUGGEST0 + code[i] * CATEGORY_COUNT[2] + room
    for i in range(n):
        if need[i] == NEED_REFUTE:
            best, pick = -1.0, 0
            for c in range(NUM_CARDS):
                v = u[at + c] if mask[i, A.SHOW0 + c] else -1.0
                if v > best:
                    best, pick = v, c
            at += NUM_CARDS
            out[i] = A.SHOW0 + pick


__all__ = [
    "NEED_MOVE", "NEED_NONE", "NEED_REFUTE", "NEED_START", "NEED_SUGGEST", "act_kernel",
    "draws_needed", "random_choices_kernel", "read_records_kernel",
]  # fmt: skip
