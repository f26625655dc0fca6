"""The game loop's jobs on a threaded engine's threads, shared out block by block by a compiled loop that never
takes the GIL.

Why: a threaded :class:`~cluedo_env.engine.vector_engine.VectorEngine` hands its workers each sample, step,
observation and deal of a batch. Handed over as a Python call, the worker must take the GIL to start and to finish
its job, while the caller holds it on its way into its own share: 20-65 us a round, a tenth of a step at batch 8192
on two threads. Here the worker's thread stays in :func:`worker_loop` (bound to the worker pool, see
:mod:`cluedo_env.engine.worker_pool`), which reads each job from a record in memory and calls the kernel itself.

Why blocks, not a fixed slice per thread: the threads of a round all wait for the last to finish, so a slice that
runs slower (a core another process shares, a slice that drew the longer move searches) held the faster thread
idle, for a sixth of a step in some minutes. Each thread has a slice of the games of its own, cut in blocks (large ones
first, then smaller ones: :func:`block_bounds`); it takes its own slice's blocks one by one, then the blocks the other
threads have not taken yet from theirs, until none is left, so the threads finish close together.
Why a slice of its own: a game's rows stay in the cache of the core that last wrote them, and the next round's
thread reads them there rather than from another core's. Every game has its own random streams, so which thread
plays a game never changes what happens in it.

A job's record (the first :data:`RECORD_WORDS` int64 words of ``JobContext.job``, written by the ``*_job`` functions
before the hand-over): what to run (``KIND``: one of :data:`KINDS` kinds) and the addresses of the caller's
arrays for the whole batch (each block takes its own rows), which the caller keeps alive until the job is done.
The counters the threads share follow: what a step's check found, the blocks it checked, and each slice's next
block for the check and for everything else, each on a cache line of its own. The kernels are called by address
(:mod:`~cluedo_env.engine.numba_internals`), at the addresses the engine looked up for exactly the argument types used
here (:data:`RETURNS`).

A step is all or nothing: its threads first check every block's actions (:func:`~cluedo_env.engine.kernels.
first_illegal`), wait until every block is checked, and apply the actions only if none was illegal.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types

from cluedo_env.engine.compile_options import HELPER, INLINE, KERNEL
from cluedo_env.engine.kernels import Scratch, first_illegal
from cluedo_env.engine.movement import MoveTables
from cluedo_env.engine.numba_internals import (
    array_at,
    atomic_add,
    atomic_load,
    atomic_min,
    call_compiled,
    data_address,
    rows,
    store_value,
    value_at,
    value_size,
)
from cluedo_env.engine.observation import Offsets
from cluedo_env.engine.state import Rules, State, Tables
from cluedo_env.engine.worker_pool import CALLER, close, compiled_job_arrived, hand_out, join, leave, wait_until_within

SAMPLE_UNIFORM, SAMPLE_FULL, STEP, OBSERVE, OBSERVE_PACKED, NEW_GAMES = range(6)  # a job's kind, its kernel's index
KINDS = 6
RETURNS = (types.none,) * KINDS  # what each kind's kernel returns (a step's check is not called by address)

# The record's words: the kind; the batch arrays' addresses (A: actions, sampler uniforms, or seats; B: active,
# or the output) and the number of elements of A and B (0: empty, the kernel's "none given"); the full-game
# sampler's chance of keeping an accusation (a float64's bits); the step's result arrays' addresses.
KIND, A, A_SIZE, B, B_SIZE, KEEP, REWARDS, TERMINATED, TRUNCATED = range(9)
RECORD_WORDS = 16
# The counters: the number of illegal actions a step's check found and the first game with one (a step's result);
# the blocks it checked; from word NEXT, each slice's next block (a cache line each), for the check, then the rest.
ILLEGAL, FIRST, CHECKED, NEXT = 16, 17, 24, 32
_LINE = 8
NO_GAME = np.iinfo(np.int64).max  # FIRST while no illegal action is found
SMALLEST_BLOCK = 64  # games: taking a block and viewing its rows costs about as much as stepping one game


def job_words(threads: int) -> int:
    """The length of ``JobContext.job`` for ``threads`` threads."""
    return NEXT + 2 * threads * _LINE


class JobContext(NamedTuple):
    """What every thread's jobs read: the record and counters, the kernels, the blocks, and the engine's arrays."""

    job: np.ndarray  # (job_words(threads),) int64: the job being handed over, then its counters
    kernel_addresses: np.ndarray  # (KINDS,) int64: each kind's kernel's address, 0 until the engine first runs it
    blocks: np.ndarray  # (k + 1,) int64: the blocks' bounds, 0 .. B (block_bounds)
    own_blocks: np.ndarray  # (threads + 1,) int64: thread t's slice is blocks own_blocks[t] .. own_blocks[t + 1] - 1
    games: np.ndarray  # (largest block,) int64: 0, 1, 2 ... a block's games for the encoder and the deal
    state: State  # the whole batch
    rules: Rules
    tables: Tables
    obs_offsets: Offsets  # the int8 layout's
    packed_offsets: Offsets  # the packed layout's
    obs_size: int  # int8 observation bytes per game
    packed_size: int  # packed observation bytes per game
    autoreset: bool


class ThreadMemory(NamedTuple):
    """One thread's own working memory, and its index."""

    moves: MoveTables
    work: Scratch
    thread: int  # the thread's index: the calling thread's 0, worker w's w + 1


