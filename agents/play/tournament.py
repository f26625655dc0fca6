"""Tournaments between players: seats rotated, seeded, with Wilson intervals, ratings and reports.

The library behind ``cluedo evaluate`` / ``scripts/evaluate.py`` (:mod:`cluedo_env.cli.evaluate`)
and the trainers' evaluations.

**Tournament** (``--players``): one entry per seat (names may repeat; duplicates are labelled
``name#2`` ...). The entries are rotated round the table: in rotation ``k`` entry ``e`` sits
in seat ``(e + k) % P``, and each of the P rotations plays ``ceil(games / P)`` games (so every
entry sits in every seat equally often; the total is rounded up to a multiple of P). Per entry
it reports the win rate with a 95% Wilson interval, the mean number of turns of the games it won
(turns of all players, as ``turn_count`` counts them, R-E3), the mean number of suggestions it
made itself in the games it won, and how its wins came (correct accusation or last player
standing), and its wrong accusations (a sound player makes none); for the whole run, how the games
ended and the throughput (games per second of play).

**Round robin** (``--round-robin A B C ...``, ``--seats P``): every pair of names plays ``--games``
games with the seats shared half and half (lineup ``A B A B``, rotated; with an odd P the lineups
``A B A`` and ``B A B`` split the games), and when there are 3 or more names (at most P) all of them
play ``--games`` games together (cyclic shifts of the name list, rotated). A rating is fitted to all
the games: the Luce (multi-player Bradley-Terry) model where a game is won by name ``i`` with
probability ``n_i g_i / sum_j n_j g_j`` (``n_i`` = seats held, ``g_i`` = strength), by maximum
likelihood (MM algorithm, Hunter 2004), with a prior of one virtual win and one virtual loss
against a player of strength 1 so that a player who never wins still gets a finite rating.
Ratings are printed on the Elo scale (400 log10 g, mean 0) with 95% intervals from the observed
Fisher information. Games without a winner (truncated, everyone eliminated) do not count.

Reports: :func:`tournament_markdown` / :func:`write_tournament` and :func:`round_robin_markdown` /
:func:`write_round_robin` (``.md``, ``.json`` and a ``.png`` chart with 95% error bars).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.play.stats import Z95, wilson_interval
from cluedo_env.agents.players.base import Agent

from cluedo_env.engine.views import PlayerView
from cluedo_env.errors import UsageError
from cluedo_env.files import write_text_atomic
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import RulesConfig

# "ckpt:PATH" / "rllib:PATH" players: their loaders register on import (cluedo_env.training.players does it by name).
MAX_BATCH = 1 << 20

ELO = 400.0 / math.log(10.0)
ENDINGS = ("accusation", "last_standing", "all_eliminated", "truncated")


# ============================================================================ statistics


def fit_luce(seats: np.ndarray, winner: np.ndarray, prior: float = 1.0, iters: int = 100, tol: float = 1e-10):
    """Maximum a-posteriori strengths of the Luce model (winner among the seated players).

    ``seats``: (G, K) seats held by each of K players in each game; ``winner``: (G,) player index
    of the winner, -1 for no winner (ignored). The prior adds, for each player, ``prior`` virtual
    wins and ``prior`` virtual losses against a reference of strength 1, which keeps the fit finite
    when a player never (or always) wins. Solved by Newton's method on log-strengths ``t``
    (the log-likelihood is concave), games grouped by lineup. Returns (ratings, se): Elo-scale
    ratings (400 log10 strength, centred on mean 0) and their standard errors from the observed
    information.
    """
    seats = np.asarray(seats, np.float64)
    winner = np.asarray(winner, np.int64)
    keep = winner >= 0
    K = seats.shape[1]
    lineups, inverse = np.unique(seats[keep], axis=0, return_inverse=True)
    count = np.bincount(inverse.ravel(), minlength=len(lineups)).astype(np.float64)  # games per lineup
    wins = np.bincount(winner[keep], minlength=K).astype(np.float64)

    def parts(t: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        z = lineups * np.exp(t)  # (U, K)
        tot = z.sum(1)
        q = z / tot[:, None]
        sig = 1.0 / (1.0 + np.exp(-t))
        loglik = float(wins @ t - count @ np.log(tot) + prior * (t - 2 * np.logaddexp(0.0, t)).sum())
        grad = wins - count @ q + prior * (1.0 - 2.0 * sig)
        info = np.diag(count @ q) - (q * count[:, None]).T @ q + np.diag(2.0 * prior * sig * (1.0 - sig))
        return loglik, grad, info

    t = np.zeros(K)
    f, grad, info = parts(t)
    for _ in range(iters):
        step = np.linalg.solve(info, grad)
        scale = 1.0
        while True:  # backtracking keeps every step an ascent step
            f_new, g_new, i_new = parts(t + scale * step)
            if f_new >= f - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        t, f, grad, info = t + scale * step, f_new, g_new, i_new
        if np.abs(scale * step).max() < tol:
            break
    cov = np.linalg.inv(info)
    centre = np.eye(K) - 1.0 / K
    cov = centre @ cov @ centre.T
    return ELO * (t - t.mean()), ELO * np.sqrt(np.clip(np.diag(cov), 0, None))


# ============================================================================ playing
class _Tracked(Agent):
    """Wraps one seat's player and, at each game's end, counts every seat's suggestions (public history)."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.name = inner.name
        self.over = np.zeros(0, bool)
        self.finished: list[np.ndarray] = []  # (P,) suggestions per seat, in the order games end

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        if len(self.over) != view.batch_size:
            self.over = np.zeros(view.batch_size, bool)
        self.over[idx] = False
        self.inner.reset(view, idx)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        return self.inner.act(view, idx)

    def observe_step(self, view: PlayerView) -> None:
        ended = np.flatnonzero((view.phase == A.OVER) & ~self.over)
        if len(ended):
            self.over[ended] = True
            hl = view.hist_len[ended].astype(np.int64)
            rec = view.records(np.repeat(ended, hl), np.arange(hl.sum()) - np.repeat(np.cumsum(hl) - hl, hl))
            pos = np.repeat(np.arange(len(ended)), hl)
            P = view.num_players
            counts = np.bincount((pos * P + rec.player)[~rec.is_accusation], minlength=len(ended) * P).reshape(
                len(ended), P
            )
            self.finished.extend(counts)
        self.inner.observe_step(view)


