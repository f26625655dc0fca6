"""scripts/bench_compare.py: two checkouts' players timed in turn on one core. No timing is asserted (machines are
shared and noisy); the table's shape and the refusal of a folder that is not a checkout are."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import bench_compare

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_against_itself_gives_one_row_per_cell(capsys) -> None:
    assert bench_compare.main(["--before", str(ROOT), "--players", "heuristic", "--presets", "cards", "--games", "8",
                               "--batch", "8", "--pairs", "2", "--warmup", "4"]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if line.startswith("4x heuristic"))
    fields = row.split()[2:]  # after "4x heuristic"
    assert fields[:4] == ["cards", "8", "8", "2"]
    before, after, ratio = (float(x) for x in fields[4:7])
    low, high = (float(x) for x in fields[7].split("-"))
    assert before > 0 and after > 0 and 0 < low <= ratio <= high


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        bench_compare.main(["--before", str(tmp_path)])
    assert "is not a checkout of this project" in capsys.readouterr().err
