"""Train a Cluedo player with MaskablePPO (sb3-contrib) on the batched single-agent VecEnv.

    python -m training.train --config configs/train_vs_random.yaml
    python -m training.train --config configs/train_vs_random.yaml --resume      # continue a killed run
    python -m training.train --config configs/train_vs_random.yaml --total-timesteps 20000 --run-dir runs/try

The YAML config (keys and defaults: ``DEFAULTS`` below; an unknown key is an error):

* ``env``: rules (``preset``, ``players``, other ``RulesConfig`` flags under ``rules``), ``num_envs``,
  learner ``seat`` (k or ``random``), ``opponents`` (one name or P-1 names), ``macro_moves``,
  ``end_on_elimination``, ``belief`` (the deducer's notebook as extra observation pieces,
  :mod:`agents.learner.belief`), ``macro_accuse`` (one "accuse the notebook's best triple" action instead
  of 324; needs ``belief``), ``observation`` (``full``, or ``compact``: the learner's pieces in about a third of
  the slots, :mod:`agents.learner.compact_observation`; needs ``belief``), ``advisor`` (a player name, e.g.
  ``deducer``: it plays the learner's seat and the learner only chooses, where it may accuse, between the
  advisor's action and accusing its belief's best triple; needs ``belief``, no macro options; an expert
  advisor, e.g. ``expert{"floor": 1.01, "accuse_assumed": false, "max_hypotheses": 0}``, also gives the
  learner the expert's accusation inputs and makes the accusation the expert's best open triple,
  :mod:`agents.learner.accusation_features`), ``accuse_gate`` (with ``macro_accuse``: the accusation is open only
  where the learner's notebook is ``solved``, or where its triple's probability is at least a number in
  (0, 1]; the checkpoint keeps the gate when it plays), ``shaping`` (training rewards only: potential-based
  shaping from the learner's notebook, ``{kind: triples | unknown, coef: 0.05}``, discounted with
  ``ppo.gamma``; evaluations count plain wins; :mod:`agents.learner.inputs`) (see :mod:`training.single_agent`).
* ``ppo``: MaskablePPO keyword arguments (``n_steps``, ``batch_size``, ``learning_rate`` ...);
  ``net_arch`` becomes ``policy_kwargs``.
* ``total_timesteps``, ``seed``, ``run_dir``.
* ``policy``: ``mlp`` (sb3-contrib's ``MlpPolicy`` network, with the leaner masked distribution of
  :mod:`training.lean_policy`), or ``factored``: the same network with per-card scores added to the 324
  suggestion logits (:mod:`training.factored_policy`; not with ``env.advisor``).
* ``precision``: ``float32`` (default) or ``bfloat16``: the policy's hidden layers run under CPU autocast while
  training (float32 weights, heads and losses; :mod:`training.lean_policy`). Several times cheaper matrix
  products on CPUs with AMX or AVX512-BF16; elsewhere slower (a warning says so). Checkpoints stay float32.
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
  against ``opponents`` in the tournament evaluator (``scripts/evaluate.py``'s ``play_match``, seats
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

Logs: TensorBoard in ``run_dir/tb`` (SB3's rollout/train metrics plus ``speed/collect_steps_per_s``,
the env's share of the loop, and ``eval/win_rate``), episode stats from ``VecMonitor`` in
``run_dir/monitor.csv``.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnvWrapper

from agents.learner.compact_observation import check_observation
from cluedo_env.errors import CheckpointError, TrainConfigError
from cluedo_env.files import clean_stale_tmp
from cluedo_env.options import ArgumentParser, int_in, seed_type

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
    from cluedo_env.rules.config import read_yaml

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


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _need(ok: bool, key: str, value: Any, allowed: str) -> None:
    if not ok:
        raise TrainConfigError(f"{key}={value!r} is not allowed ({allowed})")


def validate_train_config(cfg: dict) -> None:
    """Types and ranges of every key, so a bad value fails before any env or model is built."""
    from cluedo_env.options import SEED_MAX
    from cluedo_env.rules.config import ConfigError

    def integer(key: str, value: Any, lo: int, hi: int | None = None) -> None:
        ok = _is_int(value) and value >= lo and (hi is None or value <= hi)
        _need(ok, key, value, f"an integer from {lo}" + (f" to {hi}" if hi is not None else " up"))

    def number(key: str, value: Any, lo: float, hi: float | None = None, strict: bool = False) -> None:
        ok = _is_num(value) and (value > lo if strict else value >= lo) and (hi is None or value <= hi)
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
    _need(env["seat"] == "random" or (_is_int(env["seat"]) and 0 <= env["seat"] < P), "env.seat", env["seat"],
          f"'random' or a seat from 0 to {P - 1}")  # fmt: skip
    names("env.opponents", env["opponents"], P - 1)
    for key in ("macro_moves", "macro_accuse", "belief", "end_on_elimination"):
        boolean(f"env.{key}", env[key])
    if env["macro_accuse"] and not env["belief"]:
        raise TrainConfigError("env.macro_accuse=true needs env.belief=true (the macro accusation uses the notebook)")
    try:
        check_observation(env["observation"], bool(env["belief"]))
    except ConfigError as exc:
        raise TrainConfigError(f"env.observation: {exc}") from None
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
    from agents.learner.inputs import check_accuse_gate, check_shaping

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
    ok = isinstance(arch, list) and bool(arch) and all(_is_int(n) and 1 <= n <= 1 << 16 for n in arch)
    _need(ok, "ppo.net_arch", arch, "a list of layer sizes, e.g. [256, 256]")
    ev = cfg["eval"]
    integer("eval.every", ev["every"], 0)
    integer("eval.games", ev["games"], 0, 10**7)
    integer("eval.batch_size", ev["batch_size"], 1, 1 << 20)
    boolean("eval.deterministic", ev["deterministic"])
    if ev["opponents"] is not None:
        names("eval.opponents", ev["opponents"], P - 1)
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


def check_run_inputs(cfg: dict, resume: bool) -> None:
    """The files a run needs, checked before anything is built: player names, ``init_from``, ``run_dir``."""
    from cluedo_env.errors import UsageError
    from cluedo_env.files import check_writable_dir
    from training.players import check_player_names

    listed = []
    for key in ("opponents",):
        value = cfg["env"][key]
        listed += [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]
    ev = cfg["eval"]["opponents"]
    listed += [] if ev is None else ([ev] if isinstance(ev, str) else list(ev))
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


def init_path(value: str | Path) -> Path:
    """The checkpoint file of ``init_from``: a path, or ``pretrained:NAME`` (a player shipped with the package)."""
    text = str(value)
    if not text.startswith("pretrained:"):
        return Path(text)
    from cluedo_env.errors import UsageError
    from training.pretrained import path_of

    try:
        return path_of(text.split(":", 1)[1])
    except UsageError as exc:
        raise TrainConfigError(f"init_from: {exc}") from None


def rules_config(cfg: dict):
    from cluedo_env.rules.config import make_config

    env = cfg["env"]
    return make_config(env["preset"], players=env["players"], **env["rules"])


def make_vec_env(cfg: dict, seed: int | None, resume_elapsed: float | None = None):
    """The SB3 VecEnv of a config, wrapped in VecMonitor (episode stats in ``run_dir/monitor.csv``).

    ``resume_elapsed`` (seconds the run had already trained): ``--resume`` appends to the existing
    monitor.csv, with times that go on from there, instead of starting it afresh (so the learning
    curve keeps its first part; episodes finished after the last checkpoint of the killed run stay in it).
    """
    from stable_baselines3.common.monitor import ResultsWriter
    from stable_baselines3.common.vec_env import VecMonitor

    from training.sb3_vec_env import CluedoVecEnv

    env = cfg["env"]
    shaping = None if env["shaping"] is None else {"gamma": cfg["ppo"]["gamma"], **env["shaping"]}  # PPO's discount
    venv = CluedoVecEnv(env["num_envs"], rules_config(cfg), seed=seed, opponents=env["opponents"], seat=env["seat"],
                        macro_moves=env["macro_moves"], end_on_elimination=env["end_on_elimination"],
                        macro_accuse=env["macro_accuse"], belief=env["belief"],
                        observation=env["observation"], advisor=env["advisor"], accuse_gate=env["accuse_gate"],
                        shaping=shaping)  # fmt: skip
    run_dir = Path(cfg["run_dir"])
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "monitor.csv"
    if resume_elapsed is None or not path.is_file():
        return VecMonitor(_Timed(venv), filename=str(path))
    mon = VecMonitor(_Timed(venv), filename=None)
    mon.t_start -= resume_elapsed
    mon.results_writer = ResultsWriter(str(path), override_existing=False)
    return mon


class _Timed(VecEnvWrapper):
    """Counts the seconds spent inside the env's step (collection speed, apart from the policy)."""

    def __init__(self, venv):
        super().__init__(venv)
        self.env_seconds = 0.0
        self.env_steps = 0

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        t0 = time.perf_counter()
        out = self.venv.step_wait()
        self.env_seconds += time.perf_counter() - t0
        self.env_steps += self.num_envs
        return out

    def action_masks(self):
        return self.venv.action_masks()

    def env_method(self, method_name, *args, indices=None, **kwargs):
        return self.venv.env_method(method_name, *args, indices=indices, **kwargs)


