"""The vectorized engine's state: named numpy arrays with a batch dimension, and the constant tables.

Three small ``NamedTuple`` types carry everything the compiled kernels (:mod:`cluedo_env.engine.kernels`,
:mod:`cluedo_env.engine.observation`) read and write, so a kernel takes three arguments instead of forty:

* :class:`State`: every per-game array (batch first, documented below); the engine owns one and
  exposes each array as an attribute (``eng.pos``, ``eng.phase`` ...), the very same buffers.
* :class:`Rules`: the rules config as plain integers (flags as 0/1).
* :class:`Tables`: the board and action tables shared by every game (exits, doors, passages, the
  legal triple sets).

State arrays (B = batch size, P = players, H = max_turns + P + HISTORY_SLACK history records):

================  ===============  =========================================================
name              shape, dtype     meaning
================  ===============  =========================================================
pos               (B, 6) int16     location of each suspect token (board.py numbering); 0 without a board
weapon_room       (B, 6) int8      room of each weapon; 0 without a board
owner             (B, 21) int8     seat holding each card, -1 for the envelope
hand_size         (B, P) int8      cards in each seat's hand (public, fixed by the deal)
envelope          (B, 3) int8      the solution as card ids (suspect, weapon, room)
phase             (B,) int8        actions.START .. actions.OVER
current           (B,) int8        seat whose turn it is
refuter           (B,) int8        seat that must show a card (phase REFUTE), else -1
roll              (B,) int8        this turn's roll, 0 before rolling
turn_count        (B,) int32       completed turns (R-E3)
eliminated        (B, P) bool      made a wrong accusation (R-A4)
dragged           (B, P) bool      moved by another's suggestion since own last turn (R-T3)
winner            (B,) int8        winning seat, -1 if none (yet)
terminated        (B,) bool        the game ended with a win or R-E4
truncated         (B,) bool        the game was cut at max_turns (R-E3)
rewards           (B, P) float32   rewards of the last step; a finished game keeps its result
last_roll         (B,) int8        dice rolled in the last step, 0 if that step was no ROLL
hist_len          (B,) int16       number of history records
hist_kind         (B, H) int8      0 none, 1 suggestion, 2 accusation
hist_player       (B, H) int8      suggester or accuser
hist_triple       (B, H, 3) int8   suspect, weapon, room indices
hist_correct      (B, H) bool      accusation was right (False for suggestions)
hist_response     (B, H, P) int8   per seat for a suggestion: -1 not asked (yet), -2 could not
                                   refute, c >= 0 showed card c (seen by suggester and refuter only)
seen              (B, P, P) int32  bit c of seen[b, to, by]: seat ``by`` showed card c to seat ``to``
passed_on         (B, P) int32     bit c: the seat could not refute a suggestion naming card c (public)
refuted_on        (B, P, 21) int8  times the seat showed a card for a suggestion naming it (public, capped)
named_count       (B, P, 21) int8  times the seat named the card in its suggestions (public, capped)
accused_at        (B, P) int16     history index of the seat's accusation, -1 if none (R-A6)
mask              (B, 870) bool    legal actions of each game's actor (see below)
n_special         (B,) int16       legal actions among ROLL, PASSAGE, STAY, END_TURN
n_move            (B,) int16       legal MOVE destinations (phase MOVE)
n_show            (B,) int16       legal SHOWs (phase REFUTE)
suggest_set       (B,) int8        triple-set id of the legal SUGGESTs (-1 none, 0..8 that room, 9 all)
accuse_set        (B,) int8        triple-set id of the legal ACCUSEs
mask_sets         (B, 2) int8      triple-set ids currently written in the mask's SUGGEST and ACCUSE
                                   blocks, so a change of phase rewrites only the blocks that changed
chance            (B,) uint64      per-game random stream of the game's chance (deal, weapons, dice)
sampler           (B,) uint64      per-game random stream of the engine's own random players
================  ===============  =========================================================

``seen`` .. ``accused_at`` summarise the history and are kept up to date event by event, so an
observation never scans the history. The mask is always current: the kernels write its
ROLL..END_TURN, MOVE and SHOW blocks directly, and its two triple blocks (648 of the 870 slots)
from ``suggest_set`` and ``accuse_set`` only where those changed (``mask_sets``).

Each game draws its chance from its own stream (a SplitMix64 counter per game), so a game's deal
and dice depend only on its seed, not on the other games of the batch or on the players' choices
of random actions (which come from ``sampler``).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from cluedo_env.engine.movement import exits
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS, Board
from cluedo_env.rules.cards import NUM_CARDS, NUM_ROOMS, NUM_SUSPECTS, NUM_WEAPONS
from cluedo_env.rules.config import RulesConfig

# History records and responses.
NOT_ASKED, PASSED = -1, -2
HIDDEN = -3  # in a seat's view of a response (engine/views.py): a card was shown that this seat did not see
SUGGESTION, ACCUSATION = 1, 2
# A game records at most one suggestion a turn and one accusation a player, so max_turns + P
# records always suffice; the slack lets hand-made positions (tests, analysis) that put a few
# suggestions in one turn be imported and played on (VectorEngine.import_game checks the bound).
HISTORY_SLACK = 16
# Triple-set ids of the legal SUGGEST / ACCUSE blocks: -1 none, 0..8 that room's 36 triples, 9 all.
NO_TRIPLES = -1
ALL_TRIPLES = NUM_ROOMS


class State(NamedTuple):
    """Every per-game array of a batch; shapes and meanings in the module docstring."""

    pos: np.ndarray
    weapon_room: np.ndarray
    owner: np.ndarray
    hand_size: np.ndarray
    envelope: np.ndarray
    phase: np.ndarray
    current: np.ndarray
    refuter: np.ndarray
    roll: np.ndarray
    turn_count: np.ndarray
    eliminated: np.ndarray
    dragged: np.ndarray
    winner: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    rewards: np.ndarray
    last_roll: np.ndarray
    hist_len: np.ndarray
    hist_kind: np.ndarray
    hist_player: np.ndarray
    hist_triple: np.ndarray
    hist_correct: np.ndarray
    hist_response: np.ndarray
    seen: np.ndarray
    passed_on: np.ndarray
    refuted_on: np.ndarray
    named_count: np.ndarray
    accused_at: np.ndarray
    mask: np.ndarray
    n_special: np.ndarray
    n_move: np.ndarray
    n_show: np.ndarray
    suggest_set: np.ndarray
    accuse_set: np.ndarray
    mask_sets: np.ndarray
    chance: np.ndarray
    sampler: np.ndarray


def check_batch_size(B: int, P: int, H: int) -> None:
    """Refuse a batch whose state would not fit in this machine's memory, saying how much it would take."""
    from cluedo_env.errors import CluedoError

    per_game = sum(a.nbytes for a in new_state(1, P, H))
    need = per_game * B
    try:
        have = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows): only the absurd is refused
        have = 1 << 40
    if need > have:
        raise CluedoError(
            f"batch_size={B} would take {_size(need)} for the game states alone ({per_game} bytes a game), "
            f"more than this machine's {_size(have)} of memory (choose a smaller batch)"
        )


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def new_state(B: int, P: int, H: int) -> State:
    """Zeroed arrays for B games of P players with room for H history records (all games OVER)."""
    return State(
        pos=np.zeros((B, NUM_SUSPECTS), np.int16),
        weapon_room=np.zeros((B, NUM_WEAPONS), np.int8),
        owner=np.zeros((B, NUM_CARDS), np.int8),
        hand_size=np.zeros((B, P), np.int8),
        envelope=np.zeros((B, 3), np.int8),
        phase=np.full(B, A.OVER, np.int8),
        current=np.zeros(B, np.int8),
        refuter=np.full(B, -1, np.int8),
        roll=np.zeros(B, np.int8),
        turn_count=np.zeros(B, np.int32),
        eliminated=np.zeros((B, P), bool),
        dragged=np.zeros((B, P), bool),
        winner=np.full(B, -1, np.int8),
        terminated=np.zeros(B, bool),
        truncated=np.zeros(B, bool),
        rewards=np.zeros((B, P), np.float32),
        last_roll=np.zeros(B, np.int8),
        hist_len=np.zeros(B, np.int16),
        hist_kind=np.zeros((B, H), np.int8),
        hist_player=np.zeros((B, H), np.int8),
        hist_triple=np.zeros((B, H, 3), np.int8),
        hist_correct=np.zeros((B, H), bool),
        hist_response=np.full((B, H, P), NOT_ASKED, np.int8),
        seen=np.zeros((B, P, P), np.int32),
        passed_on=np.zeros((B, P), np.int32),
        refuted_on=np.zeros((B, P, NUM_CARDS), np.int8),
        named_count=np.zeros((B, P, NUM_CARDS), np.int8),
        accused_at=np.full((B, P), -1, np.int16),
        mask=np.zeros((B, A.NUM_ACTIONS), bool),
        n_special=np.zeros(B, np.int16),
        n_move=np.zeros(B, np.int16),
        n_show=np.zeros(B, np.int16),
        suggest_set=np.full(B, NO_TRIPLES, np.int8),
        accuse_set=np.full(B, NO_TRIPLES, np.int8),
        mask_sets=np.full((B, 2), NO_TRIPLES, np.int8),
        chance=np.zeros(B, np.uint64),
        sampler=np.zeros(B, np.uint64),
    )


