"""The vectorized engine: a batch of B games of Cluedo stepped at once, on compiled kernels.

The rules are those of the reference engine (:mod:`cluedo_env.engine.reference`), which is the
oracle; ``tests/test_differential.py`` plays both side by side and compares every field.
The state is a struct of numpy arrays, batch first (:mod:`cluedo_env.engine.state` documents every
array); the hot paths (transitions, legal actions, the mask, random legal play, observations)
are numba loops over the games (:mod:`cluedo_env.engine.kernels`, :func:`cluedo_env.engine.observation.encode`),
so one engine serves batch 1 (the PettingZoo env) and batch 16k (training) alike.

Usage::

    eng = VectorEngine(RulesConfig.from_preset("classic", players=4), batch_size=4096)
    eng.reset(seed=0)
    while True:
        actions = eng.sample_random_actions()          # or a policy using eng.legal_action_mask
        eng.step(actions)
        obs = eng.observe()                             # acting player's observation

Every state array is an attribute (``eng.pos``, ``eng.phase``, ``eng.hist_response`` ...); they
are updated in place, so copy what you keep. ``special``, ``move_dest`` and ``show`` are views of
the legal-action mask's ROLL..END_TURN, MOVE and SHOW blocks.

Chance: each game has its own random stream, seeded by ``reset(seed)``; a game's deal and dice
depend only on the seed and its slot, never on the other games or on the players' choices.

Threads: ``threads`` shares each deal, sample, step and observation of the batch out among threads, block by
block; since no game depends on another, the results are the same whatever the count. The default is one thread
(or ``CLUEDO_NUM_THREADS``): a second thread pays only on a quiet machine, and with another busy process beside it
made the engine slower than one thread. One engine serves one Python thread at a time: calls from several are
taken in turn (a lock), never interleaved.
Observations come as int8 rows (``observe()``) or as the same information in bits (``observe(packed=True)``,
a fifth of the bytes; :func:`cluedo_env.engine.observation.unpack` gives the int8 rows back).

Compilation: the kernels are compiled on first use and cached on disk (``cache=True``), so only
the first process after an install pays for it; ``scripts/bench.py`` reports both times.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections.abc import Callable
from functools import cached_property
from typing import Any, NamedTuple

import numba
import numpy as np

from cluedo_env.checks import check_seed, is_int
from cluedo_env.engine import compile_ahead
from cluedo_env.engine import kernels as K
from cluedo_env.engine import thread_jobs as J
from cluedo_env.engine.compile_ahead import signature_of, usable_cores
from cluedo_env.engine.crew import Crew
from cluedo_env.engine.history import Accusation, Suggestion
from cluedo_env.engine.intrinsics import kernel_address, line_aligned_words
from cluedo_env.engine.movement import move_tables, with_scratch
from cluedo_env.engine.observation import encode, offsets, packed_layout, size
from cluedo_env.engine.snapshot import SnapshotError
from cluedo_env.engine.state import (
    ACCUSATION,
    ALL_TRIPLES,
    HISTORY_SLACK,
    NO_TRIPLES,
    NOT_ASKED,
    PASSED,
    SUGGESTION,
    State,
    check_batch_size,
    history_capacity,
    new_state,
    rules_of,
    tables_of,
)
from cluedo_env.errors import CluedoError, CluedoIndexError, CluedoTypeError
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS, ROOM_LOC0, load_board
from cluedo_env.rules.cards import NUM_CARDS
from cluedo_env.rules.config import RulesConfig, make_config

FULL_GAME_KEEP_ACCUSATION = 0.01  # the `full` benchmark player keeps a drawn accusation with this chance
GAMES_PER_THREAD = 2048  # threads="auto" gives each thread at least this many games: below, a thread's share is
# too small to pay for a hand-over (a step of 2048 games takes ~0.4 ms, 1-2 ms with an observation)


class StepResult(NamedTuple):
    """What one step produced, per game: copies, safe to keep."""

    rewards: np.ndarray  # (B, P) float32
    terminated: np.ndarray  # (B,) bool: the game ended in this step with a win or R-E4
    truncated: np.ndarray  # (B,) bool: the game was cut at max_turns in this step


_ENTRY_POINTS: dict[tuple, Any] = {}  # (dispatcher, argument layouts) -> compiled entry point, per process


def _layout(a: Any) -> Any:
    """What numba's type of ``a`` depends on, cheaply: an array's dtype, dimensions, layout, and its read-only and
    aligned flags; a tuple's class and elements; a Python or numpy scalar's type (anything else: numba's type)."""
    if isinstance(a, np.ndarray):
        f = a.flags
        return a.dtype.str, a.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned
    if isinstance(a, tuple):
        return type(a), tuple(_layout(x) for x in a)
    if isinstance(a, (bool, int, float, np.generic)):
        return type(a)
    return numba.typeof(a)


def _compiled(dispatcher: Any, *args: Any) -> Any:
    """The compiled entry point of ``dispatcher`` for the types of ``args``.

    Calling it skips numba's per-call type dispatch (a few microseconds for a state of ~40
    arrays, which is most of a step at batch 1). Callers must pass arguments of exactly these
    types: the engine's own arrays, and index arrays it converts to int64 first. Kept per process by the
    arguments' layouts (:func:`_layout`): typing the state and tables for the nine kernels took ~4.5 ms of each new
    engine's ~6 ms, which every evaluation (a new engine per ``play_games``) and test paid again.
    """
    key = (dispatcher, tuple(_layout(a) for a in args))
    entry = _ENTRY_POINTS.get(key)
    if entry is None:
        signature = signature_of(args)
        compile_ahead.collect(dispatcher, signature)
        entry = _ENTRY_POINTS[key] = dispatcher.compile(signature)
    return entry


THREADS_VARIABLE = "CLUEDO_NUM_THREADS"  # the default thread count of every engine: a count, or "auto"


def auto_threads(batch_size: int) -> int:
    """``threads="auto"``: one per usable core, but at least :data:`GAMES_PER_THREAD` games each."""
    return max(1, min(usable_cores(), batch_size // GAMES_PER_THREAD))


def default_threads() -> int | str:
    """The thread count of an engine made without ``threads``: ``CLUEDO_NUM_THREADS`` (a positive count or
    ``auto``) when set, else 1.

    Why one: a second thread is worth x1.7-2 on a quiet 2-core machine, but with one other busy process there it
    measured x0.84-1.08 of one thread (``scripts/bench_under_load.py``), and running experiments side by side is
    how an RL environment is used. Threads are an opt-in for a machine the caller knows to be free."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return 1
    if value == "auto":
        return value
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise CluedoError(f"{THREADS_VARIABLE}={value!r}: expected a positive integer or 'auto' (or leave it unset: "
                      "one thread)")  # fmt: skip


def _serialised(method: Callable) -> Callable:
    """``method`` under the engine's lock: calls from several Python threads are taken one at a time.

    Why: the kernels release the GIL, and a threaded engine hands each call to its workers through one job record,
    so two calls at once would interleave writes to the same games (a threaded engine's workers crashed the
    process). A call holds the lock for its whole length, so each sees the state the previous one left."""

    @functools.wraps(method)
    def one_at_a_time(self: VectorEngine, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return one_at_a_time


# What a threaded engine makes for its threads (rebuilt on load, not pickled).
_THREADS_OWN = ("_contexts", "_context_type", "_crew", "_crew_pid", "_parts", "_shared", "_lock")
_COMPILING = threading.Lock()  # one first use at a time: threads that share an engine may read an entry at once


class _OnFirstUse:
    """An entry point of a kernel that the engine's method named ``compile`` compiles (or loads) on the first read
    and leaves in the engine's ``__dict__``, where it shadows this descriptor from then on.

    Why not at construction: on an empty cache, whoever made the engine may first queue more kernels in the helper
    process that compiles some of the engine's (a player's, :meth:`cluedo_env.agents.players.base.Agent.prepare`), so
    that the
    helper never waits for them (:mod:`~cluedo_env.engine.compile_ahead`)."""

    def __init__(self, compile: str) -> None:
        self.compile = compile

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, engine: VectorEngine | None, owner: type) -> Any:
        if engine is None:
            return self
        with _COMPILING:
            if self.name not in engine.__dict__:
                getattr(engine, self.compile)()
        return engine.__dict__[self.name]


def _check_out(out: Any, shape: tuple[int, ...], dtype: type) -> None:
    """An ``out=`` array the compiled encoder can fill: a C-contiguous ndarray of ``shape`` and ``dtype``."""
    if not isinstance(out, np.ndarray) or out.dtype != dtype or out.shape != shape or not out.flags.c_contiguous:
        got = f"{out.dtype} {out.shape}{'' if out.flags.c_contiguous else ' not C-contiguous'}" if isinstance(
            out, np.ndarray) else type(out).__name__  # fmt: skip
        raise CluedoTypeError(
            f"out must be a C-contiguous {shape} {np.dtype(dtype).name} array, got {got} (or leave out=None)")


class VectorEngine:
    """B games with one rules config; see :mod:`cluedo_env.engine.state` for the state arrays."""

    def __init__(
        self,
        config: RulesConfig | str | dict | None = None,
        batch_size: int = 1,
        autoreset: bool = False,
        threads: int | str | None = None,
        observations: bool = True,
    ):
        """``threads``: how many threads step, sample, reset and observe the batch, sharing out its games block
        by block (the kernels release the GIL). Results are the same whatever the count: every game has its own
        random streams. ``"auto"``: one per usable core, with at least ``GAMES_PER_THREAD`` games each, so batches
        under 4096 use one thread. Default (None): :func:`default_threads`, one unless ``CLUEDO_NUM_THREADS`` says
        otherwise.

        ``observations``: whether the caller will encode observations (:meth:`observe`). Only how an empty numba
        cache fills depends on it: with it the encoder compiles in a helper process beside the engine's other
        kernels; without it (a runner whose players read :class:`~cluedo_env.engine.views.PlayerView`), that core
        is left to the players' kernels, and a first :meth:`observe` compiles the encoder then."""
        self.config = make_config(config)
        if not is_int(batch_size) or batch_size < 1:
            raise (CluedoError if is_int(batch_size) else CluedoTypeError)(
                f"batch_size must be a positive integer, got {batch_size!r}"
            )
        self.batch_size = int(batch_size)
        self.P = self.config.players
        self.H = history_capacity(self.config)
        check_batch_size(self.batch_size, self.P, self.H)
        self.autoreset = bool(autoreset)
        self.board = load_board()
        self.has_board = self.config.has_board
        self.rules = rules_of(self.config)
        self.tables = tables_of(self.board)
        self.moves = with_scratch(move_tables(self.config.max_roll))  # shared tables, own working memory
        self.state = new_state(self.batch_size, self.P, self.H)
        for name, array in zip(State._fields, self.state, strict=True):
            setattr(self, name, array)  # eng.pos is eng.state.pos: one buffer
        self.special = self.mask[:, : A.MOVE0]  # (B, 4) ROLL, PASSAGE, STAY, END_TURN
        self.move_dest = self.mask[:, A.MOVE0 : A.SUGGEST0]  # (B, 197) destinations (phase MOVE)
        self.show = self.mask[:, A.SHOW0 : A.ACCUSE0]  # (B, 21) legal SHOWs
        self.obs_offsets = offsets(self.config)
        self.observation_size = size(self.config)
        self.packed_layout = packed_layout(self.config)
        self.packed_observation_size = self.packed_layout.size
        self.rng = np.random.default_rng()
        self._ar = np.arange(self.batch_size, dtype=np.int64)
        self._actions = np.zeros(self.batch_size, np.int64)
        self._all_active = np.zeros(0, bool)  # empty: every game is active
        B = self.batch_size
        self._out = (np.zeros((B, self.P), np.float32), np.zeros(B, bool), np.zeros(B, bool))
        self._no_uniforms = np.zeros(0, np.float64)
        self._actor_seats = np.full(self.batch_size, -1, np.int64)  # observe(): "each game's actor"
        self._one_game = np.zeros(1, np.int64)
        self._one_seat = np.zeros(1, np.int64)
        self.work = K.new_scratch()
        self._lock = threading.RLock()  # one caller at a time (_serialised)
        self.threads = self._check_threads(default_threads() if threads is None else threads)
        self.observations = bool(observations)
        self._compile_ahead()
        self._start_threads()

    def _step_parts(self) -> tuple[tuple[Any, tuple], list[tuple[Any, tuple]]]:
        """What the step is compiled from: its move search (dispatcher, numba types) and its other parts (dispatcher,
        arguments)."""
        roll, rest = K.step_parts(self.state, self.rules, self.tables, self.moves, self.work)
        return (roll[0], signature_of(roll[1])), rest

    def _observe_args(self) -> tuple:
        """Arguments of the int8 observation encoder's types."""
        ids = np.zeros(1, np.int64)
        return self.state, self.rules, self.obs_offsets, ids, ids, np.zeros((1, self.observation_size), np.int8), False

    def _job_kernel(self, kind: int) -> tuple[Any, tuple]:
        """The kernel of a game-loop job (``thread_jobs`` kinds), and arguments of the types the engine calls it with:
        its entry point's here, and the workers' compiled loop's (:mod:`~cluedo_env.engine.thread_jobs`)."""
        s, r, t = self.state, self.rules, self.tables
        if kind == J.STEP:
            return K.apply_actions, (s, r, t, self.moves, self.work, self._actions, self._all_active, True, *self._out)
        if kind == J.NEW_GAMES:
            return K.new_games, (s, r, t, self._one_game, self.work)
        if kind == J.SAMPLE_UNIFORM:
            return K.sample_uniform, (s, t, self._no_uniforms, self._actions)
        if kind == J.SAMPLE_FULL:
            return K.sample_full_game, (s, t, 0.5, self._actions)
        if kind == J.OBSERVE:
            return encode, self._observe_args()
        return encode, (s, r, self.packed_layout.offsets, self._one_game, self._one_game,
                        np.zeros((1, self.packed_observation_size), np.uint8), True)  # fmt: skip

    def _job_entry(self, kind: int) -> Any:
        """The entry point of a game-loop job's kernel (:meth:`_job_kernel`)."""
        dispatcher, args = self._job_kernel(kind)
        return _compiled(dispatcher, *args)

    def _compile_ahead(self) -> None:
        """On an empty cache, start compiling the step's move search (and with ``observations`` the encoder) in a
        helper process now (:mod:`~cluedo_env.engine.compile_ahead`), while the caller sets up what else it needs: a
        player may queue its own kernels there before the first reset
        (``cluedo_env.agents.players.base.Agent.prepare``)."""
        ahead = [self._step_parts()[0]]
        if self.observations:
            ahead.append((encode, signature_of(self._observe_args())))
        compile_ahead.submit(ahead)

    def _compile(self) -> None:
        """Entry points of the reset and the step, for this engine's argument types (see :func:`_compiled`); the
        others are compiled on first use (the ``cached_property`` ones below)."""
        s, r, t, w = self.state, self.rules, self.tables, self.work
        roll, rest = self._step_parts()
        # While a helper compiles the move search, this process compiles the reset and the step's other parts, then
        # the step: about half the work each.
        if compile_ahead.is_pending(*roll):
            for part, args in rest:
                part.compile(signature_of(args))
        self.__dict__["_k_new"] = _compiled(K.new_games, s, r, t, np.zeros(1, np.int64), w)
        compile_ahead.collect(*roll)
        self.__dict__["_k_step"] = _compiled(K.step, s, r, t, self.moves, w, self._actions, self._all_active, True,
                                             *self._out)  # fmt: skip

    def _compile_encoder(self) -> None:
        """The int8 observation encoder's entry point (collected from the helper where one compiles it)."""
        args = self._observe_args()
        compile_ahead.collect(encode, signature_of(args))
        self.__dict__["_k_obs"] = _compiled(encode, *args)

    def _check_threads(self, threads: Any) -> int:
        if threads == "auto":
            return auto_threads(self.batch_size)
        if not is_int(threads) or threads < 1:
            raise (CluedoError if is_int(threads) else CluedoTypeError)(
                f"threads must be a positive integer or 'auto', got {threads!r}"
            )
        return min(int(threads), self.batch_size)

    def _start_threads(self) -> None:
        """Cut the batch into blocks (:func:`~cluedo_env.engine.thread_jobs.block_bounds`), give each thread its
        working memory and its context in memory, and start the workers."""
        self._crew = None
        if self.threads == 1:
            return
        blocks, homes = J.block_bounds(self.batch_size, self.threads)
        self._shared = J.Shared(
            line_aligned_words(J.job_words(self.threads)), np.zeros(J.KINDS, np.int64), blocks, homes,
            np.arange(np.diff(blocks).max(), dtype=np.int64), self.state, self.rules, self.tables,
            self.obs_offsets, self.packed_layout.offsets, self.observation_size, self.packed_observation_size,
            self.autoreset)  # fmt: skip
        # Each thread's (Shared, Part) in memory, read by its compiled loop from the address (memory.store_value).
        self._parts = [J.Part(with_scratch(self.moves), K.new_scratch(), t) for t in range(self.threads)]
        size = -(-int(J.context_size(self._shared, self._parts[0])) // 64) * 64
        self._contexts = np.zeros((self.threads, size), np.uint8)
        for row, part in zip(self._contexts, self._parts, strict=True):
            J.store_context(row, self._shared, part)
        self._context_type = numba.typeof((self._shared, self._parts[0]))
        self._hire()

    def _hire(self) -> None:
        """The worker threads (one fewer than ``threads``: the calling thread is the other), stopped when the
        engine is closed or collected."""
        self._crew = Crew(self.threads - 1, name="cluedo-engine")
        self._crew_pid = os.getpid()
        weakref.finalize(self, self._crew.stop)

    def _crew_here(self) -> Crew:
        """The engine's crew; hired again in a forked child, which inherits the crew but not its threads (unless the
        engine was closed: a closed engine stays closed)."""
        if self._crew_pid != os.getpid() and self._crew.workers:
            self._hire()
        return self._crew

    def _on_threads(self, kind: int) -> None:
        """The job of ``kind`` just recorded in ``self._shared.job``, shared out among this thread and the workers
        block by block, all through the compiled loop (:mod:`~cluedo_env.engine.thread_jobs`); a step's result is in
        the job's counters."""
        crew = self._crew_here()
        kernels = self._shared.kernels
        if not kernels[kind]:
            if kind in (J.STEP, J.NEW_GAMES):
                self._k_step  # noqa: B018 - the reset's and step's compile, which takes the move search from the helper
            dispatcher, args = self._job_kernel(kind)
            _compiled(dispatcher, *args)  # compiled (or loaded) here, not in a worker
            kernels[kind] = kernel_address(dispatcher, signature_of(args), J.RETURNS[kind])
        if not crew.bound:
            contexts = [(row.ctypes.data, self._context_type) for row in self._contexts]
            crew.bind(self._k_serve, contexts[1:], contexts[0])
        crew.run_compiled()

    @_serialised
    def close(self) -> None:
        """Stop the engine's worker threads (they also stop when the engine is garbage-collected)."""
        if self._crew is not None:
            self._crew.stop()

    # The entry points of the game loop: the reset and step compiled together on the first use of either.
    _k_new = _OnFirstUse("_compile")
    _k_step = _OnFirstUse("_compile")
    _k_obs = _OnFirstUse("_compile_encoder")

    # The entry points of the kernels a plain game loop does not call, compiled on first use. Why: on an empty numba
    # cache each costs seconds of compiling, which the PettingZoo env's start-up paid for kernels only snapshots, the
    # benchmark players and sample_random_actions call. A cached_property (not __getattr__, which would slow down
    # every attribute read of the engine) leaves the entry point in the instance's __dict__ after the first read.
    _k_is_legal = cached_property(lambda self: _compiled(K.is_legal_of, self.state, 0, 0))
    _k_sample = cached_property(lambda self: self._job_entry(J.SAMPLE_UNIFORM))
    _k_full = cached_property(lambda self: self._job_entry(J.SAMPLE_FULL))
    _k_legal = cached_property(lambda self: _compiled(K.update_legal_of, self.state, self.rules, self.tables, 0))
    _k_summaries = cached_property(lambda self: _compiled(K.rebuild_summaries, self.state, self.rules, 0))
    _k_dest = cached_property(lambda self: _compiled(K.destinations_of, self.state, self.moves, 0,
                                                     np.zeros(6, np.int16), self.mask[0, 4:201]))  # fmt: skip
    _k_obs_packed = cached_property(lambda self: self._job_entry(J.OBSERVE_PACKED))
    _k_serve = cached_property(lambda self: _compiled(J.serve, self._crew.words, 0, 1, 0, self._context_type))

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the arrays, not the compiled entry points or threads (rebuilt on load, from numba's cache)."""
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("_k_") and k not in _THREADS_OWN}
        for name in (*State._fields, "special", "move_dest", "show"):  # aliases of self.state
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        for name, array in zip(State._fields, self.state, strict=True):
            setattr(self, name, array)
        self.special = self.mask[:, : A.MOVE0]
        self.move_dest = self.mask[:, A.MOVE0 : A.SUGGEST0]
        self.show = self.mask[:, A.SHOW0 : A.ACCUSE0]
        self._start_threads()

    # ================================================================= reset
    @_serialised
    def reset(self, seed: int | None = None) -> None:
        """Deal new games in every slot; each slot's chance stream is seeded from ``seed``."""
        if self.threads > 1:
            self._crew_here().check_running()  # (before the streams change: a closed engine refuses, changing nothing)
        self.rng = np.random.default_rng(check_seed(seed))
        self.chance[:] = self.rng.integers(0, 2**64, size=self.batch_size, dtype=np.uint64, endpoint=False)
        self.sampler[:] = self.rng.integers(0, 2**64, size=self.batch_size, dtype=np.uint64, endpoint=False)
        if self.threads > 1:
            J.new_games_job(self._shared.job)
            self._on_threads(J.NEW_GAMES)
        else:
            self._new_games(self._ar)

    @_serialised
    def reset_games(self, idx: np.ndarray) -> None:
        """Start new games in the slots ``idx`` (e.g. finished ones); each slot's stream goes on."""
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        self._new_games(self._slots(idx))

    def _slots(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        if idx.size and (not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 or idx.max() >= self.batch_size):
            raise CluedoIndexError(f"game indices must be integers 0..{self.batch_size - 1}, got {idx.tolist()[:8]}")
        return np.ascontiguousarray(idx, np.int64).reshape(-1)

    def _new_games(self, idx: np.ndarray) -> None:
        if len(idx):
            self._k_new(self.state, self.rules, self.tables, idx, self.work)

    # ================================================================ queries

    @property
    def actor(self) -> np.ndarray:
        """(B,) int8: the seat to act in each game (the refuter while refuting); -1 when over (compiled:
        :func:`cluedo_env.engine.kernels.actors`, the rule that players' masks use too)."""
        out = np.empty(self.batch_size, np.int8)
        K.actors(self.phase, self.refuter, self.current, out)
        return out

    current_player = actor

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated

    @property
    def legal_action_mask(self) -> np.ndarray:
        """(B, 870) bool mask of the legal actions of each game's actor (all False when over).

        A read-only view of the buffer the engine keeps up to date: copy it to keep it.
        """
        view = self.mask.view()
        view.flags.writeable = False
        return view

    def legal_counts(self) -> np.ndarray:
        """(B,) number of legal actions per game."""
        count = self.tables.triple_count
        return (self.n_special + self.n_move + count[self.suggest_set + 1]
                + self.n_show + count[self.accuse_set + 1])  # fmt: skip

    @_serialised
    def sample_random_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """(B,) int64: a uniformly random legal action per game (-1 for finished games).

        Chance comes from ``rng`` when given (one uniform per game), else from each game's own
        sampler stream (seeded by ``reset``). ``step`` accepts -1 only for finished games.
        """
        out = np.empty(self.batch_size, np.int64)
        u = self._no_uniforms if rng is None else rng.random(self.batch_size)
        if self.threads > 1:
            J.sample_job(self._shared.job, u, out)
            self._on_threads(J.SAMPLE_UNIFORM)
        else:
            self._k_sample(self.state, self.tables, u, out)
        return out

    @_serialised
    def sample_full_game_actions(self, keep_accusation: float = FULL_GAME_KEEP_ACCUSATION) -> np.ndarray:
        """(B,) int64: the ``full`` benchmark player's actions (-1 for finished games).

        Uniform random legal play, except that a drawn accusation is kept only with probability
        ``keep_accusation`` (else the player ends its turn: END_TURN, or ROLL at the turn's start),
        so games run their full length (~440 decisions with 4 players) instead of ending in a few
        random accusations. Every benchmark uses it; chance from the sampler streams.
        """
        out = np.empty(self.batch_size, np.int64)
        keep = float(keep_accusation)
        if self.threads > 1:
            J.full_game_job(self._shared.job, keep, out)
            self._on_threads(J.SAMPLE_FULL)
        else:
            self._k_full(self.state, self.tables, keep, out)
        return out

    # =================================================================== step
    @_serialised
    def step(self, actions: np.ndarray, active: np.ndarray | None = None, *, copy: bool = True) -> StepResult:
        """Apply one action per game for that game's actor; return what the step produced.

        The action of a finished game (phase OVER, when not autoresetting) is ignored: pass
        -1. ``active``: an optional (B,) bool mask; games where it is False are left exactly
        as they are (their action is ignored too), e.g. while a single-agent wrapper waits for
        its learner. All or nothing: if any live game's action is illegal, IllegalActionError
        names the first one and no game changes. The returned rewards and end flags describe
        this step even when ``autoreset`` has already put a new game in a finished slot.
        The step writes them into new arrays; ``copy=False`` into the engine's own result buffers instead
        (overwritten by the next step), which saves three allocations a step where that matters (batch 1).
        """
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        if actions.shape != (self.batch_size,) or actions.dtype.kind not in "iu":
            raise A.IllegalActionError(
                f"actions must be a ({self.batch_size},) integer array, got {actions.dtype} {actions.shape}"
            )
        if active is None:
            active = self._all_active
        else:
            active = np.asarray(active)
            if active.shape != (self.batch_size,) or active.dtype != bool:
                raise CluedoTypeError(
                    f"active must be a ({self.batch_size},) bool mask, got {active.dtype} {active.shape}"
                )
            active = np.ascontiguousarray(active)
        if actions.dtype == np.int64 and actions.flags.c_contiguous:
            acts = actions
        else:
            acts = self._actions
            np.copyto(acts, actions, casting="unsafe")
            if actions.dtype.kind == "u":
                acts[actions > A.NUM_ACTIONS] = -1  # no huge unsigned value may wrap into a legal id
        B = self.batch_size
        out = (np.empty((B, self.P), np.float32), np.empty(B, bool), np.empty(B, bool)) if copy else self._out
        rewards, terminated, truncated = out
        if self.threads > 1:
            first, count = self._step_on_threads(acts, active, out)
        else:
            first, count = self._k_step(self.state, self.rules, self.tables, self.moves, self.work, acts, active,
                                        self.autoreset, rewards, terminated, truncated)  # fmt: skip
        if first >= 0:
            g = int(first)
            a = int(actions[g])
            raise A.IllegalActionError(
                f"game {g}: illegal action {A.describe(a)} (id {a}) for player "
                f"{int(self.actor[g])} in phase '{A.PHASE_NAMES[self.phase[g]]}' ({A.PHASE_HELP[self.phase[g]]}); "
                f"{int(count)} game(s) of {self.batch_size} had an illegal action; no game was changed"
            )
        return StepResult(rewards, terminated, truncated)

    def _step_on_threads(self, acts: np.ndarray, active: np.ndarray, out: tuple[np.ndarray, ...]) -> tuple[int, int]:
        """The step, shared out among the threads in one hand-over; all or nothing (:mod:`~cluedo_env.engine.
        thread_jobs`): (the first game with an illegal action, their number), or (-1, 0)."""
        job = self._shared.job
        J.step_job(job, acts, active, *out)
        self._on_threads(J.STEP)
        count = int(job[J.ILLEGAL])
        return (int(job[J.FIRST]), count) if count else (-1, 0)

    # ============================================================ observations
    @_serialised
    def observe(
        self,
        player: np.ndarray | int | None = None,
        idx: np.ndarray | None = None,
        out: np.ndarray | None = None,
        *,
        packed: bool = False,
    ) -> np.ndarray:
        """(n, D) int8 observations; see :mod:`cluedo_env.engine.observation` and docs/observation.md.

        ``player``: a seat (int or (n,) array); default each game's actor (once a game is over,
        the player whose turn it was). ``idx``: games (default all). ``out``: an (n, D) int8
        C-contiguous array to fill (saves allocating 10 MB a step at batch 4096).
        ``packed=True``: (n, ``packed_observation_size``) uint8 rows of the packed layout instead
        (:func:`cluedo_env.engine.observation.packed_layout`, a fifth of the bytes; ``unpack`` gives the int8 rows).
        """
        games = self._ar if idx is None else self._slots(idx)
        n = len(games)
        if player is None:
            seats = self._actor_seats[:n]
        else:
            seats = np.ascontiguousarray(np.broadcast_to(np.asarray(player), (n,)), np.int64)
            if n and (seats.min() < 0 or seats.max() >= self.P):
                raise CluedoIndexError(f"player must be a seat 0..{self.P - 1}, got {np.unique(seats).tolist()}")
        D, dtype = (self.packed_observation_size, np.uint8) if packed else (self.observation_size, np.int8)
        if out is None:
            out = np.empty((n, D), dtype)
        else:
            _check_out(out, (n, D), dtype)
        if self.threads > 1 and idx is None:  # every game, the threads sharing out the rows
            kind = J.OBSERVE_PACKED if packed else J.OBSERVE
            J.observe_job(self._shared.job, kind, seats, out)
            self._on_threads(kind)
        else:
            kernel, at = (self._k_obs_packed, self.packed_layout.offsets) if packed else (self._k_obs, self.obs_offsets)
            kernel(self.state, self.rules, at, games, seats, out, packed)
        return out

    # ------------------------------------------------------- one game, lean
    # The PettingZoo env steps one game at a time; these skip the batch checks above.
    @_serialised
    def is_legal(self, i: int, action: int) -> bool:
        """Whether ``action`` is legal for game ``i``'s actor."""
        if type(i) is not int or not 0 <= i < self.batch_size:
            i = self._slot(i)
        if type(action) is not int and not is_int(action):
            raise CluedoTypeError(f"action must be an integer 0..{A.NUM_ACTIONS - 1}, got {action!r}")
        if not 0 <= action < A.NUM_ACTIONS:
            return False
        return bool(self._k_is_legal(self.state, i, action))

    @_serialised
    def observe_game(self, i: int, seat: int, out: np.ndarray | None = None, *, packed: bool = False) -> np.ndarray:
        """(D,) int8: seat ``seat``'s observation of game ``i``; the checks cost a few type tests.
        ``packed=True``: its (``packed_observation_size``,) uint8 packed row instead."""
        if type(i) is not int or not 0 <= i < self.batch_size:
            i = self._slot(i)
        if type(seat) is not int or not 0 <= seat < self.P:
            if not is_int(seat) or not 0 <= seat < self.P:
                raise CluedoIndexError(f"seat must be an integer 0..{self.P - 1}, got {seat!r}")
        D, dtype = (self.packed_observation_size, np.uint8) if packed else (self.observation_size, np.int8)
        if out is None:
            out = np.empty(D, dtype)
        else:
            _check_out(out, (D,), dtype)
        games = self._one_game
        games[0] = i
        seats = self._one_seat
        seats[0] = seat
        if packed:
            self._k_obs_packed(self.state, self.rules, self.packed_layout.offsets, games, seats, out.reshape(1, -1),
                               True)  # fmt: skip
        else:
            self._k_obs(self.state, self.rules, self.obs_offsets, games, seats, out.reshape(1, -1), False)
        return out

    # ---------------------------------------------------------- summaries
    @_serialised
    def rebuild_summaries(self, idx: np.ndarray) -> None:
        """Recompute the history summaries (``seen`` ... ``accused_at``) from the history."""
        for i in self._slots(idx):
            self._k_summaries(self.state, self.rules, int(i))

    def history_counts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Public counts of games ``idx`` from their histories: suggestions (n,) int64, wrong accusations by seat
        (n, P) int64, and whether the last record is a correct accusation (n,) bool (compiled:
        :func:`cluedo_env.engine.kernels.history_counts`, one pass for all games that ended together)."""
        idx = self._slots(idx)
        n = len(idx)
        suggestions, wrong, won = np.empty(n, np.int64), np.empty((n, self.P), np.int64), np.empty(n, bool)
        K.history_counts(idx, self.hist_len, self.hist_kind, self.hist_player, self.hist_correct, suggestions, wrong,
                         won)  # fmt: skip
        return suggestions, wrong, won

    # ============================================================= snapshots
    @_serialised
    def export_game(self, i: int) -> dict[str, Any]:
        """Game ``i`` as a reference-engine snapshot dict (docs/snapshot.md)."""
        from cluedo_env.engine.reference import Game

        i = self._slot(i)
        g = Game.__new__(Game)
        g.config, g.board, g.num_players = self.config, self.board, self.P
        g.pos = [int(x) for x in self.pos[i]] if self.has_board else []
        g.weapon_room = [int(x) for x in self.weapon_room[i]] if self.has_board else []
        g.hands = [sorted(int(c) for c in np.flatnonzero(self.owner[i] == p)) for p in range(self.P)]
        g.envelope = tuple(int(c) for c in self.envelope[i])
        g.phase, g.current, g.refuter = int(self.phase[i]), int(self.current[i]), int(self.refuter[i])
        g.roll, g.turn_count = int(self.roll[i]), int(self.turn_count[i])
        g.eliminated = [bool(x) for x in self.eliminated[i]]
        g.dragged = [bool(x) for x in self.dragged[i]]
        g.winner = int(self.winner[i])
        g.terminated, g.truncated = bool(self.terminated[i]), bool(self.truncated[i])
        g.rewards = [float(x) for x in self.rewards[i]]
        g.history = []
        for h in range(int(self.hist_len[i])):
            s, w, r = (int(x) for x in self.hist_triple[i, h])
            p = int(self.hist_player[i, h])
            if self.hist_kind[i, h] == ACCUSATION:
                g.history.append(Accusation(p, s, w, r, bool(self.hist_correct[i, h])))
                continue
            rec = Suggestion(p, s, w, r)
            for k in range(1, self.P):  # in the order asked (R-G6)
                seat = (p + k) % self.P
                resp = int(self.hist_response[i, h, seat])
                if resp == PASSED:
                    rec.passed.append(seat)
                elif resp >= 0:
                    rec.refuted_by.append(seat)
                    rec.shown.append(resp)
            g.history.append(rec)
        return g.to_dict()

    def _slot(self, i: Any) -> int:
        if not isinstance(i, (int, np.integer)) or isinstance(i, (bool, np.bool_)) or not 0 <= i < self.batch_size:
            raise CluedoIndexError(f"game index must be an integer 0..{self.batch_size - 1}, got {i!r}")
        return int(i)

    @_serialised
    def import_game(self, i: int, snapshot: dict[str, Any]) -> None:
        """Put the game a snapshot describes into slot ``i`` (its rules must be this engine's).

        All or nothing: the snapshot is read and checked completely (``Game.from_dict``, then this
        engine's limits: rules, history length) before anything is written, so a bad snapshot
        raises and leaves every game, slot ``i`` included, as it was.
        """
        from cluedo_env.engine.reference import Game

        i = self._slot(i)
        game = Game.from_dict(snapshot)
        if game.config != self.config:
            raise SnapshotError(f"snapshot rules {game.config} differ from this engine's {self.config}")
        self._check_fits(game)
        P = self.P
        # Build the slot's rows apart, then write them all.
        hist_kind = np.zeros(self.H, np.int8)
        hist_player = np.zeros(self.H, np.int8)
        hist_triple = np.zeros((self.H, 3), np.int8)
        hist_correct = np.zeros(self.H, bool)
        hist_response = np.full((self.H, P), NOT_ASKED, np.int8)
        for h, rec in enumerate(game.history):
            hist_triple[h] = (rec.suspect, rec.weapon, rec.room)
            if isinstance(rec, Accusation):
                hist_kind[h], hist_player[h], hist_correct[h] = ACCUSATION, rec.accuser, rec.correct
            else:
                hist_kind[h], hist_player[h] = SUGGESTION, rec.suggester
                hist_response[h, rec.passed] = PASSED
                hist_response[h, rec.refuted_by] = rec.shown
        owner = np.full(NUM_CARDS, -1, np.int8)
        for p, hand in enumerate(game.hands):
            owner[hand] = p
        if self.has_board:
            self.pos[i] = game.pos
            self.weapon_room[i] = game.weapon_room
        else:
            self.pos[i] = 0
            self.weapon_room[i] = 0
        self.owner[i] = owner
        self.hand_size[i] = [len(hand) for hand in game.hands]
        self.envelope[i] = game.envelope
        self.phase[i], self.current[i], self.refuter[i] = game.phase, game.current, game.refuter
        self.roll[i], self.turn_count[i], self.last_roll[i] = game.roll, game.turn_count, 0
        self.eliminated[i], self.dragged[i] = game.eliminated, game.dragged
        self.winner[i], self.terminated[i], self.truncated[i] = game.winner, game.terminated, game.truncated
        self.rewards[i] = game.rewards
        self.hist_len[i] = len(game.history)
        self.hist_kind[i], self.hist_player[i], self.hist_triple[i] = hist_kind, hist_player, hist_triple
        self.hist_correct[i], self.hist_response[i] = hist_correct, hist_response
        self._k_summaries(self.state, self.rules, i)
        self.move_dest[i] = False
        self.n_move[i] = 0
        if self.phase[i] == A.MOVE:
            self.n_move[i] = self._k_dest(self.state, self.moves, i, np.zeros(6, np.int16), self.mask[i, 4:201])
        self._k_legal(self.state, self.rules, self.tables, i)

    def _check_fits(self, game: Any) -> None:
        """Every value of ``game`` within the ranges this engine's arrays hold (SnapshotError if not)."""
        P, cfg = self.P, self.config

        def fits(name: str, value: Any, lo: int, hi: int) -> None:
            if type(value) not in (int, bool) and not isinstance(value, np.integer) or not lo <= value <= hi:
                raise SnapshotError(f"snapshot field {name!r} is {value!r}; allowed: an integer {lo}..{hi}")

        fits("current", game.current, 0, P - 1)
        fits("refuter", game.refuter, -1, P - 1)
        fits("winner", game.winner, -1, P - 1)
        fits("roll", game.roll, 0, cfg.max_roll)
        fits("turn_count", game.turn_count, 0, cfg.max_turns)
        for loc in game.pos:
            fits("suspects", loc, 0, NUM_LOCATIONS - 1)
        for room in game.weapon_room:
            fits("weapons", room, 0, 8)
        for card in (*game.envelope, *(c for hand in game.hands for c in hand)):
            fits("hands/envelope", card, 0, NUM_CARDS - 1)
        # The game may go on to max_turns with one suggestion a turn, and each player may accuse
        # once (R-A6): the history must have room for all of that, however the game goes on.
        suggestions = sum(not isinstance(rec, Accusation) for rec in game.history)
        if suggestions > game.turn_count + HISTORY_SLACK:
            raise SnapshotError(
                f"snapshot history has {suggestions} suggestions after {game.turn_count} completed turns; "
                f"allowed: at most {game.turn_count + HISTORY_SLACK} (one a turn, and {HISTORY_SLACK} spare for "
                f"hand-made positions)"
            )
        accusers = [rec.accuser for rec in game.history if isinstance(rec, Accusation)]
        if len(set(accusers)) != len(accusers):
            raise SnapshotError("snapshot history has two accusations by one player; allowed: one each (R-A6)")
        for h, rec in enumerate(game.history):
            where = f"history[{h}]"
            fits(f"{where} suspect", rec.suspect, 0, 5)
            fits(f"{where} weapon", rec.weapon, 0, 5)
            fits(f"{where} room", rec.room, 0, 8)
            if isinstance(rec, Accusation):
                fits(f"{where} accuser", rec.accuser, 0, P - 1)
                continue
            fits(f"{where} suggester", rec.suggester, 0, P - 1)
            for seat in (*rec.passed, *rec.refuted_by):
                fits(f"{where} seat", seat, 0, P - 1)
                if seat == rec.suggester:
                    raise SnapshotError(f"snapshot field '{where}': the suggester {seat} cannot answer itself")
            for card in rec.shown:
                fits(f"{where} shown", card, 0, NUM_CARDS - 1)
            if len(rec.shown) != len(rec.refuted_by) or len({*rec.passed, *rec.refuted_by}) != len(rec.passed) + len(
                rec.refuted_by
            ):
                raise SnapshotError(f"snapshot field '{where}': each seat answers a suggestion at most once")


__all__ = [
    "ACCUSATION",
    "ALL_TRIPLES",
    "FULL_GAME_KEEP_ACCUSATION",
    "NOT_ASKED",
    "NO_TRIPLES",
    "NUM_LOCATIONS",
    "PASSED",
    "ROOM_LOC0",
    "SUGGESTION",
    "StepResult",
    "VectorEngine",
]
