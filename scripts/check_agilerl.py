"""AgileRL trains on Cluedo in a virtualenv of its own: build one, install exact pins, run the examples briefly.

    python scripts/check_agilerl.py            # make test runs it in CI (a few minutes: downloads, compiling)
    python scripts/check_agilerl.py --keep     # leave the temporary venv for a look (its path is printed)

Why a venv of its own: AgileRL 2.58 pins ``tensordict==0.13.0`` (the torchrl extra needs 0.14.3 or newer) and
``pettingzoo<1.27`` (constraints.txt pins 1.27), so it cannot be installed beside the project's pinned versions
(docs/integrations.md). This check creates a fresh venv, installs :data:`PINS` (AgileRL, its torch as the CPU
build, and ``peft`` and ``transformers``, which ``import agilerl.algorithms`` imports although AgileRL declares them
only in its LLM extras) plus the project's base dependencies at whatever pip picks, then the project with
``--no-deps`` from a copy of the checkout, and runs the two examples, ``scripts/examples/agilerl_ppo.py``
(single-agent PPO, Gymnasium vector env) and ``scripts/examples/agilerl_ippo.py`` (IPPO, PettingZoo parallel env),
with a few updates and games each from that copy, outside the checkout. Any failure exits non-zero. A test checks
that :data:`PINS` name the version of pyproject.toml's ``agilerl`` extra.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from scripts.check_lowest_versions import other_dependencies  # noqa: E402

# Installed together, so that pip resolves them at once. torch 2.13.0 is the CPU build where the index offers it
# (pip's --dry-run shows which); AgileRL accepts torch>=2.11.
PINS = ("agilerl==2.58.0", "torch==2.13.0", "peft==0.21.0", "transformers==5.14.1")
# What the project needs to install from a copy of the checkout, and the example's files (copied apart: the example
# puts its own root on sys.path, which must not hold a cluedo_env folder that shadows the installed one).
SOURCES = ("pyproject.toml", "README.md", "cluedo_env", "agents", "training")
EXAMPLE_FILES = ("scripts/__init__.py", "scripts/examples/__init__.py", "scripts/examples/evaluation.py",
                 "scripts/examples/agilerl_ppo.py", "scripts/examples/agilerl_ippo.py")  # fmt: skip
# Each example with tiny sizes: a few updates and games, to prove that the route runs, not that it learns.
EXAMPLES = {
    "agilerl_ppo.py": ["--steps", "1024", "--num-envs", "8", "--rollout", "16", "--hidden", "32", "--eval-games", "8"],
    "agilerl_ippo.py": ["--steps", "256", "--num-envs", "4", "--rollout", "16", "--hidden", "32", "--eval-games", "4"],
}


def run(cmd: list[str], **kwargs) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def copy_sources(names: tuple[str, ...], dest: Path) -> None:
    for name in names:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / name)


def check(python: str, keep: bool) -> float:
    """Build the venv, install, run the examples; returns the seconds it took. Raises on any failure."""
    start = time.perf_counter()
    print(f"AgileRL ({', '.join(PINS)}) in a fresh venv: the installs and a short training run; this takes a few "
          "minutes (scripts/check_agilerl.py)", flush=True)  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="cluedo-agilerl-"))
    try:
        venv = tmp / "venv"
        run([python, "-m", "venv", str(venv)])
        py = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_CONSTRAINT", "VIRTUAL_ENV")}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        deps = other_dependencies((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        run([py, "-m", "pip", "install", "--quiet", *PINS, "numpy", "numba", "gymnasium", "pettingzoo", *deps],
            env=env)  # fmt: skip
        src = tmp / "src"
        copy_sources(SOURCES, src)
        example = tmp / "example"
        copy_sources(EXAMPLE_FILES, example)
        run([py, "-m", "pip", "install", "--quiet", "--no-deps", str(src)], env=env)
        for name, args in EXAMPLES.items():
            run([py, "-W", "ignore::FutureWarning", str(example / "scripts/examples" / name), *args], cwd=tmp, env=env)
    finally:
        if keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to build the venv with")
    parser.add_argument("--keep", action="store_true", help="keep the temporary venv (its path is printed)")
    args = parser.parse_args(argv)
    try:
        seconds = check(args.python, args.keep)
    except subprocess.CalledProcessError as err:
        print(f"error: the AgileRL check failed: {' '.join(map(str, err.cmd))[:200]} exited {err.returncode}",
              file=sys.stderr)  # fmt: skip
        return 1
    print(f"AgileRL: the examples trained and played in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
