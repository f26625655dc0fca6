"""The learner's MaskablePPO policy with a cheaper masked distribution and optional bfloat16 layers.

Why: profiling a PPO update of the learner (8,192-row minibatches, 359 actions, compact observation; the whole
loop: ``scripts/bench_training.py``) showed most of its time outside the network: sb3-contrib's
``MaskableCategorical`` builds a torch ``Categorical`` twice per call (validating its arguments, a
``logsumexp`` each time), then masks with ``torch.where`` and normalises again. This module computes the same
distribution with one ``log_softmax`` of the masked logits:

- log-probabilities, entropy and modes are those of sb3-contrib's distribution (masked logits near -1e8 as
  there), to float32 rounding: ``tests/test_lean_policy.py`` compares both on random logits and masks (a row
  with no legal action, which the learner envs never give, is near uniform rather than exactly);
- samples follow the same probabilities but are drawn by inverse CDF (one uniform per row), which costs a
  fraction of ``torch.multinomial``; a seeded run is reproducible, but draws differ from sb3-contrib's.

``set_precision("bfloat16")`` runs the hidden layers (``mlp_extractor``: the first layer holds most of the
arithmetic) and the action head's products (:class:`MixedLinear`: 256 x 359 weights, the next largest) under CPU
autocast, with float32 weights, float32 outputs (logits, value), float32 log-softmax and losses; the value head
(256 x 1) stays float32. On CPUs with AMX or AVX512-BF16 (Intel Sapphire Rapids and later, AMD Zen 4 and
later) this makes the matrix products several times cheaper; elsewhere bfloat16 is emulated and slower, and
:func:`cluedo_env.training.precision.fast_bfloat16` says so. The precision is a property of a training run
(``precision``
in a training config), not of the checkpoint: saved weights are float32 and a loaded policy plays in float32.
"""

from __future__ import annotations

import numpy as np
import torch
from cluedo_env.training.precision import PRECISIONS
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor

_MASKED_LOGIT = -1e8  # as sb3-contrib's masked logits (finite: an all-masked row gives no NaN)

class LeanMaskedCategorical:
    """A categorical distribution over the last axis of ``logits`` (N, A), masked by ``apply_masking``.

    ``logits`` holds the normalised log-probabilities (float32), as ``torch.distributions.Categorical.logits``.
    A mask becomes an additive bias (0 or -1e8): on CPU, ``masked_fill`` and ``where`` with a boolean mask cost
    about five times an addition, and its gradient is free. A masked action's probability is then exactly 0 in
    float32, so the entropy needs no mask, and ``probs`` comes from ``softmax`` rather than ``exp(logits)`` (the
    exponential of -1e8 takes a slow path in torch's CPU kernels, about 20 times slower).
    """

    def __init__(self, logits: torch.Tensor) -> None:
        self._raw = logits.float()  # (N, A) float32, also when the layers ran in bfloat16
        self._set(self._raw)

    def _set(self, logits: torch.Tensor) -> None:
        self._masked = logits
        self.logits = torch.log_softmax(logits, dim=-1)
        self._probs: torch.Tensor | None = None

    @property
    def probs(self) -> torch.Tensor:
        if self._probs is None:
            self._probs = torch.softmax(self._masked, dim=-1)
        return self._probs

    def apply_masking(self, masks: torch.Tensor | np.ndarray | None) -> None:
        if masks is None:
            self._set(self._raw)
            return
        if isinstance(masks, np.ndarray):  # numpy converts bool to float about 5x faster than torch
            legal = torch.from_numpy(np.ascontiguousarray(masks, dtype=np.float32))
        else:
            legal = torch.as_tensor(masks).to(torch.float32)
        legal = legal.to(self._raw.device).reshape(self._raw.shape)
        self._set(self._raw + (legal - 1.0) * -_MASKED_LOGIT)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, actions.long().reshape(-1, 1)).reshape(actions.shape)

    def entropy(self) -> torch.Tensor:
        return -(self.probs * self.logits).sum(-1)  # masked actions: probability exactly 0, so they add 0

    def sample(self) -> torch.Tensor:
        """One action per row, by inverse CDF on float64 cumulative probabilities (one uniform per row, from
        torch's generator): a masked action (probability 0) is never drawn."""
        cdf = self.probs.double().cumsum(-1)  # (N, A)
        u = torch.rand((len(cdf), 1), dtype=torch.float64, device=cdf.device) * cdf[:, -1:]
        out = torch.searchsorted(cdf, u, right=True).clamp_(max=cdf.shape[1] - 1)  # first index with cdf > u
        zero = self.probs.gather(1, out) == 0  # only when u rounded up to the total: take the likeliest action
        if bool(zero.any()):
            out[zero] = self.probs[zero.reshape(-1)].argmax(-1)
        return out.reshape(-1)

    def mode(self) -> torch.Tensor:
        return torch.argmax(self.logits, dim=-1)