@dataclass
class Game:
    """One finished game, seen by entry (lineup position) rather than by seat."""

    lineup: tuple[int, ...]  # entry per seat
    winner: int  # winning entry, -1 if none
    winner_seat: int
    ending: str
    turns: int
    suggestions: int  # in the whole game
    winner_suggestions: int  # made by the winner
    wrong_accusations: tuple[int, ...] = ()  # per seat (each player accuses at most once, R-A6)


@dataclass
class Match:
    labels: list[str]  # entry labels
    names: list[str]  # entry player names
    games: list[Game] = field(default_factory=list)
    seconds: float = 0.0


def rotations(P: int) -> list[tuple[int, ...]]:
    """The P seatings of a tournament: in rotation k, seat s holds entry (s - k) % P."""
    return [tuple((s - k) % P for s in range(P)) for k in range(P)]


def _labels(names: list[str]) -> list[str]:
    count = Counter(names)
    seen: Counter[str] = Counter()
    out = []
    for n in names:
        seen[n] += 1
        out.append(n if count[n] == 1 else f"{n}#{seen[n]}")
    return out


def _agent_seed(seed: int, *key: int) -> int:
    return int(np.random.SeedSequence([seed, *key]).generate_state(1)[0])


class RecordSink:
    """Saves game records as ``folder/game_00000.json`` ..., at most ``limit`` of them (None: all)."""

    def __init__(self, folder: str | Path, limit: int | None = None) -> None:
        self.folder = Path(folder)
        self.limit = limit
        self.count = 0
        self.folder.mkdir(parents=True, exist_ok=True)

    def remaining(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.count)

    def __call__(self, record: dict) -> None:
        from cluedo_env.record import save

        save(record, self.folder / f"game_{self.count:05d}.json")
        self.count += 1


