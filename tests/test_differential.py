"""Differential tests: the vectorized engine against the reference engine (the oracle), step for step.

Random legal games are played in both engines with identical chance outcomes: a
:class:`VectorEngine` deals B games (``reset(seed)``), one reference :class:`Game` is built
per slot from ``export_game(i)``, and each step every unfinished reference game takes the
same action as its slot, with ``roll=int(eng.last_roll[i])`` for a ROLL. After every step,
for every game that was stepped, the test compares:

* the actor, rewards, terminated / truncated and every state field (token locations,
  weapons, hands, envelope, phase, current, refuter, roll, turn count, eliminated, dragged,
  winner and the whole history with each suggestion's responses), in array form;
* the legal action set (``legal_action_mask`` row against ``Game.legal_actions()``), and
  ``legal_counts()`` against the mask's row sums (all games);
* the full snapshot dicts, ``eng.export_game(i) == g.to_dict()``: for every game on the
  step that finished it, and for a rotating share of the games on every other step (each
  game every ``CLUEDO_DIFF_SNAPSHOT_EVERY`` steps; building the dicts is what costs time).

A failure names the game, the step, the action and the differing snapshot keys, and
writes the snapshot *before* the failing step plus the action and roll to a JSON file
(path in the message): load it with ``Game.from_dict`` and step that action to reproduce.

Actions come from ``eng.sample_random_actions(rng)`` with a per-game policy mix so that
games are long and varied: some games are plain uniform (random accusations end them in
a few turns), most replace a sampled accusation by a uniform non-accusation legal action
with high probability (games then run to ``max_turns`` or to eliminations), and some
turn a kept accusation into the correct one (wins, R-E1).

Environment variables:

``CLUEDO_DIFF_GAMES``           total number of games over all configurations (default 2000,
                                about 45 s of CPU; ``CLUEDO_DIFF_GAMES=100000`` is a soak run of
                                roughly 40 minutes on one core, played in batches of at most 512)
``CLUEDO_DIFF_SNAPSHOT_EVERY``  compare full snapshot dicts of each game every N steps
                                (default 4; 1 = every step for every game, slower)
``CLUEDO_DIFF_SEED``            base seed (default 0), to explore other games

Run: ``PYTHONPATH=. python3 -m pytest tests/test_differential.py``
(soak: ``CLUEDO_DIFF_GAMES=100000 PYTHONPATH=. python3 -m pytest tests/test_differential.py -x``).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from cluedo_env.engine.history import Accusation
from cluedo_env.engine.reference import Game
from cluedo_env.engine.state import ACCUSATION, NOT_ASKED, PASSED, SUGGESTION
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import ROOM_CARD0, WEAPON_CARD0
from cluedo_env.rules.config import RulesConfig

TOTAL_GAMES = int(os.environ.get("CLUEDO_DIFF_GAMES", "2000"))
SNAPSHOT_EVERY = max(1, int(os.environ.get("CLUEDO_DIFF_SNAPSHOT_EVERY", "4")))
BASE_SEED = int(os.environ.get("CLUEDO_DIFF_SEED", "0"))
MAX_BATCH = 512  # games per engine; more games run as several batches

# Per-game policy: probability of keeping a sampled accusation (1.0 = plain uniform play).
KEEP_ACCUSATION = np.array([1.0, 0.1, 0.03, 0.01, 0.0])
KEEP_ACCUSATION_P = np.array([0.1, 0.1, 0.25, 0.25, 0.3])
CHEAT = 0.25  # in half of the games, a kept accusation is made correct with this probability


@dataclass(frozen=True)
class Case:
    name: str
    preset: str
    players: int
    max_turns: int
    weight: float = 1.0  # share of TOTAL_GAMES
    flags: dict[str, Any] = field(default_factory=dict)

    def config(self) -> RulesConfig:
        return RulesConfig.from_preset(self.preset, players=self.players, max_turns=self.max_turns, **self.flags)


CASES = [
    Case("classic-2p", "classic", 2, 80),
    Case("classic-3p", "classic", 3, 100),
    Case("classic-4p", "classic", 4, 120),
    Case("classic-5p", "classic", 5, 100),
    Case("classic-6p", "classic", 6, 150),
    # Two dice: the reference engine's move search is slow for 12 pips, so fewer games.
    Case("seed000-3p", "seed000", 3, 60, 0.35),
    Case("seed000-4p", "seed000", 4, 60, 0.35),
    Case("seed000-5p", "seed000", 5, 60, 0.35),
    Case("seed000-6p", "seed000", 6, 70, 0.35),
    Case("cards-3p", "cards", 3, 60),
    Case("cards-4p", "cards", 4, 60),
    Case("cards-5p", "cards", 5, 70),
    Case("cards-6p", "cards", 6, 70),
    Case("classic-refutation-all", "classic", 4, 100, 0.7, {"refutation": "all"}),
    Case("classic-accusation-in-room", "classic", 4, 100, 0.7, {"accusation_in_room": True}),
    Case("classic-plays-on", "classic", 3, 100, 0.7, {"last_standing": "plays_on"}),
    Case("classic-optional-suggestion", "classic", 5, 100, 0.7, {"suggestion_on_entry": "optional"}),
    Case("classic-no-accuse-after-suggestion", "classic", 4, 100, 0.7, {"accuse_after_suggestion": False}),
    Case("classic-two-dice", "classic", 3, 60, 0.3, {"dice": 2}),
    Case("cards-refutation-all", "cards", 5, 60, 0.7, {"refutation": "all"}),
    Case("cards-last-standing-wins", "cards", 3, 60, 0.7, {"last_standing": "wins"}),
]
_WEIGHTS = sum(c.weight for c in CASES)


def games_for(case: Case) -> int:
    """This case's share of TOTAL_GAMES, rounded up (so the cases add up to at least TOTAL_GAMES)."""
    return max(4, math.ceil(TOTAL_GAMES * case.weight / _WEIGHTS))


