"""Random legal play, compiled: a uniformly random legal action per game, and the ``full`` benchmark player.

Both draw the rank of an action among the game's legal ones and find it in the legal-action mask
(:func:`action_at_rank`), so the choice is uniform over exactly the actions the engine allows, from each game's own
``sampler`` stream (or the caller's uniforms): a game's draws never depend on the other games.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cluedo_env.engine.compile_options import HELPER, INLINE, KERNEL
from cluedo_env.engine.kernels import legal_count, uniform  # (imported first: the engine's cache is made fresh)
from cluedo_env.engine.numba_internals import load_word, prefetch
from cluedo_env.engine.state import ALL_TRIPLES
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_ROOMS

_ROLL, _END, _MOVE, _REFUTE = A.ROLL, A.END_TURN, A.MOVE, A.REFUTE
_MOVE0, _SUGGEST0, _SHOW0, _ACCUSE0 = A.MOVE0, A.SUGGEST0, A.SHOW0, A.ACCUSE0
_ONE, _S56 = np.uint64(1), np.uint64(56)
_BYTE_SUM = np.uint64(0x0101010101010101)  # w * _BYTE_SUM >> 56: the sum of w's eight bytes (if it is below 256)


@njit(**INLINE)
def _nth_true(row: np.ndarray, lo: int, hi: int, rank: int) -> int:
    """Index of the ``rank``-th True of ``row[lo:hi]`` (0-based), as an index into ``row`` (-1 if there are fewer).

    Eight bools at a time: a word's number of Trues is the sum of its bytes (each 0 or 1), so whole words are
    skipped with one load and one multiply, and only the word holding the answer is read byte by byte. (A byte
    loop over the 197 destinations, a branch on each, was most of the samplers' time.) Reads up to 7 bytes past
    ``hi``, which the mask row has after every block but the last (callers pass ``hi <= row.size - 7``)."""
    for a in range(lo, hi, 8):
        word = load_word(row, a)
        if hi - a < 8:
            word &= (_ONE << np.uint64(8 * (hi - a))) - _ONE
        n = np.int64((word * _BYTE_SUM) >> _S56)
        if rank < n:
            for x in range(a, a + 8):
                if row[x]:
                    if rank == 0:
                        return x
                    rank -= 1
        rank -= n
    return -1


@njit(**HELPER)
def _triple_at(set_id: int, rank: int) -> int:
    """The ``rank``-th triple of a set: a room set lists (suspect, weapon) pairs in order."""
    return rank if set_id == ALL_TRIPLES else rank * NUM_ROOMS + set_id


@njit(**HELPER)
def action_at_rank(s, tables, b: int, rank: int) -> int:
    """The ``rank``-th legal action of game ``b`` in action-id order."""
    n = s.n_special[b]
    if rank < n:
        return _nth_true(s.mask[b], 0, _MOVE0, rank)
    rank -= n
    n = s.n_move[b]
    if rank < n:
        return _nth_true(s.mask[b], _MOVE0, _SUGGEST0, rank)
    rank -= n
    n = tables.triple_count[s.suggest_set[b] + 1]
    if rank < n:
        return _SUGGEST0 + _triple_at(s.suggest_set[b], rank)
    rank -= n
    n = s.n_show[b]
    if rank < n:
        return _nth_true(s.mask[b], _SHOW0, _ACCUSE0, rank)
    rank -= n
    return _ACCUSE0 + _triple_at(s.accuse_set[b], rank)


SAMPLE_AHEAD = 8  # games ahead whose mask rows the samplers ask the CPU to load


@njit(**INLINE)
def _prefetch_mask(s, b: int) -> None:
    """Ask for the lines of game ``b``'s mask row that sampling reads: the special actions, and the destinations
    (phase MOVE) or the cards to show (phase REFUTE). Why: the rows are 870 bytes apart and each sampler reads a
    different part of each, so the hardware does not guess them, and every game's first read missed the caches."""
    row = s.mask[b]
    prefetch(row, 0)
    if s.phase[b] == _MOVE:
        for x in range(64, _SUGGEST0, 64):
            prefetch(row, x)
    elif s.phase[b] == _REFUTE:
        prefetch(row, _SHOW0)
        prefetch(row, _ACCUSE0 - 1)


@njit(**KERNEL)
def sample_uniform(s, tables, u: np.ndarray, out: np.ndarray) -> None:
    """A uniformly random legal action per game (-1 when over); ``u``: (B,) uniforms, or empty to
    draw them from each game's ``sampler`` stream."""
    n = out.shape[0]
    for b in range(n):
        if b + SAMPLE_AHEAD < n:
            _prefetch_mask(s, b + SAMPLE_AHEAD)
        total = legal_count(s, tables, b)
        if total == 0:
            out[b] = -1
            continue
        x = u[b] if u.shape[0] else uniform(s.sampler, b)
        out[b] = action_at_rank(s, tables, b, min(int(x * total), total - 1))


@njit(**KERNEL)
def sample_full_game(s, tables, keep_accusation: float, out: np.ndarray) -> None:
    """The ``full`` benchmark player: uniform legal play, except that a drawn accusation is kept
    only with probability ``keep_accusation``; otherwise the player ends its turn (END_TURN when
    legal, else ROLL, else a uniform legal non-accusation). Games then last hundreds of decisions
    (movement, suggestions, refutations), as users' games do, instead of ending in a few random
    accusations."""
    n = out.shape[0]
    for b in range(n):
        if b + SAMPLE_AHEAD < n:
            _prefetch_mask(s, b + SAMPLE_AHEAD)
        total = legal_count(s, tables, b)
        if total == 0:
            out[b] = -1
            continue
        a = action_at_rank(s, tables, b, min(int(uniform(s.sampler, b) * total), total - 1))
        if a >= _ACCUSE0 and uniform(s.sampler, b) >= keep_accusation:
            n_other = total - tables.triple_count[s.accuse_set[b] + 1]
            if s.mask[b, _END]:
                a = _END
            elif s.mask[b, _ROLL]:
                a = _ROLL
            elif n_other > 0:
                a = action_at_rank(s, tables, b, min(int(uniform(s.sampler, b) * n_other), n_other - 1))
        out[b] = a


__all__ = ["SAMPLE_AHEAD", "action_at_rank", "sample_full_game", "sample_uniform"]
