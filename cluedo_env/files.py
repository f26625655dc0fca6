"""Output files: checked before work starts, written atomically, cleaned up after a killed write.

Commands check every output path (:func:`check_writable_file`, :func:`check_writable_dir`) before
the first game or training step, so a typo costs nothing. Results, records and checkpoints are
written with :func:`write_atomic` (a reader or a killed writer never sees half a file), and
``--resume`` removes what killed writes left (:func:`clean_stale_tmp`).

What is never replaced: an output *file* that is a symlink, a device, a FIFO or a socket is refused
(``os.replace`` would put a regular file in its place, and writing through it could fill a disk or
block); an output *folder* given as a symlink is written through (its files go into the folder it
points to). Inputs are read by :func:`read_input`: a regular file (or a symlink to one) under a size
limit, so ``/dev/zero`` or a FIFO is an error, not an endless read. :func:`lock_dir` holds an output
folder for one run: a second run into it is refused at once, naming the holder's pid.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from cluedo_env.errors import UsageError


def check_writable_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """Fail now, before any work, if ``path`` cannot be written as a file (creating its folder is allowed).

    Nothing is created: only the nearest existing ancestor is checked for write permission.
    """
    p = Path(path)
    if p.exists() and p.is_dir():
        raise UsageError(f"{what} {str(p)!r} is a directory (give a file name, e.g. {str(p / 'out.json')!r})")
    _check_replaceable(p, what)
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"{what} {str(p)!r} is not writable (choose a file you may write)")
    _check_parent(p.parent, what, p)
    return p


def _check_replaceable(p: Path, what: str) -> None:
    """Refuse an output file that is a symlink or not a regular file: it would be replaced, not written."""
    if p.is_symlink():
        raise UsageError(f"{what} {str(p)!r} is a symbolic link (give the path of a regular file; "
                         "a link is never replaced by the output)")  # fmt: skip
    if p.exists() and not p.is_file():
        raise UsageError(f"{what} {str(p)!r} is not a regular file (a device, FIFO or socket; give a file path)")


def check_writable_dir(path: str | os.PathLike, what: str = "output folder") -> Path:
    """Fail now if ``path`` cannot be (or become) a folder we may write into."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{what} {str(p)!r} is a file, not a folder (give a folder path)")
    if p.exists() and not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {str(p)!r} is not writable (choose a folder you may write)")
    _check_parent(p, what, p)
    return p


def _check_parent(folder: Path, what: str, target: Path) -> None:
    anc = folder if str(folder) else Path(".")
    while not anc.exists():
        if anc.parent == anc:
            break
        anc = anc.parent
    if anc.exists() and not anc.is_dir():
        raise UsageError(f"{what} {str(target)!r}: {str(anc)!r} is a file, not a folder (give a path under a folder)")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {str(target)!r}: folder {str(anc)!r} is not writable (choose a folder you may write)")
    try:  # os.access answers yes to root everywhere, also in /proc or on a read-only mount: try it
        tempfile.TemporaryFile(dir=anc).close()
    except OSError as exc:
        why = exc.strerror or exc
        raise UsageError(
            f"{what} {str(target)!r}: cannot write in {str(anc)!r} ({why}; choose a folder you may write)"
        ) from None


def write_atomic(path: str | os.PathLike, write: Callable[[IO[Any]], Any], mode: str = "w") -> Path:
    """Call ``write(f)`` on a temporary file in ``path``'s folder, then ``os.replace`` it onto ``path``.

    A reader (or a killed writer) never sees half a file: the old content stays until the new
    one is complete on disk. ``mode``: ``"w"`` (UTF-8 text) or ``"wb"``.
    """
    path = Path(path)
    _check_replaceable(path, "output file")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, mode, encoding="utf-8" if "b" not in mode else None) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


INPUT_LIMIT = 256 * 1024 * 1024  # far above any record, config or snapshot; a checkpoint passes its own limit


def check_input_file(path: str | os.PathLike, what: str, limit: int = INPUT_LIMIT,
                     error: type[Exception] = UsageError) -> Path:  # fmt: skip
    """``path`` if it is a regular file (or a symlink to one) of at most ``limit`` bytes, else an ``error``."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        raise error(f"cannot read {what} {str(p)!r}: {exc.strerror or exc} (give an existing file)") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO or socket)"
        raise error(f"cannot read {what} {str(p)!r}: it is {kind} (give a regular file)")
    if st.st_size > limit:
        raise error(f"{what} {str(p)!r} is {st.st_size} bytes, over the limit of {limit} (is it the right file?)")
    return p


def read_input(path: str | os.PathLike, what: str, limit: int = INPUT_LIMIT,
               error: type[Exception] = UsageError) -> bytes:  # fmt: skip
    """The bytes of an input file: a regular file (a symlink to one is fine) of at most ``limit`` bytes.

    ``/dev/zero``, a FIFO or a file that grows while read is an ``error`` naming it, never a read
    without end. A missing or unreadable file is an ``error`` too.
    """
    p = check_input_file(path, what, limit, error)
    try:
        with open(p, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {str(p)!r}: {exc.strerror or exc} (give a readable file)") from None
    if len(data) > limit:
        raise error(f"{what} {str(p)!r} grew past the limit of {limit} bytes while read (is it the right file?)")
    return data


LOCK_NAME = ".cluedo.lock"


@contextlib.contextmanager
def lock_dir(path: str | os.PathLike, what: str = "output folder") -> Iterator[Path]:
    """Hold ``path`` (created if needed) for one run: a second run into it fails at once with the holder's pid.

    The lock is an ``flock`` on ``path/.cluedo.lock``, released by the kernel when the process ends,
    however it ends, so a killed run never leaves the folder locked; a run that ends normally removes the
    file (and the folder, if it made it and nothing was written there).
    """
    folder = Path(path)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # no flock (Windows): no lock, as before
        yield folder
        return
    while True:  # the file locked must still be the one at the path (a run ending unlinks it)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise UsageError(f"{what} {str(folder)!r} is in use by another run (pid {holder}; wait for it to end "
                             "or choose another folder)") from None  # fmt: skip
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield folder
    finally:
        with contextlib.suppress(OSError):  # leave the folder as the run left it: no lock file, no empty folder
            lock.unlink()
            if created:
                folder.rmdir()
        os.close(fd)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`write_atomic`)."""
    return write_atomic(path, lambda f: f.write(text))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_tmp(run_dir: Path, log: Callable[[str], None] = print) -> list[Path]:
    """Remove the temporary files of atomic writes that were killed (``.NAME.tmpPID``) in a run's folders.

    A file whose writer (the PID in its name) is still running is left alone.
    """
    removed = []
    run_dir = Path(run_dir)
    for folder in (run_dir, run_dir / "checkpoints"):
        if not folder.is_dir():
            continue
        for p in sorted(folder.glob(".*.tmp*")):
            m = re.search(r"\.tmp(\d+)", p.name)
            pid = int(m.group(1)) if m else None
            if pid is not None and pid != os.getpid() and _alive(pid):
                continue
            if p.is_file():
                p.unlink()
                removed.append(p)
                log(f"resume: removed {p} (left by a write that was killed)")
    return removed


__all__ = [
    "INPUT_LIMIT", "LOCK_NAME", "check_input_file", "check_writable_dir", "check_writable_file", "clean_stale_tmp",
    "lock_dir", "read_input", "write_atomic", "write_text_atomic",
]  # fmt: skip
