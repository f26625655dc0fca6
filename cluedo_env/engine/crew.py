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

The crew is given a compiled loop (:meth:`Crew.bind`): a worker that sees a job calls the loop once, and the loop
runs that job and every job after it, watching the counters itself (:func:`compiled_job_arrived`,
:func:`compiled_job_done`), until the crew stops, no job comes for :data:`SPINS` checks, or the caller sleeps and
must be woken (an ``Event``: from Python). The calling thread runs the same loop once per job (``LEAD``): it hands
the job out (:func:`hand_out`), runs its own part and waits for the workers (:func:`wait_done`) in one compiled
call (:meth:`Crew.run_compiled`). In a game loop, then, a hand-over is a store to memory the worker is watching.
The loop reads what each job is from memory its owner writes before handing the job over
(:mod:`cluedo_env.engine.thread_jobs`).

A :class:`Crew` holds no reference to whoever gives it work, so an engine that is dropped is collected and its crew
stopped (``weakref.finalize``); its threads are daemons, so a crew nobody stopped does not hold the interpreter at
exit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from numba import njit

from cluedo_env.engine.compile_options import INLINE, KERNEL
from cluedo_env.engine.memory import atomic_load, atomic_store, pause

SPINS = 20_000  # checks of a counter before sleeping: 0.2-1 ms with the x86 pause (its cost varies by CPU model)
_LINE = 8  # int64 words in a 64-byte cache line: each signal on a line of its own
# A compiled loop's ``worker`` when the calling thread runs it (Crew.run_compiled): LEAD hands the job out and runs
# the caller's part, unless a worker sleeps (Python must wake it first: the caller's part may wait for the workers'),
# then LEAD_RUN runs the caller's part only.
LEAD, LEAD_RUN = -1, -2
# What the lead's call returns second: the caller's part ran (RAN), and every worker had finished too (RAN_DONE).
RAN, RAN_DONE = 1, 2
# A worker's words: its jobs signal (count, sleeping flag, and _STOP once the crew stops) on one line, its done
# signal (count, sleeping flag, the job it runs) on the next.
_STOPPING, _RUNNING = 2, 2


@njit(**KERNEL)
def _spin_until(words: np.ndarray, at: int, value: int, spins: int) -> bool:
    """Whether ``words[at]`` reached ``value`` within ``spins`` checks."""
    for _ in range(spins):
        if atomic_load(words, at) >= value:
            return True
        pause()
    return False


@njit(**INLINE)
def compiled_job_arrived(words: np.ndarray, worker: int, n: int) -> bool:
    """In a compiled loop: whether job ``n`` came within :data:`SPINS` checks and the crew is not stopping (else the
    loop returns to Python, which stops or waits, sleeping)."""
    at = 2 * worker * _LINE
    if not _spin_until(words, at, n, SPINS) or atomic_load(words, at + _STOPPING):
        return False
    atomic_store(words, (2 * worker + 1) * _LINE + _RUNNING, n)
    return True


@njit(**INLINE)
def compiled_job_done(words: np.ndarray, worker: int, n: int) -> bool:
    """In a compiled loop: say job ``n`` is done; whether the caller sleeps (the loop must return so that Python
    wakes it: :meth:`Signal.raise_to`'s handshake)."""
    return _store_and_load(words, (2 * worker + 1) * _LINE, n, (2 * worker + 1) * _LINE + 1) != 0


