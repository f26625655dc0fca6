"""The classic board (shared/BOARD.md) as data: squares, rooms, doors, starts, passages.

The map lives in ``cluedo_env/data/board.txt``; :func:`load_board` parses it and checks
every fact BOARD.md states (188 walkable squares, 17 doors, 6 starts, 2 passages, a
staircase that is not walkable), so a damaged data file fails loudly at import.

Locations: one integer numbering covers everywhere a suspect token can be.
    0..187    walkable squares (corridor and start squares), in row-major order
    188..196  rooms, ``ROOM_LOC0 + room`` in the order of ``cards.ROOMS``
Doors are not squares (R-M4): a door joins a room to the one square in front of it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from cluedo_env.rules.cards import NUM_ROOMS, NUM_SUSPECTS, PASSAGES, ROOMS

NUM_SQUARES = 188
ROOM_LOC0 = NUM_SQUARES  # location id of room 0 (Kitchen)
NUM_LOCATIONS = NUM_SQUARES + NUM_ROOMS  # 197
NUM_DOORS = 17
UNREACHABLE = 255  # in the distance table

ROOM_LETTERS = "KBCDILOHS"  # same order as cards.ROOMS
_SIDES = {"N": (-1, 0), "S": (1, 0), "W": (0, -1), "E": (0, 1)}


class BoardError(ValueError):
    """The board data does not describe the classic board of BOARD.md."""


@dataclass(frozen=True)
class Door:
    room: int
    cell: tuple[int, int]  # the room cell that has the door (lowercase in the map)
    side: str  # N, S, W or E: where the square in front lies
    front: int  # square id of the corridor square in front of the door


@dataclass(frozen=True)
class Board:
    rows: int
    cols: int
    grid: tuple[str, ...]  # the map, one string per row
    squares: tuple[tuple[int, int], ...]  # square id -> (row, col)
    square_of: dict[tuple[int, int], int]  # (row, col) -> square id
    neighbors: tuple[tuple[int, ...], ...]  # square id -> orthogonally adjacent walkable squares
    doors: tuple[Door, ...]
    room_fronts: tuple[tuple[int, ...], ...]  # room -> square ids in front of its doors
    front_room: dict[int, int]  # square in front of a door -> that door's room
    starts: tuple[int, ...]  # suspect -> start square id
    room_cells: tuple[tuple[tuple[int, int], ...], ...]  # room -> its cells, for rendering
    distance: np.ndarray  # (197, 197) uint8, see shortest_distances()
    passage: np.ndarray  # (197,) int16: the location a room's secret passage leads to, -1 elsewhere (R-T2)

    # --- locations -------------------------------------------------------------
    @staticmethod
    def is_room(loc: int) -> bool:
        return loc >= ROOM_LOC0

    @staticmethod
    def room_loc(room: int) -> int:
        return ROOM_LOC0 + room

    @staticmethod
    def room_of(loc: int) -> int:
        """Room index of a room location, -1 for a square."""
        return loc - ROOM_LOC0 if loc >= ROOM_LOC0 else -1

    def loc_name(self, loc: int) -> str:
        if loc >= ROOM_LOC0:
            return ROOMS[loc - ROOM_LOC0]
        r, c = self.squares[loc]
        return f"({r},{c})"

    def passage_target(self, loc: int) -> int | None:
        """Location reached by the secret passage from ``loc`` (R-T2), None if it has none."""
        target = int(self.passage[loc])
        return target if target >= 0 else None


def passage_table() -> np.ndarray:
    """(197,) int16: the location each room's secret passage leads to (R-T2, ``cards.PASSAGES``), -1 elsewhere."""
    out = np.full(NUM_LOCATIONS, -1, np.int16)
    for room, target in PASSAGES.items():
        out[ROOM_LOC0 + room] = ROOM_LOC0 + target
    out.flags.writeable = False
    return out


def _parse_sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for raw in text.splitlines():
        if raw.startswith("[") and raw.rstrip().endswith("]"):
            current = raw.strip()[1:-1]
            sections[current] = []
        elif current is not None and raw.strip() and not (current != "map" and raw.startswith("#")):
            sections[current].append(raw.rstrip("\n"))
    return sections


