"""The tournament evaluator (scripts/evaluate.py): end to end, seat rotation, Wilson intervals, ratings."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cluedo_env.agents.play import tournament

from cluedo_env.cli.evaluate import main as evaluate_main
from cluedo_env.rules.config import RulesConfig

ROOT = Path(__file__).resolve().parents[1]
E = tournament


def test_tournament_end_to_end_writes_markdown_json_and_png(tmp_path, capsys):
    out = tmp_path / "eval"
    result = evaluate_main(["--players", "heuristic", "random", "random", "--games", "12", "--preset", "cards",
                     "--seed", "3", "--out", str(out), "--no-progress"])  # fmt: skip
    for name in ("tournament.md", "tournament.json", "tournament.png"):
        assert (out / name).stat().st_size > 0
    assert (out / "tournament.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "tournament.json").read_text())
    assert data["games"] == 12 and data["rotations"] == 3
    assert [e["label"] for e in data["entries"]] == ["heuristic", "random#1", "random#2"]
    assert (
        sum(e["wins"] for e in data["entries"]) + data["endings"]["all_eliminated"] + data["endings"]["truncated"] == 12
    )
    assert sum(data["endings"].values()) == 12 and sum(data["wins_per_seat"]) <= 12
    assert data["games_per_s"] > 0 and result["seed"] == 3
    md = (out / "tournament.md").read_text()
    assert "| heuristic |" in md and "95% CI" in md and "games/s" in md
    assert "wrote" in capsys.readouterr().out


def test_games_are_rounded_up_so_every_seat_rotation_plays_equally():
    cfg = RulesConfig.from_preset("classic", players=3)
    m = E.play_match(cfg, ["heuristic", "random", "random"], 10, seed=1, batch_size=8)
    assert len(m.games) == 12  # ceil(10 / 3) = 4 games in each of the 3 rotations
    s = E.summarize(m, cfg)
    for e in s["entries"]:
        assert e["games_per_seat"] == [4, 4, 4]  # each entry sits in each seat equally often
    assert Counter(g.lineup for g in m.games) == {lineup: 4 for lineup in E.rotations(3)}


@pytest.mark.parametrize("P", [2, 3, 4, 5, 6])
def test_rotations_form_a_latin_square(P):
    rot = np.array(E.rotations(P))  # rot[k, seat] = entry
    assert rot.shape == (P, P)
    for k in range(P):
        assert sorted(rot[k]) == list(range(P))  # each rotation seats every entry once
        assert sorted(rot[:, k]) == list(range(P))  # each seat holds every entry once over the rotations


def test_seeded_runs_repeat_exactly():
    cfg = RulesConfig.from_preset("cards", players=3)
    a = E.play_match(cfg, ["heuristic", "heuristic", "random"], 9, seed=7, batch_size=4)
    b = E.play_match(cfg, ["heuristic", "heuristic", "random"], 9, seed=7, batch_size=4)
    assert [(g.lineup, g.winner, g.turns, g.suggestions) for g in a.games] == [
        (g.lineup, g.winner, g.turns, g.suggestions) for g in b.games
    ]


def test_winner_suggestions_are_counted_from_the_history():
    cfg = RulesConfig.from_preset("cards", players=3)
    m = E.play_match(cfg, ["heuristic", "heuristic", "heuristic"], 9, seed=2, batch_size=9)
    for g in m.games:
        assert g.winner >= 0 and 1 <= g.winner_suggestions <= g.suggestions
        # cards preset: every turn is one suggestion, the winner's turns are about a third of them
        assert g.winner_suggestions <= math.ceil(g.turns / 3) + 1


def test_wrong_accusations_are_reported_per_entry_whatever_seat_it_held():
    """Random players accuse blindly and the deducer never accuses wrongly (it accuses only what it proved)."""
    cfg = RulesConfig.from_preset("cards", players=3)
    m = E.play_match(cfg, ["deducer", "random", "random"], 12, seed=3, batch_size=6)
    s = E.summarize(m, cfg)
    by_label = {e["label"]: e for e in s["entries"]}
    assert by_label["deducer"]["wrong_accusations"] == 0
    randoms = by_label["random#1"]["wrong_accusations"] + by_label["random#2"]["wrong_accusations"]
    assert randoms == sum(sum(g.wrong_accusations) for g in m.games) > 0
    for e in s["entries"]:  # at most one accusation per player and game (R-A6)
        assert e["wrong_accusations"] <= s["games"] and e["wrong_accusation_rate"] == e["wrong_accusations"] / 12
    assert "| wrong accusations |" in E.tournament_markdown(s)


@pytest.mark.parametrize(
    "wins, n, lo, hi",
    [
        (0, 10, 0.0, 0.2775),  # z^2 / (n + z^2)
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),
        (1, 1, 0.2065, 1.0),
    ],
)
def test_wilson_interval_known_values(wins, n, lo, hi):
    got = E.wilson_interval(wins, n)
    assert got == pytest.approx((lo, hi), abs=5e-5)


def test_wilson_interval_edge_cases():
    assert E.wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = E.wilson_interval(500, 1000)
    assert lo == pytest.approx(1 - hi) and hi - lo == pytest.approx(2 * 1.96 * math.sqrt(0.25 / 1000), rel=0.01)


def test_rating_fit_recovers_known_strengths_and_orders_them():
    rng = np.random.default_rng(0)
    K, G = 4, 6000
    truth = np.array([0.0, 0.7, 1.4, 2.1])
    seats = np.zeros((G, K))
    pairs = rng.integers(0, K, (G, 2))
    pairs[:, 1] = (pairs[:, 0] + 1 + rng.integers(0, K - 1, G)) % K
    seats[np.arange(G), pairs[:, 0]] = 2
    seats[np.arange(G), pairs[:, 1]] = 2
    p = seats * np.exp(truth)
    p /= p.sum(1, keepdims=True)
    winner = (p.cumsum(1) > rng.random((G, 1))).argmax(1)
    winner[:50] = -1  # games without a winner are ignored
    rating, se = E.fit_luce(seats, winner)
    assert list(np.argsort(-rating)) == [3, 2, 1, 0]
    assert rating.mean() == pytest.approx(0.0, abs=1e-9)
    assert np.allclose(rating / E.ELO, truth - truth.mean(), atol=4 * se.max() / E.ELO)
    # A player who never wins gets a finite, lowest rating.
    never = np.where(winner == 0, -1, winner)
    r2, se2 = E.fit_luce(seats, never)
    assert np.isfinite(r2).all() and r2.argmin() == 0 and np.isfinite(se2).all()


def test_round_robin_rates_the_heuristic_above_random(tmp_path):
    result = evaluate_main(["--round-robin", "random", "heuristic", "--games", "24", "--preset", "classic",
                     "--seats", "3", "--out", str(tmp_path), "--no-progress"])  # fmt: skip
    assert [r["player"] for r in result["ratings"]] == ["heuristic", "random"]
    (match,) = result["matches"]
    assert match["games"] == 24 and match["wins"]["heuristic"] > match["wins"]["random"]
    for name in ("round_robin.md", "round_robin.json", "round_robin.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert "| 1 | heuristic |" in (tmp_path / "round_robin.md").read_text()


def test_round_robin_lineups_share_seats_equally():
    ups = dict(E.round_robin_lineups(["a", "b", "c"], 4))
    assert set(ups) == {"a vs b", "a vs c", "b vs c", "all"}
    assert ups["a vs b"] == [["a", "b", "a", "b"]]
    # all three in four seats: the cyclic shifts give everyone the same number of seats overall
    assert Counter(n for lineup in ups["all"] for n in lineup) == {"a": 4, "b": 4, "c": 4}
    odd = dict(E.round_robin_lineups(["a", "b"], 3))
    assert Counter(n for lineup in odd["a vs b"] for n in lineup) == {"a": 3, "b": 3}


def test_unknown_player_name_fails_clearly():
    with pytest.raises(ValueError, match="available"):
        evaluate_main(["--players", "heuristic", "nobody", "--games", "2", "--no-progress", "--out", "/nonexistent/x"])
