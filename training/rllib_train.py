"""PPO on Ray RLlib (new API stack) for Cluedo: batched learner-vs-players, or multi-agent self-play.

    python -m training.rllib_train --config configs/rllib_vs_heuristic_belief.yaml     # local Ray
    python -m training.rllib_train --config configs/rllib_vs_heuristic_belief.yaml --address auto  # a cluster
    python -m training.rllib_train --config configs/rllib_vs_heuristic_belief.yaml --resume  # from run_dir
    python -m training.rllib_train --config configs/rllib_vs_heuristic_belief.yaml --bench 1 2  # sampling rate

Setups (``setup:`` in the YAML):

* ``vs_bots``: one learner seat per game against ``opponents`` (any :func:`agents.play.registry.make_agent`
  player: ``random``, ``heuristic``, ``deducer``, ``expert``, ``notebook``, ``ckpt:PATH``,
  ``rllib:PATH``; or ``league``, frozen snapshots of the learning module, :mod:`training.rllib_league`),
  played inside the env. RLlib's ``SingleAgentEnvRunner`` steps ``num_envs_per_env_runner`` games
  per call in one batched engine (:mod:`training.rllib_vector`). ``learner:`` sets the learner env's
  options (``seat``, ``macro_moves``, ``macro_accuse``, ``belief``), as in the SB3 configs.
  ``sampler: bulk`` (or ``--sampler bulk``) samples with :class:`training.rllib_bulk_runner.BulkEnvRunner`
  instead of RLlib's runner: the same episodes, built once per rollout fragment (docs/rllib_scaling.md).
  ``precision: bfloat16`` (or ``--precision bfloat16``) runs the module's networks under CPU autocast in the
  env runners and the learner (float32 weights, logits, values and losses; a checkpoint plays float32), as
  ``precision`` does in an SB3 config: several times cheaper products on CPUs with AMX or AVX512-BF16.
* ``selfplay``: every seat is a module of ``selfplay.policies`` (mapped ``by_seat`` or ``shuffled`` per game;
  ``selfplay.train``: those that learn). ``sampler: rllib``: the PettingZoo AEC env in RLlib's ``PettingZooEnv``
  wrapper (``"cluedo_v0"``; the bare env raises ``IllegalActionError`` on an illegal action, so a masking bug
  stops training loudly), one game per env, one move per step. ``sampler: bulk``:
  :class:`training.rllib_selfplay_runner.BulkSelfPlayRunner`, ``num_envs_per_env_runner`` games of one engine
  per runner; there ``selfplay.bots`` may seat rule-based players or ``league`` (frozen snapshots of the first
  module), and ``learner:`` (belief, observation, macro actions) gives every seat the vs_bots learner's inputs.

Scale-out keys: ``env_runners.num_env_runners``, ``env_runners.num_envs_per_env_runner``,
``env_runners.num_cpus_per_env_runner``, ``learners.num_learners``, ``learners.num_gpus_per_learner``.
Checkpoints are ``Algorithm.save_to_path`` folders ``run_dir/checkpoints/iter_NNNNNN``;
``run_dir/latest.txt`` names the newest. ``rllib:run_dir/checkpoints/iter_NNNNNN`` is a player for
``scripts/evaluate.py`` once :mod:`training.rllib_module` is imported (this module imports it).
See docs/rllib_scaling.md for the cluster launch and the measured throughput.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path
from typing import Any

from cluedo_env.errors import CheckpointError, TrainConfigError
from cluedo_env.options import ArgumentParser, int_in

ENV_NAME = "cluedo_v0"
# ``sampler:`` of a vs_bots config: RLlib's own env runner, or training.rllib_bulk_runner.BulkEnvRunner
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
    from cluedo_env.rules.config import read_yaml

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
    from cluedo_env.options import SEED_MAX
    from cluedo_env.rules.config import ConfigError, make_config

    def integer(key: str, value: Any, lo: int, hi: int | None = None) -> None:
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= lo and (hi is None or value <= hi)):
            span = f"an integer from {lo}" + (f" to {hi}" if hi is not None else " up")
            raise TrainConfigError(f"{key}={value!r} is not allowed ({span})")

    if cfg["setup"] not in ("vs_bots", "selfplay"):
        raise TrainConfigError(f"setup={cfg['setup']!r} is not allowed (choose 'vs_bots' or 'selfplay')")
    if cfg["sampler"] not in SAMPLERS:
        raise TrainConfigError(f"sampler={cfg['sampler']!r} is not allowed (one of {', '.join(SAMPLERS)}: "
                               "rllib: RLlib's SingleAgentEnvRunner; bulk: training.rllib_bulk_runner)")  # fmt: skip
    from training.lean_policy import PRECISIONS

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
    from training.rllib_selfplay_runner import LEAGUE, MAPPINGS

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
    from agents.learner.compact_observation import check_observation
    from cluedo_env.rules.config import ConfigError

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
    from training.rllib_selfplay_runner import INPUT_OPTIONS
    from training.rllib_vector import LEARNER_DEFAULTS

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
    from training.rllib_selfplay_runner import INPUT_OPTIONS

    learner = cfg["learner"]
    if not any(learner.get(k) for k in ("belief", "macro_moves", "macro_accuse")):
        return {}
    return {k: learner.get(k, "full" if k == "observation" else False) for k in INPUT_OPTIONS}


def _validate_learner(cfg: dict[str, Any], rules: Any) -> None:
    """``learner:`` and ``opponents`` of the vs_bots setup: what was wrong and what is allowed."""
    from cluedo_env.rules.config import ConfigError
    from training.learner_core import UNPLAYED_MODES
    from training.rllib_vector import LEARNER_DEFAULTS, opponent_specs

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
    _check_inputs(learner, ("macro_moves", "macro_accuse", "belief", "end_on_elimination"))
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
    """``agents.play.registry.make_agent(spec)`` with the ``ckpt:`` and ``rllib:`` prefixes registered."""
    import training.policy  # noqa: F401 - registers ckpt:
    import training.rllib_module  # noqa: F401 - registers rllib:
    from agents.play.registry import make_agent

    return make_agent(spec, seed=0)


# ------------------------------------------------------------------------------------------ env
def make_env(env_config: dict[str, Any]):
    """RLlib's ``PettingZooEnv`` around the bare AEC env (illegal actions raise)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    import cluedo_env
    from training.rllib_selfplay_runner import rules_env_config

    return PettingZooEnv(cluedo_env.raw_env(**rules_env_config(env_config)))


