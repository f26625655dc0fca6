"""The single-agent Cluedo env as a native TorchRL env: N games in one batched engine, ``batch_size=[N]``.

    from cluedo_env.training.torchrl_env import CluedoTorchRLEnv
    env = CluedoTorchRLEnv(1024, opponents="random", seat="random", seed=0)
    collector = torchrl.collectors.Collector(env, policy, frames_per_batch=32 * 1024, total_frames=-1)

The learner, the opponents, rewards, seating and every option are those of
:mod:`cluedo_env.training.single_agent` (this is a thin front end over
:class:`~cluedo_env.training.learner_core.LearnerCore`, built from the same
:class:`~cluedo_env.training.learner_options.LearnerOptions`); here they arrive as torch tensors in one
``TensorDict`` per step, without a Python loop over games, which is why it is much faster than wrapping
the PettingZoo env (``PettingZooWrapper`` steps one seat of one game per call).

Keys (N games, D observation slots, A actions):

=====================  ==========================  ================================================
key                    spec                        what
=====================  ==========================  ================================================
``observation``        ``Bounded`` (N, D) int8     the learner seat's observation (``0..127``; uint8
                                                   ``0..255`` with ``packed_observation=True``)
``action_mask``        ``Binary`` (N, A) bool      its legal actions, the key that TorchRL's
                                                   ``ActionMask`` transform and ``MaskedCategorical``
                                                   read
``action``             ``Categorical(A)`` (N,)     an action index (int64)
``reward``             ``Unbounded`` (N, 1) float  +1 win, -1 loss, 0 otherwise (the learner's rewards
                                                   summed over the opponents' moves up to its next
                                                   decision)
``done`` ...           (N, 1) bool                 ``terminated`` (won, lost, eliminated),
                                                   ``truncated`` (``max_turns``, R-E3), ``done``
=====================  ==========================  ================================================

Autoreset, TorchRL's way: the step that ends a game returns, under ``"next"``, that game's last
observation and ``done=True`` (its ``action_mask`` allows only action 0: nothing is played from a
finished game). ``step_and_maybe_reset`` (what TorchRL's ``Collector``, formerly ``SyncDataCollector``, and
``rollout`` call) then starts the next games on those rows: the core has already dealt them, so this env's
``step_and_maybe_reset`` hands their first observations over directly, and a partial reset through
``"_reset"`` (``TransformedEnv``'s generic path) does the same; the other games are left as they are. Resetting a game
that is still going on (a ``"_reset"`` row that is not done) is refused with a clear error, since
the core cannot restart one game alone mid-batch; ``env.reset()`` without ``"_reset"`` deals new games
everywhere.

Random actions: the action spec carries the games' current mask (``Categorical.update_mask``), so
``rand_action``, ``rollout`` without a policy and ``check_env_specs`` draw legal actions; TorchRL's
``ActionMask`` transform works on top of it too. A collector built with ``policy=None`` samples a copy of the
spec taken when it was built, which does not follow the mask: give it a masked policy. A policy masks its logits
with ``MaskedCategorical(logits=..., mask=td["action_mask"])``.

Seeding: ``set_seed(s)`` takes effect at the next full ``reset()``: it seeds the engine (deal, dice), the
learner-seat draws and the random opponents from ``s``, as ``LearnerCore.reset(s)`` does.

The observation is int8 (what the engine writes; a fifth of float32's bytes in a replay buffer):
a network casts it (``obs.float()``) in its first layer.

This module needs torchrl and tensordict (the ``torchrl`` extra); the rest of the package does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import OPTION_NAMES, LearnerOptions, keywords_of
from cluedo_env.training.single_agent import _rules
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from cluedo_env.rules.config import RulesConfig


class CluedoTorchRLEnv(EnvBase):
    """``batch_size`` games, the learner in one seat of each; keyword arguments as
    :class:`~cluedo_env.training.learner_options.LearnerOptions` (``opponents``, ``seat``, ``macro_moves``,
    ``belief`` ..., and rules flags such as ``players=3``). ``device``: where the tensors are put (the
    engine runs on the CPU)."""

    def __init__(self, batch_size: int = 1024, config: RulesConfig | str | dict | None = None, *,
                 preset: str | None = None, seed: int | None = None, device: Any = "cpu",
                 **kwargs: Any) -> None:  # fmt: skip
        env_keywords = [*keywords_of(type(self).__init__), *OPTION_NAMES]
        options = LearnerOptions.from_keywords(type(self).__name__, env_keywords, batch_size, _rules(config, preset),
                                               seed=seed, **kwargs)  # fmt: skip
        super().__init__(device=device, batch_size=torch.Size([batch_size]))
        self.core = core = LearnerCore(options)
        n, a = core.N, core.n_actions
        obs_dtype, high = (torch.uint8, 255) if core.packed else (torch.int8, 127)
        self.observation_spec = Composite(
            observation=Bounded(0, high, shape=(n, core.obs_size), dtype=obs_dtype, device=self.device),
            action_mask=Binary(n=a, shape=(n, a), dtype=torch.bool, device=self.device),
            shape=(n,), device=self.device,
        )  # fmt: skip
        self.action_spec = Categorical(a, shape=(n,), dtype=torch.int64, device=self.device)
        self.reward_spec = Unbounded(shape=(n, 1), dtype=torch.float32, device=self.device)
        flag = Categorical(2, shape=(n, 1), dtype=torch.bool, device=self.device)
        self.done_spec = Composite(done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=(n,),
                                   device=self.device)  # fmt: skip
        self._next_seed = seed
        self._started = False
        self._restarted = np.zeros(n, bool)  # games that ended in the last step: the core already dealt anew
        self._obs_now: torch.Tensor | None = None  # the current game's observation, every row (next games too)
        self._mask_now: torch.Tensor | None = None

    # ------------------------------------------------------------ EnvBase API
    def _set_seed(self, seed: int | None) -> None:
        self._next_seed = seed

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        rows = None if tensordict is None else tensordict.get("_reset", None)
        if rows is None or not self._started:
            seed, self._next_seed = self._next_seed, None  # None: go on with the current random streams
            obs = self.core.reset(seed).copy()  # the core's buffer
            self._obs_now = self._tensor(obs)
            self._set_mask(self._tensor(self.core.action_masks()))
            self._restarted[:] = False
            self._started = True
        else:
            rows = rows.reshape(self.core.N).cpu().numpy()
            going_on = rows & ~self._restarted
            if going_on.any():
                raise RuntimeError(
                    f"{type(self).__name__}: '_reset' asks to restart {int(going_on.sum())} game(s) still going on "
                    f"(first: row {int(np.flatnonzero(going_on)[0])}); only finished games (done=True) restart one "
                    "by one, since the core deals their next games when they end. Call reset() without '_reset' "
                    "to deal new games everywhere."
                )
            self._restarted &= ~rows
        not_done = torch.zeros((self.core.N, 1), dtype=torch.bool, device=self.device)
        return TensorDict({"observation": self._obs_now, "action_mask": self._mask_now, "done": not_done,
                           "terminated": not_done.clone(), "truncated": not_done.clone()},
                          batch_size=self.batch_size, device=self.device)  # fmt: skip

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        if not self._started:
            raise RuntimeError(f"{type(self).__name__}: call reset() before step()")
        actions = tensordict.get("action").reshape(self.core.N).cpu().numpy()
        obs, rew, term, trunc, ended = self.core.step(actions)
        now_obs, now_mask = obs.copy(), self.core.action_masks()  # obs is the core's buffer, the mask a new array
        self._obs_now = self._tensor(now_obs)
        self._set_mask(self._tensor(now_mask))
        self._restarted |= ended
        next_obs, next_mask = self._obs_now, self._mask_now
        if ended.any():  # finished games: their last observation; nothing is played from them (only action 0)
            now_obs, now_mask = now_obs.copy(), now_mask.copy()  # (numpy's row writes cost less than torch's)
            now_obs[ended] = self.core.final_obs[ended]
            now_mask[ended] = False
            now_mask[ended, 0] = True
            next_obs, next_mask = self._tensor(now_obs), self._tensor(now_mask)
        col = (self.core.N, 1)
        return TensorDict({"observation": next_obs, "action_mask": next_mask,
                           "reward": torch.from_numpy(rew).reshape(col).to(self.device),
                           "done": torch.from_numpy(ended).reshape(col).to(self.device),
                           "terminated": torch.from_numpy(term).reshape(col).to(self.device),
                           "truncated": torch.from_numpy(trunc).reshape(col).to(self.device)},
                          batch_size=self.batch_size, device=self.device)  # fmt: skip

    def _step_and_maybe_reset(self, tensordict: TensorDictBase) -> tuple[TensorDictBase, TensorDictBase]:
        """As :meth:`EnvBase.step_and_maybe_reset` (the same two tensordicts), without its generic partial reset.

        The generic one merges the reset rows into every entry with ``torch.where`` over the whole batch, which
        costs more than the engine's step at N = 1,024; here the games that ended in this step already hold
        their next games (the core dealt them), so the root takes the current observation and mask of every
        row, their done flags go back to False, and any other entry (a policy's recurrent state, the
        collector's) is zeroed on those rows, as the generic reset's ``pad=0`` does.
        """
        if tensordict.device != self.device:
            tensordict = tensordict.to(self.device)
        tensordict = self.step(tensordict)
        tensordict_ = self._step_mdp(tensordict)
        if self._post_step_mdp_hooks is not None:
            tensordict, tensordict_ = self._post_step_mdp_hooks(tensordict, tensordict_)
        if self._restarted.any():
            rows = torch.from_numpy(np.flatnonzero(self._restarted)).to(self.device)
            self._restarted[:] = False
            for key, value in list(tensordict_.items(include_nested=True, leaves_only=True)):
                if key == "observation":
                    tensordict_.set(key, self._obs_now)
                elif key == "action_mask":
                    tensordict_.set(key, self._mask_now)
                elif isinstance(value, torch.Tensor) and value.shape[:1] == self.batch_size:
                    tensordict_.set(key, value.index_fill(0, rows, 0))
        return tensordict, tensordict_

    # ------------------------------------------------------------ helpers
    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(array).to(self.device)

    def _set_mask(self, mask: torch.Tensor) -> None:
        """The action spec's mask follows the games' current one, so that what samples the env's spec
        (``rand_action``, ``rollout`` without a policy) draws legal actions."""
        self._mask_now = mask
        self.action_spec.update_mask(mask)

    def action_masks(self) -> np.ndarray:
        """(N, A) bool: the learner's legal actions in every game now (the core's, as numpy)."""
        return self.core.action_masks()


def sample_masked(mask: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """(..., A) bool -> (...) int64: one action per row, uniform among the True entries (each row needs one).

    From the list of legal (row, action) pairs: a row's k-th pair with k uniform in [0, count), a few times
    cheaper than ``torch.multinomial`` or a cumulative sum over (1024, 870) on one core.
    """
    flat = mask.reshape(-1, mask.shape[-1])
    rows, cols = flat.nonzero(as_tuple=True)
    count = torch.bincount(rows, minlength=flat.shape[0])
    if not bool((count > 0).all()):
        raise ValueError("sample_masked: a row of the action mask allows no action")
    first = count.cumsum(0) - count
    k = (torch.rand(count.shape, generator=generator, device=mask.device) * count).long()
    return cols[first + k].reshape(mask.shape[:-1])


__all__ = ["CluedoTorchRLEnv", "sample_masked"]
