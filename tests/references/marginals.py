"""The numpy statement of the rough per-card marginals (:func:`cluedo_env.agents.knowledge.marginals.marginals`), which
the
tests compare with the compiled kernel bit for bit.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import CAT_SLICES


def marginals_reference(has: np.ndarray, no: np.ndarray, size: np.ndarray) -> np.ndarray:
    """:func:`cluedo_env.agents.knowledge.marginals.marginals` in numpy: the readable reference (same results, bit for
    bit)."""
    E = has.shape[1] - 1
    unknown = ~has & ~no
    slots = np.maximum(size - has.sum(2), 0).astype(np.float64)  # (n, H)
    cand = unknown.sum(2).astype(np.float64)
    w = np.where(unknown, (slots / np.maximum(cand, 1))[:, :, None], 0.0)
    env_u = unknown[:, E]  # (n, 21)
    for sl in CAT_SLICES:
        cnt = env_u[:, sl].sum(1, keepdims=True)
        open_ = ~has[:, E, sl].any(1, keepdims=True)
        w[:, E, sl] = np.where(env_u[:, sl] & open_, 1.0 / np.maximum(cnt, 1), 0.0)
    total = w.sum(1, keepdims=True)
    p = np.where(total > 0, w / np.where(total > 0, total, 1), 0.0)
    return np.where(has, 1.0, p)
