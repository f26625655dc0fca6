"""Rendering a game for people: text (``ansi``), an image (``rgb_array``) and a window (``human``).

Everything here reads a snapshot dict (``docs/snapshot.md``: ``Game.to_dict()`` of the reference
engine or ``VectorEngine.export_game(i)``), so one renderer serves both engines. The snapshot is
never modified.

API::

    render_ansi(snapshot, viewer=None, *, color=False) -> str
    render_rgb(snapshot, viewer=None, scale=DEFAULT_SCALE) -> np.ndarray   # (H, W, 3) uint8
    frame_shape(has_board=True, scale=DEFAULT_SCALE) -> (H, W, 3)
    HumanWindow(title="Cluedo", scale=DEFAULT_SCALE).show(snapshot_or_frame, viewer=None); .close()
    demo_snapshot(seed=3, steps=200) -> dict   # a mid-game position of the reference engine

``python -m cluedo_env.render docs/example_board.png`` prints the demo position as text and
writes its image (that is how ``docs/example_board.png`` is made).

Image shape (fixed for a given scale; ``scale`` is the side of one board square in pixels):

* classic board: ``(25 * scale, 40 * scale, 3)``: the 24 x 25 board on the left, a status panel
  ``16 * scale`` wide on the right. Default scale 28: (700, 1120, 3).
* card-only game (rules ``board: none``): the status panel alone, ``(25 * scale, 16 * scale, 3)``.

Scales from 8 up work; text is comfortable to read from about 24. A frame takes about 10 ms of CPU
at the default scale (the board layer is drawn once per scale and reused).

Privacy (R-G7): the card shown to refute a suggestion is written only when ``viewer`` is the
suggester or the player who showed that card. With ``viewer=None`` (a spectator) or any other seat,
the output says only *who* showed a card. A viewer's own hand is listed for that viewer (R-S6); the
envelope is never drawn (an accusation that was correct names it, and that is public, R-A3).

Drawing uses pillow on a board layer cached per scale, with the DejaVu fonts that matplotlib ships
(no display, no pyplot, no global state; safe to call from several threads). Only
:class:`HumanWindow` touches pyplot, and only when constructed.

Human mode needs a display: without one (Linux/BSD with neither ``DISPLAY`` nor ``WAYLAND_DISPLAY``,
or a non-interactive matplotlib backend such as Agg), constructing :class:`HumanWindow` raises
:class:`NoDisplayError`, a ``RuntimeError`` that says to use ``rgb_array`` or ``ansi`` instead.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cluedo_env.rules.actions import PHASE_HELP, PHASE_NAMES
from cluedo_env.rules.board import ROOM_LETTERS, ROOM_LOC0, load_board
from cluedo_env.rules.cards import PASSAGES, ROOMS, SUSPECTS, WEAPONS
from cluedo_env.rules.privacy import may_see_shown_card

DEFAULT_SCALE = 28
BOARD_COLS, BOARD_ROWS = 24, 25
PANEL_COLS = 16  # panel width in board squares

# Token letters on the text map. Plum is "L" (pLum): "P" is Peacock.
SUSPECT_LETTERS: dict[str, str] = {
    "Scarlet": "S",
    "Mustard": "M",
    "White": "W",
    "Green": "G",
    "Peacock": "P",
    "Plum": "L",
}
SUSPECT_COLORS: dict[str, tuple[int, int, int]] = {
    "Scarlet": (206, 32, 41),
    "Mustard": (236, 190, 30),
    "White": (252, 252, 252),
    "Green": (22, 140, 62),
    "Peacock": (30, 90, 206),
    "Plum": (126, 52, 156),
}
WEAPON_SHORT: dict[str, str] = {
    "Candlestick": "Candle",
    "Dagger": "Dagger",
    "Lead Pipe": "Pipe",
    "Revolver": "Revolver",
    "Rope": "Rope",
    "Wrench": "Wrench",
}
_ANSI_COLORS = {
    "Scarlet": "\x1b[1;31m",
    "Mustard": "\x1b[1;33m",
    "White": "\x1b[1;37m",
    "Green": "\x1b[1;32m",
    "Peacock": "\x1b[1;34m",
    "Plum": "\x1b[1;35m",
}
_ANSI_DIM, _ANSI_BOLD, _ANSI_RESET = "\x1b[2m", "\x1b[1m", "\x1b[0m"

_DOOR_ARROWS = {"N": "^^", "S": "vv", "W": "<<", "E": ">>"}


class NoDisplayError(RuntimeError):
    """render_mode='human' was asked for where no window can be shown."""


# ============================================================================ snapshot reading
def _has_board(snapshot: dict[str, Any]) -> bool:
    return snapshot.get("suspects") is not None


def _num_players(snapshot: dict[str, Any]) -> int:
    return len(snapshot["hands"])


def _seat(p: int) -> str:
    """Seat p plays suspect p (R-S1)."""
    return f"{SUSPECTS[p]} (seat {p})"


def _last(snapshot: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for rec in reversed(snapshot.get("history") or []):
        if rec.get("type") == kind:
            return rec
    return None


def _pending(snapshot: dict[str, Any], rec: dict[str, Any]) -> bool:
    """True while ``rec`` is the suggestion being refuted now."""
    hist = snapshot.get("history") or []
    return snapshot.get("phase") == "refute" and bool(hist) and hist[-1] is rec


def _refutations(rec: dict[str, Any], viewer: int | None) -> list[tuple[int, str | None]]:
    """(refuter, card shown or None when ``viewer`` may not see it) for each refuter (R-G7)."""
    out = []
    for i, seat in enumerate(rec.get("refuted_by", [])):
        shown = rec.get("shown", [])
        card = shown[i] if i < len(shown) else None
        visible = viewer is not None and bool(may_see_shown_card(viewer, rec["player"], seat))
        out.append((seat, card if visible else None))
    return out


def _suggestion_lines(snapshot: dict[str, Any], rec: dict[str, Any], viewer: int | None) -> list[str]:
    """Short lines: the three cards, who passed, who refuted (and the card when the viewer may see it)."""
    lines = [", ".join(rec["cards"])]
    passed = rec.get("passed", [])
    if passed:
        lines.append("passed: " + ", ".join(SUSPECTS[p] for p in passed))
    for seat, card in _refutations(rec, viewer):
        lines.append(f"refuted by {SUSPECTS[seat]}: showed {card}" if card else f"refuted by {SUSPECTS[seat]}")
    if _pending(snapshot, rec):
        ref = snapshot.get("refuter")
        if ref is not None:
            lines.append(f"{SUSPECTS[ref]} must show a card")
    elif not rec.get("refuted_by"):
        lines.append("nobody could refute")
    return lines


def _accusation_line(rec: dict[str, Any]) -> str:
    result = "correct" if rec.get("correct") else "wrong, eliminated"
    return f"{', '.join(rec['cards'])}: {result}"


def _history_line(snapshot: dict[str, Any], rec: dict[str, Any], viewer: int | None) -> str:
    who = SUSPECTS[rec["player"]]
    if rec.get("type") == "accusation":
        return f"{who} accused {_accusation_line(rec)}"
    tail = []
    for seat, card in _refutations(rec, viewer):
        tail.append(f"{SUSPECTS[seat]} showed {card}" if card else f"{SUSPECTS[seat]} showed a card")
    if not tail:
        tail.append("pending" if _pending(snapshot, rec) else "not refuted")
    return f"{who} suggested {', '.join(rec['cards'])}: {'; '.join(tail)}"


def _result_line(snapshot: dict[str, Any]) -> str | None:
    if snapshot.get("phase") != "over":
        return None
    if snapshot.get("winner") is not None:
        return f"Game over: {_seat(snapshot['winner'])} wins"
    if snapshot.get("truncated"):
        return f"Game over: cut after {snapshot.get('turn_count', 0)} turns, no winner"
    return "Game over: everyone is eliminated, no winner"


def _rules_label(snapshot: dict[str, Any]) -> str:
    rules = snapshot.get("rules") or {}
    return f"{rules.get('preset', 'classic')}, {_num_players(snapshot)} players"


def _room_contents(snapshot: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Room name -> suspects in it (in suspect order), room name -> weapons in it (in weapon order)."""
    tokens: dict[str, list[str]] = {r: [] for r in ROOMS}
    weapons: dict[str, list[str]] = {r: [] for r in ROOMS}
    for name in SUSPECTS:
        loc = snapshot["suspects"].get(name)
        if isinstance(loc, str):
            tokens[loc].append(name)
    for name in WEAPONS:
        room = (snapshot.get("weapons") or {}).get(name)
        if isinstance(room, str):
            weapons[room].append(name)
    return tokens, weapons


