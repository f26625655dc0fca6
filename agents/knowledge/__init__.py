"""What one seat knows of a batch of games, and what follows from it (facts, notebook, inference, sampled deals)."""
