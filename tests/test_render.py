"""Rendering: the text map of a known position, privacy of the shown card (R-G7), image shape, card-only game.

The expected text lives in ``tests/data/render_ansi_seed3.txt``. After an intended change to the text
layout, regenerate it with ``.venv/bin/python tests/test_render.py`` and review the diff.
"""

from __future__ import annotations

import copy
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cluedo_env import render as R
from cluedo_env.engine.reference import Game
from cluedo_env.render import events
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import ROOM_LOC0
from cluedo_env.rules.cards import SUSPECTS
from cluedo_env.rules.config import RulesConfig

DATA = Path(__file__).parent / "data"
EXPECTED_ANSI = DATA / "render_ansi_seed3.txt"


def _policy_step(game: Game, rng: random.Random) -> None:
    """A random legal action that is not an accusation, entering a room whenever it can."""
    legal = [a for a in game.legal_actions() if a < A.ACCUSE0]
    rooms = [a for a in legal if A.MOVE0 + ROOM_LOC0 <= a < A.SUGGEST0]
    game.step(rng.choice(rooms or legal))


def known_game() -> Game:
    """Seed 3, four players: 120 policy steps, a wrong accusation by the next player able to accuse
    after a move (eliminated), then play on until a refuted suggestion has just been resolved."""
    game = Game(RulesConfig.from_preset("classic", players=4), seed=3)
    rng = random.Random(1)
    for _ in range(120):
        _policy_step(game, rng)
    while game.phase != A.POST:
        _policy_step(game, rng)
    s, w, r = game.envelope
    game.step(A.ACCUSE0 + A.triple_index((s + 1) % 6, w - 6, r - 12))  # wrong suspect: eliminated (R-A4)
    for _ in range(500):
        _policy_step(game, rng)
        last = game.history[-1]
        if game.phase == A.POST and getattr(last, "refuted_by", None):
            break
    assert game.phase == A.POST and game.history[-1].refuted_by
    return game


def known_snapshot() -> dict:
    return known_game().to_dict()


def cards_snapshot() -> dict:
    """A card-only game (R-C1) after a few turns, one player eliminated."""
    game = Game(RulesConfig.from_preset("cards", players=4), seed=5)
    rng = random.Random(2)
    for _ in range(12):
        _policy_step(game, rng)
    while game.phase != A.POST:
        _policy_step(game, rng)
    s, w, r = game.envelope
    game.step(A.ACCUSE0 + A.triple_index(s, (w - 6 + 1) % 6, r - 12))
    for _ in range(6):
        _policy_step(game, rng)
    return game.to_dict()


def test_ansi_matches_expected_text():
    text = R.render_ansi(known_snapshot())
    assert text == EXPECTED_ANSI.read_text(encoding="utf-8")


def test_ansi_is_plain_ascii_without_color_and_has_codes_with_color():
    snap = known_snapshot()
    plain = R.render_ansi(snap, viewer=0)
    assert plain.isascii() and "\x1b" not in plain
    colored = R.render_ansi(snap, viewer=0, color=True)
    assert "\x1b[" in colored
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain


def test_ansi_map_shows_tokens_doors_and_rooms():
    snap = known_snapshot()
    lines = R.render_ansi(snap).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  0 "))
    rows = lines[start : start + 25]
    for name, loc in snap["suspects"].items():
        letter = R.SUSPECT_LETTERS[name]
        if isinstance(loc, list):  # on a square: its letter at column 4 + 2 * col of that row
            r, c = loc
            assert rows[r][4 + 2 * c] == letter, (name, loc)
        else:  # in a room: listed on that room's line
            room_line = next(line for line in lines if line.startswith(f"  {loc} "))
            assert f"{name} ({letter})" in room_line
    assert rows[6][4 + 2 * 4 : 4 + 2 * 4 + 2] == "vv"  # Kitchen door (6,4), side S
    assert "KITCHEN" in rows[3] and "~Study" in "".join(rows)
    for weapon, room in snap["weapons"].items():
        assert weapon in next(line for line in lines if line.startswith(f"  {room} "))