def play_match(
    config: RulesConfig,
    names: list[str],
    games: int,
    *,
    seed: int = 0,
    batch_size: int = 1024,
    progress=None,
    match_key: int = 0,
    record: RecordSink | None = None,
) -> Match:
    """Play ``names`` (one entry per seat) over the P seat rotations, ``ceil(games / P)`` games each."""
    P = config.players
    if len(names) != P:
        raise UsageError(f"{P} seats need {P} players, got {len(names)}: {names} (one name per seat)")
    per_rotation = max(1, math.ceil(games / P))
    agents = [make_agent(n, seed=_agent_seed(seed, match_key, 1, e)) for e, n in enumerate(names)]
    match = Match(_labels(names), list(names))
    for k, seat_entry in enumerate(rotations(P)):
        seated = [agents[e] for e in seat_entry]
        tracker = _Tracked(seated[0])
        seated[0] = tracker
        t0 = time.perf_counter()
        sink = record if record is not None and record.remaining() != 0 else None
        records = play_games(
            config, seated, per_rotation, seed=_agent_seed(seed, match_key, 2, k), batch_size=batch_size,
            progress=progress, record=sink, record_games=sink.remaining() if sink is not None else None,
        )  # fmt: skip
        match.seconds += time.perf_counter() - t0
        if len(tracker.finished) != len(records):
            raise RuntimeError("suggestion tracking lost step with the runner")
        for rec, counts in zip(records, tracker.finished, strict=True):
            if int(counts.sum()) != rec.suggestions:
                raise RuntimeError("suggestion tracking disagrees with the runner's count")
            win = rec.winner
            match.games.append(
                Game(
                    seat_entry,
                    seat_entry[win] if win >= 0 else -1,
                    win,
                    rec.ending,
                    rec.turns,
                    rec.suggestions,
                    int(counts[win]) if win >= 0 else 0,
                    tuple(rec.wrong_accusations),
                )  # fmt: skip
            )
    return match


# ============================================================================ reports
def summarize(match: Match, config: RulesConfig) -> dict:
    """Per-entry and overall statistics of a match (what the reports show)."""
    G = len(match.games)
    P = len(match.labels)
    entries = []
    for e, label in enumerate(match.labels):
        won = [g for g in match.games if g.winner == e]
        lo, hi = wilson_interval(len(won), G)
        seats = Counter(g.lineup.index(e) for g in match.games)
        wrong = sum(g.wrong_accusations[g.lineup.index(e)] for g in match.games if g.wrong_accusations)
        entries.append(
            {
                "label": label,
                "player": match.names[e],
                "games": G,
                "wins": len(won),
                "win_rate": len(won) / G if G else 0.0,
                "ci95": [lo, hi],
                "mean_turns_to_win": float(np.mean([g.turns for g in won])) if won else None,
                "mean_own_suggestions_to_win": float(np.mean([g.winner_suggestions for g in won])) if won else None,
                "wins_by_ending": dict(Counter(g.ending for g in won)),
                "wrong_accusations": wrong,
                "wrong_accusation_rate": wrong / G if G else 0.0,
                "games_per_seat": [seats.get(s, 0) for s in range(P)],
            }
        )
    return {
        "config": config.to_dict(),
        "players": match.names,
        "games": G,
        "rotations": P,
        "endings": {k: sum(g.ending == k for g in match.games) for k in ENDINGS},
        "wins_per_seat": [sum(g.winner_seat == s for g in match.games) for s in range(P)],
        "mean_turns": float(np.mean([g.turns for g in match.games])) if G else None,
        "seconds": match.seconds,
        "games_per_s": G / match.seconds if match.seconds > 0 else None,
        "entries": entries,
    }


