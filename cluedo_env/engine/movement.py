"""Exact move destinations (R-M1..R-M6), one move at a time, as numba kernels.

Why this shape: the batched engine loops over games inside compiled code and asks for
one move at a time, so the generator is a per-move kernel (:func:`fill_destinations`)
that takes only numpy arrays (:class:`MoveTables`) and can be called from any ``@njit``
function; :func:`destinations` is a thin batched wrapper for numpy callers.

Why it is fast and exact for two dice: whether a square can be reached with *exactly*
``k`` pips along a *simple* path that avoids other tokens is a question about paths, not
distances, and the number of simple paths grows exponentially with ``k`` (1.67M of them
up to 12 pips over all starts). The paths are therefore enumerated once, when the tables
are built, and summarised per *family*: for a start ``s``, a roll ``k`` and a location
``x``, the family is every simple path from ``s`` that makes ``x`` a destination, i.e.
that ends on square ``x`` after exactly ``k`` pips (R-M3), or, for a room ``x``, ends on
the square in front of one of its doors after at most ``k`` pips (R-M4; never the room
left, R-M5; a room start's paths begin on its door fronts, R-M5, R-M6). Per family:

* its *cut squares*: the squares every path of the family steps on. One token on a cut
  square makes ``x`` unreachable; a token elsewhere leaves a path.
* a few *witnesses*: paths of the family chosen to overlap as little as possible. If the
  tokens miss one of them, ``x`` is reachable.

A move then costs, in order of how often each step is needed (two dice, positions from
random play: 53% of moves take step 1 only, 47% step 2, under 4% also step 3; see
scripts/bench_movement.py):

1. No other token within ``k`` pips (``distance``): nothing can be cut; the answer is
   the empty board's destination list of (s, k).
2. Otherwise, for each empty-board destination: ruled out if a nearby token stands on a
   cut square; proved if a witness avoids every nearby token, or if only one token is
   near (it is on no cut square, so some path misses it). Exact either way.
3. The rare rest (several tokens together cover every witness without one of them
   cutting the family alone) goes to an exact search around the tokens
   (:func:`_exact_search`): a breadth-first search, one bit set of squares per pip,
   decides rooms and the squares whose fewest pips around the tokens equal the roll; a
   depth-first search over simple paths, pruned to the branches that can still reach an
   undecided square in the pips left, decides the others.

Tables for two dice: 6.2 MB, built in 0.25 s of CPU (one die: 1.6 MB, 0.01 s), once the
numba functions are compiled (cached on disk: ``cache=True``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numba
import numpy as np

from cluedo_env.engine.numba_internals import prefetch, trailing_zeros
from cluedo_env.rules.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0, Board, load_board
from cluedo_env.rules.cards import NUM_ROOMS

# Small functions of the move kernel: typed and compiled once, then always inlined by LLVM (see
# ``cluedo_env.engine.kernels.INLINE`` for why not numba's own ``inline="always"``).
_INLINE = {"cache": True, "nogil": True, "forceinline": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}

WORDS = 3  # 188 squares fit in three 64-bit words (path and token masks)
WITNESSES = 4  # witness paths kept per family
_NO = 255  # "not reached" in a breadth-first distance


class MoveTables(NamedTuple):
    """Everything the kernels need, packed into two flat arrays (and one int).

    Why packed: numba counts references to every array a call passes, atomically, and in
    a loop over games it cannot drop those counts; a tuple of eleven arrays cost ~200 ns
    per move, more than the whole table lookup, two cost ~10 ns. The parts, at the
    offsets :func:`_layout` gives (``K = max_roll + 1``; a *slot* is one (start, roll,
    destination) of the empty board, the slots of (s, k) being ``first[s * K + k]`` up to
    ``first[s * K + k + 1]``, by location), are also readable as properties, for Python:

    ``ints`` int32: ``distance`` (197, 197) fewest pips on the empty board (Board.distance);
    ``exits`` (197, 4) first steps from a location (see exits()), -1 padded, packed left;
    ``front_room`` (188,) the room whose door a square is in front of, -1 if none;
    ``first`` (197 * K + 1,) first slot of each (start, roll); ``dest`` (S,) the destination
    of each slot.

    ``words`` uint64: ``ball`` (188, K, 3) bit t of [s, r] set iff distance[s, t] <= r;
    ``neighbors`` (188, 3) the squares next to each square; ``room_fronts`` (9, 3) the
    squares in front of each room's doors; ``paths`` (S, 1 + WITNESSES, 3) per slot, the
    square masks of its cut squares, then of its witness paths (never the start square):
    one record per slot, read in one stream.
    """

    max_roll: int
    ints: np.ndarray  # (38997 + 394 * K + S,) int32, see above
    words: np.ndarray  # (197 * K * 752 + 188 * K * 3 + S * WITNESSES * 3,) uint64, see above
    # (2 * K,) int64: working memory of the exact search. The kernels allocate nothing (the engine
    # compiles them without reference counting), so each concurrent user needs its own: with_scratch().
    stack: np.ndarray

    def _part(self, name: str) -> np.ndarray:
        at = dict(zip(_PARTS, _layout.py_func(self.max_roll), strict=True))
        k = self.max_roll + 1
        s = len(self.ints) - at["dest"]
        shapes = {
            "distance": (NUM_LOCATIONS, NUM_LOCATIONS),
            "exits": (NUM_LOCATIONS, 4),
            "front_room": (NUM_SQUARES,),
            "first": (NUM_LOCATIONS * k + 1,),
            "dest": (s,),
            "ball": (NUM_SQUARES, k, WORDS),
            "neighbors": (NUM_SQUARES, WORDS),
            "room_fronts": (NUM_ROOMS, WORDS),
            "paths": (s, 1 + WITNESSES, WORDS),
        }
        buf = self.words if name in ("ball", "neighbors", "room_fronts", "paths") else self.ints
        return buf[at[name] : at[name] + int(np.prod(shapes[name]))].reshape(shapes[name])

    distance = property(lambda self: self._part("distance"))
    exits = property(lambda self: self._part("exits"))
    front_room = property(lambda self: self._part("front_room"))
    first = property(lambda self: self._part("first"))
    dest = property(lambda self: self._part("dest"))
    ball = property(lambda self: self._part("ball"))
    neighbors = property(lambda self: self._part("neighbors"))
    room_fronts = property(lambda self: self._part("room_fronts"))
    paths = property(lambda self: self._part("paths"))

    @property
    def empty(self) -> np.ndarray:
        """(197, K, 197) bool: the destinations on the empty board, from the slots."""
        k = self.max_roll + 1
        out = np.zeros((NUM_LOCATIONS * k, NUM_LOCATIONS), np.bool_)
        first = self.first
        rows = np.repeat(np.arange(NUM_LOCATIONS * k), np.diff(first))
        out[rows, self.dest] = True
        return out.reshape(NUM_LOCATIONS, k, NUM_LOCATIONS)


_PARTS = ("distance", "exits", "front_room", "first", "dest", "ball", "neighbors", "room_fronts", "paths")


@numba.njit(**_INLINE)
def _layout(max_roll: int) -> tuple[int, int, int, int, int, int, int, int, int]:
    """Offsets of the parts of MoveTables (see there), in the order of ``_PARTS``."""
    k = max_roll + 1
    exits_at = NUM_LOCATIONS * NUM_LOCATIONS
    front_at = exits_at + NUM_LOCATIONS * 4
    first_at = front_at + NUM_SQUARES
    dest_at = first_at + NUM_LOCATIONS * k + 1
    neighbors_at = NUM_SQUARES * k * WORDS
    fronts_at = neighbors_at + NUM_SQUARES * WORDS
    paths_at = fronts_at + NUM_ROOMS * WORDS
    return 0, exits_at, front_at, first_at, dest_at, 0, neighbors_at, fronts_at, paths_at


# ------------------------------------------------------------------------------------ tables
@numba.njit(**_INLINE)
def _popcount(x: np.uint64) -> int:
    """Set bits of a 64-bit word (SWAR), for choosing witnesses."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True)
