"""Cluedo as a PettingZoo ``ParallelEnv``: every seat present at every step, the game of :func:`cluedo_env.env`.

Usage (``tests/test_parallel_env.py`` runs this example)::

    import cluedo_env

    env = cluedo_env.parallel_env(preset="classic", players=4)
    observations, infos = env.reset(seed=42)
    while env.agents:  # each seat samples from its own mask: the acting seat a legal move, the others the no-op
        actions = {a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    print(rewards)

Why a parallel view of a turn-based game: multi-agent trainers built on ``ParallelEnv`` (one batched policy
call for all seats per step) can play Cluedo without a turn-order loop of their own. Cluedo stays turn-based:
at each step exactly one seat acts, the one :func:`cluedo_env.env` would select (the player whose turn it is,
or the refuter choosing a card to show, out of turn, R-G6), and only its action is applied. That is why
the AEC env keeps ``is_parallelizable=False``: PettingZoo's generic ``aec_to_parallel`` would step every
seat in order, which is not a Cluedo turn. This view is written for the game instead.

The game: :class:`CluedoParallelEnv` drives a :class:`~cluedo_env.envs.aec.raw_env` (same keyword
arguments: ``config``, ``preset``, rules flags, ``render_mode``, ``render_viewer``) and steps it with the
acting seat's action, so the deal, the dice, the legal actions, the observations and the rewards are that
env's. On the same seed and the same actions both play the same game (``tests/test_parallel_env.py``
compares their game records).

Agents: ``"player_0"`` .. ``"player_{P-1}"``, all in ``agents`` from ``reset`` until the game ends (an
eliminated player still refutes, R-A4); then ``agents`` is empty.

Spaces: ``action_space(agent)`` is ``Discrete(871)``: ids 0..869 are the flat action space of
:mod:`cluedo_env.rules.actions` (unchanged), and the extra last id :data:`NOOP` (870) is the no-op, the one
action of a seat that is not to act. ``observation_space(agent)`` is a ``Dict`` of

* ``"observation"``: ``Box(0, 127, (D,), int8)``, the seat's own observation (``VectorEngine.observe(player=seat)``,
  as :func:`cluedo_env.env` gives it: what the seat may know and nothing else, R-G7);
* ``"action_mask"``: ``Box(0, 1, (871,), int8)``: for the acting seat its legal actions (NOOP 0), for every
  other seat NOOP alone. No mask is ever all zeros (after the game ends too), so a masked softmax is always
  defined and ``action_space(a).sample(mask)`` always has a choice.

``infos[agent]`` is ``{"acting": bool}``: True for the one seat whose action is applied this step. Who is to
act is public (the turn order and who refutes are seen by all); the flag is the mask's NOOP slot, inverted.

Actions: a dict from agent to integer. The acting seat's action is required; another seat's action may be
left out or be NOOP. A non-integer, or an integer outside ``0..870``, raises
:class:`~cluedo_env.rules.actions.IllegalActionError` (a caller's bug, not a move). An integer that the
seat's mask forbids is an illegal move: with ``illegal_action="lose"`` (the default, as :func:`cluedo_env.env`
and PettingZoo's classic games do) the game ends at once, every offender gets -1, the others 0, all agents
terminated; with ``illegal_action="raise"`` it raises ``IllegalActionError`` naming the seat, the action and
what is allowed, and changes nothing.

Rewards (R-E1..R-E4): what the AEC env posts to each seat in the step: 0 until the last step, then +1 for the
winner and -1 for everyone else, or -1 for all when everybody was eliminated; 0 for all when the game is
cut after ``max_turns`` turns (``truncations`` True, R-E3). Summed over an episode they equal the AEC env's.

Seeding: as :func:`cluedo_env.env`: ``reset(seed=s)`` seeds the game, ``reset()`` goes on with its generator;
the spaces are seeded apart. ``render()``, ``snapshot()``, ``load_snapshot()`` and ``engine`` are the AEC
env's (the snapshot and the engine hold hidden cards: never hand them to an agent).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.envs.aec import raw_env
from cluedo_env.envs.seat_spaces import SpacesBySeat
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError

NOOP = A.NUM_ACTIONS  # 870: the extra last id, the one action of a seat that is not to act
NUM_PARALLEL_ACTIONS = A.NUM_ACTIONS + 1
ILLEGAL_ACTION_MODES = ("lose", "raise")


class CluedoParallelEnv(SpacesBySeat, ParallelEnv):
    """Cluedo as a ``ParallelEnv`` over one AEC game; see the module docstring."""

    metadata = {
        "name": "cluedo_v0",
        "render_modes": raw_env.metadata["render_modes"],
        "render_fps": raw_env.metadata["render_fps"],
    }

    def __init__(self, config: Any = None, *, illegal_action: str = "lose", **kwargs: Any) -> None:
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ConfigError(f"illegal_action must be one of {list(ILLEGAL_ACTION_MODES)}, got {illegal_action!r}")
        self.illegal_action = illegal_action
        self._aec = raw_env(config, **kwargs)
        self.config = self._aec.config
        self.render_mode = self._aec.render_mode
        self.possible_agents = self._aec.possible_agents[:]
        self.agents: list[str] = []
        D = self._aec.engine.observation_size
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0, 127, (D,), np.int8),
                    "action_mask": spaces.Box(0, 1, (NUM_PARALLEL_ACTIONS,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_PARALLEL_ACTIONS) for agent in self.possible_agents}

    # -------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        self._aec.reset(seed=seed, options=options)
        return self._start()

    def load_snapshot(self, snapshot: dict[str, Any]):
        """Continue from a game state (docs/snapshot.md), as after a reset; returns ``(observations, infos)``.

        For tests and analysis, as :meth:`cluedo_env.envs.aec.raw_env.load_snapshot`.
        """
        self._aec.load_snapshot(snapshot)
        return self._start()

    def snapshot(self) -> dict[str, Any]:
        """The full game state as a snapshot dict, hidden cards included: not for agents."""
        return self._aec.snapshot()

    @property
    def engine(self) -> VectorEngine:
        """The batch-1 engine of the game, hidden cards included: never hand it to an agent."""
        return self._aec.engine

    def _start(self):
        self.agents = self.possible_agents[:] if self._actor() is not None else []
        return self._observations(), self._infos()

    def _actor(self) -> str | None:
        """The agent whose action is applied now; None once the game is over."""
        aec = self._aec
        if not aec.agents:
            return None
        agent = aec.agent_selection
        return None if aec.terminations[agent] or aec.truncations[agent] else agent

    # --------------------------------------------------------------- step
    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("step() needs a game in progress: call reset() first (or again, after a game ends)")
        actor = self._actor()
        illegal = self._check(actions, actor)
        if illegal:
            return self._lose(illegal)
        self._aec.step(_as_action(actions[actor], actor))
        rewards = {agent: float(self._aec.rewards[agent]) for agent in self.agents}
        terminations = {agent: bool(self._aec.terminations[agent]) for agent in self.agents}
        truncations = {agent: bool(self._aec.truncations[agent]) for agent in self.agents}
        observations, infos = self._observations(), self._infos()
        if self._actor() is None:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _check(self, actions: dict[str, Any], actor: str | None) -> list[str]:
        """The agents whose action the masks forbid; raises for a malformed dict or action (or any illegal one,
        ``illegal_action="raise"``)."""
        if not isinstance(actions, dict):
            raise TypeError(f"step() takes a dict from agent to action, got {type(actions).__name__}")
        for agent in actions:
            if agent not in self.observation_spaces:
                raise self._unknown(agent)
        if actor not in actions:
            raise A.IllegalActionError(
                f"{actor} is to act (phase '{A.PHASE_NAMES[int(self.engine.phase[0])]}'): its action is missing "
                f"from the actions dict ({sorted(actions)})"
            )
        mask = self.engine.legal_action_mask[0]
        illegal = []
        for agent, action in actions.items():
            a = _as_action(action, agent)
            if agent == actor and a != NOOP and mask[a]:
                continue
            if agent != actor and a == NOOP:
                continue
            if self.illegal_action == "raise":
                raise A.IllegalActionError(self._illegal_text(agent, a, actor))
            illegal.append(agent)
        return illegal

    def _illegal_text(self, agent: str, action: int, actor: str) -> str:
        if agent != actor:
            return (f"{agent}: illegal action {A.describe(action)} (id {action}): {actor} is to act, the other seats "
                    f"have only the no-op NOOP (id {NOOP}); nothing was changed")  # fmt: skip
        what = "NOOP (the no-op of the seats not to act)" if action == NOOP else A.describe(action)
        phase = int(self.engine.phase[0])
        return (f"{agent}: illegal action {what} (id {action}) in phase '{A.PHASE_NAMES[phase]}' "
                f"({A.PHASE_HELP[phase]}); observations[agent]['action_mask'] marks the legal actions; "
                "nothing was changed")  # fmt: skip

    def _lose(self, offenders: list[str]):
        """End the game on illegal moves, as PettingZoo's ``TerminateIllegalWrapper`` does for :func:`env`."""
        rewards = {agent: -1.0 if agent in offenders else 0.0 for agent in self.agents}
        terminations = dict.fromkeys(self.agents, True)
        truncations = dict.fromkeys(self.agents, False)
        observations = {agent: self._observe(agent, acting=False) for agent in self.agents}
        infos = {agent: {"acting": False} for agent in self.agents}
        self.agents = []
        return observations, rewards, terminations, truncations, infos

    # ------------------------------------------------------------ observe
    def _observe(self, agent: str, acting: bool) -> dict[str, np.ndarray]:
        obs = self._aec.observe(agent)  # the AEC env's view of this seat; its mask is all zeros unless acting
        mask = np.zeros(NUM_PARALLEL_ACTIONS, np.int8)
        if acting:
            mask[:NOOP] = obs["action_mask"]
        else:
            mask[NOOP] = 1
        return {"observation": obs["observation"], "action_mask": mask}

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        actor = self._actor()
        return {agent: self._observe(agent, agent == actor) for agent in self.possible_agents}

    def _infos(self) -> dict[str, dict[str, Any]]:
        actor = self._actor()
        return {agent: {"acting": agent == actor} for agent in self.possible_agents}

    # ------------------------------------------------------------- render
    def render(self) -> None | np.ndarray | str:
        return self._aec.render()

    def close(self) -> None:
        self._aec.close()


def _as_action(action: Any, agent: str) -> int:
    """An integer action in ``0..NOOP``; anything else is an IllegalActionError (a bug in the caller)."""
    if isinstance(action, (bool, np.bool_)) or not (
        isinstance(action, (int, np.integer)) or (isinstance(action, np.ndarray) and action.ndim == 0
                                                    and np.issubdtype(action.dtype, np.integer))  # fmt: skip
    ):
        raise A.IllegalActionError(f"{agent}: an action must be an integer 0..{NOOP} (NOOP = {NOOP}), got {action!r}")
    a = operator.index(action) if not isinstance(action, np.ndarray) else int(action)
    if not 0 <= a <= NOOP:
        raise A.IllegalActionError(f"{agent}: action {a} is outside 0..{NOOP} (Discrete({NUM_PARALLEL_ACTIONS}))")
    return a


def parallel_env(**kwargs: Any) -> CluedoParallelEnv:
    """:class:`CluedoParallelEnv` (keyword arguments: :func:`cluedo_env.env`'s, and ``illegal_action``)."""
    return CluedoParallelEnv(**kwargs)


__all__ = ["NOOP", "NUM_PARALLEL_ACTIONS", "CluedoParallelEnv", "parallel_env"]
