"""RLlib integration (training/rllib_*.py) on a local Ray with num_cpus=2: masked multi-agent PPO trains,
no illegal action reaches the env, checkpoints are written, restored and resumed, and a checkpoint
plays through the tournament evaluator. Skipped when ray[rllib] is not installed."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] not installed (pins gymnasium==1.2.2, docs/rllib_scaling.md)")

import ray  # noqa: E402
import torch  # noqa: E402

from agents.registry import register_prefix  # noqa: E402
from cluedo_env.rules.actions import IllegalActionError  # noqa: E402

SMALL = {
    "env": {"preset": "cards", "players": 4},
    "ray": {"num_cpus": 2},
    "env_runners": {"num_env_runners": 1, "num_envs_per_env_runner": 1},
    "ppo": {"train_batch_size_per_learner": 600, "minibatch_size": 200, "num_epochs": 1},
    "model": {"fcnet_hiddens": [64]},
    "eval": {"every": 0},
    "checkpoint_every": 1,
}


@pytest.fixture(scope="module")
def local_ray():
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def vs_random_run(local_ray, tmp_path_factory):
    from training.rllib_train import load_config, train

    cfg = load_config("configs/rllib_vs_random.yaml", iterations=2, run_dir=str(tmp_path_factory.mktemp("rl")), **SMALL)
    return cfg, train(cfg, log=lambda *a: None)


def test_env_raises_on_illegal_actions():
    """RLlib steps the bare AEC env: an illegal action raises, so a finished run proves none was sent."""
    from training.rllib_train import make_env

    env = make_env({"preset": "cards", "players": 4})
    obs, _ = env.reset(seed=0)
    ((agent, o),) = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step({agent: illegal})


def test_random_module_picks_legal_actions():
    from ray.rllib.core.columns import Columns

    from training.rllib_module import RandomLegalRLModule
    from training.rllib_train import make_env

    env = make_env({"preset": "cards", "players": 4})
    space = env.get_observation_space("player_0")
    module = RandomLegalRLModule(observation_space=space, action_space=env.get_action_space("player_0"))
    rng = np.random.default_rng(0)
    mask = (rng.random((64, 870)) < 0.05).astype(np.int8)
    mask[np.arange(64), rng.integers(0, 870, 64)] = 1
    obs = {"observation": np.zeros((64, space["observation"].shape[0]), np.int8), "action_mask": mask}
    out = module.forward_exploration({Columns.OBS: obs})[Columns.ACTIONS]
    assert mask[np.arange(64), out].all()


def test_training_iterations_with_masking_and_checkpoints(vs_random_run):
    from training.rllib_module import load_module
    from training.rllib_train import latest_checkpoint

    cfg, summary = vs_random_run
    rows = summary["iterations"]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert all(int(r["env_steps"]) >= 600 and int(r["episodes"]) > 0 for r in rows)
    ckpt = latest_checkpoint(cfg["run_dir"])
    assert ckpt is not None and ckpt.name == "iter_000002" and str(ckpt) == summary["checkpoint"]
    first = load_module(ckpt.parent / "iter_000001")
    second = load_module(ckpt)
    a, b = first.state_dict(), second.state_dict()
    assert a.keys() == b.keys()
    assert any(not torch.equal(torch.as_tensor(a[k]), torch.as_tensor(b[k])) for k in a), "main was not trained"


def test_restored_module_masks_its_logits(vs_random_run):
    from ray.rllib.core.columns import Columns

    from training.rllib_module import load_module
    from training.rllib_train import latest_checkpoint, make_env

    cfg, _ = vs_random_run
    module = load_module(latest_checkpoint(cfg["run_dir"]))
    env = make_env(cfg["env"])
    obs, _ = env.reset(seed=1)
    (o,) = obs.values()
    batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in o.items()}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
    legal = torch.as_tensor(o["action_mask"]) > 0
    assert logits[~legal].max() < -1e30 < logits[legal].min()


def test_resume_continues_from_the_latest_checkpoint(vs_random_run):
    from training.rllib_train import latest_checkpoint, train

    cfg, _ = vs_random_run
    lines = []
    summary = train({**cfg, "iterations": 3}, resume=True, log=lines.append)
    assert lines[0].startswith("resumed from") and "iter_000002" in lines[0]
    assert [r["iteration"] for r in summary["iterations"]] == [3]
    assert latest_checkpoint(cfg["run_dir"]).name == "iter_000003"


def test_selfplay_shared_policy_trains_one_iteration(local_ray, tmp_path):
    from training.rllib_train import build_config, load_config, train

    cfg = load_config("configs/rllib_selfplay.yaml", iterations=1, run_dir=str(tmp_path), **SMALL)
    assert set(build_config(cfg).policies) == {"main"}
    summary = train(cfg, log=lambda *a: None)
    (row,) = summary["iterations"]
    assert int(row["env_steps"]) >= 600 and row["main_return"] is not None


def test_checkpoint_plays_through_the_evaluator(vs_random_run, tmp_path):
    import training.rllib_module as rm
    from cluedo_env.cli import evaluate as ev
    from training.rllib_train import latest_checkpoint

    cfg, _ = vs_random_run
    made: list[rm.RllibAgent] = []

    def counting(spec, seed=None, **kw):
        made.append(rm.RllibAgent(spec, seed=seed, **kw))
        return made[-1]

    register_prefix("rllib", counting, replace=True)
    try:
        ckpt = latest_checkpoint(cfg["run_dir"])
        res = ev.main(["--players", f"rllib:{ckpt}", "random", "random", "random", "--games", "8",
                       "--preset", "cards", "--out", str(tmp_path), "--no-progress"])  # fmt: skip
    finally:
        rm.register()
    entry = res["entries"][0]
    assert entry["player"] == f"rllib:{ckpt}" and entry["games"] == 8
    assert made and sum(a.illegal for a in made) == 0
    assert (tmp_path / "tournament.json").is_file()
