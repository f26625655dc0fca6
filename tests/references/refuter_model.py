"""The numpy statement of the refuter model's update
(:meth:`cluedo_env.agents.knowledge.refuter_model.RefuterModel.update`),
which the tests compare with the compiled kernel at every call of seeded games.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import CAT_ONEHOT, CATEGORY, CATEGORY_SIZE
from cluedo_env.agents.knowledge.refuter_model import RefuterModel

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS


def update_reference(
    model: RefuterModel, view: PlayerView, idx: np.ndarray, shown_by_me: np.ndarray | None = None
) -> None:
    """:meth:`RefuterModel.update` in numpy: the readable statement."""
    idx = np.asarray(idx, np.int64)
    rec = model._new_records(view, idx)
    keep = ~rec.is_accusation & (rec.player == model.seat)
    rows = np.flatnonzero(keep)
    if len(rows) == 0:
        return
    # Records come game by game in order; take them in passes of at most one per game.
    g_all = rec.game[rows]
    first = np.r_[True, g_all[1:] != g_all[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(len(rows)), 0))
    rank = np.arange(len(rows)) - start
    hand = view.hand_sizes.astype(np.float64)[:, model.seat]  # (B,)
    for r in range(int(rank.max()) + 1):
        sel = rows[rank == r]
        g = rec.game[sel]
        cards = A.category_cards(rec.triple[sel]).astype(np.int64)  # (m, 3)
        resp = rec.response[sel].astype(np.int64)  # (m, P)
        for k in range(model.P):
            s = np.flatnonzero(resp[:, k] >= 0)
            if len(s) == 0:
                continue
            gs = g[s]
            if shown_by_me is None:
                mine = np.zeros((len(s), 3))
            else:
                mine = shown_by_me[gs, k].astype(np.float64) @ CAT_ONEHOT.T.astype(np.float64)
            # What the refuter expects of our hand per category: what we showed it, the rest pro rata.
            share = mine + (hand[gs] - mine.sum(1))[:, None] * CATEGORY_SIZE / NUM_CARDS
            _one(model, gs, k, cards[s], resp[s, k], share)
        model.received[g] += (resp >= 0).sum(1)


def _one(model: RefuterModel, g: np.ndarray, k: int, cards: np.ndarray, c: np.ndarray, hand_share: np.ndarray) -> None:
    """Refuter ``k`` showed us card ``c`` (m,) of the named ``cards`` (m, 3) in games ``g``."""
    m = len(g)
    shown_k = model.shown[g, k]  # (m, 21) before this record
    new = ~shown_k[np.arange(m), c]
    named_seen = shown_k[np.arange(m)[:, None], cards].any(1)
    model.deviant[g[new & named_seen], k] = True
    use = new & ~named_seen
    by_k = shown_k.sum(1)
    left = (
        CATEGORY_SIZE[None, :] - hand_share - shown_k.astype(np.float64) @ CAT_ONEHOT.T.astype(np.float64)
        - np.maximum(model.received[g] - by_k, 0)[:, None] / 3.0
    )  # fmt: skip
    lead = left[np.arange(m)[:, None], CATEGORY[cards]] >= left[np.arange(m), CATEGORY[c]][:, None] + model.margin
    lack = lead & use[:, None] & (cards != c[:, None])
    rr, jj = np.nonzero(lack)
    model.lacks[g[rr], k, cards[rr, jj]] = True
    model.shown[g, k, c] = True