def register() -> None:
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)


def selfplay_mapping(cfg: dict[str, Any]) -> Any:
    """The ``policy_mapping_fn`` of a selfplay config (picklable: it goes to every env runner)."""
    from training.rllib_selfplay_runner import seat_mapping

    sp = cfg["selfplay"]
    return functools.partial(seat_mapping, policies=tuple(sp["policies"]) + tuple(sp["bots"]),
                             mapping=sp["mapping"], players=int(cfg["env"].get("players", 4)))  # fmt: skip


def flat_spaces(cfg: dict[str, Any]) -> tuple[Any, Any]:
    """(observation, action) spaces of one seat as the bulk self-play runner feeds its modules: the observation
    (the engine's, or the learner inputs of ``learner:``) then the legal mask, in one int8 row (the layout of the
    batched vs_bots env)."""
    import gymnasium as gym
    import numpy as np

    import cluedo_env
    from training.rllib_selfplay_runner import input_sizes

    rules = cluedo_env.raw_env(**dict(cfg["env"])).engine.config
    width, n_act = input_sizes(rules, selfplay_inputs(cfg))
    return gym.spaces.Box(0, 127, (width + n_act,), np.int8), gym.spaces.Discrete(n_act)


def module_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The module's ``model_config``: ``model:`` and the run's ``precision`` (a warning where bfloat16 is emulated)."""
    from training.lean_policy import warn_if_emulated

    warn_if_emulated(cfg["precision"])
    return {**cfg["model"], "precision": cfg["precision"]}


def build_config(cfg: dict[str, Any]):
    """The ``PPOConfig`` for ``cfg`` (see :func:`load_config`)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    er = {k: (int(v) if k.startswith("num_") else v) for k, v in cfg["env_runners"].items()}
    config = PPOConfig().framework("torch").learners(**cfg["learners"]).training(**cfg["ppo"])
    config = config.debugging(seed=cfg["seed"])
    if cfg["setup"] == "vs_bots":
        return _vs_bots(config, cfg, er)
    return _selfplay(config, cfg, er)


