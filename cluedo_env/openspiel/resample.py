"""Deals consistent with what one seat knows, for OpenSpiel's ``resample_from_infostate`` (ISMCTS).

What a seat knows of the hidden deal (R-G7): its own hand (R-S6), every hand's size (public),
for each suggestion who could not refute (they hold none of the three named cards, R-G6), who
refuted (they hold at least one), the card shown when the seat was the suggester or the refuter
(that refuter holds it), every wrong accusation (the envelope is not that triple, R-A4), and the
envelope itself once the seat has accused (R-A2).

:func:`sample_deal` draws the hidden cards under these constraints: fixed cards first, then the
envelope per category, then each refuter's "at least one" card, then the other cards to random
seats with room and no exclusion, and checks every constraint at the end (a failed draw is drawn
again). Every deal it returns is consistent with the seat's information; it is not the exact
posterior of the game (which would depend on how the others choose their suggestions and cards),
only a spread over consistent deals, as ISMCTS's determinizations are.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from cluedo_env.engine.history import Accusation, Suggestion
from cluedo_env.openspiel.core import CATEGORY_RANGES, Core
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

ENVELOPE = -1  # the holder of an envelope card
MAX_DRAWS = 10_000


@dataclass
class Knowledge:
    """What ``seat`` knows of the deal; holders are seats or ENVELOPE."""

    seat: int
    sizes: list[int]  # cards in each hand (public)
    holder: dict[int, int] = field(default_factory=dict)  # card -> known holder
    excluded: list[set[int]] = field(default_factory=list)  # seat -> cards it cannot hold (it passed on them)
    at_least: list[tuple[int, frozenset[int]]] = field(default_factory=list)  # (seat, cards): holds one of them
    not_envelope: list[tuple[int, int, int]] = field(default_factory=list)  # wrong accusations' card triples


def knowledge(core: Core, seat: int) -> Knowledge:
    """Everything ``seat`` knows of the deal in this state, from the engine's public record and its own view."""
    game = core.game
    assert game is not None, "resampling needs a complete deal"
    P = core.config.players
    know = Knowledge(seat, [len(h) for h in game.hands], excluded=[set() for _ in range(P)])
    for card in game.hands[seat]:  # R-S6
        know.holder[card] = seat
    for record in game.history:
        if isinstance(record, Accusation):
            triple = (record.suspect, WEAPON_CARD0 + record.weapon, ROOM_CARD0 + record.room)
            if record.accuser == seat or record.correct:  # R-A2, R-A3: the envelope seen or revealed
                for card in game.envelope if record.accuser == seat else triple:
                    know.holder[card] = ENVELOPE
            else:
                know.not_envelope.append(triple)  # R-A4: a wrong accusation
            continue
        assert isinstance(record, Suggestion)
        named = frozenset(record.cards)
        for q in record.passed:  # R-G6: could not refute
            know.excluded[q] |= named
        for q, card in zip(record.refuted_by, record.shown, strict=True):
            if seat in (q, record.suggester):  # R-G7: the shown card is seen by these two only
                know.holder[card] = q
            else:
                know.at_least.append((q, named))
    return know


def consistent(know: Knowledge, envelope: tuple[int, int, int], hands: list[list[int]]) -> bool:
    """Whether a full deal agrees with everything ``know`` holds."""
    where = {c: ENVELOPE for c in envelope}
    for q, hand in enumerate(hands):
        if len(hand) != know.sizes[q]:
            return False
        for c in hand:
            where[c] = q
    if sorted(where) != list(range(NUM_CARDS)):
        return False
    if any(where[c] != h for c, h in know.holder.items()):
        return False
    if any(where[c] == q for q, cards in enumerate(know.excluded) for c in cards):
        return False
    if any(all(where[c] != q for c in cards) for q, cards in know.at_least):
        return False
    return tuple(envelope) not in know.not_envelope


def _draw(know: Knowledge, rng: random.Random) -> tuple[tuple[int, int, int], list[list[int]]] | None:
    holder = dict(know.holder)
    envelope = []
    for lo, hi in CATEGORY_RANGES:  # R-S4: one card of each kind
        fixed = [c for c in range(lo, hi) if holder.get(c) == ENVELOPE]
        card = fixed[0] if fixed else rng.choice([c for c in range(lo, hi) if c not in holder])
        holder[card] = ENVELOPE
        envelope.append(card)
    room = [know.sizes[q] - sum(1 for h in holder.values() if h == q) for q in range(len(know.sizes))]
    if min(room) < 0:
        return None
    for q, cards in rng.sample(know.at_least, len(know.at_least)):
        if any(holder.get(c) == q for c in cards):
            continue
        options = [c for c in cards if c not in holder and c not in know.excluded[q]]
        if not options or room[q] == 0:
            return None
        card = rng.choice(options)
        holder[card] = q
        room[q] -= 1
    rest = [c for c in range(NUM_CARDS) if c not in holder]
    rng.shuffle(rest)
    for card in rest:
        slots = [q for q in range(len(room)) for _ in range(room[q]) if card not in know.excluded[q]]
        if not slots:
            return None
        q = rng.choice(slots)
        holder[card] = q
        room[q] -= 1
    hands = [sorted(c for c, h in holder.items() if h == q) for q in range(len(room))]
    return (envelope[0], envelope[1], envelope[2]), hands


def sample_deal(know: Knowledge, rng: random.Random) -> tuple[tuple[int, int, int], list[list[int]]]:
    """A deal (envelope, hands) consistent with ``know``; raises RuntimeError if none is found."""
    for _ in range(MAX_DRAWS):
        drawn = _draw(know, rng)
        if drawn is not None and consistent(know, *drawn):
            return drawn
    raise RuntimeError(f"no deal consistent with seat {know.seat}'s information in {MAX_DRAWS} draws")
