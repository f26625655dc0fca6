"""One game on the reference engine, with the mask and observations of the vectorized engine.

The AEC env steps one game at a time. :class:`~cluedo_env.vector_engine.VectorEngine` at batch
size 1 pays for ~150 numpy calls a step (about 4,000 steps/s), so the env steps the reference
engine :class:`~cluedo_env.reference.Game` instead, the other implementation of the rules, tied
to the vectorized one by ``tests/test_differential.py``. **No rule is written here**: every legal
action, transition and chance event comes from ``Game``. What this module adds is encoding:

* :class:`_Game` memoizes ``Game.legal_actions()`` between steps, so the mask and ``Game.step``'s
  own validation share one call, and answers ``action in legal`` by binary search (the list is
  sorted, as ``Game.legal_actions`` documents).
* :func:`mask_bytes` turns the legal list into the 870 mask bytes, whole blocks (324 accusations
  or suggestions) by one slice.
* :meth:`SingleGame.observe` produces exactly ``VectorEngine.observe(player=seat)`` (same layout,
  same bytes; ``tests/test_pettingzoo.py`` checks it on many positions). The pieces fixed by the
  deal (``my_hand``, ``hand_size`` ...) and those that only grow with the history (``shown_to_me``
  ... ``envelope_known``) are kept for every seat in a row of bytes, updated record by record as
  the history grows; an observation copies its seat's row and sets the one-hot slots of the rest
  (phase, tokens, weapons, the history window ...) from the game state.

Observations are built in a ``bytearray`` with plain Python writes and handed out as
``np.frombuffer(..., np.int8)``: for the few dozen slots that change, that is several times
cheaper than numpy fancy indexing, whose per-call cost dominates at this size. All values are
0..127, so int8 and the raw bytes agree.
"""

from __future__ import annotations

from bisect import bisect_left
from operator import add
from types import SimpleNamespace
from typing import Any

import numpy as np

from cluedo_env import actions as A
from cluedo_env.board import NUM_LOCATIONS, load_board
from cluedo_env.cards import NUM_CARDS, NUM_ROOMS, NUM_SUSPECTS, NUM_WEAPONS, ROOM_CARD0, WEAPON_CARD0
from cluedo_env.config import RulesConfig
from cluedo_env.observation import HISTORY_WINDOW, layout, size
from cluedo_env.reference import Accusation, Game

_ONES_TRIPLES = b"\x01" * A.NUM_TRIPLES
_EMPTY_MASK = bytes(A.NUM_ACTIONS)


class _SortedLegal(list):
    """A sorted list of actions whose ``in`` is a binary search (``Game.step`` validates with ``in``)."""

    __slots__ = ()

    def __contains__(self, action: object) -> bool:
        i = bisect_left(self, action)  # type: ignore[call-overload]
        return i < len(self) and self[i] == action


