"""The game loop's jobs on a threaded engine's worker threads, run by a compiled loop that never takes the GIL.

Why: a threaded :class:`~cluedo_env.engine.vector_engine.VectorEngine` hands each worker its slice of a sample, a
step or an observation every call. Handed over as a Python call, the worker must take the GIL to start and to
finish its job, while the caller holds it on its way into its own slice: 20-65 us a round, a tenth of a step at
batch 8192 on two threads. Here the worker's thread stays in :func:`serve` (bound to the crew, see
:mod:`cluedo_env.engine.crew`), which reads each job from a record in memory and calls the kernel itself.

A job's record (:data:`JOB_WORDS` int64 words, written by the ``*_job`` functions before the hand-over): what to
run (``KIND``: :data:`SAMPLE_UNIFORM`, :data:`SAMPLE_FULL`, :data:`STEP`, :data:`OBSERVE`, :data:`OBSERVE_PACKED`)
and the addresses of the caller's arrays for the whole batch (each worker takes the rows of its own games), which
the caller keeps alive until the job is done. The kernels are called by address (:mod:`~cluedo_env.engine.
native_call`), at the addresses the engine looked up for exactly the argument types used here (:data:`RETURNS`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types

from cluedo_env.engine.compile_options import HELPER, INLINE, KERNEL
from cluedo_env.engine.crew import LEAD, compiled_job_arrived, compiled_job_done, hand_out, wait_done
from cluedo_env.engine.kernels import Scratch
from cluedo_env.engine.memory import array_at, data_address
from cluedo_env.engine.movement import MoveTables
from cluedo_env.engine.native_call import call_compiled
from cluedo_env.engine.observation import Offsets
from cluedo_env.engine.state import Rules, State, Tables

SAMPLE_UNIFORM, SAMPLE_FULL, STEP, OBSERVE, OBSERVE_PACKED = range(5)  # a job's kind, and its kernel's index
RETURNS = (types.none, types.none, types.UniTuple(types.int64, 2), types.none, types.none)  # what each kind's returns
KINDS = len(RETURNS)

# The record's words: the kind; the batch arrays' addresses (A: actions, sampler uniforms, or seats; B: active,
# or the output) and the number of elements of A and B (0: empty, the kernel's "none given"); the step's ticket;
# the full-game sampler's chance of keeping an accusation (a float64's bits); the step's result arrays' addresses.
KIND, A, A_SIZE, B, B_SIZE, TICKET, KEEP, REWARDS, TERMINATED, TRUNCATED = range(10)
JOB_WORDS = 16
RESULT_WORDS = 8  # each slice's results (a step's first illegal game, and count), on a cache line of its own


class Shared(NamedTuple):
    """What every worker's jobs read: the record, the kernels, and the engine's arrays that are not per slice."""

    job: np.ndarray  # (JOB_WORDS,) int64: the job being handed over
    kernels: np.ndarray  # (KINDS,) int64: each kind's kernel's address, 0 until the engine first runs that kind
    results: np.ndarray  # (threads * RESULT_WORDS,) int64: each slice's, at its slot
    rules: Rules
    tables: Tables
    obs_offsets: Offsets  # the int8 layout's
    packed_offsets: Offsets  # the packed layout's
    obs_size: int  # int8 observation bytes per game
    packed_size: int  # packed observation bytes per game
    autoreset: bool
    sync: np.ndarray  # the step's check-in words (kernels.step)


class Part(NamedTuple):
    """One thread's slice of the games and its own working memory."""

    state: State  # views of the slice's rows
    moves: MoveTables
    work: Scratch
    games: np.ndarray  # (n,) int64: 0..n-1, the slice's games for the encoder
    lo: int  # its first game in the batch
    slot: int  # its place among the slices: its check-in words in ``sync``, its results


@njit(**KERNEL)
def serve(words: np.ndarray, worker: int, n: int, shared: Shared, part: Part) -> tuple[int, int]:
    """A worker's compiled loop: run job ``n`` and each compiled job after it on ``part``'s games; return the
    number of the last job run and whether the caller sleeps (1: :meth:`cluedo_env.engine.crew.Crew.bind`).

    ``worker=LEAD``: the calling thread's part of job ``n`` in one call: hand it to every worker, run it on
    ``part``'s games, and wait for the workers (at most :data:`~cluedo_env.engine.crew.SPINS` checks each); (0, 1).
    Where a worker sleeps it returns at once, (a bit per sleeper, 0), for Python to wake them, and
    ``worker=LEAD_RUN`` then runs the caller's part and waits. One call leaves no Python between the hand-over,
    the caller's slice and the wait, nor a place for an interrupt to fall between them."""
    if worker == LEAD:
        sleepers = hand_out(words, n)
        if sleepers:
            return sleepers, 0
    if worker <= LEAD:
        _run_job(shared, part)
        wait_done(words, n)
        return 0, 1
    last = n - 1
    while compiled_job_arrived(words, worker, last + 1):
        last += 1
        _run_job(shared, part)
        if compiled_job_done(words, worker, last):
            return last, 1
    return last, 0


