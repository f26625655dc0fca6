"""What one seat may know, over a whole batch: the only door agents use into the engine.

Rule-based players must decide from the information their seat has (R-G7), exactly as
the observations do, never from hidden state. Rather than hand them the engine, a
:class:`PlayerView` exposes the public state, the seat's own hand, and the history with
every shown card hidden unless this seat showed it or was shown it. Everything returned
is a copy or a read-only view, so an agent cannot change the game either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from cluedo_env.engine.kernels import history_records, known_envelope_rows, seat_mask_rows
from cluedo_env.engine.state import HIDDEN, NOT_ASKED, PASSED
from cluedo_env.rules.board import Board
from cluedo_env.rules.config import RulesConfig
from cluedo_env.rules.privacy import may_see_shown_card

if TYPE_CHECKING:
    from cluedo_env.engine.vector_engine import VectorEngine


class Records(NamedTuple):
    """History records as one seat sees them; m records, each given as (game, index)."""

    game: np.ndarray  # (m,) game index in the batch
    index: np.ndarray  # (m,) record index in that game's history (0 = oldest)
    is_accusation: np.ndarray  # (m,) bool; False: a suggestion
    player: np.ndarray  # (m,) int8 suggester or accuser (absolute seat)
    triple: np.ndarray  # (m, 3) int8 suspect, weapon, room indices (not card ids)
    correct: np.ndarray  # (m,) bool, accusations only
    response: np.ndarray  # (m, P) int8 per seat: -1 not asked, -2 could not refute, -3 showed a card
    #                       you did not see, c >= 0 showed card c (to you, or by you)


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def _outside_batch(idx: np.ndarray, B: int) -> IndexError:
    """The error of a row query whose games ``idx`` are not all in the batch of B."""
    return IndexError(f"games {idx.tolist()[:5]}... outside the batch of {B}")


class PlayerView:
    """Seat ``seat``'s view of every game in ``engine``'s batch."""

    def __init__(self, engine: VectorEngine, seat: int) -> None:
        if not 0 <= seat < engine.P:
            raise ValueError(f"seat must be 0..{engine.P - 1}, got {seat}")
        self._eng = engine
        self.seat = seat

    # ---- static facts
    @property
    def config(self) -> RulesConfig:
        return self._eng.config

    @property
    def board(self) -> Board:
        return self._eng.board

    @property
    def batch_size(self) -> int:
        return self._eng.batch_size

    @property
    def num_players(self) -> int:
        return self._eng.P

    # ---- public state, (B, ...) read-only
    @property
    def phase(self) -> np.ndarray:
        return _readonly(self._eng.phase)

    @property
    def actor(self) -> np.ndarray:
        return self._eng.actor

    @property
    def current(self) -> np.ndarray:
        return _readonly(self._eng.current)

    @property
    def roll(self) -> np.ndarray:
        return _readonly(self._eng.roll)

    @property
    def pos(self) -> np.ndarray:
        """(B, 6) location of every suspect token (the engine's ``pos``)."""
        return _readonly(self._eng.pos)

    @property
    def weapon_room(self) -> np.ndarray:
        return _readonly(self._eng.weapon_room)

    @property
    def eliminated(self) -> np.ndarray:
        return _readonly(self._eng.eliminated)

    @property
    def reward(self) -> np.ndarray:
        """(B,) float32: this seat's reward of the last step; a finished game keeps its result (public, R-E1..R-E4)."""
        return self._eng.rewards[:, self.seat].copy()

    @property
    def turn_count(self) -> np.ndarray:
        return _readonly(self._eng.turn_count)

    @property
    def may_stay(self) -> np.ndarray:
        """(B,) bool: this seat was dragged and may stay and suggest (R-T3)."""
        return self._eng.dragged[:, self.seat].copy()

    @property
    def hand_sizes(self) -> np.ndarray:
        """(B, P) cards held by each seat (public)."""
        return _readonly(self._eng.hand_size)

    @property
    def hand(self) -> np.ndarray:
        """(B, 21) bool: this seat's own cards (R-S6)."""
        return self._eng.owner == self.seat

    @property
    def envelope_if_known(self) -> np.ndarray:
        """(B, 3) card ids of the solution for games where this seat has accused (R-A2), else -1."""
        return self.envelope_if_known_of(np.arange(self._eng.batch_size))

    def envelope_if_known_of(self, idx: np.ndarray) -> np.ndarray:
        """(n, 3) rows ``idx`` of :attr:`envelope_if_known` (a new array), without the whole batch's."""
        eng = self._eng
        idx = np.ascontiguousarray(idx, np.int64)
        out = np.empty((len(idx), 3), eng.envelope.dtype)
        if known_envelope_rows(self.seat, idx, eng.accused_at, eng.envelope, out) >= 0:  # compiled: one pass
            raise _outside_batch(idx, eng.batch_size)
        return out

    @property
    def legal_action_mask(self) -> np.ndarray:
        """(B, 870) legal actions, all False in games where this seat is not to act."""
        mine = self._eng.actor == self.seat
        return self._eng.legal_action_mask & mine[:, None]

    def legal_action_mask_of(self, idx: np.ndarray) -> np.ndarray:
        """(n, 870) rows ``idx`` of :attr:`legal_action_mask` (a new array), without building the whole batch's mask.

        Players ask for the games where they act only; this is what ``legal_action_mask[idx]`` gives.
        """
        eng = self._eng
        idx = np.ascontiguousarray(idx, np.int64)
        out = np.empty((len(idx), eng.mask.shape[1]), bool)
        if seat_mask_rows(self.seat, idx, eng.phase, eng.refuter, eng.current, eng.mask, out) >= 0:  # one pass
            raise _outside_batch(idx, eng.batch_size)
        return out

    @property
    def hist_len(self) -> np.ndarray:
        return _readonly(self._eng.hist_len)

    def observe(self, idx: np.ndarray | None = None, *, packed: bool = False) -> np.ndarray:
        """This seat's observation vector (docs/observation.md); ``packed=True``: its packed uint8 rows."""
        return self._eng.observe(player=self.seat, idx=idx, packed=packed)

    # ---- history
    def records(self, game: np.ndarray, index: np.ndarray) -> Records:
        """Records ``index`` of games ``game`` (paired arrays), with other people's cards hidden."""
        eng, me = self._eng, self.seat
        game = np.asarray(game, np.int64)
        index = np.asarray(index, np.int64)
        if len(game) and (index >= eng.hist_len[game]).any():
            raise IndexError("record index beyond the game's history")
        player = eng.hist_player[game, index]
        response = eng.hist_response[game, index].copy()  # (m, P)
        is_acc = eng.hist_kind[game, index] == 2
        response[is_acc] = NOT_ASKED
        # A shown card is private to the suggester and the refuter who showed it (R-G7).
        shown = response >= 0
        may_see = may_see_shown_card(me, player[:, None], np.arange(eng.P)[None, :])
        response[shown & ~may_see] = HIDDEN
        return Records(
            game=game,
            index=index,
            is_accusation=is_acc,
            player=player.copy(),
            triple=eng.hist_triple[game, index].copy(),
            correct=eng.hist_correct[game, index] & is_acc,
            response=response,
        )

    def new_records(self, seen: np.ndarray) -> Records:
        """Every record of every game from index ``seen[g]`` on: catch up after ``seen`` per game."""
        return self.records_between(np.arange(self._eng.batch_size), seen, self._eng.hist_len)

    def records_between(self, idx: np.ndarray, start: np.ndarray, stop: np.ndarray) -> Records:
        """Records ``start[k]`` .. ``stop[k] - 1`` of games ``idx[k]`` (none where ``stop <= start``), game by game
        in the order of ``idx``: what a player that keeps a notebook has not read yet in the games it acts in.

        Compiled (:func:`cluedo_env.engine.kernels.history_records`, one pass, R-G7 from the same
        ``may_see_shown_card``): every player reads its new records here on every action, so the dozen numpy
        calls of :meth:`records` were a measurable share of a rule-based player's step. The tests check that it
        gives what :meth:`records` gives record by record."""
        eng = self._eng
        idx = np.asarray(idx, np.int64)
        start = np.asarray(start, np.int64)
        stop = np.asarray(stop, np.int64)
        m = int(np.maximum(stop - start, 0).sum())
        P = eng.P
        rec = Records(
            game=np.empty(m, np.int64), index=np.empty(m, np.int64), is_accusation=np.empty(m, bool),
            player=np.empty(m, np.int8), triple=np.empty((m, 3), np.int8), correct=np.empty(m, bool),
            response=np.empty((m, P), np.int8),
        )  # fmt: skip
        bad = history_records(
            self.seat, idx, start, stop, eng.hist_len, eng.hist_kind, eng.hist_player, eng.hist_triple,
            eng.hist_correct, eng.hist_response, *rec,
        )  # fmt: skip
        if bad >= 0:
            raise IndexError(f"record range {start[bad]}..{stop[bad]} of game {idx[bad]} is beyond the game's history "
                             f"({int(eng.hist_len[idx[bad]])} records) or the batch")  # fmt: skip
        return rec


__all__ = ["HIDDEN", "NOT_ASKED", "PASSED", "PlayerView", "Records"]
