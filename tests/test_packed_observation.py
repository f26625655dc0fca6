"""The torch unpacking of packed observations (``training.packed_observation.Unpack``) and the learner envs'
packed observations, against the int8 layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cluedo_env.engine.observation import packed_layout, unpack
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.errors import CluedoTypeError
from cluedo_env.rules.config import RulesConfig
from training.packed_observation import Unpack, packed_config


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
