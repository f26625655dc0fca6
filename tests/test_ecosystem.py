"""The envs through the tools RL practitioners reach for first, and strict actions.

Each test drives an env with a library's own checker or wrapper: Gymnasium's ``check_env`` and
vector wrappers, SB3's ``make_vec_env``/``check_env``/``VecNormalize``, sb3-contrib's
``get_action_masks``, PettingZoo's ``api_test``/``seed_test``.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import warnings
from pathlib import Path

import cluedo_env.training.learner_core
import cluedo_env.training.learner_options
import cluedo_env.training.single_agent
import gymnasium
import numpy as np
import pytest
from cluedo_env.agents.players.base import sample_legal
from cluedo_env.training.single_agent import CluedoSingleAgentEnv, CluedoVectorEnv

import cluedo_env
from cluedo_env.rules.actions import IllegalActionError
from cluedo_env.rules.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]
GYM_ID = cluedo_env.GYMNASIUM_ID


def _python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (a clean registry), this checkout first on the path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------------ registration and packaging
def test_import_cluedo_env_alone_registers_every_id():
    out = _python(
        "import sys, gymnasium, pettingzoo, cluedo_env\n"
        "assert 'cluedo_env.training.single_agent' not in sys.modules, 'registration must not import the envs'\n"
        "env = gymnasium.make('cluedo_env/Cluedo-v0', preset='cards', players=3)\n"
        "obs, info = env.reset(seed=0)\n"
        "venv = gymnasium.make_vec('cluedo_env/Cluedo-v0', num_envs=2, preset='cards', players=3)\n"
        "assert type(venv).__name__ == 'CluedoVectorEnv', type(venv)\n"
        "pettingzoo.make('aec', 'cluedo_env/cluedo_v0', preset='cards', players=3).reset(seed=0)\n"
        "print(obs.shape, info['action_mask'].shape)\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(1385,) (870,)"


def test_gymnasium_make_with_the_module_prefix_needs_no_import():
    out = _python("import gymnasium\nenv = gymnasium.make('cluedo_env:cluedo_env/Cluedo-v0')\nprint(env.spec.id)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == GYM_ID


def test_cluedo_v0_module_version_and_typing_marker():
    from cluedo_env import cluedo_v0
    from cluedo_env.envs import aec

    assert cluedo_v0.env is aec.env and cluedo_v0.raw_env is aec.raw_env
    assert cluedo_v0.raw_env().metadata["name"] == "cluedo_v0"
    assert set(cluedo_v0.__all__) == {"env", "parallel_env", "raw_env"}
    assert cluedo_env.__version__ == importlib.metadata.version("cluedo_env")
    assert (ROOT / "cluedo_env" / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"py.typed"' in pyproject and "Typing :: Typed" in pyproject
    for name in cluedo_env.__all__:
        assert getattr(cluedo_env, name) is not None


# ------------------------------------------------------------------ Gymnasium
def test_gymnasium_check_env_with_render_modes():
    from gymnasium.utils.env_checker import check_env

    for mode in ("ansi", "rgb_array"):
        env = gymnasium.make(GYM_ID, render_mode=mode, preset="cards", players=3, seat="random")
        check_env(env.unwrapped)
        assert env.unwrapped.metadata["render_fps"] > 0
    env = CluedoSingleAgentEnv(preset="classic", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert env.spec is None and gymnasium.spec(GYM_ID).max_episode_steps is None  # truncation is max_turns


def test_render_after_the_last_step_shows_the_finished_game():
    env = CluedoSingleAgentEnv(preset="cards", players=3, render_mode="ansi", render_viewer="learner")
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    while True:
        obs, r, term, trunc, info = env.step(int(sample_legal(info["action_mask"][None].astype(bool), rng)[0]))
        if term or trunc:
            break
        assert "Game over" not in env.render()
    assert "Game over" in env.render() or "eliminated" in env.render()
    assert not info["action_mask"].any() and not env.action_masks().any()


def test_info_action_mask_and_unknown_keywords():
    env = gymnasium.make(GYM_ID, preset="classic", players=4)
    obs, info = env.reset(seed=0)
    mask = info["action_mask"]
    assert mask.dtype == np.int8 and mask.shape == (870,)
    assert (mask.astype(bool) == env.unwrapped.action_masks()).all()
    a = env.action_space.sample(mask)  # Gymnasium's own masked sampling takes it as is
    assert mask[a] == 1
    with pytest.raises(ConfigError) as err:
        gymnasium.make(GYM_ID, playerz=3)
    for keyword in ("playerz", "opponents", "seat", "belief", "render_mode", "unplayed_games", "players", "dice"):
        assert keyword in str(err.value)
    with pytest.raises(ConfigError, match="autoreset_mode"):
        CluedoVectorEnv(2, autoreset_mode="Disabled")
    with pytest.raises(ConfigError, match="render_mode"):
        CluedoSingleAgentEnv(render_mode="human")


def _own_episode_stats(num_envs: int, steps: int, **kwargs):
    """Step a wrapped vector env with random legal actions; return the wrapper's and our own (return, length)."""
    venv = gymnasium.make_vec(GYM_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    venv = gymnasium.wrappers.vector.RecordEpisodeStatistics(venv)
    obs, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    ret, length = np.zeros(num_envs), np.zeros(num_envs, int)
    reset_next = np.zeros(num_envs, bool)
    theirs, ours, unplayed = [], [], []
    for _ in range(steps):
        obs, rew, term, trunc, info = venv.step(sample_legal(info["action_mask"].astype(bool), rng))
        assert (rew[reset_next] == 0).all() and not (term | trunc)[reset_next].any()  # NEXT_STEP's reset step
        ret[~reset_next] += rew[~reset_next]
        length[~reset_next] += 1
        done = term | trunc
        for i in np.flatnonzero(done):
            ours.append((ret[i], length[i]))
            unplayed.append(bool(info["unplayed"][i]))
            theirs.append((info["episode"]["r"][i], info["episode"]["l"][i]))
        ret[done], length[done] = 0, 0
        reset_next = done
    return np.array(theirs), np.array(ours), np.array(unplayed)


def test_record_episode_statistics_counts_what_the_env_returns():
    theirs, ours, unplayed = _own_episode_stats(16, 120, preset="classic", seat="random", macro_moves=True)
    assert len(ours) > 50
    np.testing.assert_allclose(theirs, ours)
    assert set(np.unique(ours[:, 0])) <= {-1.0, 0.0, 1.0}
    assert (ours[unplayed, 1] == 1).all()  # a game over before the learner's first move: one forced step


def test_random_learner_wins_as_often_as_in_the_evaluator():
    """A random learner at a random seat against three random players wins 1 game in 4 (by symmetry, which
    is what ``scripts/evaluate.py --players random random random random`` reports) only if games that end
    before the learner's first move are counted; they are about a quarter of all games here."""
    theirs, _, unplayed = _own_episode_stats(128, 80, preset="classic", seat="random")
    wins = theirs[:, 0] == 1
    assert len(wins) > 4000
    assert abs(wins.mean() - 0.25) < 0.025
    assert 0.15 < unplayed.mean() < 0.35 and wins[unplayed].any() and not wins[unplayed].all()


def test_vector_observation_wrappers_run():
    venv = gymnasium.make_vec(GYM_ID, num_envs=4, preset="cards", players=3, seat="random")
    venv = gymnasium.wrappers.vector.DtypeObservation(venv, np.float32)
    venv = gymnasium.wrappers.vector.NormalizeObservation(venv)
    obs, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    done_seen = False
    for _ in range(40):
        obs, rew, term, trunc, info = venv.step(sample_legal(info["action_mask"].astype(bool), rng))
        assert obs.dtype == np.float32 and np.isfinite(obs).all()
        done_seen |= bool((term | trunc).any())
    assert done_seen


def test_same_step_mode_is_still_there():
    venv = gymnasium.make_vec(GYM_ID, num_envs=8, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP, seat=0)
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    obs, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, rew, term, trunc, info = venv.step(sample_legal(info["action_mask"].astype(bool), rng))
        done = term | trunc
        if done.any():
            i = int(np.flatnonzero(done)[0])
            assert info["_final_obs"][i] and info["final_obs"][i].shape == obs[i].shape
            return
    pytest.fail("no episode ended")


# ------------------------------------------------------------------ Stable-Baselines3
def test_sb3_make_vec_env_by_id_check_env_vec_normalize_and_masks():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_checker import check_env
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    check_env(gymnasium.make(GYM_ID, preset="cards", players=3).unwrapped, warn=False)
    venv = make_vec_env(GYM_ID, n_envs=2, seed=0, env_kwargs={"preset": "cards", "players": 3, "macro_moves": False})
    venv.reset()
    masks = get_action_masks(venv)
    assert masks.shape == (2, 870) and masks.dtype == bool and masks.any(1).all()
    norm = VecNormalize(venv, norm_reward=False)
    norm.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, rew, done, infos = norm.step(sample_legal(get_action_masks(norm), rng))
        assert obs.dtype == np.float32 and np.isfinite(obs).all()
    model = MaskablePPO("MlpPolicy", norm, n_steps=16, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})  # fmt: skip
    model.learn(32)
    assert model.num_timesteps >= 32


