"""Head-to-head mode (agents/play/head_to_head.py and ``scripts/evaluate.py --head-to-head A B``).

One A against P - 1 Bs with A's seat rotated: A must sit in every seat equally often, wins
must be counted for A only, rounds to a win must be A's own turns, and the evaluator flag
must write the same result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cluedo_env.agents.play.head_to_head import head_to_head, head_to_head_markdown
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.play.stats import wilson_interval
from cluedo_env.agents.players.random_player import RandomAgent
from helpers import config

ROOT = Path(__file__).resolve().parents[1]


def test_seats_rotate_and_counts_add_up():
    cfg = config("cards", players=3)
    r = head_to_head(cfg, "heuristic", "random", 30, seed=2, batch_size=10)
    assert r.games == 30 and r.wins + r.b_wins + r.no_winner == 30
    assert len(r.wins_by_seat) == 3 and sum(r.wins_by_seat) == r.wins
    assert r.win_rate > 0.5 and r.ci95[0] <= r.win_rate <= r.ci95[1]
    assert r.wrong_accusations_a == 0 and r.wrong_accusations_b > 0  # random players accuse at random
    assert r.mean_rounds_to_win is not None and r.mean_rounds_to_win >= 1
    assert "heuristic" in head_to_head_markdown(r) and "| 33% |" in head_to_head_markdown(r)
    again = head_to_head(cfg, "heuristic", "random", 30, seed=2, batch_size=10)
    assert again.wins == r.wins and again.mean_rounds == r.mean_rounds  # seeded


def test_rounds_count_each_seat_turns():
    """Random players mostly accuse (wrongly) on their first turn: in 3-player card games the winner
    is usually the last one standing, and rounds are counted per seat, not as all players' turns."""
    cfg = config("cards", players=3)
    records = play_games(cfg, [RandomAgent(seed=s) for s in range(3)], 60, batch_size=20, seed=0)
    for rec in records:
        assert 1 <= rec.rounds <= rec.turns
        assert rec.turns <= 3 * rec.rounds  # P seats, one turn each per round
        if rec.winner >= 0:
            assert 1 <= rec.winner_turns <= rec.rounds
        assert len(rec.wrong_accusations) == 3


def test_wilson_interval():
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_evaluate_flag_writes_the_table(tmp_path):
    from cluedo_env.cli import evaluate
    out = tmp_path / "h2h"
    result = evaluate.main(["--head-to-head", "notebook", "random", "--games", "12", "--preset", "cards",
                            "--no-progress", "--out", str(out), "--batch-size", "6"])  # fmt: skip
    assert result["a"] == "notebook" and result["games"] == 12
    saved = json.loads((out / "head_to_head.json").read_text())
    assert saved["wins"] == result["wins"]
    assert "Head-to-head: notebook alone against 3 x random" in (out / "head_to_head.md").read_text()
