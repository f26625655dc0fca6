"""Micro-benchmark of the compiled move kernel (``cluedo_env.engine.movement.fill_destinations``), one core.

    PYTHONPATH=. python3 scripts/bench_movement.py                    # both tables, about a minute
    PYTHONPATH=. python3 scripts/bench_movement.py --before df3d707   # and the path-trie code it replaced
    PYTHONPATH=. python3 scripts/bench_movement.py --compile --max-rolls 12   # and cold/cached numba start-up

Why these cases: the kernel answers from a table when no other token is within the roll,
and works per destination (or searches) otherwise, so its cost depends on where the other
tokens stand. For each table (``max_roll`` 6: one die, rolls 1..6; 12: two dice, rolls
2..12 as 2d6 gives them) it prints ns per move for:

* **empty**: no other token (start uniform over the 197 locations): the table path;
* **play**: (start, roll, the 5 other tokens) recorded at every roll of uniformly random
  legal play on :class:`VectorEngine` (``classic`` for one die, ``seed000`` for two; 4
  players, 6 tokens; accusations kept only on a 1% coin so that games run long);
* **near**: 5 other tokens on distinct random squares within ``roll`` pips of the mover
  (every one can cut a path: never the table path);
* **worst**: the slowest single move found among ``--worst-candidates`` moves like
  ``near`` (half with 5 tokens, half with 6), each timed alone, the slowest ten again with
  more repeats.

"searched" is the share of moves with a token within the roll (not the table path).
Timing: a compiled loop calls the kernel once per move (clearing one ``out`` row first,
as a caller must); the best of ``--repeats`` runs in thread CPU time (the machines this
runs on are shared). ``--before REV`` times the batched numpy path-trie code of that git
revision (``destinations(path_trie(k), distance, ...)``, 4096 moves a call) on the same
moves. Also shown: table memory and build time (CPU, numba functions already compiled);
with ``--compile``, two fresh processes (import, ``move_tables``, a first kernel call),
the first with an empty numba cache (cold compile), the second with the cache it wrote.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable

import numba
import numpy as np

from cluedo_env.engine.movement import MoveTables, _build, fill_destinations
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import NUM_LOCATIONS, NUM_SQUARES, load_board

BOARD = load_board()


@numba.njit  # not cached: numba would not see a change to the kernel it inlines
def _run(t: MoveTables, start: np.ndarray, roll: np.ndarray, others: np.ndarray, repeats: int) -> int:
    """Call the kernel for every move, ``repeats`` times; returns the destination total (kept live)."""
    out = np.zeros(NUM_LOCATIONS, np.bool_)
    total = 0
    for _ in range(repeats):
        for i in range(start.shape[0]):
            out[:] = False
            total += fill_destinations(t, start[i], roll[i], others[i], out)
    return total


def rolls(rng: np.random.Generator, max_roll: int, n: int) -> np.ndarray:
    """(n,) int64: one die (1..6) for max_roll 6, the sum of two (2..12) for 12."""
    dice = max_roll // 6
    return rng.integers(1, 7, (n, dice)).sum(1)


def empty_moves(rng: np.random.Generator, max_roll: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return rng.integers(0, NUM_LOCATIONS, n), rolls(rng, max_roll, n), np.full((n, 5), -1, np.int64)


def near_moves(
    rng: np.random.Generator, max_roll: int, n: int, tokens: int = 5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Movers anywhere, ``tokens`` others on distinct squares within the roll of the mover."""
    start = rng.integers(0, NUM_LOCATIONS, n)
    roll = rolls(rng, max_roll, n)
    others = np.full((n, tokens), -1, np.int64)
    for k in range(n):
        pool = np.flatnonzero(BOARD.distance[start[k], :NUM_SQUARES] <= roll[k])
        pool = pool[pool != start[k]]
        take = rng.choice(pool, min(tokens, len(pool)), replace=False)
        others[k, : len(take)] = take
    return start, roll, others


