"""The spaces of an env's seats by agent name, for the AEC env and its parallel view alike."""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

from cluedo_env.errors import UnknownAgentError


class SpacesBySeat:
    """``observation_space(agent)`` and ``action_space(agent)`` from the env's ``observation_spaces`` and
    ``action_spaces`` dicts; an agent that is not one of ``possible_agents`` gets an error naming them (PettingZoo's
    own lookups raise a bare ``KeyError``). Listed before the PettingZoo base class, so these lookups are used."""

    observation_spaces: dict[str, spaces.Space]
    action_spaces: dict[str, spaces.Space]
    possible_agents: list[str]

    def observation_space(self, agent: str) -> spaces.Space:
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown(agent) from None

    def action_space(self, agent: str) -> spaces.Space:
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown(agent) from None

    def _unknown(self, agent: Any) -> UnknownAgentError:
        return UnknownAgentError(f"unknown agent {agent!r} (this game's agents: {', '.join(self.possible_agents)})")


__all__ = ["SpacesBySeat"]
