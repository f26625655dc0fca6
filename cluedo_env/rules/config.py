"""Rules configuration: every variant flag of RULES.md section V, presets, and YAML loading.

A :class:`RulesConfig` is frozen and validated on creation, so an engine never sees an
impossible combination. Build one from a preset plus overrides::

    RulesConfig.from_preset("classic", players=6, max_turns=300)
    load_config("configs/seed000.yaml")        # a YAML file: preset + flags
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluedo_env.errors import CluedoError

CONFIG_LIMIT = 1024 * 1024  # a rules or training config is a few hundred bytes
MAX_TURNS_LIMIT = 10_000  # far beyond any real game (a few hundred turns); engines allocate history per turn

_CHOICES: dict[str, tuple[Any, ...]] = {
    "board": ("classic", "none"),
    "dice": (1, 2),
    "suggestion_on_entry": ("mandatory", "optional"),
    "refutation": ("first", "all"),
    "accuse_after_suggestion": (True, False),
    "accusation_in_room": (True, False),
    "last_standing": ("wins", "plays_on"),
}


class ConfigError(CluedoError):
    """A rules configuration that RULES.md does not allow; the message says what is allowed."""


@dataclass(frozen=True)
class RulesConfig:
    """The rule variants of RULES.md section V. Defaults are the ``classic`` preset."""

    board: str = "classic"  # "classic" or "none" (card-only game, R-C1)
    dice: int = 1  # R-D1: 1 or 2 six-sided dice
    suggestion_on_entry: str = "mandatory"  # R-G2
    refutation: str = "first"  # R-G6: "first" refuter only, or "all" players
    accuse_after_suggestion: bool = True  # R-G8
    accusation_in_room: bool = False  # R-A1
    last_standing: str = "wins"  # R-E2
    players: int = 4  # R-S1
    max_turns: int = 400  # R-E3: truncate after this many turns (all players' turns counted)
    preset: str = "classic"  # the preset this config started from (informational)

    def __post_init__(self) -> None:
        for key, allowed in _CHOICES.items():
            value = getattr(self, key)
            if value not in allowed or type(value) is not type(allowed[0]):
                raise ConfigError(f"{key}={value!r} is not allowed (choose one of {list(allowed)})")
        lo = 3 if self.board == "none" or self.preset in ("seed000", "cards") else 2
        if type(self.players) is not int or not lo <= self.players <= 6:
            where = "the card-only game and the seed000 sheet take" if lo == 3 else "the classic board takes"
            raise ConfigError(f"players={self.players!r} is not allowed ({where} {lo} to 6 players, R-S1, R-C1)")
        if type(self.max_turns) is not int or not 1 <= self.max_turns <= MAX_TURNS_LIMIT:
            raise ConfigError(
                f"max_turns={self.max_turns!r} is not allowed (a positive integer up to {MAX_TURNS_LIMIT}, R-E3)"
            )
        if self.board == "none" and self.accusation_in_room:
            raise ConfigError(
                "accusation_in_room=True needs a board (the card-only game, board=none, has no rooms to stand in)"
            )
        _check_preset(self.preset)

    @property
    def has_board(self) -> bool:
        return self.board == "classic"

    @property
    def max_roll(self) -> int:
        return 6 * self.dice

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_preset(cls, preset: str = "classic", **overrides: Any) -> RulesConfig:
        """The named preset with any flag overridden; unknown presets or keys raise ConfigError."""
        _check_preset(preset)
        _check_keys(overrides)
        return cls(**{**PRESETS[preset], **overrides, "preset": preset})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RulesConfig:
        """From a mapping such as a YAML file: an optional ``preset`` plus flags."""
        if not isinstance(data, dict):
            raise ConfigError(
                f"a rules config must be a mapping of flags, got {type(data).__name__} (e.g. {{preset: classic}})"
            )
        data = dict(data)
        _check_keys(data)
        preset = data.pop("preset", "classic")
        return cls.from_preset(preset, **data)


def _check_preset(preset: Any) -> None:
    if not isinstance(preset, str) or preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r} (presets are: {', '.join(PRESETS)})")


def _check_keys(overrides: dict[Any, Any]) -> None:
    fields = [f.name for f in dataclasses.fields(RulesConfig) if f.name != "preset"]
    unknown = sorted((set(overrides) - {*fields, "preset"}), key=repr)
    if unknown:
        raise ConfigError(f"unknown config key(s) {unknown} (allowed keys are: preset, {', '.join(fields)})")


# RULES.md section V. `players` defaults to 4 on every preset.
PRESETS: dict[str, dict[str, Any]] = {
    "classic": {},
    "seed000": {
        "dice": 2,
        "suggestion_on_entry": "optional",
        "refutation": "all",
        "accuse_after_suggestion": False,
        "accusation_in_room": True,
        "last_standing": "plays_on",
    },
    "cards": {"board": "none", "last_standing": "plays_on"},
}


def load_config(path: str | Path, **overrides: Any) -> RulesConfig:
    """Read a YAML rules file (``preset:`` plus flags); ``overrides`` win over the file."""
    data = read_yaml(path, "rules file")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: a rules file must be a mapping of flags, got {type(data).__name__} (e.g. 'preset: classic')"
        )
    if "rules" in data:  # training configs nest the rules under `rules:`
        data = data["rules"] if data["rules"] is not None else {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: 'rules' must be a mapping of flags, got {type(data).__name__} (e.g. dice: 2)")
    try:
        return RulesConfig.from_dict({**data, **overrides})
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def read_yaml(path: str | Path, what: str = "config file", error: type[Exception] = ConfigError) -> Any:
    """A YAML file's content; ``error`` (ConfigError by default) names the file and the reason it cannot be read."""
    import yaml

    from cluedo_env.files import read_input

    try:
        text = read_input(path, what, CONFIG_LIMIT, error).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not a text file ({exc.reason} at byte {exc.start}; a {what} is UTF-8 YAML)") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    except RecursionError:
        raise error(f"{path}: YAML nested too deeply (a {what} is a flat mapping of keys)") from None


def make_config(config: RulesConfig | str | Path | dict[str, Any] | None = None, **overrides: Any) -> RulesConfig:
    """Accept what users pass around: a RulesConfig, a preset name, a YAML path, or a dict."""
    if config is None:
        return RulesConfig.from_dict(dict(overrides))
    if isinstance(config, RulesConfig):
        _check_keys(overrides)
        return dataclasses.replace(config, **overrides) if overrides else config
    if isinstance(config, dict):
        return RulesConfig.from_dict({**config, **overrides})
    text = str(config)
    if text in PRESETS:
        return RulesConfig.from_preset(text, **overrides)
    if text.endswith((".yaml", ".yml")) or Path(text).exists():
        return load_config(text, **overrides)
    raise ConfigError(f"unknown preset {text!r} (presets are: {', '.join(PRESETS)}, or a .yaml rules file)")
