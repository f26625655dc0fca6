"""One installed import name: the wheel installs ``cluedo_env`` (with ``cluedo_env.agents`` and
``cluedo_env.training``) and nothing else at the top, so a user's own ``agents/`` or ``training/`` package
never shadows ours.

The wheel test builds the wheel, installs it (not editable) into a folder of its own and runs what a user runs
(``gymnasium.make``, ``env()``, ``cluedo evaluate`` with a pretrained player, a training run) from a working folder
that holds its own ``agents/`` and ``training/`` packages, each of which fails loudly if imported.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"cluedo_env": "cluedo_env", "cluedo_env.agents": "agents", "cluedo_env.training": "training"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _package_folders() -> set[str]:
    """Every folder of the three trees that holds Python files or package data, as its installed name."""
    names = set()
    for name, folder in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".txt", ".zip", ".json",
                                                                                       ".html", ".js", ".css"):
                rel = path.parent.relative_to(ROOT / folder)
                names.add(".".join([name, *rel.parts]))
    return names


def test_the_package_list_names_every_folder_and_maps_to_one_top_name():
    setuptools = _pyproject()["tool"]["setuptools"]
    assert set(setuptools["packages"]) == _package_folders()
    assert {p.split(".")[0] for p in setuptools["packages"]} == {"cluedo_env"}
    assert setuptools["package-dir"] == FOLDERS


_USER_PACKAGE = 'raise ImportError("the user\'s own {name} package was imported: cluedo_env must not reach it")\n'

_SCRIPT = """
import os, sys
import gymnasium, numpy as np
import cluedo_env, cluedo_env.agents, cluedo_env.training
site = os.environ["SITE"]
for module in (cluedo_env, cluedo_env.agents, cluedo_env.training):
    assert module.__file__.startswith(site), (module.__name__, module.__file__)
env = gymnasium.make("cluedo_env/Cluedo-v0", opponents="random")
obs, info = env.reset(seed=0)
for _ in range(20):
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    if terminated or truncated:
        obs, info = env.reset()
aec = cluedo_env.env()
aec.reset(seed=1)
for agent in aec.agent_iter(40):
    obs, reward, term, trunc, info = aec.last()
    aec.step(None if term or trunc else aec.action_space(agent).sample(obs["action_mask"]))
print("envs ok")
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(site, workdir): the wheel installed into ``site``; ``workdir`` holds the user's own agents/ and training/."""
    base = tmp_path_factory.mktemp("wheel")
    print("building and installing the wheel (about 20 s)", file=sys.stderr)
    # setuptools builds in the source tree (build/): build from a copy, so the checkout is left as it was
    source = base / "source"
    for folder in FOLDERS.values():
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(base / "dist"),
                    str(source)], check=True, cwd=base, env={**os.environ, "PYTHONWARNINGS": "ignore"})  # fmt: skip
    (wheel,) = (base / "dist").glob("cluedo_env-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        tops = {n.split("/")[0] for n in zf.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
        assert "cluedo_env/training/pretrained/index.json" in zf.namelist()
        assert "cluedo_env/data/board.txt" in zf.namelist()
    assert tops == {"cluedo_env"}
    site = base / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                   check=True)  # fmt: skip
    work = base / "work"
    for name in ("agents", "training"):
        (work / name).mkdir(parents=True)
        (work / name / "__init__.py").write_text(_USER_PACKAGE.format(name=name))
        (work / name / "single_agent.py").write_text(_USER_PACKAGE.format(name=name))
    return site, work


def _run(site: Path, work: Path, *args: str, timeout: float = 900) -> str:
    # The working folder first on the path (as a script run from there has it), then the installed wheel.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work), str(site)]), "SITE": str(site)}
    done = subprocess.run([sys.executable, *args], cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.xdist_group("wheel")
def test_the_installed_wheel_runs_beside_a_users_own_agents_and_training(installed):
    site, work = installed
    assert "envs ok" in _run(site, work, "-c", _SCRIPT)
    out = _run(site, work, "-m", "cluedo_env.cli", "evaluate", "--players", "pretrained:vs_heuristic", "random",
               "random", "random", "--games", "4", "--batch-size", "4", "--out", str(work / "eval"))  # fmt: skip
    assert "pretrained:vs_heuristic" in out
    config = work / "tiny.yaml"
    config.write_text("run_dir: run\nseed: 0\ntotal_timesteps: 128\ncheckpoint_every: 0\n"
                      "env: {num_envs: 8, opponents: random, seat: random, macro_moves: true}\n"
                      "ppo: {n_steps: 16, batch_size: 64, n_epochs: 1, net_arch: [16]}\n"
                      "eval: {every: 0, games: 0}\n")  # fmt: skip
    _run(site, work, "-m", "cluedo_env.training", "--config", str(config), "--no-progress")
    assert (work / "run" / "model.zip").is_file()
