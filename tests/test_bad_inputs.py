"""A bad-input corpus of the public API and of the command lines: every case must end in a clear error.

Clear means: through the API, a :class:`~cluedo_env.errors.CluedoError` (which also derives from the
builtin a caller may already catch); on a command line, one ``error:`` line and exit status 2, or, where
the input is a person's answer, a re-asked prompt. ``python tests/test_bad_inputs.py`` prints the counts
(clear / raw builtin exception / silently accepted / traceback).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cluedo_env.errors import CluedoError

ROOT = Path(__file__).resolve().parents[1]


def _cluedo_env():
    import cluedo_env

    return cluedo_env


def _raw(**kw):
    from cluedo_env.envs.aec import raw_env

    env = raw_env(**kw)
    env.reset(seed=0)
    return env


def _wrapped(**kw):
    env = _cluedo_env().env(**kw)
    env.reset(seed=0)
    return env


def _finished_env():
    env = _wrapped()
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    return env


def _eng(batch: int = 2):
    from cluedo_env.engine.vector_engine import VectorEngine

    eng = VectorEngine("classic", batch)
    eng.reset(0)
    return eng


def _gym(**kw):
    import gymnasium

    _cluedo_env()
    import cluedo_env.training.single_agent  # noqa: F401 (registers the ids)

    return gymnasium.make("cluedo_env/Cluedo-v0", **kw)


def _finished_step_keeps_rewards():
    """A finished game's rewards must survive a later step (autoreset off)."""
    eng = _eng(1)
    rng = np.random.default_rng(0)
    while eng.phase[0] != 5:
        eng.step(eng.sample_random_actions(rng))
    before = eng.rewards.copy()
    eng.step(np.full(1, -1, np.int64))
    if not np.array_equal(before, eng.rewards):
        return "silent"  # the finished game's result changed
    return "ok"


# (name, a callable that must raise a CluedoError)
API_CORPUS: list[tuple[str, Callable[[], object]]] = [
    ("gym macro_moves='no'", lambda: _gym(macro_moves="no")),
    ("gym belief='false'", lambda: _gym(belief="false")),
    ("gym end_on_elimination=0", lambda: _gym(end_on_elimination=0)),
    ("gym end_on_elimination='yes'", lambda: _gym(end_on_elimination="yes")),
    ("gym macro_accuse=1", lambda: _gym(macro_accuse=1, belief=True)),
    ("gym seat=1.0", lambda: _gym(seat=1.0)),
    ("gym seat=True", lambda: _gym(seat=True)),
    ("gym seed='7'", lambda: _gym(seed="7")),
    ("gym seed=-3", lambda: _gym(seed=-3)),
    ("gym reset(seed=-1)", lambda: _gym().reset(seed=-1)),
    ("gym reset(seed='7')", lambda: _gym().reset(seed="7")),
    ("raw_env reset(seed=-1)", lambda: _raw().reset(seed=-1)),
    ("raw_env reset(seed='7')", lambda: _raw().reset(seed="7")),
    ("raw_env reset(seed=1.5)", lambda: _raw().reset(seed=1.5)),
    ("raw_env reset(seed=2**64)", lambda: _raw().reset(seed=2**64)),
    ("raw_env observe('player_9')", lambda: _raw().observe("player_9")),
    ("raw_env observe(3)", lambda: _raw().observe(3)),
    ("raw_env action_space('x')", lambda: _raw().action_space("x")),
    ("raw_env observation_space('x')", lambda: _raw().observation_space("x")),
    ("env step(870)", lambda: _wrapped().step(870)),
    ("env step(3.5)", lambda: _wrapped().step(3.5)),
    ("env step(-1)", lambda: _wrapped().step(-1)),
    ("env step('roll')", lambda: _wrapped().step("roll")),
    ("env step(10**30)", lambda: _wrapped().step(10**30)),
    ("env last() after the end", lambda: _finished_env().last()),
    ("env observe('player_9')", lambda: _wrapped().observe("player_9")),
    ("env(players='4')", lambda: _cluedo_env().env(players="4")),
    ("env(max_turns=True)", lambda: _cluedo_env().env(max_turns=True)),
    ("VectorEngine batch_size=10**12", lambda: _eng(10**12)),
    ("VectorEngine batch_size=0", lambda: _eng(0)),
    ("VectorEngine batch_size=2.0", lambda: _eng(2.0)),
    ("VectorEngine reset(seed=-1)", lambda: _eng().reset(-1)),
    ("VectorEngine reset(seed='7')", lambda: _eng().reset("7")),
    ("VectorEngine observe(out=float32)", lambda: _eng().observe(out=np.zeros((2, _eng().observation_size)))),
    ("VectorEngine observe(out=wrong shape)", lambda: _eng().observe(out=np.zeros((3, 5), np.int8))),
    ("VectorEngine observe(out=F order)",
     lambda: _eng().observe(out=np.zeros((2, _eng().observation_size), np.int8, order="F")[:, :])),  # fmt: skip
    ("VectorEngine observe_game(out=float64)", lambda: _eng().observe_game(0, 0, out=np.zeros(5))),
    ("VectorEngine observe_game(9, 0)", lambda: _eng().observe_game(9, 0)),
    ("VectorEngine observe_game(0, 9)", lambda: _eng().observe_game(0, 9)),
    ("VectorEngine observe(player=7)", lambda: _eng().observe(player=7)),
    ("VectorEngine export_game(5)", lambda: _eng().export_game(5)),
    ("VectorEngine reset_games([5])", lambda: _eng().reset_games(np.array([5]))),
    ("VectorEngine step(active=int)", lambda: _eng().step(np.zeros(2, np.int64), active=np.ones(2, int))),
    ("VectorEngine is_legal(7, 0)", lambda: _eng().is_legal(7, 0)),
    ("finished game keeps its rewards", _finished_step_keeps_rewards),
    ("LearnerOptions(macro_moves='no')", lambda: __import__("cluedo_env.training.learner_options").training
     .learner_options.LearnerOptions(macro_moves="no")),  # fmt: skip
    ("LearnerOptions(batch_size=10**12)", lambda: __import__("cluedo_env.training.learner_options").training
     .learner_options.LearnerOptions(batch_size=10**12).rules_config and _gym_vec(10**12)),  # fmt: skip
    ("RulesConfig(dice=True)", lambda: __import__("cluedo_env.rules.config").rules.config.RulesConfig(dice=True)),
    ("record.load('/dev/zero')", lambda: _in_child("from cluedo_env.record import load; load('/dev/zero')")),
    ("load_config('/dev/zero')",
     lambda: _in_child("from cluedo_env.rules.config import load_config; load_config('/dev/zero')")),  # fmt: skip
]


