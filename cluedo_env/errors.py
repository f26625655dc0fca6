"""The project's exception types and the one way every command line reports a bad input.

Library code raises a subclass of :class:`CluedoError` (a ``ValueError``, so older
``except ValueError`` callers keep working) whose message names the field or argument that was
wrong and what is allowed. Command lines run their ``main`` through :func:`run_cli`, which turns
any of these into one line on stderr, ``error: <what> (<what is allowed>)``, and exit status 2,
with no traceback unless ``--debug`` is on the command line. Their parsers are
:class:`cluedo_env.options.ArgumentParser`, whose usage errors take the same form.

The concrete types live next to the code that raises them (``ConfigError`` in
:mod:`cluedo_env.rules.config`, ``SnapshotError`` in :mod:`cluedo_env.engine.snapshot`, ``RecordError`` in
:mod:`cluedo_env.record`, ``IllegalActionError`` in :mod:`cluedo_env.rules.actions`); the ones that would
otherwise pull heavy imports into the command line (:class:`CheckpointError`, whose module needs
torch) are defined here and re-exported where they are used.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Sequence
from typing import Any

EXIT_USAGE = 2  # bad input: argparse's convention, kept for every error of ours
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


class CluedoError(ValueError):
    """Base of the project's errors for bad input; the message says what was wrong and what is allowed."""


class CluedoIndexError(CluedoError, IndexError):
    """An index (a game slot, a seat) outside what exists; still caught by ``except IndexError``."""


class CluedoKeyError(CluedoError, KeyError):
    """An unknown name (an agent, a key); still caught by ``except KeyError``."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class UnknownAgentError(CluedoKeyError):
    """An agent name that is not one of a game's (``player_0`` .. ``player_{P-1}``)."""


class GameOverError(CluedoKeyError):
    """A call that needs an agent after the game ended and every agent was removed (PettingZoo's ``KeyError``)."""


class CluedoTypeError(CluedoError, TypeError):
    """A value of the wrong type (a string for a flag, a float array for ``out=``); still a ``TypeError``."""


class UsageError(CluedoError):
    """A bad command-line argument (or combination of arguments)."""


class CheckpointError(CluedoError):
    """A checkpoint that cannot be used; the message says which file and why."""


class TrainConfigError(CluedoError):
    """A training config with an unknown key or a bad value."""


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
        ("cluedo_env.rules.config", "ConfigError"),
        ("cluedo_env.engine.snapshot", "SnapshotError"),
        ("cluedo_env.record", "RecordError"),
        ("cluedo_env.rules.actions", "IllegalActionError"),
        ("cluedo_env.rules.board", "BoardError"),
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
    "CheckpointError",
    "CluedoError",
    "CluedoIndexError",
    "CluedoKeyError",
    "CluedoTypeError",
    "GameOverError",
    "UnknownAgentError",
    "TrainConfigError",
    "UsageError",
    "error_line",
    "os_error_text",
    "run_cli",
    "user_error_types",
]