def _refuted(snapshot: dict) -> tuple[dict, int, int, str]:
    rec = [h for h in snapshot["history"] if h["type"] == "suggestion"][-1]
    return rec, rec["player"], rec["refuted_by"][0], rec["shown"][0]


def test_shown_card_only_for_suggester_and_refuter():
    snap = known_snapshot()
    rec, suggester, refuter, card = _refuted(snap)
    assert snap["history"][-1] is not None and snap["history"][-1]["type"] == "suggestion"
    for viewer in (suggester, refuter):
        assert f"showed {card}" in R.render_ansi(snap, viewer=viewer)
    others = [None] + [p for p in range(4) if p not in (suggester, refuter)]
    for viewer in others:
        text = R.render_ansi(snap, viewer=viewer)
        assert "showed" not in text, viewer  # the refuter is named, the card is not
        assert f"refuted by {SUSPECTS[refuter]}" in text
        # the panel of the image is written from the same lines
        panel = events.suggestion_lines(snap, rec, viewer)
        panel += [
            events.history_line(snap, h, viewer)
            for h in snap["history"]
            if h["type"] == "suggestion" and viewer not in [h["player"], *h["refuted_by"]]
        ]
        assert not any(re.search(r"showed (?!a card)", line) for line in panel), viewer


def test_with_refutation_all_each_refuter_sees_only_its_own_card():
    snap = known_snapshot()
    snap["rules"] = {**snap["rules"], "refutation": "all"}
    rec = {"type": "suggestion", "player": 0, "cards": ["Plum", "Rope", "Hall"], "passed": [1]}
    rec |= {"refuted_by": [2, 3], "shown": ["Rope", "Hall"]}
    snap["history"] = snap["history"] + [rec]
    assert "showed Rope" in R.render_ansi(snap, 0) and "showed Hall" in R.render_ansi(snap, 0)
    assert "showed Rope" in R.render_ansi(snap, 2) and "showed Hall" not in R.render_ansi(snap, 2)
    assert "showed Hall" in R.render_ansi(snap, 3) and "showed Rope" not in R.render_ansi(snap, 3)
    assert "showed" not in R.render_ansi(snap, 1) and "showed" not in R.render_ansi(snap, None)


def test_rgb_shape_dtype_and_positions_differ():
    snap = known_snapshot()
    img = R.render_rgb(snap)
    assert img.shape == R.frame_shape(True) == (25 * R.DEFAULT_SCALE, 40 * R.DEFAULT_SCALE, 3)
    assert img.dtype == np.uint8
    assert R.render_rgb(snap, scale=20).shape == (500, 800, 3)
    moved = copy.deepcopy(snap)
    name, loc = next((n, v) for n, v in moved["suspects"].items() if isinstance(v, list))
    free = [8, 12] if loc != [8, 12] else [8, 13]
    assert free not in moved["suspects"].values()
    moved["suspects"][name] = free
    other = R.render_rgb(moved)
    assert other.shape == img.shape and not np.array_equal(other, img)
    assert np.array_equal(R.render_rgb(snap), img)  # deterministic


def test_rgb_viewer_changes_only_the_panel():
    snap = known_snapshot()
    a, b = R.render_rgb(snap, viewer=None), R.render_rgb(snap, viewer=1)
    board_w = 24 * R.DEFAULT_SCALE
    assert np.array_equal(a[:, :board_w], b[:, :board_w]) and not np.array_equal(a, b)


def test_rgb_from_several_threads_matches_serial():
    from concurrent.futures import ThreadPoolExecutor

    snaps = [known_snapshot(), cards_snapshot()]
    serial = [R.render_rgb(snap, viewer=1, scale=12) for snap in snaps]
    with ThreadPoolExecutor(4) as pool:
        frames = list(pool.map(lambda i: R.render_rgb(snaps[i % 2], viewer=1, scale=12), range(8)))
    assert all(np.array_equal(frame, serial[i % 2]) for i, frame in enumerate(frames))


