"""The RLlib training config as one typed, checked object: :class:`RllibConfig`, built before Ray starts.

:func:`load_config` reads the YAML (``yaml.safe_load``), merges the overrides and builds the config once; the trainer,
the algorithm builder and the bench read its attributes. A bad value fails while it is built, with a
:class:`~cluedo_env.errors.TrainConfigError` naming the key, the value and what is allowed. This module sits at the
bottom of :mod:`cluedo_env.training.rllib`: the names the runners share with the config (:data:`LEARNER_DEFAULTS`,
:data:`INPUT_OPTIONS`, :data:`LEAGUE`, :data:`MAPPINGS`, :func:`opponent_specs`) live here and the runners import
them; it imports nothing else of the package.

Sections: ``learner``, ``league``, ``selfplay``, ``ray`` and ``eval`` are dataclasses (an unknown key is an
error); ``env`` (the rules: ``preset``, ``players`` and any ``RulesConfig`` flag), ``env_runners``, ``learners``,
``ppo`` (RLlib's ``PPOConfig.training`` keywords) and ``model`` (the module's ``model_config``) are mappings merged
over their defaults (:data:`MAPPING_DEFAULTS`) and handed to RLlib, which checks its own keywords.

Setups (``setup:`` in the YAML):

* ``vs_bots``: one learner seat per game against ``opponents`` (any :func:`cluedo_env.agents.play.registry.make_agent`
  player: ``random``, ``heuristic``, ``deducer``, ``expert``, ``notebook``, ``ckpt:PATH``,
  ``rllib:PATH``; or ``league``, frozen snapshots of the learning module, :mod:`cluedo_env.training.rllib.league`),
  played inside the env. RLlib's ``SingleAgentEnvRunner`` steps ``num_envs_per_env_runner`` games
  per call in one batched engine (:mod:`cluedo_env.training.rllib.vector_env`). ``learner:`` sets the learner env's
  options (``seat``, ``macro_moves``, ``macro_accuse``, ``belief``), as in the SB3 configs.
  ``sampler: bulk`` (or ``--sampler bulk``) samples with :class:`cluedo_env.training.rllib.bulk_runner.BulkEnvRunner`
  instead of RLlib's runner: the same episodes, built once per rollout fragment (docs/training.md, "Ray RLlib").
  ``precision: bfloat16`` (or ``--precision bfloat16``) runs the module's networks under CPU autocast in the
  env runners and the learner (float32 weights, logits, values and losses; a checkpoint plays float32), as
  ``precision`` does in an SB3 config: several times cheaper products on CPUs with AMX or AVX512-BF16.
* ``selfplay``: every seat is a module of ``selfplay.policies`` (mapped ``by_seat`` or ``shuffled`` per game;
  ``selfplay.train``: those that learn). ``sampler: rllib``: the PettingZoo AEC env in RLlib's ``PettingZooEnv``
  wrapper (``"cluedo_v0"``; the bare env raises ``IllegalActionError`` on an illegal action, so a masking bug
  stops training loudly), one game per env, one move per step. ``sampler: bulk``:
  :class:`cluedo_env.training.rllib.selfplay_runner.BulkSelfPlayRunner`, ``num_envs_per_env_runner`` games of one engine
  per runner; there ``selfplay.bots`` may seat rule-based players or ``league`` (frozen snapshots of the first
  module), and ``learner:`` (belief, observation, macro actions) gives every seat the vs_bots learner's inputs.

Scale-out keys: ``env_runners.num_env_runners``, ``env_runners.num_envs_per_env_runner``,
``env_runners.num_cpus_per_env_runner``, ``learners.num_learners``, ``learners.num_gpus_per_learner``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cluedo_env.agents.learner.compact_observation import check_observation
from cluedo_env.agents.learner.inputs import check_packed_observation
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.training.learner_options import UNPLAYED_MODES
from cluedo_env.training.players import register_player_prefixes
from cluedo_env.training.precision import PRECISIONS
from cluedo_env.training.typed_config import (
    check_keys,
    config_errors,
    field_names,
    merge,
    plain,
    read_mapping,
    refuse,
    section,
)

from cluedo_env.checks import check_bool, check_int, check_seed, is_int
from cluedo_env.errors import TrainConfigError
from cluedo_env.rules.config import ConfigError, RulesConfig, make_config

SETUPS = ("vs_bots", "selfplay")
# ``sampler:`` of a vs_bots config: RLlib's own env runner, or cluedo_env.training.rllib.bulk_runner.BulkEnvRunner
SAMPLERS = ("rllib", "bulk")
MAPPINGS = ("by_seat", "shuffled")  # ``selfplay.mapping``
LEAGUE = "league"  # an opponent or bot name: frozen snapshots of the learning module (cluedo_env.training.rllib.league)
INPUT_OPTIONS = ("belief", "observation", "macro_moves", "macro_accuse")  # what self-play modules may take
BOOL_OPTIONS = ("macro_moves", "macro_accuse", "belief", "packed_observation", "end_on_elimination")

# The mapping sections (RLlib's own keywords, or the rules flags), merged key by key over these defaults.
MAPPING_DEFAULTS: dict[str, dict[str, Any]] = {
    "env": {"preset": "classic", "players": 4},
    "env_runners": {"num_env_runners": 1, "num_envs_per_env_runner": 1, "rollout_fragment_length": 100,
                    "episodes_to_numpy": False},  # fmt: skip
    "learners": {"num_learners": 0, "num_gpus_per_learner": 0},
    "ppo": {"train_batch_size_per_learner": 4000, "minibatch_size": 500, "num_epochs": 4, "lr": 3.0e-4,
            "entropy_coeff": 0.0, "gamma": 0.995, "lambda_": 0.95},  # fmt: skip
    "model": {"fcnet_hiddens": [256, 256]},
}


@dataclasses.dataclass(frozen=True)
class LearnerSettings:
    """``learner:``: the learner env's options (vs_bots), or the self-play modules' inputs (:data:`INPUT_OPTIONS`)."""

    seat: int | str = "random"
    macro_moves: bool = False
    macro_accuse: bool = False
    belief: bool = False
    observation: str = "full"
    packed_observation: bool = False
    unplayed_games: str = "step"
    end_on_elimination: bool = True

    def __post_init__(self) -> None:
        with config_errors():
            for key in BOOL_OPTIONS:
                object.__setattr__(self, key, check_bool(f"learner.{key}", getattr(self, key)))
        if self.macro_accuse and not self.belief:
            raise TrainConfigError("learner.macro_accuse=true needs learner.belief=true "
                                   "(the macro accusation accuses the belief's best triple)")  # fmt: skip
        with config_errors("learner: "):
            check_observation(self.observation, self.belief)
        with config_errors("learner."):
            check_packed_observation(self.packed_observation, self.observation, self.belief)
        if self.unplayed_games not in UNPLAYED_MODES:
            refuse("learner.unplayed_games", self.unplayed_games, f"one of {', '.join(UNPLAYED_MODES)}")

    def module_options(self) -> dict[str, Any]:
        """The options that fix a module's inputs and action space (a frozen copy must use the same)."""
        return learner_options(plain(self))


