"""Replay viewer: a game record as one self-contained, offline HTML page.

API::

    page_data(record) -> dict               # everything the page embeds (public + per-seat knowledge)
    render_html(record, title=None) -> str  # the whole page: inline CSS/JS, board map and steps as JSON
    write_html(record, path, title=None) -> Path
    demo_record(seed=7, players=4) -> dict  # a short seeded reference game as a record (tests, docs)

``python scripts/replay_viewer.py RECORD.json --out replay.html [--serve PORT]`` is the command.

The page draws the board (rooms, corridors, doors, staircase, passages), the suspect tokens and
the weapons, the dice and whose turn it is; buttons and the keyboard (left/right arrows, Home/End)
step through the game. A panel lists the suggestion history up to the current step, and a player
selector shows that player's notebook: what that seat knew at that step, and nothing else.

Privacy (R-G7): the page never holds the envelope, the other players' hands or the card shown in
a refutation, except inside the knowledge of a seat that was entitled to it (computed here in
Python, per step and per seat, with ``cluedo_env.record.knowledge``; e.g. the envelope in the
notebook of a seat after its own accusation, R-A2). The public part embeds per step the positions,
the dice, the number of cards in each hand, and the game's public history without its ``shown``
cards (a replay holds the whole game's public events; the page shows those up to the current step);
the result, shown at the last step, names the solution only when a correct accusation did (R-A3).

``#step=N&seat=S`` in the page's URL opens it at step N with seat S's notebook (``seat=`` for a spectator).

DOM hooks for tests: ``body[data-step]``, ``#step-counter[data-step][data-steps]``, one
``.token[data-suspect][data-location]`` per suspect (location: a room name or ``"row,col"``),
one ``.weapon[data-weapon][data-room]`` per weapon, ``#btn-first``, ``#btn-back``,
``#btn-forward``, ``#btn-last``, ``#seat-select`` (value ``""`` = spectator, or a seat number),
``#notebook[data-seat]`` with ``.nb-hand [data-card]`` for the seat's own hand and
``.nb-seen [data-card]`` for cards shown to it, ``#history .hist-item``, ``#action``.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from cluedo_env import record as record_mod
from cluedo_env.render.events import SUSPECT_COLORS, WEAPON_SHORT
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import ROOM_LETTERS, load_board
from cluedo_env.rules.cards import CARD_NAMES, NUM_CARDS, PASSAGES, ROOMS, SUSPECTS, WEAPONS

_ROOM_FILLS = (
    "#ecd4be",  # Kitchen
    "#ded0ec",  # Ballroom
    "#cce6cc",  # Conservatory
    "#f2deba",  # Dining Room
    "#c6e0de",  # Billiard Room
    "#e2d6c4",  # Library
    "#eeccd4",  # Lounge
    "#d4def0",  # Hall
    "#e4e4c4",  # Study
)


# ============================================================================ record API
def load_record(path: str | Path) -> dict[str, Any]:
    """Read and validate a record file (``cluedo_env.record.load``; RecordError says what is wrong)."""
    return record_mod.load(path)


def replay_snapshots(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The game state after every step; index 0 is the initial state (checked against the record's final state)."""
    return list(record_mod.replay(record))


def seat_knowledge(snapshot: dict[str, Any], seat: int) -> dict[str, Any]:
    """What ``seat`` knew in ``snapshot`` (``cluedo_env.record.knowledge``), as the page's notebook."""
    return _notebook(record_mod.knowledge(snapshot, seat), len(snapshot["hands"]))


def _notebook(know: dict[str, Any], P: int) -> dict[str, Any]:
    """A seat's knowledge in the page's compact form; built only from ``know``.

    ``hand``: own cards; ``seen``: [card, by seat, history index] shown to this seat; ``showed``:
    [card, to seat, history index] this seat showed; ``envelope``: the solution if this seat saw it
    (after its own accusation, R-A2), else null; ``grid``: card -> one mark per seat (``"own"``: my
    card, ``"seen"``: that seat showed it to me, ``"no"``: it cannot hold it, ``""``: unknown);
    ``out``: cards known not to be in the envelope.
    """
    seat = int(know["seat"])
    hand = list(know["hand"])
    seen = [[x["card"], x["by"], x.get("suggestion")] for x in know.get("shown_to_me", [])]
    showed = [[x["card"], x["to"], x.get("suggestion")] for x in know.get("i_showed", [])]
    envelope = know.get("envelope")
    grid: dict[str, list[str]] = {}
    out = []
    for card in CARD_NAMES:
        info = know["sheet"][card]
        holder = info.get("holder")
        marks = [""] * P
        for q in info.get("passed_by", []):
            marks[q] = "no"
        marks[seat] = "own" if card in hand else "no"  # a seat knows its whole hand (R-S6)
        if isinstance(holder, int):
            marks = ["no"] * P
            marks[holder] = "own" if holder == seat else "seen"
            out.append(card)
        elif holder == "envelope":
            marks = ["no"] * P
        grid[card] = marks
    return {"hand": hand, "seen": seen, "showed": showed, "envelope": envelope, "grid": grid, "out": out}


