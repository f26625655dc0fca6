"""The SB3 training config as one typed, checked object: :class:`TrainConfig`, a section dataclass per mapping.

:func:`load_train_config` reads the YAML (``yaml.safe_load``), merges the overrides and builds the config once;
the trainer and everything below it read its attributes (``cfg.env.num_envs``, ``cfg.ppo.gamma``). A bad value
fails while it is built, with a :class:`~cluedo_env.errors.TrainConfigError` that names the key, the value and
what is allowed, before any env or model is built; :meth:`TrainConfig.to_dict` is the plain form a run saves.

The YAML config (keys and defaults: the dataclasses below; an unknown key is an error):

* ``env``: rules (``preset``, ``players``, other ``RulesConfig`` flags under ``rules``), ``num_envs``,
  learner ``seat`` (k or ``random``), ``opponents`` (one name or P-1 names), ``macro_moves``,
  ``end_on_elimination``, ``belief`` (the deducer's notebook as extra observation pieces,
  :mod:`cluedo_env.agents.learner.belief`), ``macro_accuse`` (one "accuse the notebook's best triple" action instead
  of 324; needs ``belief``), ``observation`` (``full``, or ``compact``: the learner's pieces in about a third of
  the slots, :mod:`cluedo_env.agents.learner.compact_observation`; needs ``belief``), ``packed_observation`` (the
  engine's
  observation as packed uint8 rows, a fifth of the bytes, unpacked by the policy's first layer,
  :mod:`cluedo_env.training.sb3.packed_extractor`; needs ``observation: full`` and no ``belief``), ``advisor`` (a
  player name, e.g.
  ``deducer``: it plays the learner's seat and the learner only chooses, where it may accuse, between the
  advisor's action and accusing its belief's best triple; needs ``belief``, no macro options; an expert
  advisor, e.g. ``expert{"floor": 1.01, "accuse_assumed": false, "max_hypotheses": 0}``, also gives the
  learner the expert's accusation inputs and makes the accusation the expert's best open triple,
  :mod:`cluedo_env.agents.learner.accusation_features`), ``accusation_features`` (no advisor, needs ``belief``:
  the same accusation inputs from an expert that only perceives; the policy makes every decision),
  ``holder_probabilities`` (no advisor, needs ``belief``: who the seat believes holds each card, from the same
  perceiving expert, :mod:`cluedo_env.agents.learner.holder_features`),
  ``accuse_gate`` (with ``macro_accuse``: the accusation is open only
  where the learner's notebook is ``solved``, or where its triple's probability is at least a number in
  (0, 1]; the checkpoint keeps the gate when it plays), ``shaping`` (training rewards only: potential-based
  shaping from the learner's notebook, ``{kind: triples | unknown, coef: 0.05}``, discounted with
  ``ppo.gamma``; evaluations count plain wins; :mod:`cluedo_env.agents.learner.inputs`) (see
  :mod:`cluedo_env.training.single_agent`).
* ``ppo``: MaskablePPO keyword arguments (``n_steps``, ``batch_size``, ``learning_rate`` ...);
  ``net_arch`` becomes ``policy_kwargs``.
* ``total_timesteps``, ``seed``, ``run_dir``.
* ``policy``: ``mlp`` (sb3-contrib's ``MlpPolicy`` network, with the leaner masked distribution of
  :mod:`cluedo_env.training.sb3.lean_policy`), or ``factored``: the same network with per-card scores added to the 324
  suggestion logits (:mod:`cluedo_env.training.sb3.factored_policy`; not with ``env.advisor``).
* ``precision``: ``float32`` (default) or ``bfloat16``: the policy's hidden layers run under CPU autocast while
  training (float32 weights, heads and losses; :mod:`cluedo_env.training.sb3.lean_policy`). Several times cheaper matrix
  products on CPUs with AMX or AVX512-BF16; elsewhere slower (a warning says so). Checkpoints stay float32.
* ``imitation`` (before PPO, :mod:`cluedo_env.training.sb3.imitation`): with a ``teacher`` (a player name, e.g.
``expert``),
  the network first learns to choose as the teacher does in ``games`` games the teacher plays in every seat,
  ``games_per_round`` at a time (``batch_games`` at once), ``epochs`` passes of minibatches of ``batch_size`` over
  each round's decisions (Adam, ``learning_rate``; the value head learns the discounted outcome, weighted
  ``value_coef``); then PPO starts from that network (the run's step-0 checkpoint). Needs the full or macro-move
  space (no ``env.advisor``, ``env.macro_accuse`` or ``env.packed_observation``). Resumable round by round.
  ``learner_plays`` (0 to 1, default 0): once ``learner_plays_after`` games are imitated, each seat of each game is
  played by the network with that probability while the teacher still labels every decision (DAgger): labels on
  the positions the network reaches itself, not only on the teacher's.
* ``torch_threads``: torch's intra-op threads (collection forward passes and the PPO update; the env and the
  players are single-threaded numba and numpy). ``null``: torch's default.
* ``init_from``: a checkpoint whose policy weights start a new run (curriculum: e.g. the vs-random
  model continued against heuristic players), or ``pretrained:NAME`` (a player shipped with the package).
  Same rules, action space and ``net_arch`` required; the step count and the PPO settings are this config's.
  Ignored on ``--resume``. With ``policy: factored`` it may be an ``mlp`` checkpoint: its weights, card
  scores of zero (the same play to start with).
* ``checkpoint_every`` (learner steps), ``keep_checkpoints``: every K steps the model is written
  to ``run_dir/checkpoints/step_<n>.zip`` and ``run_dir/model.zip`` (temporary file + ``os.replace``),
  then ``run_dir/state.json`` (timesteps, checkpoint, seeds, torch RNG, wall time) the same way;
  ``--resume`` reloads the model named there and continues the step count (at most one
  checkpoint interval is lost). The env is reseeded from (seed, timesteps) on resume.
* ``eval``: every ``every`` steps (and at the end) the latest checkpoint plays ``games`` games
  against ``opponents`` (one lineup, or a list of lineups, e.g. ``[[expert, expert, expert], [deducer, deducer,
  deducer]]``: each is played and logged; the first selects the best checkpoint) in the tournament evaluator
  (``scripts/evaluate.py``'s ``play_match``, seats
  rotated; it plays its most probable action, or samples with ``deterministic: false``, e.g. for an
  advised policy whose accusations are rare); the win rate and its 95% Wilson interval go to TensorBoard
  and ``run_dir/evals.jsonl``.
  Every evaluation plays the same seeded deals (``seed + 1000``), so evaluations compare like with
  like; with ``keep_best: true`` (default) the best-evaluated checkpoint so far is kept as
  ``run_dir/best_model.zip`` (``best.json`` says its step and win rate), out of the rotation of
  ``keep_checkpoints``: a late dip in training cannot lose it.
* ``league`` (self-play): when ``enabled``, the opponents are redrawn every ``swap_every`` steps,
  each seat independently: a bot from ``bots`` with probability ``bot_prob``, else the current policy
  (sampling) with probability ``self_prob``, else one of the last ``max_size`` checkpoints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cluedo_env.agents.learner.compact_observation import check_observation
from cluedo_env.agents.learner.inputs import (
    check_accuse_gate,
    check_packed_observation,
    check_perception,
    check_shaping,
)
from cluedo_env.training.players import check_player_names
from cluedo_env.training.pretrained import path_of
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

from cluedo_env.checks import check_bool, check_int, check_number, check_seed, is_int
from cluedo_env.errors import TrainConfigError, UsageError
from cluedo_env.files import check_writable_dir
from cluedo_env.rules.config import RulesConfig, make_config

PLAYERS_ALLOWED = "a player name or a list of player names, e.g. [random, heuristic, heuristic]"


def _is_player(value: Any) -> bool:
    """A player name, or (from Python) an Agent or policy object."""
    return bool(value) if isinstance(value, str) else not isinstance(value, (int, float, list, tuple, dict, type(None)))


def _players(key: str, value: Any, count: int | None = None) -> Any:
    """One player or a non-empty list of them (``count`` long if given), the list kept as a tuple."""
    many = isinstance(value, (list, tuple))
    if not (bool(value) and all(map(_is_player, value)) if many else _is_player(value)):
        refuse(key, plain(value), PLAYERS_ALLOWED)
    if count is not None and many and len(value) != count:
        refuse(key, plain(value), f"one name for all opponents, or a list of {count} names (one per other seat)")
    return tuple(value) if many else value


def _set(obj: Any, **values: Any) -> None:
    """Store checked (normalised) values on a frozen dataclass while it is built."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)