def _env_seed(seed: int, timesteps: int) -> int:
    return int(np.random.SeedSequence([seed, timesteps]).generate_state(1)[0])


def _torch_state() -> str:
    import torch

    return base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode("ascii")


def _set_torch_state(text: str) -> None:
    import torch

    torch.set_rng_state(torch.from_numpy(np.frombuffer(base64.b64decode(text), np.uint8).copy()))


def _callbacks(cfg: dict, trainer: Trainer, progress: bool):
    from stable_baselines3.common.callbacks import BaseCallback

    class RunCallback(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = None
            if progress:
                from tqdm import tqdm

                self.bar = tqdm(total=trainer.total, initial=self.model.num_timesteps, unit="step", dynamic_ncols=True)
            self.last_t = time.perf_counter()
            self.last_steps = self.model.num_timesteps

        def _on_step(self) -> bool:
            n = self.model.num_timesteps
            if self.bar is not None:
                self.bar.update(n - self.bar.n)
            if n >= trainer.next_checkpoint:
                trainer.checkpoint(self.model)
            if n >= trainer.next_eval:
                trainer.evaluate(self.model, self.logger)
            return True

        def _on_rollout_end(self) -> None:
            timed = trainer.timed
            if timed.env_seconds > 0:
                self.logger.record("speed/collect_steps_per_s", timed.env_steps / timed.env_seconds)
            now = time.perf_counter()
            steps = self.model.num_timesteps - self.last_steps
            self.logger.record("speed/loop_steps_per_s", steps / max(now - self.last_t, 1e-9))
            if trainer.league is not None:
                trainer.league.maybe_swap(self.model)

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    return RunCallback()


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _read_state(path: Path) -> tuple[dict | None, str]:
    """state.json if it is whole and well-formed, else None and why not."""
    if not path.is_file():
        return None, "missing"
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"unreadable ({exc})"
    ok = (isinstance(state, dict) and isinstance(state.get("checkpoint"), str) and _is_int(state.get("timesteps"))
          and isinstance(state.get("torch_rng"), str) and _is_num(state.get("elapsed_s", 0.0)))  # fmt: skip
    if not ok:
        return None, "malformed (needs checkpoint, timesteps, torch_rng, elapsed_s)"
    try:
        base64.b64decode(state["torch_rng"], validate=True)
    except ValueError as exc:
        return None, f"malformed torch_rng ({exc})"
    return state, ""


def resume_point(run_dir: Path, log=_log) -> tuple[Path, int, dict | None, bool]:
    """Where ``--resume`` goes on from: (checkpoint, timesteps, state.json or None, exact).

    The checkpoint state.json names comes first (``exact``: its torch generator state applies);
    if it is missing or does not load, the newest loadable ``checkpoints/step_*.zip``, saying which
    were skipped and why. Stale temporary files of killed writes are removed first.
    """
    from training.policy import load_model

    clean_stale_tmp(run_dir, log)
    state_path = run_dir / "state.json"
    state, why = _read_state(state_path)
    candidates: list[tuple[Path, int, bool]] = []
    if state is not None:
        candidates.append((run_dir / state["checkpoint"], state["timesteps"], True))
    elif why != "missing":
        log(f"resume: ignoring {state_path}: {why}")
    for p in sorted((run_dir / "checkpoints").glob("step_*.zip"), reverse=True):
        digits = p.stem[len("step_"):]
        if digits.isdigit() and all(p != c[0] for c in candidates):
            candidates.append((p, int(digits), False))
    for path, steps, exact in candidates:
        try:
            model = load_model(path)
            if model.num_timesteps != steps:
                raise CheckpointError(f"checkpoint {path}: holds {model.num_timesteps} steps, expected {steps}")
        except CheckpointError as exc:
            log(f"resume: skipped {path} ({exc})")
            continue
        if not exact:
            log(f"resume: continuing from {path} at step {steps} (the newest checkpoint that loads)")
        return path, steps, state, exact
    raise CheckpointError(
        f"--resume: nothing to resume in {run_dir} (state.json {why or 'names no loadable checkpoint'}, "
        f"no loadable checkpoints/step_*.zip) (start the run without --resume)"
    )


class League:
    """Self-play opponents: bots, the current policy, past checkpoints (see the module docstring)."""

    def __init__(self, cfg: dict, trainer: Trainer) -> None:
        self.cfg = cfg["league"]
        self.trainer = trainer
        self.members: list[str] = []
        self.rng = np.random.default_rng(cfg["seed"] + 7)
        self.next_swap = 0
        self._cache: dict[str, Any] = {}

    def add(self, path: str) -> None:
        self.members.append(path)
        self.members = self.members[-self.cfg["max_size"] :]
        for old in list(self._cache):
            if old not in self.members:
                del self._cache[old]

    def draw(self, model) -> list[Any]:
        from training.policy import PolicyAgent

        out: list[Any] = []
        for _ in range(self.trainer.config.players - 1):
            u = self.rng.random()
            if u < self.cfg["bot_prob"] or (not self.members and u >= self.cfg["bot_prob"] + self.cfg["self_prob"]):
                out.append(str(self.rng.choice(self.cfg["bots"])))
            elif u < self.cfg["bot_prob"] + self.cfg["self_prob"] or not self.members:
                out.append(PolicyAgent.from_model(model, deterministic=False))  # the current policy, live weights
            else:
                path = str(self.rng.choice(self.members))
                if path not in self._cache:
                    self._cache[path] = PolicyAgent(path, deterministic=False)
                out.append(self._cache[path])
        return out

    def maybe_swap(self, model) -> None:
        if model.num_timesteps < self.next_swap:
            return
        self.next_swap = model.num_timesteps + self.cfg["swap_every"]
        opponents = self.draw(model)
        venv = self.trainer.raw_env
        venv.set_opponents(opponents, seed=_env_seed(self.trainer.cfg["seed"], model.num_timesteps))
        venv.seed(_env_seed(self.trainer.cfg["seed"] + 1, model.num_timesteps))
        model._last_obs = model.env.reset()
        model._last_episode_starts = np.ones(model.env.num_envs, bool)
        names = [o if isinstance(o, str) else "policy" for o in opponents]
        model.logger.record("league/opponents", " ".join(names), exclude=("tensorboard",))


class Trainer:
    """One training run: env, model, checkpoints, evaluation; ``run()`` does it all."""

    def __init__(self, cfg: dict, resume: bool = False, progress: bool = True) -> None:
        validate_train_config(cfg)
        check_run_inputs(cfg, resume)  # names, init_from, run_dir: before anything is built
        self.cfg = cfg
        self.resume = resume
        self.progress = progress
        self.run_dir = Path(cfg["run_dir"])
        self.config = rules_config(cfg)
        self.total = int(cfg["total_timesteps"])
        self.state_path = self.run_dir / "state.json"
        self.evals_path = self.run_dir / "evals.jsonl"
        self.elapsed = 0.0
        self.league = League(cfg, self) if cfg["league"]["enabled"] else None

    # ---------------------------------------------------------------- setup
    def _build(self):
        from sb3_contrib import MaskablePPO

        from training.policy import load_model, make_meta

        cfg = self.cfg
        if cfg["torch_threads"]:
            import torch

            torch.set_num_threads(int(cfg["torch_threads"]))
        state = None
        if self.resume:
            ckpt, done, state, exact = resume_point(self.run_dir)
        seed = cfg["seed"] if not self.resume else _env_seed(cfg["seed"], done)
        self.env = make_vec_env(cfg, seed, None if not self.resume else float((state or {}).get("elapsed_s", 0.0)))
        self.timed = self.env.venv
        self.raw_env = self.timed.venv
        if self.resume:
            model = load_model(ckpt, env=self.env)
            if exact:
                _set_torch_state(state["torch_rng"])
            else:  # the saved generator belongs to a later step: a fresh one, reproducible from (seed, step)
                import torch

                torch.manual_seed(_env_seed(cfg["seed"] + 2, done))
            self.elapsed = float((state or {}).get("elapsed_s", 0.0))
            if self.league is not None and state is not None:
                for p in state.get("league", []):
                    if (self.run_dir / p).is_file():
                        self.league.add(str(self.run_dir / p))
                self.league.next_swap = int(state.get("league_next_swap", 0))
        else:
            ppo = dict(cfg["ppo"])
            net_arch = ppo.pop("net_arch")
            arch = {"pi": list(net_arch), "vf": list(net_arch)}
            from training.lean_policy import LeanMaskablePolicy

            policy, kwargs = LeanMaskablePolicy, {"net_arch": arch}
            if cfg["policy"] == "factored":
                from training.factored_policy import FactoredMaskablePolicy, suggest0_of

                policy, kwargs = FactoredMaskablePolicy, {**kwargs, "suggest0": suggest0_of(cfg["env"]["macro_moves"])}
            model = MaskablePPO(policy, self.env, seed=cfg["seed"], verbose=0, policy_kwargs=kwargs,
                                tensorboard_log=str(self.run_dir / "tb"), **ppo)  # fmt: skip
            if cfg["init_from"]:
                init = load_model(init_path(cfg["init_from"]), obs_size=self.raw_env.core.obs_size,
                                  n_actions=self.env.action_space.n)  # fmt: skip
                state = init.policy.state_dict()
                if cfg["policy"] == "factored" and "action_net.weight" in state:  # an mlp checkpoint: same play
                    from training.factored_policy import mlp_to_factored_state

                    state = mlp_to_factored_state(state, model.policy)
                try:
                    model.policy.load_state_dict(state)
                except RuntimeError as exc:
                    raise CheckpointError(f"init_from {cfg['init_from']}: network does not match net_arch "
                                          f"{net_arch} ({exc})") from exc  # fmt: skip
        self._set_precision(model)
        model.cluedo_meta = make_meta(self.config, cfg["env"]["macro_moves"], self.raw_env.core.obs_size,
                                      macro_accuse=cfg["env"]["macro_accuse"], belief=cfg["env"]["belief"],
                                      observation=cfg["env"]["observation"], advisor=cfg["env"]["advisor"],
                                      accusation_features=self.raw_env.core.accusation_features,
                                      accuse_gate=cfg["env"]["accuse_gate"], train_config=cfg)  # fmt: skip
        every, ev = cfg["checkpoint_every"], cfg["eval"]["every"]
        self.next_checkpoint = (model.num_timesteps // every + 1) * every if every else math.inf
        self.next_eval = (model.num_timesteps // ev + 1) * ev if ev else math.inf
        return model

    def _set_precision(self, model) -> None:
        """``precision`` applies to this run's training, not to the checkpoint (saved float32, plays float32)."""
        from training.lean_policy import LeanMaskablePolicy, warn_if_emulated

        precision = self.cfg["precision"]
        if precision == "float32":
            return
        if not isinstance(model.policy, LeanMaskablePolicy):
            raise TrainConfigError(f"precision {precision}: the checkpoint's policy is "
                                   f"{type(model.policy).__name__}, which has only float32 (train a new run, or "
                                   f"start one from it with init_from)")  # fmt: skip
        warn_if_emulated(precision)
        model.policy.set_precision(precision)

    # ------------------------------------------------------------ checkpoints
    def checkpoint(self, model) -> Path:
        from cluedo_env.files import write_text_atomic
        from training.policy import save_model_atomic

        n = model.num_timesteps
        ckpt_dir = self.run_dir / "checkpoints"
        path = save_model_atomic(model, ckpt_dir / f"step_{n:010d}.zip")
        save_model_atomic(model, self.run_dir / "model.zip")
        if self.league is not None:
            self.league.add(str(path))
        elapsed = self.elapsed + time.perf_counter() - self.t0
        state = {
            "timesteps": n,
            "checkpoint": str(path.relative_to(self.run_dir)),
            "seed": self.cfg["seed"],
            "torch_rng": _torch_state(),
            "elapsed_s": elapsed,
            "league": [str(Path(p).relative_to(self.run_dir)) for p in (self.league.members if self.league else [])],
            "league_next_swap": self.league.next_swap if self.league else 0,
            "config": self.cfg,
        }
        write_text_atomic(self.state_path, json.dumps(state, indent=1))
        keep = set(self.league.members) if self.league else set()
        old = sorted(ckpt_dir.glob("step_*.zip"))[: -max(1, int(self.cfg["keep_checkpoints"]))]
        for p in old:
            if str(p) not in keep:
                p.unlink()
        every = self.cfg["checkpoint_every"]
        self.next_checkpoint = (n // every + 1) * every if every else math.inf
        self.last_checkpoint = path
        return path

    # ------------------------------------------------------------- evaluation
    def evaluate(self, model, logger=None) -> dict | None:
        ev = self.cfg["eval"]
        self.next_eval = (model.num_timesteps // ev["every"] + 1) * ev["every"] if ev["every"] else math.inf
        if not ev["games"]:
            return None
        if getattr(self, "last_checkpoint", None) is None or not str(self.last_checkpoint).endswith(
            f"{model.num_timesteps:010d}.zip"
        ):
            self.checkpoint(model)
        import training.policy  # noqa: F401 - registers the ckpt: prefix
        from agents.play import tournament

        opponents = ev["opponents"] or self.cfg["env"]["opponents"]
        if isinstance(opponents, str):
            opponents = [opponents] * (self.config.players - 1)
        me = f"ckpt:{self.last_checkpoint}" + ("" if ev["deterministic"] else '{"deterministic": false}')
        names = [me, *opponents]
        t0 = time.perf_counter()
        match = tournament.play_match(self.config, names, ev["games"], seed=self.cfg["seed"] + 1000,
                                    batch_size=ev["batch_size"])  # fmt: skip
        summary = tournament.summarize(match, self.config)
        me = summary["entries"][0]
        row = {"timesteps": model.num_timesteps, "opponents": opponents, "games": summary["games"],
               "win_rate": me["win_rate"], "ci95": me["ci95"], "seconds": time.perf_counter() - t0,
               "elapsed_s": self.elapsed + time.perf_counter() - self.t0}  # fmt: skip
        with open(self.evals_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        if logger is not None:
            logger.record("eval/win_rate", me["win_rate"])
            logger.record("eval/ci95_low", me["ci95"][0])
            logger.record("eval/ci95_high", me["ci95"][1])
        if self.cfg["keep_best"]:
            self._keep_if_best(row)
        lo, hi = me["ci95"]
        print(f"[eval @ {model.num_timesteps}] win rate {100 * me['win_rate']:.1f}% (95% CI {100 * lo:.1f}-"
              f"{100 * hi:.1f}%) over {summary['games']} games vs {' '.join(opponents)}", file=sys.stderr)  # fmt: skip
        return row

    def _keep_if_best(self, row: dict) -> None:
        """Copy the checkpoint just evaluated to ``best_model.zip`` if it beats every earlier evaluation."""
        from cluedo_env.files import write_atomic, write_text_atomic

        best_path = self.run_dir / "best.json"
        try:
            best = json.loads(best_path.read_text(encoding="utf-8"))["win_rate"]
        except (OSError, ValueError, KeyError, TypeError):
            best = None  # none yet (or a damaged file: the next evaluation rewrites it)
        if best is not None and row["win_rate"] <= best:
            return
        data = Path(self.last_checkpoint).read_bytes()
        write_atomic(self.run_dir / "best_model.zip", lambda f: f.write(data), "wb")
        info = {**row, "checkpoint": str(Path(self.last_checkpoint).relative_to(self.run_dir))}
        write_text_atomic(best_path, json.dumps(info, indent=1) + "\n")

    # ------------------------------------------------------------------- run
    def run(self) -> dict:
        self.t0 = time.perf_counter()
        model = self._build()
        self.model = model
        remaining = self.total - model.num_timesteps
        if remaining > 0:
            model.learn(remaining, callback=_callbacks(self.cfg, self, self.progress), reset_num_timesteps=False,
                        tb_log_name="ppo")  # fmt: skip
        self.checkpoint(model)
        final = self.evaluate(model) if self.cfg["eval"]["games"] else None
        wall = time.perf_counter() - self.t0
        out = {
            "timesteps": model.num_timesteps,
            "wall_s_this_session": wall,
            "wall_s_total": self.elapsed + wall,
            "collect_steps_per_s": self.timed.env_steps / self.timed.env_seconds if self.timed.env_seconds else None,
            "model": str(self.run_dir / "model.zip"),
            "best_model": str(self.run_dir / "best_model.zip") if (self.run_dir / "best_model.zip").is_file() else None,
            "final_eval": final,
        }
        print(json.dumps(out, indent=1))
        return out


def build_parser(prog: str | None = None) -> ArgumentParser:
    ap = ArgumentParser(prog=prog, description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                        formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--config", required=True, metavar="YAML", help="training config (configs/train_*.yaml)")
    ap.add_argument("--backend", choices=["sb3", "rllib"], default="sb3",
                    help="sb3: MaskablePPO on the batched VecEnv (this); rllib: Ray RLlib (cluedo train --backend "
                    "rllib --help)")  # fmt: skip
    ap.add_argument("--resume", action="store_true",
                    help="continue run_dir from state.json, or from the newest checkpoint that loads")  # fmt: skip
    ap.add_argument("--total-timesteps", type=int_in(0, 10**12), default=None, metavar="N",
                    help="learner steps in all (overrides the config's total_timesteps)")  # fmt: skip
    ap.add_argument("--run-dir", default=None, metavar="DIR", help="overrides the config's run_dir")
    ap.add_argument("--seed", type=seed_type, default=None, metavar="N",
                    help="overrides the config's seed (an integer from 0 to 2**63-1)")  # fmt: skip
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def main(argv: list[str] | None = None, prog: str | None = None) -> dict:
    args = build_parser(prog).parse_args(argv)
    if args.backend != "sb3":
        from training import rllib_train

        return rllib_train.main(argv, prog=prog)
    over: dict[str, Any] = {}
    if args.total_timesteps is not None:
        over["total_timesteps"] = args.total_timesteps
    if args.run_dir is not None:
        over["run_dir"] = args.run_dir
    if args.seed is not None:
        over["seed"] = args.seed
    cfg = load_train_config(args.config, **over)
    return Trainer(cfg, resume=args.resume, progress=not args.no_progress).run()


if __name__ == "__main__":
    from cluedo_env.errors import run_cli

    sys.exit(run_cli(main))