# ------------------------------------------------------------------ PettingZoo
def test_pettingzoo_api_and_seed_tests_through_the_registry_and_module():
    import pettingzoo
    from pettingzoo.test import api_test, seed_test

    from cluedo_env import cluedo_v0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(pettingzoo.make("aec", cluedo_env.PETTINGZOO_ID, preset="cards", players=3), num_cycles=60)
        seed_test(lambda: cluedo_v0.env(preset="cards", players=3), num_cycles=40)


# ------------------------------------------------------------------ strict actions
@pytest.mark.parametrize("action", ["0", 3.5, 3.0, True, np.float32(2), None, [0, 1]])
def test_gymnasium_env_refuses_actions_that_are_not_one_integer(action):
    env = CluedoSingleAgentEnv(preset="cards", players=3)
    obs, _ = env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"0\.\.869|one per game"):
        env.step(action)
    obs2, *_ = env.step(np.int64(np.flatnonzero(env.action_masks())[0]))  # the env is still usable
    assert obs2.shape == obs.shape


def test_sb3_vec_env_refuses_floats_and_names_out_of_range_actions():
    pytest.importorskip("stable_baselines3")
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv

    venv = CluedoVecEnv(4, "cards", players=3, seed=0)
    venv.reset()
    before = venv.core.eng.export_game(0)
    legal = venv.action_masks().argmax(1)
    with pytest.raises(IllegalActionError, match=r"0\.\.869"):
        venv.step(legal.astype(np.float64) + 0.5)
    with pytest.raises(IllegalActionError, match=r"0\.\.869"):
        venv.step(legal.astype(np.float64))  # integral floats too: no silent truncation
    bad = legal.copy()
    bad[2] = 9999
    with pytest.raises(IllegalActionError, match=r"game 2: action 9999 is outside Discrete\(870\)") as err:
        venv.step(bad)
    assert "-1" not in str(err.value)
    assert venv.core.eng.export_game(0) == before  # nothing changed
    obs, rew, done, infos = venv.step(legal)
    assert obs.shape == (4, 1385)


