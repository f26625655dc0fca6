"""The engine's memory intrinsics (cluedo_env.engine.memory): a word copy moves exactly its eight bytes, at any
alignment and between signed and unsigned bytes; a prefetch changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from cluedo_env.engine.memory import copy_word, prefetch


@njit(cache=False)
def _copy(dst: np.ndarray, i: int, src: np.ndarray, j: int) -> None:
    copy_word(dst, i, src, j)


@njit(cache=False)
def _prefetch_all(a: np.ndarray) -> int:
    for i in range(0, a.shape[0] + 64, 16):  # past the end too: a hint never faults
        prefetch(a, i)
    return a.shape[0]


@pytest.mark.parametrize(("i", "j"), [(0, 0), (3, 5), (13, 1), (9, 13)])
def test_copy_word_moves_exactly_eight_bytes(i: int, j: int) -> None:
    src = np.arange(-10, 11, dtype=np.int8)  # 21 signed bytes, as a seat's counts
    dst = np.full(24, 0xAA, np.uint8)
    expected = dst.copy()
    expected[i : i + 8] = src[j : j + 8].view(np.uint8)
    _copy(dst, i, src, j)
    assert dst.tolist() == expected.tolist()


def test_copy_word_refuses_wider_elements() -> None:
    with pytest.raises(Exception, match="copy_word"):
        _copy(np.zeros(8, np.int64), 0, np.zeros(8, np.int64), 0)


def test_prefetch_changes_nothing() -> None:
    a = np.arange(100, dtype=np.int16)
    assert _prefetch_all(a) == 100
    assert a.tolist() == list(range(100))
