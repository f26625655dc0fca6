"""``python_cluedo``: Cluedo as an OpenSpiel game (sequential, explicit chance, imperfect information).

Written in OpenSpiel's own style for Python games (a ``pyspiel.GameType`` and ``pyspiel.GameInfo``
as data, a ``pyspiel.Game`` subclass, a ``pyspiel.State`` subclass, an observer); the rules are the
reference engine's (:mod:`cluedo_env.engine.reference`), the chance nodes :mod:`.core`'s, what a
seat may know :mod:`.observer`'s. Parameters: ``preset`` and ``players``, ``max_turns`` (R-E3), and
each rule flag of :class:`~cluedo_env.rules.config.RulesConfig`, where an empty string (``dice``: 0)
keeps the preset's value; boolean flags are the strings ``"true"``/``"false"``::

    pyspiel.load_game("python_cluedo", {"preset": "cards", "players": 3})
    pyspiel.load_game("python_cluedo(preset=classic,players=4,dice=2)")
"""

from __future__ import annotations

import random
from typing import Any

import pyspiel

from cluedo_env.openspiel.core import CARD_STEPS, CHANCE, ENVELOPE_STEPS, Core
from cluedo_env.openspiel.observer import CluedoObserver, events, max_events
from cluedo_env.openspiel.resample import knowledge, sample_deal
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, NUM_CARDS, ROOMS, SUSPECTS, WEAPONS
from cluedo_env.rules.config import PRESETS, ConfigError, RulesConfig

SHORT_NAME = "python_cluedo"
SERIAL_HEADER = "python_cluedo actions"
_FLAGS = (
    "board",
    "suggestion_on_entry",
    "refutation",
    "accuse_after_suggestion",
    "accusation_in_room",
    "last_standing",
)
_BOOL_FLAGS = ("accuse_after_suggestion", "accusation_in_room")
_DEFAULTS: dict[str, Any] = {"preset": "classic", "players": 4, "max_turns": 400, "dice": 0}
_DEFAULTS.update(dict.fromkeys(_FLAGS, ""))

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Cluedo",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,  # +1 for the winner, -1 for each other seat (R-E1)
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=6,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


def config_from_params(params: dict[str, Any]) -> RulesConfig:
    """The rules of a parameter dict: the preset, then every flag given (empty string / dice 0: the preset's)."""
    unknown = sorted(set(params) - set(_DEFAULTS))
    if unknown:
        raise ConfigError(f"unknown python_cluedo parameter(s) {unknown} (allowed: {', '.join(_DEFAULTS)})")
    preset = params.get("preset", "classic")
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r} (presets are: {', '.join(PRESETS)})")
    overrides: dict[str, Any] = {"players": params.get("players", 4), "max_turns": params.get("max_turns", 400)}
    if params.get("dice", 0):
        overrides["dice"] = params["dice"]
    for flag in _FLAGS:
        value = params.get(flag, "")
        if value == "":
            continue
        if flag in _BOOL_FLAGS:
            if value not in ("true", "false"):
                raise ConfigError(f"{flag}={value!r} is not allowed ('true', 'false', or '' for the preset's value)")
            value = value == "true"
        overrides[flag] = value
    return RulesConfig.from_preset(preset, **overrides)


class CluedoGame(pyspiel.Game):
    """The game: rules from the parameters, sizes for OpenSpiel's ``GameInfo``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.config = config_from_params(params)
        cfg = self.config
        info = pyspiel.GameInfo(
            num_distinct_actions=A.NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,  # deal: a card id; weapons: a room 0..8; dice: a total 1..12
            num_players=cfg.players,
            min_utility=-1.0,
            max_utility=1.0,
            max_game_length=max_events(cfg) + CARD_STEPS + 6,  # every event after the deal, and the deal
        )
        super().__init__(_GAME_TYPE, info, {**_DEFAULTS, **params})

    def new_initial_state(self) -> CluedoState:
        return CluedoState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> CluedoObserver:
        return CluedoObserver(self.config, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)

    def deserialize_state(self, text: str) -> CluedoState:
        """A state from :meth:`CluedoState.serialize`'s text: the actions, replayed through the engine (no pickle)."""
        lines = str(text).strip().splitlines()
        if not lines or lines[0] != SERIAL_HEADER:
            raise ValueError(f"not a python_cluedo state: the first line must be {SERIAL_HEADER!r}")
        state = self.new_initial_state()
        for n, line in enumerate(lines[1:], start=2):
            if not line.strip().lstrip("-").isdigit():
                raise ValueError(f"line {n}: {line!r} is not an action (one integer per line)")
            state.apply_action(int(line))
        return state


