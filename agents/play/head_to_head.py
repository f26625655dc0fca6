"""Head-to-head: one player A against P - 1 copies of player B, A's seat rotated.

Why a mode of its own: the strength targets of the rule-based players are stated as "A alone
against three Bs" (a lone player's win rate against a table, parity 1/P), and how fast A
wins (rounds to a win) tells a better suggestion policy from a luckier one. The round robin
(``scripts/evaluate.py --round-robin``) mixes seatings, so it answers a different question.

    r = head_to_head(RulesConfig.from_preset("cards"), "deducer", "heuristic", games=2000)
    print(head_to_head_markdown(r))

A sits in seat k in rotation k (k = 0..P-1), ``ceil(games / P)`` games each, so every seat is
A's equally often (seat order matters in Cluedo: who refutes whom first). Reports A's win
rate with a 95% Wilson interval, the mean rounds of A's wins (a round is one turn of each
seat still in; rounds to a win = the winner's own turns, :class:`cluedo_env.agents.play.runner.GameRecord`),
the mean rounds of all games, and the wrong accusations of A and of the Bs (a sound
player has none).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import GameRecord, play_games
from cluedo_env.agents.play.stats import wilson_interval
from cluedo_env.agents.players.base import Agent

from cluedo_env.rules.config import RulesConfig


@dataclass
class HeadToHead:
    """The outcome of :func:`head_to_head` (plain fields, JSON-able through :meth:`to_dict`)."""

    a: str
    b: str
    preset: dict
    games: int
    wins: int  # games A won
    b_wins: int  # games one of the Bs won
    no_winner: int  # truncated, or everybody eliminated
    win_rate: float
    ci95: tuple[float, float]
    parity: float  # 1 / P: A's share if it were no better than B
    mean_rounds_to_win: float | None  # over A's wins: A's own turns
    mean_rounds: float | None  # over all games: rounds the game lasted
    wrong_accusations_a: int
    wrong_accusations_b: int
    wins_by_seat: list[int] = field(default_factory=list)  # A's wins with A in seat k
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def head_to_head(
    config: RulesConfig,
    a: str,
    b: str,
    games: int,
    *,
    seed: int = 0,
    batch_size: int = 1024,
    progress: Callable[[int], None] | None = None,
    make: Callable[..., Agent] = make_agent,
) -> HeadToHead:
    """Play ``a`` alone against ``config.players - 1`` players ``b``, A's seat rotated; see the module docstring.

    ``make(name, seed=...)`` builds a player (default: the registry); each rotation gets fresh
    players with seeds derived from ``seed``, so a run is reproducible.
    """
    P = config.players
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    per_rotation = math.ceil(games / P)
    played: list[tuple[int, GameRecord]] = []  # (A's seat, record)
    t0 = time.perf_counter()
    for k in range(P):
        seeds = np.random.SeedSequence([seed, k]).generate_state(P + 1)
        agents = [make(a if s == k else b, seed=int(seeds[s])) for s in range(P)]
        records = play_games(config, agents, per_rotation, seed=int(seeds[P]), batch_size=batch_size,
                             progress=progress)
        played.extend((k, r) for r in records)
    seconds = time.perf_counter() - t0
    n = len(played)
    a_won = [r for k, r in played if r.winner == k]
    wins = len(a_won)
    no_winner = sum(r.winner < 0 for _, r in played)
    wrong_a = sum(r.wrong_accusations[k] for k, r in played if r.wrong_accusations)
    wrong_all = sum(sum(r.wrong_accusations) for _, r in played)
    return HeadToHead(
        a=a,
        b=b,
        preset=config.to_dict(),
        games=n,
        wins=wins,
        b_wins=n - wins - no_winner,
        no_winner=no_winner,
        win_rate=wins / n,
        ci95=wilson_interval(wins, n),
        parity=1.0 / P,
        mean_rounds_to_win=float(np.mean([r.winner_turns for r in a_won])) if a_won else None,
        mean_rounds=float(np.mean([r.rounds for _, r in played])),
        wrong_accusations_a=wrong_a,
        wrong_accusations_b=wrong_all - wrong_a,
        wins_by_seat=[sum(r.winner == k for kk, r in played if kk == k) for k in range(P)],
        seconds=seconds,
    )


def head_to_head_markdown(r: HeadToHead) -> str:
    """A one-row table of a head-to-head result, for reports and the README."""
    P = round(1 / r.parity)
    rounds_win = "-" if r.mean_rounds_to_win is None else f"{r.mean_rounds_to_win:.2f}"
    lo, hi = r.ci95
    return "\n".join(
        [
            f"## Head-to-head: {r.a} alone against {P - 1} x {r.b}",
            "",
            f"Preset `{r.preset.get('preset')}`, {P} players, {r.games} games (A's seat rotated), "
            f"{r.games / r.seconds if r.seconds > 0 else 0:.0f} games/s.",
            "",
            "| A | B | A wins | 95% CI | parity | rounds to A's win | rounds per game | wrong accusations A / B |",
            "|---|---|---|---|---|---|---|---|",
            f"| {r.a} | {r.b} | {100 * r.win_rate:.1f}% | {100 * lo:.1f}-{100 * hi:.1f}% | {100 * r.parity:.0f}% "
            f"| {rounds_win} | {r.mean_rounds:.2f} | {r.wrong_accusations_a} / {r.wrong_accusations_b} |",
            "",
            f"A's wins by A's seat: {', '.join(f'seat {k}: {w}' for k, w in enumerate(r.wins_by_seat))}; "
            f"won by a B: {r.b_wins}; no winner: {r.no_winner}.",
        ]
    )


__all__ = ["HeadToHead", "head_to_head", "head_to_head_markdown", "wilson_interval"]  # wilson_interval: .stats
