"""Checkpoints of trained policies: atomic saving, checked loading, and a player for the evaluator.

A checkpoint is an sb3-contrib ``MaskablePPO`` zip whose model carries ``cluedo_meta`` (format,
rules, action space, observation size). Loading never runs code from the file: the model is rebuilt from the zip's
``cluedo_env.json`` entry and its tensors (:mod:`cluedo_env.training.sb3.safe_checkpoint`). :func:`load_model`
refuses, with a :class:`CheckpointError` saying why, a file that is missing, not a zip, not a MaskablePPO model,
an older checkpoint that only pickle can read (naming the one-time conversion), or one made for another action
space or observation size than asked for.

Importing this module registers the ``ckpt:`` prefix with :mod:`cluedo_env.agents.play.registry`, so that
``make_agent("ckpt:runs/vs_random/model.zip")`` builds a :class:`PolicyAgent` (deterministic,
the most probable legal action; ``make_agent("ckpt:path", deterministic=False)`` samples).
"""

from __future__ import annotations

import copy
import os
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from cluedo_env.agents.learner.accusation_features import is_expert
from cluedo_env.agents.learner.inputs import LearnerInputs, gate_accusation
from cluedo_env.agents.play.registry import make_agent, register_prefix
from cluedo_env.agents.players.base import Agent
from cluedo_env.training.sb3.safe_checkpoint import (
    ENTRY,
    decode_space,
    model_record,
    read_model,
    read_record,
    write_model,
)

from cluedo_env.checks import check_bool
from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import LearnerActions, num_actions
from cluedo_env.errors import CheckpointError
from cluedo_env.files import check_input_file, write_atomic
from cluedo_env.rules.config import RulesConfig, make_config

FORMAT = "cluedo_env.maskable_ppo.v1"
# Rules a checkpoint may play under whatever it was trained with: the turn limit cuts games, it does not change them;
# the preset is a label (its flags are compared one by one).
RULES_FREE_TO_DIFFER = ("max_turns", "preset")
CHECKPOINT_LIMIT = 4 * 1024**3  # bytes: the shipped players are a few MB; anything near this is not a checkpoint
CONVERT_COMMAND = "cluedo convert-checkpoint OLD.zip NEW.zip --trust-pickle"


def make_meta(config: RulesConfig, macro_moves: bool, obs_size: int, macro_accuse: bool = False,
              belief: bool = False, observation: str = "full", **extra: Any) -> dict[str, Any]:  # fmt: skip
    """The ``cluedo_meta`` a checkpoint carries: what a player needs to rebuild its inputs and outputs."""
    return {"format": FORMAT, "rules": config.to_dict(), "macro_moves": bool(macro_moves),
            "macro_accuse": bool(macro_accuse), "belief": bool(belief), "observation": observation,
            "n_actions": num_actions(macro_moves, macro_accuse, extra.get("advisor") is not None),
            "obs_size": int(obs_size), **extra}  # fmt: skip


def save_model_atomic(model, path: str | os.PathLike) -> Path:
    """Save ``model`` into ``path`` via a temporary file in the same folder and ``os.replace``: SB3's zip plus the
    ``cluedo_env.json`` entry :func:`load_model` reads (:mod:`cluedo_env.training.sb3.safe_checkpoint`). What cannot
    be stored as data is refused before anything is written."""
    record = model_record(model)
    return write_atomic(path, lambda f: write_model(model, f, record), "wb")


def load_model(path: str | os.PathLike, env=None, *, obs_size: int | None = None, n_actions: int | None = None,
               device: str = "cpu", **kwargs):  # fmt: skip
    """A MaskablePPO model from ``path``; raises :class:`CheckpointError` for anything unusable.

    Nothing in the file is unpickled: the model is rebuilt from its ``cluedo_env.json`` entry and its tensors
    (:func:`cluedo_env.training.sb3.safe_checkpoint.read_model`). A zip that has only SB3's pickled settings is
    refused with the command that converts it once, for a file one trusts. ``kwargs`` set model attributes after
    loading, as SB3's ``load`` does.
    """
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path}: no such file")
    check_input_file(path, "checkpoint", CHECKPOINT_LIMIT, CheckpointError)
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"checkpoint {path}: not a zip file (truncated or not a saved model?)")
    where = f"checkpoint {path}"
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if not {"data", "policy.pth"} <= names:
                raise CheckpointError(f"{where}: not a Stable-Baselines3 model (has {sorted(names)})")
            if ENTRY not in names:
                raise CheckpointError(
                    f"{where}: an older checkpoint whose settings only Python's pickle can read, and unpickling runs "
                    f"any code the file holds, so it is not loaded; if you trust the file, convert it once: "
                    f"{CONVERT_COMMAND.replace('OLD.zip', str(path))}"
                )
            record = read_record(zf, where)
            _check_sizes(path, record, env, obs_size, n_actions)
            model = read_model(zf, record, where, env=env, device=device, **kwargs)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise CheckpointError(f"{where}: unreadable zip ({exc})") from exc
    return model