class MixedLinear(torch.nn.Linear):
    """``nn.Linear`` (same parameters, same names) whose product runs under CPU autocast when ``autocast_dtype`` is
    set, with a float32 output: the action head, so that a checkpoint's ``action_net.weight`` is what it was."""

    autocast_dtype: torch.dtype | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.autocast_dtype is None:
            return super().forward(x)
        with torch.autocast(x.device.type, dtype=self.autocast_dtype):
            return super().forward(x).float()


class LeanMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's distribution wrapper, holding a :class:`LeanMaskedCategorical`; its action head is a
    :class:`MixedLinear`."""

    distribution: LeanMaskedCategorical  # type: ignore[assignment]

    def proba_distribution_net(self, latent_dim: int) -> torch.nn.Module:
        return MixedLinear(latent_dim, self.action_dim)

    def proba_distribution(self, action_logits: torch.Tensor) -> LeanMaskableCategoricalDistribution:
        self.distribution = LeanMaskedCategorical(action_logits.reshape(-1, self.action_dim))
        return self

    def mode(self) -> torch.Tensor:
        return self.distribution.mode()


class MixedMlpExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` (same layers, same parameter names) whose layers can run under CPU autocast."""

    autocast_dtype: torch.dtype | None = None

    def _mixed(self, net: torch.nn.Module, features: torch.Tensor) -> torch.Tensor:
        if self.autocast_dtype is None:
            return net(features)
        with torch.autocast(features.device.type, dtype=self.autocast_dtype):
            return net(features).float()

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Both latents; under autocast the features are cast to the low precision once for the two networks (the
        first layer's input is the widest array of an update: autocast would cast it once per network)."""
        if self.autocast_dtype is not None and features.is_floating_point():
            features = features.to(self.autocast_dtype)
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self._mixed(self.policy_net, features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self._mixed(self.value_net, features)


class LeanMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with :class:`LeanMaskedCategorical` and :meth:`set_precision`.

    Same network, same parameter names: a checkpoint of sb3-contrib's ``MlpPolicy`` loads into it
    (``load_state_dict``) and plays the same.
    """

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = MixedMlpExtractor(self.features_dim, net_arch=self.net_arch,
                                               activation_fn=self.activation_fn, device=self.device)  # fmt: skip

    def _build(self, lr_schedule) -> None:
        if not isinstance(self.action_dist, MaskableCategoricalDistribution):
            raise ValueError(f"LeanMaskablePolicy needs a Discrete action space, not {self.action_space}")
        self.action_dist = LeanMaskableCategoricalDistribution(int(self.action_space.n))
        super()._build(lr_schedule)

    def set_precision(self, precision: str) -> None:
        """``"float32"`` or ``"bfloat16"`` (the hidden layers under autocast; see the module docstring)."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: allowed {', '.join(PRECISIONS)}")
        for module in (self.mlp_extractor, *self.modules()):
            if isinstance(module, (MixedMlpExtractor, MixedLinear)):
                module.autocast_dtype = PRECISIONS[precision]

    @property
    def precision(self) -> str:
        dtype = self.mlp_extractor.autocast_dtype
        return next(name for name, d in PRECISIONS.items() if d == dtype)


__all__ = [
    "LeanMaskableCategoricalDistribution",
    "LeanMaskablePolicy",
    "LeanMaskedCategorical",
    "MixedLinear",
    "MixedMlpExtractor",
]
