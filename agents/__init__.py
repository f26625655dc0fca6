"""Rule-based players that act on a whole batch of games at once (see agents/players/base.py)."""
