"""What a learned policy sees and how its macro accusation is chosen: one pipeline for the env and the players.

A policy is trained on the single-agent env's learner inputs (``training.learner_core``) and later
plays as a batched player (``training.policy.PolicyAgent``, ``training.rllib_module.RllibAgent``,
league snapshots, ``agents.callable_player.CallablePlayer``). Both build their inputs with
:func:`learner_observation`, so a trained player sees exactly what it was trained on:

* ``observation="full"``: the engine's observation, followed by the belief features when ``belief``;
* ``observation="compact"`` (needs ``belief``): :class:`agents.compact_observation.CompactObservation`.
"""

from __future__ import annotations

import numpy as np

from agents.belief import BeliefTracker, belief_size
from agents.compact_observation import CompactObservation, check_observation, compact_size
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules.config import RulesConfig


def learner_obs_size(config: RulesConfig, engine_size: int, belief: bool, observation: str = "full") -> int:
    """Length of the learner observation for these options."""
    check_observation(observation, belief)
    if observation == "compact":
        return compact_size(config)
    return engine_size + (belief_size(config.players) if belief else 0)


def learner_observation(obs: np.ndarray, tracker: BeliefTracker | None, idx: np.ndarray,
                        compact: CompactObservation | None = None) -> np.ndarray:  # fmt: skip
    """(n, D) learner observations of games ``idx`` from their engine observations ``obs`` (n, D_engine).

    ``tracker`` (None: no belief features) is updated here; ``compact`` (None: the full observation)
    builds the compact one.
    """
    if tracker is None:
        return obs
    tracker.update(idx)
    if compact is not None:
        return compact.encode(obs, tracker, idx)
    return np.concatenate([obs, tracker.features(idx)], 1)


class LearnerInputs:
    """Mixin for players that see a game as the single-agent env's learner does.

    Set ``use_belief`` and ``observation`` (``"full"`` or ``"compact"``) from what the policy was
    trained with. Each player keeps its own notebook (``_belief``; set it to None in a copy).
    """

    use_belief: bool = False
    observation: str = "full"
    seed: int | None = None
    _belief: BeliefTracker | None = None
    _compact: CompactObservation | None = None

    def _tracker(self, view: PlayerView) -> BeliefTracker:
        self._belief = BeliefTracker.for_player(self._belief, view, self.seed)
        return self._belief

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        if self.use_belief:
            self._tracker(view).reset(np.asarray(idx, np.int64), view.seat)

    def learner_inputs(self, view: PlayerView, idx: np.ndarray):
        """(observations (n, D) int8, the macro accusation's chooser or None) for games ``idx``."""
        obs = view.observe(idx)
        if not self.use_belief:
            return obs, None
        compact = None
        if self.observation == "compact":
            if self._compact is None or self._compact.config != view.config:
                self._compact = CompactObservation(view.config)
            compact = self._compact
        belief = self._tracker(view)
        obs = learner_observation(obs, belief, idx, compact)
        return obs, (lambda rows, legal: belief.best_accusations(idx[rows], legal))


__all__ = ["LearnerInputs", "learner_obs_size", "learner_observation"]
