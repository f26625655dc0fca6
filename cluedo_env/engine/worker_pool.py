"""Worker threads that share out a batch's jobs with the calling thread, handed their work through memory rather
than a queue, in a compiled loop that never takes the GIL.

Why: a threaded :class:`~cluedo_env.engine.vector_engine.VectorEngine` hands its threads work two or three times a
step (sample, step, observe). Through a ``ThreadPoolExecutor`` every hand-over puts a thread to sleep and wakes it
twice (the worker when work comes, the caller when the work is done): 41-73 us a round with no work on the 2-core
machine, where a thread's share of a step at batch 8192 is 0.1-0.7 ms of work; and a worker that runs a Python
call must take the GIL to start and to finish it (20-65 us a round). Here each side waits for the other by
watching a counter (:class:`Signal`), spinning without the GIL for up to :data:`SPINS` checks, so in a game loop
neither side is put to sleep; only a wait longer than that (the caller busy elsewhere, a kernel compiling) sleeps
on an ``Event``.

The pool is given a compiled loop (:meth:`WorkerPool.bind`): a worker that sees a job calls the loop once, and the loop
runs that job and every job after it, watching the counters itself (:func:`compiled_job_arrived`), until the pool
stops or no job comes for :data:`SPINS` checks. The calling thread runs the same loop once per job (``CALLER``): it
hands the job out (:func:`hand_out`), does its share and closes the job (:func:`close`) in one compiled call
(:meth:`WorkerPool.run_compiled`). In a game loop, then, a hand-over is a store to memory the worker is watching. The
loop reads what each job is from memory its owner writes before handing the job over
(:mod:`cluedo_env.engine.thread_jobs`).

The workers help; the caller never waits for one to start. A worker joins the job it sees (:func:`join`) only while
the job is open, and the caller, once no work is left, closes it and waits only for the workers that joined to
leave (:func:`leave`): their last piece of work. Why: on a virtual machine a thread's core can be taken away for
milliseconds at any moment (the host runs another machine, or takes a spinning core back), and a caller that
waited for every worker to take its part then ran two threads two to three times slower than one, in some
stretches for minutes. The job's work is shared out among whoever takes part (:mod:`~cluedo_env.engine.
thread_jobs`), so the caller does what a late worker would have done.

A :class:`WorkerPool` holds no reference to whoever gives it work, so an engine that is dropped is collected and
its pool stopped (``weakref.finalize``); its threads are daemons, so a pool nobody stopped does not hold the
interpreter at exit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from numba import njit

from cluedo_env.engine.compile_options import INLINE, KERNEL
from cluedo_env.engine.numba_internals import (
    atomic_add,
    atomic_load,
    atomic_store,
    line_aligned_words,
    pause,
    yield_cpu,
)

SPINS = 20_000  # checks of a counter before sleeping: 0.2-1 ms with the x86 pause (its cost varies by CPU model)
YIELD_EVERY = 64  # checks between two yields of the core while spinning (a few microseconds): see memory.yield_cpu
_LINE = 8  # int64 words in a 64-byte cache line: each signal on a line of its own
CALLER = -1  # a compiled loop's ``worker`` when the calling thread runs it (WorkerPool.run_compiled)
# A worker's words: its jobs signal (count, sleeping flag, and 1 once the pool stops) on one line; on the next, the
# job it runs and whether it has joined it. The pool's last line: the job open (its number, 0 once closed) and the
# number of workers in it.
_STOPPING, _RUNNING, _IN_JOB = 2, 0, 1
_OPEN, _JOINED = 0, 1


@njit(**KERNEL)
def _spin_until(words: np.ndarray, at: int, value: int, spins: int) -> bool:
    """Whether ``words[at]`` reached ``value`` within ``spins`` checks (the core yielded now and then)."""
    for k in range(spins):
        if atomic_load(words, at) >= value:
            return True
        pause()
        if k % YIELD_EVERY == YIELD_EVERY - 1:
            yield_cpu()
    return False


@njit(**INLINE)
def wait_until_within(words: np.ndarray, at: int, lo: int, hi: int) -> None:
    """Wait until ``lo <= words[at] <= hi``: a wait of microseconds (another thread's last piece of work), so no
    pause (a virtual machine's host may take back, for milliseconds, a core that pauses in a loop for a few
    microseconds), but the core yielded now and then, in case the thread waited for shares it."""
    k = 0
    while not lo <= atomic_load(words, at) <= hi:
        k += 1
        if k % (16 * YIELD_EVERY) == 0:
            yield_cpu()


@njit(**INLINE)
def _workers(words: np.ndarray) -> int:
    """The number of workers of a pool's words."""
    return (words.shape[0] - _LINE) // (2 * _LINE)


@njit(**INLINE)
def compiled_job_arrived(words: np.ndarray, worker: int, n: int) -> int:
    """In a worker's compiled loop: the newest job handed to it, if job ``n`` or a later one came within
    :data:`SPINS` checks and the pool is not stopping; else 0 (the loop returns to Python, which stops or waits,
    sleeping)."""
    at = 2 * worker * _LINE
    if not _spin_until(words, at, n, SPINS) or atomic_load(words, at + _STOPPING):
        return 0
    newest = atomic_load(words, at)
    atomic_store(words, (2 * worker + 1) * _LINE + _RUNNING, newest)
    return newest


@njit(**INLINE)
def hand_out(words: np.ndarray, n: int) -> int:
    """In the calling thread's compiled call: open job ``n`` (its record written) and hand it to every worker; the
    number of workers found asleep (Python sets their events after the call: :meth:`Signal.raise_to`'s handshake,
    the flag read again after the count was raised)."""
    atomic_store(words, words.shape[0] - _LINE + _OPEN, n)
    sleepers = 0
    for worker in range(_workers(words)):
        at = 2 * worker * _LINE
        if _store_and_load(words, at, n, at + 1):
            sleepers += 1
    return sleepers


@njit(**INLINE)
def join(words: np.ndarray, worker: int, n: int) -> bool:
    """In a worker's compiled loop: take part in job ``n`` if it is still open (then :func:`leave` when done);
    whether it did. A job closed, or not yet open, is left alone: its memory may be the next job's, half written."""
    pool = words.shape[0] - _LINE
    if atomic_load(words, pool + _OPEN) != n:  # (closed already: no need to make the caller look at this worker)
        return False
    atomic_store(words, (2 * worker + 1) * _LINE + _IN_JOB, 1)
    atomic_add(words, pool + _JOINED, 1)
    if atomic_load(words, pool + _OPEN) == n:  # (after the add: a caller that closes it sees this worker, or
        return True  # this worker sees it closed)
    leave(words, worker)
    return False


@njit(**INLINE)
def leave(words: np.ndarray, worker: int) -> None:
    """In a worker's compiled loop: done with the job it joined."""
    atomic_add(words, words.shape[0] - _LINE + _JOINED, -1)
    atomic_store(words, (2 * worker + 1) * _LINE + _IN_JOB, 0)


@njit(**INLINE)
def close(words: np.ndarray) -> None:
    """In the calling thread's compiled call, once no work of the job is left: close it and wait for the workers in
    it to leave (each has a last piece of work at most: :func:`wait_until_within`)."""
    pool = words.shape[0] - _LINE
    atomic_store(words, pool + _OPEN, 0)
    wait_until_within(words, pool + _JOINED, -(2**62), 0)


@njit(**KERNEL)
def close_job(words: np.ndarray) -> None:
    """:func:`close`, from Python: a caller whose own share failed must not free the job's arrays while a worker
    uses them."""
    close(words)


@njit(**KERNEL)
def leave_after_error(words: np.ndarray, worker: int) -> None:
    """A worker whose compiled loop raised leaves the job it was in, if any."""
    if atomic_load(words, (2 * worker + 1) * _LINE + _IN_JOB):
        leave(words, worker)


@njit(**KERNEL)
def _store_and_load(words: np.ndarray, store_at: int, value: int, load_at: int) -> int:
    """``words[store_at] = value``, then ``words[load_at]``, in that order for every thread (the handshake's step)."""
    atomic_store(words, store_at, value)
    return atomic_load(words, load_at)


class Signal:
    """A counter one thread raises and another waits for: ``words[at]`` (the count) and ``words[at + 1]`` (1 while
    the waiter sleeps) in an int64 array, with the ``Event`` a sleeping waiter waits on.

    The handshake that loses no wake-up: the raiser stores the count, then reads the sleeping flag; the waiter
    clears the event, sets the flag, then reads the count. Both orders are sequentially consistent, so at least one
    of the two sees the other's store: the waiter sees the count and does not sleep, or the raiser sees the flag
    and sets the event (after the waiter cleared it). A set left over from an earlier round only wakes the waiter
    to check the count again.
    """

    def __init__(self, words: np.ndarray, at: int) -> None:
        self.words, self.at = words, at
        self.event = threading.Event()

    def raise_to(self, value: int) -> None:
        if _store_and_load(self.words, self.at, value, self.at + 1):
            self.event.set()

    def wait_for(self, value: int) -> None:
        if _spin_until(self.words, self.at, value, SPINS):
            return
        try:
            while True:
                self.event.clear()
                if _store_and_load(self.words, self.at + 1, 1, self.at) >= value:
                    break
                self.event.wait()
        finally:  # (an interrupted wait too: a flag left up would send every later raise through the event)
            _store_and_load(self.words, self.at + 1, 0, self.at)


class _Worker:
    """One worker thread: the signal of jobs given (``jobs``), its compiled loop, and what the loop last raised. The
    thread sees this object only, never the pool's owner."""

    def __init__(self, words: np.ndarray, index: int, name: str) -> None:
        self.words, self.index = words, index
        self.jobs = Signal(words, (2 * index) * _LINE)
        self.given = 0  # jobs given so far
        self.loop: Callable[..., int] | None = None  # the compiled loop and its arguments (WorkerPool.bind)
        self.loop_args: tuple = ()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=_worker_thread, args=(self,), name=name, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Tell the thread to end."""
        self.words[self.jobs.at + _STOPPING] = 1
        self.given += 1
        self.jobs.raise_to(self.given)


def _worker_thread(worker: _Worker) -> None:
    """A worker thread's loop: wait for the next job and enter the compiled loop, which runs it and those after it
    and returns the number of the last it saw; end when the pool stops."""
    n = 0
    while True:
        n += 1
        worker.jobs.wait_for(n)
        if worker.words[worker.jobs.at + _STOPPING]:
            return
        try:
            n = max(worker.loop(worker.words, worker.index, n, *worker.loop_args), n)
        except BaseException as error:  # noqa: BLE001 - handed to the caller, who raises it
            worker.error = error
            n = max(int(worker.words[(2 * worker.index + 1) * _LINE + _RUNNING]), n)
            leave_after_error(worker.words, worker.index)  # (after the error is set: the caller then sees it)


class WorkerPool:
    """``size`` worker threads; :meth:`run_compiled` runs the next job of the compiled loop given by :meth:`bind`: the
    calling thread does it, with the workers' help."""

    def __init__(self, size: int, name: str = "cluedo-worker") -> None:
        self.words = line_aligned_words(2 * size * _LINE + _LINE)
        self.workers = [_Worker(self.words, i, f"{name}-{i}") for i in range(size)]
        self.loop: Callable[..., int] | None = None  # (WorkerPool.bind)
        self.caller_args: tuple = ()
        self.bound = False

    def bind(self, loop: Callable[..., int], args: Sequence[tuple], caller_args: tuple) -> None:
        """The compiled loop of :meth:`run_compiled`'s jobs, each worker's arguments to it after ``(words, worker,
        n)``, and the calling thread's (``caller_args``). ``loop(words, worker, n, *args)`` takes part in job ``n`` or
        a later one and each job after it while they come (:func:`compiled_job_arrived`, :func:`join`,
        :func:`leave`), and returns the number of the last it saw; ``loop(words, CALLER, n, *caller_args)`` hands job
        ``n`` out (:func:`hand_out`), does it with whoever joins, closes it (:func:`close`), and returns the number
        of workers found asleep."""
        self.check_running()
        size = len(self.workers)
        if len(args) != size:
            raise ValueError(f"a pool of {size} binds {size} argument tuples, got {len(args)}")
        for worker, worker_args in zip(self.workers, args, strict=True):
            worker.loop, worker.loop_args = loop, worker_args
        self.loop, self.caller_args = loop, caller_args
        self.bound = True

    def run_compiled(self) -> None:
        """The next job of the bound loop (its owner has written what it is): one call of the loop as the lead
        (``loop(words, CALLER, n, *caller_args)``), which hands the job out, does it with the workers that join, and
        waits for them to leave. Python then wakes the workers it found asleep, for the jobs to come. An error a
        worker's loop raised is raised here (every worker's, the first raised, the others cleared): the job it came
        from is unfinished where that worker had taken a piece (the engine's kernels raise none)."""
        self.check_running()
        if not self.bound:
            raise RuntimeError("WorkerPool.bind gives the compiled loop before run_compiled")
        n = self.workers[0].given + 1
        for worker in self.workers:
            worker.given = n
        sleepers = 1  # (an error in the call: look at them all; a needless wake only makes a worker look again)
        try:
            sleepers = self.loop(self.words, CALLER, n, *self.caller_args)
        except BaseException:
            close_job(self.words)  # (the caller's share failed: no worker may still use the job's memory after)
            raise
        finally:
            if sleepers:
                self._wake_sleepers()
        errors = [worker.error for worker in self.workers if worker.error is not None]
        for worker in self.workers:
            worker.error = None
        if errors:
            raise errors[0]

    def _wake_sleepers(self) -> None:
        """Set the event of each worker that sleeps."""
        for worker in self.workers:
            if self.words[worker.jobs.at + 1]:
                worker.jobs.event.set()

    def check_running(self) -> None:
        """Raise if the pool is stopped."""
        if not self.workers:
            raise RuntimeError("the worker pool is stopped (its engine was closed)")

    def stop(self) -> None:
        """End the worker threads (idempotent)."""
        for worker in self.workers:
            if worker.thread.is_alive():
                worker.stop()
        for worker in self.workers:
            worker.thread.join()
        self.workers = []
        self.bound = False


__all__ = [
    "CALLER", "SPINS", "YIELD_EVERY", "WorkerPool", "Signal", "close", "close_job", "compiled_job_arrived", "hand_out",
    "join", "leave", "leave_after_error", "wait_until_within",
]  # fmt: skip
