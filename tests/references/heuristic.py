"""The heuristic player in numpy (:class:`HeuristicReference`): the readable statement of
:class:`cluedo_env.agents.players.heuristic.HeuristicAgent`'s notebook and choices, which
``tests/test_heuristic_kernels.py``
plays side by side with the compiled player, decision by decision.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import CAT_ONEHOT, CAT_SLICES
from cluedo_env.agents.planning.movement import choose_moves, turn_start_choice
from cluedo_env.agents.players.base import replace_illegal, suggestion_room
from cluedo_env.agents.players.heuristic import HeuristicAgent

from cluedo_env.engine.views import PlayerView, Records
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import ROOM_CARD0, WEAPON_CARD0

_CAT = CAT_SLICES
_OFFSET = np.array([0, WEAPON_CARD0, ROOM_CARD0])
_PER_CATEGORY = CAT_ONEHOT.T.astype(np.int64)  # (21, 3): card -> its category, to count open cards per category


def _random_true(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n,) index of a uniformly random True per row of a (n, k) bool array (0 for an all-False row)."""
    return np.where(mask, rng.random(mask.shape), -1.0).argmax(1)


class HeuristicReference(HeuristicAgent):
    """:class:`HeuristicAgent` in numpy: the readable statement of its notebook and choices (the tests
    play both side by side; the compiled player must choose the same actions from the same random numbers)."""

    def solution(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(solved (n,) bool, triple index (n,)) for games ``idx``: one open card left per category."""
        op = self.open[idx]
        solved = (op @ _PER_CATEGORY == 1).all(1)  # one open card per category
        s, w, r = (op[:, sl].argmax(1) for sl in _CAT)
        return solved, A.triple_index(s, w, r)

    def _read(self, view: PlayerView, rec: Records) -> None:
        mine = np.flatnonzero(~rec.is_accusation & (rec.player == view.seat))
        if len(mine) == 0:
            return
        g, resp = rec.game[mine], rec.response[mine]
        rows, seats = np.nonzero(resp >= 0)  # cards shown to me
        self.open[g[rows], resp[rows, seats]] = False
        if self.use_unrefuted:
            nobody = ~(resp >= 0).any(1)
            if nobody.any():
                gn = g[nobody]
                cards = rec.triple[mine[nobody]].astype(np.int64) + _OFFSET  # (k, 3)
                held = self.hand[gn[:, None], cards]
                for cat in range(3):
                    solve = ~held[:, cat]  # not mine and nobody else's: the envelope's
                    gs, card = gn[solve], cards[solve, cat]
                    self.open[gs, _CAT[cat]] = False
                    self.open[gs, card] = True

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        n = len(idx)
        if n == 0:
            return np.zeros(0, np.int64)
        self._update(view, idx)
        mask = view.legal_action_mask_of(idx)
        phase = view.phase[idx]
        out = np.full(n, -1, np.int64)
        rows = np.arange(n)

        # Accuse whenever solved and the accusation is open here (START, SUGGEST, POST).
        solved, triple = self.solution(idx)
        accuse = solved & mask[rows, A.ACCUSE0 + triple]
        out[accuse] = A.ACCUSE0 + triple[accuse]
        todo = out < 0

        sel = np.flatnonzero(todo & (phase == A.START))
        if len(sel):
            out[sel] = turn_start_choice(view, idx[sel], self.room_value(idx[sel]), mask=mask[sel])
        sel = np.flatnonzero(todo & (phase == A.MOVE))
        if len(sel):
            out[sel] = choose_moves(view, idx[sel], self.room_value(idx[sel]), mask=mask[sel], rng=self.rng)
        sel = np.flatnonzero(todo & (phase == A.SUGGEST))
        if len(sel):
            triple = self._suggestion(view, idx[sel], mask[sel])
            out[sel] = A.SUGGEST0 + triple
            self._suggested(idx[sel], triple)
        sel = np.flatnonzero(todo & (phase == A.REFUTE))
        if len(sel):
            out[sel] = A.SHOW0 + _random_true(mask[sel, A.SHOW0 : A.ACCUSE0], self.rng)
        sel = np.flatnonzero(todo & (phase == A.POST))
        out[sel] = A.END_TURN

        self.fallbacks += replace_illegal(out, mask, self.rng)
        return out

    def _suggestion(self, view: PlayerView, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n,) triple index: a random open suspect and weapon; the current room (no board: a random open one)."""
        op = self.open[idx]
        s = _random_true(op[:, _CAT[0]], self.rng)
        w = _random_true(op[:, _CAT[1]], self.rng)
        if view.config.has_board:
            r = suggestion_room(mask)  # the room the suggestion must name (R-G1), as the mask says
        else:
            r = _random_true(op[:, _CAT[2]], self.rng)
        return A.triple_index(s, w, r)
