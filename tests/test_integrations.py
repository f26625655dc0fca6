"""The RL libraries' routes: the native TorchRL env, its benchmark, and one example per library with tiny sizes.

Each test skips, with the reason, when its library is not installed (they are optional extras:
``pip install -e '.[torchrl]'`` and so on; docs/integrations.md).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the integrations need torch (the train extra)")


# ------------------------------------------------------------------ the native TorchRL env
def _torchrl():
    pytest.importorskip("torchrl", reason="the torchrl extra is not installed")
    from cluedo_env.training.torchrl_env import CluedoTorchRLEnv

    return CluedoTorchRLEnv


def test_torchrl_env_passes_torchrl_spec_check():
    from torchrl.envs.utils import check_env_specs

    env = _torchrl()(4, seed=0, seat="random", players=3)
    check_env_specs(env)
    assert env.batch_size == torch.Size([4])
    assert env.observation_spec["observation"].dtype == torch.int8
    assert env.observation_spec["action_mask"].dtype == torch.bool


def test_torchrl_env_plays_the_same_games_as_the_gymnasium_vector_env():
    """Same options, seed and actions: the same observations, masks, rewards and ends as CluedoVectorEnv in
    SAME_STEP mode (the final observation of a finished game under "next", the next game's in the root)."""
    from cluedo_env.training.single_agent import CluedoVectorEnv
    from gymnasium.vector import AutoresetMode

    n, kw = 6, {"seed": 3, "seat": "random", "players": 3, "max_turns": 12}
    env = _torchrl()(n, **kw)
    ref = CluedoVectorEnv(n, autoreset_mode=AutoresetMode.SAME_STEP, **{k: v for k, v in kw.items() if k != "seed"})
    td = env.reset()
    ref_obs, info = ref.reset(seed=3)
    rng = np.random.default_rng(0)
    ended_games = 0
    for _ in range(60):
        np.testing.assert_array_equal(td["observation"].numpy(), ref_obs)
        np.testing.assert_array_equal(td["action_mask"].numpy(), info["action_mask"].astype(bool))
        legal = info["action_mask"].astype(bool)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
        td["action"] = torch.from_numpy(actions)
        out, td = env.step_and_maybe_reset(td)
        ref_obs, rew, term, trunc, info = ref.step(actions)
        np.testing.assert_array_equal(out["next", "reward"].numpy()[:, 0], rew.astype(np.float32))
        np.testing.assert_array_equal(out["next", "terminated"].numpy()[:, 0], term)
        np.testing.assert_array_equal(out["next", "truncated"].numpy()[:, 0], trunc)
        ended = term | trunc
        np.testing.assert_array_equal(out["next", "done"].numpy()[:, 0], ended)
        for i in np.flatnonzero(ended):
            np.testing.assert_array_equal(out["next", "observation"][i].numpy(), info["final_obs"][i])
            assert out["next", "action_mask"][i].nonzero().flatten().tolist() == [0]  # nothing to play there
        assert not td["done"].any() and not td["terminated"].any() and not td["truncated"].any()
        ended_games += int(ended.sum())
    assert ended_games >= n  # the comparison crossed many game ends (max_turns=12 truncates the long ones)


def test_torchrl_env_in_a_transformed_env_resets_through_reset_keys_alike():
    """TransformedEnv takes TorchRL's generic partial reset ("_reset" rows) instead of the env's own
    step_and_maybe_reset: the same data either way, and ActionMask's masked spec draws legal actions."""
    from torchrl.envs import ActionMask, TransformedEnv

    make = _torchrl()
    plain, wrapped = make(6, seed=5, max_turns=10), TransformedEnv(make(6, seed=5, max_turns=10), ActionMask())
    tp, tw = plain.reset(), wrapped.reset()
    ends = 0
    for _ in range(40):
        tw = wrapped.rand_action(tw)
        assert tw["action_mask"][torch.arange(6), tw["action"]].all()
        tp["action"] = tw["action"].clone()
        (op, tp), (ow, tw) = plain.step_and_maybe_reset(tp), wrapped.step_and_maybe_reset(tw)
        for key in ("observation", "action_mask", "done"):
            assert torch.equal(op["next", key], ow["next", key]) and torch.equal(tp[key], tw[key])
        ends += int(op["next", "done"].sum())
    assert ends >= 6


def test_torchrl_env_rand_action_is_legal_and_rollout_runs():
    env = _torchrl()(5, seed=1, seat="random")
    td = env.reset()
    for _ in range(20):
        td = env.rand_action(td)
        a = td["action"]
        assert td["action_mask"][torch.arange(5), a].all()
        _, td = env.step_and_maybe_reset(td)
    rollout = env.rollout(10, break_when_any_done=False)
    assert rollout.batch_size == torch.Size([5, 10])


def test_torchrl_env_refuses_to_restart_a_game_in_progress():
    env = _torchrl()(3, seed=0)
    td = env.reset()
    td["_reset"] = torch.tensor([[True], [False], [False]])
    with pytest.raises(RuntimeError, match=r"still going on .*row 0"):
        env.reset(td)


def test_torchrl_env_seed_repeats_the_games():
    make = _torchrl()
    a, b = make(4, seat="random"), make(4, seat="random")
    a.set_seed(7)
    b.set_seed(7)
    ta, tb = a.reset(), b.reset()
    from cluedo_env.training.torchrl_env import sample_masked

    draws = torch.Generator().manual_seed(0)
    for _ in range(10):
        assert torch.equal(ta["action_mask"], tb["action_mask"])
        ta["action"] = tb["action"] = sample_masked(ta["action_mask"], draws)
        (oa, ta), (ob, tb) = a.step_and_maybe_reset(ta), b.step_and_maybe_reset(tb)
        assert torch.equal(oa["next", "observation"], ob["next", "observation"])


def test_torchrl_env_refuses_unknown_and_gymnasium_only_options():
    from cluedo_env.rules.config import ConfigError

    make = _torchrl()
    with pytest.raises(ConfigError, match="unknown keyword"):
        make(2, oponents="random")
    with pytest.raises(ConfigError, match="mask_in_observation"):
        make(2, mask_in_observation=True)


def test_sample_masked_draws_only_legal_actions_uniformly():
    _torchrl()
    from cluedo_env.training.torchrl_env import sample_masked

    mask = torch.zeros(4000, 6, dtype=torch.bool)
    mask[:, [1, 4]] = True
    draws = sample_masked(mask, torch.Generator().manual_seed(0))
    assert set(draws.tolist()) == {1, 4}
    assert abs((draws == 1).float().mean().item() - 0.5) < 0.05
    with pytest.raises(ValueError, match="allows no action"):
        sample_masked(torch.zeros(2, 6, dtype=torch.bool))


def test_bench_integrations_prints_its_table():
    _torchrl()
    from scripts import bench_integrations

    rows = bench_integrations.main(["--batch", "8", "--steps", "4", "--batches", "1", "--pz-frames", "20"])
    assert [r["route"] for r in rows] == ["native", "native, compact_obs", "pettingzoo"]
    assert rows[0]["frames"] == 8 * 4 and all(r["frames_per_s"] > 0 for r in rows)


# ------------------------------------------------------------------ one example per library
def _check(result: dict, steps: int) -> None:
    assert result["steps"] >= steps
    assert 0.0 <= result["win_rate"] <= 1.0 and result["games"] >= 4


def test_torchrl_ppo_example_trains_and_evaluates():
    _torchrl()
    from scripts.examples import torchrl_ppo

    _check(torchrl_ppo.main(["--steps", "64", "--num-envs", "8", "--rollout", "8", "--eval-games", "4",
                             "--hidden", "16"]), 64)  # fmt: skip


def test_skrl_ppo_example_trains_and_evaluates():
    pytest.importorskip("skrl", reason="the skrl extra is not installed")
    from scripts.examples import skrl_ppo

    _check(skrl_ppo.main(["--steps", "64", "--num-envs", "8", "--rollout", "8", "--eval-games", "4",
                          "--hidden", "16"]), 64)  # fmt: skip


def test_tianshou_dqn_example_trains_and_evaluates():
    pytest.importorskip("tianshou", reason="tianshou is not installed (the tianshou extra, or make setup)")
    from scripts.examples import tianshou_dqn

    _check(tianshou_dqn.main(["--steps", "64", "--num-envs", "2", "--eval-games", "4", "--hidden", "16"]), 64)



def test_pufferlib_example_trains_and_evaluates():
    pytest.importorskip("pufferlib", reason="pufferlib 3.0 builds from source and downloads Raylib while installing")
    from scripts.examples import pufferlib_ppo

    _check(pufferlib_ppo.main(["--steps", "64", "--num-envs", "8", "--rollout", "8", "--eval-games", "4",
                               "--hidden", "16"]), 64)  # fmt: skip


def test_check_agilerl_installs_the_agilerl_extra_and_the_train_extras_torch():
    """The CI check (scripts/check_agilerl.py, a venv of its own) installs exactly what pyproject.toml's ``agilerl``
    extra pins, and the torch the ``train`` extra pins (the CPU build the project is tested with)."""
    from pathlib import Path

    import tomllib

    from scripts import check_agilerl

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    extras = extras["project"]["optional-dependencies"]
    torch_pin = next(p for p in extras["train"] if p.startswith("torch=="))
    assert sorted(check_agilerl.PINS) == sorted([*extras["agilerl"], torch_pin])
    assert all("==" in pin for pin in check_agilerl.PINS)
