"""The project's exception types and the one way every command line reports a bad input.

Library code raises a subclass of :class:`CluedoError` (a ``ValueError``, so older
``except ValueError`` callers keep working) whose message names the field or argument that was
wrong and what is allowed. Command lines run their ``main`` through :func:`run_cli`, which turns
any of these into one line on stderr, ``error: <what> (<what is allowed>)``, and exit status 2,
with no traceback unless ``--debug`` is on the command line. Their parsers are
:class:`ArgumentParser`, whose usage errors take the same form.

The concrete types live next to the code that raises them (``ConfigError`` in
:mod:`cluedo_env.config`, ``SnapshotError`` in :mod:`cluedo_env.snapshot`, ``RecordError`` in
:mod:`cluedo_env.record`, ``IllegalActionError`` in :mod:`cluedo_env.actions`); the ones that would
otherwise pull heavy imports into the command line (:class:`CheckpointError`, whose module needs
torch) are defined here and re-exported where they are used.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

EXIT_USAGE = 2  # bad input: argparse's convention, kept for every error of ours
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


class CluedoError(ValueError):
    """Base of the project's errors for bad input; the message says what was wrong and what is allowed."""


class UsageError(CluedoError):
    """A bad command-line argument (or combination of arguments)."""


class CheckpointError(CluedoError):
    """A checkpoint that cannot be used; the message says which file and why."""


class TrainConfigError(CluedoError):
    """A training config with an unknown key or a bad value."""


# ============================================================================ argument parsing
class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` (one line, with what is allowed) instead of printing usage.

    Callers that want the classic behaviour get it through :func:`run_cli`, which prints the
    message and exits 2; library callers of a script's ``main(argv)`` get an exception they can test.
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(_with_allowed(message, self))


def _with_allowed(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's own messages, each completed with what is allowed (argparse often leaves it out)."""
    message = " ".join(message.split())
    if message.rstrip().endswith(")"):
        return message
    options = sorted({s for a in parser._actions for s in a.option_strings if s.startswith("--")})
    if message.startswith("unrecognized arguments") or message.startswith("ambiguous option"):
        return f"{message} (options of {parser.prog}: {', '.join(options)})"
    if "expected one argument" in message or "expected at least one argument" in message:
        return f"{message} (give a value after the option; see {parser.prog} --help)"
    if message.startswith("the following arguments are required") or message.startswith("one of the arguments"):
        return f"{message} (see {parser.prog} --help)"
    if "invalid" in message and "value" in message:
        return f"{message} (see {parser.prog} --help for the allowed values)"
    return f"{message} (see {parser.prog} --help)"


def int_in(lo: int | None = None, hi: int | None = None, what: str = "an integer") -> Callable[[str], int]:
    """An argparse ``type`` for an integer in ``lo..hi`` whose error names the range."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} ({_range_text(lo, hi)})") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{value} is out of range ({_range_text(lo, hi)})")
        return value

    parse.__name__ = "int"
    return parse


def float_in(lo: float | None = None, what: str = "a number", strict: bool = True) -> Callable[[str], float]:
    """An argparse ``type`` for a finite float above ``lo`` (or at least ``lo`` when not ``strict``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        bound = "" if lo is None else f"{'>' if strict else '>='} {lo:g}"
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (a finite number {bound})".replace(" )", ")"))
        if lo is not None and (value <= lo if strict else value < lo):
            raise argparse.ArgumentTypeError(f"{text} is out of range (a number {bound})")
        return value

    parse.__name__ = "float"
    return parse


def _range_text(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f"an integer from {lo} to {'2**63-1' if hi == SEED_MAX else hi}"
    if lo is not None:
        return f"an integer >= {lo}"
    if hi is not None:
        return f"an integer <= {hi}"
    return "an integer"


SEED_MAX = 2**63 - 1  # numpy's SeedSequence takes any non-negative integer; 63 bits keep it an int64 everywhere
seed_type = int_in(0, SEED_MAX, "a seed")


# ============================================================================ output paths
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


def os_error_text(exc: OSError) -> str:
    """An OSError as a short phrase: the file and the reason, without Python's repr."""
    reason = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
    name = exc.filename if exc.filename is not None else ""
    return f"{name!s}: {reason}" if name else str(reason)


# ============================================================================ running a command
def user_error_types() -> tuple[type[BaseException], ...]:
    """The exception types that mean bad input (printed as ``error:``), including ones of lazily imported modules."""
    types: list[type[BaseException]] = [CluedoError]
    for module, name in (
        ("agents.registry", "UnknownAgentError"),
        ("cluedo_env.config", "ConfigError"),
        ("cluedo_env.snapshot", "SnapshotError"),
        ("cluedo_env.record", "RecordError"),
        ("cluedo_env.actions", "IllegalActionError"),
        ("cluedo_env.board", "BoardError"),
    ):
        mod = sys.modules.get(module)
        if mod is not None and hasattr(mod, name):
            types.append(getattr(mod, name))
    return tuple(types)


def error_line(exc: BaseException) -> str:
    """``error: <message>`` on one line (newlines in a message are folded)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"error: {text}"


def run_cli(main: Callable[[list[str]], Any], argv: Sequence[str] | None = None) -> int:
    """Run ``main(argv)``; bad input becomes one ``error:`` line on stderr and exit status 2.

    ``--debug`` anywhere in ``argv`` is removed and lets the exception (with its traceback)
    through. Ctrl-C exits 130 with one line. An OSError (a disk full, a file vanishing
    while we write it) is reported the same way, exit 1, since it is not the user's input.
    Returns the exit status: ``main``'s if it returned an int, else 0.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    try:
        out = main(args)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        if debug:
            raise
        print("error: interrupted (Ctrl-C); outputs written so far are complete files", file=sys.stderr)
        return EXIT_INTERRUPTED
    except user_error_types() as exc:
        if debug:
            raise
        print(error_line(exc), file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        if debug:
            raise
        print(f"error: {os_error_text(exc)} (check the path, its permissions and free space)", file=sys.stderr)
        return 1
    return out if isinstance(out, int) and not isinstance(out, bool) else 0


__all__ = [
    "ArgumentParser",
    "CheckpointError",
    "CluedoError",
    "TrainConfigError",
    "UsageError",
    "check_writable_dir",
    "clean_stale_tmp",
    "check_writable_file",
    "error_line",
    "float_in",
    "int_in",
    "run_cli",
    "seed_type",
    "user_error_types",
    "write_text_atomic",
]
