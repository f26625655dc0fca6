"""Every use of numba's internals in the package, in one module (``tests/test_layering.py`` checks it), each listed
in :data:`NUMBA_INTERNALS` with the numba versions it was checked against: what numba has no words for, as LLVM
intrinsics for compiled code (memory operations, atomics, calling a compiled kernel by its address), and what the
package needs of numba's on-disk cache (where it is, a damaged entry compiled again, an index read and merged, a
notice when a group of kernels starts compiling). Why one module: a new numba is checked here and nowhere else.

Memory operations numba has no words for, as LLVM intrinsics for compiled code.

``prefetch(array, i)``: ask the CPU to start loading the cache line of ``array[i]``. Why: a kernel that walks a
large batch reads each game's rows from some twenty state arrays, and the rows it reads from the history sit at a
different offset in every game (the last records, wherever the game has got to), so the hardware prefetcher cannot
guess them. At batch 4096 the state is ~23 MB, more than the caches hold, and the observation encoder spent more
time waiting for those lines than computing. Naming the lines of a game a few iterations ahead lets the loads
overlap with the work on the current game.

A prefetch is a hint: it never faults, even for an address past the array's end, and changes no result. numba has
no prefetch of its own; this is LLVM's ``llvm.prefetch`` intrinsic (read, keep in all cache levels, data cache).

``copy_word(dst, i, src, j)``: copy 8 bytes between one-byte arrays as one load and one store. Why: the
observation copies rows of 21 one-byte counts, which a byte loop copies a byte at a time and LLVM vectorises for
long runs only (with overlap checks longer than the copy).

``load_word(array, i)``: the 8 bytes ``array[i:i + 8]`` of a one-byte array as one uint64 (little-endian). Why: the
samplers find the n-th legal action in a mask block of up to 197 bools; eight at a time, a word's count of legal
actions is the sum of its bytes.

``atomic_load(array, i)``, ``atomic_store(array, i, value)`` (int64 arrays, sequentially consistent), ``pause()``
(the CPU's spin-wait hint, where it has one) and ``yield_cpu()`` (``sched_yield``): what a thread needs to wait for
another by watching memory (:mod:`cluedo_env.engine.worker_pool`).
A plain load in a loop that stores nothing may be read once and kept in a register;
an atomic one is read again each time, and orders the loads and stores around it.

``atomic_add(array, i, value)`` (returns the old value) and ``atomic_min(array, i, value)``: how the threads of a
job share its games out block by block, each taking the next block when it is done with its last
(:mod:`cluedo_env.engine.thread_jobs`), and add up what the blocks found.

``rows(arrays, lo, n)``: a tuple of arrays (a ``State``) as views of rows ``lo .. lo + n`` of each, made in
compiled code: a job's blocks are ranges of games decided while it runs.

``value_size(value)``, ``store_value(buffer, value)`` and ``value_at(address, typeref)``: a compiled value (a tuple
of ~70 arrays) written once into memory in its native form and read back from its address. Why: a Python call that
passes the tuple unboxes every array each time, ~10 us a call, twice a threaded step; passed its address, the call
unboxes one int. Whoever stored it keeps its arrays alive while it is read.

``data_address(array)`` (the address of an array's first element, an int64) and ``array_at(address, shape, dtype)``
(an array over the memory there): how a worker thread's compiled loop reads and writes arrays its caller names per
job (:mod:`cluedo_env.engine.thread_jobs`), without the GIL a Python call would need to hand it an array. The
caller keeps the array alive until the job is done.

``call_compiled(address, returns, args)`` and ``kernel_address(dispatcher, signature, returns)``: calling a compiled
kernel by its address from compiled code.
Why: a worker thread's loop (:mod:`cluedo_env.engine.thread_jobs`) calls the engine's kernels, and a numba function
that calls another the usual way links the callee's machine code into its own library and optimises the whole of
it again: 9 s on an empty cache for a loop that calls the step, which every engine with threads would pay. Called
by address, the callee is the code the engine already compiled (or loaded from the cache), the loop compiles in a
few seconds (most of it the Python wrapper that unboxes its arguments), and its cache never holds a stale copy of a
kernel whose source changed.

The address is the kernel's native function (numba's own calling convention: a return slot, an exception slot,
the arguments flattened), found by :func:`kernel_address` for the exact argument types the caller will pass. The
types are the contract: :func:`call_compiled` calls the address with the types of the arguments it is given, and
the caller must have looked the address up for those types (``tests/test_engine_threads.py`` plays threaded
engines against unthreaded ones with every job).
"""

