"""Per-player observations of the vectorized engine, built from named pieces.

An observation is what one player may know, and nothing else (R-G7): public facts
(positions, the roll, who passed and who refuted, accusations), the player's own hand,
the cards shown to it and by it. It is seat-relative: the observing player is always
seat 0, the player on its left seat 1, and so on, so one policy can play any seat. Cards
and suspect tokens keep their absolute ids (a card is the same card for everyone).

The layout is a list of named pieces (as OpenSpiel does), documented slot by slot in
``docs/observation.md``; :func:`layout` gives names, shapes and offsets, :func:`split`
cuts a flat observation into its pieces. All values are small integers in an int8 vector.

:func:`encode` is the compiled kernel that writes observations straight from the engine's state
arrays (one loop over the games asked, no temporaries); the history summaries it reads (``seen``,
``passed_on`` ...) are kept up to date by the engine event by event, so an observation never scans
the history. It is the only encoder: every env and player reads observations from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from cluedo_env.engine.compile_options import INLINE, KERNEL
from cluedo_env.engine.kernels import may_see_shown_card, triple_card_bits
from cluedo_env.engine.numba_internals import copy_word, prefetch
from cluedo_env.engine.state import ACCUSATION, PASSED
from cluedo_env.errors import CluedoTypeError
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS
from cluedo_env.rules.cards import (
    MAX_PLAYERS,
    NUM_CARDS,
    NUM_ROOMS,
    NUM_SUSPECTS,
    NUM_WEAPONS,
)
from cluedo_env.rules.config import RulesConfig

HISTORY_WINDOW = 8  # the most recent history records shown in full; older ones live on in the summaries
MAX_ROLL = 12
S = MAX_PLAYERS  # seat slots are padded to six whatever the player count


@dataclass(frozen=True)
class Piece:
    name: str
    shape: tuple[int, ...]
    offset: int
    doc: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


def _pieces(config: RulesConfig) -> list[tuple[str, tuple[int, ...], str]]:
    K = HISTORY_WINDOW
    out = [
        ("phase", (6,), "one-hot phase: start, move, suggest, refute, post, over"),
        ("to_act", (1,), "1 if this player is the one to act now"),
        ("current_seat", (S,), "one-hot relative seat whose turn it is"),
        ("roll", (MAX_ROLL + 1,), "one-hot roll of this turn, index 0 = not rolled (R-D1)"),
        ("my_hand", (NUM_CARDS,), "1 for each card in my hand (R-S6)"),
    ]
    if config.has_board:
        out += [
            ("my_suspect", (NUM_SUSPECTS,), "one-hot: the suspect token I move"),
            (
                "token_location",
                (NUM_SUSPECTS, NUM_LOCATIONS),
                "one-hot location of each suspect token (188 squares, 9 rooms)",
            ),
            ("weapon_room", (NUM_WEAPONS, NUM_ROOMS), "one-hot room of each weapon"),
            ("may_stay", (1,), "1 if I was dragged into my room and may stay and suggest (R-T3)"),
        ]
    out += [
        ("seat_present", (S,), "1 for relative seats that exist (players < 6 leave zeros)"),
        ("eliminated", (S,), "1 for relative seats eliminated by a wrong accusation (R-A4)"),
        ("hand_size", (S,), "number of cards each relative seat holds (public)"),
        ("pending_suggester", (S,), "one-hot relative seat of the suggestion being refuted (phase refute)"),
        ("pending_cards", (NUM_CARDS,), "the three cards of the suggestion being refuted (phase refute)"),
        ("shown_to_me", (S, NUM_CARDS), "seat j showed me card c (private)"),
        ("i_showed", (S, NUM_CARDS), "I showed card c to seat j (private)"),
        ("passed_on", (S, NUM_CARDS), "seat j could not refute a suggestion naming c: holds none of them (public)"),
        ("refuted_on", (S, NUM_CARDS), "times seat j showed a card for a suggestion naming c (public, capped 127)"),
        ("named_count", (S, NUM_CARDS), "times seat j named c in its suggestions (public, capped 127)"),
        ("accused", (S,), "seat j has accused (R-A2, public)"),
        ("accusation_cards", (S, NUM_CARDS), "the three cards of seat j's accusation (public)"),
        ("accusation_correct", (S,), "seat j's accusation was right (R-A3)"),
        ("envelope_known", (NUM_CARDS,), "the solution, once I have accused and looked (R-A2); zeros before"),
        ("hist_valid", (K,), "history window, most recent first: 1 if record k exists"),
        ("hist_is_accusation", (K,), "record k is an accusation (0: a suggestion)"),
        ("hist_player", (K, S), "one-hot relative seat that made record k"),
        ("hist_cards", (K, NUM_CARDS), "the three cards named in record k"),
        ("hist_passed", (K, S), "seats that could not refute suggestion k (public)"),
        ("hist_refuted", (K, S), "seats that showed a card for suggestion k (public)"),
        ("hist_card_seen", (K, NUM_CARDS), "cards shown in suggestion k that I saw: shown to me, or by me"),
        ("hist_correct", (K,), "accusation k was right"),
    ]
    return out


def layout(config: RulesConfig) -> list[Piece]:
    """The observation's pieces, in order, with offsets into the flat vector."""
    pieces, offset = [], 0
    for name, shape, doc in _pieces(config):
        piece = Piece(name, shape, offset, doc)
        pieces.append(piece)
        offset += piece.size
    return pieces


