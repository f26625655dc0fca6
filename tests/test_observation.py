"""Observations: layout, documentation, an independent reading of every piece, and information hiding.

Positions come from random legal games on a VectorEngine (classic, seed000 and cards, 3..6
players), cut after a random number of steps; the players rarely accuse, so histories run
long and overflow the history window. Each position is exported as a snapshot, and edited
snapshots are imported into a second engine with the same rules.

Information hiding (R-G7) is checked both ways. A player's knowledge is the public record,
its own hand (R-S6), the cards shown to it and by it (R-G7) and, once it accused, the
envelope (R-A2). Changing anything else, consistently with what the player saw, must leave
its observation byte-identical: (a) swapping cards between two other holders (hands or the
envelope), (b) the card shown in a suggestion it neither made nor refuted, (c) the envelope.
"Consistently" means every record of the history stays true: a seat that passed holds none
of the three named cards, a refuter holds the card it showed, an accusation's result matches
the envelope, the refuter of a pending suggestion holds a named card. Changing what the
player can know (its hand, a card shown to or by it, a token, a weapon, a public refutation
outcome, the envelope after its accusation) must change its observation.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cluedo_env.engine.observation import (
    COUNT_PIECES,
    HISTORY_WINDOW,
    MAX_ROLL,
    layout,
    packed_layout,
    size,
    split,
    unpack,
)
from cluedo_env.engine.snapshot import loc_from_json, loc_to_json
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS, ROOM_LOC0
from cluedo_env.rules.cards import (
    CARD_NAMES,
    MAX_PLAYERS,
    NUM_CARDS,
    NUM_ROOMS,
    NUM_SUSPECTS,
    NUM_WEAPONS,
    ROOM_CARD0,
    ROOMS,
    SUSPECTS,
    WEAPON_CARD0,
    WEAPONS,
    card_category,
    card_id,
    room_id,
    suspect_id,
    weapon_id,
)
from cluedo_env.rules.config import RulesConfig

ROOT = Path(__file__).resolve().parents[1]
K = HISTORY_WINDOW
PRESETS = ("classic", "seed000", "cards")
PLAYERS = (3, 4, 5, 6)
GAMES, CHECKPOINTS = 5, 4  # per (preset, players): 12 x 5 x 4 = 240 positions
MAX_STEPS = {"classic": 700, "seed000": 500, "cards": 500}
ACCUSE_P = 0.004  # chance a player who may accuse is allowed to, per decision


# ============================================================== positions
@dataclass
class Position:
    cfg: RulesConfig
    snap: dict[str, Any]
    live: np.ndarray  # (P, D): observe(player=p) of the engine that played the game
    live_default: np.ndarray  # (D,): observe() of that engine
    live_actor: int
    _base: np.ndarray | None = None

    @property
    def P(self) -> int:
        return self.cfg.players

    @property
    def base(self) -> np.ndarray:
        """(P, D): the observations of the unedited snapshot, imported like the edited ones."""
        if self._base is None:
            self._base = observe_all(self.cfg, self.snap)
        return self._base


def _play(preset: str, players: int, seed: int) -> list[Position]:
    cfg = RulesConfig.from_preset(preset, players=players)
    eng = VectorEngine(cfg, batch_size=GAMES)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = MAX_STEPS[preset]
    stops = rng.integers(0, steps, (GAMES, CHECKPOINTS))
    out = []
    for t in range(steps):
        for b in np.flatnonzero((stops == t).any(1)):
            live = eng.observe(player=np.arange(players), idx=np.full(players, b))
            out.append(Position(cfg, eng.export_game(int(b)), live, eng.observe(idx=[b])[0], int(eng.actor[b])))
        mask = eng.legal_action_mask.copy()
        others = mask[:, : A.ACCUSE0].any(1)
        mask[others & (rng.random(eng.batch_size) >= ACCUSE_P), A.ACCUSE0 :] = False
        act = np.where(mask, rng.random(mask.shape), -1.0).argmax(1)
        act[~mask.any(1)] = -1
        eng.step(act)
    return out


@pytest.fixture(scope="module")
def positions() -> list[Position]:
    out = []
    for i, preset in enumerate(PRESETS):
        for players in PLAYERS:
            out += _play(preset, players, seed=100 * i + players)
    return out


_ENGINES: dict[RulesConfig, VectorEngine] = {}


def observe_all(cfg: RulesConfig, snap: dict[str, Any]) -> np.ndarray:
    """(P, D): every seat's observation of the game ``snap`` describes, imported into a fresh slot."""
    eng = _ENGINES.get(cfg)
    if eng is None:
        eng = _ENGINES[cfg] = VectorEngine(cfg, batch_size=1)
    eng.import_game(0, snap)
    P = cfg.players
    return eng.observe(player=np.arange(P), idx=np.zeros(P, np.int64))


