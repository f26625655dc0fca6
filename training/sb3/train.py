"""Train a Cluedo player with MaskablePPO (sb3-contrib) on the batched single-agent VecEnv.

    python -m cluedo_env.training --config configs/train_vs_random.yaml
    python -m cluedo_env.training --config configs/train_vs_random.yaml --resume      # continue a killed run
    python -m cluedo_env.training --config configs/train_vs_random.yaml --total-timesteps 20000 --run-dir runs/try

The config's keys and defaults: :mod:`cluedo_env.training.sb3.config`; checkpoints and ``--resume``:
:mod:`cluedo_env.training.sb3.resume`.

Logs: TensorBoard in ``run_dir/tb`` (SB3's rollout/train metrics plus ``speed/collect_steps_per_s``,
the env's share of the loop, and ``eval/win_rate``), episode stats from ``VecMonitor`` in
``run_dir/monitor.csv``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from cluedo_env.agents.play import tournament
from cluedo_env.training import dispatch
from cluedo_env.training.precision import warn_if_emulated
from cluedo_env.training.sb3 import config as sb3_config
from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model, make_meta, save_model_atomic
from cluedo_env.training.sb3.config import TrainConfig, check_run_inputs, init_path, load_train_config
from cluedo_env.training.sb3.factored_policy import (
    FactoredMaskablePolicy,
    accuse0_of,
    mlp_to_factored_state,
    suggest0_of,
)
from cluedo_env.training.sb3.imitation import Imitation
from cluedo_env.training.sb3.lean_policy import LeanMaskablePolicy
from cluedo_env.training.sb3.packed_extractor import PackedObservationExtractor
from cluedo_env.training.sb3.resume import (
    check_resume_config,
    env_seed,
    resume_point,
    set_torch_rng_state,
    torch_rng_state,
)
from cluedo_env.training.sb3.vec_env import CluedoVecEnv
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import ResultsWriter
from stable_baselines3.common.vec_env import VecEnvWrapper, VecMonitor
from tqdm import tqdm

from cluedo_env.errors import CheckpointError, TrainConfigError, run_cli
from cluedo_env.files import lock_dir, write_atomic, write_text_atomic
from cluedo_env.options import ArgumentParser, int_in, seed_type


def make_vec_env(cfg: TrainConfig, seed: int | None, resume_elapsed: float | None = None):
    """The SB3 VecEnv of a config, wrapped in VecMonitor (episode stats in ``run_dir/monitor.csv``).

    ``resume_elapsed`` (seconds the run had already trained): ``--resume`` appends to the existing
    monitor.csv, with times that go on from there, instead of starting it afresh (so the learning
    curve keeps its first part; episodes finished after the last checkpoint of the killed run stay in it).
    """
    env = cfg.env
    shaping = None if env.shaping is None else {"gamma": cfg.ppo.gamma, **env.shaping}  # PPO's discount
    opponents = env.opponents if not isinstance(env.opponents, tuple) else list(env.opponents)
    venv = CluedoVecEnv(env.num_envs, env.rules_config, seed=seed, opponents=opponents, seat=env.seat,
                        macro_moves=env.macro_moves, end_on_elimination=env.end_on_elimination,
                        macro_accuse=env.macro_accuse, belief=env.belief,
                        observation=env.observation, packed_observation=env.packed_observation,
                        advisor=env.advisor, accusation_features=env.accusation_features,
                        holder_probabilities=env.holder_probabilities,
                        accuse_gate=env.accuse_gate, shaping=shaping)  # fmt: skip
    run_dir = Path(cfg.run_dir)
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


class RunCallback(BaseCallback):
    """The run's hooks inside ``model.learn``: progress bar, checkpoints, evaluations, speed logs, league swaps."""

    def __init__(self, trainer: Trainer, progress: bool) -> None:
        super().__init__()
        self.trainer = trainer
        self.progress = progress

    def _on_training_start(self) -> None:
        self.bar = None
        if self.progress:
            # The whole run's average rate (smoothing=0): the bar stands still during each update, so a recent
            # rate would swing the ETA between collecting and updating.
            self.bar = tqdm(total=self.trainer.final_timesteps(self.model), initial=self.model.num_timesteps,
                            unit="step", dynamic_ncols=True, smoothing=0)  # fmt: skip
        self.last_t = time.perf_counter()
        self.last_steps = self.model.num_timesteps

    def _phase(self, what: str) -> None:
        """Name what the run does now on the bar (collecting, updating, evaluating, saving)."""
        if self.bar is not None:
            self.bar.set_description_str(what, refresh=True)

    def _on_rollout_start(self) -> None:
        self._phase("collecting")

    def _on_step(self) -> bool:
        trainer = self.trainer
        n = self.model.num_timesteps
        if self.bar is not None:
            self.bar.update(n - self.bar.n)
        if n >= trainer.next_checkpoint:
            self._phase("saving")
            trainer.checkpoint(self.model)
        if n >= trainer.next_eval:
            self._phase("evaluating")
            trainer.evaluate(self.model, self.logger)
            self._phase("collecting")
        return True

    def _on_rollout_end(self) -> None:
        trainer = self.trainer
        timed = trainer.timed
        if timed.env_seconds > 0:
            self.logger.record("speed/collect_steps_per_s", timed.env_steps / timed.env_seconds)
        now = time.perf_counter()
        steps = self.model.num_timesteps - self.last_steps
        self.logger.record("speed/loop_steps_per_s", steps / max(now - self.last_t, 1e-9))
        if trainer.league is not None:
            trainer.league.maybe_swap(self.model)
        self._phase("updating")  # PPO's epochs over the rollout follow this hook

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