def _vs_bots(config: Any, cfg: dict[str, Any], er: dict[str, Any]) -> Any:
    """Single-agent PPO on the batched learner-vs-players env (:mod:`training.rllib_vector`)."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from training import rllib_league, rllib_vector
    from training.rllib_module import MaskedPPOTorchRLModule

    rllib_vector.register()
    env_config = {**cfg["env"], "learner": dict(cfg["learner"]), "opponents": cfg["opponents"], "seed": cfg["seed"]}
    model = {**module_config(cfg), "cluedo": rllib_vector.learner_options(cfg["learner"])}  # read by rllib: players
    config = (
        # Discrete actions need no unsquashing or clipping; off, RLlib skips a per-game pass over them.
        config.environment(rllib_vector.VECTOR_ENV_NAME, env_config=env_config, disable_env_checking=True,
                           normalize_actions=False, clip_actions=False)  # fmt: skip
        .env_runners(**er, gym_env_vectorize_mode="vector_entry_point")
        .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model))
    )
    if cfg.get("sampler", "rllib") == "bulk":
        from training.rllib_bulk_runner import BulkEnvRunner

        config = config.env_runners(env_runner_cls=BulkEnvRunner)
    callbacks: dict[str, Any] = {"on_environment_created": rllib_vector.reseed_opponents}
    if "league" in rllib_vector.opponent_specs(cfg["opponents"], int(cfg["env"].get("players", 4))):
        callbacks["on_train_result"] = rllib_league.snapshot_callback(
            int(cfg["league"]["snapshot_every"]), int(cfg["league"]["max_snapshots"]))  # fmt: skip
    return config.callbacks(**callbacks)


def _selfplay(config: Any, cfg: dict[str, Any], er: dict[str, Any]) -> Any:
    """Multi-agent PPO: every seat is a module of ``selfplay.policies`` (``selfplay.mapping``).

    ``sampler: rllib``: RLlib's multi-agent runner on the PettingZoo env, one game per env.
    ``sampler: bulk``: :class:`training.rllib_selfplay_runner.BulkSelfPlayRunner`, ``num_envs_per_env_runner``
    games of one engine per runner; the modules take flat rows (:func:`flat_spaces`)."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from training.rllib_module import MaskedPPOTorchRLModule
    from training.rllib_selfplay_runner import BOTS_KEY, INPUTS_KEY, LEAGUE, LEAGUE_OF_KEY

    register()
    sp = cfg["selfplay"]
    bulk = cfg["sampler"] == "bulk"
    spaces = dict(zip(("observation_space", "action_space"), flat_spaces(cfg), strict=True)) if bulk else {}
    inputs = selfplay_inputs(cfg)
    model = {**module_config(cfg), "cluedo": inputs} if inputs else module_config(cfg)  # read by rllib: players
    specs = {p: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model, **spaces)
             for p in sp["policies"]}  # fmt: skip
    config = (
        # RLlib's env check steps an unmasked action_space.sample(), which the bare env rightly rejects
        config.environment(ENV_NAME, env_config={**cfg["env"], BOTS_KEY: list(sp["bots"]), INPUTS_KEY: inputs,
                                                 LEAGUE_OF_KEY: sp["policies"][0]},
                           disable_env_checking=True)  # fmt: skip
        .env_runners(**er)  # num_env_runners, num_envs_per_env_runner, rollout_fragment_length, ...
        .multi_agent(policies=set(specs), policy_mapping_fn=selfplay_mapping(cfg),
                     policies_to_train=list(sp["train"] or sp["policies"]))  # fmt: skip
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    )
    if bulk:
        from training.rllib_selfplay_runner import BulkSelfPlayRunner

        config = config.env_runners(env_runner_cls=BulkSelfPlayRunner)
    if LEAGUE in sp["bots"]:
        from training import rllib_league

        config = config.callbacks(on_train_result=rllib_league.snapshot_callback(
            int(cfg["league"]["snapshot_every"]), int(cfg["league"]["max_snapshots"])))  # fmt: skip
    return config


