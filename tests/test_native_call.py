"""Calling a compiled kernel by address (cluedo_env.engine.numba_internals): the kernel's results and writes come back
as from a plain call, its exception is raised by the caller, and an address is given only for a version that is
compiled and returns what the caller expects."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit, types

from cluedo_env.engine.compile_ahead import signature_of
from cluedo_env.engine.numba_internals import call_compiled, kernel_address


@njit(cache=False)
def _scale(a: np.ndarray, k: int) -> tuple[int, int]:
    """a *= k; (a's sum, its length). Refuses k < 0."""
    if k < 0:
        raise ValueError("k must not be negative")
    a *= k
    return a.sum(), a.shape[0]


@njit(cache=False)
def _scale_at(address: int, a: np.ndarray, k: int) -> tuple[int, int]:
    return call_compiled(address, (0, 0), (a, k))


def test_a_kernel_called_by_address_returns_and_writes_as_called_plainly() -> None:
    a = np.arange(5, dtype=np.int64)
    _scale(a, 1)  # compiled for (int64[:], int64)
    address = kernel_address(_scale, signature_of((a, 1)), types.UniTuple(types.int64, 2))
    assert _scale_at(address, a, 3) == (30, 5)
    assert np.array_equal(a, [0, 3, 6, 9, 12])
    with pytest.raises(ValueError, match="k must not be negative"):
        _scale_at(address, a, -1)
    assert np.array_equal(a, [0, 3, 6, 9, 12])


def test_an_address_only_for_a_compiled_version_with_the_expected_return_type() -> None:
    a = np.arange(5, dtype=np.int64)
    _scale(a, 1)
    with pytest.raises(RuntimeError, match="_scale is not compiled for"):
        kernel_address(_scale, signature_of((a.astype(np.int32), 1)), types.UniTuple(types.int64, 2))
    with pytest.raises(TypeError, match=r"_scale returns UniTuple\(int64 x 2\), not none"):
        kernel_address(_scale, signature_of((a, 1)), types.none)
