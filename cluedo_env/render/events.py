"""What a snapshot says, in the words and labels that every view of a game shares.

One job: read a snapshot dict (``docs/snapshot.md``) into the pieces the text renderer
(:mod:`cluedo_env.render.text`), the image renderer (:mod:`cluedo_env.render.image`) and the HTML
replay page (:mod:`cluedo_env.render.html`) all show: seat names, the lines for a suggestion, an
accusation, a history entry and the result, who and what is in each room, token letters, suspect
colours, short weapon names, and the rows each room covers on the board. It is separate so that
the views say the same thing in the same words, and so that the privacy rule for the shown card
(R-G7, :func:`refutations`) is applied in one place.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from cluedo_env.rules.board import ROOM_LETTERS, load_board
from cluedo_env.rules.cards import ROOMS, SUSPECTS, WEAPONS
from cluedo_env.rules.privacy import may_see_shown_card

BOARD_COLS, BOARD_ROWS = 24, 25

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


def snapshot_has_board(snapshot: dict[str, Any]) -> bool:
    return snapshot.get("suspects") is not None


def num_players(snapshot: dict[str, Any]) -> int:
    return len(snapshot["hands"])


def seat_name(p: int) -> str:
    """Seat p plays suspect p (R-S1)."""
    return f"{SUSPECTS[p]} (seat {p})"


def last_event(snapshot: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for rec in reversed(snapshot.get("history") or []):
        if rec.get("type") == kind:
            return rec
    return None


def is_pending(snapshot: dict[str, Any], rec: dict[str, Any]) -> bool:
    """True while ``rec`` is the suggestion being refuted now."""
    hist = snapshot.get("history") or []
    return snapshot.get("phase") == "refute" and bool(hist) and hist[-1] is rec


def refutations(rec: dict[str, Any], viewer: int | None) -> list[tuple[int, str | None]]:
    """(refuter, card shown or None when ``viewer`` may not see it) for each refuter (R-G7)."""
    out = []
    for i, seat in enumerate(rec.get("refuted_by", [])):
        shown = rec.get("shown", [])
        card = shown[i] if i < len(shown) else None
        visible = viewer is not None and bool(may_see_shown_card(viewer, rec["player"], seat))
        out.append((seat, card if visible else None))
    return out


def suggestion_lines(snapshot: dict[str, Any], rec: dict[str, Any], viewer: int | None) -> list[str]:
    """Short lines: the three cards, who passed, who refuted (and the card when the viewer may see it)."""
    lines = [", ".join(rec["cards"])]
    passed = rec.get("passed", [])
    if passed:
        lines.append("passed: " + ", ".join(SUSPECTS[p] for p in passed))
    for seat, card in refutations(rec, viewer):
        lines.append(f"refuted by {SUSPECTS[seat]}: showed {card}" if card else f"refuted by {SUSPECTS[seat]}")
    if is_pending(snapshot, rec):
        ref = snapshot.get("refuter")
        if ref is not None:
            lines.append(f"{SUSPECTS[ref]} must show a card")
    elif not rec.get("refuted_by"):
        lines.append("nobody could refute")
    return lines


def accusation_line(rec: dict[str, Any]) -> str:
    result = "correct" if rec.get("correct") else "wrong, eliminated"
    return f"{', '.join(rec['cards'])}: {result}"


def history_line(snapshot: dict[str, Any], rec: dict[str, Any], viewer: int | None) -> str:
    who = SUSPECTS[rec["player"]]
    if rec.get("type") == "accusation":
        return f"{who} accused {accusation_line(rec)}"
    tail = []
    for seat, card in refutations(rec, viewer):
        tail.append(f"{SUSPECTS[seat]} showed {card}" if card else f"{SUSPECTS[seat]} showed a card")
    if not tail:
        tail.append("pending" if is_pending(snapshot, rec) else "not refuted")
    return f"{who} suggested {', '.join(rec['cards'])}: {'; '.join(tail)}"


def result_line(snapshot: dict[str, Any]) -> str | None:
    if snapshot.get("phase") != "over":
        return None
    if snapshot.get("winner") is not None:
        return f"Game over: {seat_name(snapshot['winner'])} wins"
    if snapshot.get("truncated"):
        return f"Game over: cut after {snapshot.get('turn_count', 0)} turns, no winner"
    return "Game over: everyone is eliminated, no winner"


def rules_label(snapshot: dict[str, Any]) -> str:
    rules = snapshot.get("rules") or {}
    return f"{rules.get('preset', 'classic')}, {num_players(snapshot)} players"


def room_contents(snapshot: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
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


def token_squares(snapshot: dict[str, Any]) -> dict[tuple[int, int], str]:
    """(row, col) -> suspect standing there."""
    out = {}
    for name in SUSPECTS:
        loc = snapshot["suspects"].get(name)
        if isinstance(loc, (list, tuple)):
            out[(int(loc[0]), int(loc[1]))] = name
    return out


@lru_cache(maxsize=32)
def room_runs(room: int, with_doors: bool = True) -> tuple[tuple[int, int, int], ...]:
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
