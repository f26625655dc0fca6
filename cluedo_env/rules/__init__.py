"""The rules as data: cards and their ids, rule configurations and presets, the board, the action space.

Everything here is plain data and pure functions, shared by both engines, the envs, the players
and the tools; nothing here steps a game.

* :mod:`~cluedo_env.rules.cards`: the 21 cards, their ids and categories, the secret passages.
* :mod:`~cluedo_env.rules.config`: :class:`~cluedo_env.rules.config.RulesConfig`, presets and flags.
* :mod:`~cluedo_env.rules.board`: the classic board (``docs/BOARD.md``) as arrays: squares, doors,
  starts, distances, passage and door-front tables.
* :mod:`~cluedo_env.rules.actions`: the 870 action ids, their blocks and names, and the
  triple <-> card helpers.
"""
