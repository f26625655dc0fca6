"""What one seat may know of an OpenSpiel Cluedo state, as strings and tensors (R-G7).

Two kinds, as OpenSpiel's ``IIGObservationType`` asks for them:

* **information state** (``perfect_recall=True``): the seat's own hand (R-S6), the weapons' start
  rooms (R-S3, public), then every event since the deal in order: each action with its actor,
  each roll (R-D1), who could not refute (R-G6), the card of a SHOW only when the seat is the
  suggester or the refuter (R-G7), and the envelope once the seat has accused (R-A2). Two states
  have the same information state for a seat exactly when that seat cannot tell them apart.
* **observation** (``perfect_recall=False``): the engine's own per-seat observation
  (:mod:`cluedo_env.engine.observation`, docs/observation.md, seat-relative, int8), as float32; its
  string lists the nonzero entries of each named piece. Before the deal is complete it is all
  zeros (no seat acts during the deal).

``private_info=NONE`` drops the private parts (hand, seen cards, envelope) and gives what every
seat knows; ``ALL_PLAYERS`` is not offered (it would be the whole deal).

Information-state tensor (float32, pieces in this order): ``seat`` (6,) one-hot;
``hand`` (21,); ``weapon_start`` (6, 9) one-hot (board only); ``envelope_known`` (21,);
``events`` (L, 4) with L = ``max_turns * (players + 4)``, one row per event, zeros after the
last: ``[who, what, passed, won]`` where who = actor seat + 1 (0 for a roll), what = action id + 1
(a SHOW the seat may not see: -1; a roll: the dice total), passed = bitmask of the seats that could
not refute after it, won = 1 for a correct accusation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cluedo_env.engine.observation import layout
from cluedo_env.openspiel.core import CHANCE, Core
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, MAX_PLAYERS, NUM_CARDS, NUM_ROOMS, NUM_WEAPONS, ROOMS, SUSPECTS, WEAPONS
from cluedo_env.rules.config import RulesConfig

EVENT_WIDTH = 4


def max_events(config: RulesConfig) -> int:
    """Events after the deal in the longest game: per turn a start choice, a roll, a move, a suggestion,
    up to players - 1 shows and an accusation or end of turn (R-E3 bounds the turns)."""
    return config.max_turns * (config.players + 4)


def events(core: Core, seat: int, private: bool) -> list[tuple[int, int, tuple[int, ...], bool]]:
    """The log as ``seat`` sees it: (actor, action or dice total, passed, card visible) per event.

    The card of a SHOW is visible to the refuter and the suggester only (R-G7); with ``private`` False
    to no one (what every seat knows)."""
    out = []
    suggester = -1
    for actor, action, passed in core.log:
        if actor != CHANCE and A.SUGGEST0 <= action < A.SHOW0:
            suggester = actor
        visible = not (A.SHOW0 <= action < A.ACCUSE0) or (private and seat in (actor, suggester))
        out.append((actor, action, passed, visible))
    return out


def _won(core: Core, index: int) -> bool:
    """A correct accusation ends the game (R-A3), so it is the last event and its actor is the winner."""
    g = core.game
    return g is not None and index == len(core.log) - 1 and g.winner == core.log[index][0] and g.terminated


def _knows_envelope(core: Core, seat: int) -> bool:
    return any(actor == seat and action >= A.ACCUSE0 for actor, action, _ in core.log)  # R-A2


class CluedoObserver:
    """OpenSpiel's PyObserver interface: ``tensor``, ``dict`` and ``set_from``/``string_from``."""

    def __init__(self, config: RulesConfig, iig_obs_type: Any, params: dict | None) -> None:
        import pyspiel

        if params:
            raise ValueError(f"python_cluedo observers take no parameters, got {params}")
        if iig_obs_type.private_info == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("python_cluedo observes for one seat (private_info SINGLE_PLAYER) or none (NONE)")
        self.config = config
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self._engine: Any = None
        if self.perfect_recall:
            pieces = [("seat", (MAX_PLAYERS,)), ("hand", (NUM_CARDS,))]
            if config.has_board:
                pieces.append(("weapon_start", (NUM_WEAPONS, NUM_ROOMS)))
            pieces += [("envelope_known", (NUM_CARDS,)), ("events", (max_events(config), EVENT_WIDTH))]
        else:
            pieces = [(p.name, p.shape) for p in layout(config)]
        self.tensor = np.zeros(sum(int(np.prod(s)) for _, s in pieces), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, shape in pieces:
            n = int(np.prod(shape))
            self.dict[name] = self.tensor[at : at + n].reshape(shape)
            at += n

    # ------------------------------------------------------------ tensors
    def set_from(self, state: Any, player: int) -> None:
        core: Core = state._core
        self.tensor.fill(0)
        if self.perfect_recall:
            self._info_tensor(core, player)
        elif core.game is not None:
            self.tensor[:] = self._engine_observation(core, player)

    def _info_tensor(self, core: Core, seat: int) -> None:
        d = self.dict
        d["seat"][seat] = 1
        if self.private:
            d["hand"][core.hand_so_far(seat)] = 1
            if core.game is not None and _knows_envelope(core, seat):
                d["envelope_known"][list(core.game.envelope)] = 1
        for w, room in enumerate(core.weapon_rooms_so_far()):
            d["weapon_start"][w, room] = 1
        rows = d["events"]
        for i, (actor, action, passed, visible) in enumerate(events(core, seat, self.private)):
            what = action if actor == CHANCE else (action + 1 if visible else -1)
            rows[i] = (actor + 1, what, sum(1 << q for q in passed), float(_won(core, i)))

    def _engine_observation(self, core: Core, seat: int) -> np.ndarray:
        """The engine's observation of ``seat`` (one game loaded into a one-game vector engine)."""
        if self._engine is None:
            from cluedo_env.engine.vector_engine import VectorEngine

            self._engine = VectorEngine(self.config, batch_size=1, threads=1)
        assert core.game is not None
        self._engine.import_game(0, core.game.to_dict())
        obs = self._engine.observe_game(0, seat).astype(np.float32)
        if not self.private:
            for piece in layout(self.config):
                if piece.name in ("my_hand", "shown_to_me", "i_showed", "envelope_known", "hist_card_seen"):
                    obs[piece.offset : piece.offset + piece.size] = 0
        return obs

    # ------------------------------------------------------------ strings
    def string_from(self, state: Any, player: int) -> str:
        core: Core = state._core
        if self.perfect_recall:
            return self._info_string(core, player)
        if core.game is None:
            hand = core.hand_so_far(player) if self.private else []
            return f"seat {player}; dealing; my cards so far: {_cards(hand)}"
        self.set_from(state, player)
        parts = [f"seat {player}"]
        for name, piece in self.dict.items():
            nz = np.argwhere(piece != 0)
            if len(nz):
                parts.append(f"{name}: " + " ".join(_entry(piece, idx) for idx in nz))
        return "; ".join(parts)

    def _info_string(self, core: Core, seat: int) -> str:
        lines = [f"seat {seat} ({SUSPECTS[seat]})"]
        if self.private:
            lines.append(f"hand: {_cards(core.hand_so_far(seat))}")
        rooms = core.weapon_rooms_so_far()
        if rooms:
            lines.append("weapons: " + ", ".join(f"{WEAPONS[w]} in {ROOMS[r]}" for w, r in enumerate(rooms)))
        for i, (actor, action, passed, visible) in enumerate(events(core, seat, self.private)):
            if actor == CHANCE:
                lines.append(f"rolled {action}")
                continue
            text = A.describe(action) if visible else "SHOW(?)"
            if action >= A.ACCUSE0:
                text += " right" if _won(core, i) else " wrong"
            line = f"p{actor} {text}"
            if passed:
                line += "; could not refute: " + " ".join(f"p{q}" for q in passed)
            lines.append(line)
            if self.private and action >= A.ACCUSE0 and actor == seat and core.game is not None:
                lines.append(f"envelope: {_cards(list(core.game.envelope))}")  # R-A2
        return "\n".join(lines)


def _entry(piece: np.ndarray, idx: np.ndarray) -> str:
    """``i,j`` for a 1 at (i, j) of a piece, ``i,j=v`` for another value."""
    value = int(piece[tuple(idx)])
    return ",".join(str(int(i)) for i in idx) + ("" if value == 1 else f"={value}")


def _cards(cards: list[int]) -> str:
    return ", ".join(CARD_NAMES[c] for c in cards) or "-"