def _in_child(code: str):
    """Run ``code`` in a child limited to 1 GiB of memory; re-raise a CluedoError there as one here."""
    wrapper = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from cluedo_env.errors import CluedoError\n"
        "try:\n"
        f"    {code}\n"
        "except CluedoError as e:\n"
        "    print('CLEAR', e); sys.exit(3)\n"
    )
    p = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    if p.returncode == 3:
        raise CluedoError(p.stdout.strip())
    raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")


def _gym_vec(n: int):
    from cluedo_env.training.single_agent import CluedoVectorEnv

    return CluedoVectorEnv(n)


def classify_api(fn: Callable[[], object]) -> tuple[str, str]:
    """``clear`` (a CluedoError), ``raw`` (another exception) or ``silent`` (accepted), and the message."""
    try:
        out = fn()
    except CluedoError as exc:
        return "clear", f"{type(exc).__name__}: {exc}"
    except (Exception, MemoryError) as exc:  # noqa: BLE001 (the corpus counts every kind)
        return "raw", f"{type(exc).__name__}: {exc}"
    return ("clear", "kept") if isinstance(out, str) and out == "ok" else ("silent", "")


# ----------------------------------------------------------------------------- command lines
def _cli(args: list[str], cwd: Path, stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cluedo_env.cli", *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=timeout, env=env)  # fmt: skip


def _symlink_record(tmp: Path) -> str:
    target = tmp / "target.txt"
    target.write_text("keep me\n")
    link = tmp / "link.json"
    link.symlink_to(target)
    p = _cli(["play", "--players", "random", "random", "random", "--seed", "1", "--record", str(link)], tmp)
    if link.is_symlink() and target.read_text() == "keep me\n" and p.returncode == 2 and b"Traceback" not in p.stderr:
        return "clear"
    return "traceback" if b"Traceback" in p.stderr else "silent"


def _fifo_record(tmp: Path) -> str:
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    try:
        p = _cli(["play", "--players", "random", "random", "random", "--seed", "1", "--record", str(fifo)], tmp,
                 timeout=60)  # fmt: skip
    except subprocess.TimeoutExpired:
        return "silent"
    if fifo.exists() and not fifo.is_file() and p.returncode == 2:
        return "clear"
    return "traceback" if b"Traceback" in p.stderr else "silent"


def _replay_endless(tmp: Path) -> str:
    try:
        p = _cli(["replay", "/dev/zero", "--out", str(tmp / "x.html")], tmp, timeout=60)
    except subprocess.TimeoutExpired:
        return "silent"
    return _status(p)


def _replay_fifo(tmp: Path) -> str:
    fifo = tmp / "in.json"
    os.mkfifo(fifo)
    try:
        p = _cli(["replay", str(fifo), "--out", str(tmp / "x.html")], tmp, timeout=30)
    except subprocess.TimeoutExpired:
        return "silent"  # waits for a writer forever
    return _status(p)


def _play_answer(answer: bytes) -> Callable[[Path], str]:
    def case(tmp: Path) -> str:
        rec = tmp / "g.json"
        p = _cli(["play", "--players", "human", "random", "random", "--seed", "3", "--record", str(rec)], tmp,
                 stdin=answer + b"\n")  # fmt: skip
        if b"Traceback" in p.stderr:
            return "traceback"
        return "clear" if p.returncode in (0, 2, 130) and rec.is_file() else "silent"

    return case


def _rules_file_players(tmp: Path) -> str:
    f = tmp / "nine.yaml"
    f.write_text("preset: classic\nplayers: 5\n")
    p = _cli(["play", "--players", "random", "random", "random", "--preset", str(f), "--no-record", "--seed", "1"],
             tmp)  # fmt: skip
    return _status(p)


def _evaluate_twice(tmp: Path) -> str:
    args = ["evaluate", "--players", "random", "random", "random", "--games", "4", "--batch-size", "4",
            "--no-progress", "--out", str(tmp / "out")]  # fmt: skip
    first = _cli(args, tmp)
    if first.returncode != 0:
        return "traceback" if b"Traceback" in first.stderr else "silent"
    return _status(_cli(args + ["--seed", "5"], tmp))


def _evaluate_symlink_out(tmp: Path) -> str:
    (tmp / "real").mkdir()
    (tmp / "out").symlink_to(tmp / "real")
    p = _cli(["evaluate", "--players", "random", "random", "random", "--games", "4", "--batch-size", "4",
              "--no-progress", "--out", str(tmp / "out")], tmp)  # fmt: skip
    if b"Traceback" in p.stderr:
        return "traceback"
    # the documented rule: a folder given as a symlink is written through, the link itself stays
    written = (tmp / "out").is_symlink() and (tmp / "real" / "tournament.json").is_file()
    return "clear" if p.returncode == 0 and written else "silent"


def _status(p: subprocess.CompletedProcess) -> str:
    if b"Traceback" in p.stderr:
        return "traceback"
    if p.returncode == 2 and p.stderr.decode(errors="replace").startswith("error: "):
        return "clear"
    return "silent"


def _cli_args(args: list[str]) -> Callable[[Path], str]:
    return lambda tmp: _status(_cli(args, tmp))


CLI_CORPUS: list[tuple[str, Callable[[Path], str]]] = [
    ("play --record a symlink", _symlink_record),
    ("play --record a fifo", _fifo_record),
    ("replay /dev/zero", _replay_endless),
    ("replay a fifo", _replay_fifo),
    ("play: a 5,000-digit answer", _play_answer(b"9" * 5000)),
    ("play: a 100,000-character answer", _play_answer(b"x" * 100_000)),
    ("play: bytes that are not UTF-8", _play_answer(b"\xff\xfe\x00\x01")),
    ("play: a NUL byte", _play_answer(b"1\x002")),
    ("play: '+1'", _play_answer(b"+1\n+1\n+1")),
    ("play: '1e9'", _play_answer(b"1e9")),
    ("play: '٣' (an Arabic digit)", _play_answer("٣".encode())),
    ("play: rules file says 5 players, --players 3", _rules_file_players),
    ("evaluate twice into one --out", _evaluate_twice),
    ("evaluate --out a symlink", _evaluate_symlink_out),
    ("check /dev/zero", _cli_args(["check", "/dev/zero"])),
    ("play --rule macro=yes", _cli_args(["play", "--rule", "dice=yes", "--no-record"])),
]


def classify_cli(case: Callable[[Path], str], tmp: Path) -> str:
    return case(tmp)


# ----------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("name,fn", API_CORPUS, ids=[n for n, _ in API_CORPUS])
def test_api_bad_input_is_a_clear_error(name, fn):
    kind, message = classify_api(fn)
    assert kind == "clear", f"{name}: {kind} {message}"


@pytest.mark.parametrize("name,case", CLI_CORPUS, ids=[n for n, _ in CLI_CORPUS])
def test_cli_bad_input_is_a_clear_error(name, case, tmp_path):
    assert classify_cli(case, tmp_path) == "clear", name


if __name__ == "__main__":  # the counts for a report
    import tempfile
    from collections import Counter

    sys.path.insert(0, str(ROOT))
    api = Counter()
    for name, fn in API_CORPUS:
        kind, message = classify_api(fn)
        api[kind] += 1
        print(f"api  {kind:<9} {name}: {message[:150]}")
    cli = Counter()
    for name, case in CLI_CORPUS:
        with tempfile.TemporaryDirectory() as d:
            kind = classify_cli(case, Path(d))
        cli[kind] += 1
        print(f"cli  {kind:<9} {name}")
    print(f"API ({len(API_CORPUS)}): {dict(api)}")
    print(f"CLI ({len(CLI_CORPUS)}): {dict(cli)}")
