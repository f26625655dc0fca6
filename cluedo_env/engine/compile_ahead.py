"""Compile a kernel in a helper process while this one compiles others, so an empty numba cache fills on two cores.

numba compiles one function at a time in a process (it holds a global lock), and on an empty cache a few large
kernels that do not depend on each other make the first run wait: the engine's step beside its reset and
observation encoder, a deducer's decisions beside its notebook's propagation. :func:`submit` hands one such kernel
(a numba dispatcher and the numba types of its arguments) to a helper process, ``python -m
cluedo_env.engine.compile_ahead``, which compiles it while this process goes on; :func:`collect`, called before this
process would compile the kernel itself, waits for the helper and copies its machine code into this process's cache,
from where numba loads it. Nothing changes in what is compiled or run: the helper is this package, compiling the
same source for the same types on the same machine, and numba checks the entry's key (signature, CPU, bytecode) as
for any cached kernel.

Only where it can help: the cache misses that version (a warm cache never starts a helper), a core is free for
it (one helper per core beyond this process's), and ``CLUEDO_COMPILE_AHEAD`` is not ``0``. A helper that fails
or is slow costs only its own time: :func:`collect` then lets numba compile the kernel here, as without it.

Why the helper writes to a folder of its own (then :func:`collect` adds its entry to this process's cache through
numba's index): numba reads, changes and writes a function's index without a lock, so two processes writing
versions of one shared helper at once could leave one's index beside the other's machine code.

The cache's index is read and merged by :func:`cluedo_env.engine.numba_internals.merge_index` (numba's internals live
there);
``tests/test_compile_ahead.py`` checks the path end to end.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import numba

from cluedo_env.engine.numba_internals import cache_folder, is_cached, is_kernel, merge_index

ENV_SWITCH = "CLUEDO_COMPILE_AHEAD"  # "0": never start a helper (a helper itself runs with it)
HELPER_TIMEOUT_S = 600  # a helper still compiling after this long is stopped and the kernel compiled here


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS says, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _Helper:
    """One helper process: the kernels it compiles, in order, into its own cache folder, and how many it has
    reported done. It takes more while it works (:meth:`add`), so kernels handed over later queue behind the
    first instead of waiting for a core."""

    def __init__(self, kernels: list[tuple[Any, tuple]]) -> None:
        self.kernels: list[tuple[Any, tuple]] = []
        self.folder = tempfile.mkdtemp(prefix="cluedo-compile-")  # its private cache (NUMBA_CACHE_DIR)
        self.done = 0  # kernels compiled and merged into this process's cache, in order
        self.lock = threading.Lock()  # one reader of its output at a time (engines made in several threads)
        self.queue_lock = threading.Lock()  # one writer of its input at a time, and no kernel added once it stops
        # The helper imports the very files this process runs: their root first on its path.
        self.root = root = _root_of(kernels[0][0])
        path = os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])
        env = {**os.environ, "NUMBA_CACHE_DIR": self.folder, ENV_SWITCH: "0", "PYTHONPATH": path}
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, text=True,
        )  # fmt: skip
        self.timer = threading.Timer(HELPER_TIMEOUT_S, self.process.kill)  # a stuck helper: its kernels compile here
        self.timer.daemon = True
        self.timer.start()
        self.add(kernels)

    def add(self, kernels: list[tuple[Any, tuple]]) -> bool:
        """Queue ``kernels`` behind those already handed over; False (nothing queued) once the helper stopped."""
        with self.queue_lock:
            stdin = self.process.stdin
            if stdin is None or self.process.poll() is not None:
                return False
            try:
                for d, sig in kernels:
                    stdin.write(pickle.dumps((d.py_func.__module__, d.py_func.__name__, sig)).hex() + "\n")
                stdin.flush()
            except OSError:  # it died: the kernels compile here
                self.process.kill()
                return False
            self.kernels.extend(kernels)
            return True

    def wait_for(self, kernel: tuple[Any, tuple]) -> None:
        """Wait until the helper has compiled ``kernel`` (or failed), adding to this process's cache every version it
        compiled by then (the kernels and the helpers they call) that the cache lacks."""
        want = self.kernels.index(kernel) + 1
        folders: list[list[str]] = []  # [source, folder] of each cache folder the helper wrote
        with self.lock:
            while self.done < want and self.process.stdout is not None:
                line = self.process.stdout.readline()
                if not line:  # it ended (a failure): whatever it did not report is compiled here
                    self.stop()
                elif line == "done\n":
                    for source, theirs in folders:
                        ours = cache_folder(Path(source))
                        for index in Path(theirs).glob("*.nbi") if ours is not None else ():
                            merge_index(index, ours)
                    folders.clear()
                    self.done += 1
                elif len(parts := line.rstrip("\n").split("\t")) == 2:  # (anything an import printed: not ours)
                    folders.append(parts)
            with self.queue_lock:
                finished = self.done == len(self.kernels)
            if finished:
                self.stop()

    def stop(self) -> None:
        """End the helper (if it still runs) and remove its folder."""
        self.timer.cancel()
        with self.queue_lock:
            stdin, self.process.stdin = self.process.stdin, None  # it takes no more
        self.process.kill()
        if stdin is not None:
            with contextlib.suppress(OSError):  # (a flush into the pipe of a dead process)
                stdin.close()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
            self.process.stdout = None
        shutil.rmtree(self.folder, ignore_errors=True)


def _root_of(dispatcher: Any) -> Path:
    """The folder ``dispatcher``'s package is imported from: the one above ``cluedo_env`` (a checkout's root when
    installed editable, whose ``agents/`` and ``training/`` install as ``cluedo_env.agents`` and ``.training``)."""
    top = sys.modules[dispatcher.py_func.__module__.partition(".")[0]]
    return Path(top.__file__).resolve().parents[1 if hasattr(top, "__path__") else 0]


_JOBS: dict[tuple[Any, tuple], _Helper] = {}  # (dispatcher, signature) -> the helper compiling it, until collected


def signature_of(args: tuple) -> tuple:
    """numba's types of ``args``: the signature a kernel called with them is compiled for."""
    return tuple(numba.typeof(a) for a in args)


