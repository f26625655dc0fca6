"""One validator for the typed options of every front end: the envs' keywords, the configs and the command lines.

A flag is a ``bool`` and nothing else (``macro_moves='no'`` would be true to Python, so it is refused), a
count an ``int`` in its range (``True`` and ``2.0`` are refused), a rate a finite number in its range (``'1e-3'``,
``True`` and ``nan`` are refused), a seed a non-negative integer below 2**63. Each check raises a
:class:`~cluedo_env.errors.CluedoError` that also derives from the builtin a caller would have caught before
(``TypeError`` for a wrong type, ``ValueError`` for a value out of range).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from cluedo_env.errors import CluedoError, CluedoTypeError

SEED_MAX = 2**63 - 1  # numpy's SeedSequence takes any non-negative integer; 63 bits keep it an int64 everywhere


class OptionTypeError(CluedoTypeError):
    """An option of the wrong type: the message names the option, the value and the type allowed."""


class OptionRangeError(CluedoError):
    """An option outside its range: the message names the option, the value and the range."""


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is a ``bool`` (or numpy's); anything else, ``'no'`` and ``0`` included, is refused."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise OptionTypeError(f"{name} must be True or False, got {value!r} (a {type(value).__name__})")


def is_int(value: Any) -> bool:
    """An integer that is not a bool (``True`` is an int to Python, never a count here)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool, not a float) in ``lo..hi``."""
    if not is_int(value):
        raise OptionTypeError(f"{name} must be {range_text(lo, hi)}, got {value!r} (a {type(value).__name__})")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise OptionRangeError(f"{name}={value} is out of range ({range_text(lo, hi)})")
    return value


def check_seed(value: Any, name: str = "seed", optional: bool = True) -> int | None:
    """A seed: ``None`` (fresh entropy, where ``optional``) or an integer from 0 to 2**63-1."""
    if value is None and optional:
        return None
    if not is_int(value):
        raise OptionTypeError(f"{name} must be an integer from 0 to 2**63-1{' or None' if optional else ''}, "
                              f"got {value!r} (a {type(value).__name__})")  # fmt: skip
    if not 0 <= int(value) <= SEED_MAX:
        raise OptionRangeError(f"{name}={value} is out of range (an integer from 0 to 2**63-1)")
    return int(value)


def is_number(value: Any) -> bool:
    """A finite real number that is not a bool (an int, a float, numpy's; ``True`` is never a rate here)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and math.isfinite(value)


def check_number(name: str, value: Any, lo: float | None = None, hi: float | None = None,
                 above: bool = False) -> float:  # fmt: skip
    """``value`` as a ``float`` if it is a finite number (not a bool, not a string) from ``lo`` (excluded where
    ``above``: a learning rate must be > 0) to ``hi``."""
    if not is_number(value):
        raise OptionTypeError(f"{name} must be {number_text(lo, hi, above)}, got {value!r} "
                              f"(a {type(value).__name__})")  # fmt: skip
    value = float(value)
    if (lo is not None and (value <= lo if above else value < lo)) or (hi is not None and value > hi):
        raise OptionRangeError(f"{name}={value:g} is out of range ({number_text(lo, hi, above)})")
    return value


def number_text(lo: float | None, hi: float | None, above: bool = False) -> str:
    """What a number in [lo, hi] (or (lo, hi] where ``above``) is, for messages (either bound may be open)."""
    if lo is not None and hi is not None:
        return f"a number above {lo:g} and at most {hi:g}" if above else f"a number from {lo:g} to {hi:g}"
    if lo is not None:
        return f"a number {'>' if above else '>='} {lo:g}"
    if hi is not None:
        return f"a number <= {hi:g}"
    return "a finite number"


def range_text(lo: int | None, hi: int | None) -> str:
    """What an integer in [lo, hi] is, for messages (either bound may be open)."""
    if lo is not None and hi is not None:
        return f"an integer from {lo} to {'2**63-1' if hi == SEED_MAX else hi}"
    if lo is not None:
        return f"an integer >= {lo}"
    if hi is not None:
        return f"an integer <= {hi}"
    return "an integer"


__all__ = ["SEED_MAX", "OptionRangeError", "OptionTypeError", "check_bool", "check_int", "check_number", "check_seed",
           "is_int", "is_number", "number_text", "range_text"]
