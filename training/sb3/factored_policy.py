"""A MaskablePPO policy whose suggestion logits have a per-card part: ``policy: factored`` in a training config.

In the learner's action spaces (:mod:`cluedo_env.envs.learner_actions`) a suggestion is one of 324 ids, one per
(suspect, weapon, room) triple, index ``(s * 6 + w) * 9 + r``. A plain MLP head gives each triple its own logit,
so what it learns about one suggestion ("naming the Rope tells me something") does not carry over to the 53 other
triples with the Rope. This head adds to each suggestion logit the sum of three per-card scores, one linear
layer of the same latent (21 outputs)::

    logit(s, w, r) = mlp_logit(s, w, r) + score[s] + score[6 + w] + score[12 + r]

so that the policy can learn card preferences from every suggestion it makes. Everything else (the latent
network, the value head, the other actions' logits, masking) is sb3-contrib's ``MaskableActorCriticPolicy``
with the leaner masked distribution and the bfloat16 option of :mod:`cluedo_env.training.sb3.lean_policy`; the policy
is still
learned end to end by PPO, no rule picks the cards. Checkpoints name this class, so they load
with ``cluedo_env.training.sb3.checkpoints.load_model`` as any other (this module must be importable, as it is in the
package).
"""

from __future__ import annotations

from typing import Any

import torch
from cluedo_env.training.sb3.lean_policy import LeanMaskablePolicy, MixedLinear
from torch import nn

from cluedo_env.envs.learner_actions import MACRO_SHIFT, NUM_TRIPLES
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS

_S, _W = 6, 6  # suspects, weapons (rooms: the rest of the 21 cards)


def _triples(c: torch.Tensor) -> torch.Tensor:
    """(n, 21) per-card scores -> (n, 324) triple scores ``score[s] + score[6 + w] + score[12 + r]``."""
    add = c[:, :_S, None, None] + c[:, None, _S : _S + _W, None] + c[:, None, None, _S + _W :]
    return add.reshape(len(c), NUM_TRIPLES)


class FactoredSuggestionHead(nn.Module):
    """The action head: ``base`` (Linear latent -> A logits) plus per-card scores on the 324 suggestion ids, and with
    ``accuse0`` its own per-card scores on the 324 accusation ids (the same sum, so that "the Rope is likely in the
    envelope" carries over to every accusation naming it)."""

    def __init__(self, base: nn.Linear, suggest0: int, accuse0: int | None = None) -> None:
        super().__init__()
        self.base = base
        self.suggest0 = int(suggest0)
        self.accuse0 = None if accuse0 is None else int(accuse0)
        self.cards = MixedLinear(base.in_features, NUM_CARDS)  # low precision with the base under bfloat16
        self.accuse_cards = None if accuse0 is None else MixedLinear(base.in_features, NUM_CARDS)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        logits = self.base(latent)
        parts, at = [], 0
        blocks = [(self.suggest0, self.cards)]
        if self.accuse_cards is not None:
            blocks.append((self.accuse0, self.accuse_cards))
        for first, cards in blocks:
            parts += [logits[:, at:first], logits[:, first : first + NUM_TRIPLES] + _triples(cards(latent))]
            at = first + NUM_TRIPLES
        return torch.cat([*parts, logits[:, at:]], 1)


class FactoredMaskablePolicy(LeanMaskablePolicy):
    """:class:`~cluedo_env.training.sb3.lean_policy.LeanMaskablePolicy` with :class:`FactoredSuggestionHead`
    (``suggest0``: the
    first suggestion id of the learner's action space, :func:`suggest0_of`)."""

    def __init__(self, *args: Any, suggest0: int = A.SUGGEST0, accuse0: int | None = None, **kwargs: Any) -> None:
        self.suggest0 = int(suggest0)
        self.accuse0 = None if accuse0 is None else int(accuse0)
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        if self.action_net.out_features < self.suggest0 + NUM_TRIPLES:
            raise ValueError(f"factored policy: {self.action_net.out_features} actions have no suggestion ids at "
                             f"{self.suggest0}..{self.suggest0 + NUM_TRIPLES - 1}")  # fmt: skip
        if self.accuse0 is not None and self.action_net.out_features < self.accuse0 + NUM_TRIPLES:
            raise ValueError(f"factored policy: {self.action_net.out_features} actions have no accusation ids at "
                             f"{self.accuse0}..{self.accuse0 + NUM_TRIPLES - 1}")  # fmt: skip
        self.action_net = FactoredSuggestionHead(self.action_net, self.suggest0, self.accuse0)
        if self.ortho_init:  # small initial scores, as SB3 does for the action head
            self.action_net.cards.apply(lambda m: self.init_weights(m, gain=0.01))
            if self.action_net.accuse_cards is not None:
                self.action_net.accuse_cards.apply(lambda m: self.init_weights(m, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["suggest0"] = self.suggest0
        data["accuse0"] = self.accuse0
        return data


def mlp_to_factored_state(state: dict[str, torch.Tensor], policy: FactoredMaskablePolicy) -> dict[str, torch.Tensor]:
    """The state dict of an ``MlpPolicy`` with the same net as ``policy``, for ``policy``: its action head becomes the
    factored head's ``base`` and the card scores start at zero, so the factored policy plays as the MLP did."""
    out = {k: v for k, v in state.items() if not k.startswith("action_net.")}
    out["action_net.base.weight"] = state["action_net.weight"]
    out["action_net.base.bias"] = state["action_net.bias"]
    out["action_net.cards.weight"] = torch.zeros_like(policy.action_net.cards.weight)
    out["action_net.cards.bias"] = torch.zeros_like(policy.action_net.cards.bias)
    if policy.action_net.accuse_cards is not None:
        out["action_net.accuse_cards.weight"] = torch.zeros_like(policy.action_net.accuse_cards.weight)
        out["action_net.accuse_cards.bias"] = torch.zeros_like(policy.action_net.accuse_cards.bias)
    return out


def suggest0_of(macro_moves: bool) -> int:
    """The first suggestion id of the learner's action space (macro moves shift SUGGEST..ACCUSE down)."""
    return A.SUGGEST0 - (MACRO_SHIFT if macro_moves else 0)


def accuse0_of(macro_moves: bool, macro_accuse: bool) -> int | None:
    """The first accusation id of the learner's action space, or None where it has no 324 accusations (the macro
    accusation is one id)."""
    return None if macro_accuse else A.ACCUSE0 - (MACRO_SHIFT if macro_moves else 0)


__all__ = ["FactoredMaskablePolicy", "FactoredSuggestionHead", "accuse0_of", "mlp_to_factored_state", "suggest0_of"]
