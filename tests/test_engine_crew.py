"""The threaded engine's workers (:mod:`cluedo_env.engine.crew`): every job run once by every thread, errors handed
back once every thread is done, no wake-up lost whether a waiter spins or sleeps, jobs at any pace, and threads
that end with their engine.
"""

from __future__ import annotations

import gc
import random
import threading
import time

import numpy as np
import pytest
from numba import njit

from cluedo_env.engine import crew as crew_module
from cluedo_env.engine.crew import LEAD, Crew, Signal, compiled_job_arrived, compiled_job_done, hand_out, wait_done
from cluedo_env.engine.memory import pause
from cluedo_env.engine.vector_engine import VectorEngine


def _finishes(target, seconds: float = 30.0) -> bool:  # noqa: ANN001
    """Whether ``target()`` returns within ``seconds`` (run in a daemon thread: a lost wake-up hangs it, not us)."""
    done = threading.Event()
    threading.Thread(target=lambda: (target(), done.set()), daemon=True).start()
    return done.wait(seconds)


@pytest.fixture
def crew():
    c = Crew(3, name="test-crew")
    yield c
    assert _finishes(c.stop, 10)  # (a lost wake-up fails here rather than hang the suite)


def test_a_signal_raised_and_awaited_in_any_interleaving_loses_no_wake_up(monkeypatch):
    monkeypatch.setattr(crew_module, "SPINS", 1)  # (almost) every wait goes through the sleeping handshake
    words = np.zeros(16, np.int64)
    ping, pong = Signal(words, 0), Signal(words, 8)

    def other() -> None:
        for n in range(1, 2001):
            ping.wait_for(n)
            pong.raise_to(n)

    def this() -> None:
        threading.Thread(target=other, daemon=True).start()
        for n in range(1, 2001):
            ping.raise_to(n)
            pong.wait_for(n)

    assert _finishes(this)
    assert words[0] == words[8] == 2000 and words[1] == words[9] == 0  # nobody left marked asleep


def test_an_engine_dropped_or_closed_stops_its_threads():
    eng = VectorEngine("classic", 64, threads=3)
    eng.reset(seed=0)
    eng.step(eng.sample_full_game_actions())
    threads = [w.thread for w in eng._crew.workers]
    assert len(threads) == 2 and all(t.is_alive() for t in threads)
    del eng
    gc.collect()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    eng = VectorEngine("classic", 64, threads=2)
    eng.close()
    eng.close()  # (twice: nothing left to stop)
    assert not eng._crew.workers


@njit(cache=False, nogil=True)
def _add_loop(words: np.ndarray, worker: int, n: int, job: np.ndarray, totals: np.ndarray) -> tuple[int, int]:
    """A compiled loop for the crew: each job adds ``job[0]`` to the worker's total (the caller's: the last one); a
    negative one is refused."""
    if worker == LEAD:
        sleepers = hand_out(words, n)
        if sleepers:
            return sleepers, 0
    if worker <= LEAD:
        if job[0] < 0:
            raise ValueError("a negative job")
        totals[-1] += job[0]
        return 0, wait_done(words, n)
    last = n - 1
    while compiled_job_arrived(words, worker, last + 1):
        last += 1
        if job[0] < 0:
            raise ValueError("a negative job")
        totals[worker] += job[0]
        if compiled_job_done(words, worker, last):
            return last, 1
    return last, 0


