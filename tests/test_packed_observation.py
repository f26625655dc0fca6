"""The torch unpacking of packed observations (``cluedo_env.training.packed_observation.Unpack``) and the learner envs'
packed observations, against the int8 layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cluedo_env.training.packed_observation import Unpack, packed_config

from cluedo_env.engine.observation import packed_layout, unpack
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.errors import CluedoTypeError
from cluedo_env.rules.config import RulesConfig


def _played(preset: str, players: int, steps: int, seed: int) -> list[tuple[VectorEngine, np.ndarray, np.ndarray]]:
    """(engine, packed rows of every seat, int8 rows of every seat) after each of ``steps`` random steps."""
    eng = VectorEngine(RulesConfig.from_preset(preset, players=players), 32)
    eng.reset(seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        eng.step(eng.sample_random_actions(rng))
        for seat in range(players):
            out.append((eng, eng.observe(player=seat, packed=True), eng.observe(player=seat)))
    return out


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("classic", 6), ("cards", 3), ("cards", 5)])
def test_unpack_equals_the_int8_layout_on_engine_positions(preset: str, players: int) -> None:
    cfg = RulesConfig.from_preset(preset, players=players)
    layer = Unpack(cfg)
    for _, packed, int8 in _played(preset, players, 40, seed=players):
        want = unpack(packed, cfg)
        assert np.array_equal(want, int8)
        got = layer(torch.from_numpy(packed))
        assert got.dtype == torch.float32 and got.shape == (len(packed), layer.out_size)
        assert np.array_equal(got.numpy(), int8.astype(np.float32))
        # floats holding the bytes (what SB3 and RLlib hand a network) unpack alike
        assert torch.equal(layer(torch.from_numpy(packed).float()), got)


def test_unpack_batched_shapes_no_grad_and_training() -> None:
    cfg = RulesConfig.from_preset("classic")
    layer = Unpack(cfg)
    rows = np.stack([p for _, p, _ in _played("classic", 4, 5, seed=1)])  # (20, 32, size)
    x = torch.from_numpy(rows)
    with torch.no_grad():
        got = layer(x)
    assert got.shape == (*rows.shape[:2], layer.out_size)
    assert np.array_equal(got.numpy(), unpack(rows, cfg).astype(np.float32))
    assert layer(x[0, 0]).shape == (layer.out_size,)
    # as the first layer of a trained network: gradients flow to the layers after it
    net = torch.nn.Sequential(layer, torch.nn.Linear(layer.out_size, 3))
    net.train()
    net(x[0].float()).sum().backward()
    assert net[1].weight.grad is not None and not list(layer.parameters())
    assert not layer.state_dict()  # nothing to save: the layout is a function of the rules


def test_unpack_refuses_bad_input() -> None:
    cfg = RulesConfig.from_preset("classic")
    layer = Unpack(cfg)
    size = packed_layout(cfg).size
    with pytest.raises(CluedoTypeError, match="uint8"):
        layer(torch.zeros((2, size), dtype=torch.int8))
    with pytest.raises(CluedoTypeError, match=f"\\(\\.\\.\\., {size}\\)"):
        layer(torch.zeros((2, size + 1), dtype=torch.uint8))
    with pytest.raises(CluedoTypeError, match="tensor"):
        layer(np.zeros((2, size), np.uint8))
    with pytest.raises(CluedoTypeError, match="bytes"):
        packed_config(100)
    assert packed_config(size).has_board and not packed_config(packed_layout(RulesConfig.from_preset("cards")).size
                                                               ).has_board  # fmt: skip


# ======================================== the learner envs' packed observations
def _masked_random(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row."""
    u = rng.random(masks.shape) * masks
    return u.argmax(1)


