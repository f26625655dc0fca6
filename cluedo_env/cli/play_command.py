"""``cluedo play``: one game, people against bots (or bots alone), in the terminal or in the browser.

The arguments are one parser for both; the terminal game is :mod:`~cluedo_env.cli.human_game`, the browser game
:mod:`~cluedo_env.cli.web_game` (``--web``). Every input is checked before the game starts: player names,
rules, the record path.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from cluedo_env.cli.human_game import HELP, HUMAN, play
from cluedo_env.errors import UsageError
from cluedo_env.options import ArgumentParser, add_rules_args, add_seed_arg, float_in, int_in, rules_overrides
from cluedo_env.record import check_record_path
from cluedo_env.rules.config import make_config

DESCRIPTION = "play a game in the terminal against bots (or watch bots play)"


def play_parser() -> ArgumentParser:
    p = ArgumentParser(prog="cluedo play", description=DESCRIPTION + ". " + HELP.splitlines()[0],
                       epilog="Players: 'human' (a person at this terminal; several play hot-seat), random, "
                       "heuristic, deducer, expert, belief_random, ckpt:PATH (a trained MaskablePPO .zip), "
                       "rllib:PATH.")  # fmt: skip
    p.add_argument("--players", nargs="+", default=[HUMAN, "deducer", "heuristic", "heuristic"], metavar="NAME",
                   help="one entry per seat: 'human' or a player name (random, heuristic, deducer, expert, "
                   "ckpt:PATH); the count sets the number of players "
                   "(default: human deducer heuristic heuristic)")  # fmt: skip
    add_rules_args(p)
    add_seed_arg(p, None, "the deal and the dice")
    p.add_argument("--record", default=None, metavar="FILE",
                   help="where to save the game record (default: cluedo_game_<date>_<time>.json)")  # fmt: skip
    p.add_argument("--no-record", action="store_true", help="do not save the game")
    p.add_argument("--color", action="store_true", help="ANSI colours on the board")
    p.add_argument("--board", action="store_true",
                   help="print the full board at each of your turns (it needs about 100x55; b shows it on demand)")
    p.add_argument("--no-board", action="store_true",
                   help="do not print the board at each of your turns (the default: a turn fits 80x24)")
    web = p.add_argument_group("in the browser (cluedo_env.cli.web_game)")
    web.add_argument("--web", action="store_true",
                     help="play in the browser: a local server for one game (127.0.0.1 only)")  # fmt: skip
    web.add_argument("--port", type=int_in(0, 65535, "a port number"), default=0, metavar="N",
                     help="the server's port (default: 0, a free port)")  # fmt: skip
    web.add_argument("--no-open", action="store_true", help="print the URL only; do not open a browser")
    web.add_argument("--idle-timeout", type=float_in(0, "a number of seconds"), default=300.0, metavar="S",
                     help="end (and save) the game when the page has been closed this long (default: 300)")  # fmt: skip
    return p


def play_command(argv: list[str], input_fn: Callable[[str], str] | None, output: Callable[[str], None] | None) -> int:
    args = play_parser().parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    if args.record is not None and args.no_record:
        raise UsageError("--record and --no-record contradict each other (give one of them)")
    from cluedo_env.training.players import check_player_names  # registers the ckpt: / rllib: loaders the names need

    check_player_names(args.players, allowed_extra=(HUMAN,))
    rules = rules_overrides(args.rule, args.max_turns, "--players", len(args.players), args.preset)
    make_config(args.preset, **rules)  # a bad preset or rule fails here, before anything else
    path = None if args.no_record else (args.record or time.strftime("cluedo_game_%Y%m%d_%H%M%S.json"))
    if path is not None:
        check_record_path(path)
    if args.web and args.players.count(HUMAN) != 1:
        raise UsageError(f"--web needs exactly one 'human' among --players, got {args.players.count(HUMAN)} "
                         "(one seat for the person at the browser)")  # fmt: skip
    if HUMAN not in args.players:
        say("note: no 'human' among --players; the bots play on their own")
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().generate_state(1)[0] >> 1)
    if args.web:
        from cluedo_env.cli.web_game import web_command  # the server's modules load only for --web

        return web_command(args, args.players, seed, path, rules, say)
    play(args.players, args.preset, seed, path, rules, input_fn, output, color=args.color,
         show_board=args.board and not args.no_board)  # fmt: skip
    return 0