from __future__ import annotations

import os
import pickle
import platform
import sys
from pathlib import Path
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, event
from numba.core.caching import Cache, CacheImpl, IndexDataCacheFile
from numba.core.registry import CPUDispatcher
from numba.cpython.unsafe.numbers import trailing_zeros  # re-exported: the move search's bit scan
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array
from numba.np.random.random_methods import random_interval  # re-exported: the players' bounded draws

# Every use of numba's internals in the package (all of them here): what it is, what uses it, and the numba versions
# it was checked against (the lowest declared, by the lowest-versions smoke, and the pinned one, by the whole suite).
# pyproject.toml bounds numba above at the newest of them.
NUMBA_CHECKED = ("0.60.0", "0.68.1")
NUMBA_INTERNALS = {
    "numba.core.cgutils": "LLVM helpers of the intrinsics here (pointers, tuples, branches, functions)",
    "numba.np.arrayobj.populate_array": "array_at, rows: arrays over raw memory, built in compiled code",
    "context.call_conv": "call_compiled: numba's native calling convention (status, exception slot)",
    "CompileResult.library.get_pointer_to_function, CompileResult.fndesc": "kernel_address: a kernel's native "
    "function by its mangled name",
    "numba.cpython.unsafe.numbers.trailing_zeros": "the move search's bit scan (movement.py, re-exported here)",
    "numba.np.random.random_methods.random_interval": "bounded draws of the players' kernels (re-exported here)",
    "numba.core.caching.CacheImpl._locator_classes": "cache_folder: where numba caches a module",
    "numba.core.caching.Cache.load_overload": "_load_or_recompile: a cache entry that cannot be read is compiled again",
    "numba.core.caching.IndexDataCacheFile": "discard_unreadable, merge_index: a function's cache index read, merged, "
    "removed",
    "Dispatcher._cache (._index_key, ._cache_file._load_index), Dispatcher.targetctx": "is_cached: "
    "whether a version is on disk",
    "numba.core.event": "COMPILE_NOTICE: the one-line notice when a group of kernels starts compiling",
    "numba.core.registry.CPUDispatcher": "is_kernel: what a compiled kernel is",
}

_READ, _KEEP_IN_ALL_LEVELS, _DATA = 0, 3, 1


def _pointer(context, builder, array_type, array, index, pointer_type):  # noqa: ANN001, ANN202 (numba's codegen objects)
    """A ``pointer_type`` pointer to ``array[index]`` (no wraparound, no bounds check)."""
    view = context.make_array(array_type)(context, builder, array)
    pointer = cgutils.get_item_pointer(context, builder, array_type, view, [index], wraparound=False)
    return builder.bitcast(pointer, pointer_type)


_WORD = ir.IntType(64).as_pointer()


@intrinsic
def prefetch(typingctx, array, index):  # noqa: ARG001 (numba's intrinsic signature)
    """Start loading the cache line of ``array[index]`` (``array`` one-dimensional); no bounds check needed."""
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None
    signature = types.void(array, index)

    def codegen(context, builder, sig, args):
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]), "llvm.prefetch.p0i8"
        )
        flags = [ir.Constant(i32, x) for x in (_READ, _KEEP_IN_ALL_LEVELS, _DATA)]
        builder.call(function, [_pointer(context, builder, sig.args[0], args[0], args[1], byte_pointer), *flags])
        return context.get_dummy_value()

    return signature, codegen