def test_cases_cover_at_least_the_requested_number_of_games():
    assert sum(games_for(c) for c in CASES) >= TOTAL_GAMES
    presets = {(c.preset, c.players) for c in CASES}
    for preset in ("classic", "seed000", "cards"):
        assert {p for s, p in presets if s == preset} >= {3, 4, 5, 6}
    assert ("classic", 2) in presets


# ============================================================================ the game runner
class _RefHistory:
    """The reference games' histories in the vector engine's array layout, kept up to date incrementally."""

    def __init__(self, B: int, H: int, P: int):
        self.len = np.zeros(B, np.int64)
        self.kind = np.zeros((B, H), np.int64)
        self.player = np.zeros((B, H), np.int64)
        self.triple = np.zeros((B, H, 3), np.int64)
        self.correct = np.zeros((B, H), bool)
        self.response = np.full((B, H, P), NOT_ASKED, np.int64)

    def update(self, i: int, g: Game) -> None:
        """Re-encode game i's records that can have changed (the last one) and any new ones."""
        n = len(g.history)
        for h in range(max(0, min(self.len[i], n) - 1), n):
            rec = g.history[h]
            self.triple[i, h] = (rec.suspect, rec.weapon, rec.room)
            if isinstance(rec, Accusation):
                self.kind[i, h], self.player[i, h], self.correct[i, h] = ACCUSATION, rec.accuser, rec.correct
                self.response[i, h] = NOT_ASKED
            else:
                self.kind[i, h], self.player[i, h], self.correct[i, h] = SUGGESTION, rec.suggester, False
                self.response[i, h] = NOT_ASKED
                self.response[i, h, rec.passed] = PASSED
                self.response[i, h, rec.refuted_by] = rec.shown
        self.len[i] = n


def _engine_rows(eng: VectorEngine, idx: np.ndarray) -> np.ndarray:
    """(n, K) float64: every non-history state field of games idx, plus actor, in a fixed layout."""
    cols = []
    if eng.has_board:
        cols += [eng.pos[idx], eng.weapon_room[idx]]
    cols += [
        eng.owner[idx],
        eng.envelope[idx],
        np.stack([eng.phase[idx], eng.current[idx], eng.refuter[idx], eng.roll[idx], eng.turn_count[idx]], 1),
        np.stack([eng.winner[idx], eng.terminated[idx], eng.truncated[idx], eng.actor[idx], eng.hist_len[idx]], 1),
        eng.eliminated[idx],
        eng.dragged[idx],
        eng.rewards[idx],
    ]
    return np.concatenate([np.asarray(c, np.float64).reshape(len(idx), -1) for c in cols], axis=1)


