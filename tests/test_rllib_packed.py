"""RLlib on packed observations (``learner.packed_observation``): the vector env's uint8 rows unpack to the int8
env's, the masked module unpacks them in its first layer, PPO trains with the bulk runner (a league seat playing
the module's snapshots on packed rows) and the checkpoint plays by name. Skipped without ray[rllib]."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] not installed (pins gymnasium==1.2.2, docs/training.md)")
pytestmark = pytest.mark.xdist_group("ray")  # one test worker runs every Ray cluster, one at a time

import torch  # noqa: E402
from helpers import RLLIB_SMALL as SMALL  # noqa: E402

from cluedo_env.engine.observation import packed_layout, unpack  # noqa: E402
from cluedo_env.rules.config import RulesConfig  # noqa: E402

PACKED = {"seat": "random", "macro_moves": True, "packed_observation": True}


def test_packed_vector_env_rows_unpack_to_the_int8_rows() -> None:
    from cluedo_env.training.rllib.vector_env import make_vector_env

    base = {"num_envs": 6, "preset": "cards", "players": 4, "seed": 3, "opponents": "heuristic"}
    packed = make_vector_env({**base, "learner": PACKED})
    plain = make_vector_env({**base, "learner": {**PACKED, "packed_observation": False}})
    assert packed.single_observation_space.dtype == np.uint8
    cfg = RulesConfig.from_preset("cards", players=4)
    size = packed_layout(cfg).size
    a, _ = packed.reset(seed=3)
    b, _ = plain.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert np.array_equal(unpack(a[:, :size], cfg), b[:, : -packed.single_action_space.n])
        assert np.array_equal(a[:, size:], b[:, -packed.single_action_space.n :])  # the masks
        mask = b[:, -packed.single_action_space.n :]
        actions = (rng.random(mask.shape) * mask).argmax(1)
        a = packed.step(actions)[0]
        b = plain.step(actions)[0]


def test_ppo_trains_on_packed_rows_and_the_checkpoint_plays(tmp_path) -> None:
    import ray
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.training.rllib.config import load_config
    from cluedo_env.training.rllib.module import load_module, module_options
    from cluedo_env.training.rllib.train import latest_checkpoint, train
    from cluedo_env.training.rllib.vector_env import make_vector_env
    from ray.rllib.core.columns import Columns

    from cluedo_env.errors import TrainConfigError

    cfg = load_config(None, iterations=1, run_dir=str(tmp_path), opponents=["heuristic", "league", "random"],
                      league={"snapshot_every": 1, "max_snapshots": 2}, learner=PACKED, ray={"num_cpus": 1},
                      **SMALL)  # fmt: skip
    try:
        summary = train(cfg, log=lambda *a: None)
    finally:
        ray.shutdown()
    (row,) = summary["iterations"]
    assert int(row["env_steps"]) >= 128
    ckpt = latest_checkpoint(cfg.run_dir)
    module = load_module(ckpt)
    assert module.packed and module_options(module)["packed_observation"] is True
    # the module on packed rows is the same function as on the int8 rows they unpack to
    venv = make_vector_env({**cfg.env, "num_envs": 4, "seed": 1, "learner": PACKED, "opponents": "random"})
    obs, _ = venv.reset(seed=1)
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: torch.as_tensor(obs)})[Columns.ACTION_DIST_INPUTS]
    legal = torch.as_tensor(obs[:, -logits.shape[1] :]) > 0
    assert logits[~legal].max() < -1e30 < logits[legal].min()
    config = RulesConfig.from_preset("cards", players=4, max_turns=40)  # a barely trained learner rarely accuses
    player = make_agent(f"rllib:{ckpt}", seed=0)
    assert player.packed_observation
    others = [make_agent(n, seed=k) for k, n in enumerate(["heuristic", "random", "random"])]
    assert len(play_games(config, [player, *others], 8, batch_size=8, seed=3)) == 8
    assert player.illegal == 0
    with pytest.raises(TrainConfigError, match="learner.packed_observation"):
        load_config(None, learner={**PACKED, "belief": True})