def _bytes(a) -> bool:  # noqa: ANN001 (a numba type)
    """A one-dimensional array of one-byte elements (int8, uint8, bool)."""
    return isinstance(a, types.Array) and a.ndim == 1 and (isinstance(a.dtype, types.Boolean) or a.dtype.bitwidth == 8)


@intrinsic
def load_word(typingctx, array, index):  # noqa: ARG001 (numba's intrinsic signature)
    """array[index:index + 8] of a one-byte array as one uint64 (an unaligned load); no bounds check."""
    if not _bytes(array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.load(_pointer(context, builder, sig.args[0], args[0], args[1], _WORD), align=1)

    return types.uint64(array, index), codegen


@intrinsic
def copy_word(typingctx, dst, i, src, j):  # noqa: ARG001 (numba's intrinsic signature)
    """dst[i:i + 8] = src[j:j + 8] for one-byte arrays, as one unaligned 8-byte load and store; no bounds check."""
    ok = _bytes(dst) and _bytes(src)
    if not ok or not isinstance(i, types.Integer) or not isinstance(j, types.Integer):
        return None
    signature = types.void(dst, i, src, j)

    def codegen(context, builder, sig, args):
        word = builder.load(_pointer(context, builder, sig.args[2], args[2], args[3], _WORD), align=1)
        builder.store(word, _pointer(context, builder, sig.args[0], args[0], args[1], _WORD), align=1)
        return context.get_dummy_value()

    return signature, codegen


def _int64s(a) -> bool:  # noqa: ANN001 (a numba type)
    """A one-dimensional int64 array."""
    return isinstance(a, types.Array) and a.ndim == 1 and a.dtype == types.int64


@intrinsic
def atomic_load(typingctx, array, index):  # noqa: ARG001 (numba's intrinsic signature)
    """array[index] of an int64 array, read from memory every time (sequentially consistent); no bounds check."""
    if not _int64s(array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.load_atomic(_pointer(context, builder, sig.args[0], args[0], args[1], _WORD), "seq_cst", 8)

    return types.int64(array, index), codegen


@intrinsic
def atomic_store(typingctx, array, index, value):  # noqa: ARG001 (numba's intrinsic signature)
    """array[index] = value in an int64 array, seen by every thread before anything this thread does next
    (sequentially consistent); no bounds check."""
    if not _word_update(array, index, value):
        return None
    signature = types.void(array, index, types.int64)

    def codegen(context, builder, sig, args):
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store_atomic(value, _pointer(context, builder, sig.args[0], args[0], args[1], _WORD), "seq_cst", 8)
        return context.get_dummy_value()

    return signature, codegen


def _word_update(array, index, value) -> bool:  # noqa: ANN001 (numba types)
    """An update of one word of an int64 array by an integer."""
    return _int64s(array) and isinstance(index, types.Integer) and isinstance(value, types.Integer)


def _read_modify_write(operation: str):  # noqa: ANN202 (numba's codegen)
    """The codegen of LLVM's ``atomicrmw operation`` on ``array[index]`` with ``value``: the old value."""

    def codegen(context, builder, sig, args):
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        pointer = _pointer(context, builder, sig.args[0], args[0], args[1], _WORD)
        return builder.atomic_rmw(operation, pointer, value, "seq_cst")

    return codegen


@intrinsic
def atomic_add(typingctx, array, index, value):  # noqa: ARG001 (numba's intrinsic signature)
    """array[index] += value in an int64 array as one atomic step (sequentially consistent); the old value."""
    return (types.int64(array, index, value), _read_modify_write("add")) if _word_update(array, index, value) else None


@intrinsic
def atomic_min(typingctx, array, index, value):  # noqa: ARG001 (numba's intrinsic signature)
    """array[index] = min(array[index], value) in an int64 array as one atomic step (sequentially consistent); the
    old value."""
    return (types.int64(array, index, value), _read_modify_write("min")) if _word_update(array, index, value) else None


def _c_arrays(t) -> bool:  # noqa: ANN001 (a numba type)
    """A tuple (or NamedTuple) of C-contiguous arrays of one dimension or more."""
    return isinstance(t, types.BaseTuple) and all(
        isinstance(x, types.Array) and x.layout == "C" and x.ndim >= 1 for x in t.types
    )


@intrinsic
def rows(typingctx, arrays, lo, n):  # noqa: ARG001 (numba's intrinsic signature)
    """``arrays`` (a tuple of C-contiguous arrays, a ``State``) with each array ``a`` as the view ``a[lo:lo + n]``;
    no bounds check (the caller keeps ``lo + n`` within every array's first dimension). For kernels compiled
    without reference counting only (``_nrt=False``, as all of ours): the views borrow their owners' memory."""
    if not _c_arrays(arrays) or not isinstance(lo, types.Integer) or not isinstance(n, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        tuple_type = sig.args[0]
        start = context.cast(builder, args[1], sig.args[1], types.intp)
        count = context.cast(builder, args[2], sig.args[2], types.intp)
        out = cgutils.get_null_value(context.get_value_type(tuple_type))
        for i, array_type in enumerate(tuple_type.types):
            whole = context.make_array(array_type)(context, builder, builder.extract_value(args[0], i))
            shape = cgutils.unpack_tuple(builder, whole.shape)
            strides = cgutils.unpack_tuple(builder, whole.strides)
            row = shape[1:]
            items = count
            for size in row:
                items = builder.mul(items, size)
            view = context.make_array(array_type)(context, builder)
            first_byte = builder.bitcast(whole.data, ir.IntType(8).as_pointer())
            view.data = builder.bitcast(builder.gep(first_byte, [builder.mul(start, strides[0])]), whole.data.type)
            view.shape = cgutils.pack_array(builder, [count, *row])
            view.strides = whole.strides
            view.itemsize = whole.itemsize
            view.meminfo = whole.meminfo
            view.parent = cgutils.get_null_value(whole.parent.type)
            view.nitems = items
            out = builder.insert_value(out, view._getvalue(), i)
        return out

    return arrays(arrays, lo, n), codegen


@intrinsic
def value_size(typingctx, value):  # noqa: ARG001 (numba's intrinsic signature)
    """The bytes :func:`store_value` writes for ``value`` (any compiled value: a tuple of arrays)."""

    def codegen(context, builder, sig, args):
        return context.get_constant(types.int64, context.get_abi_sizeof(context.get_value_type(sig.args[0])))

    return types.int64(value), codegen


@intrinsic
def store_value(typingctx, buffer, value):  # noqa: ARG001 (numba's intrinsic signature)
    """Write ``value``'s native form into ``buffer`` (a C-contiguous uint8 array of at least :func:`value_size`
    bytes, 8-byte aligned); :func:`value_at` reads it back. No bounds check."""
    if not (isinstance(buffer, types.Array) and buffer.dtype == types.uint8 and buffer.layout == "C"):
        return None

    def codegen(context, builder, sig, args):
        view = context.make_array(sig.args[0])(context, builder, args[0])
        target = builder.bitcast(view.data, context.get_value_type(sig.args[1]).as_pointer())
        builder.store(args[1], target)
        return context.get_dummy_value()

    return types.void(buffer, value), codegen


@intrinsic
def value_at(typingctx, address, typeref):  # noqa: ARG001 (numba's intrinsic signature)
    """The value of type ``typeref`` (a numba type, passed as one: ``numba.typeof(value)``) that
    :func:`store_value` wrote at ``address``. For kernels compiled without reference counting only (``_nrt=False``):
    its arrays borrow their owners' memory."""
    if not isinstance(address, types.Integer) or not isinstance(typeref, types.TypeRef):
        return None
    value_type = typeref.instance_type

    def codegen(context, builder, sig, args):
        pointer = builder.inttoptr(context.cast(builder, args[0], sig.args[0], types.int64),
                                   context.get_value_type(value_type).as_pointer())  # fmt: skip
        return builder.load(pointer)

    return value_type(address, typeref), codegen


@intrinsic
def data_address(typingctx, array):  # noqa: ARG001 (numba's intrinsic signature)
    """The address of ``array``'s first element, as an int64."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, sig, args):
        view = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.ptrtoint(view.data, ir.IntType(64))

    return types.int64(array), codegen


def _element(dtype):  # noqa: ANN001, ANN202 (a numba type)
    """The element type a dtype argument names (``np.int64``, ``np.bool_``, ``np.dtype(...)``), or None."""
    if isinstance(dtype, types.DType):
        return dtype.dtype
    if isinstance(dtype, types.NumberClass):
        return dtype.instance_type
    return None


@intrinsic
def array_at(typingctx, address, shape, dtype):  # noqa: ARG001 (numba's intrinsic signature)
    """A C-contiguous array of ``shape`` (an int, or a tuple of ints) and ``dtype`` over the memory at ``address``
    (an int): no copy, and no owner, so whoever owns the memory keeps it alive while the array is used.
    ``numba.carray`` does the same from a pointer, but returns the array from a function call, which kernels
    compiled without reference counting may not do."""
    element = _element(dtype)
    if isinstance(shape, types.Integer):
        ndim = 1
    elif isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer):
        ndim = shape.count
    else:
        return None
    if element is None or not isinstance(address, types.Integer):
        return None
    array_type = types.Array(element, ndim, "C")

    def codegen(context, builder, sig, args):
        address_value, shape_value = args[0], args[1]
        is_tuple = isinstance(sig.args[1], types.BaseTuple)
        sizes = cgutils.unpack_tuple(builder, shape_value) if is_tuple else [shape_value]
        size_type = sig.args[1].dtype if is_tuple else sig.args[1]
        sizes = [context.cast(builder, v, size_type, types.intp) for v in sizes]
        itemsize = cgutils.intp_t(context.get_abi_sizeof(context.get_data_type(element)))
        strides, stride = [], itemsize
        for size in reversed(sizes):
            strides.append(stride)
            stride = builder.mul(stride, size)
        strides.reverse()
        data = builder.inttoptr(context.cast(builder, address_value, sig.args[0], types.int64),
                                context.get_data_type(element).as_pointer())  # fmt: skip
        array = context.make_array(array_type)(context, builder)
        populate_array(array, data=data, shape=sizes, strides=strides, itemsize=itemsize, meminfo=None)
        return array._getvalue()

    return array_type(address, shape, dtype), codegen


def line_aligned_words(n: int) -> np.ndarray:
    """(n,) int64 zeros starting on a 64-byte cache line (``np.zeros`` promises 16 bytes): words other threads
    watch keep to the lines they were laid out on."""
    block = np.zeros(n + 8, np.int64)
    skip = (-block.ctypes.data % 64) // 8
    return block[skip : skip + n]


_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
_POSIX = os.name == "posix"


@intrinsic
def pause(typingctx):  # noqa: ARG001 (numba's intrinsic signature)
    """The CPU's spin-wait hint (x86 ``pause``: a spinning thread yields the core's shared units to its sibling and
    leaves the loop without a pipeline flush); nothing elsewhere."""

    def codegen(context, builder, sig, args):
        if _X86:
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                      "llvm.x86.sse2.pause")  # fmt: skip
            builder.call(function, [])
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def yield_cpu(typingctx):  # noqa: ARG001 (numba's intrinsic signature)
    """Let another thread that waits for this thread's core run now (POSIX ``sched_yield``; nothing elsewhere). Why:
    a thread that spins while waiting for another may share its core with the very thread it waits for (the system
    put both there, or a virtual machine's host took the other core away); spinning, it would hold that thread off
    until the scheduler's next tick, for a millisecond or more. Alone on its core, the call returns at once."""

    def codegen(context, builder, sig, args):
        if _POSIX:
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                                      "sched_yield")  # fmt: skip
            builder.call(function, [])
        return context.get_dummy_value()

    return types.void(), codegen


def _plain(t: types.Type) -> types.Type:
    """``t`` without literal types (a tuple's elements too): ``(0, 0)`` as a UniTuple(int64, 2)."""
    if isinstance(t, types.BaseTuple):
        return types.Tuple([_plain(x) for x in t.types])
    return types.unliteral(t)


@intrinsic
def call_compiled(typingctx, address, returns, args):  # noqa: ARG001 (numba's intrinsic signature)
    """Call the kernel compiled at ``address`` with the tuple ``args``, returning what it returns.

    ``returns``: a value of the kernel's return type (``None`` for a kernel that returns nothing, ``(0, 0)`` for a
    pair of ints); the types of ``args`` are those the kernel was compiled for. An exception the kernel raises is
    raised by the caller."""
    if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
        return None
    restype = _plain(returns)
    argtypes = tuple(args.types)

    def codegen(context, builder, sig, llargs):
        values = [builder.extract_value(llargs[2], i) for i in range(len(argtypes))]
        function_type = context.call_conv.get_function_type(restype, argtypes)
        callee = builder.inttoptr(context.cast(builder, llargs[0], sig.args[0], types.int64),
                                  function_type.as_pointer())  # fmt: skip
        status, result = context.call_conv.call_function(builder, callee, restype, argtypes, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return restype(address, returns, args), codegen


def kernel_address(dispatcher: Any, signature: tuple, returns: types.Type) -> int:
    """The address of ``dispatcher``'s native function compiled for ``signature`` (a tuple of numba types), which
    must already be compiled or loaded; checks that it returns ``returns`` (a numba type)."""
    compiled = dispatcher.overloads.get(signature)
    if compiled is None:
        raise RuntimeError(f"{dispatcher.py_func.__qualname__} is not compiled for {signature}")
    if compiled.signature.return_type != returns:
        raise TypeError(f"{dispatcher.py_func.__qualname__} returns {compiled.signature.return_type}, not {returns}")
    address = compiled.library.get_pointer_to_function(compiled.fndesc.mangled_name)
    if not address:
        raise RuntimeError(f"no native function of {dispatcher.py_func.__qualname__} for {signature}")
    return address


# ===================================================================== numba's on-disk cache
# What cluedo_env.engine.kernel_cache (the cache kept fresh with the sources) and cluedo_env.engine.compile_ahead (a
# helper's kernels merged into this process's cache) need of numba's cache classes.
def _probe() -> None:
    """A stand-in function for numba's cache locators, which read only its first line number."""


def cache_folder(module: Path) -> Path | None:
    """The folder numba caches the kernels of ``module`` in: the first of its cache locators that accepts the file
    and can write there (``NUMBA_CACHE_DIR``, then ``__pycache__`` beside the module, then a per-user folder).

    ``CacheImpl._locator_classes`` is numba's own list (numba pinned in constraints.txt); None if none accepts.
    """
    for locator in CacheImpl._locator_classes:
        found = locator.from_function(_probe, str(module))
        if found is not None:
            return Path(found.get_cache_path())
    return None


class _CompileNotice(event.Listener):
    """Says once per group, on its first compile (a cache miss), that the group is compiling and for how long.

    Why: a cold cache makes the first call of a group's kernels wait tens of seconds to minutes; without a word
    a newcomer takes that for a hang. Loading from the cache raises no compile event, so a warm run says nothing.
    """

    def __init__(self) -> None:
        self.groups: list[Any] = []  # the KernelSources to announce (cluedo_env.engine.kernel_cache)
        self.said: set[str] = set()

    def on_start(self, ev: event.Event) -> None:
        module = getattr(getattr(ev.data.get("dispatcher"), "py_func", None), "__module__", "") or ""
        for group in self.groups:
            if group.package and module.startswith(group.package) and group.stamp not in self.said:
                self.said.add(group.stamp)
                print(f"compiling {group.title} (first run only, {group.first_run}; cached after that)",
                      file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        """Nothing to say when a compile ends (the first call returns then)."""


COMPILE_NOTICE = _CompileNotice()
event.register("numba:compile", COMPILE_NOTICE)


def discard_unreadable(cache_file: Any, error: BaseException) -> None:
    """Remove one function's cache files (its index and every machine-code file it names) that could not be read,
    with one line saying so; numba then compiles the function again and writes them anew.

    Why: a truncated or damaged file (a full disk, an interrupted copy of a cache folder) would otherwise fail every
    later run with numba's unpickling error until someone found and deleted the cache by hand. ``cache_file`` is
    numba's ``IndexDataCacheFile`` of the function (its ``_cache_path``, ``_index_name``, ``_data_name_pattern``)."""
    folder = Path(cache_file._cache_path)
    index = folder / cache_file._index_name
    data = cache_file._data_name_pattern.replace("{number:d}", "*")
    for path in (index, *folder.glob(data)):
        path.unlink(missing_ok=True)
    print(f"numba's cache file {index} could not be read ({type(error).__name__}: {str(error)[:80]}); removed it, "
          "compiling that kernel again", file=sys.stderr, flush=True)  # fmt: skip


_load_overload = Cache.load_overload


def _load_or_recompile(cache: Cache, sig: Any, target_context: Any) -> Any:
    """numba's ``Cache.load_overload``, except that an entry it cannot read is removed and reported (None: numba
    compiles). Any failure counts: a damaged file can fail the unpickling or the rebuild of its machine code in many
    ways, and compiling again is the cure for each."""
    try:
        return _load_overload(cache, sig, target_context)
    except Exception as error:  # noqa: BLE001 - see the docstring
        discard_unreadable(cache._cache_file, error)
        return None


Cache.load_overload = _load_or_recompile  # every numba cache of the process, ours and the players' alike


def is_kernel(obj: Any) -> bool:
    """Whether ``obj`` is a compiled kernel (a numba CPU dispatcher), not a Python stand-in for one."""
    return isinstance(obj, CPUDispatcher)


def is_cached(dispatcher: Any, signature: tuple) -> bool:
    """Whether numba's cache holds machine code of ``dispatcher`` for ``signature`` (a tuple of numba types)."""
    cache = dispatcher._cache
    key = cache._index_key(signature, dispatcher.targetctx.codegen())
    try:
        return key in cache._cache_file._load_index()
    except Exception as error:  # noqa: BLE001 - a damaged index: not cached (and no longer there)
        discard_unreadable(cache._cache_file, error)
        return False


def merge_index(index: Path, ours: Path) -> None:
    """Add the entries of numba's cache index ``index`` (of one function) that the index of the same name in the
    folder ``ours`` lacks, with their machine code (numba's own index class reads and writes both).

    Unpickling here reads nothing a user hands us: ``index`` is numba's own cache index, written moments before by
    the compile helper this process started, in the private folder it made for it (``tempfile.mkdtemp``, mode 0700);
    numba unpickles the same format for every kernel it loads from a cache."""
    with open(index, "rb") as f:
        if pickle.load(f) != numba.__version__:
            return
        stamp, overloads = pickle.loads(f.read())
    base = index.name.removesuffix(".nbi")
    theirs, mine = IndexDataCacheFile(str(index.parent), base, stamp), IndexDataCacheFile(str(ours), base, stamp)
    try:
        have = mine._load_index()
    except Exception as error:  # noqa: BLE001 - a damaged index of ours: the helper's entries replace it
        discard_unreadable(mine, error)
        have = {}
    for key in overloads.keys() - have.keys():
        data = theirs.load(key)
        if data is not None:
            ours.mkdir(parents=True, exist_ok=True)
            mine.save(key, data)


__all__ = [
    "COMPILE_NOTICE", "NUMBA_CHECKED", "NUMBA_INTERNALS", "array_at", "atomic_add", "atomic_load", "atomic_min",
    "atomic_store", "cache_folder", "call_compiled", "copy_word", "data_address", "discard_unreadable", "is_cached",
    "is_kernel", "kernel_address", "line_aligned_words", "load_word", "merge_index", "pause", "prefetch",
    "random_interval", "rows", "store_value", "trailing_zeros", "value_at", "value_size", "yield_cpu",
]  # fmt: skip
