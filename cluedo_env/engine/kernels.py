"""Compiled kernels of the vectorized engine: one call steps, deals, checks or samples a whole batch.

Why compiled loops: the rules branch on every game's phase, and in numpy every branch becomes a
group of gathers and scatters whose fixed cost (~1-5 us a call) dominates at small batches and
whose temporaries dominate at large ones. A numba loop over games runs the same rules as plain
scalar code, once per game, with no temporaries, so one engine is fast from batch 1 to 16k.

Each game is handled by the same small functions the reference engine has (``_suggest``,
``_ask_refuters``, ``_end_turn`` ...), in the same order, with the rule IDs of shared/RULES.md;
``tests/test_differential.py`` plays both engines side by side. The kernels read and write the
arrays of a :class:`~cluedo_env.engine.state.State` in place; :class:`~cluedo_env.engine.vector_engine.VectorEngine`
is the Python API around them (argument checks, snapshots, observations). The samplers of random legal play
are in :mod:`~cluedo_env.engine.samplers`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cluedo_env.engine.compile_options import HELPER, INLINE, KERNEL
from cluedo_env.engine.kernel_cache import ENGINE
from cluedo_env.rules import actions as A
from cluedo_env.rules import privacy

ENGINE.ensure_fresh()  # before any kernel below is compiled or loaded from numba's cache

from cluedo_env.engine.movement import fill_destinations, prefetch_distances  # noqa: E402
from cluedo_env.engine.state import ACCUSATION, ALL_TRIPLES, HIDDEN, NO_TRIPLES, NOT_ASKED, PASSED, SUGGESTION  # noqa: E402
from cluedo_env.rules.board import NUM_SQUARES, ROOM_LOC0  # noqa: E402
from cluedo_env.rules.cards import NUM_CARDS, NUM_ROOMS, NUM_SUSPECTS, NUM_WEAPONS, ROOM_CARD0, WEAPON_CARD0  # noqa: E402

_ROLL, _PASSAGE, _STAY, _END = A.ROLL, A.PASSAGE, A.STAY, A.END_TURN
_MOVE0, _SUGGEST0, _SHOW0, _ACCUSE0, _NUM_ACTIONS = A.MOVE0, A.SUGGEST0, A.SHOW0, A.ACCUSE0, A.NUM_ACTIONS
_START, _MOVE, _SUGGEST, _REFUTE, _POST, _OVER = A.START, A.MOVE, A.SUGGEST, A.REFUTE, A.POST, A.OVER
_CAP = 126  # counters saturate at 127 (they live in int8 observation slots)
_DECK = NUM_CARDS - 3

# SplitMix64 (Steele, Lea, Flood 2014): a 64-bit counter per game, hashed; good enough for dice and
# shuffles, trivially seekable, and one uint64 of state per game.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53

# How each function below is compiled (KERNEL, HELPER, INLINE) and why: cluedo_env.engine.compile_options.


class Scratch(NamedTuple):
    """Working memory of the kernels, allocated once per engine (kernels do not allocate)."""

    deck: np.ndarray  # (21,) int64: cards being shuffled
    rooms: np.ndarray  # (9,) int64: rooms being shuffled for the weapons
    others: np.ndarray  # (6,) int16: locations of the tokens that may block a move
    one: np.ndarray  # (1,) int64: a single game index


def new_scratch() -> Scratch:
    return Scratch(np.zeros(NUM_CARDS, np.int64), np.zeros(NUM_ROOMS, np.int64), np.zeros(NUM_SUSPECTS, np.int16),
                   np.zeros(1, np.int64))  # fmt: skip


# ===================================================================== random numbers
@njit(**INLINE)
def _next_u64(stream: np.ndarray, b: int) -> np.uint64:
    z = stream[b] + _GOLDEN
    stream[b] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(**INLINE)
def uniform(stream: np.ndarray, b: int) -> float:
    """A float in [0, 1) from game ``b``'s stream."""
    return float(_next_u64(stream, b) >> _S11) * _TO_UNIT


@njit(**INLINE)
def randint(stream: np.ndarray, b: int, n: int) -> int:
    """An int in [0, n) from game ``b``'s stream. Callers pass ``n`` as an int64 (``np.int64(6)``, not ``6``): numba
    compiles a version of a function for each constant it is given."""
    return int(uniform(stream, b) * n)


# ===================================================================== triples
# Triple index -> cards, compiled from the one definition (rules/actions.py).
triple_cards = njit(**INLINE)(A.triple_cards)
triple_of = njit(**INLINE)(A.triple_of)


# R-G7, compiled from the one definition every reader of a game uses (rules/privacy.py).
may_see_shown_card = njit(**INLINE)(privacy.may_see_shown_card)


