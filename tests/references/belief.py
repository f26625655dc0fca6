"""The numpy statement of the belief features (:meth:`cluedo_env.agents.learner.belief.BeliefTracker.features`), which
the
tests compare with the compiled kernel.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import CAT_SLICES
from cluedo_env.agents.learner.belief import BeliefTracker

from cluedo_env.rules.cards import NUM_CARDS


def features_reference(tracker: BeliefTracker, idx: np.ndarray) -> np.ndarray:
    """:meth:`BeliefTracker.features` in numpy: the readable statement."""
    idx = np.asarray(idx, np.int64)
    n, H = len(idx), tracker.P + 1
    out = np.empty((n, tracker.size), np.int8)
    hw = H * NUM_CARDS
    for s, rows, gi in tracker._by_seat(idx):
        nb = tracker._notebook(s)
        order = tracker._order[s]
        has = nb.has[gi][:, order]  # (k, H, 21)
        out[rows, :hw] = has.reshape(len(gi), hw)
        out[rows, hw : 2 * hw] = nb.no[gi][:, order].reshape(len(gi), hw)
        env = has[:, -1]
        cat = np.stack([env[:, sl].any(1) for sl in CAT_SLICES], 1)
        out[rows, 2 * hw : 2 * hw + 3] = cat
        out[rows, 2 * hw + 3] = nb.solved(gi)
    return out
