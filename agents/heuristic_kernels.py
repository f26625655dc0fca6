"""Compiled kernels of the heuristic player (:mod:`agents.heuristic`): its notebook, its accusation and its
random choices, game by game.

Why: the heuristic player is the opponent of most training runs, so its ``act`` is part of every learner step
(about a third of a vs-heuristic env step, ``scripts/bench_training.py``). Its work per game is tiny; the time
went to two dozen numpy calls per ``act`` over a few hundred games. These loops do the same in one call each.

Each kernel computes exactly what the numpy statement in :class:`agents.heuristic.HeuristicReference`
computes, using the same random numbers of the same ``numpy.random.Generator`` in the same order, so the
player's choices do not change: ``tests/test_heuristic_kernels.py`` plays both side by side.

All code of these kernels lives in this file (numba's cache checks only this file's timestamp); the card and
action constants are literals here, checked against :mod:`cluedo_env.rules` on import. Conventions as in
:mod:`agents.deduction_kernels`: ``KERNEL`` options, no allocation inside a kernel, outputs passed in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

KERNEL = {"cache": True, "nogil": True, "_nrt": False, "error_model": "numpy"}

_C, _W0, _R0 = 21, 6, 12  # cards, first weapon card, first room card
_FIRST = (0, 6, 12)  # first card of each category
_SIZE = (6, 6, 9)  # cards of each category
_START, _MOVE, _SUGGEST, _REFUTE, _POST = 0, 1, 2, 3, 4  # phases (cluedo_env.rules.actions)
_END_TURN, _SUGGEST0, _SHOW0, _ACCUSE0 = 3, 201, 525, 546  # action ids
assert (_C, _W0, _R0) == (NUM_CARDS, WEAPON_CARD0, ROOM_CARD0)
assert (_START, _MOVE, _SUGGEST, _REFUTE, _POST) == (A.START, A.MOVE, A.SUGGEST, A.REFUTE, A.POST)
assert (_END_TURN, _SUGGEST0, _SHOW0, _ACCUSE0) == (A.END_TURN, A.SUGGEST0, A.SHOW0, A.ACCUSE0)

# What each row still needs after :func:`act_kernel` (``need``): nothing, a planned START or MOVE choice
# (agents.planning), a random suggestion or a random card to show (:func:`random_choices_kernel`).
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
                card = _FIRST[cat] + triple[k, cat]
                if hand[g, card]:  # mine: nothing learned about this category
                    continue
                if step == 0:
                    for c in range(_FIRST[cat], _FIRST[cat] + _SIZE[cat]):
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
            for c in range(_FIRST[cat], _FIRST[cat] + _SIZE[cat]):
                if open_[g, c]:
                    count += 1
                    if first < 0:
                        first = c - _FIRST[cat]
            solved = solved and count == 1
            pick = pick * _SIZE[cat] + max(first, 0)  # (s * 6 + w) * 9 + r, argmax's 0 for an empty category
        out[i] = -1
        need[i] = NEED_NONE
        if solved and mask[i, _ACCUSE0 + pick]:
            out[i] = _ACCUSE0 + pick
        elif phase[i] == _START:
            need[i] = NEED_START
        elif phase[i] == _MOVE:
            need[i] = NEED_MOVE
        elif phase[i] == _SUGGEST:
            need[i] = NEED_SUGGEST
        elif phase[i] == _REFUTE:
            need[i] = NEED_REFUTE
        elif phase[i] == _POST:
            out[i] = _END_TURN


@njit(**KERNEL)
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
    return suggest * (_SIZE[0] + _SIZE[1] + (0 if has_board else _SIZE[2])) + _C * refute


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
            code[i] = _random_open(u, at, open_, idx[i], _FIRST[0], _SIZE[0])
            at += _SIZE[0]
    for i in range(n):
        if need[i] == NEED_SUGGEST:
            code[i] = code[i] * _SIZE[1] + _random_open(u, at, open_, idx[i], _FIRST[1], _SIZE[1])
            at += _SIZE[1]
    for i in range(n):
        if need[i] == NEED_SUGGEST:
            if has_board:  # suggestion_room: the room of the first legal suggestion, -1 if none
                room = -1
                for t in range(_SHOW0 - _SUGGEST0):
                    if mask[i, _SUGGEST0 + t]:
                        room = t % _SIZE[2]
                        break
            else:
                room = _random_open(u, at, open_, idx[i], _FIRST[2], _SIZE[2])
                at += _SIZE[2]
            out[i] = _SUGGEST0 + code[i] * _SIZE[2] + room
    for i in range(n):
        if need[i] == NEED_REFUTE:
            best, pick = -1.0, 0
            for c in range(_C):
                v = u[at + c] if mask[i, _SHOW0 + c] else -1.0
                if v > best:
                    best, pick = v, c
            at += _C
            out[i] = _SHOW0 + pick


__all__ = [
    "NEED_MOVE", "NEED_NONE", "NEED_REFUTE", "NEED_START", "NEED_SUGGEST", "act_kernel",
    "draws_needed", "random_choices_kernel", "read_records_kernel",
]  # fmt: skip