@dataclasses.dataclass(frozen=True)
class EnvSettings:
    """``env:``: the rules, the batch of games and the learner env's options (the module docstring)."""

    preset: str = "classic"
    players: int = 4
    rules: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    num_envs: int = 512
    seat: int | str = "random"
    opponents: Any = "random"  # one player, or a tuple of players - 1
    macro_moves: bool = True
    macro_accuse: bool = False
    belief: bool = False
    observation: str = "full"
    packed_observation: bool = False
    advisor: str | None = None
    accusation_features: bool = False
    holder_probabilities: bool = False
    accuse_gate: str | float | None = None
    shaping: Mapping[str, Any] | None = None
    end_on_elimination: bool = True
    rules_config: RulesConfig = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.rules, Mapping):
            refuse("env.rules", self.rules, "a mapping of rules flags, e.g. {dice: 2}")
        with config_errors("env: "):
            rules = make_config(self.preset, players=self.players, **self.rules)
        P = rules.players
        with config_errors():
            _set(self, rules_config=rules, rules=dict(self.rules),
                 num_envs=check_int("env.num_envs", self.num_envs, 1, 1 << 20))  # fmt: skip
            for key in ("macro_moves", "macro_accuse", "belief", "end_on_elimination", "packed_observation"):
                _set(self, **{key: check_bool(f"env.{key}", getattr(self, key))})
        if not (self.seat == "random" or (is_int(self.seat) and 0 <= self.seat < P)):
            refuse("env.seat", self.seat, f"'random' or a seat from 0 to {P - 1}")
        _set(self, seat=self.seat if self.seat == "random" else int(self.seat),
             opponents=_players("env.opponents", self.opponents, P - 1))  # fmt: skip
        if self.macro_accuse and not self.belief:
            raise TrainConfigError("env.macro_accuse=true needs env.belief=true (the macro accusation uses the "
                                   "notebook)")
        with config_errors("env.observation: "):
            check_observation(self.observation, self.belief)
        with config_errors("env."):
            check_packed_observation(self.packed_observation, self.observation, self.belief)
        if self.advisor is not None:
            if not isinstance(self.advisor, str) or not self.advisor:
                refuse("env.advisor", self.advisor, "a player name, e.g. deducer, or null")
            if not self.belief or self.macro_moves or self.macro_accuse:
                raise TrainConfigError(
                    "env.advisor needs env.belief=true and env.macro_moves=false, env.macro_accuse=false (the advisor "
                    "moves; the learner chooses between the advisor's action and accusing its belief's best triple)"
                )
        with config_errors("env."):
            for key in ("accusation_features", "holder_probabilities"):
                _set(self, **{key: check_perception(key, getattr(self, key), self.belief, self.advisor)})
            check_accuse_gate(self.accuse_gate, self.macro_accuse)
            check_shaping(self.shaping, self.belief)  # kept as written: the env fills in the defaults
        if self.shaping is not None:
            _set(self, shaping=dict(self.shaping))


