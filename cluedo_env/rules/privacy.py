"""Who may see what: the one statement of R-G7 that every reader of a game uses.

A card shown to refute a suggestion is seen by the suggester and by the refuter who showed it,
and by nobody else; that a refuter showed *a* card, and who passed, is public. The engine's
kernels (compiled from this same function), the observation encoder, the players' views, game
records' per-seat knowledge and the renderers all ask :func:`may_see_shown_card`.
"""

from __future__ import annotations

from typing import Any


def may_see_shown_card(observer: Any, suggester: Any, refuter: Any) -> Any:
    """R-G7: may ``observer`` see the card ``refuter`` showed to ``suggester``? (seat indices)

    Works on Python ints, numpy arrays (broadcast: element-wise bools) and inside numba kernels,
    which is why it is written with ``|`` rather than ``or``.
    """
    return (observer == suggester) | (observer == refuter)


__all__ = ["may_see_shown_card"]
