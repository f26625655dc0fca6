"""Reading a seat's records into its notebook: cells and clauses from each suggestion's answer.

The compiled intake of :meth:`cluedo_env.agents.knowledge.notebook.Notebook.update`: every record the seat has not read
yet (R-G6, R-G7: a card shown to this seat, a pass, a card shown to someone else) becomes has / has-not cells
or a "holds at least one of" clause; wrong accusations become envelope clauses.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import KERNEL
from cluedo_env.agents.knowledge.facts import Facts
from cluedo_env.agents.knowledge.types import IntakeScratch, RecordRows, Tallies
from numba import njit

from cluedo_env.rules.cards import ROOM_CARD0, WEAPON_CARD0

_PASSED, _HIDDEN = -2, -3  # a record's response: could not refute; showed a card this seat did not see


@njit(**KERNEL)
def clause_slots_needed(
    game: np.ndarray, is_acc: np.ndarray, response: np.ndarray, cl_live: np.ndarray, count: np.ndarray
) -> int:
    """The clause slots per game :func:`add_records_kernel` needs (live clauses plus new hidden refutations),
    at most over the games of the records; 0 when no record has a hidden refutation. Scratch ``count`` (B,)
    int64 (new hidden refutations per game; one pass over the records instead of one per record)."""
    m, P = response.shape
    for r in range(m):
        count[game[r]] = 0
    for r in range(m):
        if not is_acc[r]:
            for s in range(P):
                count[game[r]] += response[r, s] == _HIDDEN
    need = 0
    for r in range(m):
        if is_acc[r]:
            continue
        for s in range(P):
            if response[r, s] == _HIDDEN:
                g = game[r]
                live = 0
                for k in range(cl_live.shape[1]):
                    live += cl_live[g, k]
                need = max(need, live + count[g])
                break
    return need


@njit(**KERNEL)
def add_records_kernel(
    me: int,
    rec: RecordRows,
    book: Facts,
    tallies: Tallies,
    scratch: IntakeScratch,
) -> None:
    """:func:`tests.references.notebook.add_records_reference` on the notebook's arrays, record by record.

    Records ``rec`` (m of them, in the order the view gives them) as :class:`cluedo_env.engine.views.Records`
    arrays; the notebook's facts ``book`` and ``tallies`` are updated in place (``cl_*`` must have room: see
    :func:`clause_slots_needed`). A game's live clauses move to the front of its row (in order) before
    its first new clause is put after them, as the reference does. Scratch: ``compacted`` (B,) bool, False
    on entry and left so; ``holder`` (K,), ``cards`` (K, 3), ``live`` (K,) of the clause arrays' dtypes.
    """
    game, is_acc, player, triple, correct, response = rec
    has, no, _, cl_holder, cl_cards, cl_live, acc_cards, acc_live = book
    shown_by_me, shown_to, unrefuted, named = tallies
    compacted, tmp_holder, tmp_cards, tmp_live = scratch
    m, P = response.shape
    K = cl_live.shape[1]
    for r in range(m):
        if is_acc[r]:
            continue
        g = game[r]
        p = player[r]
        c0, c1, c2 = triple[r, 0], WEAPON_CARD0 + triple[r, 1], ROOM_CARD0 + triple[r, 2]
        shows = 0
        for s in range(P):
            x = response[r, s]
            if x == _PASSED:
                no[g, s, c0] = True
                no[g, s, c1] = True
                no[g, s, c2] = True
            elif x >= 0:
                shows += 1
                if p == me:
                    has[g, s, x] = True
                elif s == me:
                    shown_by_me[g, p, x] = True
            elif x == _HIDDEN:
                shows += 1
                if not compacted[g]:  # live clauses first, then the others, each in order (a stable sort)
                    j = 0
                    for live in (True, False):
                        for k in range(K):
                            if cl_live[g, k] == live:
                                tmp_holder[j] = cl_holder[g, k]
                                tmp_cards[j, 0] = cl_cards[g, k, 0]
                                tmp_cards[j, 1] = cl_cards[g, k, 1]
                                tmp_cards[j, 2] = cl_cards[g, k, 2]
                                tmp_live[j] = live
                                j += 1
                    for k in range(K):
                        cl_holder[g, k] = tmp_holder[k]
                        cl_cards[g, k, 0] = tmp_cards[k, 0]
                        cl_cards[g, k, 1] = tmp_cards[k, 1]
                        cl_cards[g, k, 2] = tmp_cards[k, 2]
                        cl_live[g, k] = tmp_live[k]
                    compacted[g] = True
                for k in range(K):
                    if not cl_live[g, k]:
                        cl_holder[g, k] = s
                        cl_cards[g, k, 0] = c0
                        cl_cards[g, k, 1] = c1
                        cl_cards[g, k, 2] = c2
                        cl_live[g, k] = True
                        break
        shown_to[g, p] += shows
        if shows == 0:
            unrefuted[g, p] += 1
        named[g, p, c0] = True
        named[g, p, c1] = True
        named[g, p, c2] = True
    for r in range(m):
        compacted[game[r]] = False
        if is_acc[r] and not correct[r] and player[r] != me:
            g, p = game[r], player[r]
            acc_cards[g, p, 0] = triple[r, 0]
            acc_cards[g, p, 1] = WEAPON_CARD0 + triple[r, 1]
            acc_cards[g, p, 2] = ROOM_CARD0 + triple[r, 2]
            acc_live[g, p] = True


@njit(**KERNEL)
def intake_kernel(
    me: int,
    idx: np.ndarray,
    start: np.ndarray,
    limit: np.ndarray,
    env: np.ndarray,
    rec: RecordRows,
    book: Facts,
    tallies: Tallies,
    scratch: IntakeScratch,
    processed: np.ndarray,
    changed: np.ndarray,
) -> int:
    """:meth:`cluedo_env.agents.knowledge.notebook.Notebook.update` up to the propagation, in one call: the records
    (:func:`add_records_kernel`, the same arguments), then per game ``idx[i]`` the records taken in (``processed``
    (B,) int64 raised to ``limit[i]``), the envelope where this seat has seen it (``env`` (n, 3) card ids, -1:
    not seen; R-A2), and the games to propagate, those with new records (``limit > start``, (n,) int64) or the
    envelope seen, into ``changed`` (n,) int64 sorted and distinct (``np.unique``); returns their number."""
    add_records_kernel(me, rec, book, tallies, scratch)
    has = book.has
    E = has.shape[1] - 1
    m = 0
    for i in range(idx.shape[0]):
        g = idx[i]
        if limit[i] > processed[g]:
            processed[g] = limit[i]
        seen = env[i, 0] >= 0
        if seen:
            for k in range(3):
                has[g, E, env[i, k]] = True
        if limit[i] > start[i] or seen:
            changed[m] = g
            m += 1
    for j in range(1, m):  # sorted (players are asked about sorted games: nothing moves then)
        x = changed[j]
        t = j - 1
        while t >= 0 and changed[t] > x:
            changed[t + 1] = changed[t]
            t -= 1
        changed[t + 1] = x
    d = 0
    for j in range(m):  # distinct
        if d == 0 or changed[j] != changed[d - 1]:
            changed[d] = changed[j]
            d += 1
    return d