def parse_board(text: str) -> Board:
    """Parse and validate the board text; raises BoardError naming what is wrong."""
    sections = _parse_sections(text)
    if "map" not in sections or "doors" not in sections:
        raise BoardError("board data needs a [map] and a [doors] section")
    grid = tuple(sections["map"])
    rows, cols = len(grid), len(grid[0])
    if rows != 25 or any(len(line) != cols for line in grid) or cols != 24:
        raise BoardError(
            f"the map must be 25 rows of 24 cells, got {rows} rows of widths {sorted({len(x) for x in grid})}"
        )

    squares: list[tuple[int, int]] = []
    starts: dict[int, int] = {}
    room_cells: list[list[tuple[int, int]]] = [[] for _ in range(NUM_ROOMS)]
    for r, line in enumerate(grid):
        for c, ch in enumerate(line):
            if ch == "." or ch in "123456":
                if ch != ".":
                    starts[int(ch) - 1] = len(squares)
                squares.append((r, c))
            elif ch.upper() in ROOM_LETTERS:
                room_cells[ROOM_LETTERS.index(ch.upper())].append((r, c))
            elif ch not in "#X":
                raise BoardError(f"unknown map cell {ch!r} at ({r},{c})")
    if len(squares) != NUM_SQUARES:
        raise BoardError(f"expected {NUM_SQUARES} walkable squares, found {len(squares)}")
    if sorted(starts) != list(range(NUM_SUSPECTS)):
        raise BoardError(f"expected start squares 1..6, found {sorted(k + 1 for k in starts)}")
    if sum(line.count("X") for line in grid) == 0:
        raise BoardError("the map has no staircase (X)")
    square_of = {rc: i for i, rc in enumerate(squares)}

    neighbors = []
    for r, c in squares:
        adj = [square_of[(r + dr, c + dc)] for dr, dc in _SIDES.values() if (r + dr, c + dc) in square_of]
        neighbors.append(tuple(sorted(adj)))

    doors = []
    for line in sections["doors"]:
        parts = line.split()
        room_name = " ".join(parts[:-5])
        dr_, dc_, side, fr, fc = parts[-5:]
        if room_name not in ROOMS:
            raise BoardError(f"door of unknown room {room_name!r}")
        room = ROOMS.index(room_name)
        cell, front = (int(dr_), int(dc_)), (int(fr), int(fc))
        if grid[cell[0]][cell[1]] != ROOM_LETTERS[room].lower():
            raise BoardError(f"door cell {cell} of {room_name} is not a lowercase {ROOM_LETTERS[room].lower()!r} cell")
        step = _SIDES.get(side)
        if step is None or (cell[0] + step[0], cell[1] + step[1]) != front:
            raise BoardError(f"door {cell} of {room_name}: side {side} does not lead to {front}")
        if front not in square_of:
            raise BoardError(f"square in front of door {cell} of {room_name} is not walkable: {front}")
        doors.append(Door(room, cell, side, square_of[front]))
    if len(doors) != NUM_DOORS:
        raise BoardError(f"expected {NUM_DOORS} doors, found {len(doors)}")
    lowercase = sum(ch.islower() for line in grid for ch in line)
    if lowercase != len({d.cell for d in doors}):
        raise BoardError("every lowercase door cell of the map needs exactly one line in [doors]")
    front_room: dict[int, int] = {}
    for d in doors:
        if d.front in front_room and front_room[d.front] != d.room:
            raise BoardError(f"square {squares[d.front]} is in front of doors of two rooms")
        front_room[d.front] = d.room
    room_fronts = tuple(tuple(sorted({d.front for d in doors if d.room == room})) for room in range(NUM_ROOMS))
    if any(not f for f in room_fronts):
        raise BoardError("every room needs at least one door")
    if len(PASSAGES) != 4:
        raise BoardError("expected 2 secret passages (4 directed links)")

    board = Board(
        rows=rows,
        cols=cols,
        grid=grid,
        squares=tuple(squares),
        square_of=square_of,
        neighbors=tuple(neighbors),
        doors=tuple(doors),
        room_fronts=room_fronts,
        front_room=front_room,
        starts=tuple(starts[s] for s in range(NUM_SUSPECTS)),
        room_cells=tuple(tuple(cells) for cells in room_cells),
        distance=np.zeros((0, 0), np.uint8),
        passage=passage_table(),
    )
    object.__setattr__(board, "distance", shortest_distances(board))
    return board


def shortest_distances(board: Board) -> np.ndarray:
    """(197, 197) uint8: the fewest pips a single move needs from one location to another.

    Counted as in play on an empty board (R-M1, R-M4, R-M5): one pip per square stepped on,
    nothing for a door; a path may start in a room and may end in one but never passes
    through a room (entering a room ends a move). Secret passages are not moves and are not
    counted. 0 on the diagonal; ``UNREACHABLE`` never occurs on the classic board.
    """
    dist = np.full((NUM_LOCATIONS, NUM_LOCATIONS), UNREACHABLE, np.int32)
    for src in range(NUM_LOCATIONS):
        d = np.full(NUM_SQUARES, UNREACHABLE, np.int32)
        queue: deque[int] = deque()
        if src >= ROOM_LOC0:
            for f in board.room_fronts[src - ROOM_LOC0]:
                d[f] = 1
                queue.append(f)
        else:
            d[src] = 0
            queue.append(src)
        while queue:
            sq = queue.popleft()
            for nb in board.neighbors[sq]:
                if d[nb] == UNREACHABLE:
                    d[nb] = d[sq] + 1
                    queue.append(nb)
        dist[src, :NUM_SQUARES] = d
        for room in range(NUM_ROOMS):
            dist[src, ROOM_LOC0 + room] = min(d[f] for f in board.room_fronts[room])
        dist[src, src] = 0
    return dist.astype(np.uint8)


@lru_cache(maxsize=1)
def load_board() -> Board:
    """The classic board, parsed and validated once per process."""
    text = resources.files("cluedo_env").joinpath("data/board.txt").read_text(encoding="utf-8")
    return parse_board(text)


__all__ = [
    "NUM_DOORS",
    "NUM_LOCATIONS",
    "NUM_SQUARES",
    "ROOM_LETTERS",
    "ROOM_LOC0",
    "UNREACHABLE",
    "Board",
    "BoardError",
    "Door",
    "load_board",
    "parse_board",
    "shortest_distances",
]
