"""The SB3 training config: its keys, their defaults (:data:`DEFAULTS`) and the checks of every value.

A bad value fails here with a :class:`~cluedo_env.errors.TrainConfigError` that names the key and what is
allowed, before any env or model is built.

The YAML config (keys and defaults: ``DEFAULTS`` below; an unknown key is an error):

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
  :mod:`cluedo_env.agents.learner.accusation_features`), ``accuse_gate`` (with ``macro_accuse``: the accusation is open
  only
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

import copy
import math
from pathlib import Path
from typing import Any

from cluedo_env.agents.learner.compact_observation import check_observation
from cluedo_env.agents.learner.inputs import check_accuse_gate, check_packed_observation, check_shaping
from cluedo_env.training.players import check_player_names
from cluedo_env.training.pretrained import path_of

from cluedo_env.errors import TrainConfigError, UsageError
from cluedo_env.files import check_writable_dir
from cluedo_env.options import SEED_MAX
from cluedo_env.rules.config import ConfigError, RulesConfig, make_config, read_yaml

DEFAULTS: dict[str, Any] = {
    "run_dir": "runs/default",
    "seed": 0,
    "total_timesteps": 1_000_000,
    "checkpoint_every": 100_000,
    "keep_checkpoints": 3,
    "keep_best": True,
    "env": {
        "preset": "classic",
        "players": 4,
        "rules": {},
        "num_envs": 512,
        "seat": "random",
        "opponents": "random",
        "macro_moves": True,
        "macro_accuse": False,
        "belief": False,
        "observation": "full",
        "packed_observation": False,
        "advisor": None,
        "accuse_gate": None,
        "shaping": None,
        "end_on_elimination": True,
    },
    "ppo": {
        "n_steps": 32,
        "batch_size": 4096,
        "n_epochs": 4,
        "learning_rate": 1.0e-3,
        "gamma": 0.995,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.0,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "net_arch": [256, 256],
    },
    "eval": {"every": 100_000, "games": 400, "opponents": None, "batch_size": 400, "deterministic": True},
    "league": {
        "enabled": False,
        "bots": ["random", "heuristic"],
        "bot_prob": 0.3,
        "self_prob": 0.4,
        "max_size": 10,
        "swap_every": 50_000,
    },
    "imitation": {
        "teacher": None,
        "games": 0,
        "games_per_round": 2048,
        "batch_games": 512,
        "epochs": 2,
        "batch_size": 4096,
        "learning_rate": 1.0e-3,
        "value_coef": 0.5,
    },
    "torch_threads": None,
    "init_from": None,
    "policy": "mlp",
    "precision": "float32",
}


def _merge(base: dict, over: dict, where: str = "") -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key not in base:
            raise TrainConfigError(f"unknown config key {where}{key!r} (allowed: {', '.join(sorted(base))})")
        if isinstance(base[key], dict) and key != "rules":
            if not isinstance(value, dict):
                raise TrainConfigError(
                    f"config key {where}{key!r} must be a mapping, got {value!r} (keys: {', '.join(base[key])})"
                )
            out[key] = _merge(base[key], value, f"{where}{key}.")
        else:
            out[key] = value
    return out


def load_train_config(path: str | Path | None = None, **overrides: Any) -> dict:
    """DEFAULTS with the YAML file's values, then ``overrides`` (same nesting) on top; checked by
    :func:`validate_train_config` so that a bad value fails here, before anything is built."""
    cfg = copy.deepcopy(DEFAULTS)
    if path is not None:
        data = read_yaml(path, "training config", TrainConfigError)
        if data is None:
            raise TrainConfigError(
                f"{path}: the training config is empty (a mapping of keys such as run_dir, total_timesteps, env, "
                "ppo; see configs/train_vs_random.yaml)"
            )
        if not isinstance(data, dict):
            raise TrainConfigError(
                f"{path}: a training config is a mapping of keys, got a YAML {type(data).__name__} "
                f"(keys: {', '.join(DEFAULTS)})"
            )
        try:
            cfg = _merge(cfg, data)
            validate_train_config(cfg)
        except TrainConfigError as exc:
            raise TrainConfigError(f"{path}: {exc}") from None
    cfg = _merge(cfg, overrides)
    validate_train_config(cfg)
    return cfg


def is_int(x: Any) -> bool:
    """An integer, not a bool (YAML's ``true`` is not a count)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_number(x: Any) -> bool:
    """A finite int or float, not a bool."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _need(ok: bool, key: str, value: Any, allowed: str) -> None:
    if not ok:
        raise TrainConfigError(f"{key}={value!r} is not allowed ({allowed})")


def validate_train_config(cfg: dict) -> None:
    """Types and ranges of every key, so a bad value fails before any env or model is built."""
    def integer(key: str, value: Any, lo: int, hi: int | None = None) -> None:
        ok = is_int(value) and value >= lo and (hi is None or value <= hi)
        _need(ok, key, value, f"an integer from {lo}" + (f" to {hi}" if hi is not None else " up"))

    def number(key: str, value: Any, lo: float, hi: float | None = None, strict: bool = False) -> None:
        ok = is_number(value) and (value > lo if strict else value >= lo) and (hi is None or value <= hi)
        rng = f"{'>' if strict else '>='} {lo:g}" + (f" and <= {hi:g}" if hi is not None else "")
        _need(ok, key, value, f"a number {rng}")

    def boolean(key: str, value: Any) -> None:
        _need(isinstance(value, bool), key, value, "true or false")

    def is_player(v: Any) -> bool:  # a name, or (from Python) an Agent or policy object
        return bool(v) if isinstance(v, str) else not isinstance(v, (int, float, list, dict, type(None)))

    def names(key: str, value: Any, count: int | None = None) -> None:
        ok = all(map(is_player, value)) and bool(value) if isinstance(value, list) else is_player(value)
        _need(ok, key, value, "a player name or a list of player names, e.g. [random, heuristic, heuristic]")
        if count is not None and isinstance(value, list) and len(value) != count:
            _need(False, key, value, f"one name for all opponents, or a list of {count} names (one per other seat)")

    if not isinstance(cfg.get("run_dir"), (str, Path)) or not str(cfg["run_dir"]).strip():
        _need(False, "run_dir", cfg.get("run_dir"), "a folder path, e.g. runs/my_run")
    integer("seed", cfg["seed"], 0, SEED_MAX)
    integer("total_timesteps", cfg["total_timesteps"], 0, 10**12)  # 0: save and evaluate the untrained model
    integer("checkpoint_every", cfg["checkpoint_every"], 0)  # 0: only the final checkpoint
    integer("keep_checkpoints", cfg["keep_checkpoints"], 1)
    _need(isinstance(cfg["keep_best"], bool), "keep_best", cfg["keep_best"], "true or false")
    if cfg["torch_threads"] is not None:
        integer("torch_threads", cfg["torch_threads"], 1, 1024)
    _need(cfg["policy"] in ("mlp", "factored"), "policy", cfg["policy"], "mlp or factored")
    _need(cfg["precision"] in ("float32", "bfloat16"), "precision", cfg["precision"], "float32 or bfloat16")
    if cfg["init_from"] is not None and not isinstance(cfg["init_from"], (str, Path)):
        _need(False, "init_from", cfg["init_from"], "a checkpoint path or null")
    env = cfg["env"]
    if not isinstance(env["rules"], dict):
        _need(False, "env.rules", env["rules"], "a mapping of rules flags, e.g. {dice: 2}")
    try:
        config = rules_config(cfg)
    except ConfigError as exc:
        raise TrainConfigError(f"env: {exc}") from None
    P = config.players
    integer("env.num_envs", env["num_envs"], 1, 1 << 20)
    _need(env["seat"] == "random" or (is_int(env["seat"]) and 0 <= env["seat"] < P), "env.seat", env["seat"],
          f"'random' or a seat from 0 to {P - 1}")  # fmt: skip
    names("env.opponents", env["opponents"], P - 1)
    for key in ("macro_moves", "macro_accuse", "belief", "end_on_elimination", "packed_observation"):
        boolean(f"env.{key}", env[key])
    if env["macro_accuse"] and not env["belief"]:
        raise TrainConfigError("env.macro_accuse=true needs env.belief=true (the macro accusation uses the notebook)")
    try:
        check_observation(env["observation"], bool(env["belief"]))
    except ConfigError as exc:
        raise TrainConfigError(f"env.observation: {exc}") from None
    try:
        check_packed_observation(env["packed_observation"], env["observation"], bool(env["belief"]))
    except ConfigError as exc:
        raise TrainConfigError(f"env.{exc}") from None
    if env["advisor"] is not None and cfg["policy"] == "factored":
        raise TrainConfigError("policy=factored needs the suggestion actions: not with env.advisor (Discrete(2))")
    if env["advisor"] is not None:
        _need(isinstance(env["advisor"], str), "env.advisor", env["advisor"], "a player name, e.g. deducer, or null")
        names("env.advisor", env["advisor"])
        if not env["belief"] or env["macro_moves"] or env["macro_accuse"]:
            raise TrainConfigError(
                "env.advisor needs env.belief=true and env.macro_moves=false, env.macro_accuse=false (the advisor "
                "moves; the learner chooses between the advisor's action and accusing its belief's best triple)"
            )
    try:
        check_accuse_gate(env["accuse_gate"], bool(env["macro_accuse"]))
    except ConfigError as exc:
        raise TrainConfigError(f"env.{exc}") from None
    try:
        check_shaping(env["shaping"], bool(env["belief"]))
    except ConfigError as exc:
        raise TrainConfigError(f"env.{exc}") from None
    ppo = cfg["ppo"]
    for key in ("n_steps", "batch_size", "n_epochs"):
        integer(f"ppo.{key}", ppo[key], 1)
    for key, lo, hi, strict in (("learning_rate", 0, None, True), ("gamma", 0, 1, False), ("gae_lambda", 0, 1, False),
                                ("clip_range", 0, None, True), ("ent_coef", 0, None, False),
                                ("vf_coef", 0, None, False), ("max_grad_norm", 0, None, True)):  # fmt: skip
        number(f"ppo.{key}", ppo[key], lo, hi, strict)
    arch = ppo["net_arch"]
    ok = isinstance(arch, list) and bool(arch) and all(is_int(n) and 1 <= n <= 1 << 16 for n in arch)
    _need(ok, "ppo.net_arch", arch, "a list of layer sizes, e.g. [256, 256]")
    ev = cfg["eval"]
    integer("eval.every", ev["every"], 0)
    integer("eval.games", ev["games"], 0, 10**7)
    integer("eval.batch_size", ev["batch_size"], 1, 1 << 20)
    boolean("eval.deterministic", ev["deterministic"])
    if ev["opponents"] is not None:
        lineups = ev["opponents"]
        if isinstance(lineups, list) and lineups and all(isinstance(x, list) for x in lineups):
            for k, lineup in enumerate(lineups):
                names(f"eval.opponents[{k}]", lineup, P - 1)
        else:
            names("eval.opponents", lineups, P - 1)
    lg = cfg["league"]
    boolean("league.enabled", lg["enabled"])
    names("league.bots", lg["bots"])
    number("league.bot_prob", lg["bot_prob"], 0, 1)
    number("league.self_prob", lg["self_prob"], 0, 1)
    if lg["bot_prob"] + lg["self_prob"] > 1:
        raise TrainConfigError(
            f"league.bot_prob + league.self_prob = {lg['bot_prob'] + lg['self_prob']:g} (at most 1; the rest "
            "draws past checkpoints)"
        )
    integer("league.max_size", lg["max_size"], 1)
    integer("league.swap_every", lg["swap_every"], 1)
    im = cfg["imitation"]
    if im["teacher"] is not None:
        _need(isinstance(im["teacher"], str) and bool(im["teacher"]), "imitation.teacher", im["teacher"],
              "a player name, e.g. expert, or null (no imitation phase)")  # fmt: skip
        if env["advisor"] is not None or env["macro_accuse"] or env["packed_observation"]:
            raise TrainConfigError("imitation labels every decision in the full or macro-move space: not with "
                                   "env.advisor, env.macro_accuse or env.packed_observation")  # fmt: skip
        integer("imitation.games", im["games"], 1, 10**9)
    integer("imitation.games_per_round", im["games_per_round"], 1, 10**7)
    integer("imitation.batch_games", im["batch_games"], 1, 1 << 20)
    integer("imitation.epochs", im["epochs"], 1, 1000)
    integer("imitation.batch_size", im["batch_size"], 1, 1 << 20)
    number("imitation.learning_rate", im["learning_rate"], 0, None, strict=True)
    number("imitation.value_coef", im["value_coef"], 0)


def check_run_inputs(cfg: dict, resume: bool) -> None:
    """The files a run needs, checked before anything is built: player names, ``init_from``, ``run_dir``."""
    listed = []
    if cfg["imitation"]["teacher"] is not None:
        listed.append(cfg["imitation"]["teacher"])
    for key in ("opponents",):
        value = cfg["env"][key]
        listed += [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]
    for lineup in eval_lineups(cfg, rules_config(cfg).players):
        listed += [v for v in lineup if isinstance(v, str)]
    if cfg["league"]["enabled"]:
        listed += list(cfg["league"]["bots"])
    try:
        check_player_names(listed)
        check_writable_dir(cfg["run_dir"], "run_dir")
    except UsageError as exc:
        raise TrainConfigError(str(exc)) from None
    if cfg["init_from"] and not resume and not init_path(cfg["init_from"]).is_file():
        raise TrainConfigError(f"init_from={str(cfg['init_from'])!r} is not a file (a checkpoint .zip of another run, "
                               f"or pretrained:NAME)")  # fmt: skip


def eval_lineups(cfg: dict, players: int) -> list[list[Any]]:
    """The opponent lineups each evaluation plays, in order (the first selects ``best_model.zip``): ``eval.opponents``
    (one name, one lineup of ``players - 1`` names, or a list of lineups), else the training opponents."""
    opponents = cfg["eval"]["opponents"] or cfg["env"]["opponents"]
    if isinstance(opponents, str):
        return [[opponents] * (players - 1)]
    if opponents and all(isinstance(x, list) for x in opponents):
        return [list(x) for x in opponents]
    return [list(opponents)]


def init_path(value: str | Path) -> Path:
    """The checkpoint file of ``init_from``: a path, or ``pretrained:NAME`` (a player shipped with the package)."""
    text = str(value)
    if not text.startswith("pretrained:"):
        return Path(text)
    try:
        return path_of(text.split(":", 1)[1])
    except UsageError as exc:
        raise TrainConfigError(f"init_from: {exc}") from None


def rules_config(cfg: dict) -> RulesConfig:
    """The rules of a config's ``env`` section."""
    env = cfg["env"]
    return make_config(env["preset"], players=env["players"], **env["rules"])


__all__ = ["DEFAULTS", "check_run_inputs", "init_path", "load_train_config", "rules_config", "validate_train_config"]
