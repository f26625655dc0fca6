"""Cluedo as a PettingZoo AEC environment, wrapped as PettingZoo's classic games are.

Usage (``tests/test_pettingzoo.py`` runs this example)::

    import cluedo_env

    env = cluedo_env.env(preset="classic", players=4, render_mode="ansi")
    env.reset(seed=42)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:  # a random legal action: obs["action_mask"] marks them
            action = env.action_space(agent).sample(obs["action_mask"])
        env.step(action)
    print(env.render())

``env(**kwargs)`` is :class:`raw_env` inside PettingZoo's classic-game wrappers (see below);
``raw_env`` is the bare :class:`~pettingzoo.AECEnv`. ``pettingzoo.make("aec", "cluedo_env/cluedo_v0", **kwargs)``
builds ``env(**kwargs)`` once ``cluedo_env`` has been imported.

Rules (any config of :mod:`cluedo_env.rules.config`)::

    env(preset="seed000", players=6, max_turns=200)       # a preset plus flags
    env(config="configs/cards.yaml")                      # a YAML rules file (flags override it)
    env(config=RulesConfig.from_preset("classic"))        # a RulesConfig, or a dict of flags

Agents: ``"player_0"`` .. ``"player_{P-1}"``; seat ``p`` plays suspect ``p`` in turn order
(Scarlet, Mustard, White, Green, Peacock, Plum; R-S1), and ``player_0`` moves first.
Eliminated players stay in ``agents`` until the game ends: they still refute (R-A4).

Turns (``agent_selection``): the engine's actor. That is the player whose turn it is, except while
a suggestion is being refuted: then the refuter acts out of turn, choosing the card to show
(SHOW actions, R-G6), and play returns to the suggester afterwards.

Spaces: ``action_space(agent)`` is ``Discrete(870)``, the flat action space of
:mod:`cluedo_env.rules.actions`. ``observation_space(agent)`` is a ``Dict`` of

* ``"observation"``: ``Box(0, 127, (D,), int8)``, that agent's own observation, seat-relative, exactly
  ``VectorEngine.observe(player=seat)`` (layout in docs/observation.md: D = 2628 with a board, 1385
  for the card-only game). It holds what the seat may know and nothing else (R-G7).
* ``"action_mask"``: ``Box(0, 1, (870,), int8)``, 1 for the legal actions; all zeros for an agent
  that is not to act now (and once the game is over).

Both methods return the same cached object for an agent every time.

Rewards (R-E1..R-E4): 0 on every step except the last: +1 for the winner and -1 for everyone
else (eliminated players included) when someone wins, -1 for all when everybody was eliminated;
``last()`` returns the reward accumulated since the agent last acted, as PettingZoo expects.
``terminations`` become True for all agents when the game is won or lost, ``truncations`` when it
is cut after ``max_turns`` turns (R-E3; all turns of all players counted; reward 0). ``infos`` are
empty dicts: everything an agent may know is in its observation, so no info can leak.

Illegal actions: ``raw_env.step`` raises :class:`~cluedo_env.rules.actions.IllegalActionError` naming the
action, the player and the phase, and leaves the game unchanged. ``env()`` uses PettingZoo's
``TerminateIllegalWrapper``, as the classic games do: an illegal action (with a warning) ends the
game at once, with reward -1 for the offender and 0 for the others, all agents terminated and
truncated. An action outside ``Discrete(870)`` (or not an integer) raises ``IllegalActionError`` before
PettingZoo's ``AssertOutOfBoundsWrapper`` assertion, so the check holds under ``python -O`` too.
The wrappers are PettingZoo's own classes (``OrderEnforcingWrapper`` outermost), subclassed only to
forward attributes faster (:mod:`cluedo_env.envs.wrappers`).

Seeding: ``reset(seed=s)`` seeds everything the game draws (envelope, deal, weapon rooms, dice)
with ``np.random.default_rng(s)``; ``reset()`` without a seed goes on with the same generator.
As in Gymnasium, the spaces are seeded apart (``env.action_space(a).seed(...)``).

Rendering (``render_mode``): ``"ansi"`` returns the board as text, ``"rgb_array"`` an (H, W, 3)
uint8 image, ``"human"`` shows the image in a window (where no display exists, ``render()``
raises :class:`cluedo_env.render.NoDisplayError`). All three come from :mod:`cluedo_env.render`.
**Viewpoint policy**: by default (``render_viewer=None``) a render shows the table as a spectator
sees it, public facts only: no hand, no envelope, no card shown in a refutation, so a screen that
several people watch reveals nothing. ``render_viewer="player_k"`` renders seat k's view (its own
hand, the cards shown to it and by it) for a person playing that seat. The viewer never follows
the agent to act, which would show each seat's secrets in turn.

Engine: the env steps :class:`~cluedo_env.engine.vector_engine.VectorEngine` at batch size 1, the
production engine; observations and masks are the engine's own (its compiled encoder), so they
equal ``VectorEngine.observe`` by construction. ``scripts/bench_aec.py`` measures the speed.

Errors: ``step`` before ``reset`` or after every agent has been removed at the end of a game
raises ``RuntimeError`` saying to call ``reset()``; ``last()`` then raises :class:`GameOverError`, an
unknown agent name :class:`UnknownAgentError` (both ``KeyError``s), a bad seed a ``CluedoError``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from cluedo_env.checks import check_seed
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.envs.seat_spaces import SpacesBySeat
from cluedo_env.envs.wrappers import wrap
from cluedo_env.errors import GameOverError, UnknownAgentError
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import RulesConfig, make_config


class raw_env(SpacesBySeat, AECEnv):  # noqa: N801 (PettingZoo's name)
    """Cluedo as an AEC env on one game; see the module docstring."""

    metadata = {
        "name": "cluedo_v0",
        "render_modes": ["ansi", "rgb_array", "human"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        config: RulesConfig | str | dict[str, Any] | None = None,
        *,
        preset: str | None = None,
        render_mode: str | None = None,
        render_viewer: str | None = None,
        **flags: Any,
    ) -> None:
        super().__init__()
        if config is not None and preset is not None:
            raise TypeError("pass the rules either as config=... or as preset=..., not both")
        self.config = make_config(config if config is not None else preset, **flags)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        P = self.config.players
        self.possible_agents = [agent_name(p) for p in range(P)]
        self.agent_name_mapping = {agent: p for p, agent in enumerate(self.possible_agents)}
        if render_viewer is not None and render_viewer not in self.agent_name_mapping:
            raise ValueError(f"render_viewer={render_viewer!r} must be None or one of {self.possible_agents}")
        self.render_viewer = render_viewer
        self._eng = VectorEngine(self.config, batch_size=1)
        self._eng.reset(seed=None)  # fresh entropy; reset() without a seed goes on from here
        self._action = np.zeros(1, np.int64)
        self._acting = -1
        D = self._eng.observation_size
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0, 127, (D,), np.int8),
                    "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(A.NUM_ACTIONS) for agent in self.possible_agents}
        self._window: Any = None

    # -------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        check_seed(seed)
        if seed is not None:
            self._eng.reset(seed=seed)
        else:  # the game's random stream goes on
            self._eng.reset_games(np.zeros(1, np.int64))
        self._new_episode()

    def load_snapshot(self, snapshot: dict[str, Any]) -> None:
        """Continue from a game state (docs/snapshot.md, e.g. from :meth:`snapshot`), as after a reset.

        For tests and analysis; the snapshot's rules must be this env's. Chance goes on from the
        env's random stream. A snapshot that cannot be loaded raises and changes nothing.
        """
        self._eng.import_game(0, snapshot)
        self._new_episode()

    def snapshot(self) -> dict[str, Any]:
        """The full game state as a snapshot dict, hidden cards included: not for agents."""
        return self._eng.export_game(0)

    @property
    def engine(self) -> VectorEngine:
        """The batched engine (batch size 1) this env steps, for tools such as recorders.

        It holds the whole game, hidden cards included: never hand it to an agent.
        """
        return self._eng

    def _actor(self) -> int:
        """The seat to act (-1 once the game is over), cached in ``_acting`` after each change."""
        eng = self._eng
        phase = int(eng.phase[0])
        self._acting = -1 if phase == A.OVER else int(eng.refuter[0] if phase == A.REFUTE else eng.current[0])
        return self._acting

    def _new_episode(self) -> None:
        agents = self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {agent: {} for agent in agents}
        self._skip_agent_selection = None
        if self._actor() < 0:  # a loaded finished game
            self._game_over()
        else:
            self.agent_selection = self.possible_agents[self._acting]

    # --------------------------------------------------------------- step
    def step(self, action: Any) -> None:
        agent = getattr(self, "agent_selection", None)
        if agent is None or not self.agents:
            raise RuntimeError(
                "step() needs a game in progress: call reset() first"
                + (" (this game is over and every agent has been removed)" if agent is not None else "")
            )
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int:
            action = _as_action(action, agent)
        eng = self._eng
        if not 0 <= action < A.NUM_ACTIONS:
            self._illegal(agent, action)
        self._action[0] = action
        try:
            eng.step(self._action, copy=False)  # checks legality first: all or nothing
        except A.IllegalActionError:
            self._illegal(agent, action)
        self._cumulative_rewards[agent] = 0.0
        if self._actor() < 0:
            self._game_over()
        else:
            self.agent_selection = self.possible_agents[self._acting]

    def _illegal(self, agent: str, action: int) -> None:
        phase = int(self._eng.phase[0])
        raise A.IllegalActionError(
            f"{agent}: illegal action {A.describe(action)} (id {action}) in phase '{A.PHASE_NAMES[phase]}' "
            f"({A.PHASE_HELP[phase]}); obs['action_mask'] marks the legal actions; nothing was changed"
        ) from None

    def _game_over(self) -> None:
        eng = self._eng
        self.rewards = dict(zip(self.possible_agents, eng.rewards[0].tolist(), strict=True))
        flags = self.terminations if eng.terminated[0] else self.truncations
        for agent in self.agents:
            flags[agent] = True
        self._accumulate_rewards()
        self.agent_selection = self.agents[0]

    # ------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        try:
            seat = self.agent_name_mapping[agent]
        except (KeyError, TypeError):
            raise self._unknown(agent) from None
        eng = self._eng
        if seat == self._acting and not self.terminations.get(agent, True) and not self.truncations[agent]:
            mask = eng.legal_action_mask[0].view(np.int8).copy()
        else:
            mask = np.zeros(A.NUM_ACTIONS, np.int8)
        return {"observation": eng.observe_game(0, seat), "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """As :meth:`AECEnv.last`; once every agent has been removed at the end of a game, a clear error."""
        if not self.agents:
            raise GameOverError(
                "last() needs an agent to act: the game is over and every agent has been removed (call reset())"
            )
        return super().last(observe)

    # ------------------------------------------------------------- render
    def render(self) -> None | np.ndarray | str:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        from cluedo_env import render

        snapshot = self._eng.export_game(0)
        viewer = None if self.render_viewer is None else self.agent_name_mapping[self.render_viewer]
        if self.render_mode == "ansi":
            return render.render_ansi(snapshot, viewer)
        if self.render_mode == "rgb_array":
            return render.render_rgb(snapshot, viewer)
        if self._window is None:
            self._window = render.HumanWindow(title=f"Cluedo ({self.config.preset}, {self.config.players} players)")
        self._window.show(snapshot, viewer)
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_window"] = None  # a window does not travel; the next render opens a new one
        return state


def agent_name(seat: int) -> str:
    """The agent name of ``seat``: ``"player_{seat}"`` (this env's ``possible_agents``; RLlib's self-play runner
    names seats the same way)."""
    return f"player_{seat}"


def agent_seat(agent: str) -> int:
    """The seat of an agent name (``"player_k"`` -> k): the inverse of :func:`agent_name`."""
    return int(str(agent).rsplit("_", 1)[1])


def _as_action(action: Any, agent: str) -> int:
    """An integer action (int, numpy integer, 0-d integer array); anything else is an IllegalActionError."""
    if (
        isinstance(action, (np.integer, np.ndarray))
        and getattr(action, "ndim", 0) == 0
        and np.issubdtype(np.asarray(action).dtype, np.integer)
    ):
        return int(action)
    if isinstance(action, int) and not isinstance(action, bool):
        return operator.index(action)
    raise A.IllegalActionError(
        f"{agent}: an action must be an integer 0..{A.NUM_ACTIONS - 1} (cluedo_env.rules.actions), got {action!r}"
    )


def env(**kwargs: Any) -> AECEnv:
    """:class:`raw_env` (same keyword arguments) in the wrappers of PettingZoo's classic games.

    Illegal moves are handled by PettingZoo's ``TerminateIllegalWrapper``: the game ends, the
    offender gets -1 and the others 0. See the module docstring.
    """
    return wrap(raw_env(**kwargs), illegal_reward=-1.0)


__all__ = ["GameOverError", "UnknownAgentError", "env", "raw_env"]
