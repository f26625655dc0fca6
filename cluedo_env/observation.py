"""Per-player observations of the vectorized engine, built from named pieces.

An observation is what one player may know, and nothing else (R-G7): public facts
(positions, the roll, who passed and who refuted, accusations), the player's own hand,
the cards shown to it and by it. It is seat-relative: the observing player is always
seat 0, the player on its left seat 1, and so on, so one policy can play any seat. Cards
and suspect tokens keep their absolute ids (a card is the same card for everyone).

The layout is a list of named pieces (as OpenSpiel does), documented slot by slot in
``docs/observation.md``; :func:`layout` gives names, shapes and offsets, :func:`split`
cuts a flat observation into its pieces. All values are small integers in an int8 vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cluedo_env import actions as A
from cluedo_env.board import NUM_LOCATIONS
from cluedo_env.cards import MAX_PLAYERS, NUM_CARDS, NUM_ROOMS, NUM_SUSPECTS, NUM_WEAPONS, ROOM_CARD0, WEAPON_CARD0
from cluedo_env.config import RulesConfig
from cluedo_env.vector_engine import ACCUSATION, PASSED

if TYPE_CHECKING:
    from cluedo_env.vector_engine import VectorEngine

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


class Observer:
    """Builds observations for one engine; holds the index tables so each call only gathers."""

    def __init__(self, engine: VectorEngine) -> None:
        self.eng = engine
        self.pieces = {p.name: p for p in layout(engine.config)}
        self.dim = size(engine.config)
        P = engine.P
        self.rel = (np.arange(P)[:, None] + np.arange(P)[None, :]) % P  # rel[p, j] = absolute seat j to the left of p

    def _view(self, out: np.ndarray, name: str) -> np.ndarray:
        p = self.pieces[name]
        return out[:, p.offset : p.offset + p.size].reshape((out.shape[0],) + p.shape)

    def observe(self, player: np.ndarray | int | None = None, idx: np.ndarray | None = None) -> np.ndarray:
        """(n, D) int8 observations of ``player`` (default: each game's actor, or the player
        whose turn it is once a game is over) for games ``idx`` (default: all)."""
        eng = self.eng
        P = eng.P
        idx = np.arange(eng.B) if idx is None else np.asarray(idx, np.int64)
        n = len(idx)
        if player is None:
            actor = eng.actor[idx]
            seat = np.where(actor >= 0, actor, eng.current[idx]).astype(np.int64)
        else:
            seat = np.broadcast_to(np.asarray(player, np.int64), (n,)).copy()
            if ((seat < 0) | (seat >= P)).any():
                raise ValueError(f"player must be a seat 0..{P - 1}, got {np.unique(seat).tolist()}")
        out = np.zeros((n, self.dim), np.int8)
        rows = np.arange(n)
        abs_seat = self.rel[seat]  # (n, P): absolute seat of relative seat j
        phase = eng.phase[idx]

        self._view(out, "phase")[rows, phase] = 1
        self._view(out, "to_act")[:, 0] = eng.actor[idx] == seat
        cur = eng.current[idx].astype(np.int64)
        self._view(out, "current_seat")[rows, (cur - seat) % P] = 1
        self._view(out, "roll")[rows, eng.roll[idx]] = 1
        owner = eng.owner[idx]
        self._view(out, "my_hand")[:] = owner == seat[:, None]
        if eng.has_board:
            self._view(out, "my_suspect")[rows, seat] = 1
            self._view(out, "token_location")[rows[:, None], np.arange(NUM_SUSPECTS), eng.pos[idx]] = 1
            self._view(out, "weapon_room")[rows[:, None], np.arange(NUM_WEAPONS), eng.weapon_room[idx]] = 1
            self._view(out, "may_stay")[:, 0] = eng.dragged[idx, seat]
        self._view(out, "seat_present")[:, :P] = 1
        elim = eng.eliminated[idx[:, None], abs_seat]  # (n, P) relative
        self._view(out, "eliminated")[:, :P] = elim
        hand_size = (owner[:, None, :] == np.arange(P)[None, :, None]).sum(2)  # (n, P) absolute
        self._view(out, "hand_size")[:, :P] = hand_size[rows[:, None], abs_seat]

        hl = eng.hist_len[idx].astype(np.int64)
        last = np.maximum(hl - 1, 0)
        refuting = np.flatnonzero(phase == A.REFUTE)
        if len(refuting):
            g, h = idx[refuting], last[refuting]
            sugg = eng.hist_player[g, h].astype(np.int64)
            self._view(out, "pending_suggester")[refuting, (sugg - seat[refuting]) % P] = 1
            trip = eng.hist_triple[g, h].astype(np.int64)
            cards = np.stack([trip[:, 0], WEAPON_CARD0 + trip[:, 1], ROOM_CARD0 + trip[:, 2]], 1)
            self._view(out, "pending_cards")[refuting[:, None], cards] = 1

        gi = idx[:, None]
        self._view(out, "shown_to_me")[:, :P] = eng.seen[gi, seat[:, None], abs_seat]  # by seat j, to me
        self._view(out, "i_showed")[:, :P] = eng.seen[gi, abs_seat, seat[:, None]]  # to seat j, by me
        self._view(out, "passed_on")[:, :P] = eng.passed_on[gi, abs_seat]
        self._view(out, "refuted_on")[:, :P] = eng.refuted_on[gi, abs_seat]
        self._view(out, "named_count")[:, :P] = eng.named_count[gi, abs_seat]

        # Accusations: at most one per player (R-A6), public; the accuser alone knows the envelope (R-A2).
        at = eng.accused_at[idx[:, None], abs_seat].astype(np.int64)  # (n, P) relative
        acc_r, acc_j = np.nonzero(at >= 0)
        if len(acc_r):
            g, h = idx[acc_r], at[acc_r, acc_j]
            trip = eng.hist_triple[g, h].astype(np.int64)
            self._view(out, "accused")[acc_r, acc_j] = 1
            acc_cards = self._view(out, "accusation_cards")
            acc_cards[acc_r, acc_j, trip[:, 0]] = 1
            acc_cards[acc_r, acc_j, WEAPON_CARD0 + trip[:, 1]] = 1
            acc_cards[acc_r, acc_j, ROOM_CARD0 + trip[:, 2]] = 1
            self._view(out, "accusation_correct")[acc_r, acc_j] = eng.hist_correct[g, h]
            mine = acc_j == 0
            self._view(out, "envelope_known")[acc_r[mine, None], eng.envelope[g[mine]]] = 1

        self._history_window(out, idx, seat, hl)
        return out

    def _history_window(self, out: np.ndarray, idx: np.ndarray, seat: np.ndarray, hl: np.ndarray) -> None:
        eng, P = self.eng, self.eng.P
        K = HISTORY_WINDOW
        h = hl[:, None] - 1 - np.arange(K)[None, :]  # (n, K) most recent first
        valid = h >= 0
        r, k = np.nonzero(valid)
        if len(r) == 0:
            return
        g, hh = idx[r], h[r, k]
        me = seat[r]
        self._view(out, "hist_valid")[r, k] = 1
        kind = eng.hist_kind[g, hh]
        self._view(out, "hist_is_accusation")[r, k] = kind == ACCUSATION
        who = eng.hist_player[g, hh].astype(np.int64)
        self._view(out, "hist_player")[r, k, (who - me) % P] = 1
        trip = eng.hist_triple[g, hh].astype(np.int64)
        cards = self._view(out, "hist_cards")
        cards[r, k, trip[:, 0]] = 1
        cards[r, k, WEAPON_CARD0 + trip[:, 1]] = 1
        cards[r, k, ROOM_CARD0 + trip[:, 2]] = 1
        self._view(out, "hist_correct")[r, k] = eng.hist_correct[g, hh] & (kind == ACCUSATION)
        resp = eng.hist_response[g, hh].astype(np.int64)  # (m, P) absolute seats
        resp_rel = resp[np.arange(len(r))[:, None], self.rel[me]]  # (m, P) relative seats
        self._view(out, "hist_passed")[r, k, :P] = resp_rel == PASSED
        self._view(out, "hist_refuted")[r, k, :P] = resp_rel >= 0
        # Shown cards I saw: all of them if I suggested, the one I showed if I refuted (R-G7).
        saw = (resp >= 0) & ((who == me)[:, None] | (np.arange(P)[None, :] == me[:, None]))
        sr, sp = np.nonzero(saw)
        self._view(out, "hist_card_seen")[r[sr], k[sr], resp[sr, sp]] = 1