@njit(**INLINE)
def hand_out(words: np.ndarray, n: int) -> int:
    """In the calling thread's compiled call: hand job ``n`` to every worker; a bit per worker found asleep (Python
    must set its event: :meth:`Signal.raise_to`'s handshake)."""
    sleepers = 0
    for worker in range(words.shape[0] // (2 * _LINE)):
        at = 2 * worker * _LINE
        if _store_and_load(words, at, n, at + 1):
            sleepers |= 1 << worker
    return sleepers


@njit(**INLINE)
def wait_done(words: np.ndarray, n: int) -> int:
    """In the calling thread's compiled call: wait for every worker to finish job ``n``, at most :data:`SPINS` checks
    each; :data:`RAN_DONE` if they all did, else :data:`RAN` (Python waits for the rest, sleeping:
    :meth:`Crew.run_compiled`)."""
    for worker in range(words.shape[0] // (2 * _LINE)):
        if not _spin_until(words, (2 * worker + 1) * _LINE, n, SPINS):
            return RAN
    return RAN_DONE


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
    """One worker thread: the signals of jobs given (``jobs``) and jobs done (``done``), its compiled loop, and what
    the last job raised. The thread sees this object only, never the crew's owner."""

    def __init__(self, words: np.ndarray, index: int, name: str) -> None:
        self.words, self.index = words, index
        self.jobs = Signal(words, (2 * index) * _LINE)
        self.done = Signal(words, (2 * index + 1) * _LINE)
        self.given = 0  # jobs given so far; the job numbered n is done when ``done`` reaches n
        self.loop: Callable[..., tuple[int, int]] | None = None  # the compiled loop and its arguments (Crew.bind)
        self.loop_args: tuple = ()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=_serve, args=(self,), name=name, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Tell the thread to end, once it has done the jobs given."""
        self.words[self.jobs.at + _STOPPING] = 1
        self.given += 1
        self.jobs.raise_to(self.given)

    def collect(self) -> None:
        """Wait for the last job; raise what it raised. An interrupt (``KeyboardInterrupt``) while waiting is raised
        once the job is done: a job reaches the caller's arrays by their addresses only, so the caller must not
        return, and free them, before it ends."""
        interrupted: BaseException | None = None
        while True:
            try:
                self.done.wait_for(self.given)
                break
            except BaseException as error:  # noqa: BLE001 - raised below, once the job is done
                interrupted = error
        error, self.error = self.error, None
        if interrupted is not None:
            raise interrupted
        if error is not None:
            raise error


def _serve(worker: _Worker) -> None:
    """A worker thread's loop: wait for the next job and enter the compiled loop, which runs it and those after it
    and returns the number of the last it ran; end when the crew stops."""
    n = 0
    while True:
        n += 1
        worker.jobs.wait_for(n)
        if worker.words[worker.jobs.at + _STOPPING]:
            worker.done.raise_to(n)
            return
        n = _serve_compiled(worker, n)


def _serve_compiled(worker: _Worker, n: int) -> int:
    """Run job ``n`` and the jobs after it in the crew's compiled loop; the last job's number. An exception the loop
    raises is the running job's result."""
    try:
        last, wake = worker.loop(worker.words, worker.index, n, *worker.loop_args)
    except BaseException as error:  # noqa: BLE001 - handed to the caller, who raises it
        last = max(int(worker.words[worker.done.at + _RUNNING]), n)  # (n: it failed before job n began)
        worker.error = error
        worker.done.raise_to(last)
        return last
    if wake:
        worker.done.event.set()
    return last


class Crew:
    """``size`` worker threads; :meth:`run_compiled` runs the next job of the compiled loop given by :meth:`bind` on
    every worker while the calling thread runs its own part."""

    def __init__(self, size: int, name: str = "cluedo-crew") -> None:
        self.words = np.zeros(2 * size * _LINE, np.int64)
        self.workers = [_Worker(self.words, i, f"{name}-{i}") for i in range(size)]
        self.loop: Callable[..., tuple[int, int]] | None = None  # (Crew.bind)
        self.lead_args: tuple = ()
        self.bound = False

    def bind(self, loop: Callable[..., tuple[int, int]], args: Sequence[tuple], lead_args: tuple) -> None:
        """The compiled loop of :meth:`run_compiled`'s jobs, each worker's arguments to it after ``(words, worker,
        n)``, and the calling thread's (``lead_args``). ``loop(words, worker, n, *args)`` runs compiled job ``n``
        and the compiled jobs after it (:func:`compiled_job_arrived`, :func:`compiled_job_done`), and returns the
        number of the last and whether its caller sleeps (1 or 0); ``loop(words, LEAD, n, *lead_args)`` hands job
        ``n`` out (:func:`hand_out`) and returns (a bit per worker found asleep, 0) if any, else runs the caller's
        part, waits (:func:`wait_done`) and returns (0, what the wait returned); ``LEAD_RUN`` runs the caller's part
        and waits."""
        self._check_running()
        size = len(self.workers)
        if len(args) != size:
            raise ValueError(f"a crew of {size} binds {size} argument tuples, got {len(args)}")
        for worker, worker_args in zip(self.workers, args, strict=True):
            worker.loop, worker.loop_args = loop, worker_args
        self.loop, self.lead_args = loop, lead_args
        self.bound = True

    def run_compiled(self) -> None:
        """The next job of the bound loop (its owner has written what it is) on every worker and in the calling
        thread: one call of the loop as the lead (``loop(words, LEAD, n, *lead_args)``: it hands the job out, runs
        the caller's part, and waits for the workers). Where it found a worker asleep, it returns before the
        caller's part; Python wakes the sleepers, and a second call (``LEAD_RUN``) runs the caller's part. Then
        Python waits for any worker not yet done (none, in a game loop: the call waited for them). A worker's error
        is raised once every worker is done."""
        self._check_running()
        if not self.bound:
            raise RuntimeError("Crew.bind gives the compiled loop before run_compiled")
        n = self.workers[0].given + 1
        for worker in self.workers:
            worker.given = n
        sleepers, ran = -1, 0  # (an error in the call: wake them all; a needless wake only makes a worker look again)
        try:
            sleepers, ran = self.loop(self.words, LEAD, n, *self.lead_args)
            if not ran:
                self._wake(sleepers)
                sleepers = 0
                _, ran = self.loop(self.words, LEAD_RUN, n, *self.lead_args)
        finally:
            errors = []
            if ran != RAN_DONE:  # (else every worker is done: nothing to wake or wait for but an error to raise)
                self._wake(sleepers)
            for worker in self.workers:
                if ran != RAN_DONE or worker.error is not None:
                    try:
                        worker.collect()
                    except BaseException as error:  # noqa: BLE001 - the first is raised below
                        errors.append(error)
        if errors:
            raise errors[0]

    def _wake(self, sleepers: int) -> None:
        """Set the event of each worker with its bit in ``sleepers``."""
        for i, worker in enumerate(self.workers):
            if sleepers >> i & 1:
                worker.jobs.event.set()

    def _check_running(self) -> None:
        if not self.workers:
            raise RuntimeError("the crew is stopped (its engine was closed)")

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
    "LEAD", "LEAD_RUN", "RAN", "RAN_DONE", "SPINS", "Crew", "Signal", "compiled_job_arrived", "compiled_job_done",
    "hand_out", "wait_done",
]  # fmt: skip
