"""Training smoke tests: a tiny MaskablePPO run checkpoints, resumes, and plays through the evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from cluedo_env.training.sb3.checkpoints import CheckpointError, load_model  # noqa: E402
from cluedo_env.training.sb3.config import load_train_config
from cluedo_env.training.sb3.train import TrainConfigError, Trainer, main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _plain_checkpoint(tmp_path):
    """A tiny checkpoint without belief features."""
    run = tmp_path / "plain"
    Trainer(_tiny(run, total_timesteps=256, eval={"games": 0}), progress=False).run()
    return run / "model.zip"


def _tiny(run_dir, **over):
    cfg = {
        "run_dir": str(run_dir),
        "seed": 0,
        "total_timesteps": 512,
        "checkpoint_every": 256,
        "env": {"num_envs": 16, "opponents": "random", "seat": "random", "macro_moves": True},
        "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1, "net_arch": [32]},
        "eval": {"every": 0, "games": 8, "batch_size": 8},
    }
    for k, v in over.items():
        cfg[k] = {**cfg.get(k, {}), **v} if isinstance(v, dict) else v
    return load_train_config(None, **cfg)


def test_train_checkpoint_resume_evaluate(tmp_path, capsys):
    run = tmp_path / "run"
    out = Trainer(_tiny(run), progress=False).run()
    assert out["timesteps"] == 512
    state = json.loads((run / "state.json").read_text())
    assert state["timesteps"] == 512 and (run / state["checkpoint"]).is_file()
    assert (run / "model.zip").is_file() and (run / "evals.jsonl").is_file()
    assert any((run / "tb").rglob("events.out.tfevents*"))
    ev = json.loads((run / "evals.jsonl").read_text().splitlines()[-1])
    assert ev["games"] >= 8 and 0.0 <= ev["win_rate"] <= 1.0

    # resume continues the step count from the checkpoint, and the episode log
    rows = (run / "monitor.csv").read_text().splitlines()
    out2 = Trainer(_tiny(run, total_timesteps=1024), resume=True, progress=False).run()
    assert out2["timesteps"] == 1024
    rows2 = (run / "monitor.csv").read_text().splitlines()
    assert rows2[: len(rows)] == rows and len(rows2) > len(rows)
    assert sum(line.startswith("#") for line in rows2) == 1
    assert json.loads((run / "state.json").read_text())["timesteps"] == 1024

    # the checkpoint plays in the tournament evaluator by name
    from cluedo_env.cli import evaluate

    res = evaluate.main(["--players", f"ckpt:{run / 'model.zip'}", "random", "random", "random", "--games", "8",
                         "--out", str(tmp_path / "eval"), "--no-progress"])  # fmt: skip
    assert res["games"] == 8
    capsys.readouterr()


def test_command_line_and_config_errors(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "env: {num_envs: 8, opponents: random}\nppo: {n_steps: 8, batch_size: 32, n_epochs: 1, net_arch: [16]}\n"
        "eval: {every: 0, games: 0}\ncheckpoint_every: 64\n"
    )
    out = main(["--config", str(cfg), "--total-timesteps", "64", "--run-dir", str(tmp_path / "r"), "--no-progress"])
    assert out["timesteps"] == 64
    with pytest.raises(TrainConfigError, match="unknown config key"):
        load_train_config(None, ppo={"n_stepz": 3})
    with pytest.raises(CheckpointError, match="nothing to resume"):
        Trainer(_tiny(tmp_path / "nothing"), resume=True, progress=False).run()


def test_malformed_and_mismatched_checkpoints(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(CheckpointError, match="not a zip"):
        load_model(bad)
    with pytest.raises(CheckpointError, match="no such file"):
        load_model(tmp_path / "missing.zip")
    import zipfile

    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(CheckpointError, match="not a Stable-Baselines3 model"):
        load_model(tmp_path / "other.zip")

    run = tmp_path / "run"
    Trainer(_tiny(run, total_timesteps=256, eval={"games": 0}), progress=False).run()
    good = run / "model.zip"
    truncated = tmp_path / "trunc.zip"
    truncated.write_bytes(good.read_bytes()[:2000])
    with pytest.raises(CheckpointError):
        load_model(truncated)
    with pytest.raises(CheckpointError, match="actions"):
        load_model(good, n_actions=870)  # trained with macro moves (682)
    with pytest.raises(CheckpointError, match="observations of size"):
        load_model(good, obs_size=1385)  # the card-only game's size

    from cluedo_env.agents.play.registry import make_agent

    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView
    from cluedo_env.rules.config import make_config

    agent = make_agent(f"ckpt:{good}")
    eng = VectorEngine(make_config("cards", players=4), 4)
    eng.reset(0)
    with pytest.raises(CheckpointError, match="observations of size"):
        agent.act(PlayerView(eng, 0), np.arange(4))


def test_demo_script_end_to_end(tmp_path, capsys):
    """scripts/demo.py (the README's main command) with tiny settings: trains against heuristic players in the card
    game, evaluates it and its two baselines, prints both tables; a second demo into the folder replaces the first."""
    from cluedo_env.errors import UsageError
    from scripts import demo

    folder = tmp_path / "demo"
    argv = ["--timesteps", "64", "--games", "8", "--num-envs", "16", "--out", str(folder), "--no-progress"]
    out = demo.main(argv)
    assert out["train"]["timesteps"] >= 64
    assert (folder / "train" / "model.zip").is_file()
    for name in ("eval", "eval_heuristic", "eval_belief_random"):
        assert (folder / name / "tournament.md").is_file(), name
    assert out["eval"]["games"] == 8 and all(b["games"] == 8 for b in out["baselines"].values())
    text = capsys.readouterr().out
    assert "| trained here (" in text and "| a heuristic player (parity: 25%) |" in text
    assert "| belief_random: its notebook and accusation, random play |" in text
    # the shipped players' rows come from their model cards, figures as measured there
    cards = demo.champion_rows()
    from cluedo_env.training.pretrained import tables_of

    assert {r["player"] for r in cards} >= {"pretrained:champion", "pretrained:cards_champion"}
    assert {f"pretrained:{m}" for m in tables_of("champion").values()} <= {r["player"] for r in cards}
    assert all(r["ci95"][0] <= r["win_rate"] <= r["ci95"][1] for r in cards)
    for r in cards:
        assert f"| {r['player']} | {r['opponents']} | {100 * r['win_rate']:.1f}% |" in text
    assert json.loads((folder / "demo.json").read_text())["status"] == "done"

    demo._claim(folder)  # what a second demo does first: the earlier demo's outputs are replaced, not refused
    assert "replacing the earlier demo" in capsys.readouterr().out
    assert sorted(p.name for p in folder.iterdir()) == ["demo.json"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not an earlier demo"):
        demo.main([*argv[:-2], str(other), "--no-progress"])
    assert (other / "notes.txt").read_text() == "mine"


def test_init_from_starts_a_new_run_from_a_checkpoint(tmp_path):
    import torch

    first = tmp_path / "first"
    Trainer(_tiny(first, eval={"games": 0}), progress=False).run()
    cfg = _tiny(tmp_path / "second", total_timesteps=0, eval={"games": 0}, init_from=str(first / "model.zip"))
    trainer = Trainer(cfg, progress=False)
    model = trainer._build()
    src = load_model(first / "model.zip").policy.state_dict()
    assert model.num_timesteps == 0
    assert all(torch.equal(v, src[k]) for k, v in model.policy.state_dict().items())
    bad = _tiny(tmp_path / "third", eval={"games": 0}, init_from=str(first / "model.zip"), ppo={"net_arch": [16]})
    with pytest.raises(CheckpointError, match="net_arch"):
        Trainer(bad, progress=False)._build()


def test_belief_and_macro_accusation_checkpoint_plays_by_name(tmp_path):
    """env.belief + env.macro_accuse: the checkpoint records them, the ckpt: player rebuilds the same
    inputs (its own notebook) and outputs, and a checkpoint of another size is refused clearly."""
    run = tmp_path / "belief"
    cfg = _tiny(run, env={"belief": True, "macro_accuse": True, "opponents": "heuristic"}, eval={"games": 8})
    Trainer(cfg, progress=False).run()
    model = load_model(run / "model.zip")
    meta = model.cluedo_meta
    assert meta["belief"] and meta["macro_accuse"]
    assert meta["n_actions"] == model.action_space.n == 359 and meta["obs_size"] == 2628 + 214
    with pytest.raises(CheckpointError, match="macro_accuse=True"):
        load_model(run / "model.zip", n_actions=682)
    with pytest.raises(CheckpointError, match="observations of size"):
        load_model(run / "model.zip", obs_size=2628)

    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games

    from cluedo_env.rules.config import make_config

    player = make_agent(f"ckpt:{run / 'model.zip'}", deterministic=False, seed=0)
    others = [make_agent(n, seed=k) for k, n in enumerate(["heuristic", "random", "heuristic"])]
    records = play_games(make_config("classic", players=4), [player, *others], 16, batch_size=8, seed=3)
    assert len(records) == 16  # the runner raises on an illegal action; every game ran to its end

    from scripts import policy_stats as stats_mod

    stats = stats_mod.policy_stats(str(run / "model.zip"), "random", steps=30, num_envs=8)
    assert stats["gambles_right"] <= stats["gambles"] and sum(stats["decisions"].values()) == 30 * 8
    with pytest.raises(CheckpointError, match="without belief"):
        stats_mod.policy_stats(str(_plain_checkpoint(tmp_path)), "random", steps=1, num_envs=2)


def test_compact_observation_checkpoint_plays_by_name(tmp_path):
    """env.observation=compact: the checkpoint records it and the ckpt: player rebuilds the compact inputs."""
    from cluedo_env.agents.learner.compact_observation import compact_size
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games

    from cluedo_env.rules.config import make_config

    run = tmp_path / "compact"
    cfg = _tiny(run, env={"belief": True, "macro_accuse": True, "observation": "compact", "opponents": "heuristic"},
                eval={"games": 0})  # fmt: skip
    Trainer(cfg, progress=False).run()
    meta = load_model(run / "model.zip").cluedo_meta
    config = make_config("classic", players=4)
    assert meta["observation"] == "compact" and meta["obs_size"] == compact_size(config) == 958
    player = make_agent(f"ckpt:{run / 'model.zip'}", deterministic=False, seed=0)
    others = [make_agent(n, seed=k) for k, n in enumerate(["heuristic", "random", "heuristic"])]
    assert len(play_games(config, [player, *others], 16, batch_size=8, seed=3)) == 16
    with pytest.raises(TrainConfigError, match="env.observation: .*needs belief=True"):
        load_train_config(None, **_tiny(tmp_path / "x", env={"observation": "compact"}))
    with pytest.raises(TrainConfigError, match="env.observation"):
        load_train_config(None, **_tiny(tmp_path / "x", env={"observation": "small", "belief": True}))


def test_self_play_league_draws_policies_and_checkpoints(tmp_path):
    from cluedo_env.training.sb3.checkpoints import PolicyAgent

    league = {"enabled": True, "bots": ["random"], "bot_prob": 0.0, "self_prob": 0.5, "max_size": 3,
              "swap_every": 256}  # fmt: skip
    cfg = _tiny(tmp_path / "league", total_timesteps=1024, checkpoint_every=256, league=league,
                env={"belief": True, "macro_accuse": True}, eval={"games": 0})  # fmt: skip
    trainer = Trainer(cfg, progress=False)
    out = trainer.run()
    assert out["timesteps"] == 1024
    state = json.loads((tmp_path / "league" / "state.json").read_text())
    assert 1 <= len(state["league"]) <= 3 and all((tmp_path / "league" / p).is_file() for p in state["league"])
    specs = trainer.raw_env.core.specs
    assert all(isinstance(s, PolicyAgent) for s in specs)  # bot_prob 0: the current policy or checkpoints
    out2 = Trainer(cfg.with_overrides(total_timesteps=1280), resume=True, progress=False).run()
    assert out2["timesteps"] == 1280


def test_every_shipped_training_config_loads():
    from cluedo_env.training.sb3.config import TrainConfig
    from cluedo_env.training.single_agent import num_actions

    paths = sorted((ROOT / "configs").glob("train_*.yaml")) + sorted((ROOT / "configs" / "experiments").glob("train_*"))
    assert len(paths) >= 8
    for path in paths:
        cfg = load_train_config(path)  # a bad preset or rule flag would raise here
        env = cfg.env
        assert env.rules_config.players == env.players, path.name
        assert not env.macro_accuse or env.belief, path.name
        assert num_actions(env.macro_moves, env.macro_accuse) in (870, 682, 547, 359)
        assert TrainConfig.from_dict(cfg.to_dict()) == cfg, path.name  # what a run saves builds the same config


def test_checkpoint_every_zero_writes_only_the_final_checkpoint(tmp_path):
    """checkpoint_every: 0 used to divide by zero after building everything; it now means 'only at the end'."""
    run = tmp_path / "zero"
    out = Trainer(_tiny(run, total_timesteps=256, checkpoint_every=0, eval={"games": 0}), progress=False).run()
    assert out["timesteps"] == 256
    assert [p.name for p in (run / "checkpoints").glob("step_*.zip")] == ["step_0000000256.zip"]
    assert json.loads((run / "state.json").read_text())["timesteps"] == 256


def test_resume_falls_back_to_the_newest_loadable_checkpoint_and_removes_stale_tmp(tmp_path, capsys):
    run = tmp_path / "fallback"
    Trainer(_tiny(run, eval={"games": 0}), progress=False).run()  # checkpoints at 256 and 512 steps
    ckpts = sorted((run / "checkpoints").glob("step_*.zip"))
    assert [p.name for p in ckpts] == ["step_0000000256.zip", "step_0000000512.zip"]
    ckpts[-1].write_bytes(ckpts[-1].read_bytes()[:1500])  # the newest one cut short, state.json names it
    stale = [run / ".model.zip.tmp999999999", run / "checkpoints" / ".step_0000000768.zip.tmp999999999"]
    for p in stale:
        p.write_bytes(b"half a file")
    capsys.readouterr()
    out = Trainer(_tiny(run, total_timesteps=768, eval={"games": 0}), resume=True, progress=False).run()
    err = capsys.readouterr().err
    assert out["timesteps"] == 768
    assert "skipped" in err and "step_0000000512.zip" in err, err
    assert "continuing from" in err and "step_0000000256.zip at step 256" in err, err
    assert not any(p.exists() for p in stale) and err.count("removed") == 2
    assert json.loads((run / "state.json").read_text())["timesteps"] == 768


def test_resume_with_a_corrupt_state_file_uses_the_checkpoints(tmp_path, capsys):
    run = tmp_path / "state"
    Trainer(_tiny(run, total_timesteps=256, eval={"games": 0}), progress=False).run()
    (run / "state.json").write_text('{"timesteps": 25')  # a write that was killed half-way (before atomic writes)
    out = Trainer(_tiny(run, total_timesteps=512, eval={"games": 0}), resume=True, progress=False).run()
    err = capsys.readouterr().err
    assert out["timesteps"] == 512 and "ignoring" in err and "state.json" in err


def test_cluedo_play_takes_checkpoint_players(tmp_path):
    """`cluedo play` registers ckpt: players itself (it used to say 'not implemented' although --help lists them)."""
    import os
    import subprocess
    import sys

    model = _plain_checkpoint(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "cluedo_env.cli", "play", "--players", f"ckpt:{model}", "random", "random", "random",
         "--seed", "1", "--max-turns", "6", "--no-record", "--no-board"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"seat 0: Scarlet  ckpt:{model}" in proc.stdout and "Game over" in proc.stdout, proc.stdout


def test_rllib_resume_candidates_skip_a_missing_latest(tmp_path):
    from cluedo_env.training.rllib.train import latest_checkpoint, resume_candidates

    run = tmp_path / "rllib"
    for i in (1, 2):
        (run / "checkpoints" / f"iter_{i:06d}").mkdir(parents=True)
    (run / "latest.txt").write_text("checkpoints/iter_000003\n")  # named, but never finished
    assert latest_checkpoint(run) == run / "checkpoints" / "iter_000002"
    assert resume_candidates(run) == [run / "checkpoints" / "iter_000002", run / "checkpoints" / "iter_000001"]
    (run / "latest.txt").write_text("checkpoints/iter_000001\n")
    assert resume_candidates(run) == [run / "checkpoints" / "iter_000001", run / "checkpoints" / "iter_000002"]
    assert resume_candidates(tmp_path / "nothing") == []


def test_keep_best_keeps_the_best_evaluated_checkpoint_out_of_the_rotation(tmp_path):
    """Evaluations every 256 steps on the same deals; best_model.zip is the one with the top win rate."""
    run = tmp_path / "best"
    out = Trainer(_tiny(run, total_timesteps=1024, keep_checkpoints=1, eval={"every": 256, "games": 8}),
                  progress=False).run()  # fmt: skip
    evals = [json.loads(line) for line in (run / "evals.jsonl").read_text().splitlines()]
    best = json.loads((run / "best.json").read_text())
    assert len(evals) >= 4 and best["win_rate"] == max(e["win_rate"] for e in evals)
    first_best = next(e for e in evals if e["win_rate"] == best["win_rate"])
    assert best["timesteps"] == first_best["timesteps"]  # ties keep the earlier checkpoint
    assert out["best_model"] == str(run / "best_model.zip") and (run / "best_model.zip").is_file()
    assert len(list((run / "checkpoints").glob("step_*.zip"))) == 1  # the rotation went on without it
    with pytest.raises(TrainConfigError, match="keep_best"):
        Trainer(_tiny(tmp_path / "bad", keep_best="yes"), progress=False)


def test_init_from_a_pretrained_player(tmp_path):
    """``init_from: pretrained:NAME`` starts a run from a player shipped with the package (a curriculum stage);
    an unknown name is refused before anything is built, naming the shipped ones."""
    import torch
    from cluedo_env.training.pretrained import path_of
    from cluedo_env.training.sb3.config import init_path

    assert init_path("pretrained:cards_vs_heuristic") == path_of("cards_vs_heuristic")
    assert init_path("runs/x/best_model.zip") == Path("runs/x/best_model.zip")
    with pytest.raises(TrainConfigError, match="unknown pretrained player 'nope'.*pretrained:vs_heuristic"):
        Trainer(_tiny(tmp_path / "bad", init_from="pretrained:nope"), progress=False)
    path = ROOT / "configs" / "experiments" / "train_cards_vs_heuristic_factored.yaml"
    cfg = load_train_config(path, run_dir=str(tmp_path / "r"), init_from="pretrained:cards_vs_heuristic",
                            env={"num_envs": 4})  # fmt: skip
    model = Trainer(cfg, progress=False)._build()
    shipped = load_model(path_of("cards_vs_heuristic")).policy.state_dict()
    assert all(torch.equal(v.float(), shipped[k].float()) for k, v in model.policy.state_dict().items())