def imported(pos: Position) -> VectorEngine:
    eng = VectorEngine(pos.cfg, batch_size=1)
    eng.import_game(0, pos.snap)
    return eng


# ====================================================== snapshot reading
def named_ids(rec: dict[str, Any]) -> tuple[int, int, int]:
    s, w, r = rec["cards"]
    return suspect_id(s), WEAPON_CARD0 + weapon_id(w), ROOM_CARD0 + room_id(r)


def holders(snap: dict[str, Any]) -> np.ndarray:
    """(21,) seat holding each card, -1 for the envelope."""
    holder = np.full(NUM_CARDS, -9, np.int64)
    for p, hand in enumerate(snap["hands"]):
        holder[[card_id(c) for c in hand]] = p
    holder[[card_id(c) for c in snap["envelope"]]] = -1
    assert (holder >= -1).all()
    return holder


def with_holders(snap: dict[str, Any], holder: np.ndarray) -> dict[str, Any]:
    out = copy.deepcopy(snap)
    out["hands"] = [[CARD_NAMES[c] for c in np.flatnonzero(holder == p)] for p in range(len(snap["hands"]))]
    out["envelope"] = [CARD_NAMES[c] for c in np.flatnonzero(holder == -1)]  # ids sort suspect, weapon, room
    return out


@dataclass
class Constraints:
    """What the history says about who holds what (every record must stay true)."""

    holds_none: list[tuple[int, tuple[int, int, int]]]  # (seat, named): seat passed on these cards
    holds: list[tuple[int, int]]  # (seat, card): seat showed the card
    accusations: list[tuple[tuple[int, int, int], bool]]
    pending: tuple[int, tuple[int, int, int]] | None  # refuter to act and the named cards


def constraints(snap: dict[str, Any]) -> Constraints:
    c = Constraints([], [], [], None)
    for rec in snap["history"]:
        named = named_ids(rec)
        if rec["type"] == "accusation":
            c.accusations.append((named, bool(rec["correct"])))
            continue
        c.holds_none += [(q, named) for q in rec["passed"]]
        for q, shown in zip(rec["refuted_by"], rec["shown"], strict=True):
            assert card_id(shown) in named
            c.holds.append((q, card_id(shown)))
    if snap["phase"] == "refute":
        c.pending = (snap["refuter"], named_ids(snap["history"][-1]))
    return c


def consistent(c: Constraints, holder: np.ndarray) -> bool:
    env = tuple(int(x) for x in np.flatnonzero(holder == -1))
    return (
        all(all(holder[x] != q for x in named) for q, named in c.holds_none)
        and all(holder[x] == q for q, x in c.holds)
        and all((named == env) == correct for named, correct in c.accusations)
        and (c.pending is None or any(holder[x] == c.pending[0] for x in c.pending[1]))
    )


def accusers(snap: dict[str, Any]) -> set[int]:
    return {rec["player"] for rec in snap["history"] if rec["type"] == "accusation"}


def window_index(snap: dict[str, Any], h: int) -> int:
    """Index k of record h in the history window (>= K: fallen out of it)."""
    return len(snap["history"]) - 1 - h


