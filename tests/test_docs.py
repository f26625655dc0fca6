"""The README and the docs site: the site builds in strict mode, the generated pages match their data, every
Python block of README.md and docs/*.md runs on its own, and no page narrates how the work went.

The code blocks run in a fresh interpreter each, in a scratch folder (with ``configs/`` linked in), with
``CLUEDO_DOCS_STEPS`` and ``CLUEDO_DOCS_GAMES`` set small: a block that trains or steps for long reads its step
count (and its batch of games) from them (``int(os.environ.get("CLUEDO_DOCS_STEPS", 200_000))``), so the reader
sees the real figures.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, str]]:
    seen, out = set(), []
    for page in PAGES:
        for i, match in enumerate(BLOCK.finditer(page.read_text())):
            code = match.group(1)
            if code not in seen:
                seen.add(code)
                out.append((f"{page.relative_to(ROOT)}#{i}", code))
    return out


BLOCKS = _blocks()


def test_there_are_code_blocks():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("code", [c for _, c in BLOCKS], ids=[name for name, _ in BLOCKS])
def test_code_block_runs(code, tmp_path):
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CLUEDO_DOCS_STEPS": "2", "CLUEDO_DOCS_GAMES": "16",
           "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def test_generated_pages_are_current():
    from scripts import gen_docs

    for path, text in gen_docs.pages().items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} is stale: run python scripts/gen_docs.py"


def test_docs_site_builds_strictly(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-5000:]
    cli = (tmp_path / "site" / "cli" / "index.html").read_text()
    assert "cluedo evaluate" in cli and "--players" in cli
    assert "VectorEngine" in (tmp_path / "site" / "api" / "index.html").read_text()


NARRATION = re.compile(r"\bstops? \d+\b|\bsittings?\b|\bissues? \d+\b|\bthis stop\b", re.I)


def _narration_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "docs").rglob("*.json")), *sorted((ROOT / "configs").rglob("*.yaml"))]  # fmt: skip
    for package in ("cluedo_env", "agents", "training", "scripts", "tests"):
        files += sorted((ROOT / package).rglob("*.py"))
    return files


def test_no_development_narration():
    """Pages, configs and code say what the software does, never how the work went."""
    found = []
    for path in _narration_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if NARRATION.search(line) and path.name != "test_docs.py":
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


def test_a_bench_run_becomes_the_docs_engine_table():
    """``scripts/bench.py --docs``: a run's ``full`` rows replace the engine table, with its command, machine, date."""
    from scripts.gen_docs import engine_table, render_benchmarks, threads_table

    machine = {"cpus_usable": 2, "load_average": [0.1, 0.1, 0.1], "python": "3.11.7", "numpy": "2", "numba": "0.6",
               "date": "2026-12-03T09:00:00+00:00"}  # fmt: skip
    rows = [{"config": "seed000:4", "workload": "full", "batch_size": 4096, "mask": 1.2e6, "obs": 6.1e5,
             "packed": 9.0e5, "games_per_s": 1200.0, "decisions_per_game": 876.0, "bytes_per_game": 5776},
            {"config": "classic:4", "workload": "uniform", "batch_size": 1, "mask": 1.0, "obs": 1.0},
            {"config": "classic:4", "workload": "full, 2 thread(s)", "batch_size": 8192, "threads": 2,
             "mask": 3.0e6, "mask_speedup": 1.9, "obs": 1.0e6, "obs_speedup": 1.8, "packed": 2.0e6,
             "packed_speedup": 1.95, "mask_ceiling": 1.98, "obs_ceiling": 1.97, "packed_ceiling": 1.99}]  # fmt: skip
    report = {"machine": machine, "results": rows}
    table = engine_table(report, "python scripts/bench.py --docs")
    assert table["rows"] == [["seed000 (2 dice), 4 players", "4096", "1.20M", "610.0k", "900.0k", "1,200", "876",
                              "5,776"]]  # fmt: skip
    assert len(table["columns"]) == len(table["rows"][0])
    assert threads_table(report, "cmd")["rows"] == [["classic:4", "2", "3.00M (x1.90)", "1.00M (x1.80)",
                                                     "2.00M (x1.95)", "x1.98 / x1.97 / x1.99"]]  # fmt: skip
    assert threads_table({"machine": machine, "results": rows[:2]}, "cmd") is None
    assert table["date"] == "2026-12-03" and "numba 0.6" in table["machine"]
    data = json.loads((ROOT / "docs" / "data" / "benchmarks.json").read_text())
    engine = next(t for t in data["tables"] if t["id"] == "engine")
    engine.update(table)
    page = render_benchmarks(data)
    assert "| seed000 (2 dice), 4 players | 4096 | 1.20M |" in page and "python scripts/bench.py --docs" in page


def test_contributing_names_every_engine_module():
    """CONTRIBUTING's table of the engine's modules stays complete: a new module gets its row."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    table = text[text.index("## The engine's modules"):text.index("## One concept, one place")]
    modules = sorted(p.name for p in (ROOT / "cluedo_env" / "engine").glob("*.py") if p.name != "__init__.py")
    assert [m for m in modules if f"`{m}`" not in table] == []
