"""``cluedo bench --threads``: one engine split over threads beside the same games as engines apart (the ceiling)."""

import pytest

from cluedo_env.cli import bench


def test_the_thread_rows_give_the_speedup_and_the_ceiling_of_engines_apart(monkeypatch, capsys):
    monkeypatch.setattr(bench, "THREAD_BATCH", 64)  # (the rows' batch: small, the loops are timed all the same)
    made = []
    real_engine = bench.VectorEngine
    monkeypatch.setattr(bench, "VectorEngine", lambda *a, **k: made.append(k) or real_engine(*a, **k))
    argv = ["--configs", "classic:4", "--batch-sizes", "1", "--workloads", "full", "--seconds", "0.02",
            "--repeats", "1", "--threads", "2", "--json", ""]  # fmt: skip
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "2 engines apart" in out and "the machine's ceiling" in out
    apart = [k for k in made if k.get("batch_size") == 32]
    assert len(apart) == 2 and all(k["threads"] == 1 for k in apart)  # two engines of half the games, one thread each
    split = [k for k in made if k.get("batch_size") == 64]
    assert sorted(k["threads"] for k in split) == [1, 2]


def test_engines_apart_are_stepped_at_once_and_their_rates_summed(monkeypatch):
    import threading

    together = threading.Barrier(3, timeout=10)  # passes only if the three loops run at the same time

    def loop(engine, *_):
        together.wait()
        return {"rate": float(engine)}

    monkeypatch.setattr(bench, "run_loop", loop)
    assert bench._at_once([1, 2, 3], 0.01, None) == pytest.approx(6.0)
