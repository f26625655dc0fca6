"""Command-line options shared by every command and script, spelled and checked one way.

Every parser is an :class:`ArgumentParser`, whose usage errors raise
:class:`~cluedo_env.errors.UsageError` (one line naming what is allowed; :func:`~cluedo_env.errors.run_cli`
prints it and exits 2). The argument types (:func:`int_in`, :func:`float_in`, :func:`seed_type`) put the
allowed range in their message, and the rules options (``--preset``, ``--rule KEY=VALUE``,
``--max-turns``, ``--seed``) are added and read by the same functions in ``cluedo``, the scripts and
the trainers.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from cluedo_env.checks import SEED_MAX, range_text
from cluedo_env.errors import UsageError
from cluedo_env.rules.config import MAX_TURNS_LIMIT, PRESETS


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
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} ({range_text(lo, hi)})") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{value} is out of range ({range_text(lo, hi)})")
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


seed_type = int_in(0, SEED_MAX, "a seed")


# ============================================================================ shared arguments
# Every subcommand spells a shared idea the same way: --players, --preset, --rule, --max-turns,
# --seed, --games, --batch-size, --out, --config, --no-progress, --record.
def parse_rule(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` of ``--rule``; the value is read as YAML (``2``, ``true``, ``all``)."""
    import yaml

    if "=" not in text or not text.split("=", 1)[0].strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. --rule refutation=all)")
    key, value = text.split("=", 1)
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        parsed = value
    return key.strip(), parsed


def add_rules_args(ap: argparse.ArgumentParser) -> None:
    """``--preset``, ``--rule KEY=VALUE`` (repeatable) and ``--max-turns``: the rules of the games."""
    ap.add_argument("--preset", default="classic", help=f"rules preset: {', '.join(PRESETS)}, or a YAML rules file")
    ap.add_argument("--rule", action="append", type=parse_rule, default=[], metavar="KEY=VALUE",
                    help="a rules flag on top of the preset, e.g. --rule refutation=all (repeatable)")  # fmt: skip
    ap.add_argument("--max-turns", type=int_in(1, MAX_TURNS_LIMIT), default=None, metavar="N",
                    help=f"cut a game after N turns (1..{MAX_TURNS_LIMIT}; default: the preset's)")  # fmt: skip


def add_seed_arg(ap: argparse.ArgumentParser, default: int | None, what: str) -> None:
    shown = "random" if default is None else default
    ap.add_argument("--seed", type=seed_type, default=default, metavar="N",
                    help=f"seed of {what} (an integer from 0 to 2**63-1; default: {shown})")  # fmt: skip


def rules_overrides(rules: list[tuple[str, object]], max_turns: int | None, players_option: str | None = None,
                    players: int | None = None, preset: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The ``--rule`` and ``--max-turns`` flags as config overrides.

    ``players`` (the seat count another option fixes) wins only if no ``--rule players=...``
    says otherwise: a conflicting ``--rule players=N`` is an error, never silently ignored; so is
    a rules file (``preset``, a YAML path) whose ``players:`` differs.
    """
    if players is not None and preset is not None and preset not in PRESETS and Path(preset).is_file():
        _check_file_players(preset, players_option, players)
    overrides = dict(rules)
    if max_turns is not None:
        if "max_turns" in overrides and overrides["max_turns"] != max_turns:
            raise UsageError(
                f"--rule max_turns={overrides['max_turns']} conflicts with --max-turns {max_turns} (give one of them)"
            )
        overrides["max_turns"] = max_turns
    if players is not None:
        if "players" in overrides and overrides["players"] != players:
            raise UsageError(
                f"--rule players={overrides['players']!r} conflicts with {players_option} ({players} seats) "
                f"(the seat count comes from {players_option}; drop --rule players)"
            )
        overrides["players"] = players
    return overrides


def _check_file_players(path: str, players_option: str | None, players: int) -> None:
    """A rules file that names a seat count other than the command line's is an error, not an override."""
    from cluedo_env.rules.config import read_yaml

    data = read_yaml(path, "rules file")
    if isinstance(data, dict) and isinstance(data.get("rules"), dict):
        data = data["rules"]
    if isinstance(data, dict) and "players" in data and data["players"] != players:
        raise UsageError(f"rules file {path} says players: {data['players']!r} but {players_option} gives {players} "
                         f"seats (make them agree, or drop players: from the file)")  # fmt: skip


__all__ = [
    "SEED_MAX",
    "ArgumentParser",
    "add_rules_args",
    "add_seed_arg",
    "float_in",
    "int_in",
    "parse_rule",
    "rules_overrides",
    "seed_type",
]
