"""The batched players: random, notebook, heuristic, deducer and expert, on the interface of :mod:`.base`."""