# ===================================================================== new games
@njit(**KERNEL)
def new_games(s, rules, tables, idx: np.ndarray, work) -> None:
    """Deal new games into slots ``idx`` from each slot's chance stream (R-S1..R-S6, R-C2)."""
    P = rules.players
    deck = work.deck
    rooms = work.rooms
    for i in range(idx.shape[0]):
        b = idx[i]
        ch = s.chance
        # R-S4: one card of each kind into the envelope.
        es = randint(ch, b, np.int64(NUM_SUSPECTS))
        ew = WEAPON_CARD0 + randint(ch, b, np.int64(NUM_WEAPONS))
        er = ROOM_CARD0 + randint(ch, b, np.int64(NUM_ROOMS))
        s.envelope[b, 0], s.envelope[b, 1], s.envelope[b, 2] = es, ew, er
        # R-S5: the other 18 shuffled together (Fisher-Yates) and dealt clockwise from seat 0.
        n = 0
        for c in range(NUM_CARDS):
            if c != es and c != ew and c != er:
                deck[n] = c
                n += 1
        for k in range(n - 1, 0, -1):
            j = randint(ch, b, k + 1)
            deck[k], deck[j] = deck[j], deck[k]
        for c in range(NUM_CARDS):
            s.owner[b, c] = -1
        for p in range(P):
            s.hand_size[b, p] = 0
        for k in range(n):
            s.owner[b, deck[k]] = k % P
            s.hand_size[b, k % P] += 1
        if rules.has_board:
            for t in range(NUM_SUSPECTS):
                s.pos[b, t] = tables.starts[t]  # R-S2
            # R-S3: six weapons in six different rooms (the first six of a shuffled row of rooms).
            for r in range(NUM_ROOMS):
                rooms[r] = r
            for k in range(NUM_ROOMS - 1, 0, -1):
                j = randint(ch, b, k + 1)
                rooms[k], rooms[j] = rooms[j], rooms[k]
            for w in range(NUM_WEAPONS):
                s.weapon_room[b, w] = rooms[w]
            s.phase[b] = _START  # R-S1: Scarlet (seat 0) first
        else:
            for t in range(NUM_SUSPECTS):
                s.pos[b, t] = 0
            for w in range(NUM_WEAPONS):
                s.weapon_room[b, w] = 0
            s.phase[b] = _SUGGEST  # R-C2
        s.current[b] = 0
        s.refuter[b] = -1
        s.roll[b] = 0
        s.last_roll[b] = 0
        s.turn_count[b] = 0
        s.winner[b] = -1
        s.terminated[b] = False
        s.truncated[b] = False
        s.hist_len[b] = 0  # records past hist_len are stale and never read
        for p in range(P):
            s.eliminated[b, p] = False
            s.dragged[b, p] = False
            s.rewards[b, p] = 0.0
        _clear_summaries(s, P, b)
        for a in range(_MOVE0, _SUGGEST0):
            s.mask[b, a] = False
        s.n_move[b] = 0
        update_legal(s, rules, tables, b)


# ===================================================================== legal actions
@njit(**INLINE)
def _accuse_set_at(rules, loc: int) -> int:
    """Triple-set id of the accusations open to a player at location ``loc`` (R-A1, R-T4)."""
    if not rules.accusation_in_room:
        return ALL_TRIPLES
    return loc - ROOM_LOC0 if loc >= ROOM_LOC0 else NO_TRIPLES


@njit(**INLINE)
def update_legal(s, rules, tables, b: int) -> None:
    """Recompute game ``b``'s legal blocks (specials, shows, triple sets) from its state.

    The MOVE block is not touched: ``_roll`` fills it and a MOVE clears it. The work is :func:`_legal_blocks`'s, on
    the game's rows rather than the State. Why: a call that is not inlined copies its arguments, and the State's ~40
    arrays are ~360 words, which cost the step (a call for every game) more than the update itself; inlined into
    the step instead, the update added ~3 s to every engine's first compile.
    """
    cur = s.current[b]
    s.n_special[b], s.n_show[b], s.suggest_set[b], s.accuse_set[b] = _legal_blocks(
        rules, tables, s.phase[b], cur, s.pos[b], s.dragged[b, cur], s.refuter[b],
        s.hist_triple[b, max(s.hist_len[b] - 1, 0)], s.owner[b], s.mask[b], s.mask_sets[b],
    )