def _families(
    exits: np.ndarray,
    front_room: np.ndarray,
    max_roll: int,
    start: int,
    npass: int,
    inter: np.ndarray,
    wit: np.ndarray,
    score: np.ndarray,
    seen: np.ndarray,
    visited: np.ndarray,
    path: np.ndarray,
    nxt: np.ndarray,
    masks: np.ndarray,
) -> None:
    """One pass over every simple path of at most ``max_roll`` pips from ``start`` (R-M1, R-M2).

    Each path is offered to the families it belongs to (see the module docstring): the
    square it ends on, at its depth (R-M3), and, if that square is in front of a door of a
    room other than the one left (R-M4, R-M5), that room at every roll from its depth up
    (a token on the front square at the start enters with any roll: an empty path).
    Pass 0 fills ``seen`` (k, 197) bool and the cut squares ``inter`` (k, 197, 3) uint64,
    and takes as witness 0 a shortest path; pass j > 0 takes as witness j the path that
    steps on the fewest non-cut squares of witnesses 0..j-1, the shorter first on a tie.
    ``wit`` (k, 197, WITNESSES, 3) uint64. Scratch: ``score`` (k, 197) int64, ``visited`` (197,) bool (on the
    path), ``path`` and ``nxt`` (k,) int64 (the location and next exit to try at each depth), ``masks`` (k, 3)
    uint64 (the squares stepped on up to each depth). A path's mask holds the squares it steps on, never the start:
    as many bits as pips.
    The offers are written out here rather than in a helper: a call per offer would
    cost ten times the walk. Nothing is allocated here: allocating would compile numpy's allocators too.
    """
    origin = start - ROOM_LOC0 if start >= ROOM_LOC0 else -1
    for loc in range(NUM_LOCATIONS):
        visited[loc] = False
    for d in range(max_roll + 1):
        nxt[d] = 0
        for w in range(WORDS):
            masks[d, w] = 0
    for k in range(score.shape[0]):
        for loc in range(NUM_LOCATIONS):
            score[k, loc] = 1 << 40
    depth = 0
    path[0] = start
    visited[start] = True
    new = True
    while depth >= 0:
        here = path[depth]
        if new and here < NUM_SQUARES:  # offer the path that just reached `here`
            room = front_room[here]
            k_room = max(depth, 1)
            offers = max_roll - k_room + 2 if room >= 0 and room != origin else 1  # R-M4, R-M5
            for q in range(0 if depth >= 1 else 1, offers):
                if q == 0:
                    k, loc = depth, here  # R-M3
                else:
                    k, loc = k_room + q - 1, ROOM_LOC0 + room
                if npass == 0:
                    if not seen[k, loc]:
                        seen[k, loc] = True
                        for w in range(WORDS):
                            inter[k, loc, w] = masks[depth, w]
                    else:
                        for w in range(WORDS):
                            inter[k, loc, w] &= masks[depth, w]
                    value = depth
                else:
                    overlap = 0
                    for i in range(npass):
                        for w in range(WORDS):
                            overlap += _popcount(masks[depth, w] & wit[k, loc, i, w] & ~inter[k, loc, w])
                    value = overlap * 64 + depth
                if value < score[k, loc]:
                    score[k, loc] = value
                    for w in range(WORDS):
                        wit[k, loc, npass, w] = masks[depth, w]
        new = False
        j = nxt[depth]
        if j == 4 or depth == max_roll or exits[here, j] < 0:
            visited[here] = False
            nxt[depth] = 0
            depth -= 1
            continue
        nxt[depth] = j + 1
        step = exits[here, j]
        if visited[step]:
            continue
        depth += 1
        path[depth] = step
        visited[step] = True
        for w in range(WORDS):
            masks[depth, w] = masks[depth - 1, w]
        masks[depth, step >> 6] |= np.uint64(1) << np.uint64(step & 63)
        new = True


