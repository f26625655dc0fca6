"""The named tuples of arrays the deducer's compiled decision takes: its view of the games, options, caches, scratch.

Why tuples: :func:`cluedo_env.agents.players.deducer_decisions.deducer_decisions_kernel` decides a whole action in one
call
and reads some eighty arrays and options; grouped by what they are, they are a dozen arguments that numba takes
as named tuples (fields read inside the kernels at no cost). The deducer keeps each tuple of arrays it owns
(rebuilt only when the arrays are reallocated), so every call passes the same types, as
:class:`cluedo_env.agents.compiled.EntryPoint` requires. The notebook's side is
:class:`cluedo_env.agents.knowledge.types.Book`; the
opponent models' options :class:`cluedo_env.agents.knowledge.types.Assumptions`.

Shapes: B games of the batch, n games deciding now (cap >= n rows of scratch), H holders (P players, then the
envelope), K clause slots, T triples per suggestion, k the longer candidate shortlist (+ 1), L = 197 locations.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from cluedo_env.agents.knowledge.facts import FactBits
from cluedo_env.agents.knowledge.types import AssumedScratch


class RefuteScratch(NamedTuple):
    """Scratch of :func:`cluedo_env.agents.players.refutation.refute_kernel`, one game."""

    prob: np.ndarray
    """(1, H, 21) float64: the suggester's row of the marginals."""
    w: np.ndarray
    """(H, 21) float64: the marginals' weights."""
    hb: np.ndarray
    """(1, H) int64: the game's cards held, as bitmasks."""
    nb: np.ndarray
    """(1, H) int64: the game's cards not held, as bitmasks."""


class NaiveScratch(NamedTuple):
    """One game's scratch of :func:`cluedo_env.agents.players.deducer_decisions.naive_probabilities_kernel`."""

    bits: FactBits
    """The game's facts with the assumed ones, one row (int64 holders)."""
    assumed: AssumedScratch
    """:func:`cluedo_env.agents.knowledge.opponent_model.assumed_bits_kernel`'s scratch (its ``clh1`` is
    ``bits.cl_holder``)."""
    used: np.ndarray
    """(1,) bool: the assumed facts added something and hold together."""
    model: np.ndarray
    """(1, H, 21) float64: the marginals of the assumed facts."""
    own: np.ndarray
    """(1, H, 21) float64: the marginals of the notebook's own facts."""
    w: np.ndarray
    """(H, 21) float64: the marginals' weights."""


class DecisionView(NamedTuple):
    """What the deducer's decision reads of the games (the view's arrays)."""

    phase: np.ndarray
    """(B,) int: each game's phase."""
    mask: np.ndarray
    """(n, 870) bool: the legal actions of the games deciding."""
    current: np.ndarray
    """(B,) int: whose turn it is (whose suggestion a refutation answers)."""
    turn_count: np.ndarray
    """(B,) int: turns played."""
    pos: np.ndarray
    """(B, P) int: each seat's square."""


class DecisionOptions(NamedTuple):
    """The deducer's options, as one decision reads them."""

    late_turns: float
    """The naive-player model applies from this turn count on."""
    mix: float
    """Weight of the model's marginals against the notebook's own (>= 1: the model's alone)."""
    refute_all: bool
    """Every seat refutes in turn (the ``refutation="all"`` preset), not only the first who can."""
    shortlist: int
    """Candidate cards per category of a suggestion (the board-less game)."""
    room_shortlist: int
    """Candidate cards per category of the room values."""
    plan_moves: bool
    """Choose START and MOVE actions on the empty board's tables (else left to the Python planner)."""


class DecisionCaches(NamedTuple):
    """The deducer's caches that a decision reads and fills."""

    prob: np.ndarray
    """(B, H, 21) float64: holder probabilities of each game."""
    pver: np.ndarray
    """(B,) int64: the notebook version ``prob`` was computed at."""
    pstamp: np.ndarray
    """(B,) int64: the key (naive model on or not) ``prob`` was computed at."""
    rv: np.ndarray
    """(B, 9) float64: room values of the current turn."""
    rv_turn: np.ndarray
    """(B,) int64: the turn ``rv`` was computed in."""