@njit(**HELPER)
def _legal_blocks(
    rules, tables, phase: int, cur: int, pos: np.ndarray, dragged: bool, refuter: int, named: np.ndarray,
    owner: np.ndarray, mask: np.ndarray, mask_sets: np.ndarray,
) -> tuple[int, int, int, int]:  # fmt: skip
    """One game's legal blocks, written into its mask row ``mask`` (870,): the specials, the cards to show, and the
    SUGGEST and ACCUSE blocks where their triple sets changed (``mask_sets`` (2,), the sets written). From the game's
    ``phase``, the seat ``cur`` whose turn it is, the token locations ``pos`` (6,), whether ``cur`` was ``dragged``,
    the ``refuter``, the triple ``named`` (3,) by the last record and the card owners ``owner`` (21,).
    Returns (specials, cards to show, suggestion set, accusation set)."""
    for a in range(4):
        mask[a] = False
    for c in range(NUM_CARDS):
        mask[_SHOW0 + c] = False
    suggest, accuse, n_special, n_show = NO_TRIPLES, NO_TRIPLES, 0, 0
    if phase == _START:
        loc = pos[cur]
        free = False  # R-T1: a first step onto a square no other token stands on
        for e in range(4):
            sq = tables.exits[loc, e]
            if sq < 0:
                continue
            taken = False
            for t in range(NUM_SUSPECTS):
                if t != cur and pos[t] == sq:
                    taken = True
            if not taken:
                free = True
        can_roll = free or (loc < NUM_SQUARES and tables.front_room[loc] >= 0)  # R-M4: a door in front
        passage = tables.passage[loc] >= 0  # R-T2
        mask[_ROLL] = can_roll
        mask[_PASSAGE] = passage
        mask[_STAY] = dragged  # R-T3
        n_special = int(can_roll) + int(passage) + int(dragged)
        if n_special == 0:
            mask[_END] = True  # R-T5: only when locked in
            n_special = 1
        accuse = _accuse_set_at(rules, loc)  # R-T4
    elif phase == _SUGGEST:
        suggest = pos[cur] - ROOM_LOC0 if rules.has_board else ALL_TRIPLES  # R-G1, R-C2
        if rules.has_board and rules.optional_suggestion:  # R-G2 variant: may decline, may accuse
            mask[_END] = True
            n_special = 1
            accuse = _accuse_set_at(rules, pos[cur])
        elif not rules.accuse_after_suggestion:  # R-G8 variant: accuse in place of the suggestion
            accuse = _accuse_set_at(rules, pos[cur])
    elif phase == _REFUTE:
        for j in range(3):
            card = named[j] + (0, WEAPON_CARD0, ROOM_CARD0)[j]
            if owner[card] == refuter:  # R-G6: only a named card held
                mask[_SHOW0 + card] = True
                n_show += 1
    elif phase == _POST:
        mask[_END] = True  # R-G8, R-M8
        n_special = 1
        accuse = _accuse_set_at(rules, pos[cur])
    for k, want in enumerate((suggest, accuse)):  # the SUGGEST and ACCUSE blocks, where their sets changed
        if mask_sets[k] != want:
            base = _SUGGEST0 if k == 0 else _ACCUSE0
            row = tables.triple_sets[want + 1]
            for t in range(row.shape[0]):
                mask[base + t] = row[t]
            mask_sets[k] = want
    return n_special, n_show, suggest, accuse


@njit(**KERNEL)
def update_legal_of(s, rules, tables, b: int) -> None:
    """:func:`update_legal` for Python (a snapshot's restore). Why a kernel of its own: the start-up of every engine
    compiles no Python wrapper of the engine's helpers (40 arrays to unbox) that only a restore calls."""
    update_legal(s, rules, tables, b)


@njit(**INLINE)
def _in_set(set_id: int, t: int) -> bool:
    if set_id == ALL_TRIPLES:
        return True
    return set_id >= 0 and t % NUM_ROOMS == set_id


@njit(**INLINE)
def is_legal(s, b: int, a: int) -> bool:
    """Whether action ``a`` is legal in game ``b`` (read from the legal blocks, no mask needed)."""
    if a < 0 or a >= _NUM_ACTIONS:
        return False
    if a < _SUGGEST0:  # specials and moves live in the mask
        return s.mask[b, a]
    if a < _SHOW0:
        return _in_set(s.suggest_set[b], a - _SUGGEST0)
    if a < _ACCUSE0:
        return s.mask[b, a]
    return _in_set(s.accuse_set[b], a - _ACCUSE0)


@njit(**INLINE)
def is_live(s, active: np.ndarray, b: int) -> bool:
    """Game ``b`` takes an action this step: not over, and active (``active`` empty: all are)."""
    return s.phase[b] != _OVER and (active.shape[0] == 0 or active[b])


@njit(**INLINE)
def first_illegal(s, actions: np.ndarray, active: np.ndarray) -> tuple[int, int]:
    """(first live game whose action is illegal, number of such games); (-1, 0) if all are legal."""
    first, count = -1, 0
    for b in range(actions.shape[0]):
        if is_live(s, active, b) and not is_legal(s, b, actions[b]):
            count += 1
            if first < 0:
                first = b
    return first, count