def expected_pieces(snap: dict[str, Any], cfg: RulesConfig, p: int) -> dict[str, np.ndarray]:
    """Player ``p``'s observation read straight from the snapshot, piece by piece (docs/observation.md)."""
    P = cfg.players
    e = {piece.name: np.zeros(piece.shape, np.int64) for piece in layout(cfg)}

    def rel(q: int) -> int:
        return (q - p) % P

    phase = A.PHASE_NAMES.index(snap["phase"])
    e["phase"][phase] = 1
    actor = -1 if phase == A.OVER else snap["refuter"] if phase == A.REFUTE else snap["current"]
    e["to_act"][0] = actor == p
    e["current_seat"][rel(snap["current"])] = 1
    e["roll"][snap["roll"]] = 1
    hands = [[card_id(c) for c in hand] for hand in snap["hands"]]
    e["my_hand"][hands[p]] = 1
    if cfg.has_board:
        e["my_suspect"][p] = 1  # R-S1: seat p plays suspect p
        for s, name in enumerate(SUSPECTS):
            e["token_location"][s, loc_from_json(snap["suspects"][name])] = 1
        for w, name in enumerate(WEAPONS):
            e["weapon_room"][w, room_id(snap["weapons"][name])] = 1
        e["may_stay"][0] = snap["dragged"][p]
    for q in range(P):
        e["seat_present"][rel(q)] = 1
        e["eliminated"][rel(q)] = snap["eliminated"][q]
        e["hand_size"][rel(q)] = len(hands[q])
    history = snap["history"]
    if phase == A.REFUTE:
        e["pending_suggester"][rel(history[-1]["player"])] = 1
        e["pending_cards"][list(named_ids(history[-1]))] = 1
    envelope = [card_id(c) for c in snap["envelope"]]
    for rec in history:
        named, who = list(named_ids(rec)), rec["player"]
        if rec["type"] == "accusation":
            e["accused"][rel(who)] = 1
            e["accusation_cards"][rel(who), named] = 1
            e["accusation_correct"][rel(who)] = rec["correct"]
            if who == p:
                e["envelope_known"][envelope] = 1
            continue
        e["named_count"][rel(who), named] += 1
        for q in rec["passed"]:
            e["passed_on"][rel(q), named] = 1
        for q, shown in zip(rec["refuted_by"], rec["shown"], strict=True):
            e["refuted_on"][rel(q), named] += 1
            if who == p:
                e["shown_to_me"][rel(q), card_id(shown)] = 1
            if q == p:
                e["i_showed"][rel(who), card_id(shown)] = 1
    for name in ("named_count", "refuted_on"):
        e[name] = np.minimum(e[name], 127)
    for k, rec in enumerate(reversed(history[-K:])):
        e["hist_valid"][k] = 1
        e["hist_player"][k, rel(rec["player"])] = 1
        e["hist_cards"][k, list(named_ids(rec))] = 1
        if rec["type"] == "accusation":
            e["hist_is_accusation"][k] = 1
            e["hist_correct"][k] = rec["correct"]
            continue
        for q in rec["passed"]:
            e["hist_passed"][k, rel(q)] = 1
        for q, shown in zip(rec["refuted_by"], rec["shown"], strict=True):
            e["hist_refuted"][k, rel(q)] = 1
            if rec["player"] == p or q == p:  # R-G7: the suggester sees every shown card, a refuter its own
                e["hist_card_seen"][k, card_id(shown)] = 1
    return e


# ================================================================ the doc
def _doc_module():
    from scripts import gen_observation_doc

    return gen_observation_doc


def test_doc_is_in_sync_with_layout(tmp_path):
    gen = _doc_module()
    assert gen.check(), "docs/observation.md is out of date: run python scripts/gen_observation_doc.py"
    assert gen.main(["--check"]) == 0
    text = gen.render()
    for cfg in (RulesConfig.from_preset("classic"), RulesConfig.from_preset("cards")):
        for piece in layout(cfg):
            assert f"| `{piece.name}` |" in text
    stale = tmp_path / "observation.md"
    stale.write_text(text.replace("hist_valid", "hist_ok"), encoding="utf-8")
    assert not gen.check(stale)


