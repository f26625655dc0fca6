"""A demo position for rendering: :func:`demo_snapshot`, a mid-game snapshot of the reference engine.

One job: make a realistic position to look at (docs, examples, ``python -m cluedo_env.render``).
It is separate because it plays a game with the reference engine, which no renderer needs.
"""

from __future__ import annotations

from typing import Any

from cluedo_env.rules.board import ROOM_LOC0


def demo_snapshot(seed: int = 3, players: int = 4, steps: int = 200) -> dict[str, Any]:
    """A mid-game snapshot of the reference engine: random legal actions that prefer entering rooms, no accusations."""
    import random

    from cluedo_env.engine.reference import Game
    from cluedo_env.rules import actions as A
    from cluedo_env.rules.config import RulesConfig

    game = Game(RulesConfig.from_preset("classic", players=players), seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        legal = [a for a in game.legal_actions() if a < A.ACCUSE0]
        if not legal:
            break
        into_rooms = [a for a in legal if A.MOVE0 + ROOM_LOC0 <= a < A.SUGGEST0]
        game.step(rng.choice(into_rooms or legal))
    return game.to_dict()
