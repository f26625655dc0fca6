"""The declared floors of numpy, numba, gymnasium and pettingzoo work: install exactly them and play.

    python scripts/check_lowest_versions.py            # make test runs it (a few minutes: downloads, compiling)
    python scripts/check_lowest_versions.py --keep     # leave the temporary venv for a look (its path is printed)

Why: ``pyproject.toml`` promises that the project works with any version from its floors up; the test suite runs
with the pinned, newest ones (``constraints.txt``). This check creates a fresh venv, installs the lowest declared
versions of the four libraries the engine and envs are built on (``numpy==LOW`` ..., from the ``>=LOW`` in
``pyproject.toml``), the other base dependencies at whatever pip picks (no extras: no torch), and the project with
``--no-deps`` (from a copy of the checkout, so that nothing is built or cached inside it), then runs a smoke in that
venv from a folder outside the checkout: import, 100 steps each of ``env()``, ``parallel_env()``, the Gymnasium
env (with ``mask_in_observation``) and its vector env, and one game of four ``deducer`` players, which compiles the
engine's and the players' kernels under the oldest numba. Any failure exits non-zero.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's scripts package beside the installed ones
    sys.path.insert(0, str(ROOT))
from scripts.throwaway_venv import install_project, run, run_check, throwaway_venv  # noqa: E402

FLOORED = ("numpy", "numba", "gymnasium", "pettingzoo")

SMOKE = r"""
import sys, time
t0 = time.perf_counter()
import gymnasium, numba, numpy as np, pettingzoo
import cluedo_env
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import play_games

from packaging.version import Version

want = dict(arg.split("==") for arg in sys.argv[1:])
have = {"numpy": np.__version__, "numba": numba.__version__, "gymnasium": gymnasium.__version__,
        "pettingzoo": pettingzoo.__version__}
print("versions:", ", ".join(f"{k} {v}" for k, v in have.items()), flush=True)
for name, version in want.items():
    assert Version(have[name]) == Version(version), (name, have[name], version)
assert cluedo_env.__file__.find("site-packages") > 0, cluedo_env.__file__  # the installed copy, not a checkout
rng = np.random.default_rng(0)

env = cluedo_env.env(preset="classic", players=4)
env.reset(seed=0)
for _ in range(100):
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        env.reset()
        continue
    env.step(env.action_space(env.agent_selection).sample(obs["action_mask"]))
print(f"env(): 100 steps ({time.perf_counter() - t0:.1f} s)", flush=True)

par = cluedo_env.parallel_env(preset="classic", players=4)
obs, infos = par.reset(seed=0)
for _ in range(100):
    if not par.agents:
        obs, infos = par.reset()
    obs, rewards, terminations, truncations, infos = par.step(
        {a: par.action_space(a).sample(obs[a]["action_mask"]) for a in par.agents})
print(f"parallel_env(): 100 steps ({time.perf_counter() - t0:.1f} s)", flush=True)

gym = gymnasium.make(cluedo_env.GYMNASIUM_ID, preset="classic", players=4, mask_in_observation=True)
obs, info = gym.reset(seed=0)
for _ in range(100):
    obs, reward, terminated, truncated, info = gym.step(gym.action_space.sample(obs["action_mask"]))
    if terminated or truncated:
        obs, info = gym.reset()
vec = gymnasium.make_vec(cluedo_env.GYMNASIUM_ID, num_envs=4, preset="classic", players=4)
obs, info = vec.reset(seed=0)
for _ in range(100):
    mask = info["action_mask"].astype(bool)
    obs, reward, terminated, truncated, info = vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
print(f"Gymnasium env and vector env: 100 steps each ({time.perf_counter() - t0:.1f} s)", flush=True)

config = cluedo_env.make_config("classic", players=4)
(game,) = play_games(config, [make_agent("deducer", seed=s) for s in range(4)], 1, batch_size=1, seed=0)
assert game.winner is not None, game
print(f"4 deducers: {game.ending} after {game.turns} turns ({time.perf_counter() - t0:.1f} s)", flush=True)
print("smoke passed")
"""


def floors(pyproject: str) -> dict[str, str]:
    """The ``>=`` floor of each of :data:`FLOORED` in ``pyproject``'s ``dependencies`` (a text, not parsed as TOML,
    so that Python 3.10, without ``tomllib``, runs this too)."""
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.S | re.M)
    if block is None:
        raise SystemExit("error: pyproject.toml has no dependencies = [...] list")
    out = {}
    for name in FLOORED:
        found = re.search(rf'^\s*"{name}>=([0-9][0-9.]*)[,"]', block.group(1), re.M)
        if found is None:
            raise SystemExit(f"error: pyproject.toml declares no floor for {name} (a '{name}>=X' dependency)")
        out[name] = found.group(1)
    return out


def other_dependencies(pyproject: str) -> list[str]:
    """The base dependencies besides :data:`FLOORED`, as declared (pip picks their versions)."""
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.S | re.M)
    assert block is not None
    deps = re.findall(r'^\s*"([^"]+)"', block.group(1), re.M)
    return [d for d in deps if re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower() not in FLOORED]


def check(python: str, keep: bool) -> None:
    """Build the venv, install, run the smoke. Raises on any failure."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    lows = floors(text)
    pins = [f"{name}=={version}" for name, version in lows.items()]
    print(f"Lowest declared versions ({', '.join(pins)}): a fresh venv, the installs and a smoke; this takes a few "
          "minutes (scripts/check_lowest_versions.py)", flush=True)
    with throwaway_venv(python, "cluedo-lowest-", keep) as (tmp, py, env):
        run([py, "-m", "pip", "install", "--quiet", *pins, *other_dependencies(text)], env=env)
        install_project(tmp, py, env)
        run([py, "-c", SMOKE, *pins], {SMOKE: "<the smoke>"}, cwd=tmp, env=env)  # outside the checkout


def main(argv: list[str] | None = None) -> int:
    return run_check(check, "lowest-versions", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
