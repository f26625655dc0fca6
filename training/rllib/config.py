"""The RLlib training config: its keys, their defaults (:data:`DEFAULTS`) and the checks run before Ray starts.

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

import json
from pathlib import Path
from typing import Any

from cluedo_env.agents.learner.compact_observation import check_observation
from cluedo_env.agents.learner.inputs import check_packed_observation
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.training.learner_core import UNPLAYED_MODES
from cluedo_env.training.players import register_player_prefixes
from cluedo_env.training.precision import PRECISIONS
from cluedo_env.training.rllib.selfplay_runner import INPUT_OPTIONS, LEAGUE, MAPPINGS
from cluedo_env.training.rllib.vector_env import LEARNER_DEFAULTS, opponent_specs

from cluedo_env.errors import TrainConfigError
from cluedo_env.options import SEED_MAX
from cluedo_env.rules.config import ConfigError, make_config, read_yaml

# ``sampler:`` of a vs_bots config: RLlib's own env runner, or cluedo_env.training.rllib.bulk_runner.BulkEnvRunner
SAMPLERS = ("rllib", "bulk")

DEFAULTS: dict[str, Any] = {
    "run_dir": "runs/rllib",
    "seed": 0,
    "setup": "vs_bots",
    "sampler": "rllib",
    "precision": "float32",
    "opponents": "random",
    "learner": {
        "seat": "random",
        "macro_moves": False,
        "macro_accuse": False,
        "belief": False,
    },  # fmt: skip
    "league": {"snapshot_every": 0, "max_snapshots": 8},
    # setup=selfplay: the modules, which of them learn (null: all), and how seats map to them
    "selfplay": {"policies": ["main"], "train": None, "mapping": "by_seat", "bots": []},
    "iterations": 10,
    "checkpoint_every": 5,
    "env": {"preset": "classic", "players": 4},
    "ray": {"num_cpus": None},
    "env_runners": {
        "num_env_runners": 1,
        "num_envs_per_env_runner": 1,
        "rollout_fragment_length": 100,
        "episodes_to_numpy": False,
    },  # fmt: skip
    "learners": {"num_learners": 0, "num_gpus_per_learner": 0},
    "ppo": {
        "train_batch_size_per_learner": 4000,
        "minibatch_size": 500,
        "num_epochs": 4,
        "lr": 3.0e-4,
        "entropy_coeff": 0.0,
        "gamma": 0.995,
        "lambda_": 0.95,
    },  # fmt: skip
    "model": {"fcnet_hiddens": [256, 256]},
    "eval": {"every": 0, "games": 200, "opponents": None},
}


def load_config(path: str | Path | None, **overrides: Any) -> dict[str, Any]:
    """The YAML config over :data:`DEFAULTS` (one level of nested dicts merged), then ``overrides``; checked."""
    cfg = json.loads(json.dumps(DEFAULTS))
    data = read_yaml(path, "RLlib config", TrainConfigError) if path else {}
    if path and data is None:
        raise TrainConfigError(f"{path}: the RLlib config is empty (keys: {', '.join(DEFAULTS)}; see "
                               "configs/rllib_vs_random.yaml)")  # fmt: skip
    if not isinstance(data, dict):
        raise TrainConfigError(f"{path}: an RLlib config is a mapping of keys, got a YAML {type(data).__name__} "
                               f"(keys: {', '.join(DEFAULTS)})")  # fmt: skip
    for key, value in {**data, **overrides}.items():
        if key not in cfg:
            raise TrainConfigError(f"unknown config key {key!r} (known: {', '.join(cfg)})")
        if isinstance(cfg[key], dict):
            if not isinstance(value, dict):
                raise TrainConfigError(
                    f"config key {key!r} must be a mapping, got {value!r} (keys: {', '.join(cfg[key])})"
                )
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    validate_config(cfg)
    return cfg


def validate_config(cfg: dict[str, Any]) -> None:
    """Types and ranges of the keys this module reads, before Ray starts."""
    def integer(key: str, value: Any, lo: int, hi: int | None = None) -> None:
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= lo and (hi is None or value <= hi)):
            span = f"an integer from {lo}" + (f" to {hi}" if hi is not None else " up")
            raise TrainConfigError(f"{key}={value!r} is not allowed ({span})")

    if cfg["setup"] not in ("vs_bots", "selfplay"):
        raise TrainConfigError(f"setup={cfg['setup']!r} is not allowed (choose 'vs_bots' or 'selfplay')")
    if cfg["sampler"] not in SAMPLERS:
        raise TrainConfigError(f"sampler={cfg['sampler']!r} is not allowed (one of {', '.join(SAMPLERS)}: "
                               "rllib: RLlib's SingleAgentEnvRunner; "
                               "bulk: cluedo_env.training.rllib.bulk_runner)")  # fmt: skip
    if cfg["precision"] not in PRECISIONS:
        raise TrainConfigError(f"precision={cfg['precision']!r} is not allowed (one of {', '.join(PRECISIONS)})")
    if not isinstance(cfg["run_dir"], str) or not cfg["run_dir"].strip():
        raise TrainConfigError(f"run_dir={cfg['run_dir']!r} is not allowed (a folder path, e.g. runs/rllib)")
    integer("seed", cfg["seed"], 0, SEED_MAX)
    integer("iterations", cfg["iterations"], 1, 10**9)
    integer("checkpoint_every", cfg["checkpoint_every"], 0)  # 0: only after the last iteration
    try:
        env = cfg["env"]
        rules = make_config(env.get("preset", "classic"), **{k: v for k, v in env.items() if k != "preset"})
    except ConfigError as exc:
        raise TrainConfigError(f"env: {exc}") from None
    if cfg["setup"] == "vs_bots":
        _validate_learner(cfg, rules)
    elif cfg["opponents"] != DEFAULTS["opponents"]:
        raise TrainConfigError(f"opponents={cfg['opponents']!r} is not allowed with setup=selfplay (every seat is "
                               "a module of selfplay.policies; opponents are for setup=vs_bots)")  # fmt: skip
    _validate_selfplay(cfg)
    integer("league.snapshot_every", cfg["league"].get("snapshot_every"), 0)
    integer("league.max_snapshots", cfg["league"].get("max_snapshots"), 1, 1000)
    for key, value in cfg["env_runners"].items():
        if key.startswith("num_"):
            integer(f"env_runners.{key}", value, 0 if key == "num_env_runners" else 1, 4096)
    integer("eval.every", cfg["eval"].get("every") or 0, 0)
    integer("eval.games", cfg["eval"].get("games", 200), 1, 10**7)


def _validate_selfplay(cfg: dict[str, Any]) -> None:
    """``selfplay:``: module ids, the ones that learn, the seat mapping, bots."""
    sp = cfg["selfplay"]
    unknown = sorted(set(sp) - set(DEFAULTS["selfplay"]))
    if unknown:
        raise TrainConfigError(f"selfplay: unknown key(s) {unknown} (known: {', '.join(DEFAULTS['selfplay'])})")
    policies = sp["policies"]
    if not (isinstance(policies, list) and policies and all(isinstance(p, str) and p for p in policies)
            and len(set(policies)) == len(policies)):  # fmt: skip
        raise TrainConfigError(f"selfplay.policies={policies!r} is not allowed (a list of distinct module names, "
                               "e.g. [main] or [main, rival])")  # fmt: skip
    train = sp["train"]
    if train is not None and not (isinstance(train, list) and train and set(train) <= set(policies)):
        raise TrainConfigError(f"selfplay.train={train!r} is not allowed (null for all, or a non-empty list of "
                               f"selfplay.policies: {policies})")  # fmt: skip
    bots = sp["bots"]
    if not (isinstance(bots, list) and all(isinstance(b, str) and b for b in bots)):
        raise TrainConfigError(f"selfplay.bots={bots!r} is not allowed (a list of player names, e.g. [heuristic])")
    if set(bots) & set(policies) or len(set(bots)) != len(bots):
        raise TrainConfigError(f"selfplay.bots={bots!r}: a bot name must differ from the module names {policies} "
                               "and from the other bots")  # fmt: skip
    if bots and cfg["setup"] == "selfplay" and cfg["sampler"] != "bulk":
        raise TrainConfigError("selfplay.bots needs sampler: bulk (RLlib's multi-agent runner plays modules only)")
    if cfg["setup"] == "selfplay":
        _validate_selfplay_inputs(cfg)
        if cfg["sampler"] == "bulk" and int(cfg["learners"].get("num_learners") or 0) > 1:
            raise TrainConfigError("learners.num_learners > 1 is not allowed with setup=selfplay, sampler: bulk "
                                   "(RLlib shards episodes with SingleAgentEpisode.slice, which drops the seat's "
                                   "agent and module ids; use 0 or 1 learner)")  # fmt: skip
    if LEAGUE in bots and not cfg["league"].get("snapshot_every"):
        raise TrainConfigError("selfplay.bots include 'league' but league.snapshot_every is 0 (set how many "
                               "iterations apart the frozen snapshots of the first module are taken)")  # fmt: skip
    for spec in bots:
        if spec == LEAGUE:  # frozen snapshots of selfplay.policies[0], built by the runner
            continue
        try:
            _make_player(spec)
        except Exception as exc:  # noqa: BLE001 - unknown names, unreadable checkpoints: all config errors here
            raise TrainConfigError(f"selfplay.bots: {spec!r} is not a usable player ({exc})") from None
    if sp["mapping"] not in MAPPINGS:
        raise TrainConfigError(f"selfplay.mapping={sp['mapping']!r} is not allowed (one of {', '.join(MAPPINGS)}: "
                               "by_seat: seat k plays (policies + bots)[k % n]; shuffled: the same after a "
                               "random permutation of the seats per game)")  # fmt: skip


def _check_inputs(learner: dict[str, Any], flags: tuple[str, ...]) -> None:
    """The learner-input keys both setups share: ``flags`` are booleans, the macro accusation needs belief
    features, and the observation is one the belief setting allows."""
    for key in flags:
        if key in learner and not isinstance(learner[key], bool):
            raise TrainConfigError(f"learner.{key}={learner[key]!r} is not allowed (true or false)")
    if learner.get("macro_accuse") and not learner.get("belief"):
        raise TrainConfigError("learner.macro_accuse=true needs learner.belief=true "
                               "(the macro accusation accuses the belief's best triple)")  # fmt: skip
    try:
        check_observation(learner.get("observation", "full"), bool(learner.get("belief")))
    except ConfigError as exc:
        raise TrainConfigError(f"learner: {exc}") from None


def _validate_selfplay_inputs(cfg: dict[str, Any]) -> None:
    """``learner:`` in a selfplay config: the modules' inputs only (belief, observation, macro actions), with
    ``sampler: bulk``; the learner-env options of vs_bots (seat, shaping, gates ...) do not apply."""
    learner = cfg["learner"]
    other = sorted(k for k, v in learner.items()
                   if k not in INPUT_OPTIONS and (k not in LEARNER_DEFAULTS or v != LEARNER_DEFAULTS[k]))  # fmt: skip
    if other:
        raise TrainConfigError(f"learner: {other} do not apply to setup=selfplay (its modules' inputs: "
                               f"{', '.join(INPUT_OPTIONS)})")  # fmt: skip
    _check_inputs(learner, ("belief", "macro_moves", "macro_accuse"))
    if selfplay_inputs(cfg) and cfg["sampler"] != "bulk":
        raise TrainConfigError("learner: belief features and macro actions in self-play need sampler: bulk "
                               "(RLlib's multi-agent runner feeds the PettingZoo observation)")  # fmt: skip


def selfplay_inputs(cfg: dict[str, Any]) -> dict[str, Any]:
    """The self-play modules' input options; empty (the engine's observation and actions) unless belief features or
    macro actions are on: the one test of that, which the runner reads as "options or not"."""
    learner = cfg["learner"]
    if not any(learner.get(k) for k in ("belief", "macro_moves", "macro_accuse")):
        return {}
    return {k: learner.get(k, "full" if k == "observation" else False) for k in INPUT_OPTIONS}


def _validate_learner(cfg: dict[str, Any], rules: Any) -> None:
    """``learner:`` and ``opponents`` of the vs_bots setup: what was wrong and what is allowed."""
    learner = cfg["learner"]
    unknown = sorted(set(learner) - set(LEARNER_DEFAULTS))
    if unknown:
        raise TrainConfigError(f"learner: unknown key(s) {unknown} (known: {', '.join(LEARNER_DEFAULTS)})")
    seat = learner.get("seat", "random")
    if seat != "random" and not (isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < rules.players):
        raise TrainConfigError(f"learner.seat={seat!r} is not allowed (0..{rules.players - 1} or 'random')")
    if learner.get("unplayed_games", "step") not in UNPLAYED_MODES:
        raise TrainConfigError(f"learner.unplayed_games={learner['unplayed_games']!r} is not allowed "
                               f"(one of {', '.join(UNPLAYED_MODES)})")  # fmt: skip
    _check_inputs(learner, ("macro_moves", "macro_accuse", "belief", "end_on_elimination", "packed_observation"))
    try:
        check_packed_observation(learner.get("packed_observation", False), learner.get("observation", "full"),
                                 bool(learner.get("belief")))  # fmt: skip
    except ConfigError as exc:
        raise TrainConfigError(f"learner.{exc}") from None
    try:
        specs = opponent_specs(cfg["opponents"], rules.players)
    except ConfigError as exc:
        raise TrainConfigError(str(exc)) from None
    for spec in sorted(set(specs) - {"league"}):  # build each once here, so a bad name fails before Ray starts
        try:
            _make_player(spec)
        except Exception as exc:  # noqa: BLE001 - unknown names, unreadable checkpoints: all config errors here
            raise TrainConfigError(f"opponents: {spec!r} is not a usable player ({exc})") from None
    if "league" in specs and not cfg["league"].get("snapshot_every"):
        raise TrainConfigError("opponents include 'league' but league.snapshot_every is 0 (set how many "
                               "iterations apart the frozen snapshots of the learning module are taken)")  # fmt: skip


def _make_player(spec: str) -> Any:
    """``cluedo_env.agents.play.registry.make_agent(spec)`` with the loader of a trained player's prefix registered."""
    register_player_prefixes([spec])
    return make_agent(spec, seed=0)


__all__ = ["DEFAULTS", "SAMPLERS", "load_config", "selfplay_inputs", "validate_config"]
