"""Packed observations inside a network: :class:`Unpack`, the torch counterpart of ``observation.unpack``.

An env with ``packed_observation=True`` hands out the engine's packed rows
(:func:`cluedo_env.engine.observation.packed_layout`: the 0/1 slots as bits, then a byte per count), a fifth of
the int8 layout's bytes: the env writes, the rollout buffer stores and the batches copy a fifth of the memory.
The network unpacks them in its first layer, into exactly the float values of the int8 layout, so a policy sees
the same inputs whichever layout its env produced.

The unpacking has no parameters: a shift per bit and an index (the layout's ``source``), kept as buffers so the
module moves with its network (``.to(device)``); they are not saved with its state but rebuilt from the layout.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from cluedo_env.engine.observation import PackedLayout, packed_layout
from cluedo_env.errors import CluedoTypeError
from cluedo_env.rules.config import RulesConfig


def packed_config(size: int) -> RulesConfig:
    """Rules whose packed layout has rows of ``size`` bytes (the layout depends only on whether there is a board,
    and the two sizes differ): lets a network be rebuilt from its observation space alone."""
    for preset in ("classic", "cards"):
        config = RulesConfig.from_preset(preset)
        if packed_layout(config).size == size:
            return config
    sizes = {p: packed_layout(RulesConfig.from_preset(p)).size for p in ("classic", "cards")}
    raise CluedoTypeError(f"no packed observation layout has rows of {size} bytes (board: {sizes['classic']}, "
                          f"card-only: {sizes['cards']})")  # fmt: skip


class Unpack(nn.Module):
    """(..., size) packed rows -> (..., D) float32 observations equal to the int8 layout's values.

    Takes uint8 tensors, or floating ones holding the byte values (Stable-Baselines3 and RLlib hand a network its
    observations cast to float32); anything else, or rows of another width, raises :class:`CluedoTypeError`.
    """

    shifts: torch.Tensor
    source: torch.Tensor

    def __init__(self, config: RulesConfig) -> None:
        super().__init__()
        layout: PackedLayout = packed_layout(config)
        self.size = layout.size
        self.bits = layout.bits
        self.bit_bytes = layout.bit_bytes
        self.out_size = int(len(layout.source))
        self.register_buffer("shifts", torch.arange(8, dtype=torch.uint8), persistent=False)
        self.register_buffer("source", torch.from_numpy(np.array(layout.source, np.int64)), persistent=False)

    def forward(self, packed: torch.Tensor) -> torch.Tensor:
        if not isinstance(packed, torch.Tensor):
            raise CluedoTypeError(f"Unpack takes a torch tensor of packed rows, got {type(packed).__name__}")
        if packed.dtype != torch.uint8 and not packed.is_floating_point():
            raise CluedoTypeError(f"packed observations must be uint8 (or floats holding byte values), "
                                  f"got {packed.dtype}")  # fmt: skip
        if packed.ndim < 1 or packed.shape[-1] != self.size:
            raise CluedoTypeError(f"packed observations must be (..., {self.size}), got {tuple(packed.shape)}")
        rows = packed if packed.dtype == torch.uint8 else packed.to(torch.uint8)
        bits = (rows[..., : self.bit_bytes, None] >> self.shifts) & 1  # (..., bit_bytes, 8): little-endian bits
        bits = bits.flatten(-2)[..., : self.bits]
        both = torch.cat([bits, rows[..., self.bit_bytes :]], -1)
        return both.index_select(-1, self.source).to(torch.float32)

    def extra_repr(self) -> str:
        return f"size={self.size}, out_size={self.out_size}"


__all__ = ["Unpack", "packed_config"]
