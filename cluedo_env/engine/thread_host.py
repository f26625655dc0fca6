"""How a :class:`~cluedo_env.engine.vector_engine.VectorEngine` shares its calls out among threads.

:class:`ThreadHost` is the part of the engine that, when ``threads > 1``, cuts the batch into blocks
(:func:`~cluedo_env.engine.thread_jobs.block_bounds`), gives each thread its working memory and its context in
memory, starts the worker threads (:class:`~cluedo_env.engine.worker_pool.WorkerPool`) and hands each job to them
through the workers' compiled loop (:mod:`~cluedo_env.engine.thread_jobs`). It reads the engine's ``batch_size``,
``state``, ``rules``, ``tables``, ``moves``, layouts and entry points (:class:`~cluedo_env.engine.entry_points.
CompiledEntryPoints`).

How many threads: :func:`default_threads` (one, unless ``CLUEDO_NUM_THREADS`` says otherwise) or the caller's
``threads`` (a count, or ``"auto"``: :func:`auto_threads`).
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numba
import numpy as np

from cluedo_env.checks import is_int
from cluedo_env.engine import kernels, thread_jobs
from cluedo_env.engine.compile_ahead import signature_of, usable_cores
from cluedo_env.engine.entry_points import compiled_entry
from cluedo_env.engine.movement import with_scratch
from cluedo_env.engine.numba_internals import kernel_address, line_aligned_words
from cluedo_env.engine.worker_pool import WorkerPool
from cluedo_env.errors import CluedoError, CluedoTypeError

GAMES_PER_THREAD = 2048  # threads="auto" gives each thread at least this many games: below, a thread's share is
# too small to pay for a hand-over (a step of 2048 games takes ~0.4 ms, 1-2 ms with an observation)
THREADS_VARIABLE = "CLUEDO_NUM_THREADS"  # the default thread count of every engine: a count, or "auto"


def auto_threads(batch_size: int) -> int:
    """``threads="auto"``: one per usable core, but at least :data:`GAMES_PER_THREAD` games each."""
    return max(1, min(usable_cores(), batch_size // GAMES_PER_THREAD))


def default_threads() -> int | str:
    """The thread count of an engine made without ``threads``: ``CLUEDO_NUM_THREADS`` (a positive count or
    ``auto``) when set, else 1.

    Why one: a second thread is worth about x2 on a quiet 2-core machine, but with one other busy process there it
    gives nothing (x0.97-1.03 of one thread, single repeats down to x0.64: ``scripts/bench_under_load.py``), and
    running experiments side by side is how an RL environment is used. Threads are an opt-in for a machine the caller
    knows to be free."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return 1
    if value == "auto":
        return value
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise CluedoError(f"{THREADS_VARIABLE}={value!r}: expected a positive integer or 'auto' (or leave it unset: "
                      "one thread)")  # fmt: skip


# What a threaded engine makes for its threads (rebuilt on load, not pickled).
THREADS_OWN = ("_contexts", "_context_type", "_pool", "_pool_pid", "_thread_memory", "_job_context")


def serialised(method: Callable) -> Callable:
    """``method`` under the engine's lock: calls from several Python threads are taken one at a time.

    Why: the kernels release the GIL, and a threaded engine hands each call to its workers through one job record,
    so two calls at once would interleave writes to the same games (a threaded engine's workers crashed the
    process). A call holds the lock for its whole length, so each sees the state the previous one left."""

    @functools.wraps(method)
    def one_at_a_time(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return one_at_a_time


class ThreadHost:
    """The worker threads of an engine and the hand-over of its jobs (``threads > 1``)."""

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
        self._pool = None
        if self.threads == 1:
            return
        blocks, own_blocks = thread_jobs.block_bounds(self.batch_size, self.threads)
        self._job_context = thread_jobs.JobContext(
            line_aligned_words(thread_jobs.job_words(self.threads)), np.zeros(thread_jobs.KINDS, np.int64), blocks,
            own_blocks, np.arange(np.diff(blocks).max(), dtype=np.int64), self.state, self.rules, self.tables,
            self.obs_offsets, self.packed_layout.offsets, self.observation_size, self.packed_observation_size,
            self.autoreset)  # fmt: skip
        # Each thread's (JobContext, ThreadMemory) in memory, read by its compiled loop from the address
        # (numba_internals.store_value).
        self._thread_memory = [thread_jobs.ThreadMemory(with_scratch(self.moves), kernels.new_scratch(), t)
                               for t in range(self.threads)]  # fmt: skip
        size = -(-int(thread_jobs.context_size(self._job_context, self._thread_memory[0])) // 64) * 64
        self._contexts = np.zeros((self.threads, size), np.uint8)
        for row, memory in zip(self._contexts, self._thread_memory, strict=True):
            thread_jobs.store_context(row, self._job_context, memory)
        self._context_type = numba.typeof((self._job_context, self._thread_memory[0]))
        self._start_workers()

    def _start_workers(self) -> None:
        """The worker threads (one fewer than ``threads``: the calling thread is the other), stopped when the
        engine is closed or collected."""
        self._pool = WorkerPool(self.threads - 1, name="cluedo-engine")
        self._pool_pid = os.getpid()
        weakref.finalize(self, self._pool.stop)

    def _pool_here(self) -> WorkerPool:
        """The engine's pool; started again in a forked child, which inherits the pool but not its threads (unless the
        engine was closed: a closed engine stays closed)."""
        if self._pool_pid != os.getpid() and self._pool.workers:
            self._start_workers()
        return self._pool

    def _on_threads(self, kind: int) -> None:
        """The job of ``kind`` just recorded in ``self._job_context.job``, shared out among this thread and the workers
        block by block, all through the compiled loop (:mod:`~cluedo_env.engine.thread_jobs`); a step's result is in
        the job's counters."""
        pool = self._pool_here()
        addresses = self._job_context.kernel_addresses
        if not addresses[kind]:
            if kind in (thread_jobs.STEP, thread_jobs.NEW_GAMES):
                self._k_step  # noqa: B018 - the reset's and step's compile, which takes the move search from the helper
            dispatcher, args = self._job_kernel(kind)
            compiled_entry(dispatcher, *args)  # compiled (or loaded) here, not in a worker
            addresses[kind] = kernel_address(dispatcher, signature_of(args), thread_jobs.RETURNS[kind])
        if not pool.bound:
            contexts = [(row.ctypes.data, self._context_type) for row in self._contexts]
            pool.bind(self._k_worker_loop, contexts[1:], contexts[0])
        pool.run_compiled()

    def _stop_threads(self) -> None:
        """Stop the engine's worker threads (they also stop when the engine is garbage-collected)."""
        if self._pool is not None:
            self._pool.stop()

    def _step_on_threads(self, acts: np.ndarray, active: np.ndarray, out: tuple[np.ndarray, ...]) -> tuple[int, int]:
        """The step, shared out among the threads in one hand-over; all or nothing (:mod:`~cluedo_env.engine.
        thread_jobs`): (the first game with an illegal action, their number), or (-1, 0)."""
        job = self._job_context.job
        thread_jobs.step_job(job, acts, active, *out)
        self._on_threads(thread_jobs.STEP)
        count = int(job[thread_jobs.ILLEGAL])
        return (int(job[thread_jobs.FIRST]), count) if count else (-1, 0)

    _k_worker_loop = cached_property(lambda self: compiled_entry(thread_jobs.worker_loop, self._pool.words, 0, 1, 0,
                                                                 self._context_type))  # fmt: skip
