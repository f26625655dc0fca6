"""The numpy statement of the witness check (:func:`agents.knowledge.envelope_search.valid_deals`), which the
tests compare with the compiled kernel.

The search itself keeps its numpy statement in production: :func:`agents.knowledge.envelope_search.search_envelope`
runs it when asked for search statistics.
"""

from __future__ import annotations

import numpy as np

from agents.knowledge.facts import Facts


def valid_deals_reference(owner: np.ndarray, facts: Facts) -> np.ndarray:
    """:func:`agents.knowledge.envelope_search.valid_deals` in numpy: the readable reference."""
    no, cl_holder, cl_cards, cl_live = facts.no, facts.cl_holder, facts.cl_cards, facts.cl_live
    acc_cards, acc_live = facts.acc_cards, facts.acc_live
    n, W, C = owner.shape
    E = no.shape[1] - 1
    o = owner.astype(np.int64)
    r = np.arange(n)[:, None, None]
    ok = ~no[r, o, np.arange(C)[None, None, :]].any(2)
    if cl_live.shape[1]:
        held = o[r[..., None], np.arange(W)[None, :, None, None], cl_cards[:, None].astype(np.int64)]  # (n, W, K, 3)
        sat = (held == cl_holder[:, None, :, None]).any(3) | ~cl_live[:, None, :]
        ok &= sat.all(2)
    if acc_live.shape[1]:
        held = o[r[..., None], np.arange(W)[None, :, None, None], acc_cards[:, None].astype(np.int64)]
        ok &= ~((held == E).all(3) & acc_live[:, None, :]).any(2)
    return ok
