"""The learner's action spaces and their mapping to engine ids: full, macro moves, macro accusation.

A learner (the single-agent envs, a trained checkpoint playing as a bot, a ``py:`` policy) may act
in a smaller space than the engine's 870 ids (:mod:`cluedo_env.rules.actions`):

* macro moves (``Discrete(682)``): ids 4..12 are MOVE TOWARD ROOM k (of the legal destinations of
  the roll, the one with the smallest walking distance to room k; ties: the lowest location id);
  ids 13..681 are the engine's SUGGEST, SHOW and ACCUSE ids shifted down by 188;
* the macro accusation (with a belief): the 324 ACCUSE ids become one, resolved to the triple the
  player's belief finds most likely (``accuse(rows, legal)``);
* advised (``Discrete(2)``, with a belief and an advisor, a rule-based player in the learner's seat):
  the learner decides only where it may accuse (:meth:`LearnerActions.decides`), between 0 = the
  advisor's action (``advice(rows)``) and 1 = accuse the belief's most likely triple; the advisor
  plays every other decision of the seat. So the policy learns *when* to accuse, the one decision
  a sound deducer leaves on the table (it accuses only on proof), and plays the rest as well as
  its advisor. With an expert advisor, 1 accuses the expert's most likely open triple instead
  (:mod:`cluedo_env.agents.learner.accusation_features`: the resolver is the env's, this module only maps ids).

The mapping is a pure function of the legal actions (the engine's mask); no rule is written here.
Both the envs (:mod:`cluedo_env.training.single_agent`) and the players that run trained policies
(:mod:`cluedo_env.agents.learner.callable_player`, :mod:`cluedo_env.training.sb3.checkpoints`) use this one module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cluedo_env.rules import actions as A
from cluedo_env.rules.board import ROOM_LOC0, load_board
from cluedo_env.rules.cards import NUM_ROOMS

NUM_MOVES = A.SUGGEST0 - A.MOVE0  # 197 destinations in the full space
MACRO0 = A.MOVE0  # first macro move id (4)
MACRO_SHIFT = NUM_MOVES - NUM_ROOMS  # 188: engine id - macro id for SUGGEST..ACCUSE
NUM_MACRO_ACTIONS = A.NUM_ACTIONS - MACRO_SHIFT  # 682

NUM_TRIPLES = A.NUM_ACTIONS - A.ACCUSE0  # 324 accusations (and suggestions)

# (9, 197) walking distance from every location to each room; unreachable stays 255.
_ROOM_DIST = load_board().distance[:, ROOM_LOC0 : ROOM_LOC0 + NUM_ROOMS].T.astype(np.int32)


ADVISED_ACTIONS = 2  # advised space: 0 = the advisor's action, 1 = accuse the belief's most likely triple


def num_actions(macro_moves: bool, macro_accuse: bool = False, advised: bool = False) -> int:
    """Size of the learner's action space for these options."""
    if advised:
        return ADVISED_ACTIONS
    n = NUM_MACRO_ACTIONS if macro_moves else A.NUM_ACTIONS
    return n - NUM_TRIPLES + 1 if macro_accuse else n


def macro_mask(mask: np.ndarray) -> np.ndarray:
    """(n, 870) engine mask -> (n, 682) macro mask: the nine macro moves are legal when any MOVE is."""
    mask = np.asarray(mask, bool)
    out = np.empty((len(mask), NUM_MACRO_ACTIONS), bool)
    out[:, :MACRO0] = mask[:, : A.MOVE0]
    out[:, MACRO0 : MACRO0 + NUM_ROOMS] = mask[:, A.MOVE0 : A.SUGGEST0].any(1)[:, None]
    out[:, MACRO0 + NUM_ROOMS :] = mask[:, A.SUGGEST0 :]
    return out