def init_ray(cfg: dict[str, Any], address: str | None = None) -> None:
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=cfg["ray"].get("num_cpus"), include_dashboard=False)


# ---------------------------------------------------------------------------------- checkpoints
def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The checkpoint ``latest.txt`` names, if that folder exists; else the newest ``checkpoints/iter_*``."""
    run_dir = Path(run_dir)
    marker = run_dir / "latest.txt"
    if marker.is_file():
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
        path = Path(text) if Path(text).is_absolute() else run_dir / text
        if text and path.is_dir():
            return path
    found = sorted(p for p in (run_dir / "checkpoints").glob("iter_*") if p.is_dir())
    return found[-1] if found else None


def resume_candidates(run_dir: str | Path) -> list[Path]:
    """Checkpoints to try on ``--resume``, best first: the one ``latest.txt`` names, then the others newest first."""
    run_dir = Path(run_dir)
    first = latest_checkpoint(run_dir)
    rest = sorted((p for p in (run_dir / "checkpoints").glob("iter_*") if p.is_dir()), reverse=True)
    return ([first] if first is not None else []) + [p for p in rest if p != first]


def save(algo: Any, run_dir: str | Path, iteration: int) -> Path:
    run_dir = Path(run_dir)
    rel = Path("checkpoints") / f"iter_{iteration:06d}"
    algo.save_to_path(str((run_dir / rel).resolve()))
    tmp = run_dir / ".latest.txt.tmp"
    tmp.write_text(str(rel) + "\n")
    tmp.replace(run_dir / "latest.txt")
    return run_dir / rel


def _main_return(result: dict[str, Any]) -> float | None:
    """Mean episode return of the learning module (``main`` in self-play; the one module of vs_bots)."""
    er = result.get("env_runners", {})
    value = er.get("module_episode_returns_mean", {}).get("main", er.get("episode_return_mean"))
    return None if value is None else float(value)


def evaluate(checkpoint: Path, cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """The checkpoint's ``main`` against ``eval.opponents``, seats rotated (:mod:`agents.play.tournament`).

    Writes ``tournament.md``/``.json``/``.png`` into ``out`` and returns the summary.
    """
    import training.rllib_module  # noqa: F401 - registers rllib:
    from agents.play import tournament
    from cluedo_env.rules.config import make_config

    players = int(cfg["env"].get("players", 4))
    opponents = cfg["eval"].get("opponents") or ["random"] * (players - 1)
    rules = {"max_turns": cfg["env"]["max_turns"]} if "max_turns" in cfg["env"] else {}
    config = make_config(str(cfg["env"].get("preset", "classic")), players=players, **rules)
    match = tournament.play_match(config, [f"rllib:{checkpoint}", *opponents], int(cfg["eval"]["games"]),
                                  seed=int(cfg["seed"]))  # fmt: skip
    summary = tournament.summarize(match, config)
    tournament.write_tournament(summary, Path(out))
    return summary


def _node_id(env_runner: Any = None) -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def env_runner_nodes(algo: Any) -> list[str]:
    """The Ray node id of each remote env runner (where the sampling runs; the local one if none)."""
    nodes = algo.env_runner_group.foreach_env_runner(_node_id, local_env_runner=False)
    return list(nodes) or [_node_id()]


def train(cfg: dict[str, Any], *, address: str | None = None, resume: bool = False, log=print) -> dict[str, Any]:
    """Train for ``cfg['iterations']`` iterations (counting those of a resumed run); returns a summary."""
    init_ray(cfg, address)
    run_dir = Path(cfg["run_dir"])
    run_dir.mkdir(parents=True, exist_ok=True)
    algo = build_config(cfg).build_algo()
    start = 0
    progress = run_dir / "progress.jsonl"
    if resume:
        from cluedo_env.files import clean_stale_tmp

        clean_stale_tmp(run_dir, log)
        for ckpt in resume_candidates(run_dir):
            try:
                algo.restore_from_path(str(ckpt.resolve()))
            except Exception as exc:  # noqa: BLE001 - any failure to restore means: try the next older one
                log(f"resume: skipped {ckpt} ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
                continue
            start = int(algo.iteration)
            log(f"resumed from {ckpt} at iteration {start}")
            break
        else:
            algo.stop()
            raise CheckpointError(f"--resume: no checkpoint in {run_dir} restores (start without --resume)")
    summary: dict[str, Any] = {"run_dir": str(run_dir), "checkpoint": None, "iterations": [],
                               "env_runner_nodes": env_runner_nodes(algo)}  # fmt: skip
    ckpt = None
    for it in range(start + 1, int(cfg["iterations"]) + 1):
        t0 = time.perf_counter()
        result = algo.train()
        dt = time.perf_counter() - t0
        er = result.get("env_runners", {})
        row = {"iteration": it, "seconds": round(dt, 2),
               "env_steps": er.get("num_env_steps_sampled"), "agent_steps": er.get("num_agent_steps_sampled"),
               "episodes": er.get("num_episodes"), "main_return": _main_return(result),
               "env_steps_lifetime": er.get("num_env_steps_sampled_lifetime")}  # fmt: skip
        timers = result.get("timers", {})
        for key, name in (("env_runner_sampling_timer", "sample_s"), ("learner_update_timer", "learn_s")):
            if isinstance(timers.get(key), (int, float)):  # RLlib's own timers: sampling, and the learner update
                row[name] = round(float(timers[key]), 2)
        if "league_snapshots" in result:
            row["league_snapshots"] = result["league_snapshots"]
        summary["iterations"].append(row)
        with progress.open("a") as f:
            f.write(json.dumps(row, default=str) + "\n")
        log(json.dumps(row, default=str))
        last = it == int(cfg["iterations"])
        if last or (cfg["checkpoint_every"] and it % int(cfg["checkpoint_every"]) == 0):
            ckpt = save(algo, run_dir, it)
            summary["checkpoint"] = str(ckpt)
            log(f"checkpoint {ckpt}")
            every = int(cfg["eval"].get("every") or 0)
            if every and (it % every == 0 or last):
                res = evaluate(ckpt, cfg, run_dir / f"eval_{it:06d}")
                summary.setdefault("evals", []).append({"iteration": it, "win_rate": res["entries"][0]["win_rate"]})
    algo.stop()
    return summary


def breakdown(cfg: dict[str, Any], steps: int = 4000, log=print) -> dict[str, Any]:
    """Where a sampled step's time goes (vs_bots), in this process with one torch thread, no Ray:
    the env alone (random legal learner actions), then the env with the module choosing the actions
    (one batched forward pass and a categorical draw per env step). A runner's rate below the second
    figure is RLlib's own per-step cost (episode objects, connectors)."""
    import numpy as np
    import torch

    from training.rllib_module import MaskedPPOTorchRLModule, module_actions
    from training.rllib_vector import learner_options, make_vector_env

    torch.set_num_threads(1)
    n = int(cfg["env_runners"]["num_envs_per_env_runner"])
    venv = make_vector_env({**cfg["env"], "num_envs": n, "seed": cfg["seed"], "learner": cfg["learner"],
                            "opponents": cfg["opponents"]})  # fmt: skip
    n_act = int(venv.unwrapped.single_action_space.n)
    model = {**module_config(cfg), "cluedo": learner_options(cfg["learner"])}
    module = MaskedPPOTorchRLModule(observation_space=venv.single_observation_space,
                                    action_space=venv.unwrapped.single_action_space, model_config=model)  # fmt: skip
    gen = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)

    def random_legal(obs: np.ndarray) -> np.ndarray:
        mask = obs[:, -n_act:] > 0
        return (np.cumsum(mask, 1) > (rng.random(len(mask)) * mask.sum(1)).astype(np.int64)[:, None]).argmax(1)

    def policy(obs: np.ndarray) -> np.ndarray:
        return module_actions(module, obs[:, :-n_act], obs[:, -n_act:], False, gen)

    row: dict[str, Any] = {"num_envs": n, "opponents": cfg["opponents"], **learner_options(cfg["learner"])}
    for name, choose in (("env_only", random_legal), ("env_and_module", policy)):
        obs, _ = venv.reset(seed=cfg["seed"])
        for _ in range(4):  # warm-up
            obs, *_ = venv.step(choose(obs))
        done = 0
        t0 = time.perf_counter()
        while done < steps:
            obs, *_ = venv.step(choose(obs))
            done += n
        row[f"{name}_steps_per_s"] = round(done / (time.perf_counter() - t0), 1)
    log(json.dumps(row))
    return row


