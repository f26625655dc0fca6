"""RLlib (new API stack) pieces for Cluedo: masked PPO module, random-legal bot module, ``rllib:`` players.

* :class:`MaskedPPOTorchRLModule`: RLlib's default PPO torch module on the observation (cast to
  float), with the legal-action mask applied to the logits (illegal actions get ``FLOAT_MIN``), in
  exploration, inference and training alike. Same idea as RLlib's
  ``examples/rl_modules/classes/action_masking_rlm.py``, for this env's int8 spaces and two layouts:
  ``{"observation", "action_mask"}`` dicts (PettingZoo self-play) or one flat row, observation then
  mask (the batched vs_bots env, :mod:`cluedo_env.training.rllib.vector_env`).
* :class:`RandomLegalRLModule`: no parameters, never trained; picks a uniformly random legal action
  from the mask: the ``random`` bot as an RLlib module, for multi-agent setups on the PettingZoo env.
* :class:`RllibAgent`: a module from an RLlib checkpoint as a batched player (``cluedo_env.agents.players.base.Agent``);
  it sees the game only through its ``PlayerView`` and rebuilds the inputs the module was trained
  on (belief features, macro actions: :func:`module_options`, saved in the module's model config).

Importing this module registers the ``rllib:`` prefix with :mod:`cluedo_env.agents.play.registry`::

    make_agent("rllib:runs/rllib_vs_heuristic/checkpoints/iter_000060", trust_pickle=True)     # greedy
    make_agent('rllib:runs/rllib_selfplay/checkpoints/iter_000200{"trust_pickle": true}', deterministic=False)

The path is an algorithm checkpoint (``Algorithm.save_to_path``) or an RLModule folder inside one;
``main`` also finds the single module of a vs_bots run (RLlib's ``default_policy``).

RLlib writes a module's class and constructor arguments (``class_and_ctor_args.pkl``) and its state
(``module_state.pkl``) with cloudpickle, and ``RLModule.from_checkpoint`` unpickles them: loading one runs any code
the files hold. Ray's msgpack option covers the state only (the class file is a pickle in every format), so there is
no way to load an RLlib checkpoint as data: :func:`load_module` refuses unless told the checkpoint is trusted,
``rllib:PATH{"trust_pickle": true}`` (``trust_pickle=True``), or it is one this process's training run wrote
(:func:`trust_checkpoint`).
"""

from __future__ import annotations

import contextlib
import copy
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from cluedo_env.agents.learner.inputs import LearnerInputs
from cluedo_env.agents.play.registry import register_prefix
from cluedo_env.agents.players.base import Agent, replace_illegal, sample_legal
from cluedo_env.training.packed_observation import Unpack, packed_config
from cluedo_env.training.precision import PRECISIONS
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE, DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical
from ray.rllib.core.models.base import ENCODER_OUT
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import LearnerActions
from cluedo_env.errors import CheckpointError

OBS_KEY = "observation"
MASK_KEY = "action_mask"


class _LogSoftmaxCategorical(torch.distributions.Categorical):
    """torch's ``Categorical`` on logits, normalised with ``log_softmax`` instead of ``logits - logsumexp``.

    Why: masked logits are ``FLOAT_MIN``, and torch's CPU ``exp`` (inside ``logsumexp``) takes a slow path on
    inputs that underflow, about 20 times slower than on ordinary ones; ``log_softmax`` and ``softmax`` do not.
    Same values (``tests/test_rllib.py`` compares log-probabilities and entropies with torch's ``Categorical``).
    """

    def __init__(self, logits: torch.Tensor) -> None:
        self.logits = torch.log_softmax(logits, dim=-1)
        self._param = self.logits
        self._num_events = self.logits.size()[-1]
        torch.distributions.Distribution.__init__(self, self.logits.size()[:-1], validate_args=False)


class LeanTorchCategorical(TorchCategorical):
    """RLlib's ``TorchCategorical`` over :class:`_LogSoftmaxCategorical` (the masked module's action distribution
    for exploration, inference and training)."""

    def _get_torch_distribution(self, logits: torch.Tensor | None = None,
                                probs: torch.Tensor | None = None) -> torch.distributions.Distribution:  # fmt: skip
        if logits is None:
            return torch.distributions.Categorical(probs=probs, validate_args=False)
        return _LogSoftmaxCategorical(logits)


