"""Players that act on a whole batch of games at once, what they know, and the loops that seat them.

The package is ordered by concept, each part importing only the parts above it in this list:

- :mod:`cluedo_env.agents.compiled`: how the players' numba kernels are compiled, cached and called.
- :mod:`cluedo_env.agents.knowledge`: what one seat knows and can infer: its facts, the notebook that keeps them,
propagation,
  the exact envelope search, sampled deals, the opponent and refuter models, the value of a suggestion.
- :mod:`cluedo_env.agents.planning`: where to move: travel times on the board and around blocking tokens.
- :mod:`cluedo_env.agents.players`: the players (random, notebook, heuristic, deducer, expert) on the interface of
  :mod:`cluedo_env.agents.players.base`.
- :mod:`cluedo_env.agents.learner`: what a learned policy sees (belief and accusation features, the compact
observation) and
  a policy function as a player.
- :mod:`cluedo_env.agents.play`: players by name (the registry), the batched game loop, tournaments and head-to-head
matches.

Each numba kernel lives in the module of the code that calls it, after a ``compiled kernels`` line; its numpy
statement, which the tests compare with it, lives in ``tests/references/``.
"""