# Python's entry points to the inline helpers above (a KERNEL wraps them, as update_legal_of does update_legal).
@njit(**KERNEL)
def is_legal_of(s, b: int, a: int) -> bool:
    return is_legal(s, b, a)


@njit(**HELPER)
def legal_count(s, tables, b: int) -> int:
    return (s.n_special[b] + s.n_move[b] + tables.triple_count[s.suggest_set[b] + 1] + s.n_show[b]
            + tables.triple_count[s.accuse_set[b] + 1])  # fmt: skip


# ===================================================================== transitions
MOVE_AHEAD = 8  # games ahead whose move (an action ROLL) the step asks the CPU to load the distances of


@njit(**KERNEL)
def step(
    s, rules, tables, moves, work, actions: np.ndarray, active: np.ndarray, autoreset: bool,
    out_rewards: np.ndarray, out_terminated: np.ndarray, out_truncated: np.ndarray,
) -> tuple[int, int]:  # fmt: skip
    """Apply ``actions[b]`` for each live game's actor; write what the step produced into the
    ``out_*`` arrays, then restart finished games if ``autoreset``. ``active``: (B,) bool, or
    empty for all games.

    All or nothing: if any live game's action is illegal, nothing changes and the result is
    (first such game, their number); else (-1, 0). (A threaded engine checks every block of its
    games before it applies any: :mod:`cluedo_env.engine.thread_jobs`.)
    """
    first, count = first_illegal(s, actions, active)
    if first >= 0:
        return first, count
    apply_actions(s, rules, tables, moves, work, actions, active, autoreset, out_rewards, out_terminated,
                  out_truncated)  # fmt: skip
    return -1, 0


@njit(**HELPER)
def apply_actions(
    s, rules, tables, moves, work, actions: np.ndarray, active: np.ndarray, autoreset: bool,
    out_rewards: np.ndarray, out_terminated: np.ndarray, out_truncated: np.ndarray,
) -> None:  # fmt: skip
    """:func:`step` once every action is known to be legal (:func:`first_illegal`)."""
    P = rules.players
    n = actions.shape[0]
    for b in range(n):
        ahead = b + MOVE_AHEAD
        if ahead < n and actions[ahead] == _ROLL:
            cur = s.current[ahead]
            prefetch_distances(moves, s.pos[ahead, cur], s.pos[ahead], cur)
        s.last_roll[b] = 0
        if not is_live(s, active, b):
            for p in range(P):
                if s.phase[b] != _OVER:  # a finished game keeps its result; a waiting one got nothing this step
                    s.rewards[b, p] = 0.0
                out_rewards[b, p] = 0.0
            out_terminated[b] = False
            out_truncated[b] = False
            continue
        for p in range(P):
            s.rewards[b, p] = 0.0
        a = actions[b]
        cur = s.current[b]
        if a == _ROLL:
            pips, n = _roll(s.chance, moves, s.pos[b], cur, rules.dice, b, work.others, s.mask[b, _MOVE0:_SUGGEST0])
            s.roll[b] = pips
            s.last_roll[b] = pips
            s.n_move[b] = n
            if n > 0:
                s.phase[b] = _MOVE
            else:
                _after_move(s, rules, b)  # R-M8: no destination forfeits the move
        elif a == _PASSAGE:  # R-T2: counts as entering the opposite corner room
            s.pos[b, cur] = tables.passage[s.pos[b, cur]]
            s.phase[b] = _SUGGEST
        elif a == _STAY:  # R-T3
            s.phase[b] = _SUGGEST
        elif a == _END:  # R-T5, R-G8, R-M8, a declined optional suggestion (R-G2)
            _end_turn(s, rules, b)
        elif a < _SUGGEST0:
            dest = a - _MOVE0
            s.pos[b, cur] = dest
            for x in range(_MOVE0, _SUGGEST0):
                s.mask[b, x] = False
            s.n_move[b] = 0
            if dest >= ROOM_LOC0:
                s.phase[b] = _SUGGEST  # R-G2: entering obliges (or allows) a suggestion
            else:
                _after_move(s, rules, b)
        elif a < _SHOW0:
            _suggest(s, rules, b, a - _SUGGEST0)
        elif a < _ACCUSE0:
            _show(s, rules, b, a - _SHOW0)
        else:
            _accuse(s, rules, tables, b, a - _ACCUSE0)
        update_legal(s, rules, tables, b)
        # Only a game's end pays rewards (R-E1..R-E4). Why not always copy them: the copy's one wide load of the
        # rewards just stored one by one above waited for those stores to land.
        if s.phase[b] == _OVER:
            for p in range(P):
                out_rewards[b, p] = s.rewards[b, p]
        else:
            for p in range(P):
                out_rewards[b, p] = 0.0
        out_terminated[b] = s.terminated[b]
        out_truncated[b] = s.truncated[b]
        if autoreset and s.phase[b] == _OVER:
            work.one[0] = b
            new_games(s, rules, tables, work.one, work)