class SuggestionRows(NamedTuple):
    """Per-game rows the suggestion choice reads (rows of cached arrays, read only)."""

    order: np.ndarray
    """(>= n, P - 1) int64: the seats asked in turn after this one."""
    every_s: np.ndarray
    """(>= n, 6) int64: every suspect card (the board's suggestions)."""
    every_w: np.ndarray
    """(>= n, 6) int64: every weapon card."""


class MoveTables(NamedTuple):
    """The empty board's movement tables (:func:`cluedo_env.agents.planning.movement.empty_board_tables`)."""

    passage: np.ndarray
    """(197,) int: the room location a secret passage leads to, -1: none."""
    S: np.ndarray
    """(197, 9) float64: expected turns to enter each room, the passage first."""
    S_roll: np.ndarray
    """(197, 9) float64: expected turns to enter each room, rolling."""
    tie: float
    """Scores within this of the best are tied."""


class Decided(NamedTuple):
    """What a decision writes: the actions and the rows left to Python."""

    out: np.ndarray
    """(n,) int64: the action of each game (-1: left to the Python planner)."""
    rows: np.ndarray
    """(3, n) int64: the rows by kind (refutations, suggestions, START and MOVE), in order."""
    counts: np.ndarray
    """(3,) int64: the number of rows of each kind."""


class DecisionScratch(NamedTuple):
    """Scratch of :func:`cluedo_env.agents.players.deducer_decisions.deducer_decisions_kernel`, cap rows; the kernel
    reads only
    what it wrote in the same call."""

    ph: np.ndarray
    """(cap,) int8: the games' phases (the view's dtype: the phase kernels then have one compiled version, for the
    kernel's calls and Python's)."""
    accuse: np.ndarray
    """(cap,) int64: the proved accusation of each game, -1: none."""
    sub: np.ndarray
    """(cap,) int64: games (or squares) of the rows of one kind."""
    msub: np.ndarray
    """(cap, 870) bool: their masks (the refutations' rows; the parts of the suggestions' and moves' masks the
    kernels read go into C-contiguous blocks of its memory)."""
    sub2: np.ndarray
    """(cap,) int64: a second value per row (suggester, model key, passage)."""
    prows: np.ndarray
    """(cap, H, 21) float64: the rows' probabilities."""
    draws: np.ndarray
    """(2 * 21 * cap,) float64: uniform numbers of the shortlists."""
    noise: np.ndarray
    """(cap * max(T, L),) float64: tie-break numbers, as a C-contiguous (rows, T) block."""
    cand: np.ndarray
    """(3 * cap * k,) int64: candidate cards, as a C-contiguous (3, rows, k) block (category by category)."""
    best: np.ndarray
    """(cap,) int64: the choice of each row."""
    pre: np.ndarray
    """(3 (P - 1) + 2, 21) float64: the suggestion value's per-seat terms."""
    memo: np.ndarray
    """(2 T,) float64: the suggestion value's memo."""
    reps: np.ndarray
    """(3, max(k, 9)) int64: candidate indices."""
    value: np.ndarray
    """(cap, 9) float64: room values."""
    u: np.ndarray
    """(21,) float64: the shortlist's scores."""
    stale: np.ndarray
    """(cap,) int64: games whose probabilities are computed again."""
    refute: RefuteScratch
    """The refutation's scratch (its ``hb``, ``nb`` are ``naive.bits``')."""
    naive: NaiveScratch
    """The probabilities' scratch."""


__all__ = [
    "DecisionCaches",
    "DecisionOptions",
    "DecisionScratch",
    "DecisionView",
    "Decided",
    "MoveTables",
    "NaiveScratch",
    "RefuteScratch",
    "SuggestionRows",
]
