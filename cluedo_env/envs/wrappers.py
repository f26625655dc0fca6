"""PettingZoo's standard AEC wrappers, with the same behaviour and cheaper attribute access.

PettingZoo's :class:`~pettingzoo.utils.wrappers.BaseWrapper` forwards every attribute it does not
have (``agents``, ``agent_selection``, ``terminations`` ...) through ``__getattr__``, one hop per
wrapper, and ``AssertOutOfBoundsWrapper`` calls ``Discrete.contains`` on every action. Through the
three wrappers of a classic game that is about 35 attribute hops, ~40 us on a 2-core machine, per ``last()`` +
``step()``, more than the game itself. The subclasses here are the same classes (``isinstance``
holds, their ``step``/``observe``/``reset`` logic is PettingZoo's own) with these changes only:

* the AEC bookkeeping attributes are properties that read (and write) the unwrapped env directly;
  the ordered one still raises ``AttributeError`` before ``reset()``, as ``OrderEnforcingWrapper``
  does;
* ``OrderEnforcingWrapper``'s ``step``, ``observe`` and ``last`` (AECEnv's) call the next env
  directly instead of through ``BaseWrapper``'s forwarding methods, with the same checks;
* ``AssertOutOfBoundsWrapper.step`` accepts a plain ``int`` inside ``Discrete(n)`` without
  calling ``contains`` (which says yes to exactly those); anything else goes through ``contains``.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, TerminateIllegalWrapper

from cluedo_env.rules.actions import IllegalActionError

FORWARDED = ("agents", "possible_agents", "agent_selection", "rewards", "_cumulative_rewards",
             "terminations", "truncations", "infos")  # fmt: skip
# What OrderEnforcingWrapper refuses to read before reset():
BEFORE_RESET = {"rewards", "terminations", "truncations", "infos", "agent_selection", "agents"}


def _forward(name: str) -> property:
    """``name`` read from and written to the unwrapped env (``operator.attrgetter`` runs in C)."""

    def put(self: Any, value: Any) -> None:
        setattr(self._raw, name, value)

    return property(attrgetter(f"_raw.{name}"), put, doc=f"``{name}`` of the unwrapped env")


def _forward_after_reset(name: str) -> property:
    """As :func:`_forward`, raising AttributeError before ``reset()`` as ``OrderEnforcingWrapper`` does."""
    read = attrgetter(name)

    def get(self: Any) -> Any:
        if self._has_reset:
            return read(self._raw)
        raise AttributeError(f"{name} cannot be accessed before reset")

    def put(self: Any, value: Any) -> None:
        setattr(self._raw, name, value)

    return property(get, put, doc=f"``{name}`` of the unwrapped env")


class _Forwarding:
    """Mixin: read the AEC bookkeeping attributes from the unwrapped env in one step."""

    _raw: AECEnv

    def _bind(self, env: AECEnv) -> None:
        self.__dict__["_raw"] = env.unwrapped


for _name in FORWARDED:
    setattr(_Forwarding, _name, _forward(_name))


class FastTerminateIllegalWrapper(_Forwarding, TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` when it wraps the raw env directly (as in :func:`wrap`):
    its ``observe`` and ``step``, line for line, reading the raw env's attributes in one hop."""

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        self._bind(env)
        super().__init__(env, illegal_reward)
        self._direct = env is self._raw

    def observe(self, agent: Any) -> Any:
        if not self._direct:
            return super().observe(agent)
        raw = self._raw
        obs = raw.observe(agent)
        if agent == raw.agent_selection:
            self._prev_obs = obs
            self._prev_info = raw.infos.get(agent, {})
        return obs

    def step(self, action: Any) -> None:
        raw = self._raw
        if not self._direct or not isinstance(self._prev_obs, dict) and self._prev_obs is not None:
            return super().step(action)
        agent = raw.agent_selection
        if self._prev_obs is None:
            self.observe(agent)
        prev_mask = self._prev_obs["action_mask"]
        self._prev_obs = None
        self._prev_info = None
        done = raw.terminations[agent] or raw.truncations[agent]
        if self._terminated and done:
            raw._was_dead_step(action)
        elif not done and not prev_mask[action]:
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.truncations, 0)
            raw.rewards[agent] = float(self._illegal_value)
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._terminated = True
        else:
            raw.step(action)


class FastAssertOutOfBoundsWrapper(_Forwarding, AssertOutOfBoundsWrapper):
    def __init__(self, env: AECEnv) -> None:
        self._bind(env)
        super().__init__(env)
        space = env.action_space(env.possible_agents[0])
        self._n = space.n if isinstance(space, spaces.Discrete) and space.start == 0 else 0
        # Only valid if every agent has the same Discrete(n) space.
        if any(env.action_space(a) != space for a in env.possible_agents):
            self._n = 0

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < self._n:  # Discrete(n).contains(action) is True
            self.env.step(action)
            return
        raw = self._raw
        agent = raw.agent_selection
        if action is not None or not (raw.terminations.get(agent) or raw.truncations.get(agent)):
            _check_action(action, agent, self._n)  # an IllegalActionError, also under python -O
        super().step(action)


class FastOrderEnforcingWrapper(_Forwarding, OrderEnforcingWrapper):
    def __init__(self, env: AECEnv) -> None:
        self._bind(env)
        super().__init__(env)

    # The three calls of every turn, as OrderEnforcingWrapper and AECEnv have them, one call level less.
    def step(self, action: Any) -> None:
        if self._has_reset and self._raw.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)  # the error or warning of OrderEnforcingWrapper

    def observe(self, agent: Any) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        agent = self.agent_selection  # AttributeError before reset
        raw = self._raw
        if not raw.agents:
            return raw.last(observe)  # its GameOverError: no agent is left to report on
        observation = self.observe(agent) if observe else None
        return (observation, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent],
                raw.infos[agent])  # fmt: skip

    def __str__(self) -> str:  # as OrderEnforcingWrapper's own: the env's name
        return str(self.env)


for _name in FORWARDED:
    setattr(FastOrderEnforcingWrapper, _name, (_forward_after_reset if _name in BEFORE_RESET else _forward)(_name))


class ActionOutOfSpaceError(IllegalActionError, AssertionError):
    """An action outside the action space, refused by ``env()`` itself: an :class:`IllegalActionError`, and an
    ``AssertionError`` as PettingZoo's own check raised (which ``python -O`` would skip)."""


def _check_action(action: Any, agent: Any, n: int) -> None:
    """Refuse an action outside ``Discrete(n)`` with the env's own error rather than PettingZoo's assertion."""
    ok = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
    ok = ok or (isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu")
    if not ok or not (n == 0 or 0 <= int(action) < n):
        raise ActionOutOfSpaceError(
            f"{agent}: action {action!r} is not in the action space Discrete({n}) (an integer 0..{n - 1}, "
            "cluedo_env.rules.actions); obs['action_mask'] marks the legal actions; nothing was changed"
        )


def wrap(env: AECEnv, illegal_reward: float = -1.0) -> AECEnv:
    """The wrappers of PettingZoo's classic games, in their order (connect_four, chess, ...)."""
    env = FastTerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = FastAssertOutOfBoundsWrapper(env)
    return FastOrderEnforcingWrapper(env)