def test_card_only_game_renders_both_ways():
    snap = cards_snapshot()
    assert snap["suspects"] is None
    text = R.render_ansi(snap, viewer=0)
    assert "Last suggestion:" in text and "Last accusation:" in text and "Eliminated:" in text
    assert "::" not in text and "Rooms:" not in text
    img = R.render_rgb(snap, viewer=0)
    assert img.shape == R.frame_shape(False) == (25 * R.DEFAULT_SCALE, 16 * R.DEFAULT_SCALE, 3)
    assert img.dtype == np.uint8 and img.std() > 0


def test_rendering_never_mutates_the_snapshot():
    for snap in (known_snapshot(), cards_snapshot()):
        before = copy.deepcopy(snap)
        for viewer in (None, 0, 1):
            R.render_ansi(snap, viewer)
            R.render_ansi(snap, viewer, color=True)
            R.render_rgb(snap, viewer)
        assert snap == before


def test_every_phase_and_the_end_render():
    game = Game(RulesConfig.from_preset("seed000", players=3), seed=11)
    rng = random.Random(0)
    seen = set()
    for step in range(400):
        snap = game.to_dict()
        seen.add(snap["phase"])
        assert R.render_ansi(snap, viewer=game.current)
        if step % 10 == 0 or snap["phase"] == "refute":
            assert R.render_rgb(snap, viewer=game.current, scale=10).shape == (250, 400, 3)
        if game.is_over:
            break
        _policy_step(game, rng)
    assert {"start", "move", "suggest", "refute"} <= seen
    s, w, r = game.envelope
    while not game.is_over:  # a correct accusation ends the game (R-A3)
        if A.ACCUSE0 + A.triple_index(s, w - 6, r - 12) in game.legal_actions():
            game.step(A.ACCUSE0 + A.triple_index(s, w - 6, r - 12))
        else:
            _policy_step(game, rng)
    end = game.to_dict()
    assert f"Game over: {SUSPECTS[end['winner']]}" in R.render_ansi(end)
    assert R.render_rgb(end).shape == R.frame_shape(True)


def test_import_needs_no_display_and_human_mode_says_so(monkeypatch):
    code = "import sys, cluedo_env.render; assert 'matplotlib.pyplot' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not R.display_available()
    with pytest.raises(R.NoDisplayError, match="rgb_array"):
        R.HumanWindow()


# The test folder goes on the path as pytest puts it there: `tests` is not a package, and a `tests` package that
# another distribution installs (pgx does) would shadow `from tests.test_render import ...`.
HUMAN_WINDOW_SCRIPT = """
import sys
import warnings
import numpy as np
import cluedo_env.render as R
import cluedo_env.render.window as W
sys.path.insert(0, "tests")
from test_render import known_snapshot, cards_snapshot
W.display_available = lambda: True
W._NON_INTERACTIVE = set()  # let the Agg backend stand in for a GUI one
warnings.simplefilter("ignore")  # Agg: 'cannot be shown'
win = R.HumanWindow(scale=10)
win.show(known_snapshot(), viewer=0)
first = win._fig
win.show(R.render_rgb(known_snapshot(), scale=10))
assert win._fig is first  # updated in place
assert np.array_equal(win._image.get_array(), R.render_rgb(known_snapshot(), scale=10))
win.show(cards_snapshot())  # another shape: a new figure
assert win._image.get_array().shape == R.frame_shape(False, 10)
win.close()
assert win._fig is None
"""


def test_human_window_updates_in_place():
    """The window logic, run in a fresh process on the Agg backend (no display is needed)."""
    root = Path(__file__).parent.parent
    env = {**os.environ, "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-c", HUMAN_WINDOW_SCRIPT], check=True, cwd=root, env=env)


if __name__ == "__main__":  # regenerate the expected text
    DATA.mkdir(exist_ok=True)
    EXPECTED_ANSI.write_text(R.render_ansi(known_snapshot()), encoding="utf-8")
    print(f"wrote {EXPECTED_ANSI}")
