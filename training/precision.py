"""The training precisions both backends offer: ``precision: float32 | bfloat16`` in a training config.

Why in the core: an SB3 run (:mod:`cluedo_env.training.sb3.lean_policy`) and an RLlib run
(:mod:`cluedo_env.training.rllib.module`)
take the same setting with the same names and the same warning where the CPU emulates bfloat16, so the
names and the hardware check live here, below both.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

PRECISIONS: dict[str, torch.dtype | None] = {"float32": None, "bfloat16": torch.bfloat16}


def fast_bfloat16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (AMX tiles or AVX512-BF16)."""
    cpu: Any = getattr(torch, "cpu", None)
    checks = [getattr(cpu, name, None) for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")]
    return any(bool(check()) for check in checks if callable(check))


def warn_if_emulated(precision: str) -> None:
    """Warn where ``precision`` is bfloat16 and this CPU has no hardware for it (emulated: slower than float32)."""
    if precision == "bfloat16" and not fast_bfloat16():
        warnings.warn("precision bfloat16: this CPU has no AMX or AVX512-BF16, so bfloat16 is emulated and slower "
                      "than float32", stacklevel=3)  # fmt: skip


__all__ = ["PRECISIONS", "fast_bfloat16", "warn_if_emulated"]
