"""The numpy statement of the opponent models' assumed facts
(:func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits`), which the tests compare with the compiled call at
every
decision of seeded games.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import Facts, unpack
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.knowledge.opponent_model import assumed_no, strong_players
from cluedo_env.agents.knowledge.propagation import fixpoint_bits

from cluedo_env.rules.cards import NUM_CARDS


def assumed_facts_reference(
    nb: Notebook,
    idx: np.ndarray,
    has_board: bool,
    allow: np.ndarray | None = None,
    extra_no: np.ndarray | None = None,
    naive: bool = True,
    refuters: tuple[np.ndarray, np.ndarray] | None = None,
    strong_allows: bool = False,
) -> tuple[Facts, np.ndarray]:
    """The notebook's facts of games ``idx`` plus the naive-player model's, closed by propagation.

    ``allow`` (n,) bool: games where the model may be used (default all); ``extra_no`` (n, P, 21):
    more assumed "holds not" facts; ``naive``: add the naive-player model's. At a *strong* table (some opponent has
    named a card it holds, :func:`strong_players`): ``refuters`` = (``lacks`` (B, P, 21), ``deviant`` (B, P)) of
    :class:`cluedo_env.agents.knowledge.refuter_model.RefuterModel` adds what refuters' choices imply (not for deviant
    ones), and
    ``strong_allows`` uses the model there even where ``allow`` is False.
    Returns (facts, used): ``used`` (n,) bool is False where nothing was added or the assumed
    facts were contradictory; there ``facts`` are the notebook's own (copies). The numpy statement, used
    by the tests; players use :func:`assumed_bits` (compiled, the same facts).
    """
    facts = nb.arrays(idx)
    extra = assumed_no(nb, idx, has_board) if naive else np.zeros((len(idx), nb.P, NUM_CARDS), bool)
    if extra_no is not None:
        extra = extra | extra_no
    strong = strong_players(nb, idx, has_board)
    strong[:, nb.seat] = False
    table = strong.any(1)
    if refuters is not None:
        lacks, deviant = refuters
        extra = extra | (lacks[idx] & (table[:, None] & ~deviant[idx])[:, :, None])
    extra &= ~facts.no[:, : nb.P] & ~facts.has[:, : nb.P]
    used = extra.any((1, 2))
    if allow is not None:
        used &= allow | (table if strong_allows else False)
    rows = np.flatnonzero(used)
    if len(rows) == 0:
        return facts, used
    sub = facts.take(rows)
    sub.no[:, : nb.P] |= extra[rows]
    bits = sub.bits()
    bad = fixpoint_bits(bits)
    ok = rows[~bad]
    good = ~bad
    facts.has[ok] = unpack(bits.hb[good])
    facts.no[ok] = unpack(bits.nb[good])
    facts.cl_live[ok] = bits.cl_live[good]
    facts.acc_live[ok] = bits.acc_live[good]
    used[rows[bad]] = False
    return facts, used