LEARNER_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(LearnerSettings)}


@dataclasses.dataclass(frozen=True)
class LeagueSettings:
    """``league:``: frozen snapshots of the learning module every ``snapshot_every`` iterations (0: none)."""

    snapshot_every: int = 0
    max_snapshots: int = 8

    def __post_init__(self) -> None:
        with config_errors():
            object.__setattr__(self, "snapshot_every", check_int("league.snapshot_every", self.snapshot_every, 0))
            object.__setattr__(self, "max_snapshots", check_int("league.max_snapshots", self.max_snapshots, 1, 1000))


@dataclasses.dataclass(frozen=True)
class SelfplaySettings:
    """``selfplay:``: the modules, which of them learn (None: all), how seats map to them, and rule-based bots."""

    policies: tuple[str, ...] = ("main",)
    train: tuple[str, ...] | None = None
    mapping: str = "by_seat"
    bots: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        policies, train, bots = self.policies, self.train, self.bots
        if not (isinstance(policies, (list, tuple)) and policies and all(isinstance(p, str) and p for p in policies)
                and len(set(policies)) == len(policies)):  # fmt: skip
            refuse("selfplay.policies", plain(policies), "a list of distinct module names, e.g. [main] or "
                                                         "[main, rival]")
        if train is not None and not (isinstance(train, (list, tuple)) and train and set(train) <= set(policies)):
            refuse("selfplay.train", plain(train), f"null for all, or a non-empty list of selfplay.policies: "
                                                   f"{list(policies)}")  # fmt: skip
        if not (isinstance(bots, (list, tuple)) and all(isinstance(b, str) and b for b in bots)):
            refuse("selfplay.bots", plain(bots), "a list of player names, e.g. [heuristic]")
        if set(bots) & set(policies) or len(set(bots)) != len(bots):
            raise TrainConfigError(f"selfplay.bots={list(bots)!r}: a bot name must differ from the module names "
                                   f"{list(policies)} and from the other bots")  # fmt: skip
        if self.mapping not in MAPPINGS:
            refuse("selfplay.mapping", self.mapping, f"one of {', '.join(MAPPINGS)}: by_seat: seat k plays "
                   "(policies + bots)[k % n]; shuffled: the same after a random permutation of the seats per game")
        object.__setattr__(self, "policies", tuple(policies))
        object.__setattr__(self, "train", None if train is None else tuple(train))
        object.__setattr__(self, "bots", tuple(bots))


