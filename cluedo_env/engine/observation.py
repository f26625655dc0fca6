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
from typing import NamedTuple

import numpy as np
from numba import njit

from cluedo_env.engine.kernels import KERNEL, may_see_shown_card
from cluedo_env.engine.state import ACCUSATION, PASSED
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS
from cluedo_env.rules.cards import (
    MAX_PLAYERS,
    NUM_CARDS,
    NUM_ROOMS,
    NUM_SUSPECTS,
    NUM_WEAPONS,
    ROOM_CARD0,
    WEAPON_CARD0,
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


@njit(**KERNEL)
def encode(s, rules, o: Offsets, games: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
    """Write the observation of seat ``seats[i]`` in game ``games[i]`` into row ``out[i]`` (zeroed here).

    ``seats[i] < 0`` means the game's actor (or, once it is over, the player whose turn it was).
    Seat-relative: relative seat j of observer ``me`` is absolute seat ``(me + j) % P``.
    """
    P = rules.players
    K = HISTORY_WINDOW
    D = out.shape[1]
    card0 = (0, WEAPON_CARD0, ROOM_CARD0)
    phase, current, refuter, owner, pos, weapon_room = s.phase, s.current, s.refuter, s.owner, s.pos, s.weapon_room
    seen, passed_on, refuted_on, named_count = s.seen, s.passed_on, s.refuted_on, s.named_count
    hist_len, hist_kind, hist_player, hist_triple = s.hist_len, s.hist_kind, s.hist_player, s.hist_triple
    hist_correct, hist_response, accused_at = s.hist_correct, s.hist_response, s.accused_at
    for i in range(games.shape[0]):
        b = games[i]
        row = out[i]
        for x in range(D):
            row[x] = 0
        ph = phase[b]
        actor = -1 if ph == A.OVER else (refuter[b] if ph == A.REFUTE else current[b])
        me = seats[i]
        if me < 0:
            me = actor if actor >= 0 else current[b]
        row[o.phase + ph] = 1
        row[o.to_act] = actor == me
        row[o.current_seat + (current[b] - me) % P] = 1
        row[o.roll + s.roll[b]] = 1
        hand = owner[b]
        for c in range(NUM_CARDS):
            row[o.my_hand + c] = hand[c] == me  # R-S6
        if rules.has_board:
            row[o.my_suspect + me] = 1
            for t in range(NUM_SUSPECTS):
                row[o.token_location + t * NUM_LOCATIONS + pos[b, t]] = 1
            for w in range(NUM_WEAPONS):
                row[o.weapon_room + w * NUM_ROOMS + weapon_room[b, w]] = 1
            row[o.may_stay] = s.dragged[b, me]
        for j in range(P):
            q = me + j
            if q >= P:
                q -= P
            row[o.seat_present + j] = 1
            row[o.eliminated + j] = s.eliminated[b, q]
            row[o.hand_size + j] = s.hand_size[b, q]
            to_me, by_me = seen[b, me, q], seen[b, q, me]  # private (R-G7)
            passed, refuted, named = passed_on[b, q], refuted_on[b, q], named_count[b, q]
            at = j * NUM_CARDS
            for c in range(NUM_CARDS):
                row[o.shown_to_me + at + c] = to_me[c]
                row[o.i_showed + at + c] = by_me[c]
                row[o.passed_on + at + c] = passed[c]
                row[o.refuted_on + at + c] = refuted[c]
                row[o.named_count + at + c] = named[c]
            # Accusations: at most one per player (R-A6), public; the accuser alone knows the envelope (R-A2).
            h = accused_at[b, q]
            if h >= 0:
                row[o.accused + j] = 1
                for k in range(3):
                    row[o.accusation_cards + at + card0[k] + hist_triple[b, h, k]] = 1
                row[o.accusation_correct + j] = hist_correct[b, h]
                if j == 0:
                    for k in range(3):
                        row[o.envelope_known + s.envelope[b, k]] = 1
        hl = hist_len[b]
        if ph == A.REFUTE:
            h = hl - 1
            row[o.pending_suggester + (hist_player[b, h] - me) % P] = 1
            for k in range(3):
                row[o.pending_cards + card0[k] + hist_triple[b, h, k]] = 1
        # The history window: the last K records, most recent first (k = 0).
        for k in range(min(K, hl)):
            h = hl - 1 - k
            row[o.hist_valid + k] = 1
            who = hist_player[b, h]
            row[o.hist_player + k * S + (who - me) % P] = 1
            for x in range(3):
                row[o.hist_cards + k * NUM_CARDS + card0[x] + hist_triple[b, h, x]] = 1
            if hist_kind[b, h] == ACCUSATION:
                row[o.hist_is_accusation + k] = 1
                row[o.hist_correct + k] = hist_correct[b, h]
                continue
            responses = hist_response[b, h]
            for j in range(P):
                q = me + j
                if q >= P:
                    q -= P
                resp = responses[q]
                if resp == PASSED:
                    row[o.hist_passed + k * S + j] = 1
                elif resp >= 0:
                    row[o.hist_refuted + k * S + j] = 1
                    if may_see_shown_card(me, who, q):
                        row[o.hist_card_seen + k * NUM_CARDS + resp] = 1


__all__ = ["HISTORY_WINDOW", "MAX_ROLL", "Offsets", "Piece", "encode", "layout", "offsets", "size", "split"]
