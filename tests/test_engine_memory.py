"""The engine's memory intrinsics (cluedo_env.engine.memory): a word copy moves exactly its eight bytes, at any
alignment and between signed and unsigned bytes; a word load reads eight bytes little-endian, bools too; a prefetch
changes nothing. And the samplers' word-at-a-time search for the n-th legal action against a plain scan."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from cluedo_env.engine.kernels import _nth_true
from cluedo_env.engine.memory import (
    array_at,
    atomic_load,
    atomic_store,
    copy_word,
    data_address,
    load_word,
    pause,
    prefetch,
)


@njit(cache=False)
def _copy(dst: np.ndarray, i: int, src: np.ndarray, j: int) -> None:
    copy_word(dst, i, src, j)


@njit(cache=False)
def _load(a: np.ndarray, i: int) -> np.uint64:
    return load_word(a, i)


@njit(cache=False)
def _nth(row: np.ndarray, lo: int, hi: int, rank: int) -> int:
    return _nth_true(row, lo, hi, rank)


@njit(cache=False)
def _prefetch_all(a: np.ndarray) -> int:
    for i in range(0, a.shape[0] + 64, 16):  # past the end too: a hint never faults
        prefetch(a, i)
    return a.shape[0]


@njit(cache=False)
def _swap(a: np.ndarray, i: int, value: int) -> int:
    """a[i] = value atomically; the old value, and pause on the way (it must compile and do nothing)."""
    old = atomic_load(a, i)
    pause()
    atomic_store(a, i, value)
    return old


def test_atomic_store_and_load_touch_their_word_only() -> None:
    a = np.arange(8, dtype=np.int64)
    assert _swap(a, 3, -(2**40)) == 3
    assert a.tolist() == [0, 1, 2, -(2**40), 4, 5, 6, 7]
    assert _swap(a, 3, 7) == -(2**40) and a[3] == 7
    with pytest.raises(TypingError):  # int64 words only
        _swap(np.zeros(4, np.int32), 0, 1)


@pytest.mark.parametrize(("i", "j"), [(0, 0), (3, 5), (13, 1), (9, 13)])
def test_copy_word_moves_exactly_eight_bytes(i: int, j: int) -> None:
    src = np.arange(-10, 11, dtype=np.int8)  # 21 signed bytes, as a seat's counts
    dst = np.full(24, 0xAA, np.uint8)
    expected = dst.copy()
    expected[i : i + 8] = src[j : j + 8].view(np.uint8)
    _copy(dst, i, src, j)
    assert dst.tolist() == expected.tolist()


def test_copy_word_refuses_wider_elements() -> None:
    with pytest.raises(TypingError, match="copy_word"):
        _copy(np.zeros(8, np.int64), 0, np.zeros(8, np.int64), 0)


def test_prefetch_changes_nothing() -> None:
    a = np.arange(100, dtype=np.int16)
    assert _prefetch_all(a) == 100
    assert a.tolist() == list(range(100))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.bool_])
def test_load_word_reads_eight_bytes_little_endian(dtype: type) -> None:
    raw = np.random.default_rng(0).integers(0, 2 if dtype is np.bool_ else 256, 40).astype(np.uint8)
    a = raw.view(dtype)
    for i in (0, 1, 7, 13, 32):
        assert int(_load(a, i)) == int.from_bytes(raw[i : i + 8].tobytes(), "little")


def test_nth_true_finds_every_rank_as_a_plain_scan() -> None:
    rng = np.random.default_rng(1)
    for density in (0.02, 0.3, 0.9):
        row = rng.random(870) < density  # a mask row; blocks as the samplers search them, and odd spans
        for lo, hi in ((0, 4), (4, 201), (525, 546), (3, 17), (100, 108), (5, 5)):
            trues = np.flatnonzero(row[lo:hi]) + lo
            for rank in range(len(trues) + 2):
                assert _nth(row, lo, hi, rank) == (trues[rank] if rank < len(trues) else -1), (lo, hi, rank)


@njit(cache=False)
def _rows_at(a: np.ndarray, row: int, rows: int) -> np.ndarray:
    """``a[row:row + rows]`` of an int16 (n, 3) array, rebuilt from its address; writes 7 into its first cell."""
    view = array_at(data_address(a) + row * 3 * 2, (rows, 3), np.int16)
    view[0, 0] = 7
    return view.copy()


@njit(cache=False)
def _flags_at(a: np.ndarray, i: int, n: int) -> np.ndarray:
    return array_at(data_address(a) + i, n, np.bool_).copy()


@njit(cache=False)
def _flags_in_tuple(a: np.ndarray, i: int, n: int) -> np.ndarray:
    return array_at(data_address(a) + i, (n,), np.bool_).copy()


def test_array_at_views_the_memory_at_an_address() -> None:
    a = np.arange(30, dtype=np.int16).reshape(10, 3)
    expected = a[4:7].copy()
    expected[0, 0] = 7
    assert np.array_equal(_rows_at(a, 4, 3), expected)
    assert a[4, 0] == 7 and a[3, 2] == 11 and a[7, 0] == 21  # the write landed in a, in its row, nowhere else
    flags = np.array([1, 0, 1, 1, 0, 0, 1], bool)
    assert np.array_equal(_flags_at(flags, 2, 4), flags[2:6])
    assert _flags_at(flags, 0, 0).shape == (0,)  # an empty view, as a kernel's "none given"
    assert np.array_equal(_flags_in_tuple(flags, 1, 3), flags[1:4])  # a shape of one dimension given as a tuple


def test_array_at_refuses_what_is_no_shape_or_dtype() -> None:
    @njit(cache=False)
    def no_dtype(a: np.ndarray) -> np.ndarray:
        return array_at(data_address(a), 3, 5).copy()

    @njit(cache=False)
    def float_shape(a: np.ndarray) -> np.ndarray:
        return array_at(data_address(a), 3.0, np.int64).copy()

    for bad in (no_dtype, float_shape):
        with pytest.raises(TypingError):
            bad(np.zeros(4, np.int64))
