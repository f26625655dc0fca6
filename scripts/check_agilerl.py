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

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's scripts package beside the installed ones
    sys.path.insert(0, str(ROOT))
from scripts.check_lowest_versions import other_dependencies  # noqa: E402
from scripts.throwaway_venv import copy_sources, install_project, run, run_check, throwaway_venv  # noqa: E402

# Installed together, so that pip resolves them at once. torch 2.13.0 is the CPU build where the index offers it
# (pip's --dry-run shows which); AgileRL accepts torch>=2.11.
PINS = ("agilerl==2.58.0", "torch==2.13.0", "peft==0.21.0", "transformers==5.14.1")
# The examples' files, copied apart from the project's (the example puts its own root on sys.path, which must not
# hold a cluedo_env folder that shadows the installed one).
EXAMPLE_FILES = ("scripts/__init__.py", "scripts/examples/__init__.py", "scripts/examples/evaluation.py",
                 "scripts/examples/agilerl_ppo.py", "scripts/examples/agilerl_ippo.py")  # fmt: skip
# Each example with tiny sizes: a few updates and games, to prove that the route runs, not that it learns.
EXAMPLES = {
    "agilerl_ppo.py": ["--steps", "1024", "--num-envs", "8", "--rollout", "16", "--hidden", "32", "--eval-games", "8"],
    "agilerl_ippo.py": ["--steps", "256", "--num-envs", "4", "--rollout", "16", "--hidden", "32", "--eval-games", "4"],
}


def check(python: str, keep: bool) -> None:
    """Build the venv, install, run the examples. Raises on any failure."""
    print(f"AgileRL ({', '.join(PINS)}) in a fresh venv: the installs and a short training run; this takes a few "
          "minutes (scripts/check_agilerl.py)", flush=True)  # fmt: skip
    with throwaway_venv(python, "cluedo-agilerl-", keep) as (tmp, py, env):
        deps = other_dependencies((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        run([py, "-m", "pip", "install", "--quiet", *PINS, "numpy", "numba", "gymnasium", "pettingzoo", *deps],
            env=env)  # fmt: skip
        install_project(tmp, py, env)
        example = tmp / "example"
        copy_sources(EXAMPLE_FILES, example)
        for name, args in EXAMPLES.items():
            run([py, "-W", "ignore::FutureWarning", str(example / "scripts/examples" / name), *args], cwd=tmp, env=env)


def main(argv: list[str] | None = None) -> int:
    return run_check(check, "AgileRL", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
