"""Card, suspect, weapon and room identifiers: the one place where they are defined.

Every module refers to cards by these integer ids, so the engines, observations,
agents and renderers agree on what "card 14" means.

Card ids (21 cards, R-S4):
    0..5    suspects, in turn order (Scarlet moves first, R-S1)
    6..11   weapons
    12..20  rooms
"""

from __future__ import annotations

SUSPECTS: tuple[str, ...] = ("Scarlet", "Mustard", "White", "Green", "Peacock", "Plum")
WEAPONS: tuple[str, ...] = ("Candlestick", "Dagger", "Lead Pipe", "Revolver", "Rope", "Wrench")
ROOMS: tuple[str, ...] = (
    "Kitchen",
    "Ballroom",
    "Conservatory",
    "Dining Room",
    "Billiard Room",
    "Library",
    "Lounge",
    "Hall",
    "Study",
)

NUM_SUSPECTS = len(SUSPECTS)  # 6
NUM_WEAPONS = len(WEAPONS)  # 6
NUM_ROOMS = len(ROOMS)  # 9
NUM_CARDS = NUM_SUSPECTS + NUM_WEAPONS + NUM_ROOMS  # 21
MAX_PLAYERS = 6

SUSPECT_CARD0 = 0
WEAPON_CARD0 = NUM_SUSPECTS  # 6
ROOM_CARD0 = NUM_SUSPECTS + NUM_WEAPONS  # 12

CARD_NAMES: tuple[str, ...] = SUSPECTS + WEAPONS + ROOMS

# Room indices used across the project (same order as ROOMS).
KITCHEN, BALLROOM, CONSERVATORY, DINING_ROOM, BILLIARD_ROOM, LIBRARY, LOUNGE, HALL, STUDY = range(9)

# R-T2: secret passages join opposite corner rooms.
PASSAGES: dict[int, int] = {KITCHEN: STUDY, STUDY: KITCHEN, CONSERVATORY: LOUNGE, LOUNGE: CONSERVATORY}

# R-C4: playing-card names of the card-only variant (seed 001).
PLAYING_CARD_NAMES: tuple[str, ...] = (
    "Jack of spades",
    "Queen of spades",
    "King of spades",
    "Jack of clubs",
    "Queen of clubs",
    "King of clubs",
    "Ace of spades",
    "2 of spades",
    "3 of spades",
    "4 of spades",
    "5 of spades",
    "6 of spades",
    "Ace of diamonds",
    "2 of diamonds",
    "3 of diamonds",
    "4 of diamonds",
    "5 of diamonds",
    "6 of diamonds",
    "7 of diamonds",
    "8 of diamonds",
    "9 of diamonds",
)


def suspect_card(suspect: int) -> int:
    return SUSPECT_CARD0 + suspect


def weapon_card(weapon: int) -> int:
    return WEAPON_CARD0 + weapon


def room_card(room: int) -> int:
    return ROOM_CARD0 + room


def card_category(card: int) -> int:
    """0 for a suspect card, 1 for a weapon card, 2 for a room card."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card} out of range 0..{NUM_CARDS - 1}")
    return 0 if card < WEAPON_CARD0 else (1 if card < ROOM_CARD0 else 2)


def _lookup(names: tuple[str, ...], kind: str, name: str) -> int:
    for i, n in enumerate(names):
        if n.lower() == name.lower():
            return i
    raise ValueError(f"unknown {kind} {name!r}; {kind}s are: {', '.join(names)}")


def card_id(name: str) -> int:
    """Card id from its name (case-insensitive); raises ValueError naming the allowed names."""
    return _lookup(CARD_NAMES, "card", name)


def suspect_id(name: str) -> int:
    return _lookup(SUSPECTS, "suspect", name)


def weapon_id(name: str) -> int:
    return _lookup(WEAPONS, "weapon", name)


def room_id(name: str) -> int:
    return _lookup(ROOMS, "room", name)


__all__ = [
    "BALLROOM",
    "BILLIARD_ROOM",
    "CARD_NAMES",
    "CONSERVATORY",
    "DINING_ROOM",
    "HALL",
    "KITCHEN",
    "LIBRARY",
    "LOUNGE",
    "MAX_PLAYERS",
    "NUM_CARDS",
    "NUM_ROOMS",
    "NUM_SUSPECTS",
    "NUM_WEAPONS",
    "PASSAGES",
    "PLAYING_CARD_NAMES",
    "ROOMS",
    "ROOM_CARD0",
    "STUDY",
    "SUSPECTS",
    "SUSPECT_CARD0",
    "WEAPONS",
    "WEAPON_CARD0",
    "card_category",
    "card_id",
    "room_card",
    "room_id",
    "suspect_card",
    "suspect_id",
    "weapon_card",
    "weapon_id",
]
