"""Worker threads that run slices of a batch, handed their work through shared memory rather than a queue.

Why: a threaded :class:`~cluedo_env.engine.vector_engine.VectorEngine` hands each thread its slice of the games two
or three times a step (sample, step, observe). Through a ``ThreadPoolExecutor`` every hand-over puts a thread to
sleep and wakes it twice (the worker when work comes, the caller when the work is done): 41-73 us a round with no
work on the 2-core machine, where one thread's slice of a step at batch 8192 is 0.1-0.7 ms of work. Here each side
waits for the other by watching a counter (:class:`Signal`), spinning without the GIL for up to :data:`SPINS`
checks, so in a game loop neither side is put to sleep; only a wait longer than that (the caller busy elsewhere, a
kernel compiling) sleeps on an ``Event``. What remains of a round (20-65 us with no work on the 2-core machine) is
the GIL: a worker that sees its job takes the GIL to run it (a Python call), and CPython hands the GIL over through
a condition variable, a thread's wake-up, when the other thread holds it at that moment.

A :class:`Crew` holds no reference to whoever gives it work, between jobs, so an engine that is dropped is collected
and its crew stopped (``weakref.finalize``); its threads are daemons, so a crew nobody stopped does not hold the
interpreter at exit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

from cluedo_env.engine.compile_options import KERNEL
from cluedo_env.engine.memory import atomic_load, atomic_store, pause

SPINS = 20_000  # checks of a counter before sleeping: 0.2-1 ms with the x86 pause (its cost varies by CPU model)
_LINE = 8  # int64 words in a 64-byte cache line: each signal on a line of its own


@njit(**KERNEL)
def _spin_until(words: np.ndarray, at: int, value: int, spins: int) -> bool:
    """Whether ``words[at]`` reached ``value`` within ``spins`` checks."""
    for _ in range(spins):
        if atomic_load(words, at) >= value:
            return True
        pause()
    return False


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
        while True:
            self.event.clear()
            if _store_and_load(self.words, self.at + 1, 1, self.at) >= value:
                break
            self.event.wait()
        _store_and_load(self.words, self.at + 1, 0, self.at)


class _Worker:
    """One worker thread: its job slot, the signals of jobs given (``jobs``) and jobs done (``done``), and what the
    last job returned or raised. The thread sees this object only, never the crew's owner."""

    def __init__(self, words: np.ndarray, index: int, name: str) -> None:
        self.jobs = Signal(words, (2 * index) * _LINE)
        self.done = Signal(words, (2 * index + 1) * _LINE)
        self.given = 0  # jobs given so far; the job numbered n is done when ``done`` reaches n
        self.job: tuple[Callable[[Any], Any], Any] | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=_serve, args=(self,), name=name, daemon=True)
        self.thread.start()

    def give(self, job: tuple[Callable[[Any], Any], Any] | None) -> None:
        """Hand over ``(work, item)`` (None: stop)."""
        self.job = job
        self.given += 1
        self.jobs.raise_to(self.given)

    def collect(self) -> Any:
        """Wait for the last job; its result, or raise what it raised."""
        self.done.wait_for(self.given)
        result, error = self.result, self.error
        self.result = self.error = None
        if error is not None:
            raise error
        return result


def _serve(worker: _Worker) -> None:
    """A worker thread's loop: wait for the next job, run it, say it is done; a None job ends the loop."""
    n = 0
    while True:
        n += 1
        worker.jobs.wait_for(n)
        job, worker.job = worker.job, None
        if job is None:
            worker.done.raise_to(n)
            return
        try:
            worker.result = job[0](job[1])
        except BaseException as error:  # noqa: BLE001 - handed to the caller, who raises it
            worker.error = error
        job = None  # (no reference to the work, or what it holds, while waiting)
        worker.done.raise_to(n)


class Crew:
    """``size`` worker threads; :meth:`run` runs ``work(item)`` for each item, the first in the calling thread and
    the others one a worker, and returns the results in order."""

    def __init__(self, size: int, name: str = "cluedo-crew") -> None:
        self.words = np.zeros(2 * size * _LINE, np.int64)
        self.workers = [_Worker(self.words, i, f"{name}-{i}") for i in range(size)]

    def run(self, work: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        if len(items) != len(self.workers) + 1:
            raise ValueError(f"a crew of {len(self.workers)} runs {len(self.workers) + 1} items, got {len(items)}")
        for worker, item in zip(self.workers, items[1:], strict=True):
            worker.give((work, item))
        try:
            first = work(items[0])
        finally:  # the workers' slices are done (or failed) before anything else touches them
            others = []
            errors = []
            for worker in self.workers:
                try:
                    others.append(worker.collect())
                except BaseException as error:  # noqa: BLE001 - the first is raised below
                    errors.append(error)
        if errors:
            raise errors[0]
        return [first, *others]

    def stop(self) -> None:
        """End the worker threads (idempotent)."""
        for worker in self.workers:
            if worker.thread.is_alive():
                worker.give(None)
        for worker in self.workers:
            worker.thread.join()
        self.workers = []


__all__ = ["SPINS", "Crew", "Signal"]
