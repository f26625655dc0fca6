"""The engine's memory intrinsics (cluedo_env.engine.numba_internals): a word copy moves exactly its eight bytes, at any
alignment and between signed and unsigned bytes; a word load reads eight bytes little-endian, bools too; a prefetch
changes nothing; atomic adds and minimums from many threads lose nothing; row views and values stored at an address
read back what they view or hold. And the samplers' word-at-a-time search for the n-th legal action against a plain
scan."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from cluedo_env.engine.numba_internals import (
    array_at,
    atomic_add,
    atomic_load,
    atomic_min,
    atomic_store,
    copy_word,
    data_address,
    load_word,
    pause,
    prefetch,
    rows,
    store_value,
    value_at,
    value_size,
    yield_cpu,
)
from cluedo_env.engine.samplers import _nth_true
from cluedo_env.engine.thread_jobs import block_bounds


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
    """a[i] = value atomically; the old value, and pause and yield the core on the way (they must compile and do
    nothing)."""
    old = atomic_load(a, i)
    pause()
    yield_cpu()
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


@njit(cache=False, nogil=True)
def _count_up(a: np.ndarray, times: int, seed: int) -> int:
    """Add 1 to a[0] ``times`` times (the old values summed) and offer a[1] values that fall to ``seed``."""
    total = 0
    for k in range(times):
        total += atomic_add(a, 0, 1)
        atomic_min(a, 1, seed + times - k)
    return total


def test_atomic_adds_and_minimums_from_many_threads_lose_nothing() -> None:
    import threading

    a = np.array([0, 10**9], np.int64)
    _count_up(a, 1, 10**9)  # (compiled before the threads start)
    a[:] = 0, 10**9
    olds: list[int] = []
    threads = [threading.Thread(target=lambda i=i: olds.append(_count_up(a, 200_000, 100 * i))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    n = 4 * 200_000
    assert a[0] == n and sum(olds) == n * (n - 1) // 2  # every old value 0 .. n-1 handed out exactly once
    assert a[1] == 1  # the least offered (thread 0's last)


@njit(cache=False, _nrt=False)
def _row_sums(arrays: tuple, lo: int, n: int) -> tuple:
    view = rows(arrays, lo, n)
    view[1][0, 0, 0] = -1  # a write through the view lands in the array
    return view[0].sum(), view[1].sum(), view[1].shape, view[1].size


def test_rows_views_the_same_rows_of_every_array() -> None:
    arrays = (np.arange(10, dtype=np.int64), np.arange(60, dtype=np.int8).reshape(10, 3, 2))
    expected = (arrays[0][3:7].sum(), arrays[1][3:7].sum() - arrays[1][3, 0, 0] - 1, (4, 3, 2), 24)
    assert _row_sums(arrays, 3, 4) == expected
    assert arrays[1][3, 0, 0] == -1 and arrays[1][2].tolist() == [[12, 13], [14, 15], [16, 17]]
    assert _row_sums(arrays, 10, 0)[2] == (0, 3, 2)  # an empty block at the end


@njit(cache=False, _nrt=False)
def _store(buffer: np.ndarray, value: tuple) -> int:
    store_value(buffer, value)
    return value_size(value)


class _Pair(NamedTuple):
    counts: np.ndarray
    flag: bool


@njit(cache=False, _nrt=False)
def _read(address: int, value_type: object) -> tuple:
    arrays, number, pair = value_at(address, value_type)
    arrays[0][0] += 1
    return arrays[0].sum(), arrays[1].shape[0], number, pair.counts.sum(), pair.flag


def test_a_value_stored_in_memory_reads_back_from_its_address() -> None:
    import numba

    for flag in (True, False):
        value = ((np.arange(5, dtype=np.int64), np.zeros((3, 2), np.float32)), 42, _Pair(np.ones(4, np.int8), flag))
        buffer = np.zeros(1024, np.uint8)
        size = _store(buffer, value)
        assert 0 < size <= 1024 and buffer[:size].any() and not buffer[size:].any()
        assert _read(buffer.ctypes.data, numba.typeof(value)) == (11, 3, 42, 4, flag)
        assert value[0][0][0] == 1  # the arrays read back are the stored ones, not copies


def test_blocks_cover_the_batch_each_home_largest_first() -> None:
    for batch, threads in ((8192, 2), (4096, 4), (37, 2), (12, 3), (3, 3), (1, 1), (65536, 16)):
        bounds, own_blocks = block_bounds(batch, threads)
        sizes = np.diff(bounds)
        assert bounds[0] == 0 and bounds[-1] == batch and (sizes > 0).all(), (batch, threads)
        assert own_blocks[0] == 0 and own_blocks[-1] == len(sizes) and len(own_blocks) == threads + 1
        home_games = bounds[own_blocks[1:]] - bounds[own_blocks[:-1]]
        assert home_games.max() - home_games.min() <= 1  # the threads' slices are the batch's equal parts
        for t in range(threads):
            own = sizes[own_blocks[t] : own_blocks[t + 1]]
            assert (np.diff(own[:-1]) <= 0).all()  # largest first (the last takes what is left)
            assert len(own) >= min(home_games[t], 2)  # a thread done early has something to take
    assert np.diff(block_bounds(8192, 2)[0]).min() == 64


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
