"""scripts/plot_learning_curve.py: the training curve is drawn from VecMonitor wins, except for shaped runs."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("matplotlib")

from scripts import plot_learning_curve  # noqa: E402


def _run(tmp_path, shaping):
    run = tmp_path / ("shaped" if shaping else "plain")
    run.mkdir()
    rows = "\n".join(f"{1.0 if i % 3 == 0 else -1.0},{30 + i % 7},{i * 0.1}" for i in range(200))
    (run / "monitor.csv").write_text('#{"t_start": 0}\nr,l,t\n' + rows + "\n")
    (run / "evals.jsonl").write_text(json.dumps(
        {"timesteps": 4000, "win_rate": 0.4, "ci95": [0.35, 0.45], "opponents": ["heuristic"] * 3}) + "\n")  # fmt: skip
    (run / "state.json").write_text(json.dumps({"config": {"env": {"shaping": shaping}}}))
    return run


@pytest.mark.parametrize("shaping", [None, {"kind": "triples", "coef": 0.2}])
def test_shaped_runs_plot_evaluations_only(tmp_path, capsys, shaping):
    """A shaped run's monitor.csv returns are shaped (a loss can be positive): no training curve from them."""
    run = _run(tmp_path, shaping)
    out = tmp_path / f"{run.name}.png"
    plot_learning_curve.main([str(run), "--out", str(out)])
    assert out.is_file() and out.stat().st_size > 1000
    assert ("evaluations only" in capsys.readouterr().out) == bool(shaping)
