"""``cluedo play --web``: one game against the bots in the browser, served from this machine.

A standard-library HTTP server bound to 127.0.0.1 serves one game to one person (the single
``human`` seat). The page is the replay viewer (``cluedo_env/data/viewer.*``) with a play panel
(``viewer.play.js``, ``viewer.play.css``): the person clicks a highlighted square or room to move,
picks the cards of a suggestion, chooses the card to show, and accuses through a dialog that asks
for confirmation. The bots act in the server between the person's decisions; the page plays their
steps out one by one at the speed the person chooses.

Privacy (R-G7): every response is built by :func:`seat_state` from the game's snapshots and the
human's seat, and holds only what that seat may know: public facts (positions, dice, hand sizes,
the history without shown cards, the action names with a shown card named only to the suggester
and the refuter) and the seat's own notebook (:func:`cluedo_env.record.knowledge`). The seed (from
which the deal could be recomputed), the envelope and the other hands are sent only once the game
is over; the replay of the whole game (``/replay``) opens only then.

HTTP API (every request carries the per-game token: ``?token=`` or the ``X-Cluedo-Token`` header;
without it 403)::

    GET  /                      the page (the initial state embedded, as the replay page embeds a game)
    GET  /api/state?since=N     the state, frames from step N on (the page polls it: a heartbeat)
    POST /api/act   {"action": int}   the human's action: 400 and no change unless it is legal now
    POST /api/quit              end the game now (the record is saved), then the server stops
    GET  /replay                the replay page of the whole game, once it is over

The record (:mod:`cluedo_env.record`, written atomically) is saved on every ending: the game over,
a quit, the page gone quiet for ``idle_timeout`` seconds (a closed tab), or Ctrl-C on the server.
"""

from __future__ import annotations

import hmac
import html
import json
import re
import secrets
import tempfile
import threading
import time
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np

from cluedo_env.cli.human_game import HUMAN, Console, HumanGame
from cluedo_env.errors import UsageError
from cluedo_env.record import RecordError, save
from cluedo_env.render.events import SUSPECT_COLORS, WEAPON_SHORT
from cluedo_env.render.html import (
    _asset,
    _board_data,
    _json_for_script,
    _public_record,
    public_frame,
    render_html,
    seat_knowledge,
)
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import load_board
from cluedo_env.rules.cards import CARD_NAMES, PASSAGES, ROOMS, SUSPECTS, WEAPONS
from cluedo_env.rules.privacy import may_see_shown_card

SCHEMA = "cluedo_env.play/1"
MAX_BODY = 4096  # bytes: the largest request body accepted (an action is a few bytes)
TOKEN_HEADER = "X-Cluedo-Token"


class BadRequest(Exception):
    """A request that is malformed or not allowed now: answered 400 with this one-line reason."""


# ============================================================================ what the seat may know
def _action_name(step: dict[str, Any], before: dict[str, Any], seat: int) -> str:
    """The step's name as ``seat`` may read it: a shown card is named only to the suggester and the refuter."""
    action = int(step["action"])
    if A.SHOW0 <= action < A.ACCUSE0 and not may_see_shown_card(seat, int(before["current"]), int(step["player"])):
        return "SHOW(a card)"
    return A.describe(action)


def seat_frame(snap: dict[str, Any], seat: int, step: dict[str, Any] | None, before: dict[str, Any] | None,
               index: int) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """One replay-viewer frame of ``snap`` and ``seat``'s notebook in it (the frame's ``nb`` points at ``index``)."""
    shown = step is not None and before is not None
    frame = public_frame(snap, step if shown else None, _action_name(step, before, seat) if shown else None)
    frame["nb"] = [index if q == seat else None for q in range(len(snap["hands"]))]
    return frame, seat_knowledge(snap, seat)


