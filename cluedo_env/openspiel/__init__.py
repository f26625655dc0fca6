"""Cluedo in OpenSpiel: importing this package registers the game ``python_cluedo`` with ``pyspiel``.

Needs the optional extra ``open-spiel`` (``pip install cluedo_env[openspiel]``); docs/openspiel.md
says what the game offers and which OpenSpiel algorithms apply::

    import pyspiel
    import cluedo_env.openspiel  # registers python_cluedo

    game = pyspiel.load_game("python_cluedo", {"preset": "cards", "players": 3})
"""

from cluedo_env.openspiel.game import CluedoGame, CluedoState, config_from_params

__all__ = ["CluedoGame", "CluedoState", "config_from_params"]
