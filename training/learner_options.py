"""The learner env's options as one typed, checked object: :class:`LearnerOptions`.

Every front end of the learner env (the Gymnasium envs of :mod:`cluedo_env.training.single_agent`, the SB3 VecEnv of
:mod:`cluedo_env.training.sb3.vec_env`, the RLlib vector env) and
:class:`~cluedo_env.training.learner_core.LearnerCore` itself take
the same options; they are checked here, once, when the object is built, so that a bad value fails with a
message naming the option and what is allowed before any engine or opponent is made. The front ends keep
their keyword arguments (``gymnasium.make("cluedo_env/Cluedo-v0", opponents="heuristic", players=3)``) and
build the object with :meth:`LearnerOptions.from_keywords`, which also refuses unknown keywords.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from cluedo_env.agents.learner.compact_observation import check_observation
from cluedo_env.agents.learner.inputs import (
    check_accuse_gate,
    check_packed_observation,
    check_perception,
    check_shaping,
)

from cluedo_env.checks import check_bool, check_seed
from cluedo_env.rules.config import ConfigError, RulesConfig, make_config

BOOL_OPTIONS = ("macro_moves", "end_on_elimination", "macro_accuse", "belief", "packed_observation",
                "mask_in_observation")  # fmt: skip
# Options that only the Gymnasium envs of cluedo_env.training.single_agent implement (each takes them as its own
# keyword): they are left out of OPTION_NAMES, so that another front end refuses them as unknown keywords
# instead of ignoring them.
GYMNASIUM_ONLY_OPTIONS = ("mask_in_observation",)

UNPLAYED_MODES = ("step", "skip")
ILLEGAL_ACTION_MODES = ("raise", "lose")


@dataclasses.dataclass(frozen=True)
class LearnerOptions:
    """What a batch of learner games is: rules, opponents, the learner's seat, inputs and action space.

    ``batch_size``: games played at once (one learner seat each). ``config``: the rules (a
    :class:`RulesConfig`, a preset name or a mapping), with ``rules`` flags over it (``{"players": 3}``).
    The other options are described in :mod:`cluedo_env.training.single_agent`. After checking, ``shaping`` holds its
    defaults filled in and ``rules_config`` the resolved rules. ``mask_in_observation`` (the observation as
    ``{"observation", "action_mask"}``) is read by the Gymnasium envs only (:data:`GYMNASIUM_ONLY_OPTIONS`).
    """

    batch_size: int = 1
    config: RulesConfig | str | dict | None = None
    opponents: Any = "random"
    seat: int | str = 0
    macro_moves: bool = False
    end_on_elimination: bool = True
    seed: int | None = None
    illegal_action: str = "raise"
    macro_accuse: bool = False
    belief: bool = False
    unplayed_games: str = "step"
    observation: str = "full"
    packed_observation: bool = False
    advisor: str | None = None
    accusation_features: bool = False
    holder_probabilities: bool = False
    accuse_gate: str | float | None = None
    shaping: Mapping[str, Any] | None = None
    mask_in_observation: bool = False
    rules: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    rules_config: RulesConfig = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in BOOL_OPTIONS:  # 'no' is true to Python: only a bool says what it means
            check_bool(name, getattr(self, name))
        check_seed(self.seed)
        check_observation(self.observation, self.belief)
        check_packed_observation(self.packed_observation, self.observation, self.belief)
        check_accuse_gate(self.accuse_gate, self.macro_accuse)
        object.__setattr__(self, "shaping", check_shaping(self.shaping, self.belief))
        if self.macro_accuse and not self.belief:
            raise ConfigError("macro_accuse=True needs belief=True (the accusation is the belief's best triple)")
        if self.advisor is not None:
            if not isinstance(self.advisor, str) or not self.advisor:
                raise ConfigError(f"advisor must be a player name (e.g. 'deducer') or None, got {self.advisor!r}")
            if not self.belief:
                raise ConfigError("advisor needs belief=True (the learner's accusation is the belief's best triple)")
            if self.macro_moves or self.macro_accuse:
                raise ConfigError("advisor replaces macro_moves and macro_accuse (the advisor moves, the learner "
                                  "chooses only between the advisor's action and accusing): leave them false")
        for name in ("accusation_features", "holder_probabilities"):
            check_perception(name, getattr(self, name), self.belief, self.advisor)
        if self.illegal_action not in ILLEGAL_ACTION_MODES:
            raise ConfigError(f"illegal_action must be 'raise' or 'lose', got {self.illegal_action!r}")
        if self.unplayed_games not in UNPLAYED_MODES:
            raise ConfigError(f"unplayed_games must be one of {list(UNPLAYED_MODES)}, got {self.unplayed_games!r}")
        if type(self.batch_size) is not int or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        rules = make_config(self.config, **dict(self.rules))
        P = rules.players
        if self.seat != "random" and not (
            isinstance(self.seat, (int, np.integer)) and not isinstance(self.seat, bool) and 0 <= self.seat < P
        ):
            raise ConfigError(f"seat must be 0..{P - 1} or 'random', got {self.seat!r}")
        object.__setattr__(self, "rules_config", rules)

    @classmethod
    def from_keywords(cls, owner: str, env_keywords: Iterable[str], batch_size: int,
                      config: RulesConfig | str | dict | None, **keywords: Any) -> LearnerOptions:  # fmt: skip
        """The options of an env built with keyword arguments: option names go to their fields, rules flags
        (``players``, ``max_turns`` ...) to ``rules``; anything else is refused, naming ``env_keywords``."""
        options = {k: v for k, v in keywords.items() if k in OPTION_NAMES}
        flags = {k: v for k, v in keywords.items() if k not in OPTION_NAMES}
        check_keywords(owner, flags, env_keywords)
        return cls(batch_size, config, rules=flags, **options)


# The options an env passes through by keyword (batch size and rules are the env's own arguments; the Gymnasium-only
# options are the Gymnasium envs' own keywords).
OPTION_NAMES: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(LearnerOptions)
    if f.init and f.name not in ("batch_size", "config", "rules", *GYMNASIUM_ONLY_OPTIONS)
)


def rules_keywords() -> list[str]:
    """The rules flags an env takes as keywords (the fields of :class:`RulesConfig` but its preset)."""
    return [f.name for f in dataclasses.fields(RulesConfig) if f.name != "preset"]


def keywords_of(*functions: Callable[..., Any]) -> list[str]:
    """The named parameters of ``functions`` (in order, no duplicates, no ``self`` or ``**flags``)."""
    names: list[str] = []
    for fn in functions:
        for p in inspect.signature(fn).parameters.values():
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self" and p.name not in names:
                names.append(p.name)
    return names


def check_keywords(owner: str, flags: dict[str, Any], env_keywords: Iterable[str]) -> None:
    """Refuse keyword arguments that are neither the env's nor rules flags, listing all it takes.

    Tools pass keywords a user never typed (SB3's ``make_vec_env`` passes ``render_mode``), so the
    message names every keyword that would have been accepted, not only the rules flags.
    """
    rules = rules_keywords()
    unknown = sorted(set(flags) - set(rules))
    if unknown:
        raise ConfigError(
            f"{owner}: unknown keyword argument(s) {unknown}; env keywords: {', '.join(env_keywords)}; "
            f"rules keywords: {', '.join(rules)}"
        )


__all__ = [
    "GYMNASIUM_ONLY_OPTIONS", "ILLEGAL_ACTION_MODES", "OPTION_NAMES", "UNPLAYED_MODES", "LearnerOptions",
    "check_keywords", "keywords_of", "rules_keywords",
]  # fmt: skip
