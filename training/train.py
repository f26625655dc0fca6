"""Train a Cluedo player with MaskablePPO (sb3-contrib) on the batched single-agent VecEnv.

    python -m training.train --config configs/train_vs_random.yaml
    python -m training.train --config configs/train_vs_random.yaml --resume      # continue a killed run
    python -m training.train --config configs/train_vs_random.yaml --total-timesteps 20000 --run-dir runs/try

The YAML config (keys and defaults: ``DEFAULTS`` below; an unknown key is an error):

* ``env``: rules (``preset``, ``players``, other ``RulesConfig`` flags under ``rules``), ``num_envs``,
  learner ``seat`` (k or ``random``), ``opponents`` (one name or P-1 names), ``macro_moves``,
  ``end_on_elimination``, ``belief`` (the deducer's notebook as extra observation pieces,
  :mod:`agents.belief`), ``macro_accuse`` (one "accuse the notebook's best triple" action instead
  of 324; needs ``belief``) (see :mod:`cluedo_env.envs.single_agent`).
* ``ppo``: MaskablePPO keyword arguments (``n_steps``, ``batch_size``, ``learning_rate`` ...);
  ``net_arch`` becomes ``policy_kwargs``.
* ``total_timesteps``, ``seed``, ``run_dir``.
* ``init_from``: a checkpoint whose policy weights start a new run (curriculum: e.g. the vs-random
  model continued against heuristic players). Same rules, action space and ``net_arch`` required;
  the step count and the PPO settings are this config's. Ignored on ``--resume``.
* ``checkpoint_every`` (learner steps), ``keep_checkpoints``: every K steps the model is written
  to ``run_dir/checkpoints/step_<n>.zip`` and ``run_dir/model.zip`` (temporary file + ``os.replace``),
  then ``run_dir/state.json`` (timesteps, checkpoint, seeds, torch RNG, wall time) the same way;
  ``--resume`` reloads the model named there and continues the step count (at most one
  checkpoint interval is lost). The env is reseeded from (seed, timesteps) on resume.
* ``eval``: every ``every`` steps (and at the end) the latest checkpoint plays ``games`` games
  against ``opponents`` in the tournament evaluator (``scripts/evaluate.py``'s ``play_match``, seats
  rotated); the win rate and its 95% Wilson interval go to TensorBoard and ``run_dir/evals.jsonl``.
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
import importlib.util
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from stable_baselines3.common.vec_env import VecEnvWrapper

ROOT = Path(__file__).resolve().parents[1]

DEFAULTS: dict[str, Any] = {
    "run_dir": "runs/default",
    "seed": 0,
    "total_timesteps": 1_000_000,
    "checkpoint_every": 100_000,
    "keep_checkpoints": 3,
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
    "eval": {"every": 100_000, "games": 400, "opponents": None, "batch_size": 400},
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
}


class TrainConfigError(ValueError):
    """A training config with an unknown key or a bad value."""


def _merge(base: dict, over: dict, where: str = "") -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key not in base:
            raise TrainConfigError(f"unknown config key {where}{key!r}; allowed: {', '.join(sorted(base))}")
        if isinstance(base[key], dict) and key != "rules":
            if not isinstance(value, dict):
                raise TrainConfigError(f"config key {where}{key!r} must be a mapping")
            out[key] = _merge(base[key], value, f"{where}{key}.")
        else:
            out[key] = value
    return out


def load_train_config(path: str | Path | None = None, **overrides: Any) -> dict:
    """DEFAULTS with the YAML file's values, then ``overrides`` (same nesting) on top."""
    cfg = copy.deepcopy(DEFAULTS)
    if path is not None:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        cfg = _merge(cfg, data)
    return _merge(cfg, overrides)


def rules_config(cfg: dict):
    from cluedo_env.config import make_config

    env = cfg["env"]
    return make_config(env["preset"], players=env["players"], **env["rules"])


