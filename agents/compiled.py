"""How the players' kernels are compiled, kept fresh in numba's cache, and called.

Every numba kernel of :mod:`agents` lives in the module of the code that calls it and is compiled with
:data:`KERNEL` (or :data:`HELPER`, :data:`INLINE`: the engine's options, :mod:`cluedo_env.engine.compile_options`,
which say why): cached on disk, no GIL, no reference counting, numpy's error model. The kernels call and inline
each other across modules and read constants from :mod:`cluedo_env.rules`, while numba checks only a kernel's own
file before loading it from its cache; :data:`KERNELS` (a :class:`cluedo_env.engine.kernel_cache.KernelSources`)
therefore hashes every module of :mod:`agents` that holds a kernel, plus the engine's sources, and clears the
players' numba caches when the hash changes. That runs here, on import, before any kernel module (each imports
:data:`KERNEL` from this one) is compiled or loaded.

:class:`EntryPoint` calls a compiled kernel without numba's typing of every argument on every call.

Why: a numba dispatcher types each argument of each call before it finds the machine code (about 0.15 us an
array, 5 us a ``np.random.Generator``, plus the search among the compiled versions). The deducer's three calls per
action (the notebook's intake and propagation, its decisions) read 30 to 90 arrays each (a dozen arguments,
most of them named tuples of arrays: :mod:`cluedo_env.agents.knowledge.types`, whose every field is typed), so this
typing was
about 40 us of the ~0.2 ms fixed cost of an action: most of a player's time at the small batches a learner's
opponents play at. An :class:`EntryPoint` types the arguments of its first call, compiles (or loads) that version
once and calls its machine code directly afterwards, as :class:`cluedo_env.engine.vector_engine.VectorEngine` does
for its kernels.

The caller's side of the bargain: every later call passes arguments of the same types (dtypes, dimensions,
C-contiguous layout, and for a named tuple the same class and fields' types; the arrays a player owns, the view's
state arrays, index arrays it made contiguous int64 itself). The machine code does not check them.
:attr:`EntryPoint.check` (the test suite sets it for every test, ``tests/conftest.py``) types every call again and
raises if a signature ever changes, so the suite proves the bargain is kept on every path it plays.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cluedo_env.engine import compile_ahead
from cluedo_env.engine.compile_options import HELPER, INLINE, KERNEL
from cluedo_env.engine.kernel_cache import ENGINE_SOURCES, KernelSources

_PACKAGE = Path(__file__).resolve().parent  # agents/
_KERNEL_MODULES = tuple(sorted(p for p in _PACKAGE.rglob("*.py") if re.search(r"^@njit", p.read_text("utf-8"), re.M)))
KERNELS = KernelSources(
    "agents_kernels.stamp",
    ENGINE_SOURCES + _KERNEL_MODULES,
    _KERNEL_MODULES,
    package="agents.",
    title="the players' kernels",
    first_run="about 30 s for the deducer and the expert on two cores, a minute on one; seconds for the others",
)
"""The players' kernels: every module of :mod:`agents` that compiles one, and the engine's sources they read."""
KERNELS.ensure_fresh()


class EntryPoint:
    """``EntryPoint(kernel)(*args)`` is ``kernel(*args)`` through the machine code of the first call's types."""

    check = False  # type every call and compare with the first (the tests turn it on)

    def __init__(self, dispatcher: Any) -> None:
        self.dispatcher = dispatcher
        self.signature: tuple | None = None
        self._entry: Callable[..., Any] | None = None

    def __reduce__(self) -> tuple:
        """Pickled by the kernel's module and name (players are pickled with their notebooks); typed again after."""
        return _entry_point_of, (self.dispatcher.py_func.__module__, self.dispatcher.__name__)

    def __deepcopy__(self, memo: dict) -> EntryPoint:
        """A copy calls the same machine code (nothing in an entry point changes after its first call)."""
        twin = EntryPoint(self.dispatcher)
        twin.signature, twin._entry = self.signature, self._entry
        return twin

    def compile_ahead(self, *args: Any) -> None:
        """On an empty cache, start compiling the version for ``args``' types in a helper process
        (:mod:`cluedo_env.engine.compile_ahead`); the first call then waits for it, not for numba here."""
        if self._entry is None:  # (a stand-in that is no numba kernel, as a test's spy, is not submitted)
            compile_ahead.submit([(self.dispatcher, compile_ahead.signature_of(args))])

    def __call__(self, *args: Any) -> Any:
        entry = self._entry
        if entry is None and not hasattr(self.dispatcher, "compile"):  # a plain function (a test's spy): as it is
            return self.dispatcher(*args)
        if entry is None or EntryPoint.check:
            signature = compile_ahead.signature_of(args)
            if entry is None:
                self.signature = signature
                compile_ahead.collect(self.dispatcher, signature)
                entry = self._entry = self.dispatcher.compile(signature)
            elif signature != self.signature:
                changed = [(i, s, t) for i, (s, t) in enumerate(zip(self.signature, signature, strict=True)) if s != t]
                raise TypeError(f"{self.dispatcher.__name__}: argument types changed since the first call "
                                f"(position, first, now): {changed}")  # fmt: skip
        return entry(*args)


def _entry_point_of(module: str, name: str) -> EntryPoint:
    """A new :class:`EntryPoint` of the kernel ``module.name`` (unpickling)."""
    import importlib

    return EntryPoint(getattr(importlib.import_module(module), name))


__all__ = ["HELPER", "INLINE", "KERNEL", "KERNELS", "EntryPoint"]
