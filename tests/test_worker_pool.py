"""The threaded engine's workers (:mod:`cluedo_env.engine.worker_pool`): every piece of every job done exactly once by
whoever takes part, the caller never waiting for a worker that has not joined, no job memory touched after the job
is closed, errors handed back, no wake-up lost whether a waiter spins or sleeps, jobs at any pace, and threads that
end with their engine.
"""

from __future__ import annotations

import gc
import random
import threading
import time

import numpy as np
import pytest
from numba import njit

from cluedo_env.engine import worker_pool
from cluedo_env.engine.numba_internals import atomic_add, pause
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.worker_pool import CALLER, Signal, WorkerPool, close, compiled_job_arrived, hand_out, join, leave


def _finishes(target, seconds: float = 30.0) -> bool:  # noqa: ANN001
    """Whether ``target()`` returns within ``seconds`` (run in a daemon thread: a lost wake-up hangs it, not us)."""
    done = threading.Event()
    threading.Thread(target=lambda: (target(), done.set()), daemon=True).start()
    return done.wait(seconds)


@pytest.fixture
def pool():
    c = WorkerPool(3, name="test-pool")
    yield c
    assert _finishes(c.stop, 10)  # (a lost wake-up fails here rather than hang the suite)


def test_a_signal_raised_and_awaited_in_any_interleaving_loses_no_wake_up(monkeypatch):
    monkeypatch.setattr(worker_pool, "SPINS", 1)  # (almost) every wait goes through the sleeping handshake
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
    threads = [w.thread for w in eng._pool.workers]
    assert len(threads) == 2 and all(t.is_alive() for t in threads)
    del eng
    gc.collect()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    eng = VectorEngine("classic", 64, threads=2)
    eng.close()
    eng.close()  # (twice: nothing left to stop)
    assert not eng._pool.workers


PIECES = 64  # pieces of work in each test job


@njit(cache=False, nogil=True)
def _share(job: np.ndarray, done: np.ndarray, worker: int) -> None:
    """Take pieces of the job until none is left (job[1]: the next; job[0] < 0 fails a worker, -2 the caller);
    ``done[i]`` counts who did piece i, ``done[PIECES + 1 + worker]`` how many this thread did."""
    if job[0] == -1 and worker >= 0 or job[0] == -2 and worker == CALLER:
        raise ValueError("a failing job")
    while True:
        i = atomic_add(job, 1, 1)
        if i >= PIECES:
            return
        for _ in range(job[2]):  # (a slow piece: the other threads take part meanwhile)
            pause()
        atomic_add(done, i, 1)
        atomic_add(done, PIECES + 1 + worker, 1)


@njit(cache=False, nogil=True)
def _share_loop(words: np.ndarray, worker: int, n: int, job: np.ndarray, done: np.ndarray) -> int:
    """A compiled loop for the worker pool (the engine's, ``thread_jobs.worker_loop``, in small)."""
    if worker == CALLER:
        sleepers = hand_out(words, n)
        _share(job, done, worker)
        close(words)
        return sleepers
    last = n - 1
    while True:
        newest = compiled_job_arrived(words, worker, last + 1)
        if not newest:
            return last
        last = newest
        if join(words, worker, last):
            _share(job, done, worker)
            leave(words, worker)


def _new_job(job: np.ndarray, done: np.ndarray, value: int = 0, slow: int = 0) -> None:
    job[:] = value, 0, slow
    done[:] = 0


@pytest.mark.parametrize("caller_spins", [worker_pool.SPINS, 1])
def test_every_piece_of_every_job_is_done_once_at_any_pace(pool, monkeypatch, caller_spins):
    """Jobs met by a worker spinning in the compiled loop, spinning in Python, or asleep; every round ends, each
    piece done exactly once, and the workers take part (in a game loop, most rounds)."""
    monkeypatch.setattr(worker_pool, "SPINS", caller_spins)  # (the compiled loop's own spin is compiled in)
    job, done = np.zeros(3, np.int64), np.zeros(PIECES + 1 + 3, np.int64)
    with pytest.raises(RuntimeError, match="WorkerPool.bind gives the compiled loop"):
        pool.run_compiled()
    with pytest.raises(ValueError, match="a pool of 3 binds 3 argument tuples, got 1"):
        pool.bind(_share_loop, [(job, done)], (job, done))
    pool.bind(_share_loop, [(job, done)] * 3, (job, done))
    rng = random.Random(1)
    helped = 0

    def rounds() -> None:
        nonlocal helped
        for _ in range(600):
            _new_job(job, done, slow=rng.choice([0, 200]))
            pool.run_compiled()
            assert (done[:PIECES] == 1).all() and done[PIECES + 1 :].sum() + done[PIECES] == PIECES
            helped += done[PIECES + 1 :].sum() > 0
            if rng.random() < 0.3:
                time.sleep(rng.random() * 0.004)  # past the compiled loop's spin, and past Python's: asleep

    assert _finishes(rounds)
    assert helped > 0  # (the lead's own pieces count at done[PIECES]: CALLER is -1)
    assert pool.words[-8 + 1] == 0  # no worker left in a job