def _evaluate_module():
    """``scripts/evaluate.py`` as a module (it is a script, not part of a package)."""
    name = "cluedo_scripts_evaluate"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "evaluate.py")
        mod = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def make_vec_env(cfg: dict, seed: int | None, resume_elapsed: float | None = None):
    """The SB3 VecEnv of a config, wrapped in VecMonitor (episode stats in ``run_dir/monitor.csv``).

    ``resume_elapsed`` (seconds the run had already trained): ``--resume`` appends to the existing
    monitor.csv, with times that go on from there, instead of starting it afresh (so the learning
    curve keeps its first part; episodes finished after the last checkpoint of the killed run stay in it).
    """
    from stable_baselines3.common.monitor import ResultsWriter
    from stable_baselines3.common.vec_env import VecMonitor

    from cluedo_env.envs.sb3_vec_env import CluedoVecEnv

    env = cfg["env"]
    venv = CluedoVecEnv(env["num_envs"], rules_config(cfg), seed=seed, opponents=env["opponents"], seat=env["seat"],
                        macro_moves=env["macro_moves"], end_on_elimination=env["end_on_elimination"],
                        macro_accuse=env["macro_accuse"], belief=env["belief"])  # fmt: skip
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

        from training.policy import CheckpointError, load_model, make_meta

        cfg = self.cfg
        if cfg["torch_threads"]:
            import torch

            torch.set_num_threads(int(cfg["torch_threads"]))
        state = None
        if self.resume:
            if not self.state_path.is_file():
                raise CheckpointError(f"--resume: {self.state_path} does not exist (no checkpoint to resume from)")
            try:
                state = json.loads(self.state_path.read_text(encoding="utf-8"))
                ckpt = self.run_dir / state["checkpoint"]
                done = int(state["timesteps"])
            except (ValueError, KeyError) as exc:
                raise CheckpointError(f"--resume: {self.state_path} is malformed ({exc!r})") from exc
        seed = cfg["seed"] if state is None else _env_seed(cfg["seed"], done)
        self.env = make_vec_env(cfg, seed, None if state is None else float(state.get("elapsed_s", 0.0)))
        self.timed = self.env.venv
        self.raw_env = self.timed.venv
        if state is not None:
            model = load_model(ckpt, env=self.env)
            if model.num_timesteps != done:
                raise CheckpointError(f"--resume: {ckpt} holds {model.num_timesteps} steps, state.json says {done}")
            _set_torch_state(state["torch_rng"])
            self.elapsed = float(state.get("elapsed_s", 0.0))
            if self.league is not None:
                for p in state.get("league", []):
                    if (self.run_dir / p).is_file():
                        self.league.add(str(self.run_dir / p))
                self.league.next_swap = int(state.get("league_next_swap", 0))
        else:
            ppo = dict(cfg["ppo"])
            net_arch = ppo.pop("net_arch")
            arch = {"pi": list(net_arch), "vf": list(net_arch)}
            model = MaskablePPO("MlpPolicy", self.env, seed=cfg["seed"], verbose=0, policy_kwargs={"net_arch": arch},
                                tensorboard_log=str(self.run_dir / "tb"), **ppo)  # fmt: skip
            if cfg["init_from"]:
                init = load_model(cfg["init_from"], obs_size=self.raw_env.core.obs_size,
                                  n_actions=self.env.action_space.n)  # fmt: skip
                try:
                    model.policy.load_state_dict(init.policy.state_dict())
                except RuntimeError as exc:
                    raise CheckpointError(f"init_from {cfg['init_from']}: network does not match net_arch "
                                          f"{net_arch} ({exc})") from exc  # fmt: skip
        model.cluedo_meta = make_meta(self.config, cfg["env"]["macro_moves"], self.raw_env.core.obs_size,
                                      macro_accuse=cfg["env"]["macro_accuse"], belief=cfg["env"]["belief"],
                                      train_config=cfg)  # fmt: skip
        every, ev = cfg["checkpoint_every"], cfg["eval"]["every"]
        self.next_checkpoint = (model.num_timesteps // every + 1) * every
        self.next_eval = (model.num_timesteps // ev + 1) * ev if ev else math.inf
        return model

    # ------------------------------------------------------------ checkpoints
    def checkpoint(self, model) -> Path:
        from training.policy import save_model_atomic, write_atomic

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
        write_atomic(self.state_path, json.dumps(state, indent=1))
        keep = set(self.league.members) if self.league else set()
        old = sorted(ckpt_dir.glob("step_*.zip"))[: -max(1, int(self.cfg["keep_checkpoints"]))]
        for p in old:
            if str(p) not in keep:
                p.unlink()
        self.next_checkpoint = (n // self.cfg["checkpoint_every"] + 1) * self.cfg["checkpoint_every"]
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

        evaluate = _evaluate_module()
        opponents = ev["opponents"] or self.cfg["env"]["opponents"]
        if isinstance(opponents, str):
            opponents = [opponents] * (self.config.players - 1)
        names = [f"ckpt:{self.last_checkpoint}", *opponents]
        t0 = time.perf_counter()
        match = evaluate.play_match(self.config, names, ev["games"], seed=self.cfg["seed"] + 1000,
                                    batch_size=ev["batch_size"])  # fmt: skip
        summary = evaluate.summarize(match, self.config)
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
        lo, hi = me["ci95"]
        print(f"[eval @ {model.num_timesteps}] win rate {100 * me['win_rate']:.1f}% (95% CI {100 * lo:.1f}-"
              f"{100 * hi:.1f}%) over {summary['games']} games vs {' '.join(opponents)}", file=sys.stderr)  # fmt: skip
        return row

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
            "final_eval": final,
        }
        print(json.dumps(out, indent=1))
        return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description="Train a Cluedo player with MaskablePPO")
    ap.add_argument("--config", required=True, help="YAML training config (configs/train_*.yaml)")
    ap.add_argument("--resume", action="store_true", help="continue from run_dir/state.json")
    ap.add_argument("--total-timesteps", type=int, default=None)
    ap.add_argument("--run-dir", default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
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
    main()