def choices(snap: dict[str, Any], legal: list[int], seat: int) -> dict[str, Any]:
    """The human's legal actions, grouped as the page offers them (all public or the seat's own facts)."""
    board = load_board()
    here = snap["suspects"][SUSPECTS[seat]] if snap.get("suspects") else None
    out: dict[str, Any] = {"phase": snap["phase"], "roll": snap.get("roll", 0), "buttons": [], "moves": [],
                           "suggest": [], "show": [], "accuse": [], "prompt": ""}  # fmt: skip
    in_here = f" in the {here}" if here else ""  # the card-only game has no board
    labels = {A.ROLL: "Roll the dice", A.STAY: f"Stay{in_here} and suggest", A.END_TURN: "End the turn"}
    for a in legal:
        if a == A.PASSAGE:
            target = ROOMS[PASSAGES[ROOMS.index(here)]] if here in ROOMS else None
            out["buttons"].append({"action": a, "label": f"Take the secret passage to the {target}"})
        elif a in labels:
            out["buttons"].append({"action": a, "label": labels[a]})
        elif A.MOVE0 <= a < A.SUGGEST0:
            loc = a - A.MOVE0
            if board.is_room(loc):
                out["moves"].append({"action": a, "room": ROOMS[board.room_of(loc)]})
            else:
                r, c = board.squares[loc]
                out["moves"].append({"action": a, "square": f"{r},{c}"})
        elif A.SUGGEST0 <= a < A.SHOW0:
            out["suggest"].append([a, *map(int, A.triple_of(a - A.SUGGEST0))])
        elif A.SHOW0 <= a < A.ACCUSE0:
            out["show"].append({"action": a, "card": CARD_NAMES[a - A.SHOW0]})
        elif a >= A.ACCUSE0:
            out["accuse"].append([a, *map(int, A.triple_of(a - A.ACCUSE0))])
    phase = snap["phase"]
    if phase == "refute":
        rec = snap["history"][-1]
        out["prompt"] = (f"{SUSPECTS[rec['player']]} suggested {', '.join(rec['cards'])}: "
                         "choose the card you show (only they see it).")  # fmt: skip
    elif phase == "move":
        out["prompt"] = f"You rolled {snap.get('roll', 0)}: click a highlighted square or room."
    elif phase == "suggest":
        out["prompt"] = f"Make a suggestion{in_here}" + (", or end your turn." if A.END_TURN in legal else ".")
    elif phase == "post":
        out["prompt"] = "Accuse now, or end your turn."
    else:
        out["prompt"] = "Your turn."
    return out


