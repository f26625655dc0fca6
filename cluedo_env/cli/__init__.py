"""The ``cluedo`` command line: play, check and replay games; evaluate, train and benchmark players.

    cluedo play --players human deducer heuristic heuristic --preset classic --seed 1 --record game.json
    cluedo play --web --players human deducer deducer deducer   # in the browser (cluedo_env.cli.web_game)
    cluedo check game.json                       # replay a record and confirm its final state
    cluedo replay game.json [--out game.html]    # the record as an offline HTML replay page (cluedo_env.render.html)
    cluedo evaluate --players deducer heuristic heuristic heuristic --games 1000 --out results/eval
    cluedo train --config configs/train_vs_random.yaml [--resume]     # --backend rllib for Ray RLlib
    cluedo bench --quick
    cluedo warmup                                # compile every kernel once (about a minute on an empty cache)
    cluedo convert-checkpoint OLD.zip NEW.zip --trust-pickle   # an older checkpoint, once, as data
    python -m cluedo_env.cli play ...            # the same without the installed entry point

Subcommands share argument names (``--players``, ``--preset``, ``--rule``, ``--max-turns``,
``--seed``, ``--games``, ``--batch-size``, ``--out``, ``--config``, ``--no-progress``) and each has a
complete ``--help``. Bad input of any kind is one line on stderr, ``error: <what> (<what is
allowed>)``, and exit status 2 (``--debug`` shows the traceback instead); inputs and output paths are
checked before any game or training starts. The heavy parts (agents, torch, ray, the evaluator
script) are imported only by the subcommand that needs them.

Each command is one module: :mod:`~cluedo_env.cli.play_command` (the terminal game in :mod:`~cluedo_env.cli.human_game`,
the browser game in :mod:`~cluedo_env.cli.web_game`), :mod:`~cluedo_env.cli.evaluate`, :mod:`~cluedo_env.cli.bench`,
:mod:`~cluedo_env.cli.warmup`; ``check``, ``replay`` and ``train`` are short enough to live here. The
command line sits on top of the layers (it may import ``agents`` and ``training``; nothing below imports it).
"""


from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from cluedo_env.cli.human_game import HUMAN, HumanGame, notebook_text, play
from cluedo_env.cli.play_command import DESCRIPTION as PLAY_DESCRIPTION
from cluedo_env.cli.play_command import play_command
from cluedo_env.errors import UsageError, run_cli
from cluedo_env.files import check_writable_file
from cluedo_env.options import ArgumentParser
from cluedo_env.record import RecordError, check, load

# ============================================================================ subcommands
COMMANDS: dict[str, str] = {
    "play": PLAY_DESCRIPTION,
    "check": "replay game records and confirm each reaches its recorded final state",
    "replay": "write a game record as a self-contained HTML replay page",
    "evaluate": "tournaments and round robins between players, seats rotated (cluedo_env.cli.evaluate)",
    "train": "train a player: MaskablePPO (cluedo_env.training.sb3) or Ray RLlib (--backend rllib) "
             "(cluedo_env.training.dispatch)",
    "bench": "speed of the vectorized engine on the workloads users run (cluedo_env.cli.bench)",
    "warmup": "compile every kernel once (the engine's and the players'), so later runs start at once",
    "convert-checkpoint": "rewrite an older checkpoint (pickled settings) as one that loads without running code "
                          "(once, for a file you trust: --trust-pickle) (cluedo_env.cli.convert_checkpoint)",
}

