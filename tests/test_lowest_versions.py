"""scripts/check_lowest_versions.py (run in full by ``make test``): what it reads from pyproject.toml and how it fails.

The full check (a fresh venv with the floors installed and the smoke) takes minutes and the network, so it runs
from the Makefile, not here; these tests check that it installs the floors pyproject.toml declares and that a
failing step fails the run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scripts import check_lowest_versions as check

ROOT = Path(__file__).resolve().parents[1]


def test_the_floors_are_read_from_pyproject():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    lows = check.floors(text)
    assert set(lows) == set(check.FLOORED)
    for name, version in lows.items():
        assert f'"{name}>={version}' in text
    others = check.other_dependencies(text)
    assert others and not any(d.lower().startswith(check.FLOORED) for d in others)
    assert any(d.startswith("PyYAML") for d in others) and not any("torch" in d for d in others)


def test_a_missing_floor_is_an_error_naming_it():
    text = 'dependencies = [\n    "numpy>=1.26",\n    "numba>=0.60,<=0.68.1",\n    "gymnasium",\n]\n'
    with pytest.raises(SystemExit, match="no floor for gymnasium"):
        check.floors(text)
    full = text.replace("\"gymnasium\"", "\"gymnasium>=1.1\",\n    \"pettingzoo>=1.23\"")
    assert check.floors(full) == {"numpy": "1.26", "numba": "0.60", "gymnasium": "1.1", "pettingzoo": "1.23"}
    with pytest.raises(SystemExit, match="no dependencies"):
        check.floors("[project]\n")


def test_a_failing_step_fails_the_run(monkeypatch, capsys):
    def fail(python: str, keep: bool) -> float:
        raise subprocess.CalledProcessError(1, ["venv/bin/python", "-c", "<the smoke>"])

    monkeypatch.setattr(check, "check", fail)
    assert check.main([]) == 1
    assert "the lowest-versions check failed" in capsys.readouterr().err