def seat_state(snaps: list[dict[str, Any]], steps: list[dict[str, Any]], seat: int, since: int = 0,
               legal: list[int] | None = None, seed: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Everything a response may carry, built only from what ``seat`` may know in the game so far.

    ``snaps``: the state after every step (index 0 the deal); ``steps``: the record's steps;
    ``legal``: the human's legal actions when it is their decision (else None); ``seed`` is sent
    only when the game is over (it determines the deal).
    """
    since = max(0, min(int(since), len(snaps)))
    frames, notebooks = [], []
    for i in range(since, len(snaps)):
        frame, nb = seat_frame(snaps[i], seat, steps[i - 1] if i else None, snaps[i - 1] if i else None, i)
        frames.append(frame)
        notebooks.append(nb)
    last = snaps[-1]
    over = last["phase"] == "over"
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "you": seat,
        "since": since,
        "total": len(snaps),
        "frames": frames,
        "notebooks": notebooks,
        "history": [_public_record(r) for r in last.get("history") or []],
        "over": over,
        "choices": choices(last, legal, seat) if legal and not over else None,
        "result": None,
    }
    if over:
        out["result"] = {"winner": last.get("winner"), "truncated": bool(last.get("truncated")),
                         "solution": list(last["envelope"])}  # fmt: skip
        out["seed"] = seed
    return out


def page_static(game: WebGame) -> dict[str, Any]:
    """The parts of the page's data that never change during the game (all public)."""
    snap = game.snaps[0]
    rules = snap.get("rules") or {}
    return {
        "schema": "cluedo_env.viewer/1",
        "rules": {k: rules.get(k) for k in ("preset", "players", "refutation", "max_turns", "board") if k in rules},
        "seed": None,
        "players": ["you" if n == HUMAN else str(n) for n in game.players],
        "num_players": len(game.players),
        "suspects": list(SUSPECTS),
        "weapons": list(WEAPONS),
        "weapon_short": WEAPON_SHORT,
        "cards": list(CARD_NAMES),
        "colors": {s: "#" + "".join(f"{v:02x}" for v in SUSPECT_COLORS[s]) for s in SUSPECTS},
        "board": _board_data() if snap.get("suspects") is not None else None,
    }


# ============================================================================ the game
class WebGame(HumanGame):
    """One game with one human seat: the bots play in :meth:`advance`, the human through :meth:`act`.

    Every method that reads or changes the game holds ``lock`` (the server answers requests in threads).
    """

    def __init__(self, players: list[str], preset: str = "classic", seed: int | None = None,
                 rules: dict[str, Any] | None = None, record_path: str | Path | None = None) -> None:  # fmt: skip
        humans = [s for s, name in enumerate(players) if name == HUMAN]
        if len(humans) != 1:
            raise UsageError(f"--web needs exactly one 'human' among --players, got {len(humans)} "
                             "(one seat for the person at the browser)")  # fmt: skip
        super().__init__(players, preset, seed, rules, Console(lambda _p: "q", lambda _t: None), show_board=False)
        self.seat = humans[0]
        self.viewer = self.seat
        self.record_path = None if record_path is None else Path(record_path)
        self.lock = threading.RLock()
        self.snaps: list[dict[str, Any]] = [self.snapshot()]
        self.ended: str | None = None  # why the game ended: "over", "quit", "idle", "interrupted"
        self.saved_to: Path | None = None
        self.save_note = ""

    # ------------------------------------------------------------------ moves
    def _apply(self, p: int, action: int) -> None:
        self.eng.step(np.array([action], np.int64))
        roll = int(self.eng.last_roll[0]) if action == A.ROLL else None
        self.recorder.add(p, action, roll)
        for agent, view in zip(self.agents, self.views, strict=True):
            if agent is not None:
                agent.observe_step(view)
        self.snaps.append(self.snapshot())

    @property
    def over(self) -> bool:
        return int(self.eng.phase[0]) == A.OVER

    def legal(self) -> list[int] | None:
        """The human's legal actions when it is their decision, else None."""
        if self.over or self.ended or int(self.eng.actor[0]) != self.seat:
            return None
        return [int(a) for a in np.flatnonzero(self.eng.legal_action_mask[0])]

    def advance(self, max_steps: int = 100_000) -> None:
        """Let the bots play until the human must decide or the game is over (then the record is saved)."""
        from cluedo_env.agents.play.runner import act_by_seat  # agents load only when a game runs

        with self.lock:
            seats = {s: agent for s, agent in enumerate(self.agents) if agent is not None}
            for _ in range(max_steps):
                if self.over or self.ended or int(self.eng.actor[0]) == self.seat:
                    break
                p = int(self.eng.actor[0])
                out = act_by_seat(self.eng.actor, seats, lambda agent, s, idx: agent.act(self.views[s], idx),
                                  np.full(1, -1, np.int64))  # fmt: skip
                self._apply(p, int(out[0]))
            if self.over:
                self.finish("over")

    def act(self, action: Any) -> None:
        """The human's action; BadRequest (and no change) unless it is an integer legal now."""
        with self.lock:
            if self.ended:
                raise BadRequest(f"the game has ended ({self.ended})")
            if isinstance(action, bool) or not isinstance(action, int):
                raise BadRequest("'action' must be an integer action id")
            legal = self.legal()
            if legal is None:
                raise BadRequest("it is not your decision now")
            if action not in legal:
                raise BadRequest(f"action {action} is not legal now")
            self._apply(self.seat, action)
        self.advance()

    def state(self, since: int = 0) -> dict[str, Any]:
        with self.lock:
            out = seat_state(self.snaps, self.recorder.steps, self.seat, since, self.legal(), self.seed)
            out["ended"] = self.ended
            out["record"] = str(self.saved_to) if self.saved_to else None
            return out

    # ---------------------------------------------------------------- endings
    def finish(self, reason: str) -> Path | None:
        """End the game once (later calls change nothing) and save its record; returns where it went."""
        with self.lock:
            if self.ended is not None:
                return self.saved_to
            self.ended = reason
            if self.record_path is None:
                return None
            record = self.record()
            note = "" if self.over else " (unfinished game)"
            try:
                self.saved_to = save(record, self.record_path)
            except RecordError as exc:
                fallback = Path(tempfile.gettempdir()) / time.strftime("cluedo_game_%Y%m%d_%H%M%S.json")
                self.saved_to = save(record, fallback)
                note = f" instead of {self.record_path} ({exc}){note}"
            self.save_note = f"Game record saved to {self.saved_to}{note}"
            return self.saved_to


# ============================================================================ the server
class PlayServer(ThreadingHTTPServer):
    """The game's HTTP server on 127.0.0.1; :meth:`stop` ends the game (saving it) and the server."""

    daemon_threads = True

    def __init__(self, game: WebGame, port: int = 0, idle_timeout: float = 300.0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.game = game
        self.token = secrets.token_urlsafe(24)
        self.idle_timeout = float(idle_timeout)
        self.last_seen = time.monotonic()
        self.active = 0  # requests being answered: a page waiting on the bots is not an idle page
        self._active_lock = threading.Lock()
        self._stopping = threading.Event()
        self._watchdog = threading.Thread(target=self._watch, name="cluedo-web-idle", daemon=True)
        self._watchdog.start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def _watch(self) -> None:
        """A page that stopped polling (a closed tab) ends the game after ``idle_timeout`` seconds."""
        while not self._stopping.wait(min(1.0, max(0.05, self.idle_timeout / 4))):
            if not self.active and time.monotonic() - self.last_seen > self.idle_timeout:
                self.stop("idle")
                return

    def stop(self, reason: str) -> None:
        """Save the record (once) and stop serving; callable from any thread, more than once."""
        self.game.finish(reason)
        if not self._stopping.is_set():
            self._stopping.set()
            threading.Thread(target=self.shutdown, name="cluedo-web-stop", daemon=True).start()

    def end(self, reason: str) -> None:
        """Save the record (once) after the serving loop has already left (Ctrl-C)."""
        self.game.finish(reason)
        self._stopping.set()

    @property
    def stopped(self) -> bool:
        return self._stopping.is_set()


class _Handler(BaseHTTPRequestHandler):
    server: PlayServer
    authorised = False
    server_version = "cluedo-play"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the terminal shows the URL line and the ending, not every request."""

    # ---------------------------------------------------------------- replies
    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page went away (reloaded, closed) before the answer: nothing to do

    def _json(self, code: int, data: Any) -> None:
        self._send(code, json.dumps(data, separators=(",", ":")).encode(), "application/json; charset=utf-8")

    def _error(self, code: int, reason: str) -> None:
        self._json(code, {"error": reason.splitlines()[0] if reason else "error"})

    # ---------------------------------------------------------------- checks
    def _authorised(self, query: dict[str, list[str]]) -> bool:
        """The per-game token, and a Host of this server (a page from another site cannot rebind to us)."""
        host = (self.headers.get("Host") or "").lower()
        if host not in (f"127.0.0.1:{self.server.port}", f"localhost:{self.server.port}"):
            return False
        given = self.headers.get(TOKEN_HEADER) or (query.get("token") or [""])[0]
        return hmac.compare_digest(given.encode(), self.server.token.encode())

    def _route(self, method: str) -> None:
        self.authorised = False
        with self.server._active_lock:
            self.server.active += 1
        try:
            self._answer(method)
        finally:
            with self.server._active_lock:
                self.server.active -= 1
                if self.authorised:  # only the page (it has the token) keeps the game alive
                    self.server.last_seen = time.monotonic()

    def _answer(self, method: str) -> None:
        parts = urlsplit(self.path)
        try:
            query = parse_qs(parts.query, max_num_fields=8)
        except ValueError:
            self._error(400, "malformed query string")
            return
        if not self._authorised(query):
            self._error(403, "missing or wrong token (open the URL the server printed)")
            return
        self.authorised = True
        self.server.last_seen = time.monotonic()
        game = self.server.game
        try:
            if method == "GET" and parts.path == "/":
                self._send(200, play_page(game).encode(), "text/html; charset=utf-8")
            elif method == "GET" and parts.path == "/api/state":
                since = (query.get("since") or ["0"])[0]
                if not re.fullmatch(r"\d{1,9}", since):
                    raise BadRequest("'since' must be a step number")
                self._json(200, game.state(int(since)))
            elif method == "POST" and parts.path == "/api/act":
                body = self._body()
                since = body.get("since", 0)
                if isinstance(since, bool) or not isinstance(since, int):
                    raise BadRequest("'since' must be a step number")
                if "action" not in body:
                    raise BadRequest("the body must be a JSON object with an integer 'action'")
                game.act(body["action"])
                self._json(200, game.state(since))
            elif method == "POST" and parts.path == "/api/quit":
                self._body()
                self.server.stop("quit")
                self._json(200, game.state(len(game.snaps)))
            elif method == "GET" and parts.path == "/replay":
                with game.lock:
                    if not game.over:
                        raise BadRequest("the replay of the whole game opens when the game is over")
                    page = render_html(game.record(), snapshots=list(game.snaps))
                self._send(200, page.encode(), "text/html; charset=utf-8")
            elif parts.path in ("/", "/api/state", "/api/act", "/api/quit", "/replay"):
                self._error(405, f"{method} is not allowed on {parts.path}")
            else:
                self._error(404, f"no such page: {parts.path}")
        except BadRequest as exc:
            self._error(400, str(exc))

    def _body(self) -> dict[str, Any]:
        """The request's JSON object (empty allowed); BadRequest for anything else."""
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise BadRequest("bad Content-Length") from None
        if n < 0 or n > MAX_BODY:
            raise BadRequest(f"the body must be at most {MAX_BODY} bytes")
        raw = self.rfile.read(n) if n else b"{}"
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise BadRequest("the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise BadRequest("the body must be a JSON object")
        return data

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self._route("POST")


def play_page(game: WebGame) -> str:
    """The page: the replay viewer with the play panel, the seat's current state embedded."""
    data = {**page_static(game), **game.state(0)}
    parts = {
        "/*__CSS__*/": _asset("viewer.css") + "\n" + _asset("viewer.play.css"),
        "/*__JS__*/": _asset("viewer.js") + "\n" + _asset("viewer.play.js"),
        "__TITLE__": html.escape(f"Cluedo: you are {SUSPECTS[game.seat]}"),
        "__DATA__": _json_for_script(data),
    }
    # one pass, as the replay page does, so nothing inserted is ever taken for a placeholder
    return re.sub(r"/\*__CSS__\*/|/\*__JS__\*/|__TITLE__|__DATA__", lambda m: parts[m.group(0)], _asset("viewer.html"))


# ============================================================================ command
def serve(game: WebGame, port: int = 0, open_browser: bool = True, idle_timeout: float = 300.0,
          say: Any = print) -> PlayServer:  # fmt: skip
    """Play ``game`` in the browser until it ends (win, quit, idle page, Ctrl-C); returns the stopped server."""
    try:
        server = PlayServer(game, port, idle_timeout)
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}) (choose another --port)") from exc
    try:
        game.advance()  # the bots seated before the human play their first turns
        say(f"Cluedo in the browser: {server.url}  (Ctrl-C ends the game)")
        if open_browser:
            threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.end(game.ended or "interrupted")
        server.server_close()
    if game.save_note:
        say(game.save_note)
    return server


def web_command(args: Any, players: list[str], seed: int, path: str | None, rules: dict[str, Any],
                say: Any) -> int:  # fmt: skip
    """``cluedo play --web``: the arguments are already checked by :func:`~cluedo_env.cli.play_command.play_command`."""
    game = WebGame(players, args.preset, seed, rules, record_path=path)
    serve(game, args.port, not args.no_open, args.idle_timeout, say)
    return 0


__all__ = ["PlayServer", "WebGame", "choices", "play_page", "seat_state", "serve", "web_command"]