def _squares(snapshot: dict[str, Any]) -> dict[tuple[int, int], str]:
    """(row, col) -> suspect standing there."""
    out = {}
    for name in SUSPECTS:
        loc = snapshot["suspects"].get(name)
        if isinstance(loc, (list, tuple)):
            out[(int(loc[0]), int(loc[1]))] = name
    return out


# ============================================================================ ansi
def render_ansi(snapshot: dict[str, Any], viewer: int | None = None, *, color: bool = False) -> str:
    """The game as text: status, the board map (classic board), room contents, last suggestion and accusation.

    Deterministic; plain ASCII unless ``color=True`` adds ANSI colour codes. The card shown in a
    refutation appears only for ``viewer`` = the suggester or that refuter (R-G7).
    """
    lines = _status_text(snapshot, viewer)
    if _has_board(snapshot):
        lines += [""] + _map_text(snapshot, color) + [""] + _legend_text(snapshot) + [""] + _rooms_text(snapshot)
    lines += [""] + _events_text(snapshot, viewer)
    return "\n".join(lines) + "\n"


def _status_text(snapshot: dict[str, Any], viewer: int | None) -> list[str]:
    P = _num_players(snapshot)
    phase = snapshot.get("phase", "?")
    lines = [f"Cluedo ({_rules_label(snapshot)})  turn {snapshot.get('turn_count', 0)}"]
    result = _result_line(snapshot)
    if result:
        lines.append(result)
    else:
        help_text = PHASE_HELP.get(PHASE_NAMES.index(phase), "") if phase in PHASE_NAMES else ""
        roll = snapshot.get("roll", 0)
        roll_text = f"  roll: {roll if roll else '-'}" if _has_board(snapshot) else ""
        lines.append(f"To play: {_seat(snapshot['current'])}  phase: {phase}{roll_text}")
        if help_text:
            lines.append(f"  ({help_text})")
        if snapshot.get("refuter") is not None:
            lines.append(f"Refuter: {_seat(snapshot['refuter'])} must show a card")
    elim = [SUSPECTS[p] for p in range(P) if snapshot["eliminated"][p]]
    lines.append(f"Eliminated: {', '.join(elim) if elim else 'none'}")
    players = []
    for p in range(P):
        tags = [f"{len(snapshot['hands'][p])} cards"]
        if snapshot["eliminated"][p]:
            tags.append("eliminated")
        if snapshot.get("dragged") and snapshot["dragged"][p]:
            tags.append("dragged")
        players.append(f"{p} {SUSPECTS[p]} ({', '.join(tags)})")
    lines.append("Players: " + "; ".join(players))
    if viewer is not None and 0 <= viewer < P:
        lines.append(f"Viewer: {_seat(viewer)}, hand: {', '.join(snapshot['hands'][viewer]) or '-'}")
    return lines