class League:
    """Self-play opponents: bots, the current policy, past checkpoints (``league`` in
    :mod:`cluedo_env.training.sb3.config`)."""

    def __init__(self, cfg: TrainConfig, trainer: Trainer) -> None:
        self.cfg = cfg.league
        self.trainer = trainer
        self.members: list[str] = []
        self.rng = np.random.default_rng(cfg.seed + 7)
        self.next_swap = 0
        self._cache: dict[str, Any] = {}

    def add(self, path: str) -> None:
        self.members.append(path)
        self.members = self.members[-self.cfg.max_size :]
        for old in list(self._cache):
            if old not in self.members:
                del self._cache[old]

    def draw(self, model) -> list[Any]:
        out: list[Any] = []
        for _ in range(self.trainer.config.players - 1):
            u = self.rng.random()
            if u < self.cfg.bot_prob or (not self.members and u >= self.cfg.bot_prob + self.cfg.self_prob):
                out.append(str(self.rng.choice(list(self.cfg.bots))))
            elif u < self.cfg.bot_prob + self.cfg.self_prob or not self.members:
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
        self.next_swap = model.num_timesteps + self.cfg.swap_every
        opponents = self.draw(model)
        venv = self.trainer.raw_env
        venv.set_opponents(opponents, seed=env_seed(self.trainer.cfg.seed, model.num_timesteps))
        venv.seed(env_seed(self.trainer.cfg.seed + 1, model.num_timesteps))
        model._last_obs = model.env.reset()
        model._last_episode_starts = np.ones(model.env.num_envs, bool)
        names = [o if isinstance(o, str) else "policy" for o in opponents]
        model.logger.record("league/opponents", " ".join(names), exclude=("tensorboard",))


