"""What every example reports: the trained policy's win rate against random players, by the project's evaluator.

The policy plays as a player (:class:`cluedo_env.agents.learner.callable_player.CallablePlayer`: it sees exactly the
single-agent env's observation and mask) in a match of ``cluedo_env.agents.play.tournament``, the same code
``scripts/evaluate.py`` runs, over the seat rotations of the classic 4-player game against three random players.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from cluedo_env.agents.learner.callable_player import CallablePlayer
from cluedo_env.agents.play import tournament
from cluedo_env.agents.play.registry import register_agent

from cluedo_env.rules.config import make_config

PolicyFn = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (n, D) int8 obs, (n, A) int8 mask -> (n,) actions


def win_rate(policy: PolicyFn, games: int, seed: int = 0, players: int = 4, name: str = "example") -> dict[str, Any]:
    """Win rate of ``policy`` (batched, greedy or not as it is written) against ``players - 1`` random players."""
    register_agent(name, lambda seed=None: CallablePlayer(policy, batched=True, name=name), replace=True)
    config = make_config(None, players=players)
    match = tournament.play_match(config, [name] + ["random"] * (players - 1), games, seed=seed)
    me = tournament.summarize(match, config)["entries"][0]
    return {"games": me["games"], "win_rate": me["win_rate"], "ci95": me["ci95"]}


def report(library: str, steps: int, seconds: float, result: dict[str, Any]) -> str:
    """One line: env steps, their rate through the library (training included), the evaluation."""
    lo, hi = result["ci95"]
    return (f"{library}: {steps} env steps in {seconds:.0f} s ({steps / seconds:,.0f} steps/s with training); "
            f"win rate vs random {100 * result['win_rate']:.1f}% (95% CI {100 * lo:.1f}-{100 * hi:.1f}%, "
            f"{result['games']} games)")


__all__ = ["PolicyFn", "report", "win_rate"]