# ------------------------------------------------------------------ any policy as a player
_POLICY_FILE = """
import numpy as np

_rng = np.random.default_rng(0)


def random_policy(obs, mask):
    assert obs.shape == (2628,) and mask.shape == (870,) and mask.dtype == np.int8
    return int(_rng.choice(np.flatnonzero(mask)))


def always_zero(obs, mask):
    return 0
"""


def test_a_policy_function_is_a_player_for_the_evaluator(tmp_path):
    from cluedo_env.agents.learner.callable_player import CallablePlayer
    from cluedo_env.agents.play.registry import available_agents, make_agent
    from cluedo_env.agents.play.runner import play_games

    from cluedo_env.rules.config import RulesConfig

    policy = tmp_path / "my_policies.py"
    policy.write_text(_POLICY_FILE)
    assert "py:..." in available_agents()
    player = make_agent(f"py:{policy}:random_policy", seed=0)
    assert isinstance(player, CallablePlayer) and not player.batched
    config = RulesConfig.from_preset("classic", players=4)
    records = play_games(config, [player, make_agent("random", seed=1), make_agent("random", seed=2),
                                  make_agent("random", seed=3)], 60, batch_size=30, seed=0)  # fmt: skip
    assert len(records) == 60 and {r.winner for r in records} <= {-1, 0, 1, 2, 3}
    with pytest.raises(IllegalActionError, match=r"always_zero.*not legal"):
        play_games(config, [make_agent(f"py:{policy}:always_zero")] + [make_agent("random")] * 3, 4, seed=0)
    with pytest.raises(ValueError, match="no callable"):
        make_agent(f"py:{policy}:missing")
    # on the command line, as docs/players.md shows
    out = subprocess.run(
        [sys.executable, "scripts/evaluate.py", "--players", f"py:{policy}:random_policy", "random", "random",
         "random", "--games", "16", "--out", str(tmp_path / "eval")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "random_policy" in out.stdout


def test_a_batched_policy_function_in_the_macro_space_with_belief():
    from cluedo_env.agents.learner.callable_player import CallablePlayer
    from cluedo_env.agents.play.runner import play_games

    from cluedo_env.rules.config import RulesConfig

    calls = []

    def first_legal(obs, mask):
        calls.append(obs.shape)
        return mask.argmax(1)

    player = CallablePlayer(first_legal, batched=True, macro_moves=True, macro_accuse=True, belief=True)
    config = RulesConfig.from_preset("cards", players=3)
    play_games(config, [player, CallablePlayer(first_legal, batched=True), CallablePlayer(first_legal, batched=True)],
               6, seed=0)  # fmt: skip
    assert {shape[1] for shape in calls} == {1385, 1385 + 2 * (3 + 1) * 21 + 4}  # belief features after the obs


# ------------------------------------------------------------------ the CleanRL-style script
def test_cleanrl_ppo_script_trains_evaluates_and_saves_a_player(tmp_path, monkeypatch):
    """A short run (the full one, 200k steps, wins about 99% against random players: docs/training.md)."""

    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games

    from cluedo_env.rules.config import RulesConfig
    from scripts import cleanrl_ppo as script
    weights, numbers = tmp_path / "ppo.pt", tmp_path / "ppo.json"
    stats = script.main(["--total-timesteps", "1024", "--num-envs", "32", "--num-steps", "16", "--eval-games", "40",
                         "--save", str(weights), "--json", str(numbers)])  # fmt: skip
    assert stats["train_steps"] == 1024 and stats["eval_games"] == 40 and 0 <= stats["eval_win_rate"] <= 1
    assert weights.is_file() and numbers.is_file()
    monkeypatch.setenv("CLEANRL_PPO_WEIGHTS", str(weights))
    player = make_agent(f"py:{ROOT / 'scripts' / 'cleanrl_ppo.py'}:saved_policy")
    assert player.batched and player.actions.n == 682
    records = play_games(RulesConfig.from_preset("classic"), [player] + [make_agent("random")] * 3, 20, seed=0)
    assert len(records) == 20


# ------------------------------------------------------------------ the environment API page (docs/environment.md)
def _quick_reference() -> str:
    return (ROOT / "docs" / "environment.md").read_text()


def _table(section: str, header: str) -> list[list[str]]:
    """The rows (cells stripped of backticks) of the Markdown table whose header line starts with ``header``."""
    lines = section[section.index(header) :].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().strip("`") for c in line.strip("|").split("|")])
    return rows


