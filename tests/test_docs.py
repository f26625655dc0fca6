"""The README and the docs site: the site builds in strict mode, the generated pages match their data, every
Python block of README.md and docs/*.md runs on its own, and no page narrates how the work went.

The code blocks run in a fresh interpreter each, in a scratch folder (with ``configs/`` linked in), with
``CLUEDO_DOCS_STEPS`` and ``CLUEDO_DOCS_GAMES`` set small: a block that trains or steps for long reads its step
count (and its batch of games) from them (``int(os.environ.get("CLUEDO_DOCS_STEPS", 200_000))``), so the reader
sees the real figures.
"""

from __future__ import annotations

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
