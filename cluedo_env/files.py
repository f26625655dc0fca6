"""Output files: checked before work starts, written atomically, cleaned up after a killed write.

Commands check every output path (:func:`check_writable_file`, :func:`check_writable_dir`) before
the first game or training step, so a typo costs nothing. Results, records and checkpoints are
written with :func:`write_atomic` (a reader or a killed writer never sees half a file), and
``--resume`` removes what killed writes left (:func:`clean_stale_tmp`).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
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
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"{what} {str(p)!r} is not writable (choose a file you may write)")
    _check_parent(p.parent, what, p)
    return p


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


__all__ = ["check_writable_dir", "check_writable_file", "clean_stale_tmp", "write_atomic", "write_text_atomic"]
