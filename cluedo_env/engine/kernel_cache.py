"""Keep numba's on-disk cache of compiled kernels in step with their sources, wherever numba keeps it.

numba caches each compiled function in a folder it picks for the function's module (``__pycache__`` beside it;
a per-user folder when the package is not writable, as in a system install; ``NUMBA_CACHE_DIR`` when set) and
checks only that module's own file when loading it. Kernels inline code and bake in constants from other
modules (``movement.fill_destinations`` into ``kernels.step``, the action ids of ``actions.py``,
``may_see_shown_card`` into ``observation.encode``; the players' kernels call each other across :mod:`agents`),
so an edit there would leave stale machine code in the cache. A :class:`KernelSources` names every file a group
of kernels is built from and the modules that hold them; :meth:`KernelSources.ensure_fresh` hashes the files and
clears the group's cache folders (the ones numba itself would use for those modules) when the hash changes. The
engine's group (:data:`ENGINE`) is checked when :mod:`cluedo_env.engine.kernels` is imported, the players' when
:mod:`cluedo_env.agents.compiled` is, each before anything of its group is compiled or loaded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from cluedo_env.engine.numba_internals import COMPILE_NOTICE, cache_folder

PACKAGE = Path(__file__).resolve().parents[1]  # cluedo_env/


@dataclass(frozen=True)
class KernelSources:
    """A group of kernels: the files they are compiled from and the modules that hold them."""

    stamp: str
    """Name of the file, in each cache folder, that holds the digest the cache was written from."""
    sources: tuple[Path, ...]
    """Every file whose change can change the group's machine code."""
    modules: tuple[Path, ...]
    """The modules whose kernels numba caches (their cache folders are found as numba finds them)."""
    package: str = ""
    """The import prefix of the group's modules: a compile there is announced once
    (:data:`~cluedo_env.engine.numba_internals.COMPILE_NOTICE`)."""
    title: str = "kernels"
    """What the announcement calls the group."""
    first_run: str = "a minute or two"
    """How long the group's first compile takes on the 2-core reference machine, as the announcement says it."""

    def digest(self) -> str:
        h = hashlib.sha256()
        for path in self.sources:
            h.update(path.read_bytes())
        return h.hexdigest()[:20]

    def caches(self) -> list[Path]:
        """The cache folders of the group's modules, where numba would read and write them now."""
        return sorted({folder for module in self.modules if (folder := cache_folder(module)) is not None})

    def ensure_fresh(self) -> bool:
        """Clear the group's numba caches that were written from other sources than today's.

        Returns True if a cache was cleared. A folder that cannot be written is left alone (numba then reads
        nothing from it either: it picks a folder it can write).
        """
        if self not in COMPILE_NOTICE.groups:
            COMPILE_NOTICE.groups.append(self)
        digest = self.digest()
        cleared = False
        for cache in self.caches():
            stamp = cache / self.stamp
            try:
                if stamp.read_text() == digest:
                    continue
            except OSError:
                pass
            try:
                for path in (*cache.glob("*.nbi"), *cache.glob("*.nbc")):
                    path.unlink(missing_ok=True)
                stamp.write_text(digest)
            except OSError:
                continue
            cleared = True
        return cleared


ENGINE_SOURCES = tuple(
    PACKAGE / name
    for name in (
        "rules/actions.py",
        "rules/board.py",
        "rules/cards.py",
        "rules/privacy.py",
        "engine/compile_options.py",
        "engine/state.py",
        "engine/kernels.py",
        "engine/samplers.py",
        "engine/movement.py",
        "engine/observation.py",
        "engine/numba_internals.py",
        "engine/worker_pool.py",
        "engine/thread_jobs.py",
    )
)
ENGINE = KernelSources(
    "cluedo_kernels.stamp",
    ENGINE_SOURCES,
    tuple(PACKAGE / "engine" / name for name in ("kernels.py", "samplers.py", "movement.py", "observation.py",
                                                 "worker_pool.py", "thread_jobs.py")),
    package="cluedo_env.",
    title="the engine's kernels",
    first_run="about 12 s on two cores, 20 s on one",
)
"""The engine's kernels (:mod:`cluedo_env.engine.kernels`, ``samplers``, ``movement``, ``observation``, ``worker_pool``,
``thread_jobs``)."""

__all__ = ["ENGINE", "ENGINE_SOURCES", "KernelSources"]