def _ref_row(g: Game) -> list[float]:
    """The reference game's fields in the layout of :func:`_engine_rows`."""
    owner = [-1] * 21
    for p, hand in enumerate(g.hands):
        for c in hand:
            owner[c] = p
    scalars = [g.phase, g.current, g.refuter, g.roll, g.turn_count]
    scalars += [g.winner, g.terminated, g.truncated, g.actor, len(g.history)]
    return [*g.pos, *g.weapon_room, *owner, *g.envelope, *scalars, *g.eliminated, *g.dragged, *g.rewards]


def _row_labels(eng: VectorEngine) -> list[str]:
    P = eng.P
    labels = []
    if eng.has_board:
        labels += [f"pos[{s}]" for s in range(6)] + [f"weapon_room[{w}]" for w in range(6)]
    labels += [f"owner[{c}]" for c in range(21)] + [f"envelope[{k}]" for k in range(3)]
    labels += ["phase", "current", "refuter", "roll", "turn_count"]
    labels += ["winner", "terminated", "truncated", "actor", "hist_len"]
    labels += [f"eliminated[{p}]" for p in range(P)] + [f"dragged[{p}]" for p in range(P)]
    labels += [f"rewards[{p}]" for p in range(P)]
    return labels


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _snapshot_diff(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The keys where two snapshots differ, with both values (histories: the first differing record)."""
    lines = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if va == vb:
            continue
        if key == "history" and isinstance(va, list) and isinstance(vb, list):
            h = next((k for k in range(min(len(va), len(vb))) if va[k] != vb[k]), min(len(va), len(vb)))
            ra = va[h] if h < len(va) else "(none)"
            rb = vb[h] if h < len(vb) else "(none)"
            lines.append(f"  history: lengths {len(va)} vs {len(vb)}; record {h}: engine {ra} | reference {rb}")
        else:
            lines.append(f"  {key}: engine {_short(va)} | reference {_short(vb)}")
    return "\n".join(lines) if lines else "  (snapshots are equal)"


class DiffRun:
    """One engine batch and its reference games, played in lockstep."""

    def __init__(self, case: Case, batch_size: int, seed: int):
        self.case, self.seed = case, seed
        self.cfg = case.config()
        self.eng = VectorEngine(self.cfg, batch_size=batch_size)
        self.eng.reset(seed=seed)
        self.rng = np.random.default_rng([seed, 1])
        B = self.eng.batch_size
        self.start = [self.eng.export_game(i) for i in range(B)]
        self.games = [Game.from_dict(s) for s in self.start]
        self.log: list[list[tuple[int, int | None]]] = [[] for _ in range(B)]
        self.hist = _RefHistory(B, self.eng.H, self.eng.P)
        self.keep_acc = self.rng.choice(KEEP_ACCUSATION, size=B, p=KEEP_ACCUSATION_P)
        self.cheat = np.where(self.rng.random(B) < 0.5, CHEAT, 0.0)
        env = self.eng.envelope.astype(np.int64)
        self.correct_accusation = A.ACCUSE0 + ((env[:, 0] * 6 + env[:, 1] - WEAPON_CARD0) * 9 + env[:, 2] - ROOM_CARD0)
        self.labels = _row_labels(self.eng)
        self.step_no = 0
        self.stats = {
            "steps": 0,
            "game_steps": 0,
            "snapshots": 0,
            "won": 0,
            "no_winner": 0,
            "truncated": 0,
            "accused": 0,
        }

    # ----------------------------------------------------------------- actions
    def choose(self) -> np.ndarray:
        eng, rng = self.eng, self.rng
        live = eng.phase != A.OVER
        acts = eng.sample_random_actions(rng)
        mask = eng.legal_action_mask
        assert (acts[~live] == -1).all(), "sample_random_actions must give -1 for finished games"
        li = np.flatnonzero(live)
        illegal = li[~mask[li, acts[li]]]
        assert len(illegal) == 0, f"sample_random_actions gave illegal actions in games {illegal}"
        accusing = live & (acts >= A.ACCUSE0)
        drop = np.flatnonzero(accusing & (rng.random(eng.batch_size) >= self.keep_acc))
        if len(drop):  # a uniform non-accusation legal action instead (there always is one)
            m = mask[drop, : A.ACCUSE0]
            keys = np.where(m, rng.random(m.shape), -1.0)
            acts[drop] = keys.argmax(1)
            assert m[np.arange(len(drop)), acts[drop]].all()
        cheat = np.flatnonzero(accusing & (acts >= A.ACCUSE0) & (rng.random(eng.batch_size) < self.cheat))
        ok = mask[cheat, self.correct_accusation[cheat]]
        acts[cheat[ok]] = self.correct_accusation[cheat[ok]]
        return acts

    # ------------------------------------------------------------------- steps
    def step(self) -> bool:
        """One step of every live game in both engines, then the comparisons; False when all are over."""
        eng = self.eng
        live = np.flatnonzero(eng.phase != A.OVER)
        if len(live) == 0:
            return False
        acts = self.choose()
        eng.step(acts)
        self.step_no += 1
        for i in live:
            a = int(acts[i])
            roll = int(eng.last_roll[i]) if a == A.ROLL else None
            self.log[i].append((a, roll))
            g = self.games[i]
            try:
                g.step(a, roll=roll)
            except (A.IllegalActionError, ValueError) as exc:
                self.fail(i, f"the reference engine refused the action: {exc}")
            self.hist.update(i, g)
        self.compare(live)
        self.stats["steps"] += 1
        self.stats["game_steps"] += len(live)
        return True

    def compare(self, idx: np.ndarray) -> None:
        eng, games = self.eng, self.games
        # legal_counts agrees with the mask everywhere; finished games have nothing legal.
        mask = eng.legal_action_mask
        counts = eng.legal_counts()
        bad = np.flatnonzero(counts != mask.sum(1))
        if len(bad):
            i = int(bad[0])
            self.fail(i, f"legal_counts()={counts[i]} but the mask row has {mask[i].sum()} legal actions")
        over = eng.phase == A.OVER
        if (eng.actor[over] != -1).any() or mask[over].any():
            i = int(np.flatnonzero(over & ((eng.actor != -1) | mask.any(1)))[0])
            self.fail(i, "a finished game must have actor -1 and an all-False mask row")
        if len(idx) == 0:
            return
        # Every state field, actor and rewards.
        mine = _engine_rows(eng, idx)
        ref = np.array([_ref_row(games[i]) for i in idx], np.float64)
        diff = (mine != ref).any(1)
        if diff.any():
            k = int(np.flatnonzero(diff)[0])
            cols = np.flatnonzero(mine[k] != ref[k])
            fields = ", ".join(f"{self.labels[c]}: engine {mine[k, c]:g} vs reference {ref[k, c]:g}" for c in cols)
            self.fail(int(idx[k]), f"state fields differ: {fields}")
        # The whole history, in array form.
        H = int(self.hist.len[idx].max(initial=0))
        if H:
            h_ok = np.arange(H)[None, :] < self.hist.len[idx][:, None]
            kind = eng.hist_kind[idx, :H]
            same = (kind == self.hist.kind[idx, :H]) & (eng.hist_player[idx, :H] == self.hist.player[idx, :H])
            same &= (eng.hist_triple[idx, :H] == self.hist.triple[idx, :H]).all(2)
            same &= (kind != ACCUSATION) | (eng.hist_correct[idx, :H] == self.hist.correct[idx, :H])
            same &= (kind != SUGGESTION) | (eng.hist_response[idx, :H] == self.hist.response[idx, :H]).all(2)
            bad = (h_ok & ~same).any(1)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                h = int(np.flatnonzero(h_ok[k] & ~same[k])[0])
                i, hs = int(idx[k]), self.hist
                self.fail(
                    i,
                    f"history record {h} differs (kind, player, triple, correct, response per seat): engine "
                    f"{eng.hist_kind[i, h]}, {eng.hist_player[i, h]}, {eng.hist_triple[i, h].tolist()}, "
                    f"{eng.hist_correct[i, h]}, {eng.hist_response[i, h].tolist()} vs reference {hs.kind[i, h]}, "
                    f"{hs.player[i, h]}, {hs.triple[i, h].tolist()}, {hs.correct[i, h]}, {hs.response[i, h].tolist()}",
                )
        # The legal action set.
        ref_mask = np.zeros((len(idx), A.NUM_ACTIONS), bool)
        for k, i in enumerate(idx):
            ref_mask[k, games[i].legal_actions()] = True
        bad = (ref_mask != mask[idx]).any(1)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            e_set, r_set = set(np.flatnonzero(mask[idx[k]]).tolist()), set(np.flatnonzero(ref_mask[k]).tolist())
            only_e = ", ".join(A.describe(a) for a in sorted(e_set - r_set)[:10])
            only_r = ", ".join(A.describe(a) for a in sorted(r_set - e_set)[:10])
            self.fail(int(idx[k]), f"legal actions differ: only in engine [{only_e}]; only in reference [{only_r}]")
        # Full snapshot dicts: every game that just finished, and a rotating share of the others.
        full = idx[((idx + self.step_no) % SNAPSHOT_EVERY == 0) | (eng.phase[idx] == A.OVER)]
        for i in full:
            mine_d, ref_d = eng.export_game(int(i)), games[i].to_dict()
            if mine_d != ref_d:
                self.fail(int(i), "snapshots differ")
        self.stats["snapshots"] += len(full)
        for i in idx[eng.phase[idx] == A.OVER]:
            g = games[i]
            self.stats["truncated" if g.truncated else "won" if g.winner >= 0 else "no_winner"] += 1
            self.stats["accused"] += any(isinstance(rec, Accusation) for rec in g.history)

    # ------------------------------------------------------------------ report
    def fail(self, i: int, what: str) -> None:
        """Fail with the game, step, action and snapshot diff; dump a reproduction to a JSON file."""
        eng = self.eng
        action, roll = self.log[i][-1] if self.log[i] else (None, None)
        before = Game.from_dict(self.start[i])
        for a, r in self.log[i][:-1]:
            before.step(a, roll=r)
        repro = {
            "case": self.case.name,
            "batch_seed": self.seed,
            "game": i,
            "step": self.step_no,
            "before": before.to_dict(),
            "action": action,
            "action_name": None if action is None else A.describe(action),
            "roll": roll,
            "engine_after": eng.export_game(i),
            "reference_after": self.games[i].to_dict(),
        }
        fd, path = tempfile.mkstemp(prefix=f"cluedo_diff_{self.case.name}_g{i}_", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(repro, fh, indent=1)
        diff = _snapshot_diff(repro["engine_after"], repro["reference_after"])
        pytest.fail(
            f"[{self.case.name}] game {i} (batch seed {self.seed}), step {self.step_no}, after action "
            f"{repro['action_name']} (id {action}, roll {roll}) from phase '{repro['before']['phase']}' "
            f"of player {before.actor}: {what}\n"
            f"snapshot differences (engine | reference):\n{diff}\n"
            f"reproduction (snapshot before the step, action, roll): {path}",
            pytrace=False,
        )

    def run(self) -> dict[str, int]:
        self.compare(np.arange(self.eng.batch_size))  # the dealt positions, before any step
        limit = 12 * (self.cfg.max_turns + self.cfg.players) + 20  # a turn takes a handful of steps
        while self.step():
            assert self.step_no <= limit, f"games did not finish within {limit} steps"
        return self.stats


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_random_games_match_reference(case: Case):
    n = games_for(case)
    batches = math.ceil(n / MAX_BATCH)
    totals: dict[str, int] = {}
    for b in range(batches):
        size = n // batches + (b < n % batches)
        seed = BASE_SEED * 1_000_003 + CASES.index(case) * 1000 + b
        stats = DiffRun(case, size, seed).run()
        for key, value in stats.items():
            totals[key] = totals.get(key, 0) + value
    finished = totals["won"] + totals["no_winner"] + totals["truncated"]
    assert finished == n, f"{finished} of {n} games finished"
    # The policy mix must produce games cut at max_turns and games with accusations (eliminations, wins).
    assert totals["truncated"] > 0, totals
    assert totals["accused"] > 0, totals