def play_moves(max_roll: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (start, roll, others) of the first n rolls of random play (see the module docstring)."""
    from cluedo_env.engine.vector_engine import VectorEngine

    eng = VectorEngine("classic" if max_roll == 6 else "seed000", batch_size=256, autoreset=True)
    eng.reset(seed)
    rng = np.random.default_rng(seed)
    rec: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    original = eng._destinations

    def recording(idx: np.ndarray) -> np.ndarray:
        cur = eng.current[idx].astype(np.int64)
        pos = eng.pos[idx].astype(np.int64)
        start = pos[np.arange(len(idx)), cur]
        others = np.stack([np.delete(row, c) for row, c in zip(pos, cur, strict=True)]) if len(idx) else pos[:, :5]
        rec.append((start, eng.roll[idx].astype(np.int64), others))
        return original(idx)

    eng._destinations = recording  # type: ignore[method-assign]
    while sum(len(r[0]) for r in rec) < n:
        mask = eng.legal_action_mask
        noise = rng.random(mask.shape) * mask
        keep = rng.random(len(mask)) < 0.01  # accuse only on a 1% coin
        non_acc = mask[:, : A.ACCUSE0].any(1)
        noise[~keep & non_acc, A.ACCUSE0 :] = 0
        eng.step(np.where(mask.any(1), noise.argmax(1), -1))
    start, roll, others = (np.concatenate([r[i] for r in rec])[:n] for i in range(3))
    return start, roll, others


Timer = Callable[[np.ndarray, np.ndarray, np.ndarray], float]


def kernel_timer(t: MoveTables, repeats: int) -> Timer:
    """ns per move of :func:`fill_destinations` in a compiled loop (best of ``repeats``, thread CPU time)."""

    def ns(start: np.ndarray, roll: np.ndarray, others: np.ndarray) -> float:
        best = math.inf
        for _ in range(repeats):
            t0 = time.thread_time()
            _run(t, start, roll, others, 1)
            best = min(best, time.thread_time() - t0)
        return best / len(start) * 1e9

    return ns


def trie_timer(rev: str, max_roll: int, repeats: int, batch: int = 4096) -> tuple[Timer, float]:
    """ns per move of the path-trie code at git revision ``rev`` (batched numpy, ``batch`` moves a call).

    Returns the timer and the seconds its ``path_trie(max_roll)`` took to build.
    """
    source = subprocess.run(
        ["git", "show", f"{rev}:cluedo_env/movement.py"], capture_output=True, text=True, check=True
    ).stdout
    old = types.ModuleType("movement_before")
    sys.modules[old.__name__] = old  # dataclasses look their module up
    exec(compile(source, f"{rev}:cluedo_env/movement.py", "exec"), old.__dict__)
    t0 = time.perf_counter()
    trie = old.path_trie(max_roll)
    build = time.perf_counter() - t0

    def ns(start: np.ndarray, roll: np.ndarray, others: np.ndarray) -> float:
        best = math.inf
        for _ in range(repeats):
            t0 = time.thread_time()
            for i in range(0, len(start), batch):
                sl = slice(i, i + batch)
                old.destinations(trie, BOARD.distance, start[sl], roll[sl], others[sl])
            best = min(best, time.thread_time() - t0)
        return best / len(start) * 1e9

    return ns, build


def worst_move(timer: Timer, start: np.ndarray, roll: np.ndarray, others: np.ndarray) -> tuple[float, str]:
    """(ns, description) of the slowest single move among the candidates (each timed repeated alone)."""

    def alone(i: int, reps: int) -> float:
        return timer(start[i : i + 1].repeat(reps), roll[i : i + 1].repeat(reps), others[i : i + 1].repeat(reps, 0))

    first = [alone(i, 20) for i in range(len(start))]
    best = (0.0, "")
    for i in np.argsort(first)[-10:]:
        ns = alone(int(i), 256)
        if ns > best[0]:
            where = [BOARD.loc_name(int(o)) for o in others[i] if 0 <= o < NUM_SQUARES]
            best = (ns, f"start {BOARD.loc_name(int(start[i]))}, roll {roll[i]}, tokens {', '.join(where)}")
    return best


def fresh_process(max_roll: int, cache_dir: str | None) -> tuple[float, float]:
    """(wall s, CPU s) of importing the module, ``move_tables(max_roll)`` and one kernel call, in a new process."""
    code = (
        "import time, resource; t = time.perf_counter(); import numpy as np; "
        "from cluedo_env.engine.movement import move_tables, destinations; "
        f"tables = move_tables({max_roll}); destinations(tables, np.array([0]), np.array([2]), np.full((1, 5), -1)); "
        "u = resource.getrusage(resource.RUSAGE_SELF); print(time.perf_counter() - t, u.ru_utime + u.ru_stime)"
    )
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    wall, cpu = out.split()
    return float(wall), float(cpu)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-rolls", type=int, nargs="+", default=[6, 12])
    ap.add_argument("--moves", type=int, default=20000, help="moves per case")
    ap.add_argument("--worst-candidates", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--before", metavar="REV", help="also time the path-trie code of this git revision (e.g. df3d707)")
    ap.add_argument("--compile", action="store_true", help="also time a cold numba compile (empty cache dir)")
    args = ap.parse_args(argv)
    for max_roll in args.max_rolls:
        if args.compile:
            with tempfile.TemporaryDirectory() as cache:
                cold = fresh_process(max_roll, cache)
                warm = fresh_process(max_roll, cache)
            print(
                f"\nmax_roll {max_roll}: fresh process, import + move_tables + first call: "
                f"cold numba cache {cold[0]:.2f} s wall / {cold[1]:.2f} s CPU, "
                f"cached {warm[0]:.2f} s wall / {warm[1]:.2f} s CPU"
            )
        _build(BOARD, 2)  # compile, or load from the numba cache
        t0 = time.process_time()
        t = _build(BOARD, max_roll)
        build = time.process_time() - t0
        nbytes = t.ints.nbytes + t.words.nbytes
        rng = np.random.default_rng(max_roll)
        cases = {
            "empty": empty_moves(rng, max_roll, args.moves),
            "play": play_moves(max_roll, args.moves),
            "near": near_moves(rng, max_roll, args.moves),
        }
        cand = [near_moves(rng, max_roll, args.worst_candidates // 2, tokens) for tokens in (5, 6)]
        worst = (
            np.concatenate([cand[0][0], cand[1][0]]),
            np.concatenate([cand[0][1], cand[1][1]]),
            np.concatenate([np.pad(cand[0][2], ((0, 0), (0, 1)), constant_values=-1), cand[1][2]]),
        )
        timers = {"kernel": kernel_timer(t, args.repeats)}
        _run(t, *cases["empty"], 1)  # compile
        print(f"\nmax_roll {max_roll}: tables {nbytes / 2**20:.1f} MB, built in {build:.2f} s CPU")
        if args.before:
            timers["before"], trie_build = trie_timer(args.before, max_roll, max(1, args.repeats // 3))
            print(f"before ({args.before}): path_trie({max_roll}) built in {trie_build:.2f} s")
        print(f"{'case':<8}{'searched':>9}" + "".join(f"{name + ' ns/move':>18}" for name in timers))
        for name, (start, roll, others) in cases.items():
            on_square = (others >= 0) & (others < NUM_SQUARES)
            dist = BOARD.distance[start[:, None], np.where(on_square, others, 0)]
            searched = (on_square & (dist <= roll[:, None])).any(1).mean()
            row = "".join(f"{timer(start, roll, others):>18.0f}" for timer in timers.values())
            print(f"{name:<8}{searched:>9.0%}{row}")
        for label, timer in timers.items():
            ns, what = worst_move(timer, *worst)
            print(f"worst ({label}): {ns:.0f} ns/move: {what}")


if __name__ == "__main__":
    main()