def _apply_mask(outs: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
    """Illegal actions' logits become ``FLOAT_MIN``: ``logits + (1 - legal) x FLOAT_MIN``, exactly ``FLOAT_MIN`` there
    (a logit is far below half a unit in the last place of ``FLOAT_MIN``) and the logit itself elsewhere. On CPU an
    addition costs a fraction of ``torch.where`` with a comparison (1.5 ms against 9 ms for 2,048 x 359 on one core)."""
    logits = outs[Columns.ACTION_DIST_INPUTS]
    illegal = 1.0 - mask.to(logits.dtype)
    outs[Columns.ACTION_DIST_INPUTS] = torch.addcmul(logits, illegal, torch.tensor(FLOAT_MIN, dtype=logits.dtype))
    return outs


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch module on the observation, with the legal-action mask applied to the logits.

    Two observation layouts: a ``Dict`` with ``"observation"`` and ``"action_mask"`` (the PettingZoo
    env), or one int8 ``Box`` of ``D + A`` values whose last ``A = action_space.n`` are the mask (the
    batched vector env, :mod:`cluedo_env.training.rllib.vector_env`: a flat array keeps RLlib's per-game
    batching/unbatching a plain row copy instead of a walk over a dict per game).
    """

    def __init__(self, *, observation_space: gym.Space | None = None, action_space: gym.Space | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        n_actions = int(getattr(action_space, "n", 0))
        if isinstance(observation_space, gym.spaces.Dict) and MASK_KEY in observation_space.spaces:
            self._flat_mask = 0
            shape = observation_space[OBS_KEY].shape
        elif isinstance(observation_space, gym.spaces.Box) and len(observation_space.shape) == 1 and (
            observation_space.shape[0] > n_actions > 0
        ):
            self._flat_mask = n_actions
            shape = (observation_space.shape[0] - n_actions,)
        else:
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with {OBS_KEY!r} and {MASK_KEY!r}, or a "
                f"1-d Box whose last action_space.n values are the mask; got {observation_space} and {action_space}"
            )
        self.observation_space_with_mask = observation_space
        self._obs_dim = int(shape[0])
        # uint8 observations are packed rows (learner.packed_observation): the first layer unpacks them into the
        # int8 layout's values, so the networks after it are those of an int8 run
        space = observation_space[OBS_KEY] if self._flat_mask == 0 else observation_space
        self.packed = np.dtype(space.dtype) == np.uint8
        unpack = Unpack(packed_config(self._obs_dim)) if self.packed else None
        if unpack is not None:
            shape = (unpack.out_size,)
        # the networks see the observation only, as floats
        super().__init__(observation_space=gym.spaces.Box(0.0, 127.0, shape, np.float32), action_space=action_space,
                         **kwargs)  # fmt: skip
        self.unpack = unpack

    def setup(self) -> None:
        super().setup()
        self.observation_space = self.observation_space_with_mask
        self.action_dist_cls = LeanTorchCategorical
        self.precision = str((self.model_config or {}).get("precision", "float32"))
        if self.precision not in PRECISIONS:
            raise ValueError(f"model_config precision={self.precision!r} (allowed: {', '.join(PRECISIONS)})")

    def _low_precision(self) -> Any:
        """CPU autocast to bfloat16 for the networks' products when ``model_config["precision"]`` says so (a
        training run's setting, as ``precision`` in an SB3 config; :func:`load_module` plays float32)."""
        if self.precision == "bfloat16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _split(self, batch: dict[str, Any]) -> tuple[torch.Tensor | None, dict[str, Any]]:
        """(mask, batch whose OBS is the float observation), without changing the caller's batch.

        The mask is None when OBS is already the bare observation (a batch split before).
        """
        obs = batch[Columns.OBS]
        out = dict(batch)
        if isinstance(obs, dict):
            if OBS_KEY not in obs or MASK_KEY not in obs:
                raise ValueError(f"a masked module needs Dict observations with keys {OBS_KEY!r} and {MASK_KEY!r}")
            out[Columns.OBS] = self._as_input(torch.as_tensor(obs[OBS_KEY]))
            return torch.as_tensor(obs[MASK_KEY]), out
        obs = torch.as_tensor(obs)
        if self._flat_mask and obs.shape[-1] == self._obs_dim + self._flat_mask:
            out[Columns.OBS] = self._as_input(obs[..., : self._obs_dim])
            return obs[..., self._obs_dim :], out
        if obs.shape[-1] != self._obs_dim:
            raise ValueError(f"observations of width {obs.shape[-1]}; this module takes {self._obs_dim} "
                             f"(+ {self._flat_mask} mask values)")  # fmt: skip
        out[Columns.OBS] = self._as_input(obs)
        return None, out

    def _as_input(self, obs: torch.Tensor) -> torch.Tensor:
        """The networks' input: float32, or straight to bfloat16 under that precision (the int8 observation's
        values are exact in both; one conversion instead of a float32 copy that autocast converts again). Packed
        rows are unpacked first."""
        if self.unpack is not None:
            obs = self.unpack(obs)
        return obs.to(torch.bfloat16) if self.precision == "bfloat16" else obs.float()

    def _masked(self, forward: Any, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        if mask is None:
            raise ValueError("a masked module needs the action mask with the observations")
        with self._low_precision():
            outs = forward(batch, **kwargs)
        outs = {k: v.float() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in outs.items()}
        return _apply_mask(outs, mask)

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._masked(self._acting_forward, batch, **kwargs)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._masked(self._acting_forward, batch, **kwargs)

    def _acting_forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """The logits only, through the actor's encoder: RLlib's ``_forward`` also runs the critic's encoder when
        the module was built with one (as RLlib's multi-agent env runners build the modules of a multi-agent
        spec: ``inference_only`` is not passed to them), a second network whose output acting never reads."""
        enc = self.encoder
        actor = getattr(enc, "actor_encoder", None)
        if actor is None or getattr(enc, "critic_encoder", None) is None or self.is_stateful():
            return super()._forward(batch, **kwargs)
        return {Columns.ACTION_DIST_INPUTS: self.pi(actor(batch)[ENCODER_OUT])}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._masked(super()._forward_train, batch, **kwargs)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        _, batch = self._split(batch)
        with self._low_precision():
            return super().compute_values(batch, embeddings).float()

    def obs_batch(self, obs: np.ndarray, mask: np.ndarray) -> Any:
        """The OBS column this module takes for (n, D) observations and (n, A) masks."""
        obs = torch.from_numpy(np.ascontiguousarray(obs))
        mask = torch.from_numpy(np.asarray(mask).astype(np.uint8 if self.packed else np.int8))
        return torch.cat([obs, mask], 1) if self._flat_mask else {OBS_KEY: obs, MASK_KEY: mask}


class RandomLegalRLModule(RLModule):
    """A bot as an RLlib module: a uniformly random legal action from ``obs["action_mask"]``; never trained."""

    def setup(self) -> None:
        self._rng = np.random.default_rng()

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask = batch[Columns.OBS][MASK_KEY]
        mask = mask.cpu().numpy() if isinstance(mask, torch.Tensor) else np.asarray(mask)
        mask = mask.reshape(-1, mask.shape[-1]) > 0
        out = np.zeros(len(mask), np.int64)
        rows = mask.any(1)  # an all-zero mask (a finished game's last observation) is never acted on
        if rows.any():
            out[rows] = sample_legal(mask[rows], self._rng)
        return {Columns.ACTIONS: out}

    def _forward_train(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("RandomLegalRLModule is a bot, never trained (leave it out of policies_to_train)")

    def get_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        pass

    def compile(self, *args: Any, **kwargs: Any) -> None:  # what TorchRLModule callers may call
        pass




# ------------------------------------------------------------------ checkpoints as players
def module_path(path: str | os.PathLike, module: str = "main") -> Path:
    """The RLModule folder for ``module`` in an algorithm checkpoint (or ``path`` itself if it is one).

    A single-agent (vs_bots) run has one module, RLlib's ``default_policy``; ``main`` finds it too.
    """
    path = Path(path)
    modules = path / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE
    for name in (module, DEFAULT_MODULE_ID) if module == "main" else (module,):
        if (modules / name).is_dir():
            return modules / name
    if (path / "class_and_ctor_args.pkl").is_file() or (path / "module_state.pkl").is_file():
        return path
    raise FileNotFoundError(f"{path}: not an RLlib algorithm checkpoint with module {module!r}, nor an RLModule folder")


_TRUSTED: set[Path] = set()  # checkpoint folders this process's training run wrote (their pickles are its own)


def trust_checkpoint(path: str | os.PathLike) -> None:
    """Mark a checkpoint folder this process wrote (a training run's own, for its evaluations) as safe to unpickle."""
    _TRUSTED.add(Path(path).resolve())


def _trusted(path: Path) -> bool:
    path = path.resolve()
    return any(path == t or t in path.parents for t in _TRUSTED)


def load_module(path: str | os.PathLike, module: str = "main", *, trust_pickle: bool = False) -> RLModule:
    """The module from a checkpoint, playing in float32 whatever precision it was trained in; the path is made
    absolute (RLlib reads it through pyarrow's filesystem layer, which takes a relative path for a URI with no
    scheme and fails).

    RLlib's checkpoints are pickles (see the module's docstring): without ``trust_pickle=True``, or the folder
    marked by :func:`trust_checkpoint`, a :class:`~cluedo_env.errors.CheckpointError` refuses to load one."""
    folder = module_path(path, module)
    if trust_pickle is not True and not _trusted(folder):
        raise CheckpointError(
            f"rllib checkpoint {path}: RLlib stores a module as Python pickles, and loading one runs any code the "
            f"files hold, so it is not loaded unless you trust it: rllib:{path}{{\"trust_pickle\": true}} "
            "(load_module(..., trust_pickle=True)); only for checkpoints you trained or got from a source you trust"
        )
    out = RLModule.from_checkpoint(str(folder.resolve()))
    if hasattr(out, "precision"):
        out.precision = "float32"
    return out


def module_options(module: RLModule) -> dict[str, Any]:
    """The learner-env options a module was trained with (``model_config["cluedo"]``, set by
    ``cluedo_env.training.rllib.train`` for vs_bots runs); a module without them (self-play on the AEC env)
    saw the plain observation and played the engine's 870 actions."""
    opts = dict((getattr(module, "model_config", None) or {}).get("cluedo", {}))
    out: dict[str, Any] = {k: bool(opts.get(k, False)) for k in ("macro_moves", "macro_accuse", "belief")}
    out["observation"] = str(opts.get("observation", "full"))
    out["packed_observation"] = bool(opts.get("packed_observation", False))
    return out


def module_actions(module: RLModule, obs: np.ndarray, mask: np.ndarray, deterministic: bool,
                   gen: torch.Generator) -> np.ndarray:  # fmt: skip
    """(n,) actions of ``module`` (inference forward pass, masked logits) for (n, D) obs and (n, A) masks."""
    batch = {Columns.OBS: module.obs_batch(obs, mask)}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        if deterministic:
            out = logits.argmax(-1)
        else:
            out = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)[:, 0]
    return out.numpy().astype(np.int64)


class RllibAgent(LearnerInputs, Agent):
    """An RLlib module (from a checkpoint) as a batched player; greedy by default, ``deterministic=False`` samples.

    It sees the game only through its ``PlayerView`` and rebuilds the inputs the module was trained
    on (:func:`module_options`: belief features from its own notebook, macro moves/accusation
    mapped back to engine ids), the pipeline of ``cluedo_env.training.sb3.checkpoints.PolicyAgent``.
    """

    def __init__(self, path: str | os.PathLike, seed: int | None = None, deterministic: bool = True,
                 module: str = "main", trust_pickle: bool = False) -> None:  # fmt: skip
        self.path = str(path)
        self.module = load_module(path, module, trust_pickle=trust_pickle)
        self.module.eval()
        opts = module_options(self.module)
        self.actions = LearnerActions(opts["macro_moves"], opts["macro_accuse"])
        self.use_belief = opts["belief"]
        self.observation = opts["observation"]
        self.packed_observation = opts["packed_observation"]
        self.seed = seed
        self._belief = None
        self.deterministic = deterministic
        self.name = f"rllib:{path}"
        self.illegal = 0  # actions the safety net replaced (the mask makes this 0; tests check it)
        torch_seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**63)
        self._gen = torch.Generator().manual_seed(torch_seed)
        self._rng = np.random.default_rng(seed)

    def __deepcopy__(self, memo: dict) -> RllibAgent:
        """Copies share the module (read-only here) and get their own notebook."""
        new = copy.copy(self)
        new._belief = None
        return new

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        obs, accuse = self.learner_inputs(view, idx)
        mask = view.legal_action_mask_of(idx)
        chosen = module_actions(self.module, obs, self.actions.mask(mask), self.deterministic, self._gen)
        out = self.actions.to_engine(chosen, mask, accuse)
        self.illegal += replace_illegal(out, np.asarray(mask, bool), self._rng)
        return out


def _rllib_factory(spec: str, seed: int | None = None, **kwargs: Any) -> RllibAgent:
    return RllibAgent(spec, seed=seed, **kwargs)


def register() -> None:
    register_prefix("rllib", _rllib_factory, replace=True)


register()

__all__ = [
    "MaskedPPOTorchRLModule", "RandomLegalRLModule", "RllibAgent", "load_module", "module_actions", "module_options",
    "module_path", "trust_checkpoint",
]  # fmt: skip
