"""Game records (cluedo_env.record): round trips from every source, replay, tampering, knowledge."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import numpy as np
import pytest
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import play_games

import cluedo_env
from cluedo_env import record as R
from cluedo_env.engine.reference import Game
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import RulesConfig

PRESETS = ["classic", "seed000", "cards"]
ROOT = Path(__file__).resolve().parents[1]


def _evaluate_module():
    from cluedo_env.cli import evaluate

    return evaluate


def reference_game(preset: str, seed: int = 1, players: int = 4, max_turns: int = 60):
    """A random game on the reference engine, recorded; returns (record, snapshots seen while playing)."""
    game = Game(RulesConfig.from_preset(preset, players=players, max_turns=max_turns), seed=seed)
    rec = R.Recorder(game.to_dict(), seed=seed, players=["random"] * players)
    snaps = [game.to_dict()]
    rnd = random.Random(seed)
    while not game.is_over:
        legal = game.legal_actions()
        # avoid accusations most of the time so that games run long enough to exercise every phase
        calm = [a for a in legal if a < A.ACCUSE0] or legal
        action = rnd.choice(legal if rnd.random() < 0.02 else calm)
        p = game.actor
        roll = rnd.randint(game.config.dice, game.config.max_roll) if action == A.ROLL else None
        game.step(action, roll=roll)
        rec.add(p, action, roll)
        snaps.append(game.to_dict())
    return rec.finish(game.to_dict()), snaps


# ============================================================================ round trips
@pytest.mark.parametrize("preset", PRESETS)
def test_reference_round_trip(preset, tmp_path):
    record, snaps = reference_game(preset)
    assert record["schema"] == R.SCHEMA and record["rules"]["preset"] == preset
    assert record["result"]["terminated"] or record["result"]["truncated"]
    path = R.save(record, tmp_path / "game.json")
    loaded = R.load(path)
    assert loaded == json.loads(json.dumps(record))
    replayed = R.replay(loaded)
    assert len(replayed) == len(loaded["steps"]) + 1
    assert replayed == snaps  # every intermediate state, not only the last
    assert R.check(loaded) == loaded["final"]
    rolls = [s for s in loaded["steps"] if s["action"] == A.ROLL]
    assert all(s["roll"] is not None for s in rolls) and all(
        s["roll"] is None for s in loaded["steps"] if s["action"] != A.ROLL
    )
    assert all(s["name"] == A.describe(s["action"]) for s in loaded["steps"])
    if preset != "cards":
        assert rolls, "a board game has ROLL steps"


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("wrapped", [True, False])
def test_aec_env_round_trip(preset, wrapped, tmp_path):
    env = cluedo_env.env(preset=preset, max_turns=80) if wrapped else cluedo_env.raw_env(preset=preset, max_turns=80)
    rec_env = R.AECRecorder(env, players=["random"] * 4)
    rec_env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _agent in rec_env.agent_iter():
        obs, reward, term, trunc, info = rec_env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            calm = legal[legal < A.ACCUSE0]
            action = int(rng.choice(calm if len(calm) and rng.random() > 0.02 else legal))
        rec_env.step(action)
    record = rec_env.record()
    assert record["seed"] == 5 and record["final"] == env.unwrapped.snapshot()
    assert record["final"]["phase"] == "over"
    loaded = R.load(R.save(record, tmp_path / "aec.json"))
    assert R.replay(loaded)[-1] == env.unwrapped.snapshot()


def test_aec_recorder_skips_an_illegal_action_ended_by_the_wrapper():
    env = cluedo_env.env(preset="cards")
    rec_env = R.AECRecorder(env)
    rec_env.reset(seed=2)
    rec_env.step(A.SUGGEST0)
    rec_env.step(A.ROLL)  # illegal in the card-only game: TerminateIllegalWrapper ends the game (a logged warning)
    assert all(rec_env.terminations.values())
    record = rec_env.record()
    assert [s["action"] for s in record["steps"]] == [A.SUGGEST0]
    R.check(record)


@pytest.mark.parametrize("preset", PRESETS)
def test_evaluator_record_option(preset, tmp_path):
    E = _evaluate_module()
    folder = tmp_path / "rec"
    result = E.main(["--players", "heuristic", "random", "random", "--games", "9", "--preset", preset,
                     "--seed", "4", "--out", str(tmp_path / "eval"), "--no-progress", "--max-turns", "120",
                     "--record", str(folder), "--record-games", "5"])  # fmt: skip
    files = sorted(folder.glob("game_*.json"))
    assert len(files) == 5 and result["records"]["games"] == 5
    for f in files:
        rec = R.load(f)
        assert rec["rules"]["preset"] == preset and rec["seed"] is not None
        assert sorted(rec["players"]) == ["heuristic", "random", "random"]
        assert R.replay(rec)[-1] == rec["final"]
        assert rec["final"]["phase"] == "over"


def test_evaluator_records_every_game_of_a_round_robin(tmp_path):
    E = _evaluate_module()
    folder = tmp_path / "rr"
    E.main(["--round-robin", "random", "heuristic", "--games", "6", "--preset", "cards", "--seats", "3",
            "--out", str(tmp_path / "eval"), "--no-progress", "--record", str(folder)])  # fmt: skip
    files = sorted(folder.glob("game_*.json"))
    assert len(files) == 6  # one pairing, lineups ABA and BAB, 3 games each
    for f in files:
        R.check(R.load(f))


def test_recording_does_not_change_the_games():
    cfg = RulesConfig.from_preset("classic", players=3)

    def run(record):
        agents = [make_agent("heuristic", seed=1), make_agent("random", seed=2), make_agent("random", seed=3)]
        return play_games(cfg, agents, 40, batch_size=16, seed=9, record=record)

    out: list[dict] = []
    assert run(None) == run(out.append)
    assert len(out) == 40
    limited: list[dict] = []
    agents = [make_agent("random", seed=s) for s in range(3)]
    play_games(cfg, agents, 40, batch_size=16, seed=9, record=limited.append, record_games=7)
    assert len(limited) == 7


def test_replay_of_a_thousand_evaluator_games_reproduces_every_final_state():
    total = 0
    for preset, n in (("cards", 600), ("classic", 400)):
        cfg = RulesConfig.from_preset(preset)
        agents = [make_agent(name, seed=s) for s, name in enumerate(["heuristic", "random", "heuristic", "random"])]
        records: list[dict] = []
        results = play_games(cfg, agents, n, batch_size=256, seed=11, record=records.append)
        assert len(records) == len(results) == n
        for rec, res in zip(records, results, strict=True):  # the runner hands records over in finishing order
            final = R.check(rec)
            assert final == rec["final"]
            assert (final["winner"] if final["winner"] is not None else -1) == res.winner
            assert final["turn_count"] == res.turns
        total += len(records)
    assert total >= 1000


# ============================================================================ rejection
@pytest.fixture(scope="module")
def good_record():
    record, _ = reference_game("classic", seed=3, max_turns=80)
    assert len(record["steps"]) > 20
    return record


def _bad(record, match):
    with pytest.raises(R.RecordError, match=match):
        R.replay(record)


def test_tampered_action_is_rejected(good_record):
    rec = copy.deepcopy(good_record)
    k = next(i for i, s in enumerate(rec["steps"]) if A.MOVE0 <= s["action"] < A.SUGGEST0)
    rec["steps"][k]["action"] = A.ACCUSE0 + 5 if rec["steps"][k]["action"] != A.ACCUSE0 + 5 else A.ACCUSE0 + 6
    _bad(rec, rf"steps\[{k}\] does not replay: illegal action")
    rec = copy.deepcopy(good_record)
    k = next(i for i, s in enumerate(rec["steps"]) if s["action"] == A.ROLL)
    rec["steps"][k]["roll"] = None
    _bad(rec, "ROLL without its dice total")
    rec = copy.deepcopy(good_record)
    rec["steps"][0]["player"] = 2
    _bad(rec, "seat 2 acts")
    rec = copy.deepcopy(good_record)
    rec["steps"].append(dict(rec["steps"][-1]))
    _bad(rec, "after the end of the game")


def test_a_different_legal_action_or_roll_changes_the_final_state(good_record):
    rec = copy.deepcopy(good_record)
    game = Game.from_dict(rec["initial"])
    for k, s in enumerate(rec["steps"]):  # find a step with another legal choice and swap it in
        legal = game.legal_actions()
        if len(legal) > 1 and s["action"] < A.ACCUSE0 and s["action"] not in (A.ROLL,):
            others = [a for a in legal if a != s["action"] and a < A.ACCUSE0]
            if others:
                rec["steps"][k]["action"] = others[0]
                rec["steps"] = rec["steps"][: k + 1]
                break
        game.step(s["action"], roll=s["roll"])
    _bad(rec, "does not replay to its final state")


def test_tampered_final_or_result_is_rejected(good_record):
    rec = copy.deepcopy(good_record)
    rec["final"]["turn_count"] += 1
    _bad(rec, r"final state: field\(s\) \['turn_count'\] differ \(a tampered")
    rec = copy.deepcopy(good_record)
    rec["final"]["envelope"] = rec["final"]["hands"][0][:1] + rec["final"]["envelope"][1:]
    _bad(rec, "final state")
    rec = copy.deepcopy(good_record)
    rec["result"]["winner"] = 3 if rec["result"]["winner"] != 3 else 2
    _bad(rec, "result does not match")


def test_schema_and_structure_errors(good_record, tmp_path):
    rec = copy.deepcopy(good_record)
    rec["schema"] = "cluedo_env.record/2"
    _bad(rec, r"schema version 'cluedo_env.record/2' is not supported.*cluedo_env.record/1")
    rec["schema"] = "something/else"
    _bad(rec, "not a cluedo_env game record")
    rec = copy.deepcopy(good_record)
    del rec["steps"]
    _bad(rec, r"lacks the field\(s\) \['steps'\]")
    rec = copy.deepcopy(good_record)
    rec["initial"]["schema"] = "cluedo_env.snapshot/0"
    _bad(rec, "'initial' must be a snapshot")
    rec = copy.deepcopy(good_record)
    rec["initial"]["hands"][0] = rec["initial"]["hands"][1]
    _bad(rec, "initial state is not a valid snapshot")
    rec = copy.deepcopy(good_record)
    rec["steps"][1]["action"] = "ROLL"
    _bad(rec, r"steps\[1\].action must be an integer")
    with pytest.raises(R.RecordError, match="JSON object"):
        R.validate([1, 2])


def test_load_rejects_corrupted_files(good_record, tmp_path):
    path = R.save(good_record, tmp_path / "g.json")
    text = path.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(R.RecordError, match=r"cut.json: corrupted record, not valid JSON \(.*truncated file\?\)"):
        R.load(cut)
    with pytest.raises(R.RecordError, match="cannot read record"):
        R.load(tmp_path / "missing.json")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(R.RecordError):
        R.load(binary)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**good_record, "schema": "cluedo_env.record/9"}))
    with pytest.raises(R.RecordError, match="other.json: record schema version"):
        R.load(other)
    tampered = json.loads(text)
    tampered["steps"][3]["action"] = A.ACCUSE0 + A.NUM_TRIPLES + 50
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tampered))
    with pytest.raises(R.RecordError, match="does not replay"):
        R.replay(R.load(bad))


def test_recorder_needs_rolls_and_snapshots():
    game = Game(RulesConfig.from_preset("classic"), seed=0)
    rec = R.Recorder(game.to_dict())
    with pytest.raises(R.RecordError, match="ROLL step needs its dice"):
        rec.add(0, A.ROLL)
    with pytest.raises(R.RecordError, match="snapshot"):
        R.Recorder({"schema": "nope"})
    with pytest.raises(R.RecordError, match="snapshot"):
        rec.finish({})


# ============================================================================ knowledge
def _masked(snapshot: dict, seat: int) -> dict:
    """``snapshot`` with everything ``seat`` may not know replaced by placeholders."""
    snap = copy.deepcopy(snapshot)
    accused = any(h["type"] == "accusation" and h["player"] == seat for h in snap["history"])
    snap["hands"] = [h if q == seat else ["?"] * len(h) for q, h in enumerate(snap["hands"])]
    if not accused:
        snap["envelope"] = ["?", "?", "?"]
    for h in snap["history"]:
        if h["type"] == "suggestion" and h["player"] != seat:
            h["shown"] = [c if by == seat else "?" for by, c in zip(h["refuted_by"], h["shown"], strict=True)]
    return snap


@pytest.mark.parametrize("preset", PRESETS)
def test_knowledge_uses_only_the_seats_information(preset):
    record, snaps = reference_game(preset, seed=8, max_turns=80)
    P = len(record["initial"]["hands"])
    checked = 0
    for snap in snaps[:: max(1, len(snaps) // 40)] + [snaps[-1]]:
        for seat in range(P):
            k = R.knowledge(snap, seat)
            assert k == R.knowledge(_masked(snap, seat), seat)  # nothing hidden was used
            text = json.dumps(k)
            assert '"?"' not in json.dumps(R.knowledge(_masked(snap, seat), seat))
            assert k["hand"] == snap["hands"][seat]
            for q in range(P):
                if q == seat:
                    continue
                unseen = set(snap["hands"][q]) - {x["card"] for x in k["shown_to_me"]}
                for card in unseen:
                    assert k["sheet"][card]["holder"] in (None,), (card, text)
            if k["envelope"] is None:
                assert all(row["holder"] != "envelope" for row in k["sheet"].values())
            checked += 1
    assert checked > P


def test_knowledge_contents():
    snap = Game(RulesConfig.from_preset("cards", players=3), seed=0).to_dict()
    hands = snap["hands"]
    c0, c2 = hands[1][0], hands[2][0]
    snap["history"] = [
        {"type": "suggestion", "player": 0, "cards": ["Plum", "Rope", "Hall"], "passed": [1], "refuted_by": [2],
         "shown": [c2]},
        {"type": "suggestion", "player": 2, "cards": ["Green", "Dagger", "Study"], "passed": [], "refuted_by": [1],
         "shown": [c0]},
        {"type": "accusation", "player": 0, "cards": ["Green", "Dagger", "Study"], "correct": False},
    ]  # fmt: skip
    k0 = R.knowledge(snap, 0)
    assert k0["shown_to_me"] == [{"card": c2, "by": 2, "suggestion": 0}]
    assert k0["sheet"][c2]["holder"] == 2 and k0["sheet"][c2]["how"] == "shown"
    assert k0["suggestions"][1]["shown"] == [None]  # a card shown between two others stays hidden
    assert k0["passes"][1] == ["Plum", "Rope", "Hall"]
    assert k0["sheet"]["Rope"]["passed_by"] == [1]
    assert k0["envelope"] == snap["envelope"]  # seat 0 accused
    assert k0["accusations"][0]["correct"] is False
    k1 = R.knowledge(snap, 1)
    assert k1["i_showed"] == [{"card": c0, "to": 2, "suggestion": 1}]
    assert k1["envelope"] is None and k1["suggestions"][0]["shown"] == [None]
    with pytest.raises(ValueError, match="seat must be"):
        R.knowledge(snap, 3)
