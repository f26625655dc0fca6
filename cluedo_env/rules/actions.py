"""The flat action space shared by every engine, env and agent.

One integer range covers all decisions of all phases; the legal-action mask says which
are open for the player to act. Sub-ranges (``A = NUM_ACTIONS = 870``):

=========  ===========  ======  ==========================================================
first id   name         size    meaning
=========  ===========  ======  ==========================================================
0          ROLL         1       roll the dice and then choose where to move (R-T1)
1          PASSAGE      1       take the secret passage of a corner room (R-T2)
2          STAY         1       stay in the room one was dragged into and suggest (R-T3)
3          END_TURN     1       end the turn (R-T5 when locked in; after a move, a
                                suggestion, or instead of an optional suggestion)
4          MOVE         197     move to location 0..196 (188 squares, then 9 rooms)
201        SUGGEST      324     suggest triple (suspect, weapon, room)
525        SHOW         21      show card 0..20 to the suggester (refuter's choice, R-G6)
546        ACCUSE       324     accuse triple (suspect, weapon, room)
=========  ===========  ======  ==========================================================

A triple index is ``(suspect * 6 + weapon) * 9 + room`` (suspect, weapon and room as
indices 0..5, 0..5, 0..8, not card ids). On the board a suggestion must name the room the
token is in (R-G1), so only 36 of the 324 SUGGEST actions can ever be legal at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cluedo_env.errors import CluedoError
from cluedo_env.rules.board import NUM_LOCATIONS
from cluedo_env.rules.cards import (
    CARD_NAMES,
    NUM_CARDS,
    NUM_ROOMS,
    NUM_WEAPONS,
    ROOM_CARD0,
    ROOMS,
    SUSPECTS,
    WEAPON_CARD0,
    WEAPONS,
)

NUM_TRIPLES = 6 * 6 * 9  # 324

ROLL = 0
PASSAGE = 1
STAY = 2
END_TURN = 3
MOVE0 = 4
SUGGEST0 = MOVE0 + NUM_LOCATIONS  # 201
SHOW0 = SUGGEST0 + NUM_TRIPLES  # 525
ACCUSE0 = SHOW0 + NUM_CARDS  # 546
NUM_ACTIONS = ACCUSE0 + NUM_TRIPLES  # 870

# Phases: what decision the player to act is asked for.
START, MOVE, SUGGEST, REFUTE, POST, OVER = range(6)
PHASE_NAMES = ("start", "move", "suggest", "refute", "post", "over")
PHASE_HELP = {
    START: "turn start: ROLL, PASSAGE, STAY, ACCUSE, or END_TURN when locked in",
    MOVE: "choose a MOVE destination for the roll",
    SUGGEST: "make a SUGGEST in the room entered (or END_TURN/ACCUSE where the variant allows)",
    REFUTE: "the refuter chooses which named card to SHOW",
    POST: "after the move or suggestion: ACCUSE or END_TURN",
    OVER: "the game is over: no action is legal",
}


CATEGORY_CARD0 = np.array([0, WEAPON_CARD0, ROOM_CARD0])  # first card id of suspects, weapons, rooms


# Triple index <-> (suspect, weapon, room) <-> card ids: the one place these are computed. Each
# helper is plain arithmetic, so it takes Python ints, numpy arrays (element-wise) and compiles
# in the engine's numba kernels unchanged.
def triple_index(suspect: Any, weapon: Any, room: Any) -> Any:
    """Triple index 0..323 of (suspect 0..5, weapon 0..5, room 0..8) (ints or arrays)."""
    return (suspect * NUM_WEAPONS + weapon) * NUM_ROOMS + room


def triple_of(index: Any) -> tuple[Any, Any, Any]:
    """(suspect, weapon, room) category indices of triple index/indices 0..323."""
    return index // (NUM_WEAPONS * NUM_ROOMS), (index // NUM_ROOMS) % NUM_WEAPONS, index % NUM_ROOMS


def triple_cards(index: Any) -> tuple[Any, Any, Any]:
    """(suspect, weapon, room) card ids 0..20 named by triple index/indices 0..323."""
    # the arithmetic of triple_of, written out: numba compiles this function on its own (kernels)
    return (
        index // (NUM_WEAPONS * NUM_ROOMS),
        WEAPON_CARD0 + (index // NUM_ROOMS) % NUM_WEAPONS,
        ROOM_CARD0 + index % NUM_ROOMS,
    )


def cards_triple(suspect_card: Any, weapon_card: Any, room_card: Any) -> Any:
    """Triple index of three card ids (a suspect, a weapon and a room card; ints or arrays)."""
    return triple_index(suspect_card, weapon_card - WEAPON_CARD0, room_card - ROOM_CARD0)


def category_cards(triple: Any) -> np.ndarray:
    """(..., 3) (suspect, weapon, room) category indices -> (..., 3) card ids (e.g. the history's triples)."""
    return np.asarray(triple, np.int64) + CATEGORY_CARD0


def describe(action: int) -> str:
    """Human-readable action, e.g. ``ACCUSE(Plum, Rope, Hall)``; for logs and error messages."""
    if not 0 <= action < NUM_ACTIONS:
        return f"{action} (out of range 0..{NUM_ACTIONS - 1})"
    if action < MOVE0:
        return ("ROLL", "PASSAGE", "STAY", "END_TURN")[action]
    if action < SUGGEST0:
        from cluedo_env.rules.board import load_board

        return f"MOVE({load_board().loc_name(action - MOVE0)})"
    if action < SHOW0:
        s, w, r = triple_of(action - SUGGEST0)
        return f"SUGGEST({SUSPECTS[s]}, {WEAPONS[w]}, {ROOMS[r]})"
    if action < ACCUSE0:
        return f"SHOW({CARD_NAMES[action - SHOW0]})"
    s, w, r = triple_of(action - ACCUSE0)
    return f"ACCUSE({SUSPECTS[s]}, {WEAPONS[w]}, {ROOMS[r]})"


class IllegalActionError(CluedoError):
    """An action that is out of range or not legal for the player to act; the state is unchanged."""
