"""The players' benchmark's kernel table (``scripts/bench_players.py --kernels``): what it counts, and that it leaves
the players as it found them. No timing is asserted (machines are shared and noisy)."""

from __future__ import annotations

import collections
import sys

from cluedo_env.agents.knowledge import notebook
from numba.core.registry import CPUDispatcher

from cluedo_env.engine.vector_engine import VectorEngine
from scripts import bench_players


def _bindings() -> dict[tuple[str, str], object]:
    return {
        (name, key): value
        for name, module in list(sys.modules.items())
        if name.startswith("agents")
        for key, value in list(vars(module).items())
        if isinstance(value, CPUDispatcher)
    }


def test_kernel_timing_counts_the_players_kernels_and_puts_them_back() -> None:
    bench_players._one_run("deducer", "cards", 4, 4, 0)  # the players' modules imported
    before, step = _bindings(), VectorEngine.step
    cpu: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter = collections.Counter()
    with bench_players._timed_kernels(cpu, calls):
        assert not isinstance(notebook.propagate_kernel, CPUDispatcher)  # rebound where the notebook calls it
        bench_players._one_run("deducer", "cards", 8, 8, 0)
    assert _bindings() == before and VectorEngine.step is step
    assert calls["propagate_kernel"] > 0 and calls["engine step (VectorEngine.step)"] > 0
    assert all(t >= 0.0 for t in cpu.values()) and set(cpu) == set(calls)


def test_kernel_table_prints_the_kernels_and_the_rest(capsys) -> None:
    assert bench_players.main(["--players", "deducer", "--presets", "cards", "--games", "8", "--batch", "8",
                               "--warmup", "4", "--kernels", "--top", "5"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "## CPU time by kernel: 4 x deducer, cards" in out
    assert "all kernels and engine steps" in out and "the rest (Python, numpy, dispatch)" in out


def test_each_row_gives_the_speed_of_the_core_at_that_minute(capsys) -> None:
    """The last column (``ref ms``): the CPU time of a fixed compiled loop, measured before the cell's runs."""
    assert bench_players.main(["--players", "deducer", "--presets", "cards", "--games", "8", "--batch", "8",
                               "--warmup", "4", "--repeat", "1"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("players"))
    row = next(line for line in lines if line.startswith("4x deducer"))
    assert header.split()[-2:] == ["ref", "ms"] and float(row.split()[-1]) > 0.0
