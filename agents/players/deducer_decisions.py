"""The deducer's whole decision in one compiled call: accusation, refutation, suggestion or move, game by game.

Why one call: a numba call costs its argument typing and a Python round trip, and the deducer decides for a
few games at a time in a learner's env, so the steps of :meth:`cluedo_env.agents.players.deducer.DeducerAgent.act`
(proved accusations, the naive-model probabilities, the refutation, the suggestion, the goal rooms and the
move) run here in sequence for each game, with the same kernels the Python path calls one by one.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.compiled import HELPER, INLINE, KERNEL
from cluedo_env.agents.knowledge.facts import envelope_card, notebook_solved, room_of_triple, triple_index
from cluedo_env.agents.knowledge.marginals import marginals_bits, pack_cells
from cluedo_env.agents.knowledge.opponent_model import assumed_bits_kernel
from cluedo_env.agents.knowledge.types import Assumptions, Book
from cluedo_env.agents.planning.movement import choose_moves_kernel, turn_start_kernel
from cluedo_env.agents.players.refutation import refute_kernel
from cluedo_env.agents.players.suggestion_choice import best_suggestion_kernel, candidates_kernel, room_values_kernel
from cluedo_env.agents.players.types import (
    Decided,
    DecisionCaches,
    DecisionOptions,
    DecisionScratch,
    DecisionView,
    MoveTables,
    NaiveScratch,
    SuggestionRows,
)
from numba import njit

from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0


@njit(**KERNEL)
def proved_accusations_kernel(
    has: np.ndarray, bad: np.ndarray, idx: np.ndarray, mask: np.ndarray, phase: np.ndarray, out: np.ndarray
) -> None:
    """``out`` (n,) int64: the ACCUSE action of the proved solution of games ``idx`` where the notebook (``has``
    (B, H, 21), envelope = holder H - 1; ``bad`` (B,)) proves all three envelope cards, the accusation is legal in
    ``mask`` (n, 870) and the phase (``phase`` (n,)) is not a refutation; else -1
    (:meth:`cluedo_env.agents.players.deducer.DeducerAgent.accusations`)."""
    E = has.shape[1] - 1
    for i in range(idx.shape[0]):
        g = idx[i]
        out[i] = -1
        if not notebook_solved(has, bad, g, E) or phase[i] == A.REFUTE:
            continue
        # an unproved category (a contradictory notebook only) reads as its first card, as the reference's;
        # categories as int64s, not constants (numba would compile envelope_card once per constant)
        e0 = envelope_card(has, g, E, np.int64(0))
        e1 = envelope_card(has, g, E, np.int64(1))
        e2 = envelope_card(has, g, E, np.int64(2))
        action = A.ACCUSE0 + triple_index(max(e0, 0), max(e1, WEAPON_CARD0), max(e2, ROOM_CARD0))
        if mask[i, action]:
            out[i] = action


@njit(**KERNEL)
def naive_probabilities_kernel(
    idx: np.ndarray, model: Assumptions, mix: float, book: Book, out: np.ndarray, scratch: NaiveScratch,
) -> None:  # fmt: skip
    """The deducer's holder probabilities with the naive-player model
    (:meth:`cluedo_env.agents.players.deducer.DeducerAgent.
    _probabilities`, the numpy statement), game by game: ``out[g]`` (H, 21) float64 for each game g of ``idx``.

    The notebook's facts (``book``: ``has``, ``no`` (B, H, 21), ``size`` (B, H), the clauses, ``named`` (B, P, 21))
    plus what the opponent models assume, closed (:func:`assumed_bits_kernel` on one game at a time, with ``model``:
    ``naive``, ``allow`` (n,), the refuters' ``lacks`` and ``deviant`` and ``strong_allows``, the options of
    :meth:`cluedo_env.agents.players.deducer.DeducerAgent.model_options`; the notebook's own facts where they contradict
    themselves,
    or add nothing); their marginals, mixed
    as ``mix * model + (1 - mix) * own`` with the notebook's own marginals (``mix >= 1``: the model's alone).
    The same operations as the statement, so the same numbers. Scratch, one game each: ``scratch`` (a
    :class:`cluedo_env.agents.players.types.NaiveScratch`); ``model.extra_no`` is (0, P, 21) (no extra facts). The
    marginals
    are taken of the facts as bitmasks (:func:`marginals_bits`: the same numbers as of the cells).
    """
    facts = book.facts
    has, no, size = facts.has, facts.no, facts.size
    hb, nb = scratch.bits.hb, scratch.bits.nb
    used, model_p, own, w = scratch.used, scratch.model, scratch.own, scratch.w
    H = has.shape[1]
    for i in range(idx.shape[0]):
        g = idx[i]
        j = slice(i, i + 1)
        one = Assumptions(model.seat, model.has_board, model.naive, model.strong_allows, model.allow[j],
                          model.extra_no, model.lacks, model.deviant)  # fmt: skip
        assumed_bits_kernel(idx[j], one, facts, book.tallies, scratch.bits, used, scratch.assumed)
        ok = used[0]  # the assumed facts added something and hold together (else hb, nb are the notebook's own)
        marginals_bits(hb, nb, 0, size, g, model_p, 0, w)  # (sz[0] is size[g])
        if mix >= 1.0:
            for h in range(H):
                for c in range(NUM_CARDS):
                    out[g, h, c] = model_p[0, h, c]
            continue
        if ok:  # the notebook's own facts, as bitmasks again
            pack_cells(has, no, g, hb, nb, np.int64(0))  # (row as an int64: pack_cells' one compiled version)
            marginals_bits(hb, nb, 0, size, g, own, 0, w)
        else:  # the model is the notebook's own facts: the same marginals, computed once
            for h in range(H):
                for c in range(NUM_CARDS):
                    own[0, h, c] = model_p[0, h, c]
        rest = 1.0 - mix
        for h in range(H):
            for c in range(NUM_CARDS):
                out[g, h, c] = model_p[0, h, c] * mix + own[0, h, c] * rest


@njit(**KERNEL)
def goal_rooms_kernel(has: np.ndarray, bad: np.ndarray, idx: np.ndarray, value: np.ndarray) -> None:
    """Room values ``value`` (n, 9) float64 in place: where the notebook (``has`` (B, H, 21), ``bad`` (B,)) proves
    the solution of game ``idx[i]``, its room alone, worth 1; elsewhere negative values read 0
    (:func:`tests.references.deducer.goal_room_reference`)."""
    E = has.shape[1] - 1
    for i in range(idx.shape[0]):
        g = idx[i]
        if notebook_solved(has, bad, g, E):
            room = min(max(envelope_card(has, g, E, np.int64(2)) - ROOM_CARD0, 0), value.shape[1] - 1)
            for r in range(value.shape[1]):
                value[i, r] = 1.0 if r == room else 0.0
        else:
            for r in range(value.shape[1]):
                if value[i, r] < 0.0:
                    value[i, r] = 0.0


@njit(**KERNEL)
def decision_rows_kernel(phase: np.ndarray, accuse: np.ndarray, out: np.ndarray, rows: np.ndarray,
                         counts: np.ndarray) -> None:  # fmt: skip
    """What :meth:`cluedo_env.agents.players.deducer.DeducerAgent.act` decides where, in one pass over its games:
    ``out`` (n,)
    int64
    the accusation ``accuse[i]`` where there is one (>= 0), else END_TURN in POST, else -1; the rows still to
    decide by kind, in order, in ``rows`` (3, n) int64 (0: refutations, 1: suggestions, 2: START and MOVE), their
    numbers in ``counts`` (3,) int64. ``phase`` (n,): the games' phases."""
    counts[0] = counts[1] = counts[2] = 0
    for i in range(phase.shape[0]):
        out[i] = -1
        if accuse[i] >= 0:
            out[i] = accuse[i]
            continue
        p = phase[i]
        k = -1
        if p == A.POST:
            out[i] = A.END_TURN
        elif p == A.REFUTE:
            k = 0
        elif p == A.SUGGEST:
            k = 1
        elif p == A.START or p == A.MOVE:
            k = 2
        if k >= 0:
            rows[k, counts[k]] = i
            counts[k] += 1


