"""The threaded engine's workers (:mod:`cluedo_env.engine.crew`): every item run once, in order, errors handed back
after every slice is done, no wake-up lost whether a waiter spins or sleeps, compiled jobs and Python jobs in any
order and at any pace, and threads that end with their engine.
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


def test_each_item_runs_once_in_order_the_first_in_the_calling_thread(crew):
    seen = []

    def work(item: int) -> tuple[int, str]:
        seen.append(item)
        return item * 10, threading.current_thread().name

    results = crew.run(work, [1, 2, 3, 4])
    assert [r[0] for r in results] == [10, 20, 30, 40] and sorted(seen) == [1, 2, 3, 4]
    assert results[0][1] == threading.current_thread().name
    assert [r[1] for r in results[1:]] == ["test-crew-0", "test-crew-1", "test-crew-2"]
    with pytest.raises(ValueError, match="a crew of 3 runs 4 items, got 2"):
        crew.run(work, [1, 2])


def test_an_error_comes_back_once_every_slice_is_done_and_the_crew_works_on(crew):
    finished = []

    def work(item: int) -> int:
        if item == 2:
            raise KeyError("slice 2")
        time.sleep(0.02)
        finished.append(item)
        return item

    with pytest.raises(KeyError, match="slice 2"):
        crew.run(work, [0, 1, 2, 3])
    assert sorted(finished) == [0, 1, 3]  # the others ran to their end before the error came back

    def own(item: int) -> int:  # the calling thread's own slice fails: the workers' still end first
        if item == 0:
            raise RuntimeError("mine")
        time.sleep(0.02)
        finished.append(item)
        return item

    finished.clear()
    with pytest.raises(RuntimeError, match="mine"):
        crew.run(own, [0, 1, 2, 3])
    assert sorted(finished) == [1, 2, 3]
    assert crew.run(lambda item: item + 1, [0, 1, 2, 3]) == [1, 2, 3, 4]


def test_no_job_is_lost_whether_the_workers_spin_or_sleep(crew, monkeypatch):
    """Gaps between rounds shorter and longer than the spin: each hand-over meets a spinning or a sleeping worker
    (a short spin makes both common), and every round ends."""
    monkeypatch.setattr(crew_module, "SPINS", 50)
    rng = random.Random(0)

    def rounds() -> None:
        for n in range(400):
            assert crew.run(lambda item, n=n: item * n, [1, 2, 3, 4]) == [n, 2 * n, 3 * n, 4 * n]
            if rng.random() < 0.5:
                time.sleep(rng.random() * 0.002)

    assert _finishes(rounds)


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
def test_compiled_and_python_jobs_in_any_order_and_pace_each_run_once(crew, monkeypatch, caller_spins):
    """Compiled jobs met by a worker spinning in the compiled loop, spinning in Python, or asleep, between Python
    jobs; every round ends and every job ran once. With a caller that sleeps at once, the compiled loop must
    return to Python to wake it, round after round."""
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
            if rng.random() < 0.3:
                assert crew.run(lambda item, n=n: item + n, [0, 1, 2, 3]) == [n, n + 1, n + 2, n + 3]
            else:
                job[0] = n
                expected += n
                crew.run_compiled()
                assert totals.tolist() == [expected] * 4
            if rng.random() < 0.3:
                time.sleep(rng.random() * 0.004)  # past the compiled loop's spin, and past Python's: asleep

    assert _finishes(rounds)


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
    assert crew.run(lambda item: item * 2, [0, 1, 2, 3]) == [0, 2, 4, 6]


def test_a_stopped_crew_refuses_work():
    c = Crew(2, name="test-crew")
    job, totals = np.zeros(1, np.int64), np.zeros(3, np.int64)
    c.bind(_add_loop, [(job, totals)] * 2, (job, totals))
    c.stop()
    with pytest.raises(RuntimeError, match="the crew is stopped"):
        c.run_compiled()
    with pytest.raises(RuntimeError, match="the crew is stopped"):
        c.bind(_add_loop, [], (job, totals))
    with pytest.raises(RuntimeError, match="the crew is stopped"):
        c.run(lambda item: item, [0, 1, 2])


def test_a_closed_engine_refuses_to_sample_step_or_observe():
    eng = VectorEngine("classic", 64, threads=2)
    eng.reset(seed=0)
    actions = eng.sample_full_game_actions()
    eng.close()
    for call in (eng.sample_random_actions, eng.sample_full_game_actions, eng.observe, lambda: eng.step(actions),
                 lambda: eng.reset(seed=1)):  # fmt: skip
        with pytest.raises(RuntimeError, match="the crew is stopped"):
            call()