def _fmt(x: float | None, spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


def tournament_markdown(s: dict) -> str:
    cfg = s["config"]
    lines = [
        f"## Tournament: {', '.join(s['players'])}",
        "",
        f"Preset `{cfg['preset']}`, {cfg['players']} players, {s['games']} games "
        f"({s['rotations']} seat rotations), {s['games_per_s']:.0f} games/s.",
        "",
        "| player | win rate | 95% CI | wins | mean turns to a win | own suggestions to a win | wins by "
        "| wrong accusations |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in s["entries"]:
        by = ", ".join(f"{k} {v}" for k, v in sorted(e["wins_by_ending"].items())) or "-"
        lines.append(
            f"| {e['label']} | {100 * e['win_rate']:.1f}% | {100 * e['ci95'][0]:.1f}-{100 * e['ci95'][1]:.1f}% | "
            f"{e['wins']} | {_fmt(e['mean_turns_to_win'])} | {_fmt(e['mean_own_suggestions_to_win'])} | {by} "
            f"| {e['wrong_accusations']} ({100 * e['wrong_accusation_rate']:.1f}% of games) |"
        )
    ends = ", ".join(f"{k} {v}" for k, v in s["endings"].items() if v)
    seats = ", ".join(f"seat {k}: {w}" for k, w in enumerate(s["wins_per_seat"]))
    lines += [
        "",
        f"Games ended by: {ends}. Mean game length {_fmt(s['mean_turns'])} turns (all players' turns).",
        f"Wins per seat, whoever sat there (rotation evens this out): {seats}.",
        "",
    ]
    return "\n".join(lines)


def _bar_chart(path: Path, labels: list[str], values, low, high, ylabel: str, title: str, hline=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values, low, high = (np.asarray(v, np.float64) for v in (values, low, high))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(labels) + 1.5), 3.6))
    x = np.arange(len(labels))
    ax.bar(x, values, color="#4c72b0", yerr=np.clip(np.stack([values - low, high - values]), 0, None), capsize=4)
    if hline is not None:
        ax.axhline(hline, color="grey", linestyle="--", linewidth=1)
    ax.set_xticks(x, labels, rotation=20 if len(labels) > 4 else 0)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}.png")
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if tmp.exists():
            tmp.unlink()


def _write_reports(out: Path, stem: str, markdown: str, data: dict, chart: dict) -> list[Path]:
    """``stem.md``, ``.json`` and ``.png`` in ``out``, each written atomically (a killed run leaves whole files)."""
    out.mkdir(parents=True, exist_ok=True)
    md, js, png = out / f"{stem}.md", out / f"{stem}.json", out / f"{stem}.png"
    write_text_atomic(md, markdown)
    write_text_atomic(js, json.dumps(data, indent=2))
    _bar_chart(png, **chart)
    return [md, js, png]


def write_tournament(s: dict, out: Path) -> list[Path]:
    """``tournament.md``/``.json``/``.png``: the table, the numbers, win rates with 95% error bars."""
    e = s["entries"]
    chart = {"labels": [x["label"] for x in e], "values": [x["win_rate"] for x in e],
             "low": [x["ci95"][0] for x in e], "high": [x["ci95"][1] for x in e], "ylabel": "win rate (95% CI)",
             "title": f"{s['config']['preset']}, {s['config']['players']} players, {s['games']} games",
             "hline": 1 / len(e)}  # fmt: skip
    return _write_reports(out, "tournament", tournament_markdown(s), s, chart)


# ============================================================================ round robin
def round_robin_lineups(names: list[str], P: int) -> list[tuple[str, list[list[str]]]]:
    """(match name, lineups) for every pair of names, plus all names together when 3 <= len(names) <= P."""
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = names[i], names[j]
            ups = [[a if s % 2 == 0 else b for s in range(P)]]
            if P % 2:
                ups.append([b if s % 2 == 0 else a for s in range(P)])
            out.append((f"{a} vs {b}", ups))
    K = len(names)
    if 3 <= K <= P:
        shifts = 1 if P % K == 0 else K
        ups = [[names[(s + k) % K] for s in range(P)] for k in range(shifts)]
        out.append(("all", ups))
    return out