def _check_sizes(path: Path, record: dict, env, obs_size: int | None, n_actions: int | None) -> None:
    """The checkpoint's metadata, and its spaces against the sizes asked for (or ``env``'s), before any building."""
    meta = record.get("cluedo_meta")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {path}: no Cluedo metadata (format {FORMAT!r}); not made by "
                              "cluedo_env.training.sb3.train")  # fmt: skip
    got_obs = int(decode_space(record["observation_space"], f"checkpoint {path}").shape[0])
    got_act = int(decode_space(record["action_space"], f"checkpoint {path}").n)
    if env is not None:
        obs_size = obs_size if obs_size is not None else int(env.observation_space.shape[0])
        n_actions = n_actions if n_actions is not None else int(env.action_space.n)
    rules = meta.get("rules") if isinstance(meta.get("rules"), dict) else {}
    if obs_size is not None and got_obs != obs_size:
        raise CheckpointError(
            f"checkpoint {path}: made for observations of size {got_obs} (rules {rules.get('preset')}, "
            f"{rules.get('players')} players), these rules give {obs_size}"
        )
    if n_actions is not None and got_act != n_actions:
        raise CheckpointError(
            f"checkpoint {path}: made for {got_act} actions (macro_moves={meta.get('macro_moves')}, "
            f"macro_accuse={meta.get('macro_accuse', False)}), this env has {n_actions} (870: full space, "
            f"682: macro moves, 547: macro accusation, 359: both)"
        )