@dataclasses.dataclass(frozen=True)
class PpoSettings:
    """``ppo:``: MaskablePPO's keyword arguments, and ``net_arch`` (the policy's and the value's hidden layers)."""

    n_steps: int = 32
    batch_size: int = 4096
    n_epochs: int = 4
    learning_rate: float = 1.0e-3
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: tuple[int, ...] = (256, 256)

    def __post_init__(self) -> None:
        with config_errors():
            for key in ("n_steps", "batch_size", "n_epochs"):
                _set(self, **{key: check_int(f"ppo.{key}", getattr(self, key), 1)})
            for key, lo, hi, above in (("learning_rate", 0, None, True), ("gamma", 0, 1, False),
                                       ("gae_lambda", 0, 1, False), ("clip_range", 0, None, True),
                                       ("ent_coef", 0, None, False), ("vf_coef", 0, None, False),
                                       ("max_grad_norm", 0, None, True)):  # fmt: skip
                _set(self, **{key: check_number(f"ppo.{key}", getattr(self, key), lo, hi, above)})
        arch = self.net_arch
        if not (isinstance(arch, (list, tuple)) and arch and all(is_int(n) and 1 <= n <= 1 << 16 for n in arch)):
            refuse("ppo.net_arch", arch, "a list of layer sizes, e.g. [256, 256]")
        _set(self, net_arch=tuple(int(n) for n in arch))

    def model_kwargs(self) -> dict[str, Any]:
        """MaskablePPO's keyword arguments (all but ``net_arch``, which goes into ``policy_kwargs``)."""
        return {f: getattr(self, f) for f in field_names(PpoSettings) if f != "net_arch"}