def test_the_caller_never_waits_for_a_worker_that_has_not_joined(pool):
    """Workers that hold the GIL (a Python loop in their thread: asleep to the pool) never join; every job is done, by
    the caller alone, at once."""
    job, done = np.zeros(3, np.int64), np.zeros(PIECES + 1 + 3, np.int64)
    pool.bind(_share_loop, [(job, done)] * 3, (job, done))
    for worker in pool.workers:
        worker.loop = lambda *args: time.sleep(0.5) or args[2]  # (busy elsewhere for half a second)
    _new_job(job, done)
    pool.run_compiled()  # (hands each worker a job: they go "busy")
    start = time.perf_counter()
    for _ in range(50):
        _new_job(job, done)
        pool.run_compiled()
        assert (done[:PIECES] == 1).all() and done[PIECES] == PIECES  # all the caller's (CALLER: index PIECES)
    assert time.perf_counter() - start < 0.4


def test_an_error_in_the_callers_share_comes_back_once_the_workers_in_it_have_left(pool):
    job, done = np.zeros(3, np.int64), np.zeros(PIECES + 1 + 3, np.int64)
    pool.bind(_share_loop, [(job, done)] * 3, (job, done))
    _new_job(job, done, value=-2)
    with pytest.raises(ValueError, match="a failing job"):
        pool.run_compiled()
    assert pool.words[-8] == 0 and pool.words[-8 + 1] == 0  # closed, and no worker left in it
    _new_job(job, done)
    pool.run_compiled()
    assert (done[:PIECES] == 1).all()


def test_an_error_in_a_workers_loop_comes_back_and_the_pool_works_on(pool):
    job, done = np.zeros(3, np.int64), np.zeros(PIECES + 1 + 3, np.int64)
    pool.bind(_share_loop, [(job, done)] * 3, (job, done))
    for _ in range(200):  # until a worker joins a failing job (the caller does the job meanwhile)
        _new_job(job, done, value=-1, slow=500)
        try:
            pool.run_compiled()
        except ValueError as error:
            assert "a failing job" in str(error)
            break
    else:
        pytest.fail("no worker joined a job in 200 rounds")
    assert pool.words[-8 + 1] == 0  # the failed worker left its job
    for _ in range(20):
        _new_job(job, done)
        pool.run_compiled()
        assert (done[:PIECES] == 1).all()


@njit(cache=False)
def _join_then_leave(words: np.ndarray, n: int) -> tuple[bool, int]:
    joined = join(words, 0, n)
    inside = words[-8 + 1]
    if joined:
        leave(words, 0)
    return joined, inside


def test_a_worker_joins_only_the_open_job_and_leaves_no_count_behind():
    words = np.zeros(3 * 8, np.int64)  # (one worker's two lines and the worker pool's)
    assert _join_then_leave(words, 5) == (False, 0)  # no job open
    words[-8] = 5  # job 5 open
    assert _join_then_leave(words, 4) == (False, 0)  # an older job: left alone
    assert _join_then_leave(words, 5) == (True, 1)
    assert words[-8 + 1] == 0 and words[8 + 1] == 0  # left: the worker pool's count and the worker's flag back to 0


def test_a_stopped_pool_refuses_work():
    c = WorkerPool(2, name="test-pool")
    job, done = np.zeros(3, np.int64), np.zeros(PIECES + 1 + 2, np.int64)
    c.bind(_share_loop, [(job, done)] * 2, (job, done))
    c.stop()
    with pytest.raises(RuntimeError, match="the worker pool is stopped"):
        c.run_compiled()
    with pytest.raises(RuntimeError, match="the worker pool is stopped"):
        c.bind(_share_loop, [], (job, done))


def test_a_closed_engine_refuses_to_sample_step_or_observe():
    eng = VectorEngine("classic", 64, threads=2)
    eng.reset(seed=0)
    actions = eng.sample_full_game_actions()
    eng.close()
    for call in (eng.sample_random_actions, eng.sample_full_game_actions, eng.observe, lambda: eng.step(actions),
                 lambda: eng.reset(seed=1)):  # fmt: skip
        with pytest.raises(RuntimeError, match="the worker pool is stopped"):
            call()
