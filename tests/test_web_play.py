"""``cluedo play --web`` (cluedo_env/cli/web_game.py): one game in the browser against the bots.

* a whole game played through the HTTP API by a script, its record checked;
* the guard: no token or a foreign Host is 403, a malformed or illegal request is 400 with one
  line and changes nothing;
* privacy, tested as the observation is (tests/test_observation.py): hidden facts (other hands,
  the envelope, the cards shown between other seats) are changed and the responses must not change;
* every ending saves the record: the game over, a quit, an idle page, Ctrl-C;
* the page in headless Chromium (the system's, through Playwright, as tests/test_viewer.py):
  a turn clicked through, and the documentation screenshot ``docs/web_play.png``.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from cluedo_env import record as R
from cluedo_env.cli import main
from cluedo_env.cli.web_game import PlayServer, WebGame, serve
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "docs" / "web_play.png"
BOTS = ["human", "random", "heuristic", "random"]
DEADLINE_S = 240  # a whole game through the API, bots included, stays well under this


class Running:
    """A server for one game on a free port, serving in a thread; :meth:`close` stops it."""

    def __init__(self, game: WebGame, idle_timeout: float = 120.0) -> None:
        self.game = game
        self.server = PlayServer(game, 0, idle_timeout)
        game.advance()
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def request(self, path: str, body: Any = None, token: str | None = "", raw: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes]:  # fmt: skip
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["X-Cluedo-Token"] = token or self.server.token
        req = urllib.request.Request(f"http://127.0.0.1:{self.server.port}{path}", data=data, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def json(self, path: str, body: Any = None) -> dict[str, Any]:
        code, data = self.request(path, body)
        assert code == 200, data
        return json.loads(data)

    def close(self) -> None:
        self.server.stop("quit")
        self.thread.join(10)
        self.server.server_close()


@pytest.fixture
def running(tmp_path):
    runs: list[Running] = []

    def start(players: list[str] = BOTS, seed: int = 5, **kw: Any) -> Running:
        run = Running(WebGame(players, seed=seed, record_path=tmp_path / f"game{len(runs)}.json"), **kw)
        runs.append(run)
        return run

    yield start
    for run in runs:
        run.close()


def legal_of(choices: dict[str, Any]) -> list[int]:
    """Every action the page offers (accusations last: the script accuses only when nothing else is left)."""
    return ([b["action"] for b in choices["buttons"]] + [m["action"] for m in choices["moves"]]
            + [t[0] for t in choices["suggest"]] + [s["action"] for s in choices["show"]])  # fmt: skip


def play_steps(run: Running, rng: random.Random, until: Any = None, limit: int = 3000) -> dict[str, Any]:
    """The human plays random offered actions (never accusing while another choice exists) until ``until(state)``."""
    st = run.json("/api/state")
    start = time.monotonic()
    for _ in range(limit):
        if st["over"] or (until is not None and until(st)):
            return st
        assert time.monotonic() - start < DEADLINE_S, "the game took too long"
        ch = st["choices"]
        assert ch is not None, "the server waits for the human only when the human must decide"
        options = legal_of(ch) or [t[0] for t in ch["accuse"]]
        st = run.json("/api/act", {"action": rng.choice(options), "since": st["total"]})
    raise AssertionError("no end within the step limit")


# ============================================================================ a whole game
def test_a_whole_game_through_the_api(running):
    run = running()
    st = play_steps(run, random.Random(1))
    assert st["over"] and st["ended"] == "over" and st["choices"] is None
    assert st["result"]["solution"] == run.game.snaps[-1]["envelope"]  # revealed at the end
    assert st["seed"] == 5
    rec = R.load(st["record"])
    assert R.check(rec)["phase"] == "over" and len(rec["steps"]) == st["total"] - 1
    assert rec["players"] == BOTS
    # the frames grew step by step: the whole game as the seat saw it, one frame per state
    full = run.json("/api/state?since=0")
    assert len(full["frames"]) == len(rec["steps"]) + 1 == len(full["notebooks"])
    code, page = run.request("/replay")
    assert code == 200 and b"Cluedo replay" in page
    code, _ = run.request("/api/act", {"action": A.ROLL})
    assert code == 400


def test_the_page_embeds_the_state_and_the_play_script(running):
    run = running()
    code, page = run.request("/", token=None, headers={"Cookie": "x"})
    assert code == 403
    code, page = run.request(f"/?token={run.server.token}", token=None)
    assert code == 200 and page.startswith(b"<!DOCTYPE html>")
    assert b"window.CluedoViewer" in page and b"play-panel" in page and b'"you":0' in page


# ============================================================================ the guard
def test_token_host_and_bad_requests_change_nothing(running):
    run = running()
    before = run.json("/api/state")
    assert before["choices"]["phase"] == "start"
    assert run.request("/api/state", token=None)[0] == 403
    assert run.request("/api/state", token="wrong-token")[0] == 403
    assert run.request("/api/act", {"action": A.ROLL}, token=None)[0] == 403
    code, _ = run.request("/api/state", headers={"Host": f"evil.example:{run.server.port}"})
    assert code == 403
    illegal = next(a for a in range(A.NUM_ACTIONS) if a not in legal_of(before["choices"])
                   and a not in [t[0] for t in before["choices"]["accuse"]])  # fmt: skip
    bad = [
        ("/api/act", None, b"{not json"),
        ("/api/act", None, b"[1, 2]"),
        ("/api/act", None, b"{}"),
        ("/api/act", {"action": "ROLL"}, None),
        ("/api/act", {"action": 1.5}, None),
        ("/api/act", {"action": True}, None),
        ("/api/act", {"action": illegal}, None),
        ("/api/act", {"action": -1}, None),
        ("/api/act", {"action": A.ROLL, "since": "x"}, None),
        ("/api/act", None, b"\xff\xfe"),
        ("/api/act", None, b" " * 5000),
        ("/api/state?since=-3", None, None),
        ("/api/state?since=abc", None, None),
        ("/replay", None, None),  # only once the game is over
    ]
    for path, body, raw in bad:
        code, data = run.request(path, body, raw=raw)
        assert code == 400, (path, body, raw, code)
        reason = json.loads(data)["error"]
        assert reason and "\n" not in reason
        assert run.json("/api/state") == before, f"{path} {body or raw!r} changed the game"
    assert run.request("/nowhere")[0] == 404
    assert run.request("/api/quit")[0] == 405  # a GET
    assert len(run.game.snaps) == 1 and not run.game.recorder.steps


# ============================================================================ privacy
def _shown_to(seat: int, h: dict[str, Any], by: int) -> bool:
    return seat in (h["player"], by)


def _hide(run: Running, edit: Any) -> None:
    """Apply ``edit(snapshot)`` to every state the server holds (hidden facts only), the steps alike."""
    run.game.snaps[:] = [edit(copy.deepcopy(s)) for s in run.game.snaps]


def test_responses_do_not_change_with_hidden_facts(running):
    run = running(["human", "heuristic", "heuristic", "heuristic"], seed=11)
    seat = run.game.seat
    rng = random.Random(3)

    def enough(st: dict[str, Any]) -> bool:  # several suggestions refuted between other seats, still playing
        hist = run.game.snaps[-1]["history"]
        between_others = [h for h in hist if h["type"] == "suggestion"
                          for by in h["refuted_by"] if not _shown_to(seat, h, by)]  # fmt: skip
        return len(between_others) >= 3 and st["choices"] is not None and st["total"] > 60

    play_steps(run, rng, until=enough)
    final = run.game.snaps[-1]
    assert final["phase"] != "over"
    paths = ["/api/state?since=0", "/api/state?since=7", "/"]
    base = {p: run.request(p if p != "/" else f"/?token={run.server.token}")[1] for p in paths}
    assert b'"seed"' not in base[paths[0]] and b"__DATA__" not in base["/"]
    P = len(final["hands"])
    others = [q for q in range(P) if q != seat]
    seen = {x for h in final["history"] if h["type"] == "suggestion"
            for by, x in zip(h["refuted_by"], h["shown"], strict=True) if _shown_to(seat, h, by)}  # fmt: skip
    a, b = others[0], others[1]
    ca = next(c for c in final["hands"][a] if c not in seen)
    cb = next(c for c in final["hands"][b] if c not in seen)
    swap = {ca: cb, cb: ca}
    env = final["envelope"]
    other_env = ["White" if env[0] != "White" else "Plum", "Rope" if env[1] != "Rope" else "Knife", env[2]]

    def hidden_edit(s: dict[str, Any]) -> dict[str, Any]:
        for q in (a, b):
            s["hands"][q] = [swap.get(c, c) for c in s["hands"][q]]
        s["envelope"] = list(other_env)
        for h in s["history"]:
            if h["type"] == "suggestion":
                h["shown"] = [x if _shown_to(seat, h, by) else next(c for c in CARD_NAMES if c != x)
                              for by, x in zip(h["refuted_by"], h["shown"], strict=True)]  # fmt: skip
        return s

    steps_before = copy.deepcopy(run.game.recorder.steps)
    snaps_before = [copy.deepcopy(s) for s in run.game.snaps]
    _hide(run, hidden_edit)
    # the card of every SHOW between other seats, changed in the steps too
    changed = 0
    for i, st in enumerate(run.game.recorder.steps):
        a_ = st["action"]
        if A.SHOW0 <= a_ < A.ACCUSE0 and not _shown_to(seat, {"player": snaps_before[i]["current"]}, st["player"]):
            st["action"] = A.SHOW0 + (a_ - A.SHOW0 + 1) % len(CARD_NAMES)
            changed += 1
    assert changed >= 3
    for p in paths:
        after = run.request(p if p != "/" else f"/?token={run.server.token}")[1]
        assert after == base[p], f"LEAK: {p} tells hidden facts apart"
    # the control: what the seat does know changes the responses
    run.game.recorder.steps[:] = steps_before
    run.game.snaps[:] = snaps_before
    assert run.request(paths[0])[1] == base[paths[0]]
    mine = run.game.snaps[-1]["hands"][seat][0]

    def own_edit(s: dict[str, Any]) -> dict[str, Any]:
        s["hands"][seat] = [ca if c == mine else c for c in s["hands"][seat]]
        return s

    _hide(run, own_edit)
    assert run.request(paths[0])[1] != base[paths[0]]
    run.game.snaps[:] = snaps_before


# ============================================================================ endings
def test_quit_saves_an_unfinished_record_and_stops(running):
    run = running()
    play_steps(run, random.Random(2), until=lambda st: st["total"] > 20)
    st = run.json("/api/quit", {})
    assert st["ended"] == "quit" and Path(st["record"]).is_file()
    run.thread.join(10)
    assert not run.thread.is_alive()
    rec = R.load(st["record"])
    assert R.check(rec)["phase"] != "over" and len(rec["steps"]) == len(run.game.snaps) - 1


def test_an_idle_page_ends_the_game_and_saves_it(running):
    run = running(idle_timeout=0.6)
    run.thread.join(10)
    assert not run.thread.is_alive() and run.game.ended == "idle"
    R.check(R.load(run.game.saved_to))


def test_ctrl_c_saves_the_record(tmp_path, monkeypatch):
    def interrupted(self: PlayServer, poll_interval: float = 0.5) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(PlayServer, "serve_forever", interrupted)
    lines: list[str] = []
    game = WebGame(["random", "human", "random"], seed=4, record_path=tmp_path / "g.json")
    serve(game, 0, open_browser=False, say=lines.append)
    assert game.ended == "interrupted" and (tmp_path / "g.json").is_file()
    assert lines[0].startswith("Cluedo in the browser: http://127.0.0.1:") and "?token=" in lines[0]
    assert "saved" in lines[-1]
    R.check(R.load(tmp_path / "g.json"))


def test_command_line(tmp_path, capsys):
    assert main(["play", "--web", "--players", "human", "human", "random"]) == 2
    assert "exactly one 'human'" in capsys.readouterr().err
    assert main(["play", "--web", "--port", "70000"]) == 2
    path = tmp_path / "cli.json"
    proc = subprocess.Popen([sys.executable, "-m", "cluedo_env.cli", "play", "--web", "--no-open", "--players",
                             "human", "random", "random", "--seed", "3", "--record", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
    killer = threading.Timer(DEADLINE_S, proc.kill)  # a hung server cannot hang the test run
    killer.start()
    try:
        line = proc.stdout.readline()
        assert line.startswith("Cluedo in the browser: http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split()[4]
        token = url.split("token=")[1]
        req = urllib.request.Request(url.replace("/?token=" + token, "/api/quit"), data=b"{}",
                                     headers={"X-Cluedo-Token": token})  # fmt: skip
        with urllib.request.urlopen(req, timeout=30) as r:
            assert json.loads(r.read())["ended"] == "quit"
        out, err = proc.communicate(timeout=60)
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "saved" in out and path.is_file()


# ============================================================================ in the browser
def _browser_or_skip():
    """The system Chromium and Playwright, or a skip (a failure where CI sets CLUEDO_REQUIRE_BROWSER=1)."""
    from cluedo_env.render.html import CHROMIUM

    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"Chromium not found at {CHROMIUM}: run scripts/install_browser.sh (apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = reason or "the playwright package is not installed: run scripts/install_browser.sh"
    if reason is not None:
        if os.environ.get("CLUEDO_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + " (CLUEDO_REQUIRE_BROWSER=1)")
        pytest.skip(reason)
    return sync_playwright


def test_browser_clicks_through_a_turn_and_saves_the_screenshot(running):
    sync_playwright = _browser_or_skip()
    from cluedo_env.render.html import CHROMIUM, CHROMIUM_ARGS

    run = running(["human", "heuristic", "heuristic", "random"], seed=21)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 980})
            pg.set_default_timeout(120_000)  # the bots' first moves may compile kernels
            errors: list[str] = []
            pg.on("pageerror", lambda exc: errors.append(str(exc)))
            pg.goto(run.server.url)
            pg.wait_for_selector("body[data-play-ready='1']")
            pg.select_option("#speed", "0")
            assert pg.get_attribute("#play-panel", "data-state") == "start"
            pg.click("button.choice[data-action='0']")  # roll the dice
            pg.wait_for_selector("#play-panel[data-state='move']")
            targets = pg.eval_on_selector_all("#board .target", "es => es.length")
            assert targets > 0
            total = len(run.game.snaps)
            pg.click("#board .square.target, #board .room-cell.target >> nth=0")
            pg.wait_for_function(f"document.getElementById('step-counter').dataset.steps > {total - 1}")
            for _ in range(6):  # suggest if the move entered a room, show a card if asked, then end the turn
                pg.wait_for_selector("#play-panel:not([data-busy])")
                state = pg.get_attribute("#play-panel", "data-state")
                if state == "suggest":
                    pg.click("#btn-suggest")
                elif state == "refute":
                    pg.click("button.show-card >> nth=0")
                elif state == "post":
                    pg.click(f"button.choice[data-action='{A.END_TURN}']")
                elif state in ("start", "over"):
                    break
                pg.wait_for_timeout(200)
            assert run.game.snaps[-1]["turn_count"] >= 1 or run.game.over
            # the notebook: the seat's own hand, and a mark of the person's own in an unknown cell
            hand = pg.eval_on_selector_all("#notebook .nb-hand [data-card]", "es => es.map(e => e.dataset.card)")
            assert hand == run.game.snaps[-1]["hands"][0]
            cell = pg.query_selector("#notebook td.markable")
            if cell is not None:
                cell.click()
                assert pg.eval_on_selector_all("#notebook td.m-user", "es => es.length") == 1
            # the accusation dialog asks before it accuses; cancelling changes nothing
            if pg.get_attribute("#play-panel", "data-state") == "start":
                steps = len(run.game.snaps)
                pg.click("#btn-accuse")
                pg.click("#acc-next")
                assert pg.is_visible("#acc-confirm")
                pg.click("#acc-back")
                pg.click("#acc-cancel")
                assert len(run.game.snaps) == steps
            # a mid-game position for the documentation, the move targets lit
            st = play_steps(run, random.Random(9), until=lambda s: s["total"] > 30 and s["choices"]["phase"] == "move")
            pg.reload()
            pg.wait_for_selector("body[data-play-ready='1']")
            pg.wait_for_selector("#play-panel[data-state='over']" if st["over"] else "#play-panel[data-state='move']")
            pg.wait_for_timeout(400)
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            pg.screenshot(path=str(SCREENSHOT), full_page=True)
            assert SCREENSHOT.stat().st_size > 50_000
            assert not errors, errors
        finally:
            browser.close()