def step_parts(s, rules, tables, moves, work) -> tuple[tuple, list[tuple]]:
    """The helpers :func:`step` calls, each with arguments of the types step passes them (a game, a triple or a
    card: int64): (:func:`_roll`, its arguments), then [(the others, their arguments)].

    Why: on an empty cache the engine compiles _roll (the move search, about half of the step) in another process
    while it compiles these here, ahead of the step (:meth:`cluedo_env.engine.vector_engine.VectorEngine._compile`);
    ``tests/test_compile_ahead.py`` checks that they are the versions the step calls.
    """
    b = np.int64(0)
    rest = [(_suggest, (s, rules, b, b)), (_show, (s, rules, b, b)), (_accuse, (s, rules, tables, b, b)),
            (_end_turn, (s, rules, b)), (_after_move, (s, rules, b))]  # fmt: skip
    roll_args = (s.chance, moves, s.pos[0], s.current[0], rules.dice, b, work.others, s.mask[0, _MOVE0:_SUGGEST0])
    return (_roll, roll_args), rest


@njit(**KERNEL)
def destinations_of(s, moves, b: int, others: np.ndarray, out: np.ndarray) -> int:
    """Python's entry to :func:`_destinations`: game ``b``'s current player's destinations for its roll."""
    return _destinations(moves, s.pos[b], s.current[b], np.int64(s.roll[b]), others, out)  # the step's version


@njit(**INLINE)
def _destinations(moves, pos: np.ndarray, cur: int, pips: int, others: np.ndarray, out: np.ndarray) -> int:
    """Fill ``out`` (197,) bool with player ``cur``'s destinations for ``pips`` from the token locations ``pos``."""
    for t in range(NUM_SUSPECTS):
        others[t] = -1 if t == cur else pos[t]  # the mover does not block itself
    return fill_destinations(moves, pos[cur], pips, others, out)


@njit(**HELPER)
def _roll(chance: np.ndarray, moves, pos: np.ndarray, cur: int, dice: int, b: int, others: np.ndarray,
          out: np.ndarray) -> tuple[int, int]:  # fmt: skip
    """R-T1, R-D1: roll ``dice`` dice from game ``b``'s ``chance`` stream, then fill ``out`` (197,) bool with the
    destinations of player ``cur`` (R-M*) from the game's token locations ``pos``; (the pips, how many destinations).

    Why these arguments and not the State: a call that is not inlined copies every argument, and the State's ~40
    arrays are ~360 words; passed the State, the call cost the step more than the move search. (Not inlined: it is
    compiled on its own, ahead, see :func:`step_parts`.)"""
    pips = np.int64(0)  # (not a literal 0: numba would type the move search for the constant 0 too, a second compile)
    for _ in range(dice):
        pips += 1 + randint(chance, b, np.int64(6))
    return pips, _destinations(moves, pos, cur, pips, others, out)


@njit(**HELPER)
def _after_move(s, rules, b: int) -> None:
    """After a move onto a square or a forfeited move: accuse or end (R-A1, R-M8)."""
    if _accuse_set_at(rules, s.pos[b, s.current[b]]) != NO_TRIPLES:
        s.phase[b] = _POST
    else:
        _end_turn(s, rules, b)


@njit(**HELPER)
def _append_history(s, b: int, player: int, t: int) -> int:
    """Append a record of ``player`` naming triple ``t``; the caller writes its kind. (A kind passed in, a constant,
    would compile a version of this helper per kind: numba specialises a call on constant arguments.)"""
    h = s.hist_len[b]
    s.hist_player[b, h] = player
    s.hist_triple[b, h, 0], s.hist_triple[b, h, 1], s.hist_triple[b, h, 2] = triple_of(t)
    s.hist_correct[b, h] = False
    s.hist_len[b] = h + 1
    return h


@njit(**HELPER)
def _suggest(s, rules, b: int, t: int) -> None:
    P = rules.players
    cur = s.current[b]
    sus, wc, rc = triple_cards(t)
    room = rc - ROOM_CARD0
    if rules.has_board:
        # R-G3: the named suspect token and weapon are moved into the room.
        dest = ROOM_LOC0 + room
        if s.pos[b, sus] != dest:
            s.pos[b, sus] = dest
            if sus < P and sus != cur:
                s.dragged[b, sus] = True  # R-T3 opens for their next turn
        s.weapon_room[b, wc - WEAPON_CARD0] = room
    h = _append_history(s, b, cur, t)
    s.hist_kind[b, h] = SUGGESTION
    for p in range(P):
        s.hist_response[b, h, p] = NOT_ASKED
    for card in (sus, wc, rc):
        s.named_count[b, cur, card] = min(s.named_count[b, cur, card], _CAP) + 1
    _ask_refuters(s, rules, b, cur)


