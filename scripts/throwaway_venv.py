"""A throwaway virtualenv for the CI checks that install the project beside versions other than its pins
(``scripts/check_lowest_versions.py``, ``scripts/check_agilerl.py``).

Each check: a fresh venv in a temporary folder (:func:`throwaway_venv`), its own installs, the project installed with
``--no-deps`` from a copy of the checkout (:func:`install_project`: no build files or numba caches land in the
checkout), then commands run from outside the checkout, so they import the installed copy. Every command is printed
before it runs; any failure raises, and :func:`run_check` turns it into exit status 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the project needs to install from a copy of the checkout (pyproject.toml's package-dir and readme).
SOURCES = ("pyproject.toml", "README.md", "cluedo_env", "agents", "training")


def run(cmd: list[str], shown: dict[str, str] | None = None, **kwargs) -> None:
    """Print ``cmd`` (each argument found in ``shown`` as its short name there) and run it; raises on failure."""
    print("+", " ".join((shown or {}).get(arg, arg) for arg in cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def copy_sources(names: tuple[str, ...], dest: Path) -> None:
    """Copy files and folders of the checkout (by their paths in it) into ``dest``, without caches."""
    for name in names:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / name)


@contextmanager
def throwaway_venv(python: str, prefix: str, keep: bool) -> Iterator[tuple[Path, str, dict[str, str]]]:
    """``(folder, its venv's python, the environment to run it in)``; the folder goes on leaving unless ``keep``."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        venv = tmp / "venv"
        run([python, "-m", "venv", str(venv)])
        py = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_CONSTRAINT", "VIRTUAL_ENV")}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        yield tmp, py, env
    finally:
        if keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def install_project(tmp: Path, py: str, env: dict[str, str]) -> None:
    """The project into the venv with ``--no-deps``, from a copy of the checkout in ``tmp/src``."""
    src = tmp / "src"
    copy_sources(SOURCES, src)
    run([py, "-m", "pip", "install", "--quiet", "--no-deps", str(src)], env=env)


def run_check(check: Callable[[str, bool], None], what: str, doc: str, argv: list[str] | None) -> int:
    """The command line of a check: ``--python``, ``--keep``; exit status 1 (with the failed command) on failure."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to build the venv with")
    parser.add_argument("--keep", action="store_true", help="keep the temporary venv (its path is printed)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        check(args.python, args.keep)
    except subprocess.CalledProcessError as err:
        print(f"error: the {what} check failed: {' '.join(map(str, err.cmd))[:200]} exited {err.returncode}",
              file=sys.stderr)  # fmt: skip
        return 1
    print(f"{what}: passed in {time.perf_counter() - start:.0f} s")
    return 0
