"""What a learned policy sees and how its macro accusation is chosen: one pipeline for the env and the players.

A policy is trained on the single-agent env's learner inputs (``training.learner_core``) and later
plays as a batched player (``training.policy.PolicyAgent``, ``training.rllib_module.RllibAgent``,
league snapshots, ``agents.callable_player.CallablePlayer``). Both build their inputs with
:func:`learner_observation`, so a trained player sees exactly what it was trained on:

* ``observation="full"``: the engine's observation, followed by the belief features when ``belief``;
* ``observation="compact"`` (needs ``belief``): :class:`agents.compact_observation.CompactObservation`;
* ``accusation_features`` (advised learners whose advisor is an expert): followed by the
  :mod:`agents.accusation_features` slots (p1, danger, hypotheses left ... of the expert for the seat).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.accusation_features import ACCUSATION_SIZE, AccusationFeatures
from agents.belief import BeliefTracker, belief_size
from agents.compact_observation import CompactObservation, check_observation, compact_size
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules.config import RulesConfig


def learner_obs_size(config: RulesConfig, engine_size: int, belief: bool, observation: str = "full",
                     accusation_features: bool = False) -> int:  # fmt: skip
    """Length of the learner observation for these options."""
    check_observation(observation, belief)
    extra = ACCUSATION_SIZE if accusation_features else 0
    if observation == "compact":
        return compact_size(config) + extra
    return engine_size + (belief_size(config.players) if belief else 0) + extra


def learner_observation(obs: np.ndarray, tracker: BeliefTracker | None, idx: np.ndarray,
                        compact: CompactObservation | None = None,
                        accusation: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:  # fmt: skip
    """(n, D) learner observations of games ``idx`` from their engine observations ``obs`` (n, D_engine).

    ``tracker`` (None: no belief features) is updated here; ``compact`` (None: the full observation)
    builds the compact one; ``accusation(idx)`` (None: none) gives the accusation slots
    (:mod:`agents.accusation_features`) appended last.
    """
    if tracker is None:
        return obs
    tracker.update(idx)
    if compact is not None:
        out = compact.encode(obs, tracker, idx)
    else:
        out = np.concatenate([obs, tracker.features(idx)], 1)
    if accusation is not None:
        out = np.concatenate([out, accusation(idx)], 1)
    return out


class LearnerInputs:
    """Mixin for players that see a game as the single-agent env's learner does.

    Set ``use_belief``, ``observation`` (``"full"`` or ``"compact"``) and ``accusation_features`` from
    what the policy was trained with; with ``accusation_features`` override :meth:`_feature_expert` (the
    expert whose machinery computes them: the advisor). Each player keeps its own notebook (``_belief``;
    set it and ``_accusation`` to None in a copy).
    """

    use_belief: bool = False
    observation: str = "full"
    seed: int | None = None
    _belief: BeliefTracker | None = None
    _compact: CompactObservation | None = None
    accusation_features: bool = False
    _accusation: AccusationFeatures | None = None

    def _feature_expert(self) -> Any:
        raise NotImplementedError("accusation_features needs the expert that computes them")

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

        def accuse(rows: np.ndarray, legal: np.ndarray) -> np.ndarray:
            return belief.best_accusations(idx[rows], legal)

        features = None
        if self.accusation_features:
            if self._accusation is None:
                self._accusation = AccusationFeatures()
            acc, expert = self._accusation, self._feature_expert()
            features = lambda games: acc.encode(expert, view, games)  # noqa: E731
            accuse_belief = accuse

            def accuse(rows: np.ndarray, legal: np.ndarray) -> np.ndarray:
                return acc.accuse(idx[rows], legal, accuse_belief)

        obs = learner_observation(obs, belief, idx, compact, features)
        return obs, accuse


__all__ = ["LearnerInputs", "learner_obs_size", "learner_observation"]
