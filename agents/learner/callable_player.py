"""Any policy function as a player: ``fn(obs, mask) -> action``, for the evaluator and the envs' opponents.

A policy trained with any library (CleanRL, RLlib, a hand-written rule) is evaluated the same way
as the built-in bots once it is a function of what the Gymnasium env hands the learner::

    def my_policy(obs, mask):            # one game: obs (D,) int8, mask (A,) int8 (1 = legal)
        return int(np.flatnonzero(mask)[0])

    make_agent("py:my_policies.py:my_policy")          # a file (path relative to the working folder)
    make_agent("py:my_package.policies:my_policy")     # or an importable module
    register_agent("mine", lambda seed=None: CallablePlayer(my_policy))   # or register it under a name

so that ``scripts/evaluate.py --players py:my_policies.py:my_policy random random random`` plays it.
The observation and mask are exactly the single-agent env's for the same options (``macro_moves``,
``macro_accuse``, ``belief``, ``observation``, ``packed_observation``): the seat's own observation (plus the belief
features; packed uint8 rows with ``packed_observation``) and the mask
in that action space, so a function written against ``info["action_mask"]`` of
``gymnasium.make("cluedo_env/Cluedo-v0")`` plays unchanged. A function that handles many games at
once (``obs (n, D)``, ``mask (n, A)`` -> ``(n,)`` actions) is much faster: pass ``batched=True``.
The ``py:`` form passes no options: there the function's own attributes say them
(``fn.batched = True``, ``fn.macro_moves = True``, ``fn.macro_accuse``, ``fn.belief``, ``fn.observation``,
``fn.packed_observation``).

An action that is not an integer or not legal raises :class:`~cluedo_env.rules.actions.IllegalActionError`
naming the player: a silent replacement would flatter a broken policy.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from cluedo_env.agents.learner.compact_observation import check_observation
from cluedo_env.agents.learner.inputs import LearnerInputs, check_packed_observation
from cluedo_env.agents.players.base import Agent

from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import LearnerActions, as_actions
from cluedo_env.rules.actions import IllegalActionError

PolicyFn = Callable[[np.ndarray, np.ndarray], Any]


class CallablePlayer(LearnerInputs, Agent):
    """``fn(obs, mask) -> action`` as a batched player; see the module docstring."""

    def __init__(self, fn: PolicyFn, *, batched: bool | None = None, macro_moves: bool | None = None,
                 macro_accuse: bool | None = None, belief: bool | None = None, observation: str | None = None,
                 packed_observation: bool | None = None, seed: int | None = None,
                 name: str | None = None) -> None:  # fmt: skip
        if not callable(fn):
            raise TypeError(f"CallablePlayer needs a callable fn(obs, mask) -> action, got {fn!r}")
        # An option not given here is read from an attribute of the function (False when absent).
        batched, macro_moves, macro_accuse, belief, packed = (
            bool(getattr(fn, key, False)) if value is None else bool(value)
            for key, value in (("batched", batched), ("macro_moves", macro_moves), ("macro_accuse", macro_accuse),
                               ("belief", belief), ("packed_observation", packed_observation))
        )  # fmt: skip
        if macro_accuse and not belief:
            raise ValueError("macro_accuse=True needs belief=True (the accusation is the belief's best triple)")
        observation = str(getattr(fn, "observation", "full") if observation is None else observation)
        check_observation(observation, belief)
        check_packed_observation(packed, observation, belief)
        self.observation = observation
        self.packed_observation = packed
        self.fn = fn
        self.batched = batched
        self.actions = LearnerActions(macro_moves, macro_accuse)
        self.use_belief = bool(belief)
        self.seed = seed
        self.name = name or getattr(fn, "__name__", "callable")
        self._belief: Any = None

    def __deepcopy__(self, memo: dict) -> CallablePlayer:
        """Copies (one per seat in the envs) share the function and get their own notebook."""
        new = CallablePlayer.__new__(CallablePlayer)
        new.__dict__.update(self.__dict__)
        new._belief = None
        return new

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        obs, accuse = self.learner_inputs(view, idx)
        engine_mask = view.legal_action_mask_of(idx)
        mask = self.actions.mask(engine_mask).astype(np.int8)
        if self.batched:
            chosen = self.fn(obs, mask)
        else:
            chosen = [self.fn(obs[k], mask[k]) for k in range(len(idx))]
        try:
            acts = as_actions(chosen, len(idx), self.actions.n)
        except IllegalActionError as exc:
            raise IllegalActionError(f"player {self.name!r} (seat {view.seat}): {exc}") from None
        in_range = (acts >= 0) & (acts < self.actions.n)
        legal = in_range.copy()
        legal[in_range] = mask[np.flatnonzero(in_range), acts[in_range]] == 1
        if not legal.all():
            k = int(np.flatnonzero(~legal)[0])
            raise IllegalActionError(
                f"player {self.name!r} (seat {view.seat}) chose action {int(acts[k])}, which is not legal in game "
                f"{int(idx[k])} (legal: {np.flatnonzero(mask[k]).tolist()[:12]}...; mask[a] == 1 marks them)"
            )
        return self.actions.to_engine(acts, engine_mask, accuse)


def load_function(spec: str) -> PolicyFn:
    """``"path/to/file.py:name"`` or ``"package.module:name"`` -> that object (a policy function)."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise ValueError(f"py:{spec}: expected py:MODULE:FUNCTION or py:FILE.py:FUNCTION")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise ValueError(f"py:{spec}: no such file {path}")
        mod_spec = importlib.util.spec_from_file_location(f"cluedo_policy_{path.stem}", path)
        assert mod_spec is not None and mod_spec.loader is not None
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise ValueError(f"py:{spec}: cannot import module {where!r} ({exc})") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"py:{spec}: {where} has no callable {attr!r}")
    return fn


def from_spec(spec: str, seed: int | None = None, **kwargs: Any) -> CallablePlayer:
    """The ``py:`` prefix of :mod:`cluedo_env.agents.play.registry`: ``make_agent("py:file.py:fn")``."""
    return CallablePlayer(load_function(spec), seed=seed, name=f"py:{spec}", **kwargs)


__all__ = ["CallablePlayer", "PolicyFn", "from_spec", "load_function"]