# ============================================================= the layout
EXPECTED_SHAPES = {
    "phase": (6,),
    "to_act": (1,),
    "current_seat": (MAX_PLAYERS,),
    "roll": (MAX_ROLL + 1,),
    "my_hand": (NUM_CARDS,),
    "my_suspect": (NUM_SUSPECTS,),
    "token_location": (NUM_SUSPECTS, NUM_LOCATIONS),
    "weapon_room": (NUM_WEAPONS, NUM_ROOMS),
    "may_stay": (1,),
    "seat_present": (MAX_PLAYERS,),
    "eliminated": (MAX_PLAYERS,),
    "hand_size": (MAX_PLAYERS,),
    "pending_suggester": (MAX_PLAYERS,),
    "pending_cards": (NUM_CARDS,),
    "shown_to_me": (MAX_PLAYERS, NUM_CARDS),
    "i_showed": (MAX_PLAYERS, NUM_CARDS),
    "passed_on": (MAX_PLAYERS, NUM_CARDS),
    "refuted_on": (MAX_PLAYERS, NUM_CARDS),
    "named_count": (MAX_PLAYERS, NUM_CARDS),
    "accused": (MAX_PLAYERS,),
    "accusation_cards": (MAX_PLAYERS, NUM_CARDS),
    "accusation_correct": (MAX_PLAYERS,),
    "envelope_known": (NUM_CARDS,),
    "hist_valid": (K,),
    "hist_is_accusation": (K,),
    "hist_player": (K, MAX_PLAYERS),
    "hist_cards": (K, NUM_CARDS),
    "hist_passed": (K, MAX_PLAYERS),
    "hist_refuted": (K, MAX_PLAYERS),
    "hist_card_seen": (K, NUM_CARDS),
    "hist_correct": (K,),
}
BOARD_ONLY = {"my_suspect", "token_location", "weapon_room", "may_stay"}


@pytest.mark.parametrize("preset,players", [(pr, n) for pr in PRESETS for n in (2, 3, 6) if pr == "classic" or n >= 3])
def test_layout_is_contiguous_and_matches_the_engine(preset, players):
    cfg = RulesConfig.from_preset(preset, players=players)
    pieces = layout(cfg)
    names = [p.name for p in pieces]
    assert len(set(names)) == len(names)
    expected = [n for n in EXPECTED_SHAPES if cfg.has_board or n not in BOARD_ONLY]
    assert names == expected
    offset = 0
    for piece in pieces:
        assert piece.offset == offset, piece.name
        assert piece.shape == EXPECTED_SHAPES[piece.name]
        assert piece.size == int(np.prod(piece.shape)) > 0
        offset += piece.size
    assert size(cfg) == offset
    eng = VectorEngine(cfg, batch_size=3)
    eng.reset(seed=0)
    obs = eng.observe()
    assert obs.dtype == np.int8 and obs.shape == (3, offset) and eng.observation_size == offset
    parts = split(obs, cfg)
    assert list(parts) == names
    for piece in pieces:
        assert parts[piece.name].shape == (3,) + piece.shape
    assert np.array_equal(np.concatenate([parts[n].reshape(3, -1) for n in names], axis=1), obs)
    single = split(obs[0], cfg)
    assert all(single[p.name].shape == p.shape for p in pieces)


def test_layout_depends_only_on_the_board():
    base = [(p.name, p.shape, p.offset) for p in layout(RulesConfig.from_preset("classic"))]
    others = [RulesConfig.from_preset("classic", players=n) for n in (2, 5, 6)] + [RulesConfig.from_preset("seed000")]
    for cfg in others:
        assert [(p.name, p.shape, p.offset) for p in layout(cfg)] == base


def test_positions_cover_the_interesting_cases(positions):
    """The random positions reach every phase, long histories, accusations and finished games."""
    phases = {pos.snap["phase"] for pos in positions}
    assert len(positions) >= 200
    assert {"start", "move", "suggest", "refute", "post", "over"} <= phases
    assert sum(len(pos.snap["history"]) > K for pos in positions) >= 100
    assert sum(bool(accusers(pos.snap)) for pos in positions) >= 20
    assert sum(pos.snap["phase"] == "refute" for pos in positions) >= 10


# ======================================== every piece, read independently
def test_every_piece_matches_an_independent_reading_of_the_snapshot(positions):
    for n, pos in enumerate(positions):
        obs = observe_all(pos.cfg, pos.snap)
        assert obs.dtype == np.int8
        assert np.array_equal(obs, pos.live), f"position {n}: export/import changed an observation"
        assert obs.min() >= 0 and obs.max() <= 127
        for p in range(pos.P):
            got = split(obs[p], pos.cfg)
            want = expected_pieces(pos.snap, pos.cfg, p)
            for name, value in want.items():
                assert np.array_equal(got[name], value), f"position {n} ({pos.cfg.preset}), seat {p}: piece {name}"