def test_quick_reference_sizes_match_the_code():
    from cluedo_env.training.learner_core import LearnerCore
    from cluedo_env.training.learner_options import LearnerOptions
    from cluedo_env.training.single_agent import num_actions

    section = _quick_reference()
    rows = _table(section, "| preset | D |")
    assert len(rows) == 2
    for presets, d, belief in rows:
        sizes = [int(x) for x in belief.split("/")]
        for preset in (p.strip().strip("`") for p in presets.split(",")):
            for players, extra in zip((3, 4, 5, 6), sizes, strict=True):
                plain = LearnerCore(LearnerOptions(1, preset, rules={"players": players}))
                with_belief = LearnerCore(LearnerOptions(1, preset, rules={"players": players}, belief=True))
                assert plain.obs_size == int(d), (preset, players)
                assert with_belief.obs_size - plain.obs_size == extra == 42 * players + 46, (preset, players)
    rows = _table(section, "| `macro_moves` |")
    assert len(rows) == 4
    for macro_moves, macro_accuse, n in rows:
        assert num_actions(macro_moves == "true", macro_accuse == "true") == int(n)


def test_quick_reference_lists_every_keyword_of_the_envs():
    from cluedo_env.training.learner_options import keywords_of

    section = _quick_reference()
    documented = {k.strip().strip("`") for row in _table(section, "| keyword |") for k in row[0].split(",")}
    taken = set(keywords_of(CluedoSingleAgentEnv.__init__, CluedoVectorEnv.__init__))
    taken |= {"players", "max_turns", "dice"}  # rules flags, shown by example
    assert taken - {"num_envs"} <= documented | {"num_envs"} and "num_envs" in documented
    assert documented - {"..."} <= taken | set(cluedo_env.training.learner_options.rules_keywords())


