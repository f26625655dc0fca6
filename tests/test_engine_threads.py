"""A VectorEngine split across threads plays exactly the games one thread plays.

The threads share out each step, sample, deal and observation block by block, each with working memory of its own;
every game draws from its own random streams, so the thread count (and which thread takes which block) must change
nothing: not the deals, the dice, the random players' choices, the observations, nor a single byte of the state.
``step`` stays all or nothing: an illegal action in any block leaves every block untouched.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import signal
import threading
import time

import numpy as np
import pytest

from cluedo_env.engine.compile_ahead import usable_cores
from cluedo_env.engine.thread_host import GAMES_PER_THREAD, THREADS_VARIABLE, auto_threads
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.errors import CluedoError
from cluedo_env.rules import actions as A


def _play(threads: int, preset: str, batch_size: int, autoreset: bool, steps: int = 160) -> str:
    """A digest of everything a run shows: results, observations (both layouts) and the final state."""
    eng = VectorEngine(preset, batch_size=batch_size, autoreset=autoreset, threads=threads)
    eng.reset(seed=11)
    rng = np.random.default_rng(5)
    digest = hashlib.sha256()
    for k in range(steps):
        if k % 3 == 0:
            actions = eng.sample_random_actions(np.random.default_rng(k))  # uniforms from the caller
        elif k % 5 == 1:
            actions = eng.sample_random_actions()  # each game's own sampler stream
        else:
            actions = eng.sample_full_game_actions()  # each game's own sampler stream
        active = rng.random(batch_size) < 0.8 if k % 4 == 1 else None
        result = eng.step(actions, active)
        for array in (*result, actions):
            digest.update(array.tobytes())
        if k % 16 == 0:
            digest.update(eng.observe().tobytes())
            digest.update(eng.observe(packed=True).tobytes())
            digest.update(eng.observe(player=k % eng.P, idx=np.arange(0, batch_size, 3)).tobytes())
        if not autoreset and k % 40 == 39:
            eng.reset_games(eng.done)
    for array in eng.state:
        digest.update(array.tobytes())
    eng.close()
    return digest.hexdigest()


@pytest.mark.parametrize("preset, autoreset", [("classic", True), ("cards", False)])
def test_every_thread_count_plays_the_same_games(preset, autoreset):
    one = _play(1, preset, 37, autoreset)
    for threads in (2, 3, 8):
        assert _play(threads, preset, 37, autoreset) == one, f"{threads} threads"


@pytest.mark.parametrize("seed", range(12))
def test_an_illegal_action_in_any_block_changes_no_game(seed):
    """(Repeated: whether a worker checks the block with the bad action, or the caller does, varies run to run.)"""
    eng = VectorEngine("classic", batch_size=12, threads=3)
    eng.reset(seed=seed)
    for _ in range(5):
        eng.step(eng.sample_full_game_actions())
    actions = eng.sample_full_game_actions()
    before = [a.copy() for a in eng.state]
    live = np.flatnonzero(eng.phase != A.OVER)
    bad = int(live[-1])  # in the last block: the first blocks must not have stepped either
    actions[bad] = next(a for a in range(A.NUM_ACTIONS) if not eng.is_legal(bad, a))
    with pytest.raises(A.IllegalActionError, match=f"game {bad}: illegal action"):
        eng.step(actions)
    for name, old, new in zip(eng.state._fields, before, eng.state, strict=True):
        assert np.array_equal(old, new), f"{name} changed"
    also = int(live[live < 4][0])  # and one in the first blocks: it is named, both are counted
    actions[also] = next(a for a in range(A.NUM_ACTIONS) if not eng.is_legal(also, a))
    with pytest.raises(A.IllegalActionError, match=rf"game {also}: .* 2 game\(s\) of 12 had an illegal action"):
        eng.step(actions)


def test_a_threaded_engine_pickles_and_plays_on_alike():
    eng = VectorEngine("classic", batch_size=10, autoreset=True, threads=2)
    eng.reset(seed=4)
    for _ in range(20):
        eng.step(eng.sample_full_game_actions())
    twin = pickle.loads(pickle.dumps(eng))
    assert twin.threads == 2
    for _ in range(30):
        a, b = eng.sample_full_game_actions(), twin.sample_full_game_actions()
        assert np.array_equal(a, b)
        eng.step(a)
        twin.step(b)
    assert np.array_equal(eng.observe(packed=True), twin.observe(packed=True))


def test_thread_counts_and_their_errors():
    assert VectorEngine("classic", batch_size=3, threads=8).threads == 3  # never more threads than games
    assert auto_threads(1) == 1 and auto_threads(GAMES_PER_THREAD - 1) == 1
    assert auto_threads(GAMES_PER_THREAD * 64) == usable_cores()
    assert VectorEngine("classic", batch_size=4).threads == 1
    for bad, kind in ((0, CluedoError), (-2, CluedoError), (1.5, TypeError), ("all", TypeError)):
        with pytest.raises(kind, match="threads must be a positive integer or 'auto'"):
            VectorEngine("classic", batch_size=4, threads=bad)


def test_one_thread_unless_the_caller_or_the_variable_asks(monkeypatch):
    """A busy machine never makes the default slower than one thread: threads are an opt-in (argument or
    ``CLUEDO_NUM_THREADS``)."""
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    assert VectorEngine("classic", batch_size=GAMES_PER_THREAD * 8).threads == 1
    monkeypatch.setenv(THREADS_VARIABLE, "2")
    assert VectorEngine("classic", batch_size=64).threads == 2
    assert VectorEngine("classic", batch_size=64, threads=1).threads == 1  # the argument wins
    monkeypatch.setenv(THREADS_VARIABLE, "auto")
    assert VectorEngine("classic", batch_size=64).threads == auto_threads(64) == 1
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv(THREADS_VARIABLE, bad)
        with pytest.raises(CluedoError, match=f"{THREADS_VARIABLE}='{bad}': expected a positive integer or 'auto'"):
            VectorEngine("classic", batch_size=4)


@pytest.mark.parametrize("threads", [1, 2])
def test_one_engine_hammered_from_four_python_threads_stays_whole(threads):
    """Calls from several Python threads are taken in turn: no crash, no torn state. Each thread steps the games
    with the actions it sampled (stale ones are refused as illegal, changing nothing), observes and resets; then the
    engine plays on exactly as a fresh engine does from the same seed."""
    eng = VectorEngine("classic", batch_size=512, autoreset=True, threads=threads)
    eng.reset(seed=3)
    errors: list[BaseException] = []
    refused = [0]

    def hammer(k: int) -> None:
        try:
            for n in range(60):
                actions = eng.sample_random_actions()
                try:
                    eng.step(actions)
                except A.IllegalActionError:
                    refused[0] += 1  # another thread stepped between this one's sample and step
                if n % 10 == k:
                    eng.observe(packed=n % 2 == 0)
                if n % 25 == 24:
                    eng.reset_games(np.arange(k, 512, 7))
        except BaseException as exc:  # noqa: BLE001 - any error fails the test, after the join
            errors.append(exc)

    for _ in range(5):
        workers = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert errors == []
    twin = VectorEngine("classic", batch_size=512, autoreset=True, threads=1)
    for engine in (eng, twin):
        engine.reset(seed=9)
    for _ in range(200):
        actions = eng.sample_full_game_actions()
        assert np.array_equal(actions, twin.sample_full_game_actions())
        for a, b in zip(eng.step(actions), twin.step(actions), strict=True):
            assert np.array_equal(a, b)
    assert np.array_equal(eng.observe(), twin.observe())
    eng.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_steps_a_threaded_engine_it_inherited():
    """A child inherits the pool object but none of its threads; it must start its own, not wait forever."""
    eng = VectorEngine("classic", batch_size=8, autoreset=True, threads=2)
    eng.reset(seed=1)
    eng.step(eng.sample_full_game_actions())  # the parent's pool has started its thread
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: step on, report, and leave without running the parent's cleanup
        try:
            for _ in range(5):
                eng.step(eng.sample_full_game_actions())
            started = eng._pool_pid == os.getpid() and all(w.thread.is_alive() for w in eng._pool.workers)
            os.write(write, b"ok" if started else b"no")  # (the caller alone would finish too: check it has workers)
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0:  # a child that hangs fails the test instead of the suite
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's step hung (it waited for threads it does not have)")
        time.sleep(0.05)
    assert os.read(read, 2) == b"ok" and os.waitstatus_to_exitcode(done[1]) == 0
    os.close(read)