@njit(**INLINE)
def triple_card_bits(triple: np.ndarray) -> int:
    """The three cards of a (suspect, weapon, room) triple as card bits (bit c: card c), as ``seen`` and
    ``passed_on`` hold cards."""
    return ((1 << np.int64(triple[0])) | (1 << (WEAPON_CARD0 + np.int64(triple[1])))
            | (1 << (ROOM_CARD0 + np.int64(triple[2]))))  # fmt: skip


@njit(**HELPER)
def _ask_refuters(s, rules, b: int, after: int) -> None:
    """R-G6: ask the seats after ``after`` in turn order, up to the suggester, until one holds a named card."""
    P = rules.players
    h = s.hist_len[b] - 1
    sugg = s.hist_player[b, h]
    c0 = s.hist_triple[b, h, 0]
    c1 = WEAPON_CARD0 + s.hist_triple[b, h, 1]
    c2 = ROOM_CARD0 + s.hist_triple[b, h, 2]
    seat = (after + 1) % P
    while seat != sugg:
        if s.owner[b, c0] == seat or s.owner[b, c1] == seat or s.owner[b, c2] == seat:
            s.refuter[b] = seat
            s.phase[b] = _REFUTE  # the refuter chooses the card (R-G6)
            return
        s.hist_response[b, h, seat] = PASSED  # public: holds none of the three (R-G7)
        s.passed_on[b, seat] |= triple_card_bits(s.hist_triple[b, h])
        seat = (seat + 1) % P
    _suggestion_resolved(s, rules, b)


@njit(**INLINE)
def _show(s, rules, b: int, card: int) -> None:
    """R-G6, R-G7: the refuter shows ``card``. Inlined: a call copies the State's ~40 arrays as arguments."""
    h = s.hist_len[b] - 1
    ref = s.refuter[b]
    sugg = s.hist_player[b, h]
    s.hist_response[b, h, ref] = card
    s.seen[b, sugg, ref] |= 1 << card  # R-G7: the suggester sees it (the refuter knows it)
    s.refuted_on[b, ref, s.hist_triple[b, h, 0]] = min(s.refuted_on[b, ref, s.hist_triple[b, h, 0]], _CAP) + 1
    c1 = WEAPON_CARD0 + s.hist_triple[b, h, 1]
    s.refuted_on[b, ref, c1] = min(s.refuted_on[b, ref, c1], _CAP) + 1
    c2 = ROOM_CARD0 + s.hist_triple[b, h, 2]
    s.refuted_on[b, ref, c2] = min(s.refuted_on[b, ref, c2], _CAP) + 1
    s.refuter[b] = -1
    if rules.refute_all:  # R-G6 variant: every other player is asked
        _ask_refuters(s, rules, b, ref)
    else:
        _suggestion_resolved(s, rules, b)


@njit(**HELPER)
def _suggestion_resolved(s, rules, b: int) -> None:
    s.refuter[b] = -1
    if rules.accuse_after_suggestion:  # R-G8
        s.phase[b] = _POST
    else:  # R-G8 variant: the turn ends with the suggestion
        _end_turn(s, rules, b)


@njit(**HELPER)
def _accuse(s, rules, tables, b: int, t: int) -> None:
    P = rules.players
    cur = s.current[b]
    sus, wc, rc = triple_cards(t)
    correct = sus == s.envelope[b, 0] and wc == s.envelope[b, 1] and rc == s.envelope[b, 2]  # R-A2
    h = _append_history(s, b, cur, t)
    s.hist_kind[b, h] = ACCUSATION
    s.hist_correct[b, h] = correct
    s.accused_at[b, cur] = h
    if correct:  # R-A3, R-E1
        _finish(s, rules, b, np.int64(cur))  # int64 at every call: one compiled version of _finish
        return
    s.eliminated[b, cur] = True  # R-A4
    if rules.has_board:
        loc = s.pos[b, cur]
        if loc < NUM_SQUARES and tables.front_room[loc] >= 0:  # R-A5: do not block the door
            s.pos[b, cur] = ROOM_LOC0 + tables.front_room[loc]
    alive, last = 0, -1
    for p in range(P):
        if not s.eliminated[b, p]:
            alive += 1
            last = p
    if alive == 0:  # R-E4
        _finish(s, rules, b, np.int64(-1))
    elif alive == 1 and rules.last_standing_wins:  # R-E2
        _finish(s, rules, b, np.int64(last))
    else:
        _end_turn(s, rules, b)  # R-A4: every accusation ends the accuser's turn