# ============================================================================ page data
def _public_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A history record without the private ``shown`` cards (R-G7)."""
    out = {"type": rec["type"], "player": rec["player"], "cards": list(rec["cards"])}
    if rec["type"] == "accusation":
        out["correct"] = bool(rec.get("correct"))
    else:
        out["passed"] = list(rec.get("passed", []))
        out["refuted_by"] = list(rec.get("refuted_by", []))
    return out


def _loc(value: Any) -> str:
    return value if isinstance(value, str) else f"{int(value[0])},{int(value[1])}"


def _board_data() -> dict[str, Any]:
    board = load_board()
    rooms = []
    for room, name in enumerate(ROOMS):
        cells = board.room_cells[room]
        rooms.append(
            {
                "name": name,
                "letter": ROOM_LETTERS[room],
                "fill": _ROOM_FILLS[room],
                "content": _content_rect(cells),
                "passage": ROOMS[PASSAGES[room]] if room in PASSAGES else None,
            }
        )
    return {
        "rows": board.rows,
        "cols": board.cols,
        "grid": list(board.grid),
        "doors": [[d.cell[0], d.cell[1], d.side, ROOMS[d.room]] for d in board.doors],
        "rooms": rooms,
        "starts": {SUSPECTS[s]: list(board.squares[sq]) for s, sq in enumerate(board.starts)},
    }


def _content_rect(cells: tuple[tuple[int, int], ...]) -> list[int]:
    """[row0, col0, row1, col1]: the largest rectangle of the room's cells below its top row (tokens go there)."""
    cellset = set(cells)
    r_top = min(r for r, _ in cells)
    rows = sorted({r for r, _ in cells if r > r_top})
    cols = sorted({c for _, c in cells})
    best, best_area = [r_top, cols[0], r_top, cols[-1]], 0
    for i, r0 in enumerate(rows):
        for r1 in rows[i:]:
            for j, c0 in enumerate(cols):
                for c1 in cols[j:]:
                    area = (r1 - r0 + 1) * (c1 - c0 + 1)
                    if area <= best_area:
                        continue
                    if all((r, c) in cellset for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)):
                        best, best_area = [r0, c0, r1, c1], area
    return best


def _result(final: dict[str, Any]) -> dict[str, Any]:
    """The public outcome: winner, how the game ended, the solution only if a correct accusation named it."""
    out: dict[str, Any] = {"winner": final.get("winner"), "truncated": bool(final.get("truncated"))}
    for rec in reversed(final.get("history") or []):
        if rec["type"] == "accusation" and rec.get("correct"):
            out["solution"] = list(rec["cards"])  # public once accused (R-A3)
            break
    return out


def public_frame(snap: dict[str, Any], step: dict[str, Any] | None = None, name: str | None = None) -> dict[str, Any]:
    """One frame of the page at ``snap``: what everybody may see there (no notebook), and the step that led to it,
    named ``name`` (default: its public name, which names no shown card)."""
    P = len(snap["hands"])
    hist = snap.get("history") or []
    frame: dict[str, Any] = {
        "ph": snap["phase"],
        "cur": snap["current"],
        "ref": snap.get("refuter"),
        "roll": snap.get("roll", 0),
        "turn": snap.get("turn_count", 0),
        "elim": [bool(x) for x in snap["eliminated"]],
        "drag": [bool(x) for x in snap.get("dragged") or [False] * P],
        "cards": [len(h) for h in snap["hands"]],
        "win": snap.get("winner"),
        "hn": len(hist),
        "last": _public_record(hist[-1]) if hist else None,
    }
    if snap.get("suspects") is not None:
        frame["s"] = [_loc(snap["suspects"][s]) for s in SUSPECTS]
        frame["w"] = [snap["weapons"][w] for w in WEAPONS]
    if step is not None:
        frame["act"] = {"player": step.get("player"), "name": name or _public_action_name(step)}
        if step.get("roll") is not None:
            frame["act"]["roll"] = step["roll"]
    return frame