def block_bounds(batch: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """The blocks a batch is shared out in: their bounds ((k + 1,) int64, 0 .. ``batch``) and each thread's own slice
    (``own_blocks``, (threads + 1,) int64: thread t's blocks are ``own_blocks[t] .. own_blocks[t + 1] - 1``).

    The slices are the batch's nearly equal parts. A slice's blocks are largest first: each half the slice's games
    not yet in a block, and at least :data:`SMALLEST_BLOCK` games (fewer in a small batch, so that every thread
    has a few blocks), but for the last, which takes what is left. Large blocks keep the cost of taking one small;
    the small last ones are what a thread done with its own slice takes from another's, so the threads finish close
    together."""
    smallest = max(1, min(SMALLEST_BLOCK, batch // (4 * threads)))
    bounds, own_blocks = [0], [0]
    for t in range(threads):
        lo, hi = bounds[-1], batch * (t + 1) // threads
        while lo < hi:
            lo += min(hi - lo, max(smallest, (hi - lo) // 2))
            bounds.append(lo)
        own_blocks.append(len(bounds) - 1)
    return np.array(bounds, np.int64), np.array(own_blocks, np.int64)


@njit(**KERNEL)
def worker_loop(words: np.ndarray, worker: int, n: int, context: int, context_type: types.TypeRef) -> int:
    """A worker's compiled loop: take part in job ``n`` (or the newest after it) and each job after it while they
    come; return the number of the last it saw (:meth:`cluedo_env.engine.worker_pool.WorkerPool.bind`).
    ``context``: the address of the thread's ``(JobContext, ThreadMemory)``, of type ``context_type``
    (:func:`~cluedo_env.engine.numba_internals.store_value`).

    ``worker=CALLER``: the calling thread's call for job ``n``: hand it out, take blocks until none is left, and close
    it (wait for the workers that joined to finish their last block); the number of workers found asleep. One call
    leaves no Python between the hand-over, the caller's share and the close, nor a place for an interrupt to fall
    between them."""
    shared, memory = value_at(context, context_type)
    if worker == CALLER:
        sleepers = hand_out(words, n)
        _run_job(shared, memory)
        close(words)
        return sleepers
    last = n - 1
    while True:
        newest = compiled_job_arrived(words, worker, last + 1)
        if not newest:
            return last
        last = newest
        if join(words, worker, last):
            _run_job(shared, memory)
            leave(words, worker)


@njit(**HELPER)
def _run_job(shared: JobContext, memory: ThreadMemory) -> None:
    """This thread's memory of the job recorded in ``shared.job``: blocks taken until none is left (a step's check
    first, see the module's docstring)."""
    kind = shared.job[KIND]
    if kind == STEP:
        _take_blocks(shared, memory, kind, True)
        blocks = shared.blocks.shape[0] - 1
        wait_until_within(shared.job, CHECKED, blocks, 2**62)  # (a block another thread is checking)
        if atomic_load(shared.job, ILLEGAL):
            return
    _take_blocks(shared, memory, kind, False)


@njit(**INLINE)
def _take_blocks(shared: JobContext, memory: ThreadMemory, kind: int, check: bool) -> None:
    """Take blocks, the thread's own slice's first and then the others', until none is left, and check a step's actions
    on each (``check``: the step's first pass, with counters of its own) or run the job on it."""
    threads = shared.own_blocks.shape[0] - 1
    for k in range(threads):
        owner = (memory.thread + k) % threads
        while True:
            i = shared.own_blocks[owner] + atomic_add(shared.job, NEXT + (owner + (0 if check else threads)) * _LINE, 1)
            if i >= shared.own_blocks[owner + 1]:
                break
            lo = shared.blocks[i]
            if check:
                _check_block(shared, lo, shared.blocks[i + 1] - lo)
            else:
                _run_block(shared, memory, kind, lo, shared.blocks[i + 1] - lo)


@njit(**INLINE)
def _check_block(shared: JobContext, lo: int, m: int) -> None:
    """Count the illegal actions of the ``m`` games from ``lo`` into ILLEGAL and FIRST, then the block as checked."""
    job = shared.job
    actions = array_at(job[A] + 8 * lo, m, np.int64)
    active = array_at(job[B] + lo, m if job[B_SIZE] else 0, np.bool_)
    first, illegal = first_illegal(rows(shared.state, lo, m), actions, active)
    if illegal:
        atomic_add(job, ILLEGAL, illegal)
        atomic_min(job, FIRST, lo + first)
    atomic_add(job, CHECKED, 1)  # (after its findings: whoever sees every block checked sees them all)


@njit(**INLINE)
def _run_block(shared: JobContext, memory: ThreadMemory, kind: int, lo: int, m: int) -> None:
    """Run the job of ``kind`` on the ``m`` games from ``lo``."""
    job, k = shared.job, shared.kernel_addresses
    s = rows(shared.state, lo, m)
    games = array_at(data_address(shared.games), m, np.int64)
    if kind == STEP:
        actions = array_at(job[A] + 8 * lo, m, np.int64)
        active = array_at(job[B] + lo, m if job[B_SIZE] else 0, np.bool_)
        players = shared.rules.players
        rewards = array_at(job[REWARDS] + 4 * players * lo, (m, players), np.float32)
        terminated = array_at(job[TERMINATED] + lo, m, np.bool_)
        truncated = array_at(job[TRUNCATED] + lo, m, np.bool_)
        call_compiled(k[STEP], None, (s, shared.rules, shared.tables, memory.moves, memory.work, actions, active,
                                      shared.autoreset, rewards, terminated, truncated))  # fmt: skip
    elif kind == SAMPLE_UNIFORM:
        uniforms = array_at(job[A] + 8 * lo, m if job[A_SIZE] else 0, np.float64)
        out = array_at(job[B] + 8 * lo, m, np.int64)
        call_compiled(k[SAMPLE_UNIFORM], None, (s, shared.tables, uniforms, out))
    elif kind == SAMPLE_FULL:
        keep = job[KEEP : KEEP + 1].view(np.float64)[0]
        out = array_at(job[B] + 8 * lo, m, np.int64)
        call_compiled(k[SAMPLE_FULL], None, (s, shared.tables, keep, out))
    elif kind == OBSERVE:
        seats = array_at(job[A] + 8 * lo, m, np.int64)
        out_rows = array_at(job[B] + shared.obs_size * lo, (m, shared.obs_size), np.int8)
        call_compiled(k[OBSERVE], None, (s, shared.rules, shared.obs_offsets, games, seats, out_rows, False))
    elif kind == OBSERVE_PACKED:
        seats = array_at(job[A] + 8 * lo, m, np.int64)
        out_rows = array_at(job[B] + shared.packed_size * lo, (m, shared.packed_size), np.uint8)
        call_compiled(k[OBSERVE_PACKED], None,
                      (s, shared.rules, shared.packed_offsets, games, seats, out_rows, True))  # fmt: skip
    elif kind == NEW_GAMES:
        call_compiled(k[NEW_GAMES], None, (s, shared.rules, shared.tables, games, memory.work))
    else:
        raise ValueError("a job of no known kind")


# The records. Each writes every word it has, so no word of an earlier job is read by mistake, and resets the
# counters.
@njit(**KERNEL)
def step_job(job: np.ndarray, actions: np.ndarray, active: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
             truncated: np.ndarray) -> None:  # fmt: skip
    """A step of ``actions`` ((B,) int64) for the games ``active`` marks ((B,) bool, or empty: every game), its
    results into ``rewards`` ((B, P) float32), ``terminated`` and ``truncated`` ((B,) bool)."""
    _record(job, STEP, data_address(actions), actions.shape[0], data_address(active), active.shape[0], 0.0)
    job[REWARDS], job[TERMINATED], job[TRUNCATED] = data_address(rewards), data_address(terminated), data_address(
        truncated)  # fmt: skip


@njit(**KERNEL)
def sample_job(job: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    """Uniform random legal actions into ``out`` ((B,) int64), chance from ``uniforms`` ((B,) float64, or empty)."""
    _record(job, SAMPLE_UNIFORM, data_address(uniforms), uniforms.shape[0], data_address(out), out.shape[0], 0.0)


@njit(**KERNEL)
def full_game_job(job: np.ndarray, keep: float, out: np.ndarray) -> None:
    """The full-game benchmark player's actions into ``out`` ((B,) int64)."""
    _record(job, SAMPLE_FULL, 0, 0, data_address(out), out.shape[0], keep)


@njit(**KERNEL)
def observe_job(job: np.ndarray, kind: int, seats: np.ndarray, out: np.ndarray) -> None:
    """Observations (``kind`` OBSERVE or OBSERVE_PACKED) of ``seats`` ((B,) int64) into ``out`` ((B, D) rows)."""
    _record(job, kind, data_address(seats), seats.shape[0], data_address(out), out.shape[0], 0.0)


@njit(**KERNEL)
def new_games_job(job: np.ndarray) -> None:
    """New games dealt in every slot (the reset)."""
    _record(job, NEW_GAMES, 0, 0, 0, 0, 0.0)


@njit(**INLINE)
def _record(job: np.ndarray, kind: int, a: int, a_size: int, b: int, b_size: int, keep: float) -> None:
    job[KIND], job[A], job[A_SIZE], job[B], job[B_SIZE] = kind, a, a_size, b, b_size
    job[KEEP : KEEP + 1].view(np.float64)[0] = keep
    job[REWARDS] = job[TERMINATED] = job[TRUNCATED] = 0
    job[RECORD_WORDS:] = 0
    job[FIRST] = NO_GAME


@njit(**KERNEL)
def store_context(buffer: np.ndarray, shared: JobContext, memory: ThreadMemory) -> None:
    """Write a thread's ``(shared, memory)`` into ``buffer`` (:func:`context_size` bytes) for :func:`worker_loop`."""
    store_value(buffer, (shared, memory))


@njit(**KERNEL)
def context_size(shared: JobContext, memory: ThreadMemory) -> int:
    """The bytes :func:`store_context` writes."""
    return value_size((shared, memory))


__all__ = [
    "FIRST", "ILLEGAL", "KINDS", "NEW_GAMES", "NO_GAME", "OBSERVE", "OBSERVE_PACKED", "RETURNS", "SAMPLE_FULL",
    "SAMPLE_UNIFORM", "STEP", "JobContext", "ThreadMemory", "block_bounds", "context_size", "full_game_job",
    "job_words", "new_games_job", "observe_job", "sample_job", "step_job", "store_context", "worker_loop",
]  # fmt: skip