def size(config: RulesConfig) -> int:
    last = layout(config)[-1]
    return last.offset + last.size


def split(obs: np.ndarray, config: RulesConfig) -> dict[str, np.ndarray]:
    """Cut (..., D) observations into named pieces of shape (..., *piece.shape)."""
    return {p.name: obs[..., p.offset : p.offset + p.size].reshape(obs.shape[:-1] + p.shape) for p in layout(config)}


class Offsets(NamedTuple):
    """Offset of every piece in the flat vector (-1 for pieces the config does not have), for :func:`encode`."""

    phase: int
    to_act: int
    current_seat: int
    roll: int
    my_hand: int
    my_suspect: int
    token_location: int
    weapon_room: int
    may_stay: int
    seat_present: int
    eliminated: int
    hand_size: int
    pending_suggester: int
    pending_cards: int
    shown_to_me: int
    i_showed: int
    passed_on: int
    refuted_on: int
    named_count: int
    accused: int
    accusation_cards: int
    accusation_correct: int
    envelope_known: int
    hist_valid: int
    hist_is_accusation: int
    hist_player: int
    hist_cards: int
    hist_passed: int
    hist_refuted: int
    hist_card_seen: int
    hist_correct: int


def offsets(config: RulesConfig) -> Offsets:
    at = {p.name: p.offset for p in layout(config)}
    return Offsets(**{name: at.get(name, -1) for name in Offsets._fields})


# ===================================================================== the packed layout
COUNT_PIECES = ("hand_size", "refuted_on", "named_count")  # small counts; every other slot is 0 or 1


@dataclass(frozen=True)
class PackedLayout:
    """The packed observation: the int8 layout's information in a fifth of the bytes (555 of 2,628 on the board).

    A packed row is ``size`` uint8: first every 0/1 slot of the int8 layout, in the same order, as bits
    (slot k of that sequence is bit ``k % 8`` of byte ``k // 8``, numpy's ``bitorder="little"``), padded to
    ``bit_bytes`` whole bytes; then one byte per count slot (``COUNT_PIECES``), in their order. One-hot
    pieces take a bit per slot, not a byte, and a step writes and a network reads a fifth of the memory.
    """

    bits: int  # 0/1 slots, stored as bits
    bit_bytes: int  # bytes of the bit part: ceil(bits / 8)
    size: int  # bytes per packed row: bit_bytes + one per count slot
    offsets: Offsets  # for the kernel: bit offset of each 0/1 piece, byte offset (in the row) of each count piece
    source: np.ndarray  # (D,) int64: int8 slot x is element source[x] of (the `bits` unpacked bits ++ the count bytes)


def packed_layout(config: RulesConfig) -> PackedLayout:
    """Where each slot of :func:`layout` lives in a packed row (it depends only on whether there is a board)."""
    return _packed_layout(config.has_board)