@njit(**HELPER)
def _finish(s, rules, b: int, winner: int) -> None:
    s.winner[b] = winner
    s.terminated[b] = True
    s.turn_count[b] += 1  # the turn that ended the game counts as played
    s.phase[b] = _OVER
    s.refuter[b] = -1
    for p in range(rules.players):  # R-E1, R-E2: +1 the winner, -1 the others; R-E4: -1 for all
        s.rewards[b, p] = 1.0 if p == winner else -1.0


@njit(**HELPER)
def _end_turn(s, rules, b: int) -> None:
    P = rules.players
    cur = s.current[b]
    s.dragged[b, cur] = False  # R-T3 lasts until the end of the player's next turn
    s.turn_count[b] += 1
    s.roll[b] = 0
    if s.turn_count[b] >= rules.max_turns:  # R-E3: truncation, no winner, reward 0
        s.truncated[b] = True
        s.phase[b] = _OVER
        return
    nxt = (cur + 1) % P  # clockwise, skipping eliminated players (R-A4); someone is alive here
    while s.eliminated[b, nxt]:
        nxt = (nxt + 1) % P
    s.current[b] = nxt
    s.phase[b] = _START if rules.has_board else _SUGGEST


# ===================================================================== summaries
@njit(**INLINE)
def _clear_summaries(s, P: int, b: int) -> None:
    """Game ``b``'s history summaries as for an empty history."""
    for p in range(P):
        s.accused_at[b, p] = -1
        s.passed_on[b, p] = 0
        for q in range(P):
            s.seen[b, p, q] = 0
        for c in range(NUM_CARDS):
            s.refuted_on[b, p, c] = 0
            s.named_count[b, p, c] = 0


@njit(**KERNEL)
def rebuild_summaries(s, rules, b: int) -> None:
    """Recompute game ``b``'s history summaries (``seen`` .. ``accused_at``) from its history."""
    P = rules.players
    _clear_summaries(s, P, b)
    for h in range(s.hist_len[b]):
        p = s.hist_player[b, h]
        if s.hist_kind[b, h] == ACCUSATION:
            s.accused_at[b, p] = h
            continue
        named = (
            np.int64(s.hist_triple[b, h, 0]),
            WEAPON_CARD0 + np.int64(s.hist_triple[b, h, 1]),
            ROOM_CARD0 + np.int64(s.hist_triple[b, h, 2]),
        )
        for c in named:
            s.named_count[b, p, c] = min(s.named_count[b, p, c], _CAP) + 1
        for seat in range(P):
            resp = s.hist_response[b, h, seat]
            if resp == PASSED:
                s.passed_on[b, seat] |= triple_card_bits(s.hist_triple[b, h])
            elif resp >= 0:
                s.seen[b, p, seat] |= 1 << resp
                for c in named:
                    s.refuted_on[b, seat, c] = min(s.refuted_on[b, seat, c], _CAP) + 1


# ===================================================================== one seat's legal actions
@njit(**INLINE)
def _actor(phase, refuter, current, b) -> int:
    """Who is to act in game b: the refuter in REFUTE, else the player whose turn it is; nobody (-1) once the game
    is over. The one statement (:attr:`cluedo_env.engine.vector_engine.VectorEngine.actor` reads it here)."""
    if phase[b] == _OVER:
        return -1
    return refuter[b] if phase[b] == _REFUTE else current[b]


@njit(**KERNEL)
def actors(phase, refuter, current, out) -> None:
    """``out`` (B,) int8: :func:`_actor` of every game."""
    for b in range(out.shape[0]):
        out[b] = _actor(phase, refuter, current, b)


@njit(**HELPER)
def _first_outside(idx, B) -> int:
    """The first i whose game ``idx[i]`` is not one of the batch's B, else -1 (the players' row queries check their
    indices here, in the pass that reads them)."""
    for i in range(idx.shape[0]):
        if idx[i] < 0 or idx[i] >= B:
            return i
    return -1


@njit(**KERNEL)
def seat_mask_rows(seat, idx, phase, refuter, current, mask, out) -> int:
    """Rows ``idx`` of the legal mask ``mask`` (B, A) into ``out`` (n, A), all False where ``seat`` is not the one to
    act (:func:`_actor`). Returns -1, or the first i whose game ``idx[i]`` is not in the batch (nothing written)."""
    bad = _first_outside(idx, mask.shape[0])
    if bad >= 0:
        return bad
    u = np.uint64
    for i in range(idx.shape[0]):
        b = idx[i]
        o = out[i]
        if _actor(phase, refuter, current, b) == seat:
            m = mask[b]
            for a in range(u(mask.shape[1])):
                o[a] = m[a]
        else:
            for a in range(u(mask.shape[1])):
                o[a] = False
    return -1