# ======================================== the packed layout
def test_packed_observations_unpack_to_the_int8_ones_bit_for_bit(positions):
    """The packed row says exactly what the int8 row says (which the test above reads independently)."""
    engines: dict[RulesConfig, VectorEngine] = {}
    for n, pos in enumerate(positions):
        eng = engines.setdefault(pos.cfg, VectorEngine(pos.cfg, batch_size=1))
        eng.import_game(0, pos.snap)
        seats, games = np.arange(pos.P), np.zeros(pos.P, np.int64)
        packed = eng.observe(player=seats, idx=games, packed=True)
        assert packed.dtype == np.uint8 and packed.shape == (pos.P, eng.packed_observation_size)
        assert np.array_equal(unpack(packed, pos.cfg), pos.live), f"position {n} ({pos.cfg.preset})"
        for p in range(pos.P):
            assert np.array_equal(eng.observe_game(0, p, packed=True), packed[p])


def test_packed_layout_holds_every_slot_once():
    for preset in PRESETS:
        cfg = RulesConfig.from_preset(preset)
        pl, D = packed_layout(cfg), size(cfg)
        counts = sum(p.size for p in layout(cfg) if p.name in COUNT_PIECES)
        assert pl.bits + counts == D and pl.bit_bytes == -(-pl.bits // 8) and pl.size == pl.bit_bytes + counts
        assert sorted(pl.source.tolist()) == list(range(D))  # a permutation: nothing lost, nothing twice
        assert pl.size * 3 < D  # a third of the bytes or less (a fifth on the board)
        # a set bit of the packed row shows up in exactly one slot of the unpacked row, and nowhere else
        for bit in (0, 7, pl.bits - 1):
            row = np.zeros(pl.size, np.uint8)
            row[bit // 8] = 1 << (bit % 8)
            assert np.flatnonzero(unpack(row, cfg)).tolist() == [int(np.flatnonzero(pl.source == bit)[0])]


def test_packed_arguments_are_checked():
    eng = VectorEngine("classic", batch_size=2)
    eng.reset(seed=0)
    with pytest.raises(TypeError, match=r"\(2, 555\) uint8"):
        eng.observe(out=np.zeros((2, 555), np.int8), packed=True)
    with pytest.raises(TypeError, match=r"\(2, 2628\) int8"):
        eng.observe(out=np.zeros((2, 2628), np.uint8))
    with pytest.raises(TypeError, match=r"\(\.\.\., 555\) uint8"):
        unpack(np.zeros((2, 2628), np.int8), eng.config)


def test_actor_observation_is_the_default_and_only_the_actor_is_to_act(positions):
    to_act = next(p for p in layout(RulesConfig()) if p.name == "to_act").offset
    for pos in positions:
        flags = pos.live[:, to_act]
        if pos.live_actor >= 0:
            assert np.array_equal(pos.live_default, pos.live[pos.live_actor])
            assert flags.tolist() == [int(p == pos.live_actor) for p in range(pos.P)]
        else:  # over: the default is the player whose turn it was, and nobody is to act
            assert np.array_equal(pos.live_default, pos.live[pos.snap["current"]])
            assert not flags.any()


def test_seat_pieces_rotate_with_the_observer(positions):
    for pos in positions[::7]:
        eng = imported(pos)
        P = pos.P
        obs = split(eng.observe(player=np.arange(P), idx=np.zeros(P, np.int64)), pos.cfg)
        sizes = np.bincount(eng.owner[0][eng.owner[0] >= 0], minlength=P)
        for p in range(P):
            order = [(p + j) % P for j in range(P)]
            assert obs["eliminated"][p, :P].tolist() == eng.eliminated[0, order].astype(int).tolist()
            assert obs["hand_size"][p, :P].tolist() == sizes[order].tolist()
            assert not obs["eliminated"][p, P:].any() and not obs["hand_size"][p, P:].any()
            assert obs["seat_present"][p].tolist() == [1] * P + [0] * (MAX_PLAYERS - P)
            assert obs["current_seat"][p].argmax() == (eng.current[0] - p) % P
            for j in range(P):  # what p sees at seat j, seat (p + j) sees at seat 0
                q = (p + j) % P
                assert obs["hand_size"][p, j] == obs["hand_size"][q, 0]
                assert obs["eliminated"][p, j] == obs["eliminated"][q, 0]
                assert np.array_equal(obs["named_count"][p, j], obs["named_count"][q, 0])
                assert np.array_equal(obs["shown_to_me"][p, j], obs["i_showed"][q, (p - q) % P])


def test_envelope_known_only_after_the_observer_accused(positions):
    seen_known = 0
    for pos in positions:
        obs = split(pos.live, pos.cfg)
        env = sorted(card_id(c) for c in pos.snap["envelope"])
        for p in range(pos.P):
            known = np.flatnonzero(obs["envelope_known"][p]).tolist()
            if p in accusers(pos.snap):
                assert known == env
                seen_known += 1
            else:
                assert known == []
    assert seen_known >= 10


def test_hist_card_seen_only_for_suggestions_the_observer_made_or_refuted(positions):
    seen = 0
    for pos in positions:
        obs = split(pos.live, pos.cfg)
        for p in range(pos.P):
            own = obs["hist_player"][p, :, 0] == 1
            refuted = obs["hist_refuted"][p, :, 0] == 1
            cards = obs["hist_card_seen"][p]
            assert not cards[~(own | refuted)].any()
            assert (cards.sum(1)[refuted & ~own] == 1).all()  # a refuter sees only the card it showed
            assert np.array_equal(cards[own].sum(1), obs["hist_refuted"][p][own].sum(1))  # the suggester all
            assert (cards <= obs["hist_cards"][p]).all()
            seen += int(cards.any())
    assert seen >= 50


def test_pending_cards_only_while_refuting(positions):
    for pos in positions:
        obs = split(pos.live, pos.cfg)
        if pos.snap["phase"] == "refute":
            last = pos.snap["history"][-1]
            assert (obs["pending_cards"].sum(1) == 3).all()
            assert np.array_equal(np.flatnonzero(obs["pending_cards"][0]), sorted(named_ids(last)))
            assert np.array_equal(obs["pending_cards"], obs["hist_cards"][:, 0])
            assert [obs["pending_suggester"][p].argmax() for p in range(pos.P)] == [
                (last["player"] - p) % pos.P for p in range(pos.P)
            ]
        else:
            assert not obs["pending_cards"].any() and not obs["pending_suggester"].any()


# ================================================== information hiding
def _assert_hidden(pos: Position, edited: dict[str, Any], hidden: set[int], known: set[int], what: str) -> None:
    """Seats in ``hidden`` see exactly the same observation; seats in ``known`` see a different one."""
    base = pos.base
    new = observe_all(pos.cfg, edited)
    for p in sorted(hidden):
        if not np.array_equal(base[p], new[p]):
            a, b = split(base[p], pos.cfg), split(new[p], pos.cfg)
            leaked = [name for name in a if not np.array_equal(a[name], b[name])]
            raise AssertionError(f"LEAK: seat {p} can tell {what} apart, through pieces {leaked}")
    for p in sorted(known):
        assert not np.array_equal(base[p], new[p]), f"seat {p} should see {what}, but its observation is the same"


def _never_named(snap: dict[str, Any]) -> set[int]:
    named = set()
    for rec in snap["history"]:
        named.update(named_ids(rec))
    return set(range(NUM_CARDS)) - named


def test_a_swapping_cards_between_other_holders_is_invisible(positions):
    """(a) Swap two cards between two holders (hands, or a hand and the envelope): only they can tell."""
    rng = np.random.default_rng(1)
    count = {"never named": 0, "named": 0, "envelope": 0}
    for pos in positions:
        holder = holders(pos.snap)
        cons = constraints(pos.snap)
        assert consistent(cons, holder), "the engine's own history contradicts its hands"
        free = _never_named(pos.snap)
        swaps = []
        for x in range(NUM_CARDS):
            for y in range(x + 1, NUM_CARDS):
                hx, hy = holder[x], holder[y]
                if hx == hy or (-1 in (hx, hy) and card_category(x) != card_category(y)):
                    continue
                h2 = holder.copy()
                h2[x], h2[y] = hy, hx
                if consistent(cons, h2):
                    swaps.append((x, y, h2))
        never = [s for s in swaps if s[0] in free and s[1] in free]
        named = [s for s in swaps if not (s[0] in free and s[1] in free)]
        for kind, group in (("never named", never), ("named", named)):
            if not group:
                continue
            x, y, h2 = group[rng.integers(len(group))]
            touched = {int(holder[x]), int(holder[y])} - {-1}
            knows = touched | (accusers(pos.snap) if -1 in (holder[x], holder[y]) else set())
            what = f"{CARD_NAMES[x]} <-> {CARD_NAMES[y]} (holders {holder[x]}, {holder[y]})"
            _assert_hidden(pos, with_holders(pos.snap, h2), set(range(pos.P)) - knows, knows, what)
            count[kind] += 1
            count["envelope"] += -1 in (holder[x], holder[y])
    assert count["never named"] >= 50 and count["named"] >= 100 and count["envelope"] >= 20, count


def test_b_the_card_shown_in_others_suggestions_is_invisible(positions):
    """(b) Change the card a refuter showed (giving it that card if needed): only the two of them can tell."""
    rng = np.random.default_rng(2)
    count = {"held": 0, "given": 0, "outside window": 0}
    for pos in positions:
        holder = holders(pos.snap)
        history = pos.snap["history"]
        cons = constraints(pos.snap)
        edits: dict[str, list] = {"held": [], "given": []}
        n_hold = -1  # index of the current (refuter, shown card) in cons.holds
        for h, rec in enumerate(history):
            if rec["type"] != "suggestion":
                continue
            for i, (r, shown) in enumerate(zip(rec["refuted_by"], rec["shown"], strict=True)):
                n_hold += 1
                x = card_id(shown)
                for y in named_ids(rec):
                    q = int(holder[y])
                    if y == x or q < 0:
                        continue
                    h2 = holder.copy()
                    h2[x], h2[y] = holder[y], holder[x]  # q == r: nothing moves; else r gets y and q gets x
                    cons.holds[n_hold] = (r, y)
                    if consistent(cons, h2):
                        edits["held" if q == r else "given"].append((h, i, rec["player"], r, q, x, y, h2))
                    cons.holds[n_hold] = (r, x)
        for kind, group in edits.items():
            if not group:
                continue
            h, i, s, r, q, x, y, h2 = group[rng.integers(len(group))]
            snap2 = with_holders(pos.snap, h2)
            snap2["history"][h]["shown"][i] = CARD_NAMES[y]
            assert consistent(constraints(snap2), h2)
            in_window = window_index(pos.snap, h) < K
            known = {q} if q != r else set()
            for p, to, by in ((s, s, r), (r, s, r)):  # the suggester and the refuter saw the card
                before = {card_id(c) for rec in history if rec["type"] == "suggestion" and rec["player"] == to
                          for q2, c in zip(rec["refuted_by"], rec["shown"], strict=True) if q2 == by}  # fmt: skip
                after = {card_id(c) for rec in snap2["history"] if rec["type"] == "suggestion" and rec["player"] == to
                         for q2, c in zip(rec["refuted_by"], rec["shown"], strict=True) if q2 == by}  # fmt: skip
                if in_window or before != after:
                    known.add(p)
            hidden = set(range(pos.P)) - known  # the two of them too, when the window and summaries hide it
            what = f"record {h}: seat {r} showed {CARD_NAMES[x]} or {CARD_NAMES[y]} to seat {s}"
            _assert_hidden(pos, snap2, hidden, known, what)
            count[kind] += 1
            count["outside window"] += not in_window
    assert count["held"] >= 50 and count["given"] >= 30 and count["outside window"] >= 30, count


def test_c_the_envelope_is_invisible_until_one_accuses(positions):
    """(c) Another solution consistent with the history: only the hands it touches and the accusers can tell."""
    rng = np.random.default_rng(3)
    count = 0
    for pos in positions:
        holder = holders(pos.snap)
        cons = constraints(pos.snap)
        env = np.flatnonzero(holder == -1)
        for _ in range(40):
            cats = [c for c in range(3) if rng.random() < 0.6] or [int(rng.integers(3))]
            h2 = holder.copy()
            for cat in cats:
                pool = [c for c in range(NUM_CARDS) if card_category(c) == cat and holder[c] >= 0]
                y = pool[rng.integers(len(pool))]
                h2[env[cat]], h2[y] = holder[y], -1
            if consistent(cons, h2):
                break
        else:
            continue
        touched = {int(holder[c]) for c in range(NUM_CARDS) if h2[c] != holder[c]} - {-1}
        knows = touched | accusers(pos.snap)
        what = f"envelope {[CARD_NAMES[c] for c in env]} or {[CARD_NAMES[c] for c in np.flatnonzero(h2 == -1)]}"
        _assert_hidden(pos, with_holders(pos.snap, h2), set(range(pos.P)) - knows, knows, what)
        count += 1
    assert count >= 100


def test_public_changes_are_visible_to_everyone(positions):
    """A token, a weapon or a public refutation outcome changed: every seat's observation changes."""
    rng = np.random.default_rng(4)
    count = {"token": 0, "weapon": 0, "outcome": 0}
    for pos in positions:
        everyone = set(range(pos.P))
        snap = pos.snap
        if pos.cfg.has_board:
            s = int(rng.integers(NUM_SUSPECTS))
            if s != snap["current"]:
                where = loc_from_json(snap["suspects"][SUSPECTS[s]])
                room = int(rng.choice([r for r in range(NUM_ROOMS) if ROOM_LOC0 + r != where]))
                snap2 = copy.deepcopy(snap)
                snap2["suspects"][SUSPECTS[s]] = loc_to_json(ROOM_LOC0 + room)
                _assert_hidden(pos, snap2, set(), everyone, f"{SUSPECTS[s]} moved to the {ROOMS[room]}")
                count["token"] += 1
            w = int(rng.integers(NUM_WEAPONS))
            room = int(rng.choice([r for r in range(NUM_ROOMS) if ROOMS[r] != snap["weapons"][WEAPONS[w]]]))
            snap2 = copy.deepcopy(snap)
            snap2["weapons"][WEAPONS[w]] = ROOMS[room]
            _assert_hidden(pos, snap2, set(), everyone, f"the {WEAPONS[w]} moved to the {ROOMS[room]}")
            count["weapon"] += 1
        # A refutation recorded as a pass instead (the record alone changes; the observation reads the record).
        last = len(snap["history"]) - (snap["phase"] == "refute")
        refuted = [h for h in range(last) if snap["history"][h]["type"] == "suggestion" and snap["history"][h]["shown"]]
        if refuted:
            h = refuted[rng.integers(len(refuted))]
            snap2 = copy.deepcopy(snap)
            rec = snap2["history"][h]
            r = rec["refuted_by"].pop(0)
            rec["shown"].pop(0)
            rec["passed"].append(r)
            _assert_hidden(pos, snap2, set(), everyone, f"seat {r} refuted or passed record {h}")
            count["outcome"] += 1
    assert count["token"] >= 50 and count["weapon"] >= 80 and count["outcome"] >= 100, count


def test_own_hand_and_cards_shown_to_me_are_visible(positions):
    """Swapping one of my cards for another player's, or changing a card shown to me, changes what I see."""
    rng = np.random.default_rng(5)
    count = {"hand": 0, "consistent": 0, "shown to me": 0}
    for pos in positions:
        holder = holders(pos.snap)
        cons = constraints(pos.snap)
        p = int(rng.integers(pos.P))
        swaps = []  # my card x for another player's card y, consistent with the history if possible
        for x in np.flatnonzero(holder == p):
            for y in np.flatnonzero((holder >= 0) & (holder != p)):
                h2 = holder.copy()
                h2[x], h2[y] = holder[y], p
                swaps.append((consistent(cons, h2), x, y, h2))
        found = any(s[0] for s in swaps)
        ok = [s for s in swaps if s[0]] if found else swaps
        _, x, y, h2 = ok[rng.integers(len(ok))]
        what = f"seat {p} holding {CARD_NAMES[x]} or {CARD_NAMES[y]}"
        _assert_hidden(pos, with_holders(pos.snap, h2), set(range(pos.P)) - {p, int(holder[y])}, {p}, what)
        count["hand"] += 1
        count["consistent"] += found
        # The latest suggestion answered with a card, seen by its suggester and refuter (the record alone changes).
        history = pos.snap["history"]
        answered = [h for h, rec in enumerate(history) if rec["type"] == "suggestion" and rec["shown"]]
        if answered and window_index(pos.snap, answered[-1]) < K:
            h = answered[-1]
            snap2 = copy.deepcopy(pos.snap)
            rec = snap2["history"][h]
            y = next(c for c in named_ids(rec) if c != card_id(rec["shown"][0]))
            rec["shown"][0] = CARD_NAMES[y]
            s, r = rec["player"], rec["refuted_by"][0]
            _assert_hidden(pos, snap2, set(), {s, r}, f"the card seat {r} showed seat {s} in record {h}")
            count["shown to me"] += 1
    assert count["hand"] >= 200 and count["consistent"] >= 100 and count["shown to me"] >= 50, count