@lru_cache(maxsize=1)
def _ansi_base() -> tuple[tuple[str, ...], dict[tuple[int, int], str]]:
    """The empty map, one 48-character string per row (2 characters a square), and door cells."""
    board = load_board()
    rows = []
    for line in board.grid:
        out = []
        for ch in line:
            if ch == "#":
                out.append("  ")
            elif ch == ".":
                out.append(". ")
            elif ch in "123456":
                out.append(ch + " ")
            elif ch == "X":
                out.append("XX")
            else:  # room cell (door cells are overwritten with an arrow)
                out.append("::")
        rows.append("".join(out))
    doors = {d.cell: d.side for d in board.doors}
    return tuple(rows), doors


def _map_text(snapshot: dict[str, Any], color: bool) -> list[str]:
    base, doors = _ansi_base()
    grid = [list(row) for row in base]  # 2 characters per square
    tint: dict[tuple[int, int], str] = {}  # (row, char col) -> ANSI code, for color=True

    for (r, c), side in doors.items():
        grid[r][2 * c : 2 * c + 2] = _DOOR_ARROWS[side]
        tint[(r, 2 * c)] = tint[(r, 2 * c + 1)] = _ANSI_BOLD
    tokens, _ = _room_contents(snapshot)
    for room, name in enumerate(ROOMS):
        runs = _room_runs(room, with_doors=False)
        widest = 2 * max(c1 - c0 + 1 for _, c0, c1 in runs)
        text = [(part, "") for part in ([name.upper()] if len(name) <= widest - 2 else name.upper().split())]
        if tokens[name]:
            text.append((" ".join(SUSPECT_LETTERS[s] for s in tokens[name]), "tokens"))
        if room in PASSAGES:
            text.append(("~" + ROOMS[PASSAGES[room]], ""))
        first = max(0, (len(runs) - len(text)) // 2)
        for i, (line, kind) in enumerate(text[: len(runs) - first]):
            r, c0, c1 = runs[first + i]
            width = 2 * (c1 - c0 + 1)
            line = f" {line} " if len(line) + 2 <= width else line[:width]
            x = 2 * c0 + (width - len(line)) // 2
            grid[r][x : x + len(line)] = line
            for k, ch in enumerate(line):
                if kind != "tokens":
                    tint[(r, x + k)] = _ANSI_BOLD
                elif ch != " ":
                    tint[(r, x + k)] = _ANSI_COLORS[SUSPECTS[list(SUSPECT_LETTERS.values()).index(ch)]]
    for (r, c), name in _squares(snapshot).items():
        grid[r][2 * c] = SUSPECT_LETTERS[name]
        tint[(r, 2 * c)] = _ANSI_COLORS[name]

    header_tens = "    " + "".join(f"{c // 10 if c >= 10 else ' '} " for c in range(BOARD_COLS))
    header_units = "    " + "".join(f"{c % 10} " for c in range(BOARD_COLS))
    lines = [header_tens.rstrip(), header_units.rstrip()]
    for r, row in enumerate(grid):
        row = list("".join(row).rstrip())
        if color:
            parts, code = [], ""
            for x, ch in enumerate(row):
                want = tint.get((r, x), _ANSI_DIM if ch in ":X" else "")
                if want != code:
                    parts.append((_ANSI_RESET if code else "") + want)
                    code = want
                parts.append(ch)
            text = "".join(parts) + (_ANSI_RESET if code else "")
        else:
            text = "".join(row)
        lines.append(f"{r:>3} {text}".rstrip())
    return lines


def _legend_text(snapshot: dict[str, Any]) -> list[str]:
    P = _num_players(snapshot)
    tokens = [f"{SUSPECT_LETTERS[s]} {s}" + ("" if i < P else " (not playing)") for i, s in enumerate(SUSPECTS)]
    return [
        "Tokens: " + ", ".join(tokens),
        "Map: . corridor, 1-6 start squares (Scarlet..Plum), :: room, ^^ vv << >> door (the arrow points to",
        "     the square in front of it), ~Room secret passage to that room, XX staircase (not walkable)",
    ]


def _rooms_text(snapshot: dict[str, Any]) -> list[str]:
    tokens, weapons = _room_contents(snapshot)
    lines = ["Rooms:"]
    for name in ROOMS:
        who = ", ".join(f"{s} ({SUSPECT_LETTERS[s]})" for s in tokens[name]) or "-"
        lines.append(f"  {name:<13} suspects: {who}; weapons: {', '.join(weapons[name]) or '-'}")
    return lines


def _events_text(snapshot: dict[str, Any], viewer: int | None) -> list[str]:
    lines = []
    sugg = _last(snapshot, "suggestion")
    if sugg is None:
        lines.append("Last suggestion: none")
    else:
        body = _suggestion_lines(snapshot, sugg, viewer)
        lines.append(f"Last suggestion: {_seat(sugg['player'])} suggested {body[0]}")
        lines += [f"  {line}" for line in body[1:]]
    acc = _last(snapshot, "accusation")
    if acc is None:
        lines.append("Last accusation: none")
    else:
        lines.append(f"Last accusation: {_seat(acc['player'])} accused {_accusation_line(acc)}")
    return lines


# ============================================================================ rgb
_OFF_BOARD = (36, 74, 56)
_CORRIDOR = (240, 226, 186)
_GRID = (196, 176, 130)
_WALL = (66, 46, 36)
_DOOR = (226, 112, 26)
_STAIRS = (150, 146, 140)
_INK = (30, 28, 26)
_PANEL = (247, 244, 237)
_MUTED = (110, 104, 96)
_CHIP = (255, 252, 244)
_ROOM_FILLS = (
    (236, 212, 190),  # Kitchen
    (222, 208, 236),  # Ballroom
    (204, 230, 204),  # Conservatory
    (242, 222, 186),  # Dining Room
    (198, 224, 222),  # Billiard Room
    (226, 214, 196),  # Library
    (238, 204, 212),  # Lounge
    (212, 222, 240),  # Hall
    (228, 228, 196),  # Study
)
_PASSAGE_CORNER = {"Kitchen": (1, 0), "Conservatory": (1, 23), "Lounge": (24, 0), "Study": (24, 23)}


def frame_shape(has_board: bool = True, scale: int = DEFAULT_SCALE) -> tuple[int, int, int]:
    """Shape of :func:`render_rgb`'s image: (25*scale, 40*scale, 3) with a board, (25*scale, 16*scale, 3) without."""
    cols = BOARD_COLS + PANEL_COLS if has_board else PANEL_COLS
    return (BOARD_ROWS * scale, cols * scale, 3)


_FONTS = threading.local()  # one set of font objects per thread: FreeType faces are not shared across threads


def _font(size: int, bold: bool = False) -> Any:
    cache = _FONTS.__dict__.setdefault("fonts", {})
    key = (max(6, int(size)), bold)
    if key not in cache:
        cache[key] = _load_font(*key)
    return cache[key]


def _load_font(size: int, bold: bool) -> Any:
    from PIL import ImageFont

    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    try:
        import matplotlib

        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name
        return ImageFont.truetype(str(path), max(6, size), layout_engine=ImageFont.Layout.BASIC)
    except (ImportError, OSError):  # pragma: no cover - matplotlib is a dependency
        return ImageFont.load_default(max(6, size))


@dataclass(frozen=True)
class _RoomLayout:
    content_top: float  # y in pixels where tokens start (under the name)
    runs: tuple[tuple[int, int, int], ...]  # (row, first col, last col) of the longest run of room cells per row
    bottom: int  # last row of the room


@lru_cache(maxsize=32)
def _room_runs(room: int, with_doors: bool = True) -> tuple[tuple[int, int, int], ...]:
    """(row, first col, last col) of the longest run of the room's cells in each of its rows.

    ``with_doors=False`` leaves out the door cells (the text map draws an arrow there).
    """
    letter = ROOM_LETTERS[room]
    runs = []
    for r, line in enumerate(load_board().grid):
        best, start = (0, 0, 0), None
        for c in range(len(line) + 1):
            inside = c < len(line) and (line[c] == letter or (with_doors and line[c] == letter.lower()))
            if inside and start is None:
                start = c
            if not inside and start is not None:
                if c - start > best[0]:
                    best = (c - start, start, c - 1)
                start = None
        if best[0]:
            runs.append((r, best[1], best[2]))
    return tuple(runs)


def _run_at(layout: _RoomLayout, y: float, s: int) -> tuple[int, int]:
    """Pixel x range of the room's run of cells in the row containing y."""
    row = int(y // s)
    for r, c0, c1 in layout.runs:
        if r == min(max(row, layout.runs[0][0]), layout.bottom):
            return c0 * s, (c1 + 1) * s
    _, c0, c1 = layout.runs[-1]
    return c0 * s, (c1 + 1) * s


_LAYER_LOCK = threading.Lock()


def _board_layer(scale: int) -> tuple[Any, tuple[_RoomLayout, ...]]:
    """The empty board layer and room layouts for ``scale``, built once per scale (read-only afterwards)."""
    with _LAYER_LOCK:
        return _board_layer_cached(scale)


@lru_cache(maxsize=8)
def _board_layer_cached(scale: int) -> tuple[Any, tuple[_RoomLayout, ...]]:
    """The empty board (rooms, corridors, doors, starts, staircase, passages, room names), cached per scale."""
    from PIL import Image, ImageDraw

    s = scale
    board = load_board()
    img = Image.new("RGB", (BOARD_COLS * s, BOARD_ROWS * s), _OFF_BOARD)
    draw = ImageDraw.Draw(img)
    room_at: dict[tuple[int, int], int] = {rc: room for room, cells in enumerate(board.room_cells) for rc in cells}
    stairs = [(r, c) for r, line in enumerate(board.grid) for c, ch in enumerate(line) if ch == "X"]

    # corridor and start squares, with grid lines
    start_of = {board.squares[sq]: SUSPECTS[i] for i, sq in enumerate(board.starts)}
    for r, c in board.squares:
        fill = _CORRIDOR
        if (r, c) in start_of:
            col = SUSPECT_COLORS[start_of[(r, c)]]
            fill = tuple(int(0.55 * a + 0.45 * b) for a, b in zip(_CORRIDOR, col, strict=True))
        draw.rectangle((c * s, r * s, (c + 1) * s - 1, (r + 1) * s - 1), fill=fill, outline=_GRID)
        if (r, c) in start_of:  # a start square: tinted, with a ring where the token starts
            _draw_start(draw, c * s, r * s, start_of[(r, c)], s)

    # rooms: fill, then walls on every edge that leaves the room, except doors
    for (r, c), room in room_at.items():
        draw.rectangle((c * s, r * s, (c + 1) * s - 1, (r + 1) * s - 1), fill=_ROOM_FILLS[room])
    door_edges = {(d.cell, d.side) for d in board.doors}
    wall = max(2, s // 9)
    steps = {"N": (-1, 0), "S": (1, 0), "W": (0, -1), "E": (0, 1)}
    for (r, c), room in room_at.items():
        for side, (dr, dc) in steps.items():
            if room_at.get((r + dr, c + dc)) == room or ((r, c), side) in door_edges:
                continue
            x0, y0, x1, y1 = _edge(r, c, side, s)
            draw.line((x0, y0, x1, y1), fill=_WALL, width=wall)
    for d in board.doors:  # a gap in the wall with an orange door-mat bar across it
        _draw_door(draw, *_edge(*d.cell, d.side, s), s)
    # staircase (the envelope's place, R-M9)
    r0, c0 = min(stairs)
    r1, c1 = max(stairs)
    box = (c0 * s, r0 * s, (c1 + 1) * s - 1, (r1 + 1) * s - 1)
    draw.rectangle(box, fill=_STAIRS, outline=_WALL, width=wall)
    for i in range(1, (r1 - r0 + 1) * 2):
        y = r0 * s + i * s / 2
        draw.line((box[0] + wall, y, box[2] - wall, y), fill=(170, 166, 160), width=1)
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    ew, eh = s * 2.6, s * 1.7  # an envelope icon
    draw.rectangle((cx - ew / 2, cy - eh / 2, cx + ew / 2, cy + eh / 2), fill=(250, 246, 232), outline=_INK, width=2)
    draw.line((cx - ew / 2, cy - eh / 2, cx, cy + eh * 0.1, cx + ew / 2, cy - eh / 2), fill=_INK, width=2)
    draw.text((cx, cy - eh / 2 - s * 0.55), "STAIRS", fill=_INK, font=_font(int(s * 0.42), True), anchor="mm")
    draw.text((cx, cy + eh / 2 + s * 0.5), "envelope", fill=_INK, font=_font(int(s * 0.38)), anchor="mm")

    # secret passages: a dark stair tile in the room's outer corner with an arrow towards the other end
    for room, target in PASSAGES.items():
        r, c = _PASSAGE_CORNER[ROOMS[room]]
        tr, tc = _PASSAGE_CORNER[ROOMS[target]]
        m = s * 0.1
        draw.rectangle((c * s + m, r * s + m, (c + 1) * s - m, (r + 1) * s - m), fill=(70, 52, 40))
        for k in range(1, 4):
            q = m + k * (s - 2 * m) / 4
            draw.line((c * s + q, r * s + m, c * s + q, (r + 1) * s - m), fill=(120, 96, 76), width=1)
        ax, ay = (c + 0.5) * s, (r + 0.5) * s
        ux, uy = np.sign(tc - c), np.sign(tr - r)
        k = s * 0.25
        draw.line((ax - ux * k, ay - uy * k, ax + ux * k, ay + uy * k), fill="white", width=2)
        tip = (ax + ux * s * 0.3, ay + uy * s * 0.3)
        draw.polygon(
            [tip, (tip[0] - ux * s * 0.22, tip[1]), (tip[0], tip[1] - uy * s * 0.22)],
            fill="white",
        )

    # room names, on the first row wide enough, then where tokens and weapons go
    layouts = []
    for room, name in enumerate(ROOMS):
        runs = _room_runs(room)
        font = _font(int(s * 0.5), True)
        lines = [name]
        widest = max(c1 - c0 + 1 for _, c0, c1 in runs) * s
        if font.getlength(name) > widest - s * 0.3:
            lines = name.split()
        y = runs[0][0] * s + s * 0.15
        for line in lines:
            w = font.getlength(line)
            row = next((r for r, c0, c1 in runs if (c1 - c0 + 1) * s >= w + s * 0.3 and r * s + s >= y), runs[0][0])
            _, c0, c1 = next(x for x in runs if x[0] == row)
            y = max(y, row * s + s * 0.15)
            draw.text(((c0 + c1 + 1) * s / 2, y), line, fill=_INK, font=font, anchor="ma")
            y += s * 0.62
        if room in PASSAGES:
            small = _font(int(s * 0.34))
            text = f"passage to {ROOMS[PASSAGES[room]]}"
            x0, x1 = _run_at(_RoomLayout(y, runs, runs[-1][0]), y, s)
            draw.text(((x0 + x1) / 2, y), text, fill=(90, 66, 50), font=small, anchor="ma")
            y += s * 0.45
        block = s * (1 + 2 * 0.62)  # one row of tokens and two rows of weapon labels
        free = (runs[-1][0] + 1) * s - (y + s * 0.1) - block
        layouts.append(_RoomLayout(y + s * 0.1 + max(0.0, free * 0.4), runs, runs[-1][0]))
    return img, tuple(layouts)


def _draw_start(draw: Any, x: float, y: float, name: str, s: int) -> None:
    ring = tuple(int(0.75 * v) for v in SUSPECT_COLORS[name]) if name != "White" else _MUTED
    rad, cx, cy = s * 0.3, x + s / 2, y + s / 2
    draw.ellipse((cx - rad, cy - rad, cx + rad, cy + rad), outline=ring, width=max(2, s // 12))


def _draw_door(draw: Any, x0: float, y0: float, x1: float, y1: float, s: int) -> None:
    """A door-mat bar across the edge (x0, y0)-(x1, y1) (horizontal or vertical)."""
    t, inset = max(2, s // 9), s * 0.12
    if y0 == y1:
        draw.rectangle((x0 + inset, y0 - t / 2, x1 - inset, y0 + t / 2), fill=_DOOR)
    else:
        draw.rectangle((x0 - t / 2, y0 + inset, x0 + t / 2, y1 - inset), fill=_DOOR)


def _edge(r: int, c: int, side: str, s: int) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = c * s, r * s, (c + 1) * s, (r + 1) * s
    return {
        "N": (x0, y0, x1, y0),
        "S": (x0, y1, x1, y1),
        "W": (x0, y0, x0, y1),
        "E": (x1, y0, x1, y1),
    }[side]


def _draw_token(draw: Any, cx: float, cy: float, name: str, s: int, current: bool, out: bool) -> None:
    rad = s * 0.38
    if current:  # the player to act: a thick dark halo
        halo = rad + max(3, s * 0.12)
        draw.ellipse((cx - halo, cy - halo, cx + halo, cy + halo), fill=(255, 255, 255), outline=_INK, width=3)
    color = SUSPECT_COLORS[name]
    outline_w = 3 if name == "White" else 2
    draw.ellipse((cx - rad, cy - rad, cx + rad, cy + rad), fill=color, outline=_INK, width=outline_w)
    text_color = _INK if name in ("White", "Mustard") else (255, 255, 255)
    draw.text((cx, cy), SUSPECT_LETTERS[name], fill=text_color, font=_font(int(s * 0.42), True), anchor="mm")
    if out:  # eliminated: crossed out
        k = rad * 0.8
        draw.line((cx - k, cy - k, cx + k, cy + k), fill=_INK, width=2)
        draw.line((cx - k, cy + k, cx + k, cy - k), fill=_INK, width=2)


def render_rgb(snapshot: dict[str, Any], viewer: int | None = None, scale: int = DEFAULT_SCALE) -> np.ndarray:
    """The game as an (H, W, 3) uint8 image; shape :func:`frame_shape` (fixed for a given scale).

    Classic board: board on the left (rooms, doors, start squares, staircase, secret passages,
    tokens, weapons), status panel on the right. Card-only game: the panel alone. The shown card
    of a refutation is written only for ``viewer`` = the suggester or that refuter (R-G7).
    """
    from PIL import Image, ImageDraw

    s = int(scale)
    if s < 8:
        raise ValueError(f"scale={scale!r} is too small to read; use 8 or more pixels a square")
    H, W, _ = frame_shape(_has_board(snapshot), s)
    img = Image.new("RGB", (W, H), _PANEL)
    panel_x = 0
    if _has_board(snapshot):
        base, layouts = _board_layer(s)
        img.paste(base, (0, 0))
        _draw_pieces(ImageDraw.Draw(img), snapshot, layouts, s)
        panel_x = BOARD_COLS * s
    _draw_panel(ImageDraw.Draw(img), snapshot, viewer, panel_x, W, H, s)
    return np.asarray(img, dtype=np.uint8)


def _draw_pieces(draw: Any, snapshot: dict[str, Any], layouts: tuple[_RoomLayout, ...], s: int) -> None:
    P = _num_players(snapshot)
    current = snapshot.get("current") if snapshot.get("phase") != "over" else None
    eliminated = snapshot.get("eliminated", [])

    def flags(name: str) -> tuple[bool, bool]:
        seat = SUSPECTS.index(name)
        return seat == current, seat < P and bool(eliminated[seat])

    for (r, c), name in _squares(snapshot).items():
        _draw_token(draw, (c + 0.5) * s, (r + 0.5) * s, name, s, *flags(name))
    tokens, weapons = _room_contents(snapshot)
    chip_font = _font(int(s * 0.4))
    for room, name in enumerate(ROOMS):
        lay = layouts[room]
        y = lay.content_top
        x0, x1 = _run_at(lay, y + s / 2, s)
        per_row = max(1, int((x1 - x0 - s * 0.2) // s))
        who = tokens[name]
        for start in range(0, max(1, len(who)), per_row):  # one row kept even when empty: a stable layout
            row = who[start : start + per_row]
            left = (x0 + x1) / 2 - len(row) * s / 2
            for k, suspect in enumerate(row):
                _draw_token(draw, left + (k + 0.5) * s, y + s / 2, suspect, s, *flags(suspect))
            y += s
        # weapons as small labels, wrapped inside the room, each line centred
        y += s * 0.08
        gap, chip_h = s * 0.14, s * 0.5
        labels = [(WEAPON_SHORT[w], chip_font.getlength(WEAPON_SHORT[w]) + s * 0.3) for w in weapons[name]]
        while labels:
            x0, x1 = _run_at(lay, y + chip_h / 2, s)
            line, width = [labels.pop(0)], 0.0
            width = line[0][1]
            while labels and width + gap + labels[0][1] <= x1 - x0 - s * 0.3:
                width += gap + labels[0][1]
                line.append(labels.pop(0))
            x = (x0 + x1 - width) / 2
            for label, w in line:
                draw.rounded_rectangle((x, y, x + w, y + chip_h), radius=s * 0.12, fill=_CHIP, outline=_WALL, width=1)
                draw.text((x + w / 2, y + chip_h / 2), label, fill=_INK, font=chip_font, anchor="mm")
                x += w + gap
            y += chip_h + gap


@lru_cache(maxsize=4096)
def _wrap(text: str, font: Any, width: float) -> tuple[str, ...]:
    """``text`` broken into lines no wider than ``width`` pixels in ``font`` (cached: panels repeat)."""
    words, lines, line = text.split(" "), [], ""
    for word in words:
        trial = f"{line} {word}" if line else word
        if font.getlength(trial) <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return tuple(lines)


def _draw_panel(draw: Any, snapshot: dict[str, Any], viewer: int | None, x0: int, W: int, H: int, s: int) -> None:
    P = _num_players(snapshot)
    has_board = x0 > 0
    pad = s * 0.5
    x, y, width = x0 + pad, s * 0.4, W - x0 - 2 * pad
    title, head = _font(int(s * 0.75), True), _font(int(s * 0.5), True)
    body, small = _font(int(s * 0.46)), _font(int(s * 0.4))
    line_h, small_h = s * 0.62, s * 0.52
    bottom = H - (s * 2.6 if has_board else s * 0.3)  # the legend goes under this line
    draw.rectangle((x0, 0, W - 1, H - 1), fill=_PANEL)
    if has_board:
        draw.line((x0, 0, x0, H), fill=_WALL, width=max(2, s // 9))

    def text(t: str, font: Any = body, color: tuple[int, int, int] = _INK, indent: float = 0.0) -> bool:
        """Write wrapped text; False once the panel is full."""
        nonlocal y
        h = line_h if font is not small else small_h
        for line in _wrap(t, font, width - indent):
            if y + h > bottom:
                return False
            draw.text((x + indent, y), line, fill=color, font=font)
            y += h
        return True

    def rule() -> None:
        nonlocal y
        y += s * 0.15
        if y < bottom:
            draw.line((x, y, x + width, y), fill=(200, 192, 178), width=1)
        y += s * 0.3

    draw.text((x, y), "CLUEDO", fill=_INK, font=title)
    draw.text((x + width, y + s * 0.2), f"turn {snapshot.get('turn_count', 0)}", fill=_MUTED, font=body, anchor="ra")
    y += s * 0.95
    text(_rules_label(snapshot) + ("" if has_board else ", no board"), small, _MUTED)
    if viewer is not None and 0 <= viewer < P:
        text(f"Viewing as {_seat(viewer)}", small, _MUTED)
    rule()

    # players: marker for the player to act, colour dot, name, tags
    phase = snapshot.get("phase", "?")
    current = snapshot.get("current") if phase != "over" else None
    for p in range(P):
        name = SUSPECTS[p]
        cy, rad = y + line_h / 2, s * 0.2
        if p == current:
            draw.polygon([(x, cy - rad), (x + rad * 1.4, cy), (x, cy + rad)], fill=_INK)
        cx = x + s * 0.75
        draw.ellipse((cx - rad, cy - rad, cx + rad, cy + rad), fill=SUSPECT_COLORS[name], outline=_INK, width=1)
        tags = [f"{len(snapshot['hands'][p])} cards"]
        if snapshot["eliminated"][p]:
            tags.append("eliminated")
        if snapshot.get("dragged") and snapshot["dragged"][p]:
            tags.append("dragged")
        if snapshot.get("winner") == p:
            tags.append("WINNER")
        if p == current:
            tags.append("to play")
        color = _MUTED if snapshot["eliminated"][p] else _INK
        draw.text((x + s * 1.15, y), name, fill=color, font=head if p == current else body)
        draw.text((x + s * 4.6, y + s * 0.06), ", ".join(tags), fill=color, font=small)
        y += line_h
    if P < len(SUSPECTS) and has_board:
        text("not playing: " + ", ".join(SUSPECTS[P:]), small, _MUTED)
    rule()

    result = _result_line(snapshot)
    if result:
        text(result, head)
    else:
        roll = snapshot.get("roll", 0)
        text(f"Phase: {phase}" + (f"    Roll: {roll if roll else '-'}" if has_board else ""), head)
        if phase in PHASE_NAMES:
            text(PHASE_HELP[PHASE_NAMES.index(phase)], small, _MUTED)
        if snapshot.get("refuter") is not None:
            text(f"{SUSPECTS[snapshot['refuter']]} must show a card", body)
    rule()

    sugg = _last(snapshot, "suggestion")
    text("Last suggestion" + (f" by {SUSPECTS[sugg['player']]}" if sugg else ": none"), head)
    if sugg:
        for i, line in enumerate(_suggestion_lines(snapshot, sugg, viewer)):
            text(line, body if i == 0 else small, indent=s * 0.3)
    y += s * 0.1
    acc = _last(snapshot, "accusation")
    text("Last accusation" + (f" by {SUSPECTS[acc['player']]}" if acc else ": none"), head)
    if acc:
        text(_accusation_line(acc), small, indent=s * 0.3)
    if viewer is not None and 0 <= viewer < P:
        rule()
        text("Your hand", head)
        text(", ".join(snapshot["hands"][viewer]) or "-", small, indent=s * 0.3)
    history = snapshot.get("history") or []
    if len(history) > 1:  # earlier events, newest first, as many as fit
        rule()
        text("Earlier", head)
        for rec in reversed(history[-13:-1]):
            if not text(_history_line(snapshot, rec, viewer), small, _MUTED, indent=s * 0.3):
                break
    if has_board:
        _draw_legend(draw, x, bottom + s * 0.2, width, s)


def _draw_legend(draw: Any, x: float, y: float, width: float, s: int) -> None:
    small = _font(int(s * 0.36))
    draw.line((x, y, x + width, y), fill=(200, 192, 178), width=1)
    y += s * 0.25
    col = width / 2
    items = [
        ("door", "door: gap in the wall"),
        ("start", "start square"),
        ("passage", "secret passage (arrow: to)"),
        ("chip", "weapon in the room"),
        ("current", "token of the player to act"),
        ("out", "eliminated player's token"),
    ]
    for i, (kind, label) in enumerate(items):
        ix, iy = x + (i % 2) * col, y + (i // 2) * s * 0.75
        if kind == "door":
            draw.rectangle((ix, iy + s * 0.1, ix + s * 0.55, iy + s * 0.5), fill=_ROOM_FILLS[7])
            draw.line((ix, iy + s * 0.1, ix + s * 0.55, iy + s * 0.1), fill=_WALL, width=max(2, s // 9))
            _draw_door(draw, ix + s * 0.05, iy + s * 0.5, ix + s * 0.5, iy + s * 0.5, s)
        elif kind == "start":
            draw.rectangle((ix, iy, ix + s * 0.6, iy + s * 0.6), fill=(220, 190, 170), outline=_GRID)
            _draw_start(draw, ix - s * 0.2, iy - s * 0.2, "Scarlet", s)
        elif kind == "passage":
            draw.rectangle((ix, iy, ix + s * 0.6, iy + s * 0.6), fill=(70, 52, 40))
            draw.line((ix + s * 0.15, iy + s * 0.15, ix + s * 0.45, iy + s * 0.45), fill="white", width=2)
        elif kind == "chip":
            chip = (ix, iy + s * 0.1, ix + s * 0.6, iy + s * 0.5)
            draw.rounded_rectangle(chip, radius=s * 0.1, fill=_CHIP, outline=_WALL)
        else:
            _draw_token(draw, ix + s * 0.3, iy + s * 0.3, "Green", int(s * 0.7), kind == "current", kind == "out")
        draw.text((ix + s * 0.8, iy + s * 0.3), label, fill=_INK, font=small, anchor="lm")


# ============================================================================ human
def display_available() -> bool:
    """Whether a window can be opened: on Linux/BSD this needs ``DISPLAY`` or ``WAYLAND_DISPLAY``."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


_NON_INTERACTIVE = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template", "module://matplotlib_inline.backend_inline"}


class HumanWindow:
    """A matplotlib window showing the rgb frame, updated in place (for ``render_mode="human"``).

    Raises :class:`NoDisplayError` on construction where no window can be shown (no display, or a
    non-interactive matplotlib backend); it never falls back silently. Use it from the main thread.
    Closing the window by hand is fine: the next :meth:`show` opens a new one.
    """

    def __init__(self, title: str = "Cluedo", scale: int = DEFAULT_SCALE, pause: float = 0.001) -> None:
        if not display_available():
            raise NoDisplayError(
                "render_mode='human' needs a display, and none was found (DISPLAY and WAYLAND_DISPLAY are unset); "
                "use render_mode='rgb_array' or 'ansi', or run under a display (e.g. xvfb-run)"
            )
        import matplotlib.pyplot as plt  # only here: importing render.py must not need a display

        backend = str(plt.get_backend()).lower()
        if backend in _NON_INTERACTIVE:
            raise NoDisplayError(
                f"render_mode='human' needs an interactive matplotlib backend, but the backend is {backend!r} "
                "(set MPLBACKEND to TkAgg or QtAgg, or use render_mode='rgb_array' or 'ansi')"
            )
        self._plt = plt
        self.title = title
        self.scale = scale
        self.pause = pause
        self._fig: Any = None
        self._image: Any = None

    def show(self, frame: dict[str, Any] | np.ndarray, viewer: int | None = None) -> None:
        """Draw a snapshot (rendered with :func:`render_rgb`) or a ready (H, W, 3) frame."""
        plt = self._plt
        if isinstance(frame, dict):
            frame = render_rgb(frame, viewer, self.scale)
        if self._fig is None or not plt.fignum_exists(self._fig.number) or self._image.get_array().shape != frame.shape:
            self.close()
            dpi = 100
            self._fig = plt.figure(self.title, figsize=(frame.shape[1] / dpi, frame.shape[0] / dpi), dpi=dpi)
            ax = self._fig.add_axes((0, 0, 1, 1))
            ax.set_axis_off()
            self._image = ax.imshow(frame, interpolation="nearest")
            self._fig.show()
        else:
            self._image.set_data(frame)
        self._fig.canvas.draw_idle()
        self._fig.canvas.flush_events()
        self._fig.canvas.start_event_loop(self.pause)

    def close(self) -> None:
        if self._fig is not None:
            self._plt.close(self._fig)
            self._fig, self._image = None, None


# ============================================================================ demo
def demo_snapshot(seed: int = 3, steps: int = 200, players: int = 4) -> dict[str, Any]:
    """A mid-game snapshot of the reference engine: random legal actions that prefer entering rooms, no accusations."""
    import random

    from cluedo_env.engine.reference import Game
    from cluedo_env.rules import actions as A
    from cluedo_env.rules.config import RulesConfig

    game = Game(RulesConfig.from_preset("classic", players=players), seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        legal = [a for a in game.legal_actions() if a < A.ACCUSE0]
        if not legal:
            break
        into_rooms = [a for a in legal if A.MOVE0 + ROOM_LOC0 <= a < A.SUGGEST0]
        game.step(rng.choice(into_rooms or legal))
    return game.to_dict()


if __name__ == "__main__":  # python -m cluedo_env.render [out.png]: a demo position as text and image
    import time

    from PIL import Image

    snap = demo_snapshot()
    print(render_ansi(snap, viewer=0))
    t0 = time.perf_counter()
    frame = render_rgb(snap, viewer=0)
    print(f"render_rgb: {frame.shape}, {1000 * (time.perf_counter() - t0):.1f} ms (first frame)")
    Image.fromarray(frame).save(sys.argv[1] if len(sys.argv) > 1 else "example_board.png")

__all__ = [
    "DEFAULT_SCALE",
    "HumanWindow",
    "NoDisplayError",
    "demo_snapshot",
    "display_available",
    "frame_shape",
    "render_ansi",
    "render_rgb",
]
