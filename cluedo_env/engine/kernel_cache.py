"""Keep numba's on-disk cache of the engine's kernels in step with their sources.

numba caches each compiled function next to its module (``__pycache__/*.nbi``, ``*.nbc``) and
checks only that module's own file when loading it. The engine's kernels inline code and bake in
constants from other modules (``movement.fill_destinations`` into ``kernels.step``, the action ids
of ``actions.py``, ``may_see_shown_card`` into ``observation.encode``), so an edit there would
leave stale machine code in the cache. :func:`ensure_fresh` hashes every module the kernels are
built from and clears the package's numba cache when the hash changes. It runs when
:mod:`cluedo_env.engine.kernels` is imported, before anything is compiled or loaded.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # cluedo_env/
CACHE = Path(__file__).resolve().parent / "__pycache__"  # numba's cache of the engine's kernels
SOURCES = (
    "rules/actions.py",
    "rules/board.py",
    "rules/cards.py",
    "rules/privacy.py",
    "engine/state.py",
    "engine/kernels.py",
    "engine/movement.py",
    "engine/observation.py",
)
STAMP = "cluedo_kernels.stamp"


def sources_digest() -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((PACKAGE / name).read_bytes())
    return h.hexdigest()[:20]


def ensure_fresh() -> bool:
    """Clear the package's numba cache if the kernel sources changed since it was written.

    Returns True if the cache was cleared. A cache elsewhere (``NUMBA_CACHE_DIR``) or a read-only
    package is left alone: numba then recompiles or uses what it finds, as it would anyway.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return False
    cache = CACHE  # read at call time (tests point it elsewhere)
    digest = sources_digest()
    stamp = cache / STAMP
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for path in (*cache.glob("*.nbi"), *cache.glob("*.nbc")):
            path.unlink(missing_ok=True)
        stamp.write_text(digest)
    except OSError:
        return False
    return True


__all__ = ["ensure_fresh", "sources_digest"]
