"""The replay viewer (cluedo_env/viewer.py, scripts/replay_viewer.py).

Two parts:

* page data and privacy, in Python (always run): the page embeds per step only public facts, and per
  seat only what ``record.knowledge`` gives that seat; the page loads nothing from the network;
* the page in a real headless browser: Chromium from the system packages (``/usr/bin/chromium``)
  driven by Playwright. Set up with ``scripts/install_browser.sh`` (apt packages chromium and
  chromium-driver, and the pinned ``playwright`` package; never ``playwright install``). Without
  them these tests skip and say what is missing. They also save the documentation screenshot
  ``docs/replay_viewer.png`` (a mid-game position, as seat 0 sees it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cluedo_env import record as R
from cluedo_env.render.html import CHROMIUM, CHROMIUM_ARGS, _notebook, demo_record, page_data, render_html
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, NUM_CARDS, SUSPECTS, WEAPONS

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "docs" / "replay_viewer.png"
SCREENSHOT_STEP, SCREENSHOT_SEAT = 189, 0  # demo game seed 7: Scarlet was just shown a card; Mustard is out


@pytest.fixture(scope="module")
def game() -> tuple[dict, list[dict]]:
    rec = demo_record(seed=7)
    return rec, R.replay(rec)


def _embedded(html: str) -> dict:
    m = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, "the page embeds its data in #replay-data"
    return json.loads(m.group(1))


def _loc(value) -> str:
    return value if isinstance(value, str) else f"{value[0]},{value[1]}"


# ============================================================================ without a browser
def test_demo_record_is_a_valid_finished_game(game):
    rec, snaps = game
    R.validate(rec)
    assert snaps[-1] == rec["final"] and rec["result"]["winner"] is not None
    kinds = [(h["type"], h.get("correct")) for h in rec["final"]["history"]]
    assert ("accusation", False) in kinds and ("accusation", True) in kinds  # an elimination and a win
    assert SCREENSHOT_STEP < len(snaps) and snaps[SCREENSHOT_STEP]["phase"] not in ("over", "start")


def test_page_is_self_contained(game):
    rec, snaps = game
    html = render_html(rec, snapshots=snaps)
    assert html.startswith("<!DOCTYPE html>") and "__DATA__" not in html and "/*__JS__*/" not in html
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", html, re.I), "nothing may be loaded"
    urls = set(re.findall(r"https?://[^\s\"')]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # the SVG namespace only, never fetched
    data = _embedded(html)
    assert len(data["frames"]) == len(rec["steps"]) + 1


def test_page_embeds_no_hidden_information(game):
    rec, snaps = game
    data = _embedded(render_html(rec, snapshots=snaps))
    public = {k: v for k, v in data.items() if k != "notebooks"}
    text = json.dumps(public)
    assert '"hands"' not in text and '"envelope"' not in text and '"shown"' not in text
    for rec_ in data["history"]:
        assert set(rec_) <= {"type", "player", "cards", "passed", "refuted_by", "correct"}
    # the solution appears publicly only through the correct accusation that ended the game
    assert data["result"]["solution"] == rec["final"]["envelope"]
    P = len(snaps[0]["hands"])
    for i, (frame, snap) in enumerate(zip(data["frames"], snaps, strict=True)):
        assert frame["cards"] == [len(h) for h in snap["hands"]]
        for seat in range(P):
            nb = data["notebooks"][frame["nb"][seat]]
            know = R.knowledge(snap, seat)
            assert nb == json.loads(json.dumps(_notebook(know, P))), (i, seat)
            assert nb["hand"] == snap["hands"][seat]
            others = {c for q in range(P) if q != seat for c in snap["hands"][q]}
            seen = {c for c, _, _ in nb["seen"]}
            assert seen == {x["card"] for x in know["shown_to_me"]}
            assert not (set(nb["hand"]) & others)
            # cards marked as held by another seat are exactly those shown to this seat
            marked = {c for c, marks in nb["grid"].items() for q, m in enumerate(marks) if m == "seen" and q != seat}
            assert marked == seen
            if nb["envelope"] is not None:  # only after this seat's own accusation (R-A2)
                assert any(h["type"] == "accusation" and h["player"] == seat for h in snap["history"])


def test_the_public_part_of_the_page_does_not_depend_on_the_shown_cards(game):
    """Change every card a refuter showed (in the steps and in the snapshots): what every spectator reads (all but
    the seats' notebooks) stays the same, so no shown card (R-G7) can be read off the page's public data."""
    import copy

    def public_part(data: dict) -> str:  # the notebooks (and each frame's index into them) are the seats' own
        frames = [{k: v for k, v in f.items() if k != "nb"} for f in data["frames"]]
        return json.dumps({**{k: v for k, v in data.items() if k != "notebooks"}, "frames": frames}, sort_keys=True)

    rec, snaps = game
    public = public_part(page_data(rec, snaps))
    rec2, snaps2 = copy.deepcopy(rec), copy.deepcopy(snaps)
    changed = 0
    for st in rec2["steps"]:
        if isinstance(st.get("action"), int) and A.SHOW0 <= st["action"] < A.SHOW0 + NUM_CARDS:
            st["action"] = A.SHOW0 + (st["action"] - A.SHOW0 + 1) % NUM_CARDS
            st["name"] = A.describe(st["action"])
            changed += 1
    for snap in snaps2:
        for h in snap["history"]:
            if h["type"] == "suggestion":
                h["shown"] = [CARD_NAMES[(CARD_NAMES.index(c) + 1) % NUM_CARDS] if c else c for c in h["shown"]]
    assert changed > 5
    assert public_part(page_data(rec2, snaps2)) == public


def test_shown_cards_stay_between_suggester_and_refuter(game):
    rec, snaps = game
    data = page_data(rec, snaps)
    final = snaps[-1]
    P = len(final["hands"])
    nbs = [data["notebooks"][data["frames"][-1]["nb"][seat]] for seat in range(P)]
    checked = 0
    for h, sug in enumerate(final["history"]):
        if sug["type"] != "suggestion":
            continue
        for by, card in zip(sug["refuted_by"], sug["shown"], strict=True):
            for seat in range(P):
                entitled = seat in (sug["player"], by)
                in_seen = [card, by, h] in nbs[seat]["seen"]
                in_showed = [card, sug["player"], h] in nbs[seat]["showed"]
                assert (in_seen or in_showed) == entitled, (h, seat)
            checked += 1
    assert checked > 5


def test_script_writes_page_and_rejects_bad_records(tmp_path, game):
    rec, _ = game
    path = R.save(rec, tmp_path / "game.json")
    out = tmp_path / "replay.html"
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "replay_viewer.py"), str(path), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert out.exists() and "wrote" in run.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(path.read_text()[:-200])
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "replay_viewer.py"), str(bad), "--out", str(tmp_path / "x.html")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "corrupted record" in run.stderr


# ============================================================================ in the browser
def _missing(reason: str) -> None:
    """Skip, or fail where CI set CLUEDO_REQUIRE_BROWSER=1 (so that a broken set-up cannot pass silently)."""
    if os.environ.get("CLUEDO_REQUIRE_BROWSER") == "1":
        pytest.fail(reason + " (CLUEDO_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


def _browser_or_skip():
    if not Path(CHROMIUM).exists():
        _missing(f"Chromium not found at {CHROMIUM}: run scripts/install_browser.sh (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed: run scripts/install_browser.sh (pip install playwright)")
    return sync_playwright


@pytest.fixture(scope="module")
def page(game, tmp_path_factory):
    sync_playwright = _browser_or_skip()
    rec, snaps = game
    out = tmp_path_factory.mktemp("viewer") / "replay.html"
    out.write_text(render_html(rec, snapshots=snaps), encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            pg.on("pageerror", lambda exc: errors.append(str(exc)))
            pg.on("request", lambda req: errors.append(f"request {req.url}") if not req.url.startswith("file:") else 0)
            pg.goto(out.as_uri())
            pg.wait_for_selector("body[data-ready='1']")
            pg.errors = errors
            yield pg
        finally:
            browser.close()


def _state(pg) -> dict:
    return pg.evaluate(
        """() => ({
        step: Number(document.body.dataset.step),
        counter: document.getElementById('step-counter').dataset.step,
        tokens: Object.fromEntries([...document.querySelectorAll('.token')].map(
            e => [e.dataset.suspect, e.dataset.location])),
        weapons: Object.fromEntries([...document.querySelectorAll('.weapon')].map(
            e => [e.dataset.weapon, e.dataset.room])),
        roll: Number(document.getElementById('dice').dataset.roll),
        history: document.querySelectorAll('#history .hist-item').length,
        action: (document.getElementById('action-name') || {}).textContent || null,
    })"""
    )


def _expect(pg, snaps, rec, i):
    st = _state(pg)
    snap = snaps[i]
    assert st["step"] == i and st["counter"] == str(i)
    assert st["tokens"] == {s: _loc(snap["suspects"][s]) for s in SUSPECTS}, f"token positions at step {i}"
    assert st["weapons"] == {w: snap["weapons"][w] for w in WEAPONS}, f"weapon rooms at step {i}"
    assert st["roll"] == snap["roll"]
    assert st["history"] == len(snap["history"])
    if i == 0:
        assert st["action"] is None
    else:
        step = rec["steps"][i - 1]
        shown = A.SHOW0 <= step["action"] < A.SHOW0 + NUM_CARDS  # the card is the two seats' business (R-G7)
        name = "SHOW(a card)" if shown else step["name"]
        assert st["action"] == (f"ROLL: rolled {step['roll']}" if step["roll"] is not None else name)


def test_browser_steps_forward_back_and_to_the_ends(page, game):
    rec, snaps = game
    pg = page
    pg.keyboard.press("Home")
    _expect(pg, snaps, rec, 0)
    assert all(loc != "" for loc in _state(pg)["tokens"].values())
    for _ in range(30):
        pg.keyboard.press("ArrowRight")
    _expect(pg, snaps, rec, 30)
    pg.keyboard.press("ArrowLeft")
    _expect(pg, snaps, rec, 29)
    for _ in range(3):
        pg.click("#btn-forward")
    _expect(pg, snaps, rec, 32)
    pg.click("#btn-back")
    _expect(pg, snaps, rec, 31)
    pg.keyboard.press("End")
    last = len(snaps) - 1
    _expect(pg, snaps, rec, last)
    assert pg.is_disabled("#btn-forward")
    pg.keyboard.press("ArrowRight")  # stays at the end
    _expect(pg, snaps, rec, last)
    assert "wins" in pg.text_content("#result") and pg.is_visible("#result")
    pg.click("#btn-first")
    _expect(pg, snaps, rec, 0)
    assert pg.is_hidden("#result")
    pg.click("#btn-last")
    _expect(pg, snaps, rec, last)
    # a step where a token moved along the corridor: the DOM follows every step of the way
    for i in range(last - 1, last - 11, -1):
        pg.keyboard.press("ArrowLeft")
        _expect(pg, snaps, rec, i)
    assert not pg.errors, pg.errors


def test_browser_notebook_shows_only_the_chosen_seat(page, game):
    rec, snaps = game
    pg = page
    pg.keyboard.press("Home")
    for _ in range(SCREENSHOT_STEP):
        pg.keyboard.press("ArrowRight")
    snap = snaps[SCREENSHOT_STEP]
    P = len(snap["hands"])
    for seat in range(P):
        pg.select_option("#seat-select", str(seat))
        assert pg.get_attribute("#notebook", "data-seat") == str(seat)
        hand = pg.eval_on_selector_all("#notebook .nb-hand [data-card]", "es => es.map(e => e.dataset.card)")
        assert hand == snap["hands"][seat]
        others = {c for q in range(P) if q != seat for c in snap["hands"][q]}
        assert not (set(hand) & others)
        seen = pg.eval_on_selector_all("#notebook .nb-seen [data-card]", "es => es.map(e => e.dataset.card)")
        assert len(seen) == len(set(seen)) and set(seen) == {x["card"] for x in R.knowledge(snap, seat)["shown_to_me"]}
        # the history shows a shown card only to the suggester and the refuter
        private = pg.eval_on_selector_all("#history .private", "es => es.length")
        expected = sum(
            1
            for h in snap["history"]
            if h["type"] == "suggestion"
            for by in h["refuted_by"]
            if seat in (h["player"], by)
        )
        assert private == expected
    pg.select_option("#seat-select", "")
    assert pg.get_attribute("#notebook", "data-seat") == ""
    assert pg.eval_on_selector_all("#notebook [data-card]", "es => es.length") == 0
    assert pg.eval_on_selector_all("#history .private", "es => es.length") == 0
    assert not pg.errors, pg.errors


def test_browser_screenshot_of_a_mid_game_position(page, game):
    """Writes docs/replay_viewer.png (also made by: scripts/replay_viewer.py --demo ... --screenshot)."""
    pg = page
    pg.goto(pg.url.split("#")[0] + f"#step={SCREENSHOT_STEP}&seat={SCREENSHOT_SEAT}")
    pg.reload()
    pg.wait_for_selector("body[data-ready='1']")
    assert _state(pg)["step"] == SCREENSHOT_STEP
    pg.wait_for_timeout(400)  # token transitions
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 50_000
    assert not pg.errors, pg.errors
