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
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
from numba.core import event
from numba.core.caching import Cache, CacheImpl, IndexDataCacheFile
from numba.core.registry import CPUDispatcher

PACKAGE = Path(__file__).resolve().parents[1]  # cluedo_env/


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
        self.groups: list[KernelSources] = []
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


_NOTICE = _CompileNotice()
event.register("numba:compile", _NOTICE)


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
    """The import prefix of the group's modules: a compile there is announced once (see :class:`_CompileNotice`)."""
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
        if self not in _NOTICE.groups:
            _NOTICE.groups.append(self)
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
        "engine/intrinsics.py",
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

__all__ = ["ENGINE", "ENGINE_SOURCES", "KernelSources", "cache_folder", "discard_unreadable", "is_cached",
           "is_kernel", "merge_index"]