@dataclasses.dataclass(frozen=True)
class EvalSettings:
    """``eval:``: how often, how many games, against whom (one lineup or a tuple of lineups), how it plays."""

    every: int = 100_000
    games: int = 400
    opponents: Any = None  # None (the training opponents), one player, a lineup, or a tuple of lineups
    batch_size: int = 400
    deterministic: bool = True

    def __post_init__(self) -> None:
        with config_errors():
            _set(self, every=check_int("eval.every", self.every, 0),
                 games=check_int("eval.games", self.games, 0, 10**7),
                 batch_size=check_int("eval.batch_size", self.batch_size, 1, 1 << 20),
                 deterministic=check_bool("eval.deterministic", self.deterministic))  # fmt: skip
        lineups = self.opponents
        if lineups is None:
            return
        if isinstance(lineups, (list, tuple)) and lineups and all(isinstance(x, (list, tuple)) for x in lineups):
            _set(self, opponents=tuple(_players(f"eval.opponents[{k}]", x) for k, x in enumerate(lineups)))
        else:
            _set(self, opponents=_players("eval.opponents", lineups))

    def several(self) -> bool:
        """Whether ``opponents`` is a list of lineups (each played and logged)."""
        return isinstance(self.opponents, tuple) and all(isinstance(x, tuple) for x in self.opponents)


@dataclasses.dataclass(frozen=True)
class LeagueSettings:
    """``league:``: self-play opponents redrawn every ``swap_every`` steps (bots, the policy, past checkpoints)."""

    enabled: bool = False
    bots: tuple[str, ...] = ("random", "heuristic")
    bot_prob: float = 0.3
    self_prob: float = 0.4
    max_size: int = 10
    swap_every: int = 50_000

    def __post_init__(self) -> None:
        with config_errors():
            _set(self, enabled=check_bool("league.enabled", self.enabled),
                 bot_prob=check_number("league.bot_prob", self.bot_prob, 0, 1),
                 self_prob=check_number("league.self_prob", self.self_prob, 0, 1),
                 max_size=check_int("league.max_size", self.max_size, 1),
                 swap_every=check_int("league.swap_every", self.swap_every, 1))  # fmt: skip
        bots = _players("league.bots", self.bots)
        _set(self, bots=bots if isinstance(bots, tuple) else (bots,))
        if self.bot_prob + self.self_prob > 1:
            raise TrainConfigError(f"league.bot_prob + league.self_prob = {self.bot_prob + self.self_prob:g} (at most "
                                   "1; the rest draws past checkpoints)")  # fmt: skip