@njit(**HELPER)
def _probability_rows(
    idx: np.ndarray, late: np.ndarray, book: Book, caches: DecisionCaches, model: Assumptions, mix: float,
    stale: np.ndarray, scratch: NaiveScratch, rows: np.ndarray,
) -> None:  # fmt: skip
    """:meth:`cluedo_env.agents.players.deducer.DeducerAgent.probabilities` of games ``idx`` (m,) into ``rows`` (m, H,
    21): the
    cache
    ``prob`` (B, H, 21) with its notebook ``pver`` and key ``pstamp`` (B,) int64 per game (of ``caches``); games
    whose notebook ``version`` or key ``late`` (m,) int64 (the naive model applies) changed are computed again, in
    order (:func:`naive_probabilities_kernel`, ``allow`` = ``late``). Scratch ``stale`` (m,) int64, ``model.allow``
    (m,) bool, then the naive kernel's."""
    version = book.version
    prob, pver, pstamp = caches.prob, caches.pver, caches.pstamp
    allow = model.allow
    s = 0
    for j in range(idx.shape[0]):
        g = idx[j]
        if pver[g] != version[g] or pstamp[g] != late[j]:
            stale[s] = g
            allow[s] = late[j] != 0
            s += 1
            pver[g] = version[g]  # (the games of idx are distinct)
            pstamp[g] = late[j]
    if s:
        some = Assumptions(model.seat, model.has_board, model.naive, model.strong_allows, allow[:s], model.extra_no,
                           model.lacks, model.deviant)  # fmt: skip
        naive_probabilities_kernel(stale[:s], some, mix, book, prob, scratch)
    for j in range(idx.shape[0]):
        g = idx[j]
        for h in range(prob.shape[1]):
            for c in range(NUM_CARDS):
                rows[j, h, c] = prob[g, h, c]