def _build_tables(
    exits: np.ndarray, front_room: np.ndarray, distance: np.ndarray, max_roll: int
) -> tuple[np.ndarray, np.ndarray]:
    """(ints, words) of :class:`MoveTables`, from every simple path.

    Two sweeps over the starts: the first only finds the families (the empty board's
    destinations, to size the slot arrays), the second summarises each one. Only the walk
    (:func:`_families`) is compiled: the packing around it is a few numpy calls per start,
    and compiling it too cost seconds on an empty numba cache (numpy's allocators and the
    error paths of slice assignment) for milliseconds of run time.
    """
    K = max_roll + 1
    _, exits_at, front_at, first_at, dest_at, ball_at, neighbors_at, fronts_at, paths_at = _layout.py_func(max_roll)
    exits = np.ascontiguousarray(exits, np.int16)
    front_room = np.ascontiguousarray(front_room, np.int16)
    inter = np.zeros((K, NUM_LOCATIONS, WORDS), np.uint64)
    wit = np.zeros((K, NUM_LOCATIONS, WITNESSES, WORDS), np.uint64)
    score = np.empty((K, NUM_LOCATIONS), np.int64)
    seen = np.zeros((K, NUM_LOCATIONS), np.bool_)
    scratch = (np.zeros(NUM_LOCATIONS, np.bool_), np.zeros(K, np.int64), np.zeros(K, np.int64),
               np.zeros((K, WORDS), np.uint64))  # fmt: skip
    n_slots = 0
    for start in range(NUM_LOCATIONS):
        seen[:] = False
        _families(exits, front_room, max_roll, start, 0, inter, wit, score, seen, *scratch)
        n_slots += int(seen.sum())
    ints = np.empty(dest_at + n_slots, np.int32)
    words = np.zeros(paths_at + n_slots * (1 + WITNESSES) * WORDS, np.uint64)
    ints[:exits_at] = distance.ravel()
    ints[exits_at:front_at] = exits.ravel()
    ints[front_at:first_at] = front_room
    squares = np.arange(NUM_SQUARES)
    bits = np.uint64(1) << (squares & 63).astype(np.uint64)
    ball = np.zeros((NUM_SQUARES, K, WORDS), np.uint64)  # bit `other` of [sq, r] iff distance[sq, other] <= r
    for r in range(K):
        near = distance[:NUM_SQUARES, :NUM_SQUARES] <= r
        for w in range(WORDS):
            part = squares >> 6 == w
            ball[:, r, w] = np.bitwise_or.reduce(np.where(near[:, part], bits[part], np.uint64(0)), axis=1)
    words[ball_at : ball_at + ball.size] = ball.ravel()
    for loc in range(NUM_LOCATIONS):  # neighbours of a square, door fronts of a room
        for j in range(4):
            other = int(exits[loc, j])
            if other >= 0:
                at = neighbors_at + loc * WORDS if loc < NUM_SQUARES else fronts_at + (loc - ROOM_LOC0) * WORDS
                words[at + (other >> 6)] |= np.uint64(1) << np.uint64(other & 63)
    records = words[paths_at:].reshape(n_slots, 1 + WITNESSES, WORDS)
    slot = 0
    for start in range(NUM_LOCATIONS):
        seen[:] = False
        for npass in range(WITNESSES):
            _families(exits, front_room, max_roll, start, npass, inter, wit, score, seen, *scratch)
        k, loc = np.nonzero(seen)  # the slots of (start, k), by roll then location
        n = len(k)
        ints[first_at + start * K : first_at + (start + 1) * K] = slot + np.searchsorted(k, np.arange(K))
        ints[dest_at + slot : dest_at + slot + n] = loc
        records[slot : slot + n, 0] = inter[k, loc]
        records[slot : slot + n, 1:] = wit[k, loc]
        slot += n
    ints[first_at + NUM_LOCATIONS * K] = slot
    return ints, words