@lru_cache(maxsize=2)
def _packed_layout(has_board: bool) -> PackedLayout:
    pieces = layout(RulesConfig.from_preset("classic" if has_board else "cards"))
    flags = [p for p in pieces if p.name not in COUNT_PIECES]
    bits = sum(p.size for p in flags)
    bit_bytes = -(-bits // 8)
    at, source, bit, count = {}, [], 0, 0
    for p in pieces:
        if p.name in COUNT_PIECES:
            at[p.name] = bit_bytes + count
            source.extend(range(bits + count, bits + count + p.size))
            count += p.size
        else:
            at[p.name] = bit
            source.extend(range(bit, bit + p.size))
            bit += p.size
    source_array = np.array(source, np.int64)
    source_array.flags.writeable = False
    return PackedLayout(bits, bit_bytes, bit_bytes + count,
                        Offsets(**{name: at.get(name, -1) for name in Offsets._fields}), source_array)  # fmt: skip


def unpack(packed: np.ndarray, config: RulesConfig) -> np.ndarray:
    """(..., D) int8 observations of :func:`layout` from (..., size) uint8 packed rows; equal bit for bit to
    what ``observe()`` returns. (The torch counterpart for a network's first layer is
    :class:`cluedo_env.training.packed_observation.Unpack`.)"""
    pl = packed_layout(config)
    packed = np.asarray(packed)
    if packed.dtype != np.uint8 or packed.shape[-1:] != (pl.size,):
        raise CluedoTypeError(f"packed observations must be (..., {pl.size}) uint8, got {packed.dtype} {packed.shape}")
    bits = np.unpackbits(packed[..., : pl.bit_bytes], axis=-1, count=pl.bits, bitorder="little")
    both = np.concatenate([bits, packed[..., pl.bit_bytes :]], axis=-1)
    return both[..., pl.source].view(np.int8)


PREFETCH_AHEAD = 6  # games ahead whose rows encode() asks the CPU to load (see cluedo_env.engine.numba_internals)


@njit(**INLINE)
def _flag(row: np.ndarray, p: int, v: bool, packed: bool) -> None:
    """Write 0/1 slot ``p`` (its bit in a packed row, its byte in an int8 row); a packed row is zeroed first, so a
    0 costs nothing there."""
    if packed:
        if v:
            row[p >> 3] |= np.uint8(1 << (p & 7))
    else:
        row[p] = v


@njit(**INLINE)
def _one(row: np.ndarray, p: int, packed: bool) -> None:
    """Set 0/1 slot ``p``."""
    _flag(row, p, True, packed)


@njit(**INLINE)
def _or_bits(row: np.ndarray, p: int, bits: int, n: int) -> None:
    """OR ``bits`` (bit k: slot p + k, k < n <= 56) into a packed row, a byte at a time. How many bytes depends on
    p and n only, the same in every game, so the loop's end is always predicted (a loop until ``bits`` ran out
    ended at a different byte in every game, and mispredicted)."""
    q = p >> 3
    bits <<= p & 7
    for t in range(((p & 7) + n + 7) >> 3):
        row[q + t] |= np.uint8((bits >> (8 * t)) & 0xFF)


@njit(**INLINE)
def _put_bits(row: np.ndarray, p: int, bits: np.int64, n: int, packed: bool) -> None:
    """Write ``n`` <= 56 0/1 slots p .. p + n - 1 from the bits of ``bits`` (bit k: slot p + k), as the state keeps
    ``seen`` and ``passed_on``; a piece gathered in a register first costs one OR of a few bytes when packed.
    ``bits`` is always an int64 (callers widen the state's int32 card bits), so it compiles once per length."""
    if packed:
        _or_bits(row, p, bits, n)
    else:
        for k in range(n):
            row[p + k] = (bits >> k) & 1


@njit(**INLINE)
def _relative(seat: int, me: int, P: int) -> int:
    """Seat ``seat`` as seen by ``me``: places to my left (a branch, not a modulo: both are 0..P-1)."""
    j = seat - me
    return j + P if j < 0 else j


@njit(**INLINE)
def _turn(bits: int, me: int, P: int) -> int:
    """Seat bits by absolute seat (bit q: seat q) as ``me`` sees them (bit j: the seat j places to my left)."""
    return ((bits >> me) | (bits << (P - me))) & ((1 << P) - 1)


@njit(**INLINE)
def _copy_cards(row: np.ndarray, at: int, counts: np.ndarray) -> None:
    """``row[at:at + 21]`` = ``counts`` (21 one-byte counts), as three 8-byte words: bytes 0-7, 8-15, 13-20. (A byte
    loop took a fifth of the packed encoder's time; LLVM vectorises a loop this short badly.)"""
    copy_word(row, at, counts, 0)
    copy_word(row, at + 8, counts, 8)
    copy_word(row, at + NUM_CARDS - 8, counts, NUM_CARDS - 8)


@njit(**INLINE)
def _prefetch_game(s, b: int, P: int) -> None:
    """Ask for the rows of game ``b`` that :func:`encode` reads at offsets the hardware cannot predict."""
    last = s.hist_len[b] - 1
    if last >= 0:
        first = max(last - HISTORY_WINDOW + 1, 0)
        for h in (first, last):  # the window spans at most two cache lines of each history array
            prefetch(s.hist_kind[b], h)
            prefetch(s.hist_player[b], h)
            prefetch(s.hist_correct[b], h)
            prefetch(s.hist_triple[b, h], 0)
            prefetch(s.hist_response[b, h], 0)
    prefetch(s.seen[b, 0], 0)
    prefetch(s.passed_on[b], 0)
    for x in range(0, P * NUM_CARDS, 64):
        prefetch(s.refuted_on[b, 0], x)
        prefetch(s.named_count[b, 0], x)


@njit(**KERNEL)
def encode(s, rules, o: Offsets, games: np.ndarray, seats: np.ndarray, out: np.ndarray, packed: bool) -> None:
    """Write the observation of seat ``seats[i]`` in game ``games[i]`` into row ``out[i]`` (zeroed here).

    ``seats[i] < 0`` means the game's actor (or, once it is over, the player whose turn it was).
    Seat-relative: relative seat j of observer ``me`` is absolute seat ``(me + j) % P``.
    ``packed``: ``out`` is uint8 rows of :func:`packed_layout` and ``o`` its offsets (bit offsets of the 0/1
    pieces, byte offsets of the counts); else int8 rows of :func:`layout`. One body writes both, so the two
    layouts cannot say different things.
    """
    P = rules.players
    K = HISTORY_WINDOW
    D = out.shape[1]
    n = games.shape[0]
    phase, current, refuter, owner, pos, weapon_room = s.phase, s.current, s.refuter, s.owner, s.pos, s.weapon_room
    seen, passed_on, refuted_on, named_count = s.seen, s.passed_on, s.refuted_on, s.named_count
    hist_len, hist_kind, hist_player, hist_triple = s.hist_len, s.hist_kind, s.hist_player, s.hist_triple
    hist_correct, hist_response, accused_at = s.hist_correct, s.hist_response, s.accused_at
    for i in range(n):
        if i + PREFETCH_AHEAD < n:
            _prefetch_game(s, games[i + PREFETCH_AHEAD], P)
        b = games[i]
        row = out[i]
        for x in range(D):
            row[x] = 0
        ph = phase[b]
        actor = -1 if ph == A.OVER else (refuter[b] if ph == A.REFUTE else current[b])
        me = seats[i]
        if me < 0:
            me = actor if actor >= 0 else current[b]
        _one(row, o.phase + ph, packed)
        _flag(row, o.to_act, actor == me, packed)
        _one(row, o.current_seat + _relative(current[b], me, P), packed)
        _one(row, o.roll + s.roll[b], packed)
        hand, mine = owner[b], 0
        for c in range(NUM_CARDS):
            mine |= np.int64(hand[c] == me) << c
        _put_bits(row, o.my_hand, mine, NUM_CARDS, packed)  # R-S6
        if rules.has_board:
            _one(row, o.my_suspect + me, packed)
            for t in range(NUM_SUSPECTS):
                _one(row, o.token_location + t * NUM_LOCATIONS + pos[b, t], packed)
            for w in range(NUM_WEAPONS):
                _one(row, o.weapon_room + w * NUM_ROOMS + weapon_room[b, w], packed)
            _flag(row, o.may_stay, s.dragged[b, me], packed)
        for j in range(P):
            q = me + j
            if q >= P:
                q -= P
            _one(row, o.seat_present + j, packed)
            _flag(row, o.eliminated + j, s.eliminated[b, q], packed)
            row[o.hand_size + j] = s.hand_size[b, q]
            at = j * NUM_CARDS
            _put_bits(row, o.shown_to_me + at, np.int64(seen[b, me, q]), NUM_CARDS, packed)  # private (R-G7)
            _put_bits(row, o.i_showed + at, np.int64(seen[b, q, me]), NUM_CARDS, packed)
            _put_bits(row, o.passed_on + at, np.int64(passed_on[b, q]), NUM_CARDS, packed)
            _copy_cards(row, o.refuted_on + at, refuted_on[b, q])
            _copy_cards(row, o.named_count + at, named_count[b, q])
            # Accusations: at most one per player (R-A6), public; the accuser alone knows the envelope (R-A2).
            h = accused_at[b, q]
            if h >= 0:
                _one(row, o.accused + j, packed)
                _put_bits(row, o.accusation_cards + at, triple_card_bits(hist_triple[b, h]), NUM_CARDS, packed)
                _flag(row, o.accusation_correct + j, hist_correct[b, h], packed)
                if j == 0:
                    for k in range(3):
                        _one(row, o.envelope_known + s.envelope[b, k], packed)
        hl = hist_len[b]
        if ph == A.REFUTE:
            h = hl - 1
            _one(row, o.pending_suggester + _relative(hist_player[b, h], me, P), packed)
            _put_bits(row, o.pending_cards, triple_card_bits(hist_triple[b, h]), NUM_CARDS, packed)
        # The history window: the last K records, most recent first (k = 0); the pieces of a few bits a record
        # (the player, who passed, who showed, kind, correct) are gathered in registers and written once.
        window = min(K, hl)
        accusations = correct = players = passers = refuters = 0
        for k in range(window):
            h = hl - 1 - k
            who = hist_player[b, h]
            players |= np.int64(1) << (k * S + _relative(who, me, P))
            _put_bits(row, o.hist_cards + k * NUM_CARDS, triple_card_bits(hist_triple[b, h]), NUM_CARDS, packed)
            if hist_kind[b, h] == ACCUSATION:
                accusations |= 1 << k
                correct |= np.int64(hist_correct[b, h]) << k
                continue
            # Who passed and who showed, by absolute seat, then turned to my seats; the card shown, where I may see
            # it. No branch on the responses: which seat answers is different in every record.
            responses = hist_response[b, h]
            passed = refuted = shown = 0
            for q in range(P):
                resp = np.int64(responses[q])
                passed |= np.int64(resp == PASSED) << q
                refuted |= np.int64(resp >= 0) << q
                shown |= np.int64((resp >= 0) & may_see_shown_card(me, who, q)) << max(resp, 0)
            passers |= _turn(passed, me, P) << (k * S)
            refuters |= _turn(refuted, me, P) << (k * S)
            _put_bits(row, o.hist_card_seen + k * NUM_CARDS, shown, NUM_CARDS, packed)
        _put_bits(row, o.hist_player, players, K * S, packed)
        _put_bits(row, o.hist_passed, passers, K * S, packed)
        _put_bits(row, o.hist_refuted, refuters, K * S, packed)
        _put_bits(row, o.hist_valid, (1 << window) - 1, K, packed)
        _put_bits(row, o.hist_is_accusation, accusations, K, packed)
        _put_bits(row, o.hist_correct, correct, K, packed)


__all__ = [
    "COUNT_PIECES", "HISTORY_WINDOW", "MAX_ROLL", "Offsets", "PackedLayout", "Piece", "encode", "layout", "offsets",
    "packed_layout", "size", "split", "unpack",
]  # fmt: skip
