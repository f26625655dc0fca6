"""scripts/bench_threading.py: the designs it times play the engine's games, so its table compares like with like."""

from __future__ import annotations

import numpy as np

from cluedo_env.rules.config import RulesConfig
from scripts import bench_threading


def test_prange_plays_the_worker_pools_games():
    """The prange loop (the typed tuples unpacked into a parallel region, numba #5282) and the engine's worker pool
    leave the same state and observations after the same steps."""
    bench_threading.check_same_play(batch=96, steps=60)


def test_sub_engines_play_what_two_engines_play():
    """The sub-engines' fused call (sample, step, observe) does what each engine's own calls do."""
    cfg = RulesConfig.from_preset("classic", players=4)
    fused = bench_threading.SubEngines(cfg, 64, 2, seed=5)
    plain = [bench_threading.EngineLoop(cfg, e.batch_size, 1, seed=5) for e in fused.engines]
    for _ in range(40):
        fused(True)
        for loop in plain:
            loop(True)
    for (_, args), loop in zip(fused.calls, plain, strict=True):
        np.testing.assert_array_equal(args[-1], loop.obs)
    for ours, theirs in zip(fused.engines, plain, strict=True):
        np.testing.assert_array_equal(ours.pos, theirs.eng.pos)
        np.testing.assert_array_equal(ours.hist_len, theirs.eng.hist_len)
    fused.pool.shutdown()


def test_the_table_gives_each_design_its_ratio_to_the_worker_pool():
    rates = {d: [1.0, 2.0] for d in bench_threading.DESIGNS}
    rates["worker pool"] = [2.0, 4.0]
    (cells,) = bench_threading.table([bench_threading._row("quiet", 1024, False, rates)])
    assert cells[:4] == ["quiet", "1,024", "-", "0.00M (x0.50)"] and cells[4] == "0.00M"
