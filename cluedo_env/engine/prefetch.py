"""``prefetch(array, i)``: ask the CPU to start loading the cache line of ``array[i]``, from compiled code.

Why: a kernel that walks a large batch reads each game's rows from some twenty state arrays, and the rows it
reads from the history sit at a different offset in every game (the last records, wherever the game has got
to), so the hardware prefetcher cannot guess them. At batch 4096 the state is ~23 MB, more than the caches
hold, and the observation encoder spent more time waiting for those lines than computing. Naming the lines of
a game a few iterations ahead lets the loads overlap with the work on the current game.

A prefetch is a hint: it never faults, even for an address past the array's end, and changes no result. numba
has no prefetch of its own; this is LLVM's ``llvm.prefetch`` intrinsic (read, keep in all cache levels,
data cache).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_READ, _KEEP_IN_ALL_LEVELS, _DATA = 0, 3, 1


@intrinsic
def prefetch(typingctx, array, index):  # noqa: ARG001 (numba's intrinsic signature)
    """Start loading the cache line of ``array[index]`` (``array`` one-dimensional); no bounds check needed."""
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None
    signature = types.void(array, index)

    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [args[1]], wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]), "llvm.prefetch.p0i8"
        )
        flags = [ir.Constant(i32, x) for x in (_READ, _KEEP_IN_ALL_LEVELS, _DATA)]
        builder.call(function, [builder.bitcast(pointer, byte_pointer), *flags])
        return context.get_dummy_value()

    return signature, codegen


__all__ = ["prefetch"]
