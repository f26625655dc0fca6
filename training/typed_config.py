"""What the training backends' typed configs share: a YAML mapping read, overrides merged, sections built with
unknown keys refused, the checks' errors raised as a config's own, and a config turned back into plain data.

Each backend's config (:class:`cluedo_env.training.sb3.config.TrainConfig`,
:class:`cluedo_env.training.rllib.config.RllibConfig`) is a frozen dataclass of frozen section dataclasses,
checked when it is built. Why typed: a key misspelt in code fails where it is written (an attribute), not as a
``KeyError`` deep in a run, and every value is checked once, at the edge, before any env, model or Ray starts.
The backends never import each other (CONTRIBUTING.md), so what both need lives here, below both.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cluedo_env.checks import OptionRangeError, OptionTypeError
from cluedo_env.errors import TrainConfigError
from cluedo_env.rules.config import ConfigError, read_yaml


@contextlib.contextmanager
def config_errors(prefix: str = "") -> Iterator[None]:
    """Raise what a shared check refuses (:mod:`cluedo_env.checks`, a :class:`ConfigError` of the rules or the
    learner inputs) as a :class:`TrainConfigError`, its message after ``prefix`` (e.g. ``"env."``)."""
    try:
        yield
    except TrainConfigError:
        raise
    except (OptionTypeError, OptionRangeError, ConfigError) as exc:
        raise TrainConfigError(f"{prefix}{exc}") from None


def refuse(key: str, value: Any, allowed: str) -> None:
    """Raise the config error of a bad value: ``key=value is not allowed (allowed)``."""
    raise TrainConfigError(f"{key}={value!r} is not allowed ({allowed})")


def field_names(cls: type) -> list[str]:
    """The keys a section (or a whole config) takes: its dataclass's init fields, in order."""
    return [f.name for f in dataclasses.fields(cls) if f.init]


def check_keys(data: Mapping[str, Any], cls: type, where: str = "") -> None:
    """Refuse a key that ``cls`` does not take, naming it with its section (``'env.colour'``) and the keys allowed."""
    allowed = field_names(cls)
    for key in data:
        if key not in allowed:
            raise TrainConfigError(f"unknown config key {f'{where}{key}'!r} (allowed: {', '.join(sorted(allowed))})")


def section(cls: type, value: Any, key: str) -> Any:
    """The section ``key`` as a ``cls``: kept if it is one, built from a mapping (unknown keys refused)."""
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise TrainConfigError(f"config key {key!r} must be a mapping, got {value!r} "
                               f"(keys: {', '.join(field_names(cls))})")  # fmt: skip
    check_keys(value, cls, f"{key}.")
    return cls(**value)


def merge(base: Mapping[str, Any], over: Mapping[str, Any], sections: tuple[str, ...]) -> dict[str, Any]:
    """``over`` on ``base``: a section (``sections``) given in both is merged key by key, any other key replaced."""
    out = dict(base)
    for key, value in over.items():
        both = isinstance(out.get(key), Mapping) and isinstance(value, Mapping)
        out[key] = {**out[key], **value} if key in sections and both else value
    return out


def read_mapping(path: str | Path, what: str, example: str, keys: list[str]) -> dict[str, Any]:
    """A config file's mapping of keys (``yaml.safe_load``: nothing in it can run code); an empty file or another
    YAML value is refused, naming ``keys`` and an ``example`` file."""
    data = read_yaml(path, what, TrainConfigError)
    if data is None:
        raise TrainConfigError(f"{path}: the {what} is empty (a mapping of keys such as {', '.join(keys[:4])}; "
                               f"see {example})")  # fmt: skip
    if not isinstance(data, dict):
        raise TrainConfigError(f"{path}: the {what} must be a mapping of keys, got a YAML {type(data).__name__} "
                               f"(keys: {', '.join(keys)})")  # fmt: skip
    return data


def plain(value: Any) -> Any:
    """A config (or any value in it) as plain data, what JSON holds: dataclasses as dicts of their init fields,
    tuples as lists. A run saves its config this way and ``--resume`` compares it so."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


__all__ = ["check_keys", "config_errors", "field_names", "merge", "plain", "read_mapping", "refuse", "section"]