@dataclasses.dataclass(frozen=True)
class ImitationSettings:
    """``imitation:``: the teacher the network first learns to choose as, and how
    (:mod:`cluedo_env.training.sb3.imitation`)."""

    teacher: str | None = None
    games: int = 0
    games_per_round: int = 2048
    batch_games: int = 512
    epochs: int = 2
    batch_size: int = 4096
    learning_rate: float = 1.0e-3
    value_coef: float = 0.5
    learner_plays: float = 0.0
    learner_plays_after: int = 0

    def __post_init__(self) -> None:
        if self.teacher is not None and not (isinstance(self.teacher, str) and self.teacher):
            refuse("imitation.teacher", self.teacher, "a player name, e.g. expert, or null (no imitation phase)")
        with config_errors():
            if self.teacher is not None:
                _set(self, games=check_int("imitation.games", self.games, 1, 10**9))
            _set(self, games_per_round=check_int("imitation.games_per_round", self.games_per_round, 1, 10**7),
                 batch_games=check_int("imitation.batch_games", self.batch_games, 1, 1 << 20),
                 epochs=check_int("imitation.epochs", self.epochs, 1, 1000),
                 batch_size=check_int("imitation.batch_size", self.batch_size, 1, 1 << 20),
                 learning_rate=check_number("imitation.learning_rate", self.learning_rate, 0, None, above=True),
                 value_coef=check_number("imitation.value_coef", self.value_coef, 0),
                 learner_plays=check_number("imitation.learner_plays", self.learner_plays, 0, 1),
                 learner_plays_after=check_int("imitation.learner_plays_after", self.learner_plays_after, 0,
                                               10**9))  # fmt: skip