def macro_to_engine(actions: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Macro actions -> engine actions, given the (n, 870) engine mask of the same games."""
    actions = np.asarray(actions, np.int64)
    out = np.where(actions >= MACRO0 + NUM_ROOMS, actions + MACRO_SHIFT, actions)
    move = np.flatnonzero((actions >= MACRO0) & (actions < MACRO0 + NUM_ROOMS))
    if len(move):
        legal = np.asarray(mask)[move, A.MOVE0 : A.SUGGEST0]
        cost = np.where(legal, _ROOM_DIST[actions[move] - MACRO0], 1 << 20)
        out[move] = A.MOVE0 + cost.argmin(1)  # no legal MOVE: cost all equal -> the engine rejects it
    return out


def engine_to_macro(actions: np.ndarray) -> np.ndarray:
    """Engine actions -> macro ids (a MOVE maps to -1: it has no single macro id)."""
    actions = np.asarray(actions, np.int64)
    out = np.where(actions >= A.SUGGEST0, actions - MACRO_SHIFT, actions)
    return np.where((actions >= A.MOVE0) & (actions < A.SUGGEST0), -1, out)


class LearnerActions:
    """The learner's action space: the engine's, with macro moves and/or the macro accusation.

    ``mask(engine_mask)`` gives the (n, A) legal actions in this space; ``to_engine(actions,
    engine_mask, accuse)`` maps actions back to engine ids. With ``macro_accuse`` the 324
    accusations become one action (the last id), resolved by ``accuse(rows, legal)`` -> (k,)
    triple indices, given the rows that chose it and their (k, 324) legal accusations (the
    learner's belief: :meth:`cluedo_env.agents.learner.belief.BeliefTracker.best_accusations`).
    """

    def __init__(self, macro_moves: bool = False, macro_accuse: bool = False, advised: bool = False) -> None:
        if advised and (macro_moves or macro_accuse):
            raise ValueError("the advised space replaces macro_moves and macro_accuse: leave them False")
        self.macro_moves = bool(macro_moves)
        self.macro_accuse = bool(macro_accuse)
        self.advised = bool(advised)
        self.n = num_actions(self.macro_moves, self.macro_accuse, self.advised)
        self.accuse_id = (A.ACCUSE0 - (MACRO_SHIFT if self.macro_moves else 0)) if self.macro_accuse else -1
        if self.advised:
            self.accuse_id = 1

    def __repr__(self) -> str:
        return (f"LearnerActions(macro_moves={self.macro_moves}, macro_accuse={self.macro_accuse}, "
                f"advised={self.advised}, n={self.n})")  # fmt: skip

    def decides(self, engine_mask: np.ndarray) -> np.ndarray:
        """(n,) bool: the games where the learner itself decides; elsewhere its advisor plays (advised space only;
        every game otherwise). Advised, the learner decides exactly where it may accuse (R-A1)."""
        engine_mask = np.asarray(engine_mask, bool)
        if not self.advised:
            return np.ones(len(engine_mask), bool)
        return engine_mask[:, A.ACCUSE0 :].any(1)

    def mask(self, engine_mask: np.ndarray) -> np.ndarray:
        """(n, 870) engine mask -> (n, A) bool legal actions in this space (a fresh array)."""
        if self.advised:  # the advisor's action is always there; the accusation where one is open
            return np.stack([np.ones(len(engine_mask), bool), self.decides(engine_mask)], 1)
        m = macro_mask(engine_mask) if self.macro_moves else np.array(engine_mask, bool)
        if self.macro_accuse:
            k = self.accuse_id
            m = np.concatenate([m[:, :k], m[:, k:].any(1, keepdims=True)], 1)
        return m

    def to_engine(self, actions: np.ndarray, engine_mask: np.ndarray,
                  accuse: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                  advice: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:  # fmt: skip
        """Actions of this space -> engine actions (an id outside the space -> -1, which the engine rejects).

        ``advice(rows)`` (advised space) gives the advisor's engine actions in the rows that chose 0;
        it is asked only for those rows, so an advisor is asked once per decision it plays."""
        actions = np.asarray(actions, np.int64)
        ok = (actions >= 0) & (actions < self.n)
        if self.advised:
            acc = ok & (actions == self.accuse_id)
            out = np.full(len(actions), -1, np.int64)
            follow = np.flatnonzero(ok & ~acc)
            if len(follow):
                if advice is None:
                    raise ValueError("the advised space needs an advice(rows) resolver")
                out[follow] = advice(follow)
        elif self.macro_accuse:
            acc = ok & (actions == self.accuse_id)
            safe = np.where(ok & ~acc, actions, 0)
        else:
            acc = np.zeros(len(actions), bool)
            safe = np.where(ok, actions, 0)
        if not self.advised:
            out = macro_to_engine(safe, engine_mask) if self.macro_moves else safe.copy()
        rows = np.flatnonzero(acc)
        if len(rows):
            if accuse is None:
                raise ValueError("the macro accusation needs an accuse(rows, legal) resolver")
            legal = np.asarray(engine_mask)[rows, A.ACCUSE0 :]
            none = ~legal.any(1)  # not legal now: keep it illegal for the engine to reject
            out[rows] = A.ACCUSE0 + accuse(rows, np.where(none[:, None], True, legal))
            out[rows[none]] = A.ACCUSE0 + NUM_TRIPLES  # past the last accusation: rejected as out of range
        out[~ok] = -1
        return out


def engine_targets(actions: np.ndarray, engine_mask: np.ndarray, macro_moves: bool) -> np.ndarray:
    """(n, A) bool: the learner actions (full or macro-move space, no macro accusation) that play the engine
    ``actions`` (n,) — the labels of an imitated player's choices (:mod:`cluedo_env.training.sb3.imitation`).

    Outside the macro moves an engine id has one learner id. A MOVE may be played by several macro moves
    (two rooms whose nearest legal destination is the same square: all are marked) or by none (the square
    is no room's nearest destination: the macro move toward the room nearest to that square is marked, the
    closest the space comes to it).
    """
    actions = np.asarray(actions, np.int64)
    mask = np.asarray(engine_mask, bool)
    n = len(actions)
    out = np.zeros((n, num_actions(macro_moves)), bool)
    if not macro_moves:
        out[np.arange(n), actions] = True
        return out
    move = (actions >= A.MOVE0) & (actions < A.SUGGEST0)
    rest = np.flatnonzero(~move)
    out[rest, engine_to_macro(actions[rest])] = True
    rows = np.flatnonzero(move)
    if len(rows):
        where = mask[rows]  # (k, 9): where each macro move goes, as macro_to_engine plays it
        goes = np.stack([macro_to_engine(np.full(len(rows), MACRO0 + r), where) for r in range(NUM_ROOMS)], 1)
        hit = goes == actions[rows, None]
        none = ~hit.any(1)
        hit[none, _ROOM_DIST[:, actions[rows[none]] - A.MOVE0].argmin(0)] = True
        out[rows, MACRO0 : MACRO0 + NUM_ROOMS] = hit
    return out


def as_actions(actions: Any, n_games: int, n_actions: int) -> np.ndarray:
    """(n_games,) int64 actions from what a policy returned; anything but integers is an IllegalActionError.

    Floats are refused, not truncated (``3.5`` played as 3 would hide a bug in the caller), and so
    are strings and bools. Range and legality are checked by the env, which knows the masks.
    """
    arr = np.asarray(actions)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        shown = repr(actions)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise A.IllegalActionError(
            f"actions must be integers 0..{n_actions - 1} (Discrete({n_actions})), got {shown} of dtype {arr.dtype}"
        )
    if arr.size != n_games:
        raise A.IllegalActionError(f"expected {n_games} action(s), one per game, got an array of shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.unsignedinteger):
        arr = np.minimum(arr, n_actions)  # still out of range, without wrapping round to negative int64
    return arr.reshape(n_games).astype(np.int64)


__all__ = [
    "MACRO0",
    "MACRO_SHIFT",
    "NUM_MACRO_ACTIONS",
    "NUM_MOVES",
    "NUM_TRIPLES",
    "LearnerActions",
    "as_actions",
    "engine_targets",
    "engine_to_macro",
    "macro_mask",
    "macro_to_engine",
    "num_actions",
]