@pytest.mark.parametrize(("preset", "macro_moves"), [("classic", True), ("cards", False)])
def test_packed_env_observations_unpack_to_the_int8_env_observations(preset: str, macro_moves: bool) -> None:
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv

    kwargs = {"opponents": ["heuristic", "random", "random"], "seat": "random", "macro_moves": macro_moves}
    packed_env = CluedoVecEnv(24, preset, seed=5, packed_observation=True, **kwargs)
    int8_env = CluedoVecEnv(24, preset, seed=5, **kwargs)
    cfg = packed_env.core.config
    size = packed_layout(cfg).size
    space = packed_env.observation_space
    assert space.dtype == np.uint8 and space.shape == (size,) and space.high.max() == 255
    a, b = packed_env.reset(), int8_env.reset()
    assert a.dtype == np.uint8 and space.contains(a[0]) and np.array_equal(unpack(a, cfg), b)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(60):
        masks = int8_env.action_masks()
        assert np.array_equal(packed_env.action_masks(), masks)
        actions = _masked_random(masks, rng)
        a, ra, da, ia = packed_env.step(actions)
        b, rb, db, ib = int8_env.step(actions)
        assert np.array_equal(unpack(a, cfg), b) and np.array_equal(ra, rb) and np.array_equal(da, db)
        for i in np.flatnonzero(db):
            ends += 1
            assert np.array_equal(unpack(ia[i]["terminal_observation"], cfg), ib[i]["terminal_observation"])
    assert ends > 0


def test_packed_observation_option_is_checked() -> None:
    from cluedo_env.training.learner_options import LearnerOptions
    from cluedo_env.training.single_agent import CluedoSingleAgentEnv

    from cluedo_env.rules.config import ConfigError

    with pytest.raises(ConfigError, match="needs observation='full' and belief=False"):
        LearnerOptions(4, "classic", belief=True, packed_observation=True)
    with pytest.raises(TypeError, match="packed_observation must be True or False"):
        LearnerOptions(4, "classic", packed_observation="yes")
    env = CluedoSingleAgentEnv("cards", packed_observation=True, seed=1)
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs) and obs.shape == (packed_layout(env.core.config).size,)
    plain = CluedoSingleAgentEnv("cards", seed=1)
    assert np.array_equal(unpack(obs, env.core.config), plain.reset(seed=1)[0])


def test_packed_training_run_checkpoint_plays_by_name(tmp_path) -> None:
    """A tiny MaskablePPO run on packed observations: the policy unpacks in its first layer, the checkpoint
    says so, and the ``ckpt:`` player hands it packed rows."""
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.training.sb3.checkpoints import load_model
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.packed_extractor import PackedObservationExtractor
    from cluedo_env.training.sb3.train import Trainer

    from cluedo_env.errors import TrainConfigError

    def tiny(run_dir, **env):
        return load_train_config(None, run_dir=str(run_dir), seed=0, total_timesteps=256, checkpoint_every=256,
                                 env={"num_envs": 16, "opponents": "random", "seat": "random", "macro_moves": True,
                                      **env},
                                 ppo={"n_steps": 16, "batch_size": 64, "n_epochs": 1, "net_arch": [32]},
                                 eval={"every": 0, "games": 8, "batch_size": 8})  # fmt: skip

    run = tmp_path / "packed"
    Trainer(tiny(run, packed_observation=True), progress=False).run()
    model = load_model(run / "model.zip")
    cfg = RulesConfig.from_preset("classic", players=4)
    assert model.cluedo_meta["packed_observation"] is True
    assert model.cluedo_meta["obs_size"] == packed_layout(cfg).size == 555
    assert isinstance(model.policy.features_extractor, PackedObservationExtractor)
    player = make_agent(f"ckpt:{run / 'model.zip'}", deterministic=False, seed=0)
    assert player.packed_observation
    others = [make_agent(n, seed=k) for k, n in enumerate(["heuristic", "random", "random"])]
    assert len(play_games(cfg, [player, *others], 16, batch_size=8, seed=3)) == 16
    # the policy on packed rows is the same function as on the int8 rows it unpacks to
    eng = VectorEngine(cfg, 8)
    eng.reset(2)
    packed = eng.observe(packed=True)
    with torch.no_grad():
        features = model.policy.extract_features(torch.from_numpy(packed).float())
    assert np.array_equal(features.numpy(), eng.observe().astype(np.float32))
    with pytest.raises(TrainConfigError, match="env.packed_observation"):
        tiny(tmp_path / "x", packed_observation=True, belief=True)
    with pytest.raises(TrainConfigError, match="env.packed_observation"):
        tiny(tmp_path / "x", packed_observation=1)
