"""The two engines and what they share.

* :mod:`~cluedo_env.engine.reference`: one game in plain Python, written to be read (the oracle).
* :mod:`~cluedo_env.engine.vector_engine`: the production engine, a batch of games as numpy arrays
  (:mod:`~cluedo_env.engine.state`) stepped by compiled kernels (:mod:`~cluedo_env.engine.kernels`,
  :mod:`~cluedo_env.engine.movement`, their numba cache :mod:`~cluedo_env.engine.kernel_cache`).
* :mod:`~cluedo_env.engine.observation`: the observation tensor, piece by piece.
* :mod:`~cluedo_env.engine.views`: a player's read-only view of a batch (what players act on).
* :mod:`~cluedo_env.engine.snapshot`: a game as a JSON-able dict, exchanged by both engines.
* :mod:`~cluedo_env.engine.history`: the suggestions and accusations of a game's public history.
"""