def _build(board: Board, max_roll: int) -> MoveTables:
    """The tables of ``board`` for rolls up to ``max_roll``, uncached (move_tables() caches)."""
    front_room = np.full(NUM_SQUARES, -1, np.int16)
    for sq, room in board.front_room.items():
        front_room[sq] = room
    ints, words = _build_tables(exits(board), front_room, board.distance, max_roll)
    return MoveTables(max_roll=max_roll, ints=ints, words=words, stack=np.zeros(2 * (max_roll + 1), np.int64))


def with_scratch(t: MoveTables) -> MoveTables:
    """``t`` sharing its tables, with working memory of its own (one per engine or thread)."""
    return t._replace(stack=np.zeros_like(t.stack))


@lru_cache(maxsize=2)
def move_tables(max_roll: int) -> MoveTables:
    """The tables for rolls up to ``max_roll`` (6 for one die, 12 for two), built once per process."""
    return _build(load_board(), max_roll)


# ------------------------------------------------------------------------------------ kernels
@numba.njit(**_INLINE)
def _distance_at(start: int, location: int) -> int:
    """Where ``distance[start, location]`` sits in ``MoveTables.ints`` (the distance table comes first)."""
    return start * NUM_LOCATIONS + location


@numba.njit(**_INLINE)
def fill_destinations(t: MoveTables, start: int, roll: int, others: np.ndarray, out: np.ndarray) -> int:
    """Mark the legal destinations of a token at ``start`` with ``roll`` pips in ``out``; return their number.

    ``start`` a location 0..196, ``1 <= roll <= t.max_roll``, ``others`` (m,) int the
    locations of the other suspect tokens (entries < 0 or >= 188 never block), ``out``
    (197,) bool, all False on entry. No destination (0) means the move is forfeited (R-M8).
    Inlined into compiled callers by LLVM (``forceinline``): the table lookup costs less than a call.
    """
    ints = t.ints
    for j in range(others.shape[0]):
        o = others[j]
        if 0 <= o < NUM_SQUARES and ints[_distance_at(start, o)] <= roll:
            return _with_tokens(t, start, roll, others, out)
    first_at, dest_at = _layout(t.max_roll)[3:5]
    row = first_at + start * (t.max_roll + 1) + roll
    lo, hi = ints[row], ints[row + 1]
    for slot in range(lo, hi):
        out[ints[dest_at + slot]] = True
    return hi - lo