def submit(kernels: list[tuple[Any, tuple]]) -> bool:
    """Start compiling the ``kernels`` (dispatcher, signature: a tuple of numba types), in order, in a helper
    process, if their cache misses: queued behind a helper's kernels where one still works, else in a new helper
    if a core is free; True if handed over.

    :func:`collect` each before this process needs it (numba would otherwise compile it here too).
    """
    todo = [(d, sig) for d, sig in kernels if is_kernel(d) and (d, sig) not in _JOBS
            and sig not in d.overloads]  # fmt: skip (a stand-in for a kernel, as a benchmark's timer: compiled here)
    if os.environ.get(ENV_SWITCH) == "0" or not todo:
        return False
    todo = [(d, sig) for d, sig in todo if not is_cached(d, sig)]
    if not todo:
        return False
    running = [h for h in dict.fromkeys(_JOBS.values()) if h.process.poll() is None]
    # Queued behind the kernels a helper is compiling, if it imports them from the same folder (a helper reports
    # only the caches under its root, and could not import another root's modules).
    same_root = [h for h in running if h.root == _root_of(todo[0][0])]
    if same_root and same_root[0].add(todo):
        helper = same_root[0]
    elif len(running) >= usable_cores() - 1:
        return False
    else:
        helper = _Helper(todo)
    for job in todo:
        _JOBS[job] = helper
    return True


def is_pending(dispatcher: Any, signature: tuple) -> bool:
    """Whether a helper compiles (or queues) ``dispatcher`` for ``signature`` and nobody collected it yet."""
    return (dispatcher, signature) in _JOBS


def collect(dispatcher: Any, signature: tuple) -> None:
    """Wait for the helper compiling ``dispatcher`` for ``signature`` (if any) and add what it compiled to this
    process's cache, so that numba loads it rather than compile it. Does nothing if none was started."""
    helper = _JOBS.pop((dispatcher, signature), None)
    if helper is not None:
        helper.wait_for((dispatcher, signature))


@atexit.register
def _stop_helpers() -> None:
    """Stop the helpers nobody collected from (this process ends first) and remove their folders."""
    for helper in set(_JOBS.values()):
        helper.stop()


def _main() -> None:
    """The helper: compile the kernels named on stdin (one (module, name, signature) a line) into numba's cache, in
    order, until stdin closes; after each, print for each cache folder written a source file of the package it
    caches and the folder, then ``done``."""
    root = Path(sys.argv[1])
    for line in sys.stdin:
        # The pipe from the process that started this helper (its stdin, never a file): numba types have no other
        # faithful text form, and only that parent writes here.
        module, name, signature = pickle.loads(bytes.fromhex(line.strip()))
        getattr(importlib.import_module(module), name).compile(signature)
        seen = set()
        for loaded in list(sys.modules.values()):
            source = Path(getattr(loaded, "__file__", None) or "/").resolve()
            folder = cache_folder(source) if source.is_relative_to(root) and source.suffix == ".py" else None
            if folder is not None and folder not in seen and any(folder.glob("*.nbi")):
                seen.add(folder)
                print(f"{source}\t{folder}")
        print("done", flush=True)


if __name__ == "__main__":
    _main()