def policy_fn(model, deterministic: bool = True, members: Sequence[Any] = ()):
    """``fn(obs, mask) -> actions`` in the model's own action space, batched, without gradients.

    With ``members`` (models with the same inputs and actions) the networks vote: their masked action
    probabilities are averaged, and the action is the most probable one of the average (``deterministic``) or drawn
    from it."""
    policy = model.policy
    if members:
        return _ensemble_fn([policy, *(m.policy for m in members)], deterministic)

    def fn(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            obs_t = torch.as_tensor(np.asarray(obs), dtype=torch.float32, device=policy.device)
            dist = policy.get_distribution(obs_t, action_masks=np.asarray(mask))
            return dist.get_actions(deterministic=deterministic).cpu().numpy().astype(np.int64)

    return fn


def _ensemble_fn(policies: list, deterministic: bool):
    """:func:`policy_fn` of several networks: the mean of their masked action probabilities decides."""

    def fn(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            mask = np.asarray(mask)
            probs = None
            for policy in policies:
                obs_t = torch.as_tensor(np.asarray(obs), dtype=torch.float32, device=policy.device)
                p = policy.get_distribution(obs_t, action_masks=mask).distribution.probs.cpu()
                probs = p if probs is None else probs + p
            probs = probs / len(policies) * torch.as_tensor(mask, dtype=probs.dtype)  # illegal: exactly 0
            if deterministic:
                return probs.argmax(dim=1).numpy().astype(np.int64)
            return torch.multinomial(probs, 1)[:, 0].numpy().astype(np.int64)

    return fn


def input_differences(meta: dict, other: dict) -> list[str]:
    """The ``cluedo_meta`` keys (training settings aside) on which two checkpoints differ: an ensemble's networks
    must read the same inputs and choose among the same actions under the same rules (the turn limit and the
    preset's label aside, as for :meth:`PolicyAgent._check_rules`)."""

    def rules(m: dict) -> dict:
        return {k: v for k, v in (m.get("rules") or {}).items() if k not in RULES_FREE_TO_DIFFER}

    keys = (set(meta) | set(other)) - {"train_config", "rules"}
    differ = [k for k in keys if meta.get(k) != other.get(k)]
    return sorted(differ + ["rules"] * (rules(meta) != rules(other)))


class PolicyAgent(LearnerInputs, Agent):
    """A trained checkpoint as a batched player (Agent interface); sees only its PlayerView.

    It rebuilds the inputs the policy was trained on: the seat's observation (packed rows when it was trained on
    them, ``packed_observation`` in its metadata), plus the belief
    features (:mod:`cluedo_env.agents.learner.belief`, its own notebook) when the checkpoint was trained with them;
    its actions go back to engine ids through :class:`~cluedo_env.envs.learner_actions.LearnerActions`.

    ``ensemble`` names more checkpoints with the same inputs and actions (other seeds or widths of one recipe):
    their networks vote with this one (:func:`policy_fn`), e.g. ``ckpt:a.zip{"ensemble": ["b.zip", "c.zip"]}``.
    """

    def __init__(self, path: str | os.PathLike | None = None, seed: int | None = None, deterministic: bool = True,
                 model=None, out_of_distribution: bool = False,
                 ensemble: Sequence[str | os.PathLike] = ()) -> None:  # fmt: skip
        if (path is None) == (model is None):
            raise ValueError("PolicyAgent needs a checkpoint path or a model (one of them)")
        self.out_of_distribution = check_bool("out_of_distribution", out_of_distribution)
        self.path = str(path) if path is not None else "<live model>"
        self.model = load_model(path) if model is None else model
        self.meta = self.model.cluedo_meta
        self.members = self._load_members(ensemble)
        self.macro_moves = bool(self.meta["macro_moves"])
        self.advisor_name = self.meta.get("advisor")  # advised checkpoints: the player that plays all but accusations
        # The holder probabilities (cluedo_env.agents.learner.holder_features): from an expert that only perceives.
        self.holder_probabilities = bool(self.meta.get("holder_probabilities", False))
        if self.holder_probabilities and self.advisor_name is not None:
            raise CheckpointError(f"checkpoint {path}: holder_probabilities with an advisor (they come from an "
                                  "expert that only perceives, for learners without one)")
        self.actions = LearnerActions(self.macro_moves, self.meta.get("macro_accuse", False),
                                      advised=self.advisor_name is not None)  # fmt: skip
        self._advisor = None
        self.seed = seed
        # The accusation features (cluedo_env.agents.learner.accusation_features): from the advisor of an advised
        # checkpoint whose advisor is an expert, else from an expert that only perceives.
        self.accusation_features = bool(self.meta.get("accusation_features", False))
        if self.advisor_name is not None:
            if is_expert(self._advisor_of()) != self.accusation_features:
                raise CheckpointError(
                    f"checkpoint {path}: advisor {self.advisor_name!r} is {'' if is_expert(self._advisor) else 'not '}"
                    f"an expert but the checkpoint says accusation_features={self.accusation_features} (the "
                    "features come with an expert advisor and only with one)"
                )
        self.use_belief = bool(self.meta.get("belief", False))
        for name in ("accusation_features", "holder_probabilities"):
            if getattr(self, name) and not self.use_belief:
                raise CheckpointError(f"checkpoint {path}: {name} without belief features (they are read from the "
                                      "seat's notebook)")
        self.accuse_gate = self.meta.get("accuse_gate")  # the env's accusation gate, applied as in training
        self.observation = self.meta.get("observation", "full")  # checkpoints from before the option: full
        self.packed_observation = bool(self.meta.get("packed_observation", False))  # trained on packed rows
        self.deterministic = deterministic
        self.name = f"ckpt:{self.path}"
        self.seed = seed
        if seed is not None:
            torch.manual_seed(seed)
        self._fn = policy_fn(self.model, deterministic, self.members)
        self._belief = None

    def _load_members(self, ensemble: Sequence[str | os.PathLike]) -> list:
        """The models that vote with this one (``ensemble``: checkpoint paths), each checked to read the same
        inputs and choose among the same actions."""
        if isinstance(ensemble, (str, os.PathLike)) or not all(isinstance(p, (str, os.PathLike)) for p in ensemble):
            raise CheckpointError(f"checkpoint {self.path}: ensemble must be a list of checkpoint paths, got "
                                  f"{ensemble!r}")  # fmt: skip
        members = []
        for other in ensemble:
            model = load_model(other)
            differ = input_differences(self.meta, model.cluedo_meta)
            if differ:
                raise CheckpointError(f"checkpoint {other} cannot vote with {self.path}: their networks differ in "
                                      f"{', '.join(differ)} (an ensemble's networks share inputs, actions and rules)")
            members.append(model)
        return members

    @classmethod
    def from_model(cls, model, deterministic: bool = True) -> PolicyAgent:
        """A player over a live model (its weights as they are when it acts): self-play opponents."""
        return cls(model=model, deterministic=deterministic)

    def __deepcopy__(self, memo: dict) -> PolicyAgent:
        """Copies share the model (read-only here) and get their own notebook."""
        new = copy.copy(self)
        new._belief = None
        new._advisor = None
        new._accusation = None
        new._perceiver = None
        return new

    def _feature_expert(self) -> tuple[Any, bool]:
        if self.advisor_name is not None:
            return self._advisor_of(), True
        return super()._feature_expert()

    def _advisor_of(self) -> Agent:
        if self._advisor is None:
            self._advisor = make_agent(self.advisor_name, seed=self.seed)
        return self._advisor

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        self._check_rules(getattr(view, "config", None))
        super().reset(view, idx)
        if self.advisor_name is not None:
            self._advisor_of().reset(view, idx)

    def _check_rules(self, config: RulesConfig | None) -> None:
        """Refuse to play under rules other than the checkpoint's (the turn limit aside), unless told it is
        out of distribution: the same shapes (classic and seed000 both) would otherwise play on with no warning."""
        trained = self.meta.get("rules")
        if config is None or not isinstance(trained, dict):
            return
        here = config.to_dict()
        differ = sorted(k for k in here if k not in RULES_FREE_TO_DIFFER and trained.get(k, here[k]) != here[k])
        if not differ:
            return
        text = ", ".join(f"{k}={trained.get(k)!r} (here {here[k]!r})" for k in differ)
        if not self.out_of_distribution:
            raise CheckpointError(
                f"checkpoint {self.path}: trained under other rules: {text} (play it under its rules, or pass "
                f'out_of_distribution, e.g. ckpt:PATH{{"out_of_distribution": true}}, to play it anyway)'
            )
        if not getattr(self, "_warned", False):
            self._warned = True
            print(f"note: {self.name} plays out of distribution: trained with {text}", file=sys.stderr)

    def observe_step(self, view: PlayerView) -> None:
        if self.advisor_name is not None:
            self._advisor_of().observe_step(view)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        if self.advisor_name is None:
            return self._act(view, idx)
        # Advised: the policy decides only where it may accuse (LearnerActions.decides); the advisor plays the rest.
        out = np.empty(len(idx), np.int64)
        mine = self.actions.decides(view.legal_action_mask_of(idx))
        rest = np.flatnonzero(~mine)
        if len(rest):
            out[rest] = self._advisor_of().act(view, idx[rest])
        sel = np.flatnonzero(mine)
        if len(sel):
            out[sel] = self._act(view, idx[sel])
        return out

    def _act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        """The policy's engine actions in games ``idx`` (where it decides)."""
        obs, accuse = self.learner_inputs(view, idx)
        if obs.shape[1] != self.meta["obs_size"]:
            cfg: RulesConfig = view.config
            raise CheckpointError(
                f"checkpoint {self.path}: made for observations of size {self.meta['obs_size']} "
                f"({self.meta['rules'].get('preset')}, {self.meta['rules'].get('players')} players); "
                f"this game ({cfg.preset}, {cfg.players} players) gives {obs.shape[1]}"
            )
        mask = view.legal_action_mask_of(idx)
        legal = self.actions.mask(mask)
        if self.accusation_features and self.advisor_name is not None:  # advised: accuse only where the
            self._accusation.restrict(legal, idx)  # expert sampled a best open triple (as in training)
        if self.accuse_gate is not None:  # the macro accusation only where the notebook allows it (as in training)
            gate_accusation(legal, mask, self.actions.accuse_id, self._belief, idx, self.accuse_gate)
        chosen = self._fn(obs, legal)
        advice = None
        if self.advisor_name is not None:
            advice = lambda rows: self._advisor_of().act(view, idx[rows])  # noqa: E731
        return self.actions.to_engine(chosen, mask, accuse, advice)


def _ckpt_factory(spec: str, seed: int | None = None, **kwargs) -> PolicyAgent:
    return PolicyAgent(spec, seed=seed, **kwargs)


def register() -> None:
    register_prefix("ckpt", _ckpt_factory, replace=True)


register()

__all__ = ["CheckpointError", "PolicyAgent", "input_differences", "load_model", "make_meta", "policy_fn",
           "save_model_atomic"]  # fmt: skip


def rules_of(meta: dict) -> RulesConfig:
    """The rules a checkpoint was trained with."""
    return make_config(meta["rules"])
