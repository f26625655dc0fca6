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
from cluedo_env.vector_engine import ACCUSATION, NOT_ASKED, PASSED

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

    def _put(self, flat: np.ndarray, base: np.ndarray, name: str, within: np.ndarray, value=1) -> None:
        """Set slots ``within`` (flat index inside piece ``name``) of rows with flat start ``base``."""
        flat[base + self.pieces[name].offset + within] = value

    def observe(
        self, player: np.ndarray | int | None = None, idx: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """(n, D) int8 observations of ``player`` (default: each game's actor, or the player
        whose turn it is once a game is over) for games ``idx`` (default: all).

        Every piece is written with a few flat gathers and scatters over the whole batch
        (no per-game loop): the cost is a handful of numpy calls per piece. ``out``: an
        (n, D) int8 C-contiguous array to fill instead of allocating a new one.
        """
        eng = self.eng
        P, H, D = eng.P, eng.H, self.dim
        idx = np.arange(eng.B) if idx is None else np.asarray(idx, np.int64)
        n = len(idx)
        actor = eng.actor[idx]
        if player is None:
            seat = np.where(actor >= 0, actor, eng.current[idx]).astype(np.int64)
        else:
            seat = np.broadcast_to(np.asarray(player, np.int64), (n,)).copy()
            if ((seat < 0) | (seat >= P)).any():
                raise ValueError(f"player must be a seat 0..{P - 1}, got {np.unique(seat).tolist()}")
        if out is None:
            out = np.zeros((n, D), np.int8)
        else:
            if out.shape != (n, D) or out.dtype != np.int8 or not out.flags.c_contiguous:
                raise ValueError(f"out must be a C-contiguous ({n}, {D}) int8 array")
            out.fill(0)
        flat = out.reshape(-1)
        base = np.arange(n) * D  # flat start of each row
        base_c = base[:, None]
        abs_seat = self.rel[seat]  # (n, P): absolute seat of relative seat j
        gP = idx[:, None] * P
        phase = eng.phase[idx].astype(np.int64)
        put = self._put

        put(flat, base, "phase", phase)
        self._view(out, "to_act")[:, 0] = actor == seat
        cur = eng.current[idx].astype(np.int64)
        put(flat, base, "current_seat", (cur - seat) % P)
        put(flat, base, "roll", eng.roll[idx].astype(np.int64))
        owner = eng.owner[idx]
        self._view(out, "my_hand")[:] = owner == seat[:, None]
        if eng.has_board:
            put(flat, base, "my_suspect", seat)
            put(flat, base_c, "token_location", np.arange(NUM_SUSPECTS) * NUM_LOCATIONS + eng.pos[idx])
            put(flat, base_c, "weapon_room", np.arange(NUM_WEAPONS) * NUM_ROOMS + eng.weapon_room[idx])
            self._view(out, "may_stay")[:, 0] = eng.dragged[idx, seat]
        self._view(out, "seat_present")[:, :P] = 1
        elim = eng.eliminated.reshape(-1)[gP + abs_seat]  # (n, P) relative
        self._view(out, "eliminated")[:, :P] = elim
        self._view(out, "hand_size")[:, :P] = eng.hand_size.reshape(-1)[gP + abs_seat]

        hl = eng.hist_len[idx].astype(np.int64)
        refuting = np.flatnonzero(phase == A.REFUTE)
        if len(refuting):
            fi = idx[refuting] * H + hl[refuting] - 1
            sugg = eng.hist_player.reshape(-1)[fi].astype(np.int64)
            put(flat, base[refuting], "pending_suggester", (sugg - seat[refuting]) % P)
            trip = eng.hist_triple.reshape(-1, 3)[fi].astype(np.int64)
            put(flat, base[refuting, None], "pending_cards", trip + _CARD0)

        # Summaries (B, P, ...) read as flat rows: one take per piece.
        seen = eng.seen.reshape(-1, NUM_CARDS)
        to_me = (gP + seat[:, None]) * P + abs_seat  # seen[g, me, j]: j showed it to me
        by_me = (gP + abs_seat) * P + seat[:, None]  # seen[g, j, me]: I showed it to j
        self._view(out, "shown_to_me")[:, :P] = seen.take(to_me, axis=0)
        self._view(out, "i_showed")[:, :P] = seen.take(by_me, axis=0)
        rows_p = gP + abs_seat
        self._view(out, "passed_on")[:, :P] = eng.passed_on.reshape(-1, NUM_CARDS).take(rows_p, axis=0)
        self._view(out, "refuted_on")[:, :P] = eng.refuted_on.reshape(-1, NUM_CARDS).take(rows_p, axis=0)
        self._view(out, "named_count")[:, :P] = eng.named_count.reshape(-1, NUM_CARDS).take(rows_p, axis=0)

        # Accusations: at most one per player (R-A6), public; the accuser alone knows the envelope (R-A2).
        at = eng.accused_at.reshape(-1)[rows_p].astype(np.int64)  # (n, P) relative
        acc_r, acc_j = np.nonzero(at >= 0)
        if len(acc_r):
            fi = idx[acc_r] * H + at[acc_r, acc_j]
            trip = eng.hist_triple.reshape(-1, 3)[fi].astype(np.int64)
            put(flat, base[acc_r], "accused", acc_j)
            put(flat, base[acc_r, None], "accusation_cards", acc_j[:, None] * NUM_CARDS + trip + _CARD0)
            put(flat, base[acc_r], "accusation_correct", acc_j, eng.hist_correct.reshape(-1)[fi])
            mine = acc_j == 0
            put(flat, base[acc_r[mine], None], "envelope_known", eng.envelope[idx[acc_r[mine]]].astype(np.int64))

        self._history_window(flat, base, idx, seat, hl, abs_seat)
        return out

    def _history_window(
        self, flat: np.ndarray, base: np.ndarray, idx: np.ndarray, seat: np.ndarray, hl: np.ndarray, abs_seat
    ) -> None:
        eng, P, H = self.eng, self.eng.P, self.eng.H
        K = HISTORY_WINDOW
        h = hl[:, None] - 1 - np.arange(K)[None, :]  # (n, K) most recent first
        r, k = np.nonzero(h >= 0)
        if len(r) == 0:
            return
        fi = idx[r] * H + h[r, k]  # flat record index
        b = base[r]
        put = self._put
        put(flat, b, "hist_valid", k)
        is_acc = eng.hist_kind.reshape(-1)[fi] == ACCUSATION
        put(flat, b, "hist_is_accusation", k, is_acc)
        who = eng.hist_player.reshape(-1)[fi].astype(np.int64)
        me = seat[r]
        put(flat, b, "hist_player", k * S + (who - me) % P)
        trip = eng.hist_triple.reshape(-1, 3)[fi].astype(np.int64)
        put(flat, b[:, None], "hist_cards", k[:, None] * NUM_CARDS + trip + _CARD0)
        put(flat, b, "hist_correct", k, eng.hist_correct.reshape(-1)[fi] & is_acc)
        # Responses by relative seat (j = 0 is me); accusations have none.
        resp = eng.hist_response.reshape(-1, P)[fi]  # (m, P) absolute seats
        resp = np.take_along_axis(resp, abs_seat[r], axis=1).astype(np.int64)
        resp[is_acc] = NOT_ASKED
        slot = k[:, None] * S + np.arange(P)[None, :]
        pr, pj = np.nonzero(resp == PASSED)
        put(flat, b[pr], "hist_passed", slot[pr, pj])
        rr, rj = np.nonzero(resp >= 0)
        put(flat, b[rr], "hist_refuted", slot[rr, rj])
        # Shown cards I saw: all of them if I suggested, the one I showed if I refuted (R-G7).
        saw = (who[rr] == me[rr]) | (rj == 0)
        rr, rj = rr[saw], rj[saw]
        put(flat, b[rr], "hist_card_seen", k[rr] * NUM_CARDS + resp[rr, rj])


_CARD0 = np.array([0, WEAPON_CARD0, ROOM_CARD0])  # card id of suspect/weapon/room index 0