def page_data(record: dict[str, Any], snapshots: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Everything the page embeds. Hidden information appears only inside a seat's own notebook."""
    snaps = snapshots if snapshots is not None else replay_snapshots(record)
    steps = record.get("steps") or []
    if len(snaps) != len(steps) + 1:
        raise ValueError(f"replay gave {len(snaps)} states for {len(steps)} steps (expected one more)")
    P = len(snaps[0]["hands"])
    names = record.get("players") or None
    notebooks: list[dict[str, Any]] = []
    nb_index: dict[str, int] = {}
    frames = []
    for i, snap in enumerate(snaps):
        nbs = []
        for seat in range(P):
            nb = seat_knowledge(snap, seat)
            key = json.dumps(nb, sort_keys=True)
            if key not in nb_index:
                nb_index[key] = len(notebooks)
                notebooks.append(nb)
            nbs.append(nb_index[key])
        frame = public_frame(snap, steps[i - 1] if i > 0 else None)
        frame["nb"] = nbs
        frames.append(frame)
    final = snaps[-1]
    rules = final.get("rules") or {}
    return {
        "schema": "cluedo_env.viewer/1",
        "rules": {k: rules.get(k) for k in ("preset", "players", "refutation", "max_turns", "board") if k in rules},
        "seed": record.get("seed"),
        "players": [str(n) for n in names] if names else None,
        "num_players": P,
        "suspects": list(SUSPECTS),
        "weapons": list(WEAPONS),
        "weapon_short": WEAPON_SHORT,
        "cards": list(CARD_NAMES),
        "colors": {s: "#" + "".join(f"{v:02x}" for v in SUSPECT_COLORS[s]) for s in SUSPECTS},
        "board": _board_data() if snaps[0].get("suspects") is not None else None,
        "history": [_public_record(r) for r in final.get("history") or []],
        "frames": frames,
        "notebooks": notebooks,
        "result": _result(final),
    }


# ============================================================================ html
def _public_action_name(step: dict[str, Any]) -> str:
    """A step's action as everybody may read it: a SHOW names no card (R-G7: only the suggester and the refuter
    see it; their notebooks carry it), every other action as recorded."""
    action = step.get("action")
    if isinstance(action, int) and A.SHOW0 <= action < A.SHOW0 + NUM_CARDS:
        return "SHOW(a card)"
    return step.get("name") or str(action)


def _asset(name: str) -> str:
    return resources.files("cluedo_env").joinpath(f"data/{name}").read_text(encoding="utf-8")


def _json_for_script(data: Any) -> str:
    """JSON safe inside <script>: no ``</script>``, no ``<!--``."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(record: dict[str, Any], title: str | None = None, snapshots: list[dict[str, Any]] | None = None) -> str:
    """The replay page as one HTML string (no external resources)."""
    data = page_data(record, snapshots)
    if title is None:
        preset = data["rules"].get("preset", "classic")
        title = f"Cluedo replay: {preset}, {data['num_players']} players" + (
            f", seed {data['seed']}" if data.get("seed") is not None else ""
        )
    parts = {
        "/*__CSS__*/": _asset("viewer.css"),
        "/*__JS__*/": _asset("viewer.js"),
        "__TITLE__": html.escape(title),
        "__DATA__": _json_for_script(data),
    }
    # one pass, so nothing inserted (a player's name, say) is ever taken for a placeholder
    return re.sub(r"/\*__CSS__\*/|/\*__JS__\*/|__TITLE__|__DATA__", lambda m: parts[m.group(0)], _asset("viewer.html"))


def write_html(record: dict[str, Any], path: str | Path, title: str | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(record, title), encoding="utf-8")
    return path


# ============================================================================ demo record
def demo_record(seed: int = 7, players: int = 4, max_steps: int = 400) -> dict[str, Any]:
    """A seeded reference game as a record: random play that likes rooms, one wrong accusation, then a win.

    For tests and the documentation screenshot; a real record comes from ``cluedo_env.record``.
    (The players here peek at the envelope to end the game; that is the fixture's business, not the page's.)
    """
    import random

    from cluedo_env.engine.reference import Game
    from cluedo_env.rules import actions as A
    from cluedo_env.rules.board import ROOM_LOC0
    from cluedo_env.rules.config import RulesConfig

    game = Game(RulesConfig.from_preset("classic", players=players), seed=seed)
    rng = random.Random(seed)
    rec = record_mod.Recorder(game.to_dict(), seed=seed, players=None)
    wrong_done = False
    while not game.is_over and len(rec.steps) < max_steps:
        legal = game.legal_actions()
        actor, n = game.actor, len(rec.steps)
        env = game.envelope
        truth = A.ACCUSE0 + A.cards_triple(*env)
        if truth in legal and n > max_steps * 0.6:
            action = truth
        elif not wrong_done and actor == 1 and n > max_steps * 0.35 and game.phase == A.POST:
            action = next(a for a in legal if a >= A.ACCUSE0 and a != truth)
            wrong_done = True
        else:
            choices = [a for a in legal if a < A.ACCUSE0] or legal
            rooms = [a for a in choices if A.MOVE0 + ROOM_LOC0 <= a < A.SUGGEST0]
            action = rng.choice(rooms or choices)
        roll = int(game.rng.integers(1, 7, size=game.config.dice).sum()) if action == A.ROLL else None
        game.step(action, roll=roll)
        rec.add(actor, action, roll)
    return rec.finish(game.to_dict())


# Headless Chromium from the system packages, as the browser test and the screenshot script start it
# (no network: background services off).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
