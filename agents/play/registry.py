"""Players by name, for the evaluator, scripts and configs.

    make_agent("heuristic", seed=0)
    make_agent("deducer", seed=1)              # agents/players/deducer.py, imported only when asked for
    make_agent("ckpt:runs/ppo/best.pt")        # a trained checkpoint, once a loader is registered

    make_agent("py:my_policies.py:policy")     # any fn(obs, mask) -> action (agents/learner/callable_player.py)
    make_agent('expert{"blocking_aware": false}')   # a name with constructor options, as a JSON object

Built-in names: ``random``, ``notebook``, ``heuristic``, ``deducer``, ``expert``, ``belief_random``.
The last three live in modules written separately and are imported lazily, so this module works before they
exist (asking for them then raises :class:`UnknownAgentError` saying what is available).

Others extend the registry without editing it:

    register_agent("greedy", lambda seed=None, **kw: GreedyAgent(seed, **kw))
    register_prefix("ckpt", lambda spec, seed=None, **kw: load_policy_agent(spec, seed=seed, **kw))

A *prefix* factory receives what follows ``prefix:`` (for example a checkpoint path).

A name may carry constructor options as a JSON object right after it, ``NAME{"option": value, ...}``
(also ``prefix:ARG{...}``): they are passed as keyword arguments (before any given to
``make_agent``), so a variant is played by name on the command line, e.g.
``scripts/evaluate.py --head-to-head 'expert{"blocking_aware": false}' deducer`` or
``'ckpt:runs/x/model.zip{"deterministic": false}'`` (a checkpoint that samples its actions).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from cluedo_env.agents.players.base import Agent

from cluedo_env.errors import CluedoError, UsageError

AgentFactory = Callable[..., Agent]
_WITH_OPTIONS = re.compile(r"([A-Za-z_][^{}]*?)(\{.*\})", re.DOTALL)  # NAME{JSON}, also prefix:ARG{JSON}


class UnknownAgentError(CluedoError):
    """A player name the registry cannot build; the message lists the available names."""


# name -> (module, class) for the built-in players, imported when first asked for.
_BUILTIN: dict[str, tuple[str, str]] = {
    "random": ("cluedo_env.agents.players.random_player", "RandomAgent"),
    "notebook": ("cluedo_env.agents.players.notebook_player", "NotebookAgent"),
    "heuristic": ("cluedo_env.agents.players.heuristic", "HeuristicAgent"),
    "deducer": ("cluedo_env.agents.players.deducer", "DeducerAgent"),
    "expert": ("cluedo_env.agents.players.expert", "ExpertAgent"),
    "belief_random": ("cluedo_env.agents.learner.belief", "BeliefRandomAgent"),
}
# prefix -> (module, factory) for the built-in prefixes, imported when first asked for.
_BUILTIN_PREFIXES: dict[str, tuple[str, str]] = {
    "py": ("cluedo_env.agents.learner.callable_player", "from_spec"),
}
# Trained players, whose loaders live in the training layer (torch, ray) and register themselves
# with register_prefix when imported; agents never imports them (cluedo_env.training.players does it on demand).
_TRAINED_PREFIXES: dict[str, str] = {
    "ckpt": "cluedo_env.training.sb3.checkpoints",
    "rllib": "cluedo_env.training.rllib.module",
    "pretrained": "cluedo_env.training.pretrained",
}
_FACTORIES: dict[str, AgentFactory] = {}
_PREFIXES: dict[str, Callable[..., Agent]] = {}


def register_agent(name: str, factory: AgentFactory, *, replace: bool = False) -> None:
    """Make ``make_agent(name, seed=..., **kwargs)`` call ``factory(seed=..., **kwargs)``."""
    if ":" in name:
        raise ValueError(f"agent names may not contain ':' (that marks a prefix): {name!r}")
    if not replace and (name in _FACTORIES or name in _BUILTIN):
        raise ValueError(f"agent {name!r} is already registered (pass replace=True to override)")
    _FACTORIES[name] = factory


def register_prefix(prefix: str, factory: Callable[..., Agent], *, replace: bool = False) -> None:
    """Make ``make_agent(f"{prefix}:{spec}", seed=..., **kw)`` call ``factory(spec, seed=..., **kw)``."""
    if not replace and prefix in _PREFIXES:
        raise ValueError(f"prefix {prefix!r} is already registered (pass replace=True to override)")
    _PREFIXES[prefix] = factory


def _importable(name: str) -> bool:
    module, cls = _BUILTIN[name]
    try:
        return hasattr(importlib.import_module(module), cls)
    except ImportError:
        return False


def available_agents() -> list[str]:
    """Names ``make_agent`` can build now (built-ins whose module imports, registered names, ``prefix:...``)."""
    names = [n for n in _BUILTIN if n not in _FACTORIES and _importable(n)]
    prefixes = sorted(set(_PREFIXES) | set(_BUILTIN_PREFIXES))
    return names + sorted(_FACTORIES) + [f"{p}:..." for p in prefixes]


def make_agent(spec: str, seed: int | None = None, **kwargs) -> Agent:
    """A new player from its name (``"heuristic"``) or ``prefix:argument`` (``"ckpt:path"``)."""
    if not isinstance(spec, str) or not spec:
        raise UnknownAgentError(f"an agent is named by a non-empty string, got {spec!r}")
    with_options = _WITH_OPTIONS.fullmatch(spec)
    if with_options:
        name, options = with_options.group(1), _options(spec, with_options.group(2))
        return make_agent(name, seed=seed, **{**options, **kwargs})
    if ":" in spec:
        prefix, arg = spec.split(":", 1)
        if prefix in _PREFIXES:
            return _PREFIXES[prefix](arg, seed=seed, **kwargs)
        if prefix in _BUILTIN_PREFIXES:
            module, factory = _BUILTIN_PREFIXES[prefix]
            return getattr(importlib.import_module(module), factory)(arg, seed=seed, **kwargs)
        if prefix in _TRAINED_PREFIXES:
            raise UnknownAgentError(
                f"{spec!r}: no loader for {prefix}: (trained checkpoint) players is registered (import "
                f"{_TRAINED_PREFIXES[prefix]} first, or name the player through cluedo or "
                "cluedo_env.training.players.check_player_names, which do)"
            )
        raise UnknownAgentError(f"unknown agent prefix {prefix!r} in {spec!r}; available: {_available_text()}")
    if spec in _FACTORIES:
        return _FACTORIES[spec](seed=seed, **kwargs)
    if spec in _BUILTIN:
        module, cls = _BUILTIN[spec]
        try:
            factory = getattr(importlib.import_module(module), cls)
        except (ImportError, AttributeError) as exc:
            raise UnknownAgentError(
                f"agent {spec!r} needs {module}.{cls}, which cannot be imported ({exc}); available: {_available_text()}"
            ) from exc
        return factory(seed=seed, **kwargs)
    raise UnknownAgentError(f"unknown agent {spec!r}; available: {_available_text()}")


def check_player_names(names: list[str], allowed_extra: tuple[str, ...] = ()) -> None:
    """Every name is a known player (or ``ckpt:FILE`` naming an existing file) before any game starts.

    Raises :class:`~cluedo_env.errors.UsageError` naming the bad entry and the allowed names. Trained
    players (``ckpt:``, ``rllib:``) count as known once their loader is registered
    (:func:`cluedo_env.training.players.check_player_names` registers them first).
    """
    available = available_agents()
    known = [n for n in available if not n.endswith(":...")]
    prefixes = [n[:-4] for n in available if n.endswith(":...")]
    for name in names:
        if name in allowed_extra or name in known:
            continue
        with_options = _WITH_OPTIONS.fullmatch(name)
        if with_options:
            try:
                _options(name, with_options.group(2))
            except UnknownAgentError as exc:
                raise UsageError(str(exc)) from exc
            name = with_options.group(1)
            if name in known:
                continue
        prefix, colon, arg = name.partition(":")
        if colon and prefix in prefixes:
            if prefix == "ckpt" and not Path(arg).is_file():
                raise UsageError(f"player {name!r}: checkpoint {arg!r} is not a file (ckpt:PATH to a model .zip)")
            continue
        allowed = ", ".join([*allowed_extra, *known, "ckpt:PATH", "rllib:PATH", "pretrained:NAME"])
        raise UsageError(f"unknown player {name!r} (available: {allowed})")


def _options(spec: str, text: str) -> dict:
    """The constructor options of ``NAME{JSON}``: a JSON object."""
    try:
        options = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnknownAgentError(f"player {spec!r}: the options after the name are not JSON ({exc})") from exc
    if not isinstance(options, dict):
        raise UnknownAgentError(f"player {spec!r}: the options after the name must be a JSON object")
    return options


def _available_text() -> str:
    return ", ".join(available_agents()) or "(none)"


__all__ = [
    "UnknownAgentError",
    "available_agents",
    "check_player_names",
    "make_agent",
    "register_agent",
    "register_prefix",
]