class CluedoState(pyspiel.State):
    """One game in progress; all of it lives in ``_core`` (copied cheaply by OpenSpiel's clone)."""

    def __init__(self, game: CluedoGame) -> None:
        super().__init__(game)
        self._core = Core(game.config)

    def current_player(self) -> int:
        core = self._core
        if core.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        if core.is_chance():
            return pyspiel.PlayerId.CHANCE
        assert core.game is not None
        return core.game.actor

    def _legal_actions(self, player: int) -> list[int]:
        return self._core.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._core.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self._core.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        core = self._core
        if player != CHANCE:
            return A.describe(action)
        if core.pending_roll:
            return f"dice total {action}"
        k = len(core.deal)
        if k < ENVELOPE_STEPS:
            return f"envelope: {CARD_NAMES[action]}"
        if k < CARD_STEPS:
            return f"deal to p{(k - ENVELOPE_STEPS) % core.config.players}: {CARD_NAMES[action]}"
        return f"{WEAPONS[k - CARD_STEPS]} starts in {ROOMS[action]}"

    def is_terminal(self) -> bool:
        return self._core.is_terminal()

    def returns(self) -> list[float]:
        return self._core.returns()

    def serialize(self) -> str:
        """The actions so far, one a line, after a header (:meth:`CluedoGame.deserialize_state` replays them)."""
        return "\n".join([SERIAL_HEADER, *map(str, self._core.actions())])

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CluedoState:
        """A state ``player_id`` cannot tell from this one: a consistent deal (:mod:`.resample`), the same
        public events, and for each SHOW the seat did not see a card the new refuter holds."""
        core = self._core
        game = self.get_game()
        if core.game is None:  # during the deal: nothing to hide yet but the other seats' cards
            raise ValueError("resample_from_infostate needs a complete deal (call it at a player's decision)")
        rng = random.Random(int(probability_sampler() * 2**53))
        envelope, hands = sample_deal(knowledge(core, player_id), rng)
        P = core.config.players
        deck = [hands[k % P][k // P] for k in range(NUM_CARDS - 3)]
        new = game.new_initial_state()
        for outcome in [*envelope, *deck, *core.weapon_rooms_so_far()]:
            new.apply_action(outcome)
        for _, action, _, visible in events(core, player_id, private=True):
            if not visible:  # a card shown to someone else: any the refuter holds will do (R-G6)
                action = rng.choice(new.legal_actions())
            new.apply_action(action)
        return new

    def __str__(self) -> str:
        core = self._core
        if core.game is None:
            return f"dealing: {len(core.deal)} of {core.setup_steps} setup outcomes"
        g = core.game
        lines = [
            f"turn {g.turn_count}, p{g.current} ({SUSPECTS[g.current]}) to play, phase {A.PHASE_NAMES[g.phase]}",
            "envelope: " + ", ".join(CARD_NAMES[c] for c in g.envelope),
        ]
        lines += [f"p{q}: " + ", ".join(CARD_NAMES[c] for c in hand) for q, hand in enumerate(g.hands)]
        lines.append(f"events: {len(core.log)}" + (", awaiting the dice" if core.pending_roll else ""))
        return "\n".join(lines)


pyspiel.register_game(_GAME_TYPE, CluedoGame)
