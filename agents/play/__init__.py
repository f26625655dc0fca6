"""Seating players: the registry of names, the batched game loop, tournaments and head-to-head matches."""
