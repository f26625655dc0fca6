"""Resuming an SB3 run: ``state.json``, the newest loadable checkpoint, the seeds and torch's generator state.

A run writes ``run_dir/state.json`` after every checkpoint (:meth:`cluedo_env.training.sb3.train.Trainer.checkpoint`);
``--resume`` reads it back here, or falls back to the newest ``checkpoints/step_*.zip`` that loads when the file
is missing or damaged, so that a killed run loses at most one checkpoint interval.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np
import torch
from cluedo_env.training.resume_check import check_same_run
from cluedo_env.training.sb3.checkpoints import load_model
from cluedo_env.training.sb3.config import TrainConfig

from cluedo_env.checks import is_int, is_number
from cluedo_env.errors import CheckpointError, TrainConfigError
from cluedo_env.files import clean_stale_tmp


def env_seed(seed: int, timesteps: int) -> int:
    """A seed for the env (or the league) at step ``timesteps`` of a run seeded ``seed``: a resumed run reseeds
    from where it stopped, reproducibly."""
    return int(np.random.SeedSequence([seed, timesteps]).generate_state(1)[0])


def torch_rng_state() -> str:
    """torch's generator state as text, for ``state.json``."""
    return base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode("ascii")


def set_torch_rng_state(text: str) -> None:
    """Restore the generator state :func:`torch_rng_state` wrote."""
    torch.set_rng_state(torch.from_numpy(np.frombuffer(base64.b64decode(text), np.uint8).copy()))


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
    ok = (isinstance(state, dict) and isinstance(state.get("checkpoint"), str) and is_int(state.get("timesteps"))
          and isinstance(state.get("torch_rng"), str) and is_number(state.get("elapsed_s", 0.0)))  # fmt: skip
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
    skipped: list[str] = []
    for path, steps, exact in candidates:
        try:
            model = load_model(path)
            if model.num_timesteps != steps:
                raise CheckpointError(f"checkpoint {path}: holds {model.num_timesteps} steps, expected {steps}")
        except CheckpointError as exc:
            log(f"resume: skipped {path} ({exc})")
            skipped.append(str(exc))
            continue
        if not exact:
            log(f"resume: continuing from {path} at step {steps} (the newest checkpoint that loads)")
        return path, steps, state, exact
    newest = f"; the newest: {skipped[0]}" if skipped else ""  # e.g. an older format, with its conversion command
    raise CheckpointError(
        f"--resume: nothing to resume in {run_dir} (state.json {why or 'names no loadable checkpoint'}, "
        f"no loadable checkpoints/step_*.zip{newest}) (start the run without --resume)"
    )


# Keys that may change between a run and its --resume: how long it trains and how it is watched, not what it
# learns. Any other difference (rules, opponents, network, PPO settings, seed) would make the resumed run
# another experiment under the old name, so it is refused.
SAFE_TO_CHANGE = ("total_timesteps", "checkpoint_every", "keep_checkpoints", "keep_best", "eval", "torch_threads",
                  "run_dir", "init_from")  # fmt: skip


def check_resume_config(saved: dict | None, cfg: TrainConfig | dict, run_dir: Path) -> None:
    """Refuse a ``--resume`` whose config differs from the run's (``saved``, the plain form a run writes), naming
    the keys (old -> new).

    A run saved before a key existed holds no value for it: both configs are read through :class:`TrainConfig`
    first, so such a key compares as its default."""
    new = cfg.to_dict() if isinstance(cfg, TrainConfig) else _as_read(cfg)
    check_same_run(_as_read(saved) if isinstance(saved, dict) else saved, new, run_dir, SAFE_TO_CHANGE)


def _as_read(config: dict) -> dict:
    """``config`` as :class:`TrainConfig` reads it (every key, defaults filled in), or as written if it does not
    read."""
    try:
        return TrainConfig.from_dict(config).to_dict()
    except TrainConfigError:
        return config


__all__ = ["SAFE_TO_CHANGE", "check_resume_config", "env_seed", "resume_point",
           "set_torch_rng_state", "torch_rng_state"]  # fmt: skip
