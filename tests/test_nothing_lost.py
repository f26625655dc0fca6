"""Nothing lost: output files never replaced, inputs bounded, one run per folder, prompts that survive any answer,
typed options, a resume that refuses a changed run, our exceptions at our boundary, a finished game kept."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluedo_env.checks import OptionTypeError, check_bool, check_int, check_seed
from cluedo_env.errors import CluedoError, CluedoIndexError, CluedoKeyError, CluedoTypeError, UsageError
from cluedo_env.files import check_writable_file, lock_dir, read_input, write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


# ============================================================================ 1. files
def test_an_output_symlink_is_refused_and_its_target_kept(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    for call in (lambda: check_writable_file(link), lambda: write_text_atomic(link, "new")):
        with pytest.raises(UsageError, match="symbolic link"):
            call()
    assert link.is_symlink() and target.read_text() == "keep"


def test_an_output_fifo_is_refused_not_replaced(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        write_text_atomic(fifo, "new")
    assert fifo.exists() and not fifo.is_file()


def test_inputs_are_regular_files_under_a_limit(tmp_path):
    with pytest.raises(UsageError, match="not a regular file"):
        read_input("/dev/zero", "record")
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 2000)
    with pytest.raises(UsageError, match="over the limit of 1000"):
        read_input(big, "record", limit=1000)
    link = tmp_path / "link.json"
    link.symlink_to(big)
    assert read_input(link, "record") == b"x" * 2000  # a symlink to a regular file is an input like any other
    with pytest.raises(UsageError, match="a folder"):
        read_input(tmp_path, "record")


def test_replay_of_an_endless_input_is_an_error_not_a_read_without_end(tmp_path):
    p = subprocess.run([sys.executable, "-m", "cluedo_env.cli", "replay", "/dev/zero", "--out",
                        str(tmp_path / "x.html")], capture_output=True, text=True, timeout=120, env=ENV)  # fmt: skip
    assert p.returncode == 2 and p.stderr.startswith("error: ") and "not a regular file" in p.stderr, p.stderr


def test_a_locked_folder_is_refused_at_once_with_the_holder_pid(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom cluedo_env.files import lock_dir\n"
                               f"with lock_dir({str(tmp_path)!r}):\n    print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True, env=ENV)  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.perf_counter()
        with pytest.raises(UsageError, match=f"in use by another run \\(pid {holder.pid}"):
            with lock_dir(tmp_path):
                pass
        assert time.perf_counter() - t0 < 1.0
    finally:
        holder.kill()
        holder.wait()
    with lock_dir(tmp_path):  # the kernel released the dead holder's lock
        pass


def _evaluate(out: Path, seed: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cluedo_env.cli", "evaluate", "--players", "random", "random",
                             "random", "--games", "300", "--batch-size", "3", "--seed", str(seed), "--no-progress",
                             "--out", str(out), "--record", str(out / "games")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)  # fmt: skip


def test_two_evaluations_into_one_out_never_mix(tmp_path):
    out = tmp_path / "out"
    first, second = _evaluate(out, 1), _evaluate(out, 2)
    results = [(p.wait(timeout=600), p.stderr.read()) for p in (first, second)]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    assert refused.startswith("error: ") and ("in use by another run" in refused or "earlier" in refused), refused
    report = json.loads((out / "tournament.json").read_text())
    winner_seed = report["seed"]
    assert winner_seed in (1, 2) and len(list((out / "games").glob("game_*.json"))) == 300
    again = _evaluate(out, 3)  # one after the other: the second is refused, the first run's files stay whole
    assert again.wait(timeout=600) == 2 and "earlier evaluation" in again.stderr.read()
    assert json.loads((out / "tournament.json").read_text())["seed"] == winner_seed


def test_a_rules_file_that_disagrees_with_players_is_an_error(tmp_path):
    from cluedo_env.cli import main

    f = tmp_path / "five.yaml"
    f.write_text("preset: classic\nplayers: 5\n")
    with pytest.raises(UsageError, match="says players: 5 but --players gives 3"):
        main(["play", "--players", "random", "random", "random", "--preset", str(f), "--no-record", "--debug"])


# ============================================================================ 2. prompts
def _console_game(answers: list[str], tmp_path: Path):
    from cluedo_env.cli.human_game import play

    it = iter(answers)
    out: list[str] = []
    path = tmp_path / "g.json"
    record = play(["human", "random", "random"], seed=3, record_path=path, input_fn=lambda _p: next(it),
                  output=out.append)  # fmt: skip
    return record, path, out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=st.lists(st.one_of(st.text(max_size=300), st.from_regex(r"[+-]?[0-9]{1,6000}", fullmatch=True),
                                  st.sampled_from(["b", "n", "h", "x", "back", "", " ", "\x00", "\x1b[A"])),
                        max_size=25))  # fmt: skip
def test_any_answer_at_any_prompt_is_reasked_or_quits_and_the_record_is_saved(answers, tmp_path):
    answers = [a for a in answers if a.strip().lower() not in ("q", "quit", "exit")]
    _, path, _ = _console_game(answers + ["q"], tmp_path)  # StopIteration never reached: q ends it
    assert json.loads(path.read_text())["schema"].startswith("cluedo_env.record")


@pytest.mark.parametrize("error", [EOFError, KeyboardInterrupt, OSError(5, "Input/output error"),
                                   UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")])  # fmt: skip
def test_a_closed_or_broken_input_saves_the_game(error, tmp_path):
    from cluedo_env.cli.human_game import play

    path = tmp_path / "g.json"

    def broken(_prompt):
        raise error

    play(["human", "random", "random"], seed=3, record_path=path, input_fn=broken, output=lambda _t: None)
    assert path.is_file()


def test_an_unforeseen_error_still_saves_the_game(tmp_path):
    from cluedo_env.cli.human_game import play

    path = tmp_path / "g.json"

    def bug(_prompt):
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError):
        play(["human", "random", "random"], seed=3, record_path=path, input_fn=bug, output=lambda _t: None)
    assert path.is_file()


def _pty_play(tmp_path: Path, answers: list[bytes], hangup: bool = False, args: tuple[str, ...] | list[str] = (),
              bots: tuple[str, ...] = ("random", "random")) -> tuple[int, str, Path]:  # fmt: skip
    """``cluedo play`` in a real terminal (a pty), fed ``answers`` one per prompt; returns status, screen, record."""
    rec = tmp_path / "game.json"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the game, on the pty
        os.environ.update(ENV)
        os.execv(sys.executable, [sys.executable, "-m", "cluedo_env.cli", "play", "--players", "human", *bots,
                                  "--seed", "3", "--record", str(rec), *args])  # fmt: skip
    screen = b""
    pending = list(answers)
    deadline = time.monotonic() + 300
    status = None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            screen += chunk
            if screen.rstrip().endswith(b":") or screen.rstrip().endswith(b"):"):
                if pending:
                    os.write(fd, pending.pop(0) + b"\r")
                    screen += b"\n"
                elif hangup:  # the window closes: the kernel hangs up the session, reads fail from then on
                    time.sleep(0.5)
                    os.close(fd)
                    fd = None
                    break
    _, status = os.waitpid(pid, 0)
    if fd is not None:
        os.close(fd)
    return os.waitstatus_to_exitcode(status), screen.decode(errors="replace"), rec


def test_pty_hostile_answers_then_quit_save_the_game(tmp_path):
    answers = [b"9" * 5000, "\u00b2".encode(), b"\xff\xfe", b"x" * 3000, b"0", b"-1", b"1e9", b"q"]
    code, screen, rec = _pty_play(tmp_path, answers)
    assert code == 0, screen[-2000:]
    assert "Traceback" not in screen and "is out of range" in screen
    assert rec.is_file() and "unfinished game" in screen


def test_pty_a_closed_terminal_saves_the_game(tmp_path):
    code, screen, rec = _pty_play(tmp_path, [b"1"], hangup=True)
    assert "Traceback" not in screen, screen[-2000:]
    assert rec.is_file() and json.loads(rec.read_text())["final"]["phase"] != "over"


# ============================================================================ 3. typed options
NOT_BOOLS = st.one_of(st.text(max_size=5), st.integers(), st.floats(allow_nan=False), st.none(),
                      st.lists(st.booleans()))


@given(NOT_BOOLS)
def test_a_flag_is_a_bool_and_nothing_else(value):
    with pytest.raises(OptionTypeError) as info:
        check_bool("macro_moves", value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert check_bool("x", True) is True and check_bool("x", np.False_) is False


@given(st.one_of(st.floats(), st.text(max_size=4), st.booleans(), st.integers(min_value=11), st.integers(max_value=0)))
def test_an_integer_option_is_an_int_in_range(value):
    with pytest.raises(CluedoError):
        check_int("count", value, 1, 10)


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=2**63), st.text(max_size=3), st.floats()))
def test_a_seed_is_a_non_negative_int_below_2_63(value):
    with pytest.raises(CluedoError):
        check_seed(value)


@pytest.mark.parametrize("name", ["macro_moves", "belief", "end_on_elimination", "macro_accuse"])
@pytest.mark.parametrize("value", ["no", "false", 0, 1, None, 1.0])
def test_learner_options_take_only_bools(name, value):
    from cluedo_env.training.learner_options import LearnerOptions

    with pytest.raises(OptionTypeError, match=name):
        LearnerOptions(**{name: value})


# ============================================================================ 4. resume and checkpoints
def test_resume_refuses_a_changed_config_naming_the_keys():
    from cluedo_env.training.resume_check import config_changes
    from cluedo_env.training.sb3.resume import SAFE_TO_CHANGE, check_resume_config

    saved = {"total_timesteps": 100, "env": {"players": 4, "preset": "classic"}, "ppo": {"net_arch": [8],
             "learning_rate": 0.001}, "eval": {"every": 10}}  # fmt: skip
    safe = {**saved, "total_timesteps": 500, "eval": {"every": 20}}
    assert config_changes(saved, safe, SAFE_TO_CHANGE) == []
    check_resume_config(saved, safe, Path("run"))
    changed = {**saved, "env": {"players": 3, "preset": "classic"}, "ppo": {"net_arch": [16], "learning_rate": 0.001}}
    assert config_changes(saved, changed, SAFE_TO_CHANGE) == ["env.players", "ppo.net_arch"]
    with pytest.raises(CluedoError, match=r"env.players: 4 -> 3; ppo.net_arch: \[8\] -> \[16\]"):
        check_resume_config(saved, changed, Path("run"))


def test_resume_takes_a_key_the_run_predates_as_its_default():
    """A run saved before a config key existed (here ``env.accusation_features``) resumes under a config that has
    it at its default; set to anything else, it is a change."""
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.resume import check_resume_config

    cfg = load_train_config("configs/experiments/champion_4p.yaml")
    saved = cfg.to_dict()
    del saved["env"]["accusation_features"]
    check_resume_config(saved, cfg, Path("run"))
    with pytest.raises(CluedoError, match=r"env.accusation_features: False -> True"):
        check_resume_config(saved, cfg.with_overrides(env={"accusation_features": True}), Path("run"))


def test_rllib_resume_refuses_a_changed_config_naming_the_keys(tmp_path):
    """An RLlib run keeps the config it started with (``config.json``); ``--resume`` compares before Ray starts."""
    pytest.importorskip("ray.rllib")
    from cluedo_env.training.rllib.config import load_config
    from cluedo_env.training.rllib.train import RUN_CONFIG, check_resume

    cfg = load_config("configs/rllib_vs_random.yaml", run_dir=str(tmp_path))
    check_resume(cfg, tmp_path)  # no saved config (a run from before): nothing to compare
    (tmp_path / RUN_CONFIG).write_text(json.dumps(cfg.to_dict(), default=str))
    check_resume(cfg.with_overrides(iterations=cfg.iterations + 5), tmp_path)  # training longer is the same run
    changed = cfg.with_overrides(env={"players": 3}, eval={"opponents": ["random", "random"]})
    with pytest.raises(CluedoError, match=r"env.players: 4 -> 3"):
        check_resume(changed, tmp_path)


def test_a_checkpoint_refuses_other_rules_unless_told_out_of_distribution(capsys):
    from cluedo_env.agents.play.registry import make_agent

    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView
    from cluedo_env.errors import CheckpointError

    eng = VectorEngine("seed000", 1)  # the same shapes as classic, other rules
    eng.reset(0)
    view = PlayerView(eng, 0)
    with pytest.raises(CheckpointError, match="trained under other rules"):
        make_agent("pretrained:vs_heuristic").reset(view, np.arange(1))
    agent = make_agent('pretrained:vs_heuristic{"out_of_distribution": true}')
    agent.reset(view, np.arange(1))
    assert "plays out of distribution" in capsys.readouterr().err


# ============================================================================ 5. our exceptions
def test_our_errors_are_also_the_builtins_they_replace():
    assert issubclass(CluedoIndexError, IndexError) and issubclass(CluedoKeyError, KeyError)
    assert issubclass(CluedoTypeError, TypeError) and all(
        issubclass(t, ValueError) for t in (CluedoIndexError, CluedoKeyError, CluedoTypeError))
    assert str(CluedoKeyError("unknown agent 'x'")) == "unknown agent 'x'"  # not KeyError's quoted repr


@pytest.mark.parametrize("action", ["870", "3.5", "-1", "'roll'", "10**30"])
def test_env_rejects_a_bad_action_with_our_error_also_under_python_O(action):
    code = ("import cluedo_env\nfrom cluedo_env.rules.actions import IllegalActionError\n"
            "e = cluedo_env.env(); e.reset(seed=0)\n"
            f"try:\n    e.step({action})\nexcept IllegalActionError as x:\n    print('ok', x)\n")  # fmt: skip
    p = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=300, env=ENV)
    assert p.stdout.startswith("ok "), p.stderr[-1500:]


def test_a_batch_too_big_names_the_memory_it_would_take():
    from cluedo_env.engine.vector_engine import VectorEngine

    with pytest.raises(CluedoError, match=r"would take [0-9.]+ TiB"):
        VectorEngine("classic", 10**12)


@pytest.mark.parametrize("out", [np.zeros((2, 5), np.int8), np.zeros((2, 2628)), "x",
                                 np.zeros((2628, 2), np.int8).T])  # fmt: skip
def test_a_bad_out_array_is_a_clear_type_error(out):
    from cluedo_env.engine.vector_engine import VectorEngine

    eng = VectorEngine("classic", 2)
    eng.reset(0)
    with pytest.raises(CluedoTypeError, match="out must be a C-contiguous"):
        eng.observe(out=out)
    with pytest.raises(CluedoTypeError, match="out must be a C-contiguous"):
        eng.observe_game(0, 0, out=out)


# ============================================================================ 6. a finished game is kept
def test_stepping_a_finished_game_keeps_its_result():
    from cluedo_env.engine.vector_engine import VectorEngine

    eng = VectorEngine("classic", 2)
    eng.reset(1)
    rng = np.random.default_rng(0)
    finished = None
    while finished is None or eng.phase[1 - finished] != 5:
        done = np.flatnonzero(eng.phase == 5)
        if finished is None and len(done):
            finished = int(done[0])
            kept = (eng.rewards[finished].copy(), eng.export_game(finished))
        actions = eng.sample_random_actions(rng)
        actions[eng.phase == 5] = -1
        step = eng.step(actions)
        if finished is not None:
            assert not step.rewards[finished].any()  # this step gave the finished game nothing
            np.testing.assert_array_equal(eng.rewards[finished], kept[0])
            assert eng.export_game(finished) == kept[1]
    assert kept[0].any()


# ============================================================================ 37.7: cluedo play fits 80x24
def test_pty_a_whole_game_fits_an_80x24_terminal(tmp_path):
    """A real terminal session through a whole game: every line within 80 columns, and at every prompt the
    player's status (hand and notebook summary) among the last 24 lines; the board only on demand."""
    import re

    answers = [b"b"] + [b"1"] * 3000
    code, screen, rec = _pty_play(tmp_path, answers, args=["--max-turns", "30"], bots=("heuristic", "heuristic"))
    assert code == 0 and "Traceback" not in screen, screen[-3000:]
    assert "Viewer: Scarlet (seat 0), hand:" in screen  # b: the full board on demand
    after_board = screen.index("Choose [", screen.index("Viewer: Scarlet"))  # the board on demand is ~100 wide
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", x) for x in screen[after_board:].replace("\r", "").split("\n")]
    wide = [x for x in lines if len(x) > 80 and not x.startswith("Game record saved to")]  # that line: the path
    assert not wide, wide[:3]
    prompts = [i for i, x in enumerate(lines) if re.search(r"(Choose \[.*\]|\(y/n\)|: ): ?\S*$", x)]
    assert len(prompts) > 10
    for i in prompts[1:]:  # the first is the prompt the board on demand answered
        recent = lines[max(0, i - 23) : i + 1]
        assert any(x.startswith("You: Scarlet") for x in recent), "\n".join(recent)
    assert "toward " in screen and "square 1" not in screen.split("Where do you move")[1][:400]
    assert json.loads(rec.read_text())["final"]["phase"] == "over"