@njit(**HELPER)
def _run_job(shared: Shared, part: Part) -> None:
    """Run the job recorded in ``shared.job`` on ``part``'s games (called once a job: not inlined)."""
    job, s, k = shared.job, part.state, shared.kernels
    m, lo = part.games.shape[0], part.lo
    kind = job[KIND]
    a_rows = m if job[A_SIZE] else 0
    b_rows = m if job[B_SIZE] else 0
    if kind == STEP:
        actions = array_at(job[A] + 8 * lo, m, np.int64)
        active = array_at(job[B] + lo, b_rows, np.bool_)
        players = shared.rules.players
        rewards = array_at(job[REWARDS] + 4 * players * lo, (m, players), np.float32)
        terminated = array_at(job[TERMINATED] + lo, m, np.bool_)
        truncated = array_at(job[TRUNCATED] + lo, m, np.bool_)
        first, count = call_compiled(k[STEP], (0, 0), (
            s, shared.rules, shared.tables, part.moves, part.work, actions, active, shared.autoreset, rewards,
            terminated, truncated, shared.sync, part.slot, job[TICKET]))  # fmt: skip
        shared.results[part.slot * RESULT_WORDS] = first
        shared.results[part.slot * RESULT_WORDS + 1] = count
    elif kind == SAMPLE_UNIFORM:
        uniforms = array_at(job[A] + 8 * lo, a_rows, np.float64)
        out = array_at(job[B] + 8 * lo, m, np.int64)
        call_compiled(k[SAMPLE_UNIFORM], None, (s, shared.tables, uniforms, out))
    elif kind == SAMPLE_FULL:
        keep = job[KEEP : KEEP + 1].view(np.float64)[0]
        out = array_at(job[B] + 8 * lo, m, np.int64)
        call_compiled(k[SAMPLE_FULL], None, (s, shared.tables, keep, out))
    elif kind == OBSERVE:
        seats = array_at(job[A] + 8 * lo, m, np.int64)
        rows = array_at(job[B] + shared.obs_size * lo, (m, shared.obs_size), np.int8)
        call_compiled(k[OBSERVE], None, (s, shared.rules, shared.obs_offsets, part.games, seats, rows, False))
    elif kind == OBSERVE_PACKED:
        seats = array_at(job[A] + 8 * lo, m, np.int64)
        rows = array_at(job[B] + shared.packed_size * lo, (m, shared.packed_size), np.uint8)
        call_compiled(k[OBSERVE_PACKED], None,
                      (s, shared.rules, shared.packed_offsets, part.games, seats, rows, True))  # fmt: skip
    else:
        raise ValueError("a job of no known kind")


# The records. Each writes every word it has, so no word of an earlier job is read by mistake.
@njit(**KERNEL)
def step_job(job: np.ndarray, actions: np.ndarray, active: np.ndarray, ticket: int, rewards: np.ndarray,
             terminated: np.ndarray, truncated: np.ndarray) -> None:  # fmt: skip
    """A step of ``actions`` ((B,) int64) for the games ``active`` marks ((B,) bool, or empty: every game), its
    results into ``rewards`` ((B, P) float32), ``terminated`` and ``truncated`` ((B,) bool)."""
    _record(job, STEP, data_address(actions), actions.shape[0], data_address(active), active.shape[0], ticket, 0.0)
    job[REWARDS], job[TERMINATED], job[TRUNCATED] = data_address(rewards), data_address(terminated), data_address(
        truncated)  # fmt: skip


@njit(**KERNEL)
def sample_job(job: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    """Uniform random legal actions into ``out`` ((B,) int64), chance from ``uniforms`` ((B,) float64, or empty)."""
    _record(job, SAMPLE_UNIFORM, data_address(uniforms), uniforms.shape[0], data_address(out), out.shape[0], 0, 0.0)


@njit(**KERNEL)
def full_game_job(job: np.ndarray, keep: float, out: np.ndarray) -> None:
    """The full-game benchmark player's actions into ``out`` ((B,) int64)."""
    _record(job, SAMPLE_FULL, 0, 0, data_address(out), out.shape[0], 0, keep)


@njit(**KERNEL)
def observe_job(job: np.ndarray, kind: int, seats: np.ndarray, out: np.ndarray) -> None:
    """Observations (``kind`` OBSERVE or OBSERVE_PACKED) of ``seats`` ((B,) int64) into ``out`` ((B, D) rows)."""
    _record(job, kind, data_address(seats), seats.shape[0], data_address(out), out.shape[0], 0, 0.0)


@njit(**INLINE)
def _record(job: np.ndarray, kind: int, a: int, a_size: int, b: int, b_size: int, ticket: int, keep: float) -> None:
    job[KIND], job[A], job[A_SIZE], job[B], job[B_SIZE], job[TICKET] = kind, a, a_size, b, b_size, ticket
    job[KEEP : KEEP + 1].view(np.float64)[0] = keep
    job[REWARDS] = job[TERMINATED] = job[TRUNCATED] = 0


__all__ = [
    "JOB_WORDS", "KINDS", "OBSERVE", "OBSERVE_PACKED", "RESULT_WORDS", "RETURNS", "SAMPLE_FULL", "SAMPLE_UNIFORM",
    "STEP", "Part", "Shared", "full_game_job", "observe_job", "sample_job", "serve", "step_job",
]  # fmt: skip
