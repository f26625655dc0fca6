"""Keep numba's on-disk cache of compiled kernels in step with their sources.

numba caches each compiled function next to its module (``__pycache__/*.nbi``, ``*.nbc``) and checks only that
module's own file when loading it. Kernels inline code and bake in constants from other modules
(``movement.fill_destinations`` into ``kernels.step``, the action ids of ``actions.py``, ``may_see_shown_card``
into ``observation.encode``; the players' kernels call each other across :mod:`agents`), so an edit there would
leave stale machine code in the cache. A :class:`KernelSources` names every file a group of kernels is built
from and the cache folders they are written to; :meth:`KernelSources.ensure_fresh` hashes the files and clears
those folders when the hash changes. The engine's group (:data:`ENGINE`) is checked when
:mod:`cluedo_env.engine.kernels` is imported, the players' when :mod:`agents.compiled` is, each before anything
of its group is compiled or loaded.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # cluedo_env/


@dataclass(frozen=True)
class KernelSources:
    """A group of kernels: the files they are compiled from and the folders numba caches them in."""

    stamp: str
    """Name of the file, in each cache folder, that holds the digest the cache was written from."""
    sources: tuple[Path, ...]
    """Every file whose change can change the group's machine code."""
    caches: tuple[Path, ...]
    """The ``__pycache__`` folders of the group's modules."""

    def digest(self) -> str:
        h = hashlib.sha256()
        for path in self.sources:
            h.update(path.read_bytes())
        return h.hexdigest()[:20]

    def ensure_fresh(self) -> bool:
        """Clear the group's numba caches if the sources changed since they were written.

        Returns True if a cache was cleared. A cache elsewhere (``NUMBA_CACHE_DIR``) or a read-only package is
        left alone: numba then recompiles or uses what it finds, as it would anyway.
        """
        if os.environ.get("NUMBA_CACHE_DIR"):
            return False
        digest = self.digest()
        cleared = False
        for cache in self.caches:
            stamp = cache / self.stamp
            try:
                if stamp.read_text() == digest:
                    continue
            except OSError:
                pass
            try:
                cache.mkdir(exist_ok=True)
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
        "engine/state.py",
        "engine/kernels.py",
        "engine/movement.py",
        "engine/observation.py",
    )
)
ENGINE = KernelSources("cluedo_kernels.stamp", ENGINE_SOURCES, (PACKAGE / "engine" / "__pycache__",))
"""The engine's kernels (:mod:`cluedo_env.engine.kernels`, ``movement``, ``observation``)."""

__all__ = ["ENGINE", "ENGINE_SOURCES", "KernelSources"]