def _holds_a_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` has a run's state or checkpoints (a new run there would mix its files with them)."""
    return (_ppo_started(run_dir) or (run_dir / "imitation" / "state.json").exists())


def _ppo_started(run_dir: Path) -> bool:
    """Whether PPO has written a checkpoint in ``run_dir`` (``--resume`` goes on from it)."""
    return (run_dir / "state.json").exists() or any((run_dir / "checkpoints").glob("step_*.zip"))


class Trainer:
    """One training run: env, model, checkpoints, evaluation; ``run()`` does it all."""

    def __init__(self, cfg: TrainConfig, resume: bool = False, progress: bool = True) -> None:
        if not isinstance(cfg, TrainConfig):
            raise TrainConfigError(f"Trainer takes a TrainConfig, got a {type(cfg).__name__} (build one with "
                                   "load_train_config(path, **overrides) or TrainConfig.from_dict)")  # fmt: skip
        check_run_inputs(cfg, resume)  # names, init_from, run_dir: before anything is built
        self.cfg = cfg
        self.resume = resume
        self.progress = progress
        self.run_dir = Path(cfg.run_dir)
        self.config = cfg.env.rules_config
        self.total = cfg.total_timesteps
        self.state_path = self.run_dir / "state.json"
        self.evals_path = self.run_dir / "evals.jsonl"
        self.elapsed = 0.0
        self.league = League(cfg, self) if cfg.league.enabled else None

    # ---------------------------------------------------------------- setup
    def _build(self):
        cfg = self.cfg
        if cfg.torch_threads:
            torch.set_num_threads(cfg.torch_threads)
        state = None
        # --resume of a run still in its imitation phase (no PPO checkpoint yet) builds PPO afresh, then goes on
        # imitating from the last round written
        resume = self.resume and (_ppo_started(self.run_dir) or cfg.imitation.teacher is None)
        if resume:
            ckpt, done, state, exact = resume_point(self.run_dir)
        seed = cfg.seed if not resume else env_seed(cfg.seed, done)
        self.env = make_vec_env(cfg, seed, None if not resume else float((state or {}).get("elapsed_s", 0.0)))
        self.timed = self.env.venv
        self.raw_env = self.timed.venv
        self.imitated = False
        if resume:
            model = load_model(ckpt, env=self.env)
            saved = (state or {}).get("config") or (getattr(model, "cluedo_meta", None) or {}).get("train_config")
            check_resume_config(saved, cfg, self.run_dir)
            if exact:
                set_torch_rng_state(state["torch_rng"])
            else:  # the saved generator belongs to a later step: a fresh one, reproducible from (seed, step)
                torch.manual_seed(env_seed(cfg.seed + 2, done))
            self.elapsed = float((state or {}).get("elapsed_s", 0.0))
            if self.league is not None and state is not None:
                for p in state.get("league", []):
                    if (self.run_dir / p).is_file():
                        self.league.add(str(self.run_dir / p))
                self.league.next_swap = int(state.get("league_next_swap", 0))
        else:
            net_arch = list(cfg.ppo.net_arch)
            arch = {"pi": list(net_arch), "vf": list(net_arch)}
            policy, kwargs = LeanMaskablePolicy, {"net_arch": arch}
            if cfg.env.packed_observation:  # the network unpacks the env's packed rows in its first layer
                kwargs["features_extractor_class"] = PackedObservationExtractor
            if cfg.policy == "factored":
                macro = cfg.env.macro_moves
                policy, kwargs = FactoredMaskablePolicy, {**kwargs, "suggest0": suggest0_of(macro),
                                                          "accuse0": accuse0_of(macro, cfg.env.macro_accuse)}
            model = MaskablePPO(policy, self.env, seed=cfg.seed, verbose=0, policy_kwargs=kwargs,
                                tensorboard_log=str(self.run_dir / "tb"), **cfg.ppo.model_kwargs())  # fmt: skip
            if cfg.init_from:
                init = load_model(init_path(cfg.init_from), obs_size=self.raw_env.core.obs_size,
                                  n_actions=self.env.action_space.n)  # fmt: skip
                state = init.policy.state_dict()
                if cfg.policy == "factored" and "action_net.weight" in state:  # an mlp checkpoint: same play
                    state = mlp_to_factored_state(state, model.policy)
                try:
                    model.policy.load_state_dict(state)
                except RuntimeError as exc:
                    raise CheckpointError(f"init_from {cfg.init_from}: network does not match net_arch "
                                          f"{net_arch} ({exc})") from exc  # fmt: skip
        self._set_precision(model)
        if not resume and cfg.imitation.teacher is not None:
            imitation = Imitation(cfg, self.run_dir, self.config, progress=self.progress)
            self.elapsed = float(imitation.run(model)["elapsed_s"])
            self.t0 = time.perf_counter()  # the phase's own wall time is in self.elapsed
            self.imitated = True
        env = cfg.env
        model.cluedo_meta = make_meta(self.config, env.macro_moves, self.raw_env.core.obs_size,
                                      macro_accuse=env.macro_accuse, belief=env.belief, observation=env.observation,
                                      advisor=env.advisor, packed_observation=env.packed_observation,
                                      accusation_features=self.raw_env.core.accusation_features,
                                      holder_probabilities=self.raw_env.core.holder_probabilities,
                                      accuse_gate=env.accuse_gate, train_config=cfg.to_dict())  # fmt: skip
        every, ev = cfg.checkpoint_every, cfg.eval.every
        self.next_checkpoint = (model.num_timesteps // every + 1) * every if every else math.inf
        self.next_eval = (model.num_timesteps // ev + 1) * ev if ev else math.inf
        return model

    def _set_precision(self, model) -> None:
        """``precision`` applies to this run's training, not to the checkpoint (saved float32, plays float32)."""
        precision = self.cfg.precision
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
            "seed": self.cfg.seed,
            "torch_rng": torch_rng_state(),
            "elapsed_s": elapsed,
            "league": [str(Path(p).relative_to(self.run_dir)) for p in (self.league.members if self.league else [])],
            "league_next_swap": self.league.next_swap if self.league else 0,
            "config": self.cfg.to_dict(),
        }
        write_text_atomic(self.state_path, json.dumps(state, indent=1))
        keep = set(self.league.members) if self.league else set()
        old = sorted(ckpt_dir.glob("step_*.zip"))[: -self.cfg.keep_checkpoints]
        for p in old:
            if str(p) not in keep:
                p.unlink()
        every = self.cfg.checkpoint_every
        self.next_checkpoint = (n // every + 1) * every if every else math.inf
        self.last_checkpoint = path
        return path

    # ------------------------------------------------------------- evaluation
    def evaluate(self, model, logger=None) -> dict | None:
        ev = self.cfg.eval
        self.next_eval = (model.num_timesteps // ev.every + 1) * ev.every if ev.every else math.inf
        if not ev.games:
            return None
        if getattr(self, "last_checkpoint", None) is None or not str(self.last_checkpoint).endswith(
            f"{model.num_timesteps:010d}.zip"
        ):
            self.checkpoint(model)
        rows = [self._evaluate_lineup(model, lineup, logger, first=k == 0)
                for k, lineup in enumerate(self.cfg.eval_lineups())]  # fmt: skip
        if self.cfg.keep_best:
            self._keep_if_best(rows[0])  # the first lineup is the one that selects
        return rows[0]

    def _evaluate_lineup(self, model, opponents: list, logger, first: bool) -> dict:
        """One evaluation of the latest checkpoint against ``opponents``, appended to ``evals.jsonl``."""
        ev = self.cfg.eval
        me = f"ckpt:{self.last_checkpoint}" + ("" if ev.deterministic else '{"deterministic": false}')
        names = [me, *opponents]
        t0 = time.perf_counter()
        match = tournament.play_match(self.config, names, ev.games, seed=self.cfg.seed + 1000,
                                      batch_size=ev.batch_size)  # fmt: skip
        summary = tournament.summarize(match, self.config)
        me = summary["entries"][0]
        row = {"timesteps": model.num_timesteps, "opponents": opponents, "games": summary["games"],
               "win_rate": me["win_rate"], "ci95": me["ci95"], "wrong_accusations": me["wrong_accusations"],
               "seconds": time.perf_counter() - t0,
               "elapsed_s": self.elapsed + time.perf_counter() - self.t0}  # fmt: skip
        with open(self.evals_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        if logger is not None:
            tag = "eval" if first else "eval_" + "_".join(str(o) for o in opponents)
            logger.record(f"{tag}/win_rate", me["win_rate"])
            logger.record(f"{tag}/ci95_low", me["ci95"][0])
            logger.record(f"{tag}/ci95_high", me["ci95"][1])
        lo, hi = me["ci95"]
        print(f"[eval @ {model.num_timesteps}] win rate {100 * me['win_rate']:.1f}% (95% CI {100 * lo:.1f}-"
              f"{100 * hi:.1f}%) over {summary['games']} games vs {' '.join(map(str, opponents))}",
              file=sys.stderr)  # fmt: skip
        return row

    def _keep_if_best(self, row: dict) -> None:
        """Copy the checkpoint just evaluated to ``best_model.zip`` if it beats every earlier evaluation."""
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

    def final_timesteps(self, model) -> int:
        """The steps the run ends at: SB3 collects whole rollouts (games x steps each) until it reaches the total."""
        rollout = model.n_steps * model.env.num_envs
        remaining = max(0, self.total - model.num_timesteps)
        return model.num_timesteps + -(-remaining // rollout) * rollout

    # ------------------------------------------------------------------- run
    def run(self) -> dict:
        with lock_dir(self.run_dir, "run_dir"):  # one run at a time in a run_dir
            if not self.resume and _holds_a_run(self.run_dir):
                raise TrainConfigError(
                    f"run_dir {str(self.run_dir)!r} holds an earlier run (state.json or checkpoints/) "
                    "(continue it with --resume, or choose another run_dir)"
                )
            return self._run()

    def _run(self) -> dict:
        self.t0 = time.perf_counter()
        model = self._build()
        self.model = model
        if self.imitated:  # PPO starts from the imitating network: step 0 written (and evaluated) as any checkpoint
            self.evaluate(model) if self.cfg.eval.games else self.checkpoint(model)
        remaining = self.total - model.num_timesteps
        if remaining > 0:
            final, rollout = self.final_timesteps(model), model.n_steps * model.env.num_envs
            if final != self.total:
                print(f"note: training {final:,} steps, not {self.total:,}: PPO learns from whole rollouts of "
                      f"{rollout:,} steps ({model.env.num_envs} games x {model.n_steps} steps)", file=sys.stderr)
            model.learn(remaining, callback=RunCallback(self, self.progress), reset_num_timesteps=False,
                        tb_log_name="ppo")  # fmt: skip
        self.checkpoint(model)
        final = self.evaluate(model) if self.cfg.eval.games else None
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
        write_text_atomic(self.run_dir / "summary.json", json.dumps(out, indent=1) + "\n")
        rate = out["collect_steps_per_s"]
        print(f"trained {out['timesteps']:,} steps in {wall / 60:.1f} min"
              + (f" ({rate:,.0f} env steps/s collecting)" if rate else "")
              + f"; model {out['model']}, summary {self.run_dir / 'summary.json'}", file=sys.stderr)  # fmt: skip
        return out


def build_parser(prog: str | None = None) -> ArgumentParser:
    """The SB3 trainer's command line; its help ends with the config's keys (:mod:`cluedo_env.training.sb3.config`)."""
    ap = ArgumentParser(prog=prog, description=__doc__.splitlines()[0],
                        epilog=sb3_config.__doc__.split("\n\n", 1)[1],
                        formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--config", required=True, metavar="YAML", help="training config (configs/train_*.yaml)")
    dispatch.add_backend_argument(ap, "sb3")
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
    """Train with the config and options of ``argv``; returns the run's summary (also printed as JSON)."""
    args = build_parser(prog).parse_args(argv)
    dispatch.check_backend(args.backend, "sb3")
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
    sys.exit(run_cli(main))
