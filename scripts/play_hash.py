"""Fingerprint of the decisions of seeded games: a hash per player and preset, to show a change keeps play identical.

    PYTHONPATH=. .venv/bin/python scripts/play_hash.py                       # deducer, expert x classic, cards
    PYTHONPATH=. .venv/bin/python scripts/play_hash.py --players deducer --games 512
    PYTHONPATH=. .venv/bin/python scripts/play_hash.py --players expert,deducer,deducer,heuristic   # a mixed table

Speed work on the rule-based players must not change what they play. Four equal
players play ``--games`` seeded games (:func:`cluedo_env.agents.play.runner.play_games`); every decision (games
asked, actions returned) and every game's outcome go into a SHA-256. Run it before and after a
change: equal hashes mean the same decisions in every one of those games. (A change that is meant
to alter play changes the hashes, of course; then measure strength instead: ``scripts/evaluate.py``.)
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import numpy as np
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import play_games

from cluedo_env.rules.config import RulesConfig


def play_hash(player: str, preset: str, games: int, batch: int, seed: int) -> tuple[str, int, float]:
    """(hash, wrong accusations, CPU seconds) of ``games`` seeded games of four ``player`` players.

    ``player`` may name a mixed table, seat by seat, separated by commas (``expert,deducer,deducer,heuristic``);
    wrong accusations are then counted for the deducer seats only."""
    config = RulesConfig.from_preset(preset)
    names = player.split(",") if "," in player else [player] * config.players
    agents = [make_agent(names[s], seed=seed + s) for s in range(config.players)]
    digest = hashlib.sha256()
    for agent in agents:
        act = agent.act

        def logged(view, idx, _act=act):
            out = _act(view, idx)
            digest.update(np.asarray(idx, np.int64).tobytes())
            digest.update(np.asarray(out, np.int64).tobytes())
            return out

        agent.act = logged  # type: ignore[method-assign]
    start = time.process_time()
    records = play_games(config, agents, games, batch_size=batch, seed=seed)
    for r in records:
        digest.update(repr((r.winner, r.ending, r.turns, r.suggestions, r.rounds, r.wrong_accusations)).encode())
    if "," in player:
        wrong = sum(r.wrong_accusations[s] for r in records for s, n in enumerate(names) if n == "deducer")
    else:
        wrong = sum(sum(r.wrong_accusations) for r in records)
    return digest.hexdigest()[:16], wrong, time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", nargs="+", default=["deducer", "expert"])
    ap.add_argument("--presets", nargs="+", default=["classic", "cards"])
    ap.add_argument("--games", type=int, default=256)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    labels = {player: player if "," in player else "4x " + player for player in args.players}
    width = max(14, *(len(label) + 2 for label in labels.values()))  # a mixed table's label is long
    print(f"{'players':<{width}}{'preset':<9}{'games':>6}  {'hash':<18}{'wrong acc.':>10}{'cpu s':>8}")
    for player in args.players:
        for preset in args.presets:
            h, wrong, cpu = play_hash(player, preset, args.games, args.batch, args.seed)
            print(f"{labels[player]:<{width}}{preset:<9}{args.games:>6}  {h:<18}{wrong:>10}{cpu:>8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
