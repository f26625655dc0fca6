"""Simulate seeded games between uniformly random legal players and print a summary.

    python scripts/simulate.py --games 200 --preset classic --players 4 --seed 0

Reports game lengths (decisions and turns), wins per seat, and how the games ended
(correct accusation, last player standing, everyone eliminated, truncation).
"""

from __future__ import annotations

import sys
import time
from collections import Counter

import numpy as np

from cluedo_env.engine.history import Accusation
from cluedo_env.engine.reference import Game
from cluedo_env.errors import run_cli
from cluedo_env.options import ArgumentParser, int_in, seed_type
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import PRESETS, make_config

KIND_STARTS = np.array([A.ROLL, A.PASSAGE, A.STAY, A.END_TURN, A.MOVE0, A.SUGGEST0, A.SHOW0, A.ACCUSE0])


def action_kind(action: int) -> int:
    """Index of the action's sub-range (ROLL, PASSAGE, STAY, END_TURN, MOVE, SUGGEST, SHOW, ACCUSE)."""
    return int(np.searchsorted(KIND_STARTS, action, side="right")) - 1


def how_it_ended(game: Game) -> str:
    if game.truncated:
        return "truncated (max_turns, R-E3)"
    if game.winner < 0:
        return "everyone eliminated (R-E4)"
    last = game.history[-1]
    if isinstance(last, Accusation) and last.correct:
        return "correct accusation (R-E1)"
    return "last player standing (R-E2)"


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int_in(1, 10**8), default=200, help="games to simulate (default 200)")
    ap.add_argument("--preset", default="classic", help=f"one of {', '.join(PRESETS)} or a YAML file")
    ap.add_argument("--players", type=int, default=None, help="players per game (default: the preset's 4)")
    ap.add_argument("--max-turns", type=int, default=None, help="cut games after this many turns")
    ap.add_argument("--seed", type=seed_type, default=0, help="seed of the deals, dice and players (default 0)")
    ap.add_argument(
        "--policy",
        choices=("uniform", "kind"),
        default="uniform",
        help="uniform: any legal action equally likely (accuses at once most of the time); "
        "kind: first a kind of action (roll, move, suggest, accuse, ...) uniformly, then an action of it",
    )
    args = ap.parse_args(argv)
    overrides = {k: v for k, v in (("players", args.players), ("max_turns", args.max_turns)) if v is not None}
    config = make_config(args.preset, **overrides)

    rng = np.random.default_rng(args.seed)
    lengths, turns, wins, endings = [], [], Counter(), Counter()
    t0 = time.perf_counter()
    for i in range(args.games):
        game = Game(config, seed=args.seed * 1_000_003 + i)
        steps = 0
        while not game.is_over:
            legal = game.legal_actions()
            if args.policy == "kind":
                kinds = sorted({action_kind(a) for a in legal})
                kind = kinds[rng.integers(len(kinds))]
                legal = [a for a in legal if action_kind(a) == kind]
            game.step(legal[rng.integers(len(legal))])
            steps += 1
        lengths.append(steps)
        turns.append(game.turn_count)
        wins[game.winner] += 1
        endings[how_it_ended(game)] += 1
    elapsed = time.perf_counter() - t0

    print(f"{args.games} games, random legal players ({args.policy}), rules: {config}")
    print(f"reference engine: {sum(lengths) / elapsed:,.0f} decisions/s, {args.games / elapsed:,.1f} games/s\n")
    print(f"{'':28}{'mean':>8}{'median':>8}{'min':>8}{'max':>8}")
    for name, xs in (("decisions per game", lengths), ("turns per game", turns)):
        a = np.array(xs)
        print(f"{name:28}{a.mean():8.1f}{np.median(a):8.0f}{a.min():8d}{a.max():8d}")
    print("\nwins per seat")
    from cluedo_env.rules.cards import SUSPECTS

    for seat in range(config.players):
        print(f"  seat {seat} ({SUSPECTS[seat]:8}) {wins[seat]:6d}  {wins[seat] / args.games:6.1%}")
    print(f"  no winner          {wins[-1]:6d}  {wins[-1] / args.games:6.1%}")
    print("\nhow games ended")
    for reason, n in endings.most_common():
        print(f"  {reason:32} {n:6d}  {n / args.games:6.1%}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