SECTIONS = {"env": EnvSettings, "ppo": PpoSettings, "eval": EvalSettings, "league": LeagueSettings,
            "imitation": ImitationSettings}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """A whole SB3 training config, checked: its sections are :data:`SECTIONS` (a mapping given for one is built
    into its dataclass), the other keys are described in the module docstring."""

    run_dir: str = "runs/default"
    seed: int = 0
    total_timesteps: int = 1_000_000
    checkpoint_every: int = 100_000
    keep_checkpoints: int = 3
    keep_best: bool = True
    env: EnvSettings = dataclasses.field(default_factory=EnvSettings)
    ppo: PpoSettings = dataclasses.field(default_factory=PpoSettings)
    eval: EvalSettings = dataclasses.field(default_factory=EvalSettings)
    league: LeagueSettings = dataclasses.field(default_factory=LeagueSettings)
    imitation: ImitationSettings = dataclasses.field(default_factory=ImitationSettings)
    torch_threads: int | None = None
    init_from: str | None = None
    policy: str = "mlp"
    precision: str = "float32"

    def __post_init__(self) -> None:
        if not isinstance(self.run_dir, (str, Path)) or not str(self.run_dir).strip():
            refuse("run_dir", self.run_dir, "a folder path, e.g. runs/my_run")
        with config_errors():
            _set(self, run_dir=str(self.run_dir), seed=check_seed(self.seed, "seed", optional=False),
                 total_timesteps=check_int("total_timesteps", self.total_timesteps, 0, 10**12),  # 0: evaluate only
                 checkpoint_every=check_int("checkpoint_every", self.checkpoint_every, 0),  # 0: the final one only
                 keep_checkpoints=check_int("keep_checkpoints", self.keep_checkpoints, 1),
                 keep_best=check_bool("keep_best", self.keep_best))  # fmt: skip
            if self.torch_threads is not None:
                _set(self, torch_threads=check_int("torch_threads", self.torch_threads, 1, 1024))
        if self.policy not in ("mlp", "factored"):
            refuse("policy", self.policy, "mlp or factored")
        if self.precision not in ("float32", "bfloat16"):
            refuse("precision", self.precision, "float32 or bfloat16")
        if self.init_from is not None:
            if not isinstance(self.init_from, (str, Path)):
                refuse("init_from", self.init_from, "a checkpoint path or null")
            _set(self, init_from=str(self.init_from))
        _set(self, **{key: section(cls, getattr(self, key), key) for key, cls in SECTIONS.items()})
        env, P = self.env, self.env.rules_config.players
        if env.advisor is not None and self.policy == "factored":
            raise TrainConfigError("policy=factored needs the suggestion actions: not with env.advisor (Discrete(2))")
        if self.eval.several():
            for k, lineup in enumerate(self.eval.opponents):
                _players(f"eval.opponents[{k}]", lineup, P - 1)
        elif self.eval.opponents is not None:
            _players("eval.opponents", self.eval.opponents, P - 1)
        if self.imitation.teacher is not None and (env.advisor is not None or env.macro_accuse
                                                   or env.packed_observation):  # fmt: skip
            raise TrainConfigError("imitation labels every decision in the full or macro-move space: not with "
                                   "env.advisor, env.macro_accuse or env.packed_observation")  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainConfig:
        """The config of a mapping of keys (a YAML file's, or a saved run's :meth:`to_dict`); unknown keys refused."""
        check_keys(data, cls)
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (lists, dicts): what a run saves in ``state.json`` and its checkpoints, and what
        ``--resume`` compares."""
        return plain(self)

    def with_overrides(self, **overrides: Any) -> TrainConfig:
        """This config with ``overrides`` (same nesting: ``env={"num_envs": 64}`` changes that key only), checked."""
        return TrainConfig.from_dict(merge(self.to_dict(), overrides, tuple(SECTIONS)))

    def eval_lineups(self) -> list[list[Any]]:
        """The opponent lineups each evaluation plays, in order (the first selects ``best_model.zip``):
        ``eval.opponents`` (one name, one lineup, or a list of lineups), else the training opponents."""
        players = self.env.rules_config.players
        opponents = self.eval.opponents or self.env.opponents
        if not isinstance(opponents, tuple):
            return [[opponents] * (players - 1)]
        if self.eval.opponents and self.eval.several():
            return [list(x) for x in opponents]
        return [list(opponents)]


def load_train_config(path: str | Path | None = None, **overrides: Any) -> TrainConfig:
    """The YAML file's config (defaults for the keys it leaves out), then ``overrides`` (same nesting) on top; checked
    while it is built, so that a bad value fails here, before anything is built (a file's errors name the file)."""
    data: dict[str, Any] = {}
    if path is not None:
        data = read_mapping(path, "training config", "configs/train_vs_random.yaml", field_names(TrainConfig))
        try:
            cfg = TrainConfig.from_dict(data)
        except TrainConfigError as exc:
            raise TrainConfigError(f"{path}: {exc}") from None
        if not overrides:
            return cfg
    return TrainConfig.from_dict(merge(data, overrides, tuple(SECTIONS)))


def check_run_inputs(cfg: TrainConfig, resume: bool) -> None:
    """The files a run needs, checked before anything is built: player names, ``init_from``, ``run_dir``."""
    listed = [] if cfg.imitation.teacher is None else [cfg.imitation.teacher]
    opponents = cfg.env.opponents
    listed += [opponents] if isinstance(opponents, str) else [v for v in opponents if isinstance(v, str)]
    for lineup in cfg.eval_lineups():
        listed += [v for v in lineup if isinstance(v, str)]
    if cfg.league.enabled:
        listed += list(cfg.league.bots)
    try:
        check_player_names(listed)
        check_writable_dir(cfg.run_dir, "run_dir")
    except UsageError as exc:
        raise TrainConfigError(str(exc)) from None
    if cfg.init_from and not resume and not init_path(cfg.init_from).is_file():
        raise TrainConfigError(f"init_from={cfg.init_from!r} is not a file (a checkpoint .zip of another run, "
                               f"or pretrained:NAME)")  # fmt: skip


def init_path(value: str | Path) -> Path:
    """The checkpoint file of ``init_from``: a path, or ``pretrained:NAME`` (a player shipped with the package)."""
    text = str(value)
    if not text.startswith("pretrained:"):
        return Path(text)
    try:
        return path_of(text.split(":", 1)[1])
    except UsageError as exc:
        raise TrainConfigError(f"init_from: {exc}") from None


__all__ = ["SECTIONS", "EnvSettings", "EvalSettings", "ImitationSettings", "LeagueSettings",
           "PpoSettings", "TrainConfig", "check_run_inputs", "init_path", "load_train_config"]  # fmt: skip