@njit(**KERNEL, inline="always")  # it returns a view: without reference counting, only numba's own inlining may
def _rows(flat: np.ndarray, n: int, m: int) -> np.ndarray:
    """The first ``n * m`` items of the 1-d ``flat`` as a C-contiguous (n, m) array (a view). The scratch handed to
    other kernels is cut this way: numba compiles a kernel once per layout of its arguments, and a slice of a 2-d
    scratch (``a[:n, :m]``) is not contiguous, so this keeps one version of each, the one Python calls too."""
    return flat[: n * m].reshape((n, m))


@njit(**INLINE)
def _draw(rng: np.random.Generator, out: np.ndarray, count: int) -> None:
    """``out[:count]`` = ``rng.random(count)``: numpy's numbers, in its order."""
    for j in range(count):
        out[j] = rng.random()


@njit(**KERNEL)
def deducer_decisions_kernel(
    idx: np.ndarray, view: DecisionView, options: DecisionOptions, model: Assumptions, book: Book,
    caches: DecisionCaches, cards: SuggestionRows, tables: MoveTables, rng: np.random.Generator, decided: Decided,
    scratch: DecisionScratch,
) -> None:  # fmt: skip
    """:meth:`cluedo_env.agents.players.deducer.DeducerAgent.act` after the notebook's update, in one call: the
    accusations of
    proved
    solutions, END_TURN in POST, the refutations (:func:`refute_kernel`), the suggestions
    (:func:`best_suggestion_kernel` on the cached probabilities, :func:`_probability_rows`, and on the board every
    suspect and weapon in the room one stands in, else :func:`candidates_kernel`'s shortlist) and the room values of
    the games at START or MOVE (cached per turn in ``rv`` (B, 9) / ``rv_turn`` (B,), computed again at START:
    :func:`room_values_kernel`, :func:`goal_rooms_kernel`).

    With ``plan_moves`` the START and MOVE choices follow on the empty board's tables (:func:`turn_start_kernel`,
    :func:`choose_moves_kernel`, as :func:`cluedo_env.agents.planning.movement.turn_start_choice` and ``choose_moves``
    call them:
    the
    seats' squares ``pos`` (B, P), the secret ``passage`` of each location (197,), ``S``, ``S_roll`` (197, 9), ties
    within ``tie``), so ``out`` (n,) int64 gets every action; without, it gets all but those, whose rows
    :func:`decision_rows_kernel` leaves in ``rows[2, :counts[2]]`` for the Python planner (around blocking tokens).
    Every random number is drawn from ``rng`` where and in the order the Python path draws it (refutation ties,
    candidate and suggestion ties, move ties; rows by kind, in order), so the choices and the generator's state are
    the same. Why one call: these steps were some forty numpy calls and kernel calls per action, about as much time
    as the kernels' own work at batch 1024.

    Games ``idx`` (n,) and, in ``view``, their ``mask`` (n, 870) bool; per game of the batch ``phase`` (read as
    ``phase_all``), ``current`` (whose turn it is: whose suggestion a refutation answers) and ``turn_count`` (B,);
    the naive model applies from turn ``options.late_turns`` (float) on. The notebook's arrays (``book``), the
    probability and room value caches (``caches``), the naive model's options (``model``, whose ``allow`` is
    scratch), the seats asked in turn ``order`` (>= n, P - 1) and the card rows ``every_s``, ``every_w`` (>= n, 6)
    int64 of the board's suggestions (``cards``). The rest is scratch (``scratch``, a
    :class:`cluedo_env.agents.players.types.DecisionScratch`: T triples per suggestion, k the longer shortlist).
    """
    phase_all, mask, current, turn_count, pos = view
    late_turns, mix, refute_all, shortlist, room_shortlist, plan_moves = options
    seat, has_board = model.seat, model.has_board
    facts, tallies, bad = book.facts, book.tallies, book.bad
    has = facts.has
    rv, rv_turn = caches.rv, caches.rv_turn
    order, every_s, every_w = cards
    passage, S, S_roll, tie = tables
    out, rows, counts = decided
    ph, accuse, sub, msub, sub2, prows, draws, noise, cand, best = scratch[:10]
    pre, memo, reps, value, u, stale = scratch[10:16]
    flags = msub.reshape(msub.size)  # msub's memory, cut into C-contiguous blocks (_rows) where a kernel reads it
    n = idx.shape[0]
    for i in range(n):
        ph[i] = phase_all[idx[i]]
    phase = ph[:n]
    proved_accusations_kernel(has, bad, idx, mask, phase, accuse)
    decision_rows_kernel(phase, accuse, out, rows, counts)
    # Refutations: the card that teaches the suggester least; ties by rng.random((k, 21)).
    k = counts[0]
    if k:
        for j in range(k):
            i = rows[0, j]
            sub[j] = idx[i]
            sub2[j] = current[idx[i]]
            for a in range(A.SHOW0, A.ACCUSE0):  # what refute_kernel reads of the mask
                msub[j, a] = mask[i, a]
        tied = _rows(noise, k, NUM_CARDS)
        for j in range(k):  # rng.random((k, 21)), row by row
            for c in range(NUM_CARDS):
                tied[j, c] = rng.random()
        refute_kernel(facts, tallies, sub[:k], sub2[:k], msub[:k], tied, best[:k], scratch.refute)
        for j in range(k):
            out[rows[0, j]] = best[j]
    # The probabilities of the games that suggest now and of those whose room values are computed again (at START,
    # or at MOVE in a new turn): one pass over both (distinct games; no random numbers drawn there).
    k = counts[1]
    legal = _rows(flags, k, A.SHOW0 - A.SUGGEST0)
    for j in range(k):
        i = rows[1, j]
        sub[j] = idx[i]
        sub2[j] = 1 if turn_count[idx[i]] >= late_turns else 0
        for t in range(A.SHOW0 - A.SUGGEST0):  # the suggestions' part of the mask: all that is read of it
            legal[j, t] = mask[i, A.SUGGEST0 + t]
    m = 0
    for j in range(counts[2]):
        i = rows[2, j]
        g = idx[i]
        if rv_turn[g] != turn_count[g] or phase[i] == A.START:
            sub[k + m] = g
            sub2[k + m] = 1 if turn_count[g] >= late_turns else 0
            best[k + m] = turn_count[g]
            m += 1
    if k + m:
        _probability_rows(
            sub[: k + m], sub2[: k + m], book, caches, model, mix, stale, scratch.naive, prows[: k + m]
        )  # fmt: skip
    # Suggestions: the legal triple of highest envelope information.
    if k:
        if has_board:  # every suspect and weapon, in the room the mask names (R-G1)
            cr = _rows(cand, k, 1)
            for j in range(k):
                room = -1
                for t in range(A.SHOW0 - A.SUGGEST0):
                    if legal[j, t]:
                        room = room_of_triple(t)
                        break
                cr[j, 0] = ROOM_CARD0 + min(max(room, 0), 8)
            cs, cw = every_s[:k], every_w[:k]
        else:
            kk = shortlist + 1
            _draw(rng, draws, 2 * k * NUM_CARDS)
            half = k * NUM_CARDS
            short = cand[: 3 * k * kk].reshape((3, k, kk))  # by category, each category's rows contiguous
            # categories as an int64 here and below (not a constant, not omitted): one compiled version, the one
            # Python calls too (numba compiles a version per constant argument).
            candidates_kernel(prows[:k], seat, shortlist, draws[:half], draws[half : 2 * half], short, u,
                              np.int64(3))  # fmt: skip
            cs, cw, cr = short[0], short[1], short[2]
        T = cs.shape[1] * cw.shape[1] * cr.shape[1]
        tied = _rows(noise, k, T)
        for j in range(k):  # rng.random((k, T))
            for t in range(T):
                tied[j, t] = rng.random()
        best_suggestion_kernel(
            prows[:k], cs, cw, cr, order[:k], refute_all, legal, tied, best[:k], pre, memo[: 2 * T], reps,
        )  # fmt: skip
        for j in range(k):
            out[rows[1, j]] = A.SUGGEST0 + best[j] if best[j] >= 0 else -1
    # Room values of those games (rows k .. k + m - 1 of the scratch), into the per-turn cache.
    if m:
        _draw(rng, draws, 2 * m * NUM_CARDS)
        kk = room_shortlist + 1
        pr = prows[k : k + m]
        half = m * NUM_CARDS
        short = cand[: 3 * m * kk].reshape((3, m, kk))
        candidates_kernel(pr, seat, room_shortlist, draws[:half], draws[half : 2 * half], short, u,
                          np.int64(2))  # fmt: skip
        room_values_kernel(pr, short[0], short[1], order[:m], refute_all, value[:m], pre, reps)
        goal_rooms_kernel(has, bad, sub[k : k + m], value[:m])
        for j in range(m):
            g = sub[k + j]
            for r in range(9):
                rv[g, r] = value[j, r]
            rv_turn[g] = best[k + j]
    k = counts[2]
    if not plan_moves or k == 0:
        return
    # The turn's start: stay, take the passage or roll (no random numbers).
    m = 0
    special = _rows(flags, 3, k)  # STAY, PASSAGE, ROLL open, row by row
    for j in range(k):
        i = rows[2, j]
        if phase[i] == A.START:
            g = idx[i]
            for r in range(9):
                value[m, r] = max(rv[g, r], 0.0)
            x = pos[g, seat]
            sub[m] = x
            sub2[m] = passage[x]
            special[0, m] = mask[i, A.STAY]
            special[1, m] = mask[i, A.PASSAGE]
            special[2, m] = mask[i, A.ROLL]
            m += 1
    if m:
        turn_start_kernel(value[:m], special[0, :m], special[1, :m], special[2, :m], sub[:m], sub2[:m], S, S_roll,
                          tie, best[:m])  # fmt: skip
        m = 0
        for j in range(k):
            i = rows[2, j]
            if phase[i] == A.START:
                out[i] = best[m]
                m += 1
    # The move: the destination of best value per turn, ties by rng.random((m, 197)).
    m = 0
    L = S.shape[0]
    for j in range(k):
        i = rows[2, j]
        if phase[i] != A.START:
            g = idx[i]
            for r in range(9):
                value[m, r] = max(rv[g, r], 0.0)
            for a in range(L):
                flags[m * L + a] = mask[i, A.MOVE0 + a]  # row m of the (m, L) block
            m += 1
    if m:
        tied = _rows(noise, m, L)
        for j in range(m):  # rng.random((m, 197))
            for a in range(L):
                tied[j, a] = rng.random()
        # use_noise as np.bool_ (not the constant True, which numba would compile a version for)
        choose_moves_kernel(value[:m], _rows(flags, m, L), S, tied, np.bool_(True), tie, best[:m])
        m = 0
        for j in range(k):
            i = rows[2, j]
            if phase[i] != A.START:
                out[i] = A.MOVE0 + best[m] if best[m] >= 0 else -1
                m += 1
