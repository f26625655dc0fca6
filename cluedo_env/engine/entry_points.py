"""The engine's compiled entry points: each kernel compiled (or loaded from numba's cache) once per argument layout
in a process, and bound to an engine on its first use.

:class:`CompiledEntryPoints` is the part of :class:`~cluedo_env.engine.vector_engine.VectorEngine` that knows which
kernel each call runs and with which arguments: the reset and the step (compiled together on the first use of either,
with the move search from a helper process on an empty cache: :mod:`~cluedo_env.engine.compile_ahead`), the
observation encoders, and the kernels only snapshots, players and benchmarks call. It reads the engine's ``state``,
``rules``, ``tables``, ``moves``, ``work`` and result buffers (``_actions``, ``_all_active``, ``_out``), set up by
``VectorEngine.__init__``.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import Any

import numba
import numpy as np

from cluedo_env.engine import compile_ahead, kernels, samplers, thread_jobs
from cluedo_env.engine.compile_ahead import signature_of
from cluedo_env.engine.observation import encode

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


def compiled_entry(dispatcher: Any, *args: Any) -> Any:
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


_COMPILING = threading.Lock()  # one first use at a time: threads that share an engine may read an entry at once


class _OnFirstUse:
    """An entry point of a kernel that the engine's method named ``compile`` compiles (or loads) on the first read
    and leaves in the engine's ``__dict__``, where it shadows this descriptor from then on.

    Why not at construction: an engine is made a while before it is first reset (spaces, players and wrappers are
    set up in between), and on an empty cache a helper process compiles the step's move search meanwhile
    (:mod:`~cluedo_env.engine.compile_ahead`); an engine that is never reset or stepped (a pickled one read for
    its arrays) compiles nothing."""

    def __init__(self, compile: str) -> None:
        self.compile = compile

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, engine: Any, owner: type) -> Any:
        if engine is None:
            return self
        with _COMPILING:
            if self.name not in engine.__dict__:
                getattr(engine, self.compile)()
        return engine.__dict__[self.name]


class CompiledEntryPoints:
    """The entry points of an engine's kernels, for its own argument types (see :func:`compiled_entry`)."""

    def _step_parts(self) -> tuple[tuple[Any, tuple], list[tuple[Any, tuple]]]:
        """What the step is compiled from: its move search (dispatcher, numba types) and its other parts (dispatcher,
        arguments)."""
        roll, rest = kernels.step_parts(self.state, self.rules, self.tables, self.moves, self.work)
        return (roll[0], signature_of(roll[1])), rest

    def _observe_args(self) -> tuple:
        """Arguments of the int8 observation encoder's types."""
        ids = np.zeros(1, np.int64)
        return self.state, self.rules, self.obs_offsets, ids, ids, np.zeros((1, self.observation_size), np.int8), False

    def _job_kernel(self, kind: int) -> tuple[Any, tuple]:
        """The kernel of a game-loop job (``thread_jobs`` kinds), and arguments of the types the engine calls it with:
        its entry point's here, and the workers' compiled loop's (:mod:`~cluedo_env.engine.thread_jobs`)."""
        s, r, t = self.state, self.rules, self.tables
        if kind == thread_jobs.STEP:
            return kernels.apply_actions, (s, r, t, self.moves, self.work, self._actions, self._all_active, True,
                                           *self._out)  # fmt: skip
        if kind == thread_jobs.NEW_GAMES:
            return kernels.new_games, (s, r, t, self._one_game, self.work)
        if kind == thread_jobs.SAMPLE_UNIFORM:
            return samplers.sample_uniform, (s, t, self._no_uniforms, self._actions)
        if kind == thread_jobs.SAMPLE_FULL:
            return samplers.sample_full_game, (s, t, 0.5, self._actions)
        if kind == thread_jobs.OBSERVE:
            return encode, self._observe_args()
        return encode, (s, r, self.packed_layout.offsets, self._one_game, self._one_game,
                        np.zeros((1, self.packed_observation_size), np.uint8), True)  # fmt: skip

    def _job_entry(self, kind: int) -> Any:
        """The entry point of a game-loop job's kernel (:meth:`_job_kernel`)."""
        dispatcher, args = self._job_kernel(kind)
        return compiled_entry(dispatcher, *args)

    def _compile_ahead(self) -> None:
        """On an empty cache, start compiling the step's move search (about half of the step) in a helper process
        now (:mod:`~cluedo_env.engine.compile_ahead`), while this process compiles the reset and the step's other
        parts."""
        compile_ahead.submit([self._step_parts()[0]])

    def _compile(self) -> None:
        """Entry points of the reset and the step, for this engine's argument types (see :func:`compiled_entry`); the
        others are compiled on first use (the ``cached_property`` ones below)."""
        s, r, t, w = self.state, self.rules, self.tables, self.work
        roll, rest = self._step_parts()
        # While a helper compiles the move search, this process compiles the reset and the step's other parts, then
        # the step: about half the work each.
        if compile_ahead.is_pending(*roll):
            for part, args in rest:
                part.compile(signature_of(args))
        self.__dict__["_k_new"] = compiled_entry(kernels.new_games, s, r, t, np.zeros(1, np.int64), w)
        compile_ahead.collect(*roll)
        self.__dict__["_k_step"] = compiled_entry(kernels.step, s, r, t, self.moves, w, self._actions,
                                                  self._all_active, True, *self._out)  # fmt: skip

    # The entry points of the game loop: the reset and step compiled together on the first use of either.
    _k_new = _OnFirstUse("_compile")
    _k_step = _OnFirstUse("_compile")

    # The entry points of the kernels a plain game loop does not call, compiled on first use. Why: on an empty numba
    # cache each costs seconds of compiling, which the PettingZoo env's start-up paid for kernels only snapshots, the
    # benchmark players and sample_random_actions call. A cached_property (not __getattr__, which would slow down
    # every attribute read of the engine) leaves the entry point in the instance's __dict__ after the first read.
    _k_obs = cached_property(lambda self: compiled_entry(encode, *self._observe_args()))
    _k_is_legal = cached_property(lambda self: compiled_entry(kernels.is_legal_of, self.state, 0, 0))
    _k_sample = cached_property(lambda self: self._job_entry(thread_jobs.SAMPLE_UNIFORM))
    _k_full = cached_property(lambda self: self._job_entry(thread_jobs.SAMPLE_FULL))
    _k_legal = cached_property(lambda self: compiled_entry(kernels.update_legal_of, self.state, self.rules, self.tables,
                                                           0))  # fmt: skip
    _k_summaries = cached_property(lambda self: compiled_entry(kernels.rebuild_summaries, self.state, self.rules, 0))
    _k_dest = cached_property(lambda self: compiled_entry(kernels.destinations_of, self.state, self.moves, 0,
                                                     np.zeros(6, np.int16), self.mask[0, 4:201]))  # fmt: skip
    _k_obs_packed = cached_property(lambda self: self._job_entry(thread_jobs.OBSERVE_PACKED))