def round_robin(
    config: RulesConfig,
    names: list[str],
    games: int,
    seed: int = 0,
    batch_size: int = 1024,
    progress=None,
    record: RecordSink | None = None,
) -> dict:
    if len(set(names)) != len(names) or len(names) < 2:
        raise UsageError(f"a round robin needs two or more different names, got {names} (each name once)")
    P = config.players
    K = len(names)
    seats_rows, winners, matches, seconds = [], [], [], 0.0
    key = 0
    for title, lineups in round_robin_lineups(names, P):
        per_lineup = math.ceil(games / len(lineups))
        wins, played, counts_by_name = Counter(), 0, Counter()
        for lineup in lineups:
            key += 1
            m = play_match(config, lineup, per_lineup, seed=seed, batch_size=batch_size, progress=progress,
                           match_key=key, record=record)
            seconds += m.seconds
            held = np.array([lineup.count(n) for n in names], np.float64)
            for g in m.games:
                win_name = lineup[g.winner] if g.winner >= 0 else None
                seats_rows.append(held)
                winners.append(names.index(win_name) if win_name else -1)
                wins[win_name] += 1
                played += 1
            counts_by_name.update({n: lineup.count(n) for n in set(lineup)})
        members = [n for n in names if counts_by_name[n]]
        row = {"match": title, "games": played, "players": members, "no_winner": wins[None]}
        row["wins"] = {n: wins[n] for n in members}
        row["win_rate"] = {n: wins[n] / played for n in members}
        row["ci95"] = {n: list(wilson_interval(wins[n], played)) for n in members}
        matches.append(row)
    rating, se = fit_luce(np.array(seats_rows), np.array(winners))
    total = len(winners)
    wins_total = np.bincount(np.array(winners)[np.array(winners) >= 0], minlength=K)
    table = sorted(
        (
            {"player": names[i], "rating": float(rating[i]), "se": float(se[i]),
             "ci95": [float(rating[i] - Z95 * se[i]), float(rating[i] + Z95 * se[i])], "wins": int(wins_total[i])}
            for i in range(K)
        ),
        key=lambda r: -r["rating"],
    )  # fmt: skip
    return {
        "config": config.to_dict(),
        "players": names,
        "games_per_pairing": games,
        "games": total,
        "seconds": seconds,
        "games_per_s": total / seconds if seconds > 0 else None,
        "matches": matches,
        "ratings": table,
        "rating_model": "Luce / multi-player Bradley-Terry, Elo scale 400*log10(strength), mean 0, prior 1 win + 1 "
        "loss vs strength 1",
    }


def round_robin_markdown(r: dict) -> str:
    cfg = r["config"]
    names = r["players"]
    lines = [
        f"## Round robin: {', '.join(names)}",
        "",
        f"Preset `{cfg['preset']}`, {cfg['players']} seats, {r['games_per_pairing']} games per pairing, "
        f"{r['games']} games in all, {r['games_per_s']:.0f} games/s.",
        "",
        "| rank | player | rating (Elo scale) | 95% CI | wins |",
        "|---|---|---|---|---|",
    ]
    for i, row in enumerate(r["ratings"], 1):
        lo, hi = row["ci95"]
        lines.append(f"| {i} | {row['player']} | {row['rating']:+.0f} | {lo:+.0f} .. {hi:+.0f} | {row['wins']} |")
    lines += [
        "",
        "Pairings (seats shared equally; win rate of each side, 95% Wilson interval):",
        "",
        "| match | games | " + " | ".join(names) + " | no winner |",
        "|---|---|" + "---|" * len(names) + "---|",
    ]
    for m in r["matches"]:
        cells = []
        for n in names:
            if n in m["win_rate"]:
                lo, hi = m["ci95"][n]
                cells.append(f"{100 * m['win_rate'][n]:.1f}% ({100 * lo:.1f}-{100 * hi:.1f})")
            else:
                cells.append("")
        lines.append(f"| {m['match']} | {m['games']} | " + " | ".join(cells) + f" | {m['no_winner']} |")
    lines.append("")
    return "\n".join(lines)


def write_round_robin(r: dict, out: Path) -> list[Path]:
    """``round_robin.md``/``.json``/``.png``: the tables, the numbers, ratings with 95% error bars."""
    t = r["ratings"]
    chart = {"labels": [x["player"] for x in t], "values": [x["rating"] for x in t],
             "low": [x["ci95"][0] for x in t], "high": [x["ci95"][1] for x in t],
             "ylabel": "rating, Elo scale (95% CI)", "hline": 0.0,
             "title": f"round robin, {r['config']['preset']}, {r['config']['players']} seats"}  # fmt: skip
    return _write_reports(out, "round_robin", round_robin_markdown(r), r, chart)