def test_public_modules_declare_all_and_every_name_exists():
    import importlib
    import pkgutil

    import cluedo_env.agents

    declared = 0
    for package in (cluedo_env, cluedo_env.agents):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue  # runs a command when imported
            if info.name.endswith(("sb3_vec_env", "callable_player", "cli")):
                pytest.importorskip("stable_baselines3")
            module = importlib.import_module(info.name)
            names = getattr(module, "__all__", None)
            if names is not None:
                declared += 1
                assert [n for n in names if not hasattr(module, n)] == [], info.name
    assert declared >= 12
    for name in ("cluedo_env", "cluedo_env.training.single_agent", "cluedo_env.cluedo_v0",
                 "cluedo_env.agents.learner.callable_player"):
        assert importlib.import_module(name).__all__


def test_skip_mode_drops_unplayed_games_and_vector_renders():
    options = cluedo_env.training.learner_options.LearnerOptions(64, "classic", seat="random", unplayed_games="skip",
                                                                 seed=0)
    core = cluedo_env.training.learner_core.LearnerCore(options)
    core.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert not core.unplayed.any() and (core.eng.actor == core.seat).all()
        core.step(sample_legal(core.action_masks(), rng))
    assert core.skipped_games > 0 and core.unplayed_reported == 0
    with pytest.raises(ConfigError, match="unplayed_games"):
        options = cluedo_env.training.learner_options.LearnerOptions(2, unplayed_games="hide")
        cluedo_env.training.learner_core.LearnerCore(options)
    venv = CluedoVectorEnv(3, preset="cards", players=3, render_mode="ansi", seat="random")
    obs, info = venv.reset(seed=0)
    frames = venv.render()
    assert len(frames) == 3 and all(isinstance(f, str) and f for f in frames)
    for _ in range(40):  # a row that just ended (NEXT_STEP) renders its finished game
        obs, rew, term, trunc, info = venv.step(sample_legal(info["action_mask"].astype(bool), rng))
        done = term | trunc
        if done.any():
            i = int(np.flatnonzero(done)[0])
            final = venv.render()[i]
            assert "Game over" in final or "eliminated" in final
            obs, rew, term, trunc, info = venv.step(sample_legal(info["action_mask"].astype(bool), rng))
            assert venv.render()[i] != final  # after the reset step: the next game
            return
    pytest.fail("no game ended")
