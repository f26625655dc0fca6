"""The Stable-Baselines3 features extractor of packed observations (``env.packed_observation``).

The policy's first layer is :class:`cluedo_env.training.packed_observation.Unpack`: the network after it sees the int8
layout's values, as a policy trained on int8 observations does, while the env and the rollout buffer handle a
fifth of the bytes.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from cluedo_env.training.packed_observation import Unpack, packed_config
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from cluedo_env.errors import CluedoTypeError


class PackedObservationExtractor(BaseFeaturesExtractor):
    """Packed rows -> the int8 layout's values as float32 (``features_dim``: the int8 layout's length). The rules
    come from the space's width, so a saved policy rebuilds it from its observation space alone."""

    def __init__(self, observation_space: gym.spaces.Box) -> None:
        if not (isinstance(observation_space, gym.spaces.Box) and observation_space.dtype == np.uint8
                and len(observation_space.shape) == 1):  # fmt: skip
            raise CluedoTypeError(f"PackedObservationExtractor needs a 1-d uint8 Box of packed rows, "
                                  f"got {observation_space}")  # fmt: skip
        unpack = Unpack(packed_config(int(observation_space.shape[0])))
        super().__init__(observation_space, unpack.out_size)
        self.unpack = unpack

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.unpack(observations)


__all__ = ["PackedObservationExtractor"]