@numba.njit(**_INLINE)
def prefetch_distances(t: MoveTables, start: int, tokens: np.ndarray, mover: int) -> None:
    """Ask the CPU for the distances :func:`fill_destinations` reads first, from ``start`` to each token but the
    mover's (``tokens``: every suspect token's location). Why: they sit in a 155 KB table at rows that differ from
    move to move, so each missed the caches; a batch kernel calls this a few games ahead of the move."""
    for j in range(tokens.shape[0]):
        o = tokens[j]
        if j != mover and 0 <= o < NUM_SQUARES:
            prefetch(t.ints, _distance_at(start, o))


@numba.njit(**_INLINE)
def _with_tokens(t: MoveTables, start: int, roll: int, others: np.ndarray, out: np.ndarray) -> int:
    """Step 2 of the module docstring: cut squares rule out, witnesses prove, the rest is searched."""
    ints, words = t.ints, t.words
    K = t.max_roll + 1
    first_at, dest_at = _layout(t.max_roll)[3:5]
    paths_at = _layout(t.max_roll)[8]
    one = np.uint64(1)
    b0 = b1 = b2 = np.uint64(0)  # squares of the tokens within the roll (only they can be in the way)
    tokens = 0
    for j in range(others.shape[0]):
        o = others[j]
        if 0 <= o < NUM_SQUARES and ints[_distance_at(start, o)] <= roll:
            tokens += 1
            bit = one << np.uint64(o & 63)
            if o < 64:
                b0 |= bit
            elif o < 128:
                b1 |= bit
            else:
                b2 |= bit
    r0 = r1 = r2 = r3 = np.uint64(0)  # undecided locations
    n = 0
    row = first_at + start * K + roll
    for slot in range(ints[row], ints[row + 1]):
        record = paths_at + slot * (1 + WITNESSES) * WORDS
        if ((words[record] & b0) | (words[record + 1] & b1) | (words[record + 2] & b2)) != 0:
            continue  # a token stands on a square every path steps on (R-M2)
        proved = tokens == 1  # one token off every cut square leaves some path free
        for i in range(1, 1 + WITNESSES):
            if proved:
                break
            path = record + i * WORDS
            proved = ((words[path] & b0) | (words[path + 1] & b1) | (words[path + 2] & b2)) == 0
        loc = ints[dest_at + slot]
        if proved:
            out[loc] = True
            n += 1
            continue
        bit = one << np.uint64(loc & 63)
        w = loc >> 6
        if w == 0:
            r0 |= bit
        elif w == 1:
            r1 |= bit
        elif w == 2:
            r2 |= bit
        else:
            r3 |= bit
    if (r0 | r1 | r2 | r3) != 0:
        n += _exact_search(t, start, roll, b0, b1, b2, r0, r1, r2, r3, out)
    return n


