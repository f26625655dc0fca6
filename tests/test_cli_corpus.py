"""Every command line, fed bad input: one line ``error: <what> (<what is allowed>)``, exit status 2, no work done.

The corpus runs in-process through ``cluedo_env.cli.main`` (and the scripts' ``main`` through
``cluedo_env.errors.run_cli``), capturing stderr, so that a hundred invocations take seconds;
a few real subprocesses check the entry points themselves, and that ``--debug`` shows the traceback.
Each invocation must fail before any game or training starts: nothing may appear in its output
folders.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cluedo_env.cli import main as cluedo
from cluedo_env.errors import run_cli

ROOT = Path(__file__).resolve().parents[1]
ERROR_LINE = re.compile(r"^error: \S.* \(.+\)$")

def _train_cfg(tmp: Path, extra: str) -> str:
    """A small valid training config with the keys of ``extra`` (YAML) replacing its own, as YAML text."""
    import yaml

    cfg = {"run_dir": f"{tmp}/run", "total_timesteps": 64, "checkpoint_every": 64,
           "env": {"num_envs": 4, "opponents": "random"}, "eval": {"every": 0, "games": 0},
           "ppo": {"n_steps": 8, "batch_size": 32, "n_epochs": 1, "net_arch": [8]}}  # fmt: skip
    return yaml.safe_dump({**cfg, **(yaml.safe_load(extra) or {})})


# (name, argv, fragment of the error). {tmp} is a scratch folder with the files made by `files` below.
CORPUS: list[tuple[str, list[str], str]] = [
    # ---- the top level
    ("no command", [], "no command given"),
    ("unknown command", ["nope"], "unknown command 'nope'"),
    ("option instead of command", ["--players", "human"], "unknown command '--players'"),
    ("misspelt command", ["evalute"], "commands: play, check, replay, evaluate, train, bench"),
    # ---- play
    ("play: unknown bot", ["play", "--players", "human", "nosuchbot", "--no-record"], "unknown player 'nosuchbot'"),
    ("play: two in the card game", ["play", "--players", "human", "random", "--preset", "cards", "--no-record"],
     "players=2 is not allowed"),  # fmt: skip
    ("play: seven players", ["play", "--players", *["random"] * 7, "--no-record"], "players=7"),
    ("play: unknown preset", ["play", "--preset", "nope", "--no-record"], "unknown preset 'nope'"),
    ("play: negative seed", ["play", "--seed", "-1", "--no-record"], "--seed"),
    ("play: seed not a number", ["play", "--seed", "abc", "--no-record"], "'abc' is not a seed"),
    ("play: seed too big", ["play", "--seed", str(2**64), "--no-record"], "out of range"),
    ("play: max turns 0", ["play", "--max-turns", "0", "--no-record"], "--max-turns"),
    ("play: max turns huge", ["play", "--max-turns", str(10**12), "--no-record"], "1 to 10000"),
    ("play: --rule players conflicts", ["play", "--rule", "players=3", "--no-record"], "conflicts with --players"),
    ("play: --rule without =", ["play", "--rule", "dice", "--no-record"], "is not KEY=VALUE"),
    ("play: --rule unknown key", ["play", "--rule", "colour=red", "--no-record"], "unknown config key(s) ['colour']"),
    ("play: --rule bad dice", ["play", "--rule", "dice=3", "--no-record"], "dice=3 is not allowed"),
    ("play: --rule bad bool", ["play", "--rule", "accusation_in_room=maybe", "--no-record"], "accusation_in_room"),
    ("play: --rule max_turns conflicts", ["play", "--rule", "max_turns=5", "--max-turns", "6", "--no-record"],
     "conflicts with --max-turns"),  # fmt: skip
    ("play: record is a folder", ["play", "--players", "random", "random", "--record", "{tmp}"], "is a directory"),
    ("play: record under a file", ["play", "--players", "random", "random", "--record", "{tmp}/afile/x.json"],
     "is a file, not a folder"),  # fmt: skip
    ("play: record and no-record", ["play", "--record", "{tmp}/x.json", "--no-record"], "contradict"),
    ("play: no players", ["play", "--players"], "expected at least one argument"),
    ("play: unknown option", ["play", "--bogus"], "unrecognized arguments: --bogus"),
    ("play: stray argument", ["play", "--color", "extra"], "unrecognized arguments: extra"),
    ("play: missing checkpoint", ["play", "--players", "human", "ckpt:{tmp}/none.zip", "--no-record"],
     "is not a file"),  # fmt: skip
    ("play: junk checkpoint", ["play", "--players", "human", "ckpt:{tmp}/junk.zip", "random", "--no-record"],
     "not a zip file"),  # fmt: skip
    ("play: empty prefix", ["play", "--players", "human", ":x", "--no-record"], "unknown player ':x'"),
    ("play: missing rules file", ["play", "--preset", "{tmp}/missing.yaml", "--no-record"], "cannot read rules file"),
    ("play: binary rules file", ["play", "--preset", "{tmp}/binary.yaml", "--no-record"], "not a text file"),
    ("play: list rules file", ["play", "--preset", "{tmp}/list.yaml", "--no-record"], "must be a mapping"),
    ("play: broken YAML", ["play", "--preset", "{tmp}/broken.yaml", "--no-record"], "not valid YAML"),
    ("play: rules: 5", ["play", "--preset", "{tmp}/rules5.yaml", "--no-record"], "'rules' must be a mapping"),
    ("play: card game with accusation_in_room", ["play", "--preset", "cards", "--players", "human", "random", "random",
     "--rule", "accusation_in_room=true", "--no-record"], "needs a board"),  # fmt: skip
    # ---- check
    ("check: no file", ["check"], "the following arguments are required"),
    ("check: missing file", ["check", "{tmp}/missing.json"], "is not a file"),
    ("check: a folder", ["check", "{tmp}"], "is not a file"),
    ("check: unknown option", ["check", "--bogus", "{tmp}/good.json"], "unrecognized arguments"),
    # ---- replay
    ("replay: no file", ["replay"], "the following arguments are required"),
    ("replay: missing file", ["replay", "{tmp}/missing.json"], "cannot read record"),
    ("replay: corrupt JSON", ["replay", "{tmp}/corrupt.json"], "not valid JSON"),
    ("replay: deeply nested JSON", ["replay", "{tmp}/deep.json"], "nested too deeply"),
    ("replay: another schema", ["replay", "{tmp}/schema.json"], "schema"),
    ("replay: binary file", ["replay", "{tmp}/binary.yaml"], "not UTF-8"),
    ("replay: tampered record", ["replay", "{tmp}/tampered.json"], "does not replay"),
    ("replay: bad step type", ["replay", "{tmp}/badstep.json"], "steps[0].action must be an integer"),
    ("replay: out is a folder", ["replay", "{tmp}/good.json", "--out", "{tmp}"], "is a directory"),
    ("replay: out under a file", ["replay", "{tmp}/good.json", "--out", "{tmp}/afile/x.html"], "is a file"),
    ("replay: two files", ["replay", "{tmp}/good.json", "{tmp}/good.json"], "unrecognized arguments"),
    # ---- evaluate
    ("evaluate: no players", ["evaluate", "--games", "3"], "one of the arguments --players --round-robin"),
    ("evaluate: both player options", ["evaluate", "--players", "random", "random", "--round-robin", "a", "b"],
     "not allowed with"),  # fmt: skip
    ("evaluate: batch size 0", ["evaluate", "--players", "random", "random", "random", "--batch-size", "0"],
     "--batch-size 0 is out of range"),  # fmt: skip
    ("evaluate: negative seed", ["evaluate", "--players", "random", "random", "random", "--seed", "-1"],
     "--seed -1 is out of range"),  # fmt: skip
    ("evaluate: zero games", ["evaluate", "--players", "random", "random", "random", "--games", "0"], "--games 0"),
    ("evaluate: games not a number", ["evaluate", "--players", "random", "random", "--games", "x"], "invalid int"),
    ("evaluate: --rule players", ["evaluate", "--players", *["random"] * 4, "--rule", "players=3"],
     "--rule players=3 conflicts with --players"),  # fmt: skip
    ("evaluate: --seats with --players", ["evaluate", "--players", *["random"] * 4, "--seats", "3"],
     "--seats 3 conflicts with --players"),  # fmt: skip
    ("evaluate: round robin of one name twice", ["evaluate", "--round-robin", "random", "random"],
     "two or more different names"),  # fmt: skip
    ("evaluate: round robin of one", ["evaluate", "--round-robin", "random"], "two or more different names"),
    ("evaluate: round robin seats 9", ["evaluate", "--round-robin", "random", "heuristic", "--seats", "9"],
     "players=9"),  # fmt: skip
    ("evaluate: unknown player", ["evaluate", "--players", "random", "nosuch", "random"], "unknown player 'nosuch'"),
    ("evaluate: missing checkpoint", ["evaluate", "--players", "random", "ckpt:{tmp}/none.zip", "random"],
     "is not a file"),  # fmt: skip
    ("evaluate: junk checkpoint", ["evaluate", "--players", "random", "ckpt:{tmp}/junk.zip", "random"],
     "not a zip file"),  # fmt: skip
    ("evaluate: out is a file", ["evaluate", "--players", "random", "random", "--out", "{tmp}/afile"],
     "is a file, not a folder"),  # fmt: skip
    ("evaluate: out under a file", ["evaluate", "--players", "random", "random", "--out", "{tmp}/afile/sub"],
     "is a file, not a folder"),  # fmt: skip
    ("evaluate: out where nothing can be written", ["evaluate", "--players", "random", "random", "--out", "/proc/x"],
     "cannot write in '/proc'"),  # fmt: skip
    ("evaluate: record where nothing can be written",
     ["evaluate", "--players", "random", "random", "--record", "/proc/x"], "cannot write in '/proc'"),  # fmt: skip
    ("evaluate: record is a file", ["evaluate", "--players", "random", "random", "--record", "{tmp}/afile"],
     "--record"),  # fmt: skip
    ("evaluate: record-games without record", ["evaluate", "--players", "random", "random", "--record-games", "3"],
     "needs --record"),  # fmt: skip
    ("evaluate: unknown preset", ["evaluate", "--players", "random", "random", "--preset", "nope"], "unknown preset"),
    ("evaluate: max turns 0", ["evaluate", "--players", "random", "random", "--max-turns", "0"], "max_turns=0"),
    ("evaluate: max turns huge", ["evaluate", "--players", "random", "random", "--max-turns", str(10**12)],
     "max_turns"),  # fmt: skip
    ("evaluate: unknown rule", ["evaluate", "--players", "random", "random", "--rule", "colour=red"], "colour"),
    ("evaluate: bad rule value", ["evaluate", "--players", "random", "random", "--rule", "refutation=some"],
     "refutation='some'"),  # fmt: skip
    ("evaluate: two in the card game", ["evaluate", "--players", "random", "random", "--preset", "cards"],
     "players=2"),  # fmt: skip
    ("evaluate: seven players", ["evaluate", "--players", *["random"] * 7], "players=7"),
    ("evaluate: unknown option", ["evaluate", "--players", "random", "random", "--gmaes", "3"], "unrecognized"),
    # ---- train (MaskablePPO)
    ("train: no config", ["train"], "the following arguments are required: --config"),
    ("train: missing config", ["train", "--config", "{tmp}/missing.yaml"], "cannot read training config"),
    ("train: config is a folder", ["train", "--config", "{tmp}"], "it is a folder"),
    ("train: empty config", ["train", "--config", "{tmp}/empty.yaml"], "the training config is empty"),
    ("train: YAML list", ["train", "--config", "{tmp}/list.yaml"], "got a YAML list"),
    ("train: binary config", ["train", "--config", "{tmp}/binary.yaml"], "not a text file"),
    ("train: broken YAML", ["train", "--config", "{tmp}/broken.yaml"], "not valid YAML"),
    ("train: unknown key", ["train", "--config", "{tmp}/t_colour.yaml"], "unknown config key 'colour'"),
    ("train: checkpoint_every -1", ["train", "--config", "{tmp}/t_ckpt.yaml"], "checkpoint_every=-1"),
    ("train: total_timesteps lots", ["train", "--config", "{tmp}/t_lots.yaml"], "total_timesteps must be an integer"),
    ("train: nine players", ["train", "--config", "{tmp}/t_players.yaml"], "players=9"),
    ("train: unknown opponent", ["train", "--config", "{tmp}/t_opp.yaml"], "unknown player 'nosuch'"),
    ("train: two opponents for three seats", ["train", "--config", "{tmp}/t_opp2.yaml"], "a list of 3 names"),
    ("train: negative learning rate", ["train", "--config", "{tmp}/t_lr.yaml"], "ppo.learning_rate=-1"),
    ("train: zero-width layer", ["train", "--config", "{tmp}/t_arch.yaml"], "ppo.net_arch=[0]"),
    ("train: ppo not a mapping", ["train", "--config", "{tmp}/t_ppo.yaml"], "'ppo' must be a mapping"),
    ("train: negative seed in config", ["train", "--config", "{tmp}/t_seed.yaml"], "seed=-1"),
    ("train: seat 7", ["train", "--config", "{tmp}/t_seat.yaml"], "env.seat=7"),
    ("train: macro_accuse without belief", ["train", "--config", "{tmp}/t_macro.yaml"], "needs env.belief"),
    ("train: bool as string", ["train", "--config", "{tmp}/t_bool.yaml"], "env.belief must be True or False"),
    ("train: league probabilities", ["train", "--config", "{tmp}/t_league.yaml"], "bot_prob + league.self_prob"),
    ("train: eval games -1", ["train", "--config", "{tmp}/t_eval.yaml"], "eval.games=-1"),
    ("train: rules: 5", ["train", "--config", "{tmp}/t_rules.yaml"], "env.rules=5"),
    ("train: missing init_from", ["train", "--config", "{tmp}/t_init.yaml"], "init_from="),
    ("train: run_dir is a file", ["train", "--config", "{tmp}/t_rundir.yaml"], "run_dir"),
    ("train: total timesteps -1", ["train", "--config", "{tmp}/t_ok.yaml", "--total-timesteps", "-1"],
     "--total-timesteps"),  # fmt: skip
    ("train: seed -5", ["train", "--config", "{tmp}/t_ok.yaml", "--seed", "-5"], "--seed"),
    ("train: resume with nothing", ["train", "--config", "{tmp}/t_ok.yaml", "--resume", "--run-dir", "{tmp}/empty_run"],
     "nothing to resume"),  # fmt: skip
    ("train: unknown backend", ["train", "--config", "{tmp}/t_ok.yaml", "--backend", "jax"], "--backend 'jax'"),
    # ---- train (RLlib)
    ("rllib: missing config", ["train", "--backend", "rllib", "--config", "{tmp}/missing.yaml"],
     "cannot read RLlib config"),  # fmt: skip
    ("rllib: empty config", ["train", "--backend", "rllib", "--config", "{tmp}/empty.yaml"], "is empty"),
    ("rllib: bad setup", ["train", "--backend", "rllib", "--config", "{tmp}/r_setup.yaml"], "setup='league'"),
    ("rllib: zero iterations", ["train", "--backend", "rllib", "--config", "{tmp}/r_iter.yaml"], "iterations=0"),
    ("rllib: unknown opponent", ["train", "--backend", "rllib", "--config", "{tmp}/r_bot.yaml"], "'nosuchbot'"),
    ("rllib: --iterations 0", ["train", "--backend", "rllib", "--config", "{tmp}/r_ok.yaml", "--iterations", "0"],
     "--iterations"),  # fmt: skip
    ("rllib: resume with nothing", ["train", "--backend", "rllib", "--config", "{tmp}/r_ok.yaml", "--resume",
     "--run-dir", "{tmp}/empty_run"], "no checkpoint"),  # fmt: skip
    # ---- bench
    ("bench: zero seconds", ["bench", "--seconds", "0"], "--seconds"),
    ("bench: seconds not a number", ["bench", "--seconds", "x"], "invalid float value: 'x'"),
    ("bench: infinite seconds", ["bench", "--seconds", "inf"], "finite"),
    ("bench: batch size 0", ["bench", "--batch-sizes", "0"], "--batch-sizes"),
    ("bench: config players not a number", ["bench", "--configs", "classic:x"], "not a number of players"),
    ("bench: unknown preset", ["bench", "--configs", "nope:4"], "unknown preset 'nope'"),
    ("bench: two in the card game", ["bench", "--configs", "cards:2"], "players=2"),
    ("bench: zero repeats", ["bench", "--repeats", "0"], "--repeats"),
    ("bench: out is a folder", ["bench", "--out", "{tmp}"], "is a directory"),
    ("bench: negative seed", ["bench", "--seed", "-1"], "--seed"),
]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """The files the corpus names: broken configs and records, a junk checkpoint, a good record."""
    from cluedo_env.cli import play

    tmp = tmp_path_factory.mktemp("corpus")
    (tmp / "afile").write_text("not a folder\n")
    (tmp / "junk.zip").write_bytes(b"this is not a zip file")
    (tmp / "binary.yaml").write_bytes(bytes(range(256)) * 4)
    (tmp / "list.yaml").write_text("- classic\n- 4\n")
    (tmp / "broken.yaml").write_text("preset: [classic\nplayers: 4\n")
    (tmp / "rules5.yaml").write_text("rules: 5\n")
    (tmp / "empty.yaml").write_text("")
    (tmp / "corrupt.json").write_text('{"schema": ')
    (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp / "schema.json").write_text(json.dumps({"schema": "something/1"}))
    (tmp / "empty_run").mkdir()
    record = play(["random", "random", "random"], "cards", seed=1, record_path=tmp / "good.json", output=lambda _: None)
    tampered = json.loads(json.dumps(record))
    tampered["final"]["turn_count"] += 1
    (tmp / "tampered.json").write_text(json.dumps(tampered))
    badstep = json.loads(json.dumps(record))
    badstep["steps"][0]["action"] = "ROLL"
    (tmp / "badstep.json").write_text(json.dumps(badstep))
    train = {
        "t_ok": "",
        "t_colour": "colour: red",
        "t_ckpt": "checkpoint_every: -1",
        "t_lots": "total_timesteps: lots",
        "t_players": "env: {num_envs: 4, players: 9}",
        "t_opp": "env: {num_envs: 4, opponents: nosuch}",
        "t_opp2": "env: {num_envs: 4, opponents: [random, random]}",
        "t_lr": "ppo: {learning_rate: -1}",
        "t_arch": "ppo: {net_arch: [0]}",
        "t_ppo": "ppo: 5",
        "t_seed": "seed: -1",
        "t_seat": "env: {num_envs: 4, seat: 7}",
        "t_macro": "env: {num_envs: 4, macro_accuse: true}",
        "t_bool": "env: {num_envs: 4, belief: 'yes'}",
        "t_league": "league: {enabled: true, bot_prob: 0.8, self_prob: 0.5}",
        "t_eval": "eval: {every: 0, games: -1}",
        "t_rules": "env: {num_envs: 4, rules: 5}",
        "t_init": f"init_from: {tmp}/none.zip",
        "t_rundir": f"run_dir: {tmp}/afile",
    }
    for name, extra in train.items():
        (tmp / f"{name}.yaml").write_text(_train_cfg(tmp, extra))
    rllib = {"r_ok": "", "r_setup": "setup: league", "r_iter": "iterations: 0", "r_bot": "opponents: nosuchbot"}
    for name, extra in rllib.items():
        (tmp / f"{name}.yaml").write_text(f"run_dir: {tmp}/rllib_run\niterations: 1\n{extra}\n")
    return tmp


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 80
    assert len({name for name, _, _ in CORPUS}) == len(CORPUS)  # names identify cases


@pytest.mark.parametrize("name,argv,fragment", CORPUS, ids=[c[0] for c in CORPUS])
def test_bad_invocation_is_one_error_line_and_exit_2(name, argv, fragment, scratch, capsys, monkeypatch):
    monkeypatch.chdir(scratch)  # a default output (cluedo_game_*.json, results/) would land here
    before = _files(scratch)
    argv = [a.format(tmp=scratch) for a in argv]
    played: list[str] = []
    status = cluedo(argv, input_fn=lambda _: "q", output=played.append)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert status == 2, (status, err, out)
    assert len(lines) == 1, err
    assert ERROR_LINE.match(lines[0]), lines[0]
    assert fragment.format(tmp=scratch) in lines[0], lines[0]
    assert "Traceback" not in out + err
    assert _files(scratch) == before, "a bad invocation wrote files"
    assert not any("Turn" in line for line in played), "a game started"


@pytest.mark.parametrize(
    "module,argv,fragment",
    [
        ("scripts/evaluate.py", ["--players", "random", "random", "--batch-size", "0"], "--batch-size 0"),
        ("scripts/evaluate.py", ["--players", "random", "random", "--seed", "-1"], "--seed -1"),
        ("scripts/simulate.py", ["--games", "0"], "--games"),
        ("scripts/simulate.py", ["--players", "9"], "players=9"),
        ("scripts/demo.py", ["--out", "{tmp}/afile"], "is a file, not a folder"),
        ("scripts/demo.py", ["--timesteps", "0"], "--timesteps"),
        ("cluedo_env.training.sb3.train", ["--config", "{tmp}/missing.yaml"], "cannot read training config"),
        ("cluedo_env.training.rllib.train", ["--config", "{tmp}/r_iter.yaml"], "iterations=0"),
        ("scripts/bench.py", ["--seconds", "-1"], "--seconds"),
    ],
)
def test_script_mains_report_the_same_way(module, argv, fragment, scratch, capsys):
    """The scripts' own ``main`` (what ``python scripts/x.py`` / ``python -m`` run) under run_cli."""
    import importlib

    name = module.removesuffix(".py").replace("/", ".")  # scripts/x.py -> scripts.x (a package, never loaded by path)
    mod = importlib.import_module(name)
    status = run_cli(mod.main, [a.format(tmp=scratch) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and ERROR_LINE.match(err[0]) and fragment in err[0], err


def test_every_subcommand_has_a_complete_help(capsys):
    """``cluedo X --help`` exits 0 and lists every shared option the subcommand takes."""
    expected = {
        "play": ["--players", "--preset", "--rule", "--max-turns", "--seed", "--record", "--no-record"],
        "check": ["FILE"],
        "replay": ["FILE", "--out"],
        "evaluate": ["--players", "--round-robin", "--games", "--preset", "--rule", "--max-turns", "--seed",
                     "--batch-size", "--out", "--record", "--no-progress"],  # fmt: skip
        "train": ["--config", "--backend", "--resume", "--total-timesteps", "--run-dir", "--seed", "--no-progress"],
        "bench": ["--batch-sizes", "--configs", "--seconds", "--repeats", "--json", "--out", "--seed", "--quick"],
    }
    for command, options in expected.items():
        with pytest.raises(SystemExit) as info:
            cluedo([command, "--help"])
        assert info.value.code == 0
        text = capsys.readouterr().out
        assert text.startswith(f"usage: cluedo {command}"), text[:80]
        for option in options:
            assert option in text, (command, option)
    assert cluedo(["--help"]) == 0
    text = capsys.readouterr().out
    for command in expected:
        assert command in text


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_entry_points_in_real_processes(scratch):
    """A handful of real runs: the scripts and ``python -m`` print one line and exit 2; --debug shows the traceback."""
    cases = [
        (["-m", "cluedo_env.cli", "play", "--seed", "-1"], "--seed"),
        ([str(ROOT / "scripts" / "evaluate.py"), "--players", "random", "random", "--batch-size", "0"], "--batch-size"),
        ([str(ROOT / "scripts" / "bench.py"), "--seconds", "0"], "--seconds"),
        (["-m", "cluedo_env.training.sb3.train", "--config", str(scratch / "list.yaml")], "got a YAML list"),
    ]
    for args, fragment in cases:
        proc = _run(*args, cwd=scratch)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and ERROR_LINE.match(lines[0]), (args, proc.stderr)
        assert fragment in lines[0]
    proc = _run("-m", "cluedo_env.cli", "play", "--players", "human", "nosuch", "--no-record", "--debug", cwd=scratch)
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "UsageError" in proc.stderr