@pytest.mark.parametrize("caller_spins", [crew_module.SPINS, 1])
def test_jobs_at_any_pace_each_run_once_by_every_thread(crew, monkeypatch, caller_spins):
    """Jobs met by a worker spinning in the compiled loop, spinning in Python, or asleep; every round ends and every
    job ran once in every thread. With a caller that sleeps at once, the compiled loop must return to Python to
    wake it, round after round."""
    monkeypatch.setattr(crew_module, "SPINS", caller_spins)  # (the compiled loop's own spin is compiled in)
    job, totals = np.zeros(1, np.int64), np.zeros(4, np.int64)
    with pytest.raises(RuntimeError, match="Crew.bind gives the compiled loop"):
        crew.run_compiled()
    with pytest.raises(ValueError, match="a crew of 3 binds 3 argument tuples, got 1"):
        crew.bind(_add_loop, [(job, totals)], (job, totals))
    crew.bind(_add_loop, [(job, totals)] * 3, (job, totals))
    rng = random.Random(1)
    expected = 0

    def rounds() -> None:
        nonlocal expected
        for n in range(600):
            job[0] = n
            expected += n
            crew.run_compiled()
            assert totals.tolist() == [expected] * 4
            if rng.random() < 0.3:
                time.sleep(rng.random() * 0.004)  # past the compiled loop's spin, and past Python's: asleep

    assert _finishes(rounds)


@njit(cache=False, nogil=True)
def _slow_workers_loop(words: np.ndarray, worker: int, n: int, job: np.ndarray,
                       totals: np.ndarray) -> tuple[int, int]:  # fmt: skip
    """Like ``_add_loop``, but a worker first spins a while, and ``job[0] == -2`` fails in the caller's part only."""
    if worker == LEAD:
        sleepers = hand_out(words, n)
        if sleepers:
            return sleepers, 0
    if worker <= LEAD:
        if job[0] == -2:
            raise ValueError("the caller's part failed")
        totals[-1] += job[0]
        return 0, wait_done(words, n)
    last = n - 1
    while compiled_job_arrived(words, worker, last + 1):
        last += 1
        for _ in range(100_000):  # (milliseconds: the caller's part fails long before)
            pause()
        totals[worker] += 1
        if compiled_job_done(words, worker, last):
            return last, 1
    return last, 0


def test_an_error_in_the_callers_part_comes_back_once_every_worker_is_done(crew):
    job, totals = np.zeros(1, np.int64), np.zeros(4, np.int64)
    crew.bind(_slow_workers_loop, [(job, totals)] * 3, (job, totals))
    job[0] = -2
    with pytest.raises(ValueError, match="the caller's part failed"):
        crew.run_compiled()
    assert totals.tolist() == [1, 1, 1, 0]  # the workers ran to their end before the error came back
    job[0] = 5
    crew.run_compiled()
    assert totals.tolist() == [2, 2, 2, 5]


def test_an_error_in_the_compiled_loop_comes_back_and_the_crew_works_on(crew):
    job, totals = np.zeros(1, np.int64), np.zeros(4, np.int64)
    crew.bind(_add_loop, [(job, totals)] * 3, (job, totals))
    job[0] = 5
    crew.run_compiled()
    job[0] = -1
    with pytest.raises(ValueError, match="a negative job"):
        crew.run_compiled()
    job[0] = 2
    crew.run_compiled()
    assert totals.tolist() == [7, 7, 7, 7]


def test_a_stopped_crew_refuses_work():
    c = Crew(2, name="test-crew")
    job, totals = np.zeros(1, np.int64), np.zeros(3, np.int64)
    c.bind(_add_loop, [(job, totals)] * 2, (job, totals))
    c.stop()
    with pytest.raises(RuntimeError, match="the crew is stopped"):
        c.run_compiled()
    with pytest.raises(RuntimeError, match="the crew is stopped"):
        c.bind(_add_loop, [], (job, totals))


def test_a_closed_engine_refuses_to_sample_step_or_observe():
    eng = VectorEngine("classic", 64, threads=2)
    eng.reset(seed=0)
    actions = eng.sample_full_game_actions()
    eng.close()
    for call in (eng.sample_random_actions, eng.sample_full_game_actions, eng.observe, lambda: eng.step(actions),
                 lambda: eng.reset(seed=1)):  # fmt: skip
        with pytest.raises(RuntimeError, match="the crew is stopped"):
            call()