@numba.njit(**_INLINE)
def _mark(x: np.uint64, base: int, out: np.ndarray) -> int:
    """Set ``out[base + i]`` for every bit i of ``x``; return how many."""
    n = 0
    while x:
        out[base + trailing_zeros(x)] = True
        x &= x - np.uint64(1)
        n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _exact_search(
    t: MoveTables,
    start: int,
    roll: int,
    b0: np.uint64,
    b1: np.uint64,
    b2: np.uint64,
    r0: np.uint64,
    r1: np.uint64,
    r2: np.uint64,
    r3: np.uint64,
    out: np.ndarray,
) -> int:
    """Decide the undecided locations (bits ``r0..r3`` over 0..196) by search; mark and count the reachable.

    ``b0..b2``: the squares of the tokens (at least those within the roll). A breadth-first
    search around the tokens, one layer of squares (a bit set) per pip, decides the rooms
    (a shortest path is simple, and a room needs at most the roll: R-M4) and the squares
    first reached on the last pip; it stops once nothing it can decide is left. A square
    reached with pips to spare needs a detour: a depth-first search over simple paths
    decides those, skipping every branch from which none of them lies within the pips left
    (``ball``) and stopping once all are found. Given every empty-board destination as
    undecided it is a complete generator on its own (the tests use it so).
    """
    ints, words = t.ints, t.words
    K = t.max_roll + 1
    _, exits_at, _, _, _, ball_at, neighbors_at, fronts_at, _ = _layout(t.max_roll)
    one = np.uint64(1)
    zero = np.uint64(0)
    rooms = (r2 >> np.uint64(ROOM_LOC0 - 128)) | (r3 << np.uint64(192 - ROOM_LOC0))  # bit r: room r undecided
    u0, u1, u2 = r0, r1, r2 & ((one << np.uint64(ROOM_LOC0 - 128)) - one)  # undecided squares
    d0 = d1 = d2 = zero  # undecided squares reached with pips to spare: for the depth-first search
    # Breadth-first layers: f the squares first reached after `depth` pips, v all reached so far.
    if start >= ROOM_LOC0:
        at = fronts_at + (start - ROOM_LOC0) * WORDS
        f0, f1, f2 = words[at] & ~b0, words[at + 1] & ~b1, words[at + 2] & ~b2  # R-M5, R-M6
        depth = 1
    else:
        f0 = f1 = f2 = zero
        bit = one << np.uint64(start & 63)
        if start < 64:
            f0 = bit
        elif start < 128:
            f1 = bit
        else:
            f2 = bit
        depth = 0
    v0, v1, v2 = f0, f1, f2
    n = 0
    while True:
        rest = rooms
        while rest:  # R-M4: a door front reached within the roll lets the token in
            room = trailing_zeros(rest)
            rest &= rest - one
            at = fronts_at + room * WORDS
            if (words[at] & f0) | (words[at + 1] & f1) | (words[at + 2] & f2):
                out[ROOM_LOC0 + room] = True
                n += 1
                rooms &= ~(one << np.uint64(room))
        h0, h1, h2 = f0 & u0, f1 & u1, f2 & u2
        if h0 | h1 | h2:
            if depth == roll:  # R-M3: the shortest path uses the whole roll
                n += _mark(h0, np.int64(0), out) + _mark(h1, np.int64(64), out) + _mark(h2, np.int64(128), out)
            else:
                d0, d1, d2 = d0 | h0, d1 | h1, d2 | h2
            u0, u1, u2 = u0 & ~h0, u1 & ~h1, u2 & ~h2
        if depth == roll or (rooms | u0 | u1 | u2) == 0:
            break
        g0 = g1 = g2 = zero
        for w, fw in ((0, f0), (1, f1), (2, f2)):
            while fw:
                at = neighbors_at + (w * 64 + trailing_zeros(fw)) * WORDS
                fw &= fw - one
                g0 |= words[at]
                g1 |= words[at + 1]
                g2 |= words[at + 2]
        f0, f1, f2 = g0 & ~(v0 | b0), g1 & ~(v1 | b1), g2 & ~(v2 | b2)
        if (f0 | f1 | f2) == 0:
            break
        v0, v1, v2 = v0 | f0, v1 | f1, v2 | f2
        depth += 1
    if (d0 | d1 | d2) == 0:
        return n  # what is left undecided is out of reach
    # Depth-first over simple paths (R-M2) for the squares that need a detour.
    stack = t.stack  # the path's squares, then each one's next exit to try (2 * (roll + 1) used)
    p0 = p1 = p2 = zero  # the path's squares
    if start < NUM_SQUARES:
        bit = one << np.uint64(start & 63)
        if start < 64:
            p0 = bit
        elif start < 128:
            p1 = bit
        else:
            p2 = bit
    depth = 0
    stack[0] = start
    stack[roll + 1] = 0
    while depth >= 0:
        here = stack[depth]
        j = stack[roll + 1 + depth]
        step = ints[exits_at + here * 4 + j] if j < 4 else -1
        if step < 0:
            if here < NUM_SQUARES:
                bit = ~(one << np.uint64(here & 63))
                if here < 64:
                    p0 &= bit
                elif here < 128:
                    p1 &= bit
                else:
                    p2 &= bit
            depth -= 1
            continue
        stack[roll + 1 + depth] = j + 1
        bit = one << np.uint64(step & 63)
        w = step >> 6
        taken = (b0 | p0) if w == 0 else (b1 | p1) if w == 1 else (b2 | p2)
        if taken & bit:
            continue
        left = roll - depth - 1
        if left == 0:
            wanted = d0 if w == 0 else d1 if w == 1 else d2
            if wanted & bit:
                out[step] = True
                n += 1
                if w == 0:
                    d0 &= ~bit
                elif w == 1:
                    d1 &= ~bit
                else:
                    d2 &= ~bit
                if (d0 | d1 | d2) == 0:
                    break
            continue
        near = ball_at + (step * K + left) * WORDS
        if ((words[near] & d0) | (words[near + 1] & d1) | (words[near + 2] & d2)) == 0:
            continue  # no square still wanted within the pips left
        depth += 1
        stack[depth] = step
        stack[roll + 1 + depth] = 0
        if w == 0:
            p0 |= bit
        elif w == 1:
            p1 |= bit
        else:
            p2 |= bit
    return n


