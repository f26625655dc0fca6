"""Calling a compiled kernel by its address from compiled code: :func:`call_compiled`, :func:`kernel_address`.

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

from typing import Any

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


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


__all__ = ["call_compiled", "kernel_address"]
