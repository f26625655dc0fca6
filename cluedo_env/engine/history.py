"""The entries of a game's public history: suggestions and accusations.

They live apart from the reference engine so that the snapshot format, which reads and writes
them, sits below both engines: :mod:`~cluedo_env.engine.snapshot` imports this module, the
reference engine imports the snapshot format, and nothing imports back up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cluedo_env.rules.cards import ROOM_CARD0, WEAPON_CARD0


@dataclass
class Suggestion:
    """One suggestion and its public outcome; ``shown`` is private to suggester and refuter (R-G7)."""

    suggester: int
    suspect: int  # suspect index 0..5
    weapon: int  # weapon index 0..5
    room: int  # room index 0..8
    passed: list[int] = field(default_factory=list)  # players who could not refute, in order asked
    refuted_by: list[int] = field(default_factory=list)  # players who showed a card, in order
    shown: list[int] = field(default_factory=list)  # card ids shown, parallel to refuted_by

    @property
    def cards(self) -> tuple[int, int, int]:
        return (self.suspect, WEAPON_CARD0 + self.weapon, ROOM_CARD0 + self.room)


@dataclass
class Accusation:
    """An accusation and its result, both public (R-A2)."""

    accuser: int
    suspect: int
    weapon: int
    room: int
    correct: bool


HistoryEntry = Suggestion | Accusation

__all__ = ["Accusation", "HistoryEntry", "Suggestion"]
