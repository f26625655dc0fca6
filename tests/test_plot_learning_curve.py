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


def test_a_curve_per_lineup_and_the_imitation_panel(tmp_path, monkeypatch):
    run = _run(tmp_path, None)
    with open(run / "evals.jsonl", "a") as f:
        for t in (0, 4000):
            row = {"timesteps": t, "win_rate": 0.3, "ci95": [0.25, 0.35], "opponents": ["deducer"] * 3}
            f.write(json.dumps(row) + "\n")
    (run / "imitation").mkdir()
    rounds = [{"games": 2048 * k, "rounds": k, "accuracy": 0.6 + 0.05 * k} for k in (1, 2, 3)]
    (run / "imitation" / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rounds))
    import matplotlib.axes

    labels = []
    real = matplotlib.axes.Axes.errorbar
    def errorbar(ax, *args, **kwargs):
        labels.append(kwargs["label"])
        return real(ax, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "errorbar", errorbar)
    out = tmp_path / "curve.png"
    plot_learning_curve.main([str(run), "--out", str(out)])
    assert out.is_file() and len(labels) == 2 and "deducer deducer deducer" in labels[1]
