"""OpenSpiel's search bots in our games: ISMCTS and MCTS (random rollouts) against 3 deducers or 3 random players.

    python scripts/openspiel_bots.py --games 10 --simulations 100       # prints the table
    python scripts/openspiel_bots.py --games 10 --out docs/data/openspiel.json

Each game is played in a one-game VectorEngine with our players in three seats; the OpenSpiel bot's
seat (rotating, ``game % players``) plays a ``python_cluedo`` state kept in step with the engine:
the same deal (``export_game``), the same dice totals (``last_roll``) as chance outcomes, the same
actions. ISMCTS (``open_spiel.python.algorithms.ismcts``) samples worlds with the game's
``resample_from_infostate`` (at most ``--world-samples`` per decision, cloned after that). MCTS
(``open_spiel.python.algorithms.mcts``) needs a perfect-information state: it searches one world
sampled from its seat's information state per decision (a determinization), never the true deal.
Win rates carry 95% Wilson intervals; seconds per decision are the bot's own.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import date
from typing import Any

import numpy as np

CONFIGS = (("classic", 4), ("cards", 4))
BOTS = ("ismcts", "mcts")
OPPONENTS = ("deducer", "random")


def make_bot(kind: str, game: Any, simulations: int, world_samples: int, seed: int) -> Any:
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts

    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    if kind == "ismcts":
        return ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=simulations,
                                max_world_samples=world_samples, random_state=rng)  # fmt: skip
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=simulations, evaluator=evaluator, random_state=rng,
                       solve=False)  # fmt: skip
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)

    class Determinized:
        """MCTS on one world drawn from the seat's information state (it must not see the true deal)."""

        def step(self, state: Any) -> int:
            world = state.resample_from_infostate(state.current_player(), sampler)
            return int(bot.step(world))

    return Determinized()


def play(preset: str, players: int, bot_kind: str, opponent: str, games: int, simulations: int, world_samples: int,
         seed: int) -> dict[str, Any]:  # fmt: skip
    """``games`` games, the bot in seat ``g % players`` of game ``g``; its wins and decision times."""
    import pyspiel
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.stats import wilson_interval

    import cluedo_env.openspiel  # noqa: F401 - registers python_cluedo
    from cluedo_env.engine.reference import Game
    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView
    from cluedo_env.rules import actions as A

    game = pyspiel.load_game("python_cluedo", {"preset": preset, "players": players})
    config = game.config
    eng = VectorEngine(config, 1, threads=1)
    views = [PlayerView(eng, s) for s in range(players)]
    agents = [make_agent(opponent, seed=seed + s) for s in range(players)]
    wins = decisions = 0
    seconds = 0.0
    endings: dict[str, int] = {}
    one = np.zeros(1, np.int64)
    for g in range(games):
        bot_seat = g % players
        bot = make_bot(bot_kind, game, simulations, world_samples, seed + 1000 * g)
        eng.reset(seed + g)
        for agent, view in zip(agents, views, strict=True):
            agent.reset(view, one)
        snap = eng.export_game(0)
        dealt = Game.from_dict(snap)
        state = game.new_initial_state()
        deck = [dealt.hands[k % players][k // players] for k in range(18)]
        for outcome in [*dealt.envelope, *deck, *dealt.weapon_room]:
            state.apply_action(outcome)
        while not state.is_terminal():
            seat = state.current_player()
            if seat == bot_seat:
                t = time.perf_counter()
                action = int(bot.step(state))
                seconds += time.perf_counter() - t
                decisions += 1
            else:
                action = int(agents[seat].act(views[seat], one)[0])
            eng.step(np.array([action]))
            state.apply_action(action)
            if action == A.ROLL:
                state.apply_action(int(eng.last_roll[0]))
            for agent, view in zip(agents, views, strict=True):
                agent.observe_step(view)
            assert state.is_terminal() == bool(eng.done[0])
        winner = int(eng.winner[0])
        wins += winner == bot_seat
        ending = "truncated" if eng.truncated[0] else ("no winner" if winner < 0 else "won")
        endings[ending] = endings.get(ending, 0) + 1
    lo, hi = wilson_interval(wins, games)
    return {"preset": preset, "players": players, "bot": bot_kind, "opponents": f"3 x {opponent}", "games": games,
            "wins": wins, "win_rate": wins / games, "wilson95": [lo, hi], "decisions": decisions,
            "seconds_per_decision": seconds / max(decisions, 1), "endings": endings}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/openspiel_bots.py", description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games per row (default 10)")
    parser.add_argument("--simulations", type=int, default=100, help="search simulations per decision")
    parser.add_argument("--world-samples", type=int, default=10, help="ISMCTS: sampled worlds per decision")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the rows as JSON (e.g. docs/data/openspiel.json)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.simulations < 1 or args.world_samples < 1:
        parser.error("--games, --simulations and --world-samples must be positive integers")
    rows = []
    start = time.perf_counter()
    print(f"{'preset':8} {'bot':7} {'opponents':14} {'games':>5} {'win rate':>8} {'95% Wilson':>15} {'s/decision':>10}")
    for preset, players in CONFIGS:
        for bot in BOTS:
            for opponent in OPPONENTS:
                row = play(preset, players, bot, opponent, args.games, args.simulations, args.world_samples, args.seed)
                rows.append(row)
                lo, hi = row["wilson95"]
                print(f"{preset:8} {bot:7} {row['opponents']:14} {row['games']:5d} {row['win_rate']:8.2f} "
                      f"{f'[{lo:.2f}, {hi:.2f}]':>15} {row['seconds_per_decision']:10.3f}", flush=True)  # fmt: skip
    total = time.perf_counter() - start
    print(f"total {total:.0f} s")
    if args.out:
        from cluedo_env.files import write_atomic

        command = (f"python scripts/openspiel_bots.py --games {args.games} --simulations {args.simulations} "
                   f"--world-samples {args.world_samples} --seed {args.seed} --out {args.out}")  # fmt: skip
        doc = {"command": command, "machine": platform.processor() or platform.machine(), "threads": 1,
               "date": date.today().isoformat(), "total_seconds": round(total, 1), "rows": rows}  # fmt: skip
        write_atomic(args.out, lambda f: f.write(json.dumps(doc, indent=2) + "\n"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
