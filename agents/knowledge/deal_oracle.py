"""The brute-force reference: what a seat knows as plain Python, and every deal consistent with it.

Independent of the notebook's rules (:mod:`cluedo_env.agents.knowledge.notebook`,
:mod:`cluedo_env.agents.knowledge.propagation`), so it
can check them: ``tests/test_deducer.py`` and ``scripts/deducer_completeness.py`` compare what
the notebook proves with what enumerating every consistent deal proves. Exponential: for
positions with few unplaced cards only (bounded by a node limit).
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import CATEGORY

from cluedo_env.engine.views import HIDDEN, PASSED, PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS


def raw_information(view: PlayerView, game: int, upto: int | None = None) -> dict:
    """What seat ``view.seat`` knows of game ``game`` from its first ``upto`` records, as plain Python.

    Keys: ``players``, ``seat``, ``hand`` (card list), ``sizes`` (per seat), ``passes``
    [(seat, cards)], ``shown`` [(seat, card)] shown to this seat, ``clauses`` [(seat, cards)]
    refutations not seen, ``accusations`` [cards] wrong accusations of others, ``envelope``
    (card ids, or None). Only complete records count (as in :meth:`Notebook.update`).
    """
    hl = int(view.hist_len[game])
    limit = hl - int(view.phase[game] == A.REFUTE)
    upto = limit if upto is None else min(upto, limit)
    rec = view.records(np.full(upto, game), np.arange(upto))
    me = view.seat
    info = {
        "players": view.num_players,
        "seat": me,
        "hand": [int(c) for c in np.flatnonzero(view.hand[game])],
        "sizes": [int(x) for x in view.hand_sizes[game]],
        "passes": [],
        "shown": [],
        "clauses": [],
        "accusations": [],
        "envelope": None,
    }
    for k in range(upto):
        cards = [int(c) for c in A.category_cards(rec.triple[k])]
        if rec.is_accusation[k]:
            if not rec.correct[k] and rec.player[k] != me:
                info["accusations"].append(cards)
            continue
        for seat, r in enumerate(rec.response[k]):
            if r == PASSED:
                info["passes"].append((seat, cards))
            elif r == HIDDEN:
                info["clauses"].append((seat, cards))
            elif r >= 0 and rec.player[k] == me:
                info["shown"].append((seat, int(r)))
    env = view.envelope_if_known[game]
    if env[0] >= 0:
        info["envelope"] = [int(c) for c in env]
    return info


def enumerate_deals(info: dict, node_limit: int = 200_000, with_triples: bool = False) -> tuple | None:
    """Every deal consistent with ``info`` (see :func:`raw_information`), by brute force.

    Returns (number of deals, occurs) with occurs (H, 21) bool: some consistent deal puts
    the card with that holder (holder P is the envelope), plus with ``with_triples`` a dict
    envelope (suspect, weapon, room) card ids -> number of deals; None if the search would
    visit more than ``node_limit`` nodes. Uses only the raw information, none of the notebook's
    rules, so it is an independent oracle for what can be proved.
    """
    P, me = info["players"], info["seat"]
    E = P
    owner = [-1] * NUM_CARDS
    for c in info["hand"]:
        owner[c] = me
    for seat, c in info["shown"]:
        owner[c] = seat
    if info["envelope"]:
        for c in info["envelope"]:
            owner[c] = E
    allowed = [[h for h in range(P + 1) if h != me] for _ in range(NUM_CARDS)]
    for seat, cards in info["passes"]:
        for c in cards:
            if seat in allowed[c]:
                allowed[c].remove(seat)
    cap = [info["sizes"][h] for h in range(P)] + [0]
    env_cap = [1, 1, 1]
    for c in range(NUM_CARDS):
        if owner[c] >= 0:
            if owner[c] == E:
                env_cap[CATEGORY[c]] -= 1
            else:
                cap[owner[c]] -= 1
            if owner[c] not in allowed[c] and owner[c] != me:
                return (0, np.zeros((P + 1, NUM_CARDS), bool)) + (({},) if with_triples else ())  # inconsistent
    free = sorted((c for c in range(NUM_CARDS) if owner[c] < 0), key=lambda c: len(allowed[c]))
    clauses = info["clauses"]
    accs = info["accusations"]
    # Check each clause as soon as its last card is placed.
    last_pos = {c: i for i, c in enumerate(free)}
    check_at: list[list[tuple[str, int, list[int]]]] = [[] for _ in range(len(free) + 1)]
    for seat, cards in clauses:
        at = max((last_pos.get(c, -1) for c in cards), default=-1) + 1
        check_at[at].append(("c", seat, cards))
    for cards in accs:
        at = max((last_pos.get(c, -1) for c in cards), default=-1) + 1
        check_at[at].append(("a", E, cards))
    occurs = np.zeros((P + 1, NUM_CARDS), bool)
    triples: dict[tuple[int, int, int], int] = {}
    count = 0
    nodes = 0

    def ok(at: int) -> bool:
        for kind, seat, cards in check_at[at]:
            if kind == "c" and not any(owner[c] == seat for c in cards):
                return False
            if kind == "a" and all(owner[c] == E for c in cards):
                return False
        return True

    def dfs(i: int) -> bool:
        nonlocal count, nodes
        nodes += 1
        if nodes > node_limit:
            return False
        if not ok(i):
            return True
        if i == len(free):
            count += 1
            for c in range(NUM_CARDS):
                occurs[owner[c], c] = True
            env = tuple(c for c in range(NUM_CARDS) if owner[c] == E)
            triples[env] = triples.get(env, 0) + 1
            return True
        c = free[i]
        k = CATEGORY[c]
        for h in allowed[c]:
            if h == E:
                if env_cap[k] == 0:
                    continue
                env_cap[k] -= 1
            elif cap[h] == 0:
                continue
            else:
                cap[h] -= 1
            owner[c] = h
            go_on = dfs(i + 1)
            owner[c] = -1
            if h == E:
                env_cap[k] += 1
            else:
                cap[h] += 1
            if not go_on:
                return False
        return True

    extra = (triples,) if with_triples else ()
    if not ok(0) or any(x < 0 for x in cap) or any(x < 0 for x in env_cap):
        return (0, occurs) + extra
    if not dfs(0):
        return None
    return (count, occurs) + extra