@numba.njit(cache=True, nogil=True)
def _destinations(t: MoveTables, start: np.ndarray, roll: np.ndarray, others: np.ndarray, out: np.ndarray) -> None:
    """The compiled loop behind :func:`destinations`: one kernel call per move, row i of ``out`` (n, 197)."""
    for i in range(start.shape[0]):
        fill_destinations(t, start[i], roll[i], others[i], out[i])


def destinations(t: MoveTables, start: np.ndarray, roll: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(n, 197) bool: the legal destinations of n moves (R-M1..R-M6), by :func:`fill_destinations`.

    ``start`` (n,) int mover locations, ``roll`` (n,) int pips, ``others`` (n, m) int the
    locations of the other suspect tokens (rooms and negative entries never block).
    The kernel trusts its arguments (it has no bounds checks); this wrapper checks them.
    """
    start = np.ascontiguousarray(start, np.int64)
    roll = np.ascontiguousarray(roll, np.int64)
    others = np.ascontiguousarray(others, np.int64)
    n = len(start)
    if start.shape != (n,) or roll.shape != (n,) or others.ndim != 2 or len(others) != n:
        raise ValueError(f"need start (n,), roll (n,), others (n, m); got {start.shape}, {roll.shape}, {others.shape}")
    if n and not (0 <= start.min() and start.max() < NUM_LOCATIONS and 1 <= roll.min() and roll.max() <= t.max_roll):
        raise ValueError(f"start must be in 0..{NUM_LOCATIONS - 1} and roll in 1..{t.max_roll}")
    out = np.zeros((n, NUM_LOCATIONS), np.bool_)
    _destinations(with_scratch(t), start, roll, others, out)
    return out


def exits(board: Board) -> np.ndarray:
    """(197, 4) int16: the squares a token at each location could step onto first, -1 padded.

    For a room, the squares in front of its doors (R-M5); for a square, its neighbours.
    A square in front of a door also exits into the room, which no token can block.
    """
    out = np.full((NUM_LOCATIONS, 4), -1, np.int16)
    for loc in range(NUM_SQUARES):
        out[loc, : len(board.neighbors[loc])] = board.neighbors[loc]
    for room in range(NUM_ROOMS):
        fronts = board.room_fronts[room]
        out[ROOM_LOC0 + room, : len(fronts)] = fronts
    return out


__all__ = ["MoveTables", "destinations", "exits", "fill_destinations", "move_tables", "with_scratch"]