@dataclasses.dataclass(frozen=True)
class RaySettings:
    """``ray:``: the local Ray's CPUs (None: all; ignored with ``--address``)."""

    num_cpus: int | None = None

    def __post_init__(self) -> None:
        if self.num_cpus is not None:
            with config_errors():
                object.__setattr__(self, "num_cpus", check_int("ray.num_cpus", self.num_cpus, 0, 1 << 16))


@dataclasses.dataclass(frozen=True)
class EvalSettings:
    """``eval:``: every ``every`` iterations (0: never), ``games`` games of the module against ``opponents``."""

    every: int = 0
    games: int = 200
    opponents: tuple[str, ...] | None = None  # None: random players

    def __post_init__(self) -> None:
        with config_errors():
            object.__setattr__(self, "every", check_int("eval.every", self.every or 0, 0))
            object.__setattr__(self, "games", check_int("eval.games", self.games, 1, 10**7))
        if self.opponents is not None:
            names = self.opponents
            if not (isinstance(names, (list, tuple)) and all(isinstance(o, str) and o for o in names)):
                refuse("eval.opponents", self.opponents, "null, or a list of player names, one per other seat")
            object.__setattr__(self, "opponents", tuple(self.opponents))


SECTIONS = {"learner": LearnerSettings, "league": LeagueSettings, "selfplay": SelfplaySettings, "ray": RaySettings,
            "eval": EvalSettings}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class RllibConfig:
    """A whole RLlib training config, checked (the module docstring): :data:`SECTIONS` are dataclasses (a mapping
    given for one is built into it), :data:`MAPPING_DEFAULTS` name the mapping sections."""

    run_dir: str = "runs/rllib"
    seed: int = 0
    setup: str = "vs_bots"
    sampler: str = "rllib"
    precision: str = "float32"
    opponents: str | tuple[str, ...] = "random"
    learner: LearnerSettings = dataclasses.field(default_factory=LearnerSettings)
    league: LeagueSettings = dataclasses.field(default_factory=LeagueSettings)
    selfplay: SelfplaySettings = dataclasses.field(default_factory=SelfplaySettings)
    iterations: int = 10
    checkpoint_every: int = 5
    env: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    ray: RaySettings = dataclasses.field(default_factory=RaySettings)
    env_runners: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    learners: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    ppo: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    model: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    eval: EvalSettings = dataclasses.field(default_factory=EvalSettings)
    rules_config: RulesConfig = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.setup not in SETUPS:
            refuse("setup", self.setup, "choose 'vs_bots' or 'selfplay'")
        if self.sampler not in SAMPLERS:
            refuse("sampler", self.sampler, f"one of {', '.join(SAMPLERS)}: rllib: RLlib's SingleAgentEnvRunner; "
                   "bulk: cluedo_env.training.rllib.bulk_runner")  # fmt: skip
        if self.precision not in PRECISIONS:
            refuse("precision", self.precision, f"one of {', '.join(PRECISIONS)}")
        if not isinstance(self.run_dir, (str, Path)) or not str(self.run_dir).strip():
            refuse("run_dir", self.run_dir, "a folder path, e.g. runs/rllib")
        with config_errors():
            self._set(run_dir=str(self.run_dir), seed=check_seed(self.seed, "seed", optional=False),
                      iterations=check_int("iterations", self.iterations, 1, 10**9),
                      checkpoint_every=check_int("checkpoint_every", self.checkpoint_every, 0))  # 0: the last only
        for key, default in MAPPING_DEFAULTS.items():
            value = getattr(self, key)
            if not isinstance(value, Mapping):
                raise TrainConfigError(f"config key {key!r} must be a mapping, got {value!r} "
                                       f"(keys: {', '.join(default)})")  # fmt: skip
            self._set(**{key: {**default, **value}})
        learner = self.learner
        if self.setup == "selfplay" and isinstance(learner, (Mapping, LearnerSettings)):
            self._check_selfplay_learner(learner if isinstance(learner, Mapping) else plain(learner))
        self._set(**{key: section(cls, getattr(self, key), key) for key, cls in SECTIONS.items()})
        with config_errors("env: "):
            env = dict(self.env)
            self._set(rules_config=make_config(env.pop("preset", "classic"), **env))
        for key, value in self.env_runners.items():
            if key.startswith("num_"):
                with config_errors():
                    check_int(f"env_runners.{key}", value, 0 if key == "num_env_runners" else 1, 4096)
        players = self.rules_config.players
        if self.eval.opponents is not None and len(self.eval.opponents) != players - 1:
            refuse("eval.opponents", list(self.eval.opponents), f"null, or a list of {players - 1} player names")
        if self.setup == "vs_bots":
            self._check_vs_bots(players)
        elif self.opponents != "random":
            raise TrainConfigError(f"opponents={plain(self.opponents)!r} is not allowed with setup=selfplay "
                                   "(every seat is a module of selfplay.policies; opponents are for "
                                   "setup=vs_bots)")  # fmt: skip
        self._check_selfplay()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @staticmethod
    def _check_selfplay_learner(learner: Mapping[str, Any]) -> None:
        """``learner:`` of a selfplay config holds the modules' inputs only (belief, observation, macro actions); the
        learner-env options of vs_bots (seat, shaping, gates ...) do not apply."""
        other = sorted(k for k, v in learner.items() if k not in INPUT_OPTIONS
                       and (k not in LEARNER_DEFAULTS or v != LEARNER_DEFAULTS[k]))  # fmt: skip
        if other:
            raise TrainConfigError(f"learner: {other} do not apply to setup=selfplay (its modules' inputs: "
                                   f"{', '.join(INPUT_OPTIONS)})")  # fmt: skip

    def _check_vs_bots(self, players: int) -> None:
        """The learner's seat and the opponents of the vs_bots setup; each opponent is built once here, so that a
        bad name fails before Ray starts."""
        seat = self.learner.seat
        if seat != "random" and not (is_int(seat) and 0 <= seat < players):
            refuse("learner.seat", seat, f"0..{players - 1} or 'random'")
        with config_errors():
            specs = opponent_specs(self.opponents, players)
        self._set(opponents=self.opponents if isinstance(self.opponents, str) else tuple(self.opponents))
        for spec in sorted(set(specs) - {LEAGUE}):
            _check_player("opponents", spec)
        if LEAGUE in specs and not self.league.snapshot_every:
            raise TrainConfigError("opponents include 'league' but league.snapshot_every is 0 (set how many "
                                   "iterations apart the frozen snapshots of the learning module are "
                                   "taken)")  # fmt: skip

    def _check_selfplay(self) -> None:
        """The bots of ``selfplay:`` and what self-play needs of the sampler and the learners."""
        bots = self.selfplay.bots
        if bots and self.setup == "selfplay" and self.sampler != "bulk":
            raise TrainConfigError("selfplay.bots needs sampler: bulk (RLlib's multi-agent runner plays modules only)")
        if self.setup == "selfplay":
            if self.selfplay_inputs() and self.sampler != "bulk":
                raise TrainConfigError("learner: belief features and macro actions in self-play need sampler: bulk "
                                       "(RLlib's multi-agent runner feeds the PettingZoo observation)")  # fmt: skip
            if self.sampler == "bulk" and int(self.learners.get("num_learners") or 0) > 1:
                raise TrainConfigError("learners.num_learners > 1 is not allowed with setup=selfplay, sampler: bulk "
                                       "(RLlib shards episodes with SingleAgentEpisode.slice, which drops the seat's "
                                       "agent and module ids; use 0 or 1 learner)")  # fmt: skip
        if LEAGUE in bots and not self.league.snapshot_every:
            raise TrainConfigError("selfplay.bots include 'league' but league.snapshot_every is 0 (set how many "
                                   "iterations apart the frozen snapshots of the first module are taken)")  # fmt: skip
        for spec in bots:
            if spec != LEAGUE:  # frozen snapshots of selfplay.policies[0], built by the runner
                _check_player("selfplay.bots", spec)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RllibConfig:
        """The config of a mapping of keys (a YAML file's, or a saved run's :meth:`to_dict`); unknown keys refused."""
        check_keys(data, cls)
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (lists, dicts): what a run saves in ``config.json`` and ``--resume`` compares."""
        return plain(self)

    def with_overrides(self, **overrides: Any) -> RllibConfig:
        """This config with ``overrides`` (a section's keys merged into it: ``ppo={"lr": 1e-4}``), checked."""
        return RllibConfig.from_dict(merge(self.to_dict(), overrides, (*SECTIONS, *MAPPING_DEFAULTS)))

    def selfplay_inputs(self) -> dict[str, Any]:
        """The self-play modules' input options; empty (the engine's observation and actions) unless belief features
        or macro actions are on: the one test of that, which the runner reads as "options or not"."""
        learner = self.learner
        if not (learner.belief or learner.macro_moves or learner.macro_accuse):
            return {}
        return {k: getattr(learner, k) for k in INPUT_OPTIONS}


def load_config(path: str | Path | None, **overrides: Any) -> RllibConfig:
    """The YAML file's config (defaults for what it leaves out), then ``overrides`` (a section's keys merged into
    it); checked while it is built, before Ray starts."""
    data: dict[str, Any] = {}
    if path:
        data = read_mapping(path, "RLlib config", "configs/rllib_vs_random.yaml", field_names(RllibConfig))
    return RllibConfig.from_dict(merge(data, overrides, (*SECTIONS, *MAPPING_DEFAULTS)))


def opponent_specs(spec: Any, players: int) -> list[str]:
    """One opponent spec or a list of ``players - 1`` (player names, ``ckpt:``/``rllib:`` paths, ``league``)."""
    many = isinstance(spec, (list, tuple))
    specs = [spec] * (players - 1) if isinstance(spec, str) else list(spec) if many else None
    if specs is None or len(specs) != players - 1 or not all(isinstance(s, str) and s for s in specs):
        raise ConfigError(
            f"opponents={plain(spec)!r} is not allowed: give one player name (e.g. 'heuristic') or a list of "
            f"{players - 1} (one per seat after the learner's), e.g. [heuristic, deducer, league]"
        )
    return specs


def learner_options(learner: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a ``learner:`` mapping that fix the learner's inputs and action space (a frozen copy must use
    the same); a key left out takes its default (:data:`LEARNER_DEFAULTS`)."""
    opts: dict[str, Any] = {
        k: bool(learner.get(k, LEARNER_DEFAULTS[k])) for k in ("macro_moves", "macro_accuse", "belief")
    }
    opts["observation"] = str(learner.get("observation", LEARNER_DEFAULTS["observation"]))
    opts["packed_observation"] = bool(learner.get("packed_observation", False))
    return opts


def _check_player(key: str, spec: str) -> None:
    """Build the player ``spec`` once (the loader of a trained player's prefix registered), so that an unknown
    name or an unreadable checkpoint fails as a config error, before Ray starts."""
    try:
        register_player_prefixes([spec])
        make_agent(spec, seed=0)
    except Exception as exc:  # noqa: BLE001 - unknown names, unreadable checkpoints: all config errors here
        raise TrainConfigError(f"{key}: {spec!r} is not a usable player ({exc})") from None


__all__ = [
    "INPUT_OPTIONS", "LEAGUE", "LEARNER_DEFAULTS", "MAPPINGS", "MAPPING_DEFAULTS", "SAMPLERS", "SECTIONS", "SETUPS",
    "EvalSettings", "LeagueSettings", "LearnerSettings", "RaySettings", "RllibConfig", "SelfplaySettings",
    "learner_options", "load_config", "opponent_specs",
]  # fmt: skip