EPILOG = """examples:
  cluedo play --players human deducer heuristic heuristic --seed 1 --record game.json
  cluedo play --web --players human deducer deducer deducer
  cluedo check game.json
  cluedo replay game.json --out game.html
  cluedo evaluate --players deducer heuristic heuristic heuristic --games 1000 --out results/eval
  cluedo train --config configs/train_vs_random.yaml
  cluedo bench --quick

Every command takes --debug (a traceback instead of the one-line error) and --help."""


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: only for ``cluedo --help``; each subcommand builds its own parser when run."""
    ap = ArgumentParser(prog="cluedo", description="Cluedo (Clue) for reinforcement learning: one command line.",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--debug", action="store_true", help="show the traceback of an error instead of one line")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        sub.add_parser(name, help=text, add_help=False)
    return ap


def _cmd_check(argv: list[str], output: Callable[[str], None] | None) -> int:
    p = ArgumentParser(prog="cluedo check", description=COMMANDS["check"] + "; exit status 1 if any does not.")
    p.add_argument("files", nargs="+", metavar="FILE", help="game records (JSON, schema cluedo_env.record/1)")
    args = p.parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    for f in args.files:  # a path that is not a readable file is bad input, not a bad record
        if not Path(f).is_file():
            raise UsageError(f"record {f!r} is not a file (give paths of game record .json files)")
    bad = 0
    for f in args.files:
        try:
            rec = load(f)
            final = check(rec)
            res = rec["result"]
            say(f"{f}: OK, {len(rec['steps'])} steps, winner {res['winner']}, phase {final['phase']}")
        except RecordError as exc:
            bad += 1
            say(f"{f}: INVALID: {exc}")
    return 1 if bad else 0


def _cmd_replay(argv: list[str], output: Callable[[str], None] | None) -> int:
    p = ArgumentParser(prog="cluedo replay", description=COMMANDS["replay"] + " (opens offline in a browser).")
    p.add_argument("file", metavar="FILE", help="a game record (JSON), e.g. from cluedo play or evaluate --record")
    p.add_argument("--out", default=None, metavar="HTML", help="the page to write (default: FILE with .html)")
    args = p.parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    out = Path(args.out) if args.out else Path(args.file).with_suffix(".html")
    if Path(args.file).suffix.lower() == ".html" and out == Path(args.file):
        raise UsageError(f"the page {out} would overwrite the record (give --out or a .json record)")
    check_writable_file(out, "--out page")
    try:
        from cluedo_env.render.html import write_html
    except ImportError as exc:
        raise UsageError(f"the replay viewer is not available ({exc}) (reinstall cluedo_env with its data)") from exc
    rec = load(args.file)
    check(rec)  # a record that does not replay makes a page that lies: refuse it before writing
    written = write_html(rec, out)
    say(f"wrote {written}: open it in a browser (works offline)")
    return 0


def _cmd_evaluate(argv: list[str]) -> int:
    from cluedo_env.cli.evaluate import main as evaluate

    evaluate(argv, prog="cluedo evaluate")
    return 0


def _cmd_train(argv: list[str]) -> int:
    from cluedo_env.training.dispatch import main as train  # the backend's torch / ray load only for this command

    train(argv, prog="cluedo train")
    return 0


def _cmd_bench(argv: list[str]) -> int:
    from cluedo_env.cli.bench import main as bench

    return bench(argv, prog="cluedo bench")


def _dispatch(argv: list[str], input_fn: Callable[[str], str] | None, output: Callable[[str], None] | None) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        if not argv:
            raise UsageError(f"no command given (commands: {', '.join(COMMANDS)}; cluedo --help)")
        build_parser().print_help()
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        raise UsageError(f"unknown command {command!r} (commands: {', '.join(COMMANDS)})")
    if command == "play":
        return play_command(rest, input_fn, output)
    if command == "check":
        return _cmd_check(rest, output)
    if command == "replay":
        return _cmd_replay(rest, output)
    if command == "evaluate":
        return _cmd_evaluate(rest)
    if command == "train":
        return _cmd_train(rest)
    if command == "warmup":
        from cluedo_env.cli.warmup import main as warmup

        return warmup(rest, output)
    if command == "convert-checkpoint":
        from cluedo_env.cli.convert_checkpoint import main as convert

        return convert(rest, output)
    return _cmd_bench(rest)


def main(
    argv: list[str] | None = None,
    input_fn: Callable[[str], str] | None = None,
    output: Callable[[str], None] | None = None,
) -> int:
    """``cluedo COMMAND ...``: returns the exit status (2 and one ``error:`` line on stderr for bad input)."""
    return run_cli(lambda args: _dispatch(args, input_fn, output), argv)


__all__ = ["COMMANDS", "HUMAN", "HumanGame", "build_parser", "main", "notebook_text", "play"]


if __name__ == "__main__":
    sys.exit(main())
