"""``cluedo evaluate``: any mix of players by name, seats rotated, seeded; tables, JSON and a chart.

    python scripts/evaluate.py --players heuristic random random random --games 1000 --preset classic \\
        --seed 0 --out results/eval
    python scripts/evaluate.py --round-robin random heuristic deducer expert --games 2000 --preset cards \\
        --seats 4 --out results/rr_cards

What each mode measures (tournament, round robin with ratings) is described in :mod:`cluedo_env.agents.play.tournament`;
``--head-to-head A B`` is :mod:`cluedo_env.agents.play.head_to_head`.

**Records** (``--record DIR``, optionally ``--record-games N``): every game (or the first N) is
saved as a game record ``DIR/game_00000.json`` ... (schema in :mod:`cluedo_env.record`), which
``cluedo_env.record.replay`` replays to the same final state.

Outputs in ``--out`` (a folder): ``tournament.md``/``.json``/``.png`` or ``round_robin.md``/``.json``/``.png``
(the PNG: win rates with 95% error bars, or ratings with 95% error bars).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path

from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.tournament import (
    MAX_BATCH,
    RecordSink,
    play_match,
    round_robin,
    round_robin_lineups,
    round_robin_markdown,
    summarize,
    tournament_markdown,
    write_round_robin,
    write_tournament,
)
from cluedo_env.errors import UsageError
from cluedo_env.files import check_writable_dir, lock_dir, write_text_atomic
from cluedo_env.options import SEED_MAX, ArgumentParser, parse_rule, rules_overrides
from cluedo_env.rules.config import PRESETS, RulesConfig, make_config
from cluedo_env.training.players import check_player_names

# ============================================================================ command line
_parse_rule = parse_rule  # the one --rule parser of every command (cluedo_env.cli)


def _checked(args: argparse.Namespace) -> tuple[RulesConfig, list[str]]:
    """Every argument checked, players built once, output folders checked: all before the first game."""
    for opt, value, lo, hi in (("--games", args.games, 1, 10**8), ("--seed", args.seed, 0, SEED_MAX),
                               ("--batch-size", args.batch_size, 1, MAX_BATCH)):  # fmt: skip
        if not lo <= value <= hi:
            raise UsageError(f"{opt} {value} is out of range (an integer from {lo} to {hi})")
    if args.record_games is not None and (args.record is None or args.record_games < 0):
        raise UsageError("--record-games needs --record DIR and a count >= 0 (e.g. --record games --record-games 10)")
    if args.players and args.seats is not None and args.seats != len(args.players):
        raise UsageError(f"--seats {args.seats} conflicts with --players ({len(args.players)} names) "
                         "(one name per seat; --seats is for --round-robin)")  # fmt: skip
    names = args.players or args.round_robin or list(args.head_to_head)
    if args.round_robin and (len(set(names)) != len(names) or len(names) < 2):
        raise UsageError(f"--round-robin {' '.join(names)}: a round robin needs two or more different names "
                         "(each name once)")  # fmt: skip
    seats_option = "--players" if args.players else "--seats"
    seats = len(args.players) if args.players else args.seats
    overrides = rules_overrides(args.rule, args.max_turns, seats_option, seats, args.preset)
    config = make_config(args.preset, **overrides)
    check_player_names(names)
    for name in dict.fromkeys(names):  # a checkpoint that does not load fails now, not after other pairings
        agent = make_agent(name, seed=0)
        if hasattr(agent, "network_for"):  # a pretrained name with a network per table size: this table's, or an error
            agent = agent.network_for(config.players)
        meta = getattr(agent, "meta", None)
        rules = meta.get("rules") if isinstance(meta, dict) else None
        if isinstance(rules, dict) and (rules.get("players"), rules.get("board")) != (config.players, config.board):
            raise UsageError(
                f"player {name!r} was trained for {rules.get('players')} players, board {rules.get('board')!r} "
                f"(this evaluation: {config.players} players, board {config.board!r}; use matching --preset/--players)"
            )
    check_writable_dir(args.out, "--out")
    if args.record:
        check_writable_dir(args.record, "--record")
    return config, names


def _epilog() -> str:
    """``--help``'s text: the usage examples, then what the modes measure (from
    :mod:`cluedo_env.agents.play.tournament`)."""
    from cluedo_env.agents.play import tournament

    modes = tournament.__doc__.split("**Tournament**", 1)[1].split("\n\nReports:", 1)[0]
    return __doc__.split("\n\n", 1)[1] + "\n\n**Tournament**" + modes


def main(argv: list[str] | None = None, prog: str | None = None) -> dict:
    ap = ArgumentParser(prog=prog, description=__doc__.splitlines()[0], epilog=_epilog(),
                        formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--players", nargs="+", metavar="NAME", help="one player name per seat (names may repeat)")
    who.add_argument("--round-robin", nargs="+", metavar="NAME", help="different player names to play every pairing")
    who.add_argument("--head-to-head", nargs=2, metavar=("A", "B"), help="one A against P-1 Bs, A's seat rotated")
    ap.add_argument("--games", type=int, default=1000, help="games of the tournament, or of each round-robin pairing")
    ap.add_argument("--preset", default="classic", help=f"one of {', '.join(PRESETS)} or a YAML rules file")
    ap.add_argument("--seats", type=int, default=None, help="players per game in a round robin (default: the preset's)")
    ap.add_argument("--rule", action="append", type=_parse_rule, default=[], metavar="KEY=VALUE",
                    help="a rules flag on top of the preset, e.g. --rule refutation=all (repeatable)")  # fmt: skip
    ap.add_argument("--max-turns", type=int, default=None, metavar="N",
                    help="cut a game after N turns (1..10000; default: the preset's)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the deals, dice and players (default 0)")
    ap.add_argument("--batch-size", type=int, default=1024, metavar="B", help="games played at once (default 1024)")
    ap.add_argument("--out", default="results/eval", help="folder for the .md, .json and .png reports")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--record", metavar="DIR", default=None,
                    help="save every game as a JSON game record DIR/game_00000.json ...")  # fmt: skip
    ap.add_argument("--record-games", type=int, default=None, metavar="N",
                    help="with --record: save only the first N games")  # fmt: skip
    args = ap.parse_args(argv)
    config, _ = _checked(args)
    with contextlib.ExitStack() as held:  # each output folder is this run's until it ends
        folders = {Path(f).resolve(): what for f, what in ((args.record, "--record"), (args.out, "--out")) if f}
        for folder, what in folders.items():
            held.enter_context(lock_dir(folder, what))
        _check_no_earlier_run(args)
        return _run(args, config, argv)


EARLIER_OUTPUTS = ("tournament.*", "round_robin.*", "head_to_head.*")


def _check_no_earlier_run(args: argparse.Namespace) -> None:
    """Refuse folders that hold an earlier evaluation's reports or records: two runs' files are never mixed."""
    out = Path(args.out)
    found = sorted(p.name for pattern in EARLIER_OUTPUTS for p in out.glob(pattern))
    if found:
        raise UsageError(f"--out {str(out)!r} already holds an earlier evaluation ({', '.join(found[:4])}) "
                         "(choose an empty folder, or remove those files first)")  # fmt: skip
    if args.record:
        games = sorted(Path(args.record).glob("game_*.json"))
        if games:
            raise UsageError(f"--record {args.record!r} already holds {len(games)} game record(s) of an earlier run "
                             f"({games[0].name} ...) (choose an empty folder, or remove them first)")  # fmt: skip


def _run(args: argparse.Namespace, config: RulesConfig, argv: list[str] | None) -> dict:
    sink = RecordSink(args.record, args.record_games) if args.record else None

    if args.head_to_head:
        return _head_to_head(args, config)

    from tqdm import tqdm

    P = config.players
    if args.players:
        total = math.ceil(args.games / P) * P
    else:
        pairs = round_robin_lineups(args.round_robin, P)
        total = sum(math.ceil(math.ceil(args.games / len(ups)) / P) * P * len(ups) for _, ups in pairs)
    with tqdm(total=total, unit="game", disable=args.no_progress or None, dynamic_ncols=True) as bar:
        if args.players:
            match = play_match(config, args.players, args.games, seed=args.seed, batch_size=args.batch_size,
                               progress=bar.update, record=sink)
            result = summarize(match, config)
        else:
            result = round_robin(
                config, args.round_robin, args.games, args.seed, args.batch_size, bar.update, record=sink
            )
    result["command"] = "python scripts/evaluate.py " + " ".join(sys.argv[1:] if argv is None else argv)
    result["seed"] = args.seed
    result["batch_size"] = args.batch_size
    out = Path(args.out)
    if args.players:
        paths = write_tournament(result, out)
        print(tournament_markdown(result))
    else:
        paths = write_round_robin(result, out)
        print(round_robin_markdown(result))
    print("wrote " + ", ".join(str(p) for p in paths))
    if sink is not None:
        result["records"] = {"folder": str(sink.folder), "games": sink.count}
        print(f"saved {sink.count} game records in {sink.folder}")
    return result


def _head_to_head(args: argparse.Namespace, config: RulesConfig) -> dict:
    """``--head-to-head A B`` (agents/play/head_to_head.py): print the table, write ``head_to_head.md``/``.json``."""
    from tqdm import tqdm

    from cluedo_env.agents.play.head_to_head import head_to_head, head_to_head_markdown

    a, b = args.head_to_head
    total = math.ceil(args.games / config.players) * config.players
    with tqdm(total=total, unit="game", disable=args.no_progress or None, dynamic_ncols=True) as bar:
        r = head_to_head(config, a, b, args.games, seed=args.seed, batch_size=args.batch_size, progress=bar.update)
    text = head_to_head_markdown(r)
    result = {**r.to_dict(), "command": "python scripts/evaluate.py " + " ".join(sys.argv[1:]), "seed": args.seed}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "head_to_head.md", text + "\n")
    write_text_atomic(out / "head_to_head.json", json.dumps(result, indent=1) + "\n")
    print(text)
    return result


if __name__ == "__main__":
    from cluedo_env.errors import run_cli

    sys.exit(run_cli(main))
