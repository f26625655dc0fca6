"""What an opponent's own suggestions say about its hand, if it plays naively.

A naive player (:class:`cluedo_env.agents.players.heuristic.HeuristicAgent`,
:class:`cluedo_env.agents.players.notebook_player.NotebookAgent`)
only ever names cards that are still *open* in its notebook, and its own cards are crossed off
from the start (R-S6). So it never names a card it holds, except the room on the board, which
is the one it stands in (R-G1). Every suggestion of such a player says that it holds none of
the suspect and weapon it named (and, in the card game, the room): two or three "has-not"
facts per suggestion, which a sound notebook ignores.

A strong player (the deducer, the expert) names its own cards on purpose ("blanks", to isolate
a category), so the model must not be applied to it. A player counts as naive until it has
named a card we know it holds (:func:`naive_players`); that is also how
:meth:`cluedo_env.agents.players.expert.ExpertAgent.strong_opponents` reads the table.

:func:`assumed_bits` adds those facts to a notebook's facts and closes them by propagation
(:func:`cluedo_env.agents.knowledge.propagation.fixpoint_bits`). The result is an *assumption*, not a proof: players
use it for their probabilities (which suggestion to make, where to go, the expert's risky
accusations), never for the accusations a deducer makes only when certain. Where the assumed
facts contradict themselves (the model was wrong about some player), the game falls back to the
notebook's own facts.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import HELPER, KERNEL, EntryPoint
from cluedo_env.agents.knowledge.facts import FactBits, Facts, pack_rows_kernel
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.knowledge.propagation import fixpoint_kernel
from cluedo_env.agents.knowledge.types import AssumedScratch, Assumptions, Tallies
from numba import njit

from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0


def strong_players(nb: Notebook, idx: np.ndarray, has_board: bool) -> np.ndarray:
    """(n, P) bool: the player has named a card we know it holds (a deliberate blank).

    On the board the room does not count (one names the room one stands in, R-G1). This seat's
    own column is whatever its own suggestions say (callers ignore it).
    """
    own = nb.named[idx] & nb.has[idx, : nb.P]  # (n, P, 21)
    if has_board:
        own = own[:, :, :ROOM_CARD0]
    return own.any(2)


def naive_players(nb: Notebook, idx: np.ndarray, has_board: bool, whole_table: bool = True) -> np.ndarray:
    """(n, P) bool: opponents that have not (yet) shown they name their own cards; False for this seat.

    ``whole_table``: none at all where some opponent has shown it (a table of strong players is
    usually told by one of them first; the others are not naive either, only not yet caught).
    """
    naive = ~strong_players(nb, idx, has_board)
    naive[:, nb.seat] = False
    if whole_table:
        others = np.ones(nb.P, bool)
        others[nb.seat] = False
        naive &= naive[:, others].all(1, keepdims=True)
    return naive


def assumed_no(nb: Notebook, idx: np.ndarray, has_board: bool) -> np.ndarray:
    """(n, P, 21) bool: "holds not" facts the naive-player model adds: every card a naive opponent named
    (on the board, not the room, R-G1)."""
    named = nb.named[idx] & naive_players(nb, idx, has_board)[:, :, None]
    if has_board:
        named = named.copy()
        named[:, :, ROOM_CARD0:] = False
    return named


def assumed_bits(
    nb: Notebook,
    idx: np.ndarray,
    has_board: bool,
    allow: np.ndarray | None = None,
    extra_no: np.ndarray | None = None,
    naive: bool = True,
    refuters: tuple[np.ndarray, np.ndarray] | None = None,
    strong_allows: bool = False,
) -> tuple[FactBits, np.ndarray]:
    """:func:`tests.references.opponent_model.assumed_facts_reference` on bitmasks (new arrays; the clauses' cards are
    the notebook's ``cl_cards[idx]``, ``acc_cards[idx]``), in one compiled call
    (:func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits_kernel`: the notebook's facts packed, the assumed
    facts of
    :func:`cluedo_env.agents.knowledge.opponent_model.assumed_no_kernel`, closed as there). The same facts as
    :func:`tests.references.opponent_model.assumed_facts_reference`: players ask for them at nearly every decision, and
    the dozen numpy calls of the packing, the subsets and the write-back were most of the expert's time outside its
    sampler."""
    idx = np.ascontiguousarray(idx, np.int64)
    n, P, K = len(idx), nb.P, nb.cl_live.shape[1]
    H, i64 = P + 1, np.int64
    bits = FactBits(
        np.empty((n, H), i64), np.empty((n, H), i64), np.empty((n, H), nb.size.dtype),
        np.empty((n, K), nb.cl_holder.dtype), np.empty((n, K), i64), np.empty((n, K), bool), np.empty((n, P), i64),
        np.empty((n, P), bool),
    )  # fmt: skip
    used = np.empty(n, bool)
    none = np.zeros((0, P, NUM_CARDS), bool)
    lacks, deviant = refuters if refuters is not None else (none, np.zeros((0, P), bool))
    lacks, deviant = np.ascontiguousarray(lacks, bool), np.ascontiguousarray(deviant, bool)
    allow = np.ones(n, bool) if allow is None else np.ascontiguousarray(allow, bool)
    model = Assumptions(
        nb.seat, bool(has_board), bool(naive), bool(strong_allows), allow,
        none if extra_no is None else np.ascontiguousarray(extra_no, bool), lacks, deviant,
    )  # fmt: skip
    scratch = AssumedScratch(np.empty((n, P), i64), np.empty(1, bool), np.empty((2, H), i64), np.empty(K, i64),
                             np.empty((1, K), i64))  # fmt: skip
    _assumed_bits_call(idx, model, nb.facts, nb.tallies, bits, used, scratch)
    return bits, used


__all__ = ["assumed_bits", "assumed_no", "naive_players", "strong_players"]


# ---------------------------------------------------------------------------------------------- compiled kernels
@njit(**HELPER)
def assumed_no_kernel(
    idx: np.ndarray, model: Assumptions, book: Facts, tallies: Tallies, extra: np.ndarray, used: np.ndarray
) -> None:
    """The "holds not" facts :func:`tests.references.opponent_model.assumed_facts_reference` adds, per game ``idx[i]``
    of the
    notebook's ``has``, ``no`` (B, H, 21) (of ``book``) and ``named`` (B, P, 21) bool (of ``tallies``), with the
    options and evidence of ``model`` (a :class:`cluedo_env.agents.knowledge.types.Assumptions`).

    A table is *strong* where some opponent has named a card it is known to hold (on the board, not the room).
    ``naive``: every card an opponent named (on the board, not the room) where the table is not strong;
    ``extra_no`` (n, P, 21) bool more of them (shape (0, P, 21): none); ``lacks`` (B, P, 21) bool, by game, those
    of refuters (:class:`cluedo_env.agents.knowledge.refuter_model.RefuterModel`) at a strong table, except players
    marked in
    ``deviant`` (B, P) bool (``lacks`` of shape (0, P, 21): none). Written: ``extra`` (n, P) int64 bitmasks of
    those not known yet (neither has nor has-not), ``used`` (n,) bool: some, and ``allow[i]`` (or, with
    ``strong_allows``, a strong table).
    """
    seat, has_board, naive, strong_allows, allow, extra_no, lacks, deviant = model
    has, no, named = book.has, book.no, tallies.named
    n = idx.shape[0]
    P = named.shape[1]
    more = extra_no.shape[0] > 0
    refuters = lacks.shape[0] > 0
    hi = ROOM_CARD0 if has_board else NUM_CARDS
    for i in range(n):
        g = idx[i]
        strong = False
        for p in range(P):
            if p != seat:
                for c in range(hi):
                    if named[g, p, c] and has[g, p, c]:
                        strong = True
        table = naive and not strong
        some = False
        for p in range(P):
            refuted = refuters and strong and not deviant[g, p]
            x = 0
            for c in range(NUM_CARDS):
                a = table and p != seat and c < hi and named[g, p, c]
                if more and extra_no[i, p, c]:
                    a = True
                if refuted and lacks[g, p, c]:
                    a = True
                if a and not no[g, p, c] and not has[g, p, c]:
                    x |= 1 << c
            extra[i, p] = x
            if x != 0:
                some = True
        used[i] = some and (allow[i] or (strong_allows and strong))


@njit(**KERNEL)
def assumed_bits_kernel(
    idx: np.ndarray, model: Assumptions, book: Facts, tallies: Tallies, bits: FactBits, used: np.ndarray,
    scratch: AssumedScratch,
) -> None:  # fmt: skip
    """:func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits` in one pass: row i of ``bits`` (n, ...), a
    :class:`cluedo_env.agents.knowledge.facts.FactBits`, gets the facts of game ``idx[i]`` of the notebook's ``book``
    (what
    :func:`pack_rows_kernel` and the notebook's rows give), plus where ``used[i]`` the assumed "holds not" facts
    (:func:`assumed_no_kernel`, same arguments), closed by :func:`fixpoint_kernel` (100 rounds, as
    :func:`cluedo_env.agents.knowledge.propagation.fixpoint_bits`); where those contradict themselves, the notebook's
    own facts and
    ``used[i]`` False. Scratch: ``extra`` (n, P) int64, ``bad`` (1,) bool, ``snap`` (2, H) int64, ``unit`` (K,)
    int64, ``clh1`` (1, K) int64 (the clause holders as the fixpoint reads them), a
    :class:`cluedo_env.agents.knowledge.types.AssumedScratch`."""
    has, no, size, cl_holder, cl_cards, cl_live, acc_cards, acc_live = book
    named = tallies.named
    hb, nb, sz, clh, clm, cll, accm, accl = bits
    extra, bad, snap, unit, clh1 = scratch
    H = has.shape[1]
    P = named.shape[1]
    K = cl_live.shape[1]
    NA = acc_live.shape[1]
    assumed_no_kernel(idx, model, book, tallies, extra, used)
    pack_rows_kernel(idx, has, no, cl_cards, acc_cards, hb, nb, clm, accm)
    for i in range(idx.shape[0]):
        g = idx[i]
        for h in range(H):
            sz[i, h] = size[g, h]
        for k in range(K):
            clh[i, k] = cl_holder[g, k]
            cll[i, k] = cl_live[g, k]
        for a in range(NA):
            accl[i, a] = acc_live[g, a]
        if not used[i]:
            continue
        for p in range(P):
            nb[i, p] |= extra[i, p]
        for k in range(K):
            clh1[0, k] = cl_holder[g, k]
        bad[0] = False
        j = slice(i, i + 1)
        fixpoint_kernel(hb[j], nb[j], sz[j], clh1, clm[j], cll[j], accm[j], accl[j], np.int64(100), bad, snap, unit)
        if bad[0]:  # the model was wrong about someone: the notebook's own facts
            used[i] = False
            pack_rows_kernel(idx[j], has, no, cl_cards, acc_cards, hb[j], nb[j], clm[j], accm[j])
            for k in range(K):
                cll[i, k] = cl_live[g, k]
            for a in range(NA):
                accl[i, a] = acc_live[g, a]


# Typed once (cluedo_env.agents.compiled): numba types a named tuple argument in Python on every plain call (~4 us
# each), and
# players ask for these facts at nearly every decision. Every argument is built above with fixed dtypes and layouts.
_assumed_bits_call = EntryPoint(assumed_bits_kernel)
