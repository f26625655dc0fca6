"""The game as text (``render_mode="ansi"``): :func:`render_ansi` and the pieces of its page.

One job: lay out a snapshot as plain (optionally ANSI-coloured) text: the status lines, the board
map with tokens, doors and room names, the legend, room contents and the last suggestion and
accusation. The words come from :mod:`cluedo_env.render.events`; this module only arranges them.
It is separate from the image renderer so that text output needs neither pillow nor numpy.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from cluedo_env.render.events import (
    BOARD_COLS,
    SUSPECT_LETTERS,
    accusation_line,
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


def render_ansi(snapshot: dict[str, Any], viewer: int | None = None, *, color: bool = False) -> str:
    """The game as text: status, the board map (classic board), room contents, last suggestion and accusation.

    Deterministic; plain ASCII unless ``color=True`` adds ANSI colour codes. The card shown in a
    refutation appears only for ``viewer`` = the suggester or that refuter (R-G7).
    """
    lines = _status_text(snapshot, viewer)
    if snapshot_has_board(snapshot):
        lines += [""] + _map_text(snapshot, color) + [""] + _legend_text(snapshot) + [""] + _rooms_text(snapshot)
    lines += [""] + _events_text(snapshot, viewer)
    return "\n".join(lines) + "\n"


def _status_text(snapshot: dict[str, Any], viewer: int | None) -> list[str]:
    P = num_players(snapshot)
    phase = snapshot.get("phase", "?")
    lines = [f"Cluedo ({rules_label(snapshot)})  turn {snapshot.get('turn_count', 0)}"]
    result = result_line(snapshot)
    if result:
        lines.append(result)
    else:
        help_text = PHASE_HELP.get(PHASE_NAMES.index(phase), "") if phase in PHASE_NAMES else ""
        roll = snapshot.get("roll", 0)
        roll_text = f"  roll: {roll if roll else '-'}" if snapshot_has_board(snapshot) else ""
        lines.append(f"To play: {seat_name(snapshot['current'])}  phase: {phase}{roll_text}")
        if help_text:
            lines.append(f"  ({help_text})")
        if snapshot.get("refuter") is not None:
            lines.append(f"Refuter: {seat_name(snapshot['refuter'])} must show a card")
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
        lines.append(f"Viewer: {seat_name(viewer)}, hand: {', '.join(snapshot['hands'][viewer]) or '-'}")
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
    tokens, _ = room_contents(snapshot)
    for room, name in enumerate(ROOMS):
        runs = room_runs(room, with_doors=False)
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
    for (r, c), name in token_squares(snapshot).items():
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
    P = num_players(snapshot)
    tokens = [f"{SUSPECT_LETTERS[s]} {s}" + ("" if i < P else " (not playing)") for i, s in enumerate(SUSPECTS)]
    return [
        "Tokens: " + ", ".join(tokens),
        "Map: . corridor, 1-6 start squares (Scarlet..Plum), :: room, ^^ vv << >> door (the arrow points to",
        "     the square in front of it), ~Room secret passage to that room, XX staircase (not walkable)",
    ]


def _rooms_text(snapshot: dict[str, Any]) -> list[str]:
    tokens, weapons = room_contents(snapshot)
    lines = ["Rooms:"]
    for name in ROOMS:
        who = ", ".join(f"{s} ({SUSPECT_LETTERS[s]})" for s in tokens[name]) or "-"
        lines.append(f"  {name:<13} suspects: {who}; weapons: {', '.join(weapons[name]) or '-'}")
    return lines


def _events_text(snapshot: dict[str, Any], viewer: int | None) -> list[str]:
    lines = []
    sugg = last_event(snapshot, "suggestion")
    if sugg is None:
        lines.append("Last suggestion: none")
    else:
        body = suggestion_lines(snapshot, sugg, viewer)
        lines.append(f"Last suggestion: {seat_name(sugg['player'])} suggested {body[0]}")
        lines += [f"  {line}" for line in body[1:]]
    acc = last_event(snapshot, "accusation")
    if acc is None:
        lines.append("Last accusation: none")
    else:
        lines.append(f"Last accusation: {seat_name(acc['player'])} accused {accusation_line(acc)}")
    return lines
