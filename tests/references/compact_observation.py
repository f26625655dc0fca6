"""The numpy statement of the compact observation's engine-derived slots
(:meth:`cluedo_env.agents.learner.compact_observation.CompactObservation.encode`), which the tests compare with the
compiled
encoder.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.learner.belief import BeliefTracker
from cluedo_env.agents.learner.compact_observation import CORRIDOR, CompactObservation

from cluedo_env.rules.board import NUM_LOCATIONS, ROOM_LOC0
from cluedo_env.rules.cards import NUM_ROOMS, NUM_SUSPECTS


def encode_reference(
    encoder: CompactObservation, obs: np.ndarray, tracker: BeliefTracker, idx: np.ndarray
) -> np.ndarray:
    """:meth:`CompactObservation.encode` in numpy: the readable statement of the engine-derived slots."""
    obs = np.asarray(obs)
    n = len(obs)
    out = np.zeros((n, encoder.size), np.int8)
    out[:, encoder._dst] = obs[:, encoder._src]
    rows = np.arange(n)
    if encoder._board:
        t = encoder._tokens
        loc = obs[:, t.offset : t.offset + t.size].reshape(n, NUM_SUSPECTS, NUM_LOCATIONS).argmax(-1)  # (n, 6)
        room = np.where(loc >= ROOM_LOC0, loc - ROOM_LOC0, CORRIDOR)
        p = encoder.pieces["token_room"]
        cols = p.offset + np.arange(NUM_SUSPECTS) * (NUM_ROOMS + 1) + room
        out[rows[:, None], cols] = 1
        me = obs[:, encoder._my.offset : encoder._my.offset + encoder._my.size].argmax(1)
        p = encoder.pieces["room_turns"]
        out[:, p.offset : p.offset + p.size] = encoder._turns[loc[rows, me]]
    encoder._notebook_slots(tracker, idx, out)
    return out
