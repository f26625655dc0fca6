"""What a learned policy sees and how its macro accusation is chosen: one pipeline for the env and the players.

A policy is trained on the single-agent env's learner inputs (``cluedo_env.training.learner_core``) and later
plays as a batched player (``cluedo_env.training.sb3.checkpoints.PolicyAgent``,
``cluedo_env.training.rllib.module.RllibAgent``,
league snapshots, ``cluedo_env.agents.learner.callable_player.CallablePlayer``). Both build their inputs with
:func:`learner_observation`, so a trained player sees exactly what it was trained on:

* ``observation="full"``: the engine's observation, followed by the belief features when ``belief``;
* ``observation="compact"`` (needs ``belief``):
:class:`cluedo_env.agents.learner.compact_observation.CompactObservation`;
* ``accusation_features`` (advised learners whose advisor is an expert, or any learner that asks for them):
  followed by the :mod:`cluedo_env.agents.learner.accusation_features` slots (p1, danger, hypotheses left ... of
  the expert for the seat);
* ``holder_probabilities`` (learners without an advisor that ask for them): followed by the
  :mod:`cluedo_env.agents.learner.holder_features` slots (who the seat believes holds each card).

Two learner options live here too, since the env and the players must apply them alike:

* the accusation gate (``accuse_gate``, with the macro accusation; :func:`gate_accusation`): the one
  "accuse" action is open only where the learner's notebook proves the triple (``"solved"``), or where the
  triple it would accuse has at least probability ``p`` under the notebook's marginals (a number in (0, 1]).
  The policy cannot gamble below that, so early in training it cannot throw games away while it learns the
  rest (suggestions, movement). It only masks: the rules (R-A1: accuse on one's own turn) are the engine's.
* potential-based reward shaping (``shaping``; :func:`envelope_potential`, training only): the env adds
  ``gamma * phi(s') - phi(s)`` to each learner step, ``phi(s) = -coef * m(s)`` with ``m`` a measure of what the
  learner's notebook has still to find (``triples``: the log of the envelope triples it has not ruled out;
  ``unknown``: the cards whose envelope status it has not proved) and ``phi = 0`` once the episode is over.
  Such shaping leaves the optimal policies unchanged (Ng, Harada and Russell 1999); over an episode the terms sum
  to ``-phi(s_0)`` (``gamma = 1``). It reads the seat's own notebook only, never the hidden deal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from cluedo_env.agents.learner.accusation_features import ACCUSATION_SIZE, AccusationFeatures, perception_expert
from cluedo_env.agents.learner.belief import BeliefTracker, belief_size
from cluedo_env.agents.learner.compact_observation import CompactObservation, check_observation, compact_size
from cluedo_env.agents.learner.holder_features import encode_holders, holder_size

from cluedo_env.checks import check_bool
from cluedo_env.engine.observation import packed_layout
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError, RulesConfig

SHAPING_KINDS = ("triples", "unknown")
ACCUSE_GATES = ("solved",)  # or a probability threshold in (0, 1]


def check_accuse_gate(gate: Any, macro_accuse: bool) -> None:
    """Raise :class:`ConfigError` unless ``gate`` is None, ``"solved"`` or a number in (0, 1] (needs the macro
    accusation)."""
    if gate is None:
        return
    is_num = isinstance(gate, (int, float)) and not isinstance(gate, bool)
    if not (gate in ACCUSE_GATES or (is_num and 0 < gate <= 1)):
        raise ConfigError(f"accuse_gate={gate!r} is not allowed (null, 'solved', or a probability in (0, 1])")
    if not macro_accuse:
        raise ConfigError("accuse_gate needs macro_accuse=True (it gates the one macro accusation)")


def check_packed_observation(packed: Any, observation: str, belief: bool) -> None:
    """Raise unless ``packed`` is a bool (:class:`OptionTypeError`), True only with the engine's observation alone
    (:class:`ConfigError`).

    Packed rows are the engine's observation in bits (:func:`cluedo_env.engine.observation.packed_layout`); the
    belief features and the compact observation are other values appended or derived, with no packed form.
    """
    if check_bool("packed_observation", packed) and (observation != "full" or belief):
        raise ConfigError(f"packed_observation=True packs the engine's observation alone: it needs observation='full' "
                          f"and belief=False (got observation={observation!r}, belief={belief!r})")


def check_perception(name: str, wanted: Any, belief: bool, advisor: Any) -> bool:
    """``wanted`` for the option ``name`` (``accusation_features`` or ``holder_probabilities``) as a bool
    (:class:`OptionTypeError` otherwise); :class:`ConfigError` where the slots cannot be built: they need the
    notebook (``belief``), and come from an expert that only perceives, which an advised learner does not have
    (an expert advisor gives its learner the accusation slots already)."""
    if not check_bool(name, wanted):
        return False
    if not belief:
        raise ConfigError(f"{name}=True needs belief=True (the slots are read from the seat's notebook)")
    if advisor is not None:
        raise ConfigError(f"{name}=True is for learners without an advisor: an expert advisor gives its learner the "
                          "accusation slots already, and another advisor cannot compute them")
    return True


def check_shaping(shaping: Any, belief: bool) -> dict | None:
    """The shaping options with their defaults (``{kind, coef, gamma}``), or None; :class:`ConfigError` if bad."""
    if shaping is None:
        return None
    if not isinstance(shaping, dict):
        raise ConfigError(f"shaping={shaping!r} is not allowed (null, or a mapping {{kind: triples, coef: 0.05}})")
    unknown = sorted(set(shaping) - {"kind", "coef", "gamma"})
    if unknown:
        raise ConfigError(f"shaping: unknown key(s) {unknown} (allowed: kind, coef, gamma)")
    out = {"kind": shaping.get("kind"), "coef": shaping.get("coef", 0.05), "gamma": shaping.get("gamma", 1.0)}
    if out["kind"] not in SHAPING_KINDS:
        raise ConfigError(f"shaping.kind={out['kind']!r} is not allowed (one of {', '.join(SHAPING_KINDS)})")
    for key, hi in (("coef", 10.0), ("gamma", 1.0)):
        v = out[key]
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= hi):
            raise ConfigError(f"shaping.{key}={v!r} is not allowed (a number from 0 to {hi:g})")
    if not belief:
        raise ConfigError("shaping needs belief=True (the potential is read from the learner's notebook)")
    return out


def envelope_potential(tracker: BeliefTracker, idx: np.ndarray, kind: str, coef: float) -> np.ndarray:
    """(n,) ``phi = -coef * m`` of games ``idx`` from the learner's notebook (``tracker``, updated): ``m`` is
    ``log`` of the envelope triples not ruled out (``triples``) or the cards of unproved envelope status
    (``unknown``); 0 for a solved notebook."""
    if kind == "triples":
        m = np.log(tracker.envelope_candidates(idx).prod(1).astype(np.float64))
    elif kind == "unknown":
        m = tracker.envelope_unknown(idx).astype(np.float64)
    else:
        raise ConfigError(f"shaping.kind={kind!r} is not allowed (one of {', '.join(SHAPING_KINDS)})")
    return -float(coef) * m


def gate_accusation(legal: np.ndarray, engine_mask: np.ndarray, accuse_id: int, tracker: BeliefTracker,
                    idx: np.ndarray, gate: Any) -> np.ndarray:  # fmt: skip
    """Close the macro accusation ``legal[:, accuse_id]`` (in place; returned) in games ``idx`` where ``gate``
    (``"solved"`` or a probability) does not let the learner accuse; kept open where it is the only legal action."""
    if gate is None:
        return legal
    rows = np.flatnonzero(legal[:, accuse_id])
    if not len(rows):
        return legal
    games = np.asarray(idx, np.int64)[rows]
    if gate == "solved":
        ok = tracker.solved(games)
    else:
        acc = np.asarray(engine_mask, bool)[rows, A.ACCUSE0 :]
        ok = tracker.solved(games) | (tracker.best_probability(games, acc) >= float(gate) - 1e-9)
    others = legal[rows].sum(1) > 1
    legal[rows[~ok & others], accuse_id] = False
    return legal


def learner_obs_size(config: RulesConfig, engine_size: int, belief: bool, observation: str = "full",
                     accusation_features: bool = False, packed: bool = False,
                     holder_probabilities: bool = False) -> int:  # fmt: skip
    """Length of the learner observation for these options (``packed``: bytes of a packed row)."""
    check_observation(observation, belief)
    if packed:
        check_packed_observation(packed, observation, belief)
        return packed_layout(config).size
    extra = (ACCUSATION_SIZE if accusation_features else 0) + (holder_size(config.players) if holder_probabilities
                                                                else 0)  # fmt: skip
    if observation == "compact":
        return compact_size(config) + extra
    return engine_size + (belief_size(config.players) if belief else 0) + extra


def learner_observation(obs: np.ndarray, tracker: BeliefTracker | None, idx: np.ndarray,
                        compact: CompactObservation | None = None,
                        extra: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:  # fmt: skip
    """(n, D) learner observations of games ``idx`` from their engine observations ``obs`` (n, D_engine).

    ``tracker`` (None: no belief features) is updated here; ``compact`` (None: the full observation)
    builds the compact one; ``extra(idx)`` (None: none) gives the slots appended last: the accusation
    features (:mod:`cluedo_env.agents.learner.accusation_features`), then the holder probabilities
    (:mod:`cluedo_env.agents.learner.holder_features`), each where asked for.
    """
    if tracker is None:
        return obs
    tracker.update(idx)
    if compact is not None:
        out = compact.encode(obs, tracker, idx)
    else:
        out = np.concatenate([obs, tracker.features(idx)], 1)
    if extra is not None:
        out = np.concatenate([out, extra(idx)], 1)
    return out


class LearnerInputs:
    """Mixin for players that see a game as the single-agent env's learner does.

    Set ``use_belief``, ``observation`` (``"full"`` or ``"compact"``), ``packed_observation``,
    ``accusation_features`` and ``holder_probabilities`` from what the policy was trained with. The slots of the
    last two come from :meth:`_feature_expert`: an expert that only perceives, or the advisor of an advised player
    (which overrides it). Each player keeps its own notebook and expert (``_belief``, ``_perceiver``,
    ``_accusation``: set them to None in a copy).
    """

    use_belief: bool = False
    observation: str = "full"
    packed_observation: bool = False
    seed: int | None = None
    _belief: BeliefTracker | None = None
    _compact: CompactObservation | None = None
    accusation_features: bool = False
    holder_probabilities: bool = False
    _accusation: AccusationFeatures | None = None
    _perceiver: Any = None

    def _feature_expert(self) -> tuple[Any, bool]:
        """The expert whose machinery computes the accusation and holder slots, and whether it is this player's
        advisor (only an advisor fills the ``expert_rule`` slot). Here: an expert at its defaults that only
        perceives."""
        if self._perceiver is None:
            self._perceiver = perception_expert(self.seed)
        return self._perceiver, False

    def _tracker(self, view: PlayerView) -> BeliefTracker:
        self._belief = BeliefTracker.for_player(self._belief, view, self.seed)
        return self._belief

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        if self.use_belief:
            self._tracker(view).reset(np.asarray(idx, np.int64), view.seat)
        if self.accusation_features or self.holder_probabilities:
            expert, advises = self._feature_expert()
            if not advises:  # an advisor is reset by the player it advises
                expert.reset(view, idx)

    def learner_inputs(self, view: PlayerView, idx: np.ndarray):
        """(observations (n, D) int8, or packed (n, size) uint8 rows, the macro accusation's chooser or None) for
        games ``idx``."""
        obs = view.observe(idx, packed=self.packed_observation)
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

        pieces = []  # the extra slots, in order: accusation features, holder probabilities
        if self.accusation_features:
            if self._accusation is None:
                self._accusation = AccusationFeatures()
            acc, (expert, advises) = self._accusation, self._feature_expert()
            pieces.append(lambda games: acc.encode(expert, view, games, rule=advises))
            accuse_belief = accuse

            def accuse(rows: np.ndarray, legal: np.ndarray) -> np.ndarray:
                return acc.accuse(idx[rows], legal, accuse_belief)

        if self.holder_probabilities:
            expert = self._feature_expert()[0]
            pieces.append(lambda games: encode_holders(expert, view, games))
        obs = learner_observation(obs, belief, idx, compact, joined(pieces))
        return obs, accuse


def joined(pieces: list[Callable[[np.ndarray], np.ndarray]]) -> Callable[[np.ndarray], np.ndarray] | None:
    """One ``extra`` for :func:`learner_observation` from the callables of each extra piece (None: no piece)."""
    if not pieces:
        return None
    return lambda games: np.concatenate([piece(games) for piece in pieces], 1)


__all__ = [
    "ACCUSE_GATES", "SHAPING_KINDS", "LearnerInputs", "check_accuse_gate", "check_perception",
    "check_packed_observation", "check_shaping",
    "envelope_potential", "gate_accusation", "joined", "learner_obs_size", "learner_observation",
]  # fmt: skip
