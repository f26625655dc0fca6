"""How every numba kernel of the package is compiled: the engine's (:mod:`cluedo_env.engine.kernels`,
:mod:`~cluedo_env.engine.observation`) and the players' (:mod:`cluedo_env.agents.compiled` hands the same options on).

* :data:`KERNEL`: an entry point Python calls (cached on disk, no GIL, no reference counting, numpy's error model,
  no C wrapper).
* :data:`HELPER`: a kernel only other kernels call: no Python wrapper.
* :data:`INLINE`: a small helper of the hot loops: a HELPER that LLVM always inlines.
"""

from __future__ import annotations

# Every kernel is compiled without numba's reference counting (``_nrt=False``). Why: each function call or tuple copy
# that touches the ~40 state arrays would otherwise pay an atomic increment and decrement per array (measured: ~1 us
# per game per call, 30x the work itself). The kernels never allocate or return arrays (scratch space comes in from
# Python), and every array they touch is owned by their caller (the VectorEngine, a player), so no count is needed.
# Nothing calls a kernel through a C function pointer (numba's "cfunc wrapper", made for every function by default),
# so none is made: it repeats the Python wrapper's flattening of the arguments, about a sixth of the engine's first
# compile. The worker threads' compiled loop calls kernels by their native function's address
# (engine/numba_internals.py).
KERNEL = {"cache": True, "nogil": True, "_nrt": False, "error_model": "numpy", "no_cfunc_wrapper": True}
# A kernel only other kernels call: compiled once, with no wrapper to call it from Python (or C). Why: the wrapper
# unboxes every argument, ~40 arrays for a State, and was most of a small helper's compile time (a second or so
# each on an empty cache, for code never run). LLVM still inlines the helper into its callers where that pays, as
# it would a KERNEL. (Calling one from Python crashes the process: Python calls a KERNEL that calls it.)
HELPER = {**KERNEL, "no_cpython_wrapper": True}
# A small helper called in the hot loops: typed and compiled once, like a HELPER, then always inlined by LLVM
# (``forceinline``). Why not numba's ``inline="always"``: that types and lowers the body again at every call site
# (the observation encoder's forty call sites took 7 s to compile, against 3.5 s this way), while a plain call
# costs the hot loops their speed (the encoder ran 6-17% slower with its helpers called). A helper that returns an
# array view still takes numba's own inlining: without reference counting only that may return one.
INLINE = {**HELPER, "forceinline": True}

__all__ = ["HELPER", "INLINE", "KERNEL"]