def bench(cfg: dict[str, Any], runners: list[int], steps: int = 4000, log=print,
          checkpoint: str | Path | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Sampling throughput (env steps/s over all runners) with N remote env runners, the learner idle.

    Each runner samples ``steps`` env steps in ``sample()`` calls of one rollout fragment each
    (``rollout_fragment_length`` x ``num_envs_per_env_runner`` steps), as training does. ``checkpoint``: the
    runners act with that run's modules (an algorithm checkpoint of the same config) instead of fresh ones: an
    untrained module accuses at once, so its games (episodes) last 1-3 steps, which a learning run soon leaves.
    """
    rows = []
    for n in runners:
        c = json.loads(json.dumps(cfg))
        c["env_runners"]["num_env_runners"] = n
        frag = c["env_runners"].get("rollout_fragment_length")
        envs = int(c["env_runners"]["num_envs_per_env_runner"])
        bulk_games = c["setup"] == "vs_bots" or c["sampler"] == "bulk"  # runners that step envs games per call
        chunk = (int(frag) if isinstance(frag, int) else 200) * (envs if bulk_games else 1)
        if isinstance(frag, int):  # RLlib checks the batch against runners x envs x fragment; the learner is idle
            c["ppo"]["train_batch_size_per_learner"] = frag * envs * max(n, 1)
            c["ppo"]["minibatch_size"] = min(int(c["ppo"]["minibatch_size"]), frag * envs * max(n, 1))
        algo = build_config(c).build_algo()
        group = algo.env_runner_group
        if checkpoint is not None:
            algo.restore_from_path(str(Path(checkpoint).resolve()))
            group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)

        def sample(r, k=steps, chunk=chunk):
            n = 0
            while n < k:
                n += sum(len(e) for e in r.sample(num_timesteps=min(chunk, k - n), explore=True))
            return n

        remote = n > 0
        warm = functools.partial(sample, k=max(1, steps // 4))
        group.foreach_env_runner(warm, local_env_runner=not remote)  # warm-up
        t0 = time.perf_counter()
        counts = group.foreach_env_runner(sample, local_env_runner=not remote)
        dt = time.perf_counter() - t0
        total = int(sum(counts))
        row = {"num_env_runners": n, "num_envs_per_env_runner": envs, "modules": str(checkpoint or "fresh"),
               "env_steps": total, "seconds": round(dt, 3),
               "env_steps_per_s": round(total / dt, 1), "per_runner": round(total / dt / max(n, 1), 1)}  # fmt: skip
        log(json.dumps(row))
        rows.append(row)
        algo.stop()
    return rows


def main(argv: list[str] | None = None, prog: str | None = None) -> dict[str, Any]:
    ap = ArgumentParser(prog=prog, description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                        formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--config", required=True, metavar="YAML", help="a configs/rllib_*.yaml file")
    ap.add_argument("--backend", choices=["sb3", "rllib"], default="rllib",
                    help="rllib: this trainer; sb3: MaskablePPO (cluedo train --help)")  # fmt: skip
    ap.add_argument("--address", default=None, help="an existing Ray cluster (e.g. 'auto' or 'ray://head:10001')")
    ap.add_argument("--resume", action="store_true",
                    help="go on from run_dir/latest.txt, or the newest checkpoint that restores")  # fmt: skip
    ap.add_argument("--iterations", type=int_in(1, 10**9), default=None, metavar="N",
                    help="override the config's iterations")  # fmt: skip
    ap.add_argument("--run-dir", default=None, metavar="DIR", help="override the config's run_dir")
    ap.add_argument("--bench", nargs="+", type=int_in(0, 4096), metavar="N",
                    help="sampling rate with N env runners (0: the local one); no training")  # fmt: skip
    ap.add_argument("--sampler", choices=SAMPLERS, default=None,
                    help="override the config's sampler (vs_bots: rllib = RLlib's env runner, bulk = the bulk one)")
    ap.add_argument("--bench-steps", type=int_in(1, 10**9), default=4000, help="env steps per runner for --bench")
    ap.add_argument("--bench-from", default=None, metavar="CHECKPOINT",
                    help="--bench with the modules of this checkpoint of the config (a trained policy's games)")
    from training.lean_policy import PRECISIONS

    ap.add_argument("--precision", choices=list(PRECISIONS), default=None, help="override the config's precision")
    args = ap.parse_args(argv)
    if args.backend != "rllib":
        from training import train as sb3_train

        return sb3_train.main(argv, prog=prog)
    given = (("iterations", args.iterations), ("run_dir", args.run_dir), ("sampler", args.sampler),
             ("precision", args.precision))  # fmt: skip
    overrides = {k: v for k, v in given if v is not None}
    cfg = load_config(args.config, **overrides)
    from cluedo_env.errors import UsageError
    from cluedo_env.files import check_writable_dir

    try:
        check_writable_dir(cfg["run_dir"], "run_dir")
    except UsageError as exc:
        raise TrainConfigError(str(exc)) from None
    if args.resume and not resume_candidates(cfg["run_dir"]):
        raise CheckpointError(f"--resume: no checkpoint in {cfg['run_dir']} (start without --resume)")
    if args.bench_from and not Path(args.bench_from).is_dir():
        raise CheckpointError(f"--bench-from {args.bench_from}: no such checkpoint folder (an algorithm checkpoint, "
                              "e.g. runs/NAME/checkpoints/iter_000064)")  # fmt: skip
    if args.bench:
        init_ray(cfg, args.address)
        parts = breakdown(cfg, args.bench_steps) if cfg["setup"] == "vs_bots" else None
        return {"breakdown": parts, "bench": bench(cfg, args.bench, args.bench_steps, checkpoint=args.bench_from)}
    return train(cfg, address=args.address, resume=args.resume)


if __name__ == "__main__":
    from cluedo_env.errors import run_cli

    sys.exit(run_cli(main))