# ===================================================================== players' masks: legality, the room named
@njit(**KERNEL)
def all_legal_rows(out: np.ndarray, mask: np.ndarray) -> bool:
    """Whether every action ``out[i]`` (n,) int64 is legal in row i of ``mask`` (n, A) bool (a player's check of
    its own choices, :func:`cluedo_env.agents.players.base.replace_illegal`)."""
    for i in range(out.shape[0]):
        if out[i] < 0 or out[i] >= mask.shape[1] or not mask[i, out[i]]:
            return False
    return True


@njit(**KERNEL)
def suggestion_room_rows(mask: np.ndarray, out: np.ndarray) -> None:
    """``out`` (n,) int64: the room (0..8) of the first legal suggestion in each row of ``mask`` (n, A) bool, -1
    where none is legal. On the board every legal suggestion names the room the player stands in (R-G1)."""
    for i in range(mask.shape[0]):
        out[i] = -1
        for a in range(_SUGGEST0, _SHOW0):
            if mask[i, a]:
                out[i] = triple_of(a - _SUGGEST0)[2]
                break


@njit(**KERNEL)
def known_envelope_rows(seat, idx, accused_at, envelope, out) -> int:
    """``out`` (n, 3): the envelope of games ``idx`` where ``seat`` has accused (R-A2: the accuser sees the solution),
    else -1; the one rule of who sees the envelope before the end, for the players' views. Returns -1, or the first
    i whose game ``idx[i]`` is not in the batch (nothing written)."""
    bad = _first_outside(idx, envelope.shape[0])
    if bad >= 0:
        return bad
    for i in range(idx.shape[0]):
        b = idx[i]
        seen = accused_at[b, seat] >= 0
        for k in range(3):
            out[i, k] = envelope[b, k] if seen else -1
    return -1


# ===================================================================== one seat's history
@njit(**KERNEL)
def history_records(
    me, idx, start, stop, hist_len, hist_kind, hist_player, hist_triple, hist_correct, hist_response,
    game, index, is_accusation, player, triple, correct, response,
) -> int:  # fmt: skip
    """Seat ``me``'s view of records ``start[k]`` .. ``stop[k] - 1`` of games ``idx[k]``, written into the
    ``Records`` arrays (engine/views.py) in that order: an accusation's responses read "not asked", and a shown
    card the seat may not see (R-G7) reads ``HIDDEN``. Returns -1, or the first k whose range is beyond its game's
    history or whose game is not in the batch (nothing is read for it)."""
    m = 0
    P = hist_response.shape[2]
    for k in range(idx.shape[0]):
        b = idx[k]
        if b < 0 or b >= hist_len.shape[0] or start[k] < 0 or (stop[k] > start[k] and stop[k] > hist_len[b]):
            return k
        for h in range(start[k], stop[k]):
            acc = hist_kind[b, h] == ACCUSATION
            p = hist_player[b, h]
            game[m] = b
            index[m] = h
            is_accusation[m] = acc
            player[m] = p
            for j in range(3):
                triple[m, j] = hist_triple[b, h, j]
            correct[m] = hist_correct[b, h] and acc
            for seat in range(P):
                r = hist_response[b, h, seat]
                if acc:
                    r = NOT_ASKED
                elif r >= 0 and not may_see_shown_card(me, p, seat):
                    r = HIDDEN
                response[m, seat] = r
            m += 1
    return -1



@njit(**KERNEL)
def history_counts(idx, hist_len, hist_kind, hist_player, hist_correct, suggestions, wrong, won) -> None:
    """Per game ``idx[k]``: its ``suggestions[k]`` (int64), ``wrong[k, p]`` (int64, (n, P)) wrong accusations by
    seat p, and ``won[k]`` (bool) whether its last record is a correct accusation (the public outcome of a game
    that has ended; the runner's game records, without a dozen numpy calls per game)."""
    for k in range(idx.shape[0]):
        b = idx[k]
        s = 0
        for p in range(wrong.shape[1]):
            wrong[k, p] = 0
        for h in range(hist_len[b]):
            if hist_kind[b, h] != ACCUSATION:
                s += 1
            elif not hist_correct[b, h]:
                wrong[k, hist_player[b, h]] += 1
        suggestions[k] = s
        last = hist_len[b] - 1
        won[k] = last >= 0 and hist_kind[b, last] == ACCUSATION and hist_correct[b, last]

__all__ = [
    "all_legal_rows",
    "first_illegal",
    "history_counts",
    "history_records",
    "is_legal",
    "is_legal_of",
    "known_envelope_rows",
    "may_see_shown_card",
    "new_games",
    "rebuild_summaries",
    "seat_mask_rows",
    "apply_actions",
    "step",
    "step_parts",
    "suggestion_room_rows",
    "update_legal",
    "update_legal_of",
]