class Rules(NamedTuple):
    """A :class:`RulesConfig` as integers, for the kernels (flags are 0/1)."""

    players: int
    has_board: int
    dice: int
    optional_suggestion: int  # R-G2 variant
    refute_all: int  # R-G6 variant
    accuse_after_suggestion: int  # R-G8
    accusation_in_room: int  # R-A1 variant
    last_standing_wins: int  # R-E2
    max_turns: int  # R-E3
    history: int  # H, records a game can hold


def history_capacity(config: RulesConfig) -> int:
    """H: the history records a game of ``config`` can hold."""
    return config.max_turns + config.players + HISTORY_SLACK


def rules_of(config: RulesConfig) -> Rules:
    return Rules(
        players=config.players,
        has_board=int(config.has_board),
        dice=config.dice,
        optional_suggestion=int(config.suggestion_on_entry == "optional"),
        refute_all=int(config.refutation == "all"),
        accuse_after_suggestion=int(config.accuse_after_suggestion),
        accusation_in_room=int(config.accusation_in_room),
        last_standing_wins=int(config.last_standing == "wins"),
        max_turns=config.max_turns,
        history=history_capacity(config),
    )


class Tables(NamedTuple):
    """Constant tables shared by every game."""

    exits: np.ndarray  # (197, 4) int16: first squares a token at each location may step onto, -1 padded
    front_room: np.ndarray  # (197,) int16: room whose door a square is in front of, -1 if none
    passage: np.ndarray  # (197,) int16: location the secret passage leads to, -1 if none (R-T2)
    starts: np.ndarray  # (6,) int16: start square of each suspect token (R-S2)
    triple_sets: np.ndarray  # (11, 324) bool: triple-set id + 1 -> allowed triples
    triple_count: np.ndarray  # (11,) int64: triples in each set


def triple_sets() -> np.ndarray:
    """(11, 324) bool: row ``id + 1`` lists the triples of triple-set ``id`` (-1 none, room 0..8, 9 all)."""
    sets = np.zeros((NUM_ROOMS + 2, A.NUM_TRIPLES), bool)
    for room in range(NUM_ROOMS):
        sets[room + 1, [A.triple_index(s, w, room) for s in range(NUM_SUSPECTS) for w in range(NUM_WEAPONS)]] = True
    sets[NUM_ROOMS + 1] = True
    return sets


def tables_of(board: Board) -> Tables:
    front_room = np.full(NUM_LOCATIONS, -1, np.int16)
    for sq, room in board.front_room.items():
        front_room[sq] = room
    passage = board.passage.copy()
    sets = triple_sets()
    return Tables(
        exits=exits(board),  # R-M5: a room is left by the squares in front of its doors
        front_room=front_room,
        passage=passage,
        starts=np.array(board.starts, np.int16),
        triple_sets=sets,
        triple_count=sets.sum(axis=1).astype(np.int64),
    )
