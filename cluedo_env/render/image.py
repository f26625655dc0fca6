"""The game as an image (``render_mode="rgb_array"``): :func:`render_rgb` and :func:`frame_shape`.

One job: draw a snapshot into an (H, W, 3) uint8 array with pillow: the board layer (rooms,
corridors, doors, start squares, staircase, secret passages, room names; drawn once per scale and
cached), the tokens and weapons on it, and the status panel. The words come from
:mod:`cluedo_env.render.events`. It is separate from the text renderer and from the window: it needs
pillow and the DejaVu fonts matplotlib ships, but no display and no pyplot, and it is safe to call
from several threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cluedo_env.render.events import (
    BOARD_COLS,
    BOARD_ROWS,
    SUSPECT_COLORS,
    SUSPECT_LETTERS,
    WEAPON_SHORT,
    accusation_line,
    history_line,
    last_event,
    num_players,
    result_line,
    room_contents,
    room_runs,
    rules_label,
    seat_name,
    snapshot_has_board,
    suggestion_lines,
    token_squares,
)
from cluedo_env.rules.actions import PHASE_HELP, PHASE_NAMES
from cluedo_env.rules.board import load_board
from cluedo_env.rules.cards import PASSAGES, ROOMS, SUSPECTS

DEFAULT_SCALE = 28
PANEL_COLS = 16  # panel width in board squares

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
        runs = room_runs(room)
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
    H, W, _ = frame_shape(snapshot_has_board(snapshot), s)
    img = Image.new("RGB", (W, H), _PANEL)
    panel_x = 0
    if snapshot_has_board(snapshot):
        base, layouts = _board_layer(s)
        img.paste(base, (0, 0))
        _draw_pieces(ImageDraw.Draw(img), snapshot, layouts, s)
        panel_x = BOARD_COLS * s
    _draw_panel(ImageDraw.Draw(img), snapshot, viewer, panel_x, W, H, s)
    return np.asarray(img, dtype=np.uint8)


def _draw_pieces(draw: Any, snapshot: dict[str, Any], layouts: tuple[_RoomLayout, ...], s: int) -> None:
    P = num_players(snapshot)
    current = snapshot.get("current") if snapshot.get("phase") != "over" else None
    eliminated = snapshot.get("eliminated", [])

    def flags(name: str) -> tuple[bool, bool]:
        seat = SUSPECTS.index(name)
        return seat == current, seat < P and bool(eliminated[seat])

    for (r, c), name in token_squares(snapshot).items():
        _draw_token(draw, (c + 0.5) * s, (r + 0.5) * s, name, s, *flags(name))
    tokens, weapons = room_contents(snapshot)
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
    P = num_players(snapshot)
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
    text(rules_label(snapshot) + ("" if has_board else ", no board"), small, _MUTED)
    if viewer is not None and 0 <= viewer < P:
        text(f"Viewing as {seat_name(viewer)}", small, _MUTED)
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

    result = result_line(snapshot)
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

    sugg = last_event(snapshot, "suggestion")
    text("Last suggestion" + (f" by {SUSPECTS[sugg['player']]}" if sugg else ": none"), head)
    if sugg:
        for i, line in enumerate(suggestion_lines(snapshot, sugg, viewer)):
            text(line, body if i == 0 else small, indent=s * 0.3)
    y += s * 0.1
    acc = last_event(snapshot, "accusation")
    text("Last accusation" + (f" by {SUSPECTS[acc['player']]}" if acc else ": none"), head)
    if acc:
        text(accusation_line(acc), small, indent=s * 0.3)
    if viewer is not None and 0 <= viewer < P:
        rule()
        text("Your hand", head)
        text(", ".join(snapshot["hands"][viewer]) or "-", small, indent=s * 0.3)
    history = snapshot.get("history") or []
    if len(history) > 1:  # earlier events, newest first, as many as fit
        rule()
        text("Earlier", head)
        for rec in reversed(history[-13:-1]):
            if not text(history_line(snapshot, rec, viewer), small, _MUTED, indent=s * 0.3):
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