class _Game(Game):
    """The reference engine with one memo and no rule of its own: ``legal_actions()`` is computed
    once per state (``step`` forgets it), so the mask and ``Game.step``'s validation share it."""

    _legal: _SortedLegal | None = None

    def legal_actions(self) -> list[int]:
        legal = self._legal
        if legal is None:
            legal = self._legal = _SortedLegal(Game.legal_actions(self))
        return legal

    def step(self, action: int, roll: int | None = None) -> None:
        try:
            Game.step(self, action, roll)
        finally:
            self._legal = None

    def __getstate__(self) -> dict[str, Any]:  # the board is the process-wide load_board(): not pickled
        state = self.__dict__.copy()
        del state["board"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.board = load_board()


def mask_bytes(legal: list[int]) -> bytes:
    """The (870,) 0/1 mask of a sorted list of legal actions, as bytes."""
    if not legal:
        return _EMPTY_MASK
    mask = bytearray(A.NUM_ACTIONS)
    n = len(legal)
    end = bisect_left(legal, A.ACCUSE0)
    if n - end == A.NUM_TRIPLES:  # every accusation
        mask[A.ACCUSE0 :] = _ONES_TRIPLES
        n = end
    lo = bisect_left(legal, A.SUGGEST0, 0, n)
    hi = bisect_left(legal, A.SHOW0, lo, n)
    if hi - lo == A.NUM_TRIPLES:  # every suggestion (the card-only game)
        mask[A.SUGGEST0 : A.SHOW0] = _ONES_TRIPLES
        for a in legal[:lo]:
            mask[a] = 1
        lo = hi
    else:
        lo = 0
    for a in legal[lo:n]:
        mask[a] = 1
    return bytes(mask)


class SingleGame:
    """One game of ``config`` drawing all chance from ``rng``; see the module docstring."""

    def __init__(self, config: RulesConfig, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.P = P = config.players
        self.has_board = config.has_board
        self.dim = size(config)
        self.off = off = {p.name: p.offset for p in layout(config)}
        self._o = SimpleNamespace(**off)  # offsets as attributes, for the hot paths
        # rel[q][p]: relative seat of absolute seat q for observer p (docs/observation.md).
        self.rel = [[(q - p) % P for p in range(P)] for q in range(P)]
        self._tok = [off["token_location"] + NUM_LOCATIONS * s for s in range(NUM_SUSPECTS)] if self.has_board else []
        self._wpn = [off["weapon_room"] + NUM_ROOMS * w for w in range(NUM_WEAPONS)] if self.has_board else []
        self._templates: dict[tuple[int, ...], list[bytes]] = {}
        self.game: _Game = None  # type: ignore[assignment]

    def _template(self, sizes: tuple[int, ...]) -> list[bytes]:
        """Per seat, the bytes fixed for a game whose hands have ``sizes``: seats present, my suspect, hand sizes."""
        rows = self._templates.get(sizes)
        if rows is None:
            off, P = self.off, self.P
            rows = []
            for p in range(P):
                row = bytearray(self.dim)
                row[off["seat_present"] : off["seat_present"] + P] = b"\x01" * P
                if self.has_board:
                    row[off["my_suspect"] + p] = 1  # R-S1: seat p plays suspect p
                for q in range(P):
                    row[off["hand_size"] + self.rel[q][p]] = sizes[q]
                rows.append(bytes(row))
            self._templates[sizes] = rows
        return rows

    # ----------------------------------------------------------- state
    def reset(self) -> None:
        """A new game (envelope, deal, weapon rooms) drawn from ``rng``."""
        self._start(_Game(self.config, seed=self.rng))  # type: ignore[arg-type]  (a Generator passes through)

    def load(self, snapshot: dict[str, Any]) -> None:
        """Continue from a snapshot (docs/snapshot.md) of a game with this config."""
        game = _Game.from_dict(snapshot, seed=self.rng)  # type: ignore[arg-type]
        if game.config != self.config:
            raise ValueError(f"snapshot rules {game.config} differ from this env's {self.config}")
        self._start(game)

    def _start(self, game: _Game) -> None:
        self.game = game
        self._mask: bytes | None = None
        self._public: list[int] | None = None
        hands = game.hands
        rows = self._rows = [bytearray(t) for t in self._template(tuple(len(h) for h in hands))]
        o = self.off["my_hand"]
        for row, hand in zip(rows, hands, strict=True):
            for c in hand:
                row[o + c] = 1
        self._seen = (0, 0, 0, False)  # history folded in up to: record, its passes, its refutations, its head
        if game.history:
            self._sync()

    def step(self, action: int) -> None:
        """Apply ``action`` for the actor; IllegalActionError (from ``Game``) leaves the state unchanged."""
        game = self.game
        game.step(action)
        self._mask = None
        self._public = None
        if game.history:
            self._sync()

    def to_dict(self) -> dict[str, Any]:
        return self.game.to_dict()

    # ------------------------------------------------------ the history
    def _sync(self) -> None:
        """Fold the records (and answers to the last suggestion) not yet seen into every seat's row."""
        history = self.game.history
        h, n_pass, n_ref, head = self._seen
        last = len(history) - 1
        while h <= last:
            rec = history[h]
            if isinstance(rec, Accusation):
                self._accusation(rec)
            else:
                named = rec.cards
                if not head:
                    self._count("named_count", rec.suggester, named)
                for q in rec.passed[n_pass:]:
                    self._flag("passed_on", q, named)
                for q, card in zip(rec.refuted_by[n_ref:], rec.shown[n_ref:], strict=True):
                    self._count("refuted_on", q, named)
                    s = rec.suggester
                    self._rows[s][self.off["shown_to_me"] + 21 * self.rel[q][s] + card] = 1
                    self._rows[q][self.off["i_showed"] + 21 * self.rel[s][q] + card] = 1
                if h == last:  # the last suggestion may still be answered
                    self._seen = (h, len(rec.passed), len(rec.refuted_by), True)
                    return
            h, n_pass, n_ref, head = h + 1, 0, 0, False
        self._seen = (h, 0, 0, False)

    def _flag(self, piece: str, q: int, cards: tuple[int, ...]) -> None:
        """Every seat's row: set ``piece[rel(q), c]`` for the cards."""
        o, rel = self.off[piece], self.rel[q]
        for p, row in enumerate(self._rows):
            base = o + NUM_CARDS * rel[p]
            for c in cards:
                row[base + c] = 1

    def _count(self, piece: str, q: int, cards: tuple[int, ...]) -> None:
        """Every seat's row: add one to ``piece[rel(q), c]``, saturating at 127 as the engine does."""
        o, rel = self.off[piece], self.rel[q]
        for p, row in enumerate(self._rows):
            base = o + NUM_CARDS * rel[p]
            for c in cards:
                row[base + c] = min(row[base + c], 126) + 1

    def _accusation(self, rec: Accusation) -> None:
        who, rel, o = rec.accuser, self.rel[rec.accuser], self._o
        cards = (rec.suspect, WEAPON_CARD0 + rec.weapon, ROOM_CARD0 + rec.room)
        for p, row in enumerate(self._rows):
            r = rel[p]
            row[o.accused + r] = 1
            row[o.accusation_correct + r] = rec.correct
            base = o.accusation_cards + NUM_CARDS * r
            for c in cards:
                row[base + c] = 1
        row = self._rows[who]
        for c in self.game.envelope:  # R-A2: the accuser has looked
            row[o.envelope_known + c] = 1

    # ------------------------------------------------------------ reads
    def mask(self) -> np.ndarray:
        """(870,) int8 legal-action mask of the actor (all zeros when over), a new array."""
        mask = self._mask
        if mask is None:
            mask = self._mask = mask_bytes(self.game.legal_actions())
        return np.frombuffer(bytearray(mask), np.int8)

    def observe(self, seat: int) -> np.ndarray:
        """(D,) int8: exactly ``VectorEngine.observe(player=seat)`` of this state, a new array."""
        game = self.game
        out = bytearray(self._rows[seat])
        public = self._public
        if public is None:  # the one-hot slots every seat shares
            public = self._public = self._public_slots()
        for i in public:
            out[i] = 1
        rel = self.rel
        o = self._o
        out[o.current_seat + rel[game.current][seat]] = 1
        if game.actor == seat:
            out[o.to_act] = 1
        if self.has_board and game.dragged[seat]:
            out[o.may_stay] = 1
        if True in game.eliminated:
            for q, out_of_game in enumerate(game.eliminated):
                if out_of_game:
                    out[o.eliminated + rel[q][seat]] = 1
        history = game.history
        if history:
            if game.phase == A.REFUTE:
                pending = history[-1]
                out[o.pending_suggester + rel[pending.suggester][seat]] = 1
                for c in pending.cards:
                    out[o.pending_cards + c] = 1
            self._window(out, history, seat)
        return np.frombuffer(out, np.int8)

    def _public_slots(self) -> list[int]:
        game, o = self.game, self._o
        if self.has_board:
            return [o.phase + game.phase, o.roll + game.roll, *map(add, self._tok, game.positions),
                    *map(add, self._wpn, game.weapons)]  # fmt: skip
        return [o.phase + game.phase, o.roll + game.roll]

    def _window(self, out: bytearray, history: list, seat: int) -> None:
        """The history window: the last 8 records, most recent first (k = 0)."""
        o, rel = self._o, self.rel
        o_valid, o_acc, o_player, o_cards = o.hist_valid, o.hist_is_accusation, o.hist_player, o.hist_cards
        o_pass, o_ref, o_seen, o_ok = o.hist_passed, o.hist_refuted, o.hist_card_seen, o.hist_correct
        for k, rec in enumerate(reversed(history[-HISTORY_WINDOW:])):
            out[o_valid + k] = 1
            c = o_cards + NUM_CARDS * k
            out[c + rec.suspect] = 1
            out[c + WEAPON_CARD0 + rec.weapon] = 1
            out[c + ROOM_CARD0 + rec.room] = 1
            if isinstance(rec, Accusation):
                out[o_acc + k] = 1
                out[o_player + 6 * k + rel[rec.accuser][seat]] = 1
                if rec.correct:
                    out[o_ok + k] = 1
                continue
            who = rec.suggester
            out[o_player + 6 * k + rel[who][seat]] = 1
            for q in rec.passed:
                out[o_pass + 6 * k + rel[q][seat]] = 1
            for q, card in zip(rec.refuted_by, rec.shown, strict=True):
                out[o_ref + 6 * k + rel[q][seat]] = 1
                if who == seat or q == seat:  # R-G7: the suggester sees every shown card, a refuter its own
                    out[o_seen + NUM_CARDS * k + card] = 1
