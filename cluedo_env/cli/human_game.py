"""``cluedo play``: a game in the terminal, people against bots (or bots alone).

``play``: one entry per seat (seat p plays suspect p; Scarlet, seat 0, moves first). ``human``
is a person at this terminal (any seat; several ``human`` entries play hot-seat); any other
name is a bot from :func:`cluedo_env.agents.play.registry.make_agent` (``random``, ``heuristic``, ``deducer``,
``expert``, ``ckpt:PATH`` a trained checkpoint). Bots act through a one-game
:class:`~cluedo_env.engine.vector_engine.VectorEngine` and see only their
:class:`~cluedo_env.engine.views.PlayerView`. The human sees the board from their seat (their hand and
the cards shown to them, nothing else), a notebook of what they know, and numbered prompts of
their legal choices. At every prompt: ``b`` board, ``n`` notebook, ``h`` help, ``q`` quit.
The game (finished or abandoned) is saved as a game record (:mod:`cluedo_env.record`).

Input and output are injectable (``input_fn``, ``output``) so that tests can script a game.
"""

from __future__ import annotations

import contextlib
import re
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from cluedo_env.record import Recorder, RecordError, check, check_record_path, knowledge, save
from cluedo_env.render import render_ansi
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import load_board
from cluedo_env.rules.cards import CARD_NAMES, ROOMS, SUSPECTS, WEAPONS
from cluedo_env.rules.config import make_config

HUMAN = "human"


class Quit(Exception):
    """The person quit (``q`` or end of input)."""


class Hangup(Exception):
    """The terminal was closed (SIGHUP): the game is saved as on a quit."""


MAX_ANSWER = 200  # characters: the longest name in a menu is far shorter


class _Back(Exception):
    """The person went back to the previous menu."""


# ============================================================================ console
class Console:
    """Prompts with validation: every answer is re-asked with the reason until it is valid."""

    def __init__(
        self,
        input_fn: Callable[[str], str] | None = None,
        output: Callable[[str], None] | None = None,
    ) -> None:
        self.input_fn = input_fn or input
        self.output = output or (lambda text: print(text, flush=True))
        self.commands: dict[str, Callable[[], None]] = {}

    def say(self, text: str = "") -> None:
        try:
            self.output(text)
        except OSError:  # the terminal is gone (closed window, broken pipe): the game is saved all the same
            pass

    def ask(self, prompt: str) -> str:
        """One answer (stripped); handles the global commands; Quit on ``q`` or end of input.

        Whatever comes back is either an answer or a Quit: end of input, Ctrl-C, a closed terminal
        (an OSError, or SIGHUP through :func:`play`), bytes that are not text. An answer longer than
        :data:`MAX_ANSWER` characters is re-asked (no prompt needs more).
        """
        while True:
            try:
                raw = self.input_fn(prompt)
            except (EOFError, KeyboardInterrupt, OSError, UnicodeError, Hangup) as exc:
                raise Quit() from exc
            if raw is None:
                raise Quit()
            text = str(raw).strip()
            if len(text) > MAX_ANSWER:
                self.say(f"  That answer is {len(text)} characters long: type a number or a name (h for help).")
                continue
            if "\x00" in text or not text.isprintable():
                self.say("  That answer holds control characters: type a number or a name (h for help).")
                continue
            low = text.lower()
            if low in ("q", "quit", "exit"):
                raise Quit()
            if low in self.commands:
                self.commands[low]()
                continue
            if not text:
                self.say("  Please type an answer (h for help).")
                continue
            return text

    def choose(self, title: str, options: list[tuple[str, Any]], back: bool = False) -> Any:
        """A numbered menu; the answer is a number or an option's name (case-insensitive, unique prefix)."""
        self.say(title)
        for line in _menu_lines([label for label, *_ in options]):
            self.say(line)
        hint = f"1-{len(options)}" + (", x to go back" if back else "")
        while True:
            text = self.ask(f"Choose [{hint}]: ")
            if back and text.lower() in ("x", "back"):
                raise _Back()
            pick, reason = _match(text, options)
            if pick is not None:
                return options[pick][1]
            self.say(f"  {reason}")


WIDTH = 80  # the terminal the game fits: every line at most 80 columns, a turn's screen at most 24 lines


def _menu_lines(labels: list[str]) -> list[str]:
    """``  1) label`` one a line; short labels (card names) side by side, as many as fit in :data:`WIDTH`."""
    items = [f"{k}) {label}" for k, label in enumerate(labels, 1)]
    if len(items) <= 3 or max(len(x) for x in items) > 18:
        return [f"  {x}" for x in items]
    col = max(len(x) for x in items) + 2
    per = max(1, (WIDTH - 2) // col)
    return ["  " + "".join(x.ljust(col) for x in items[i : i + per]).rstrip() for i in range(0, len(items), per)]


def _wrap(text: str, indent: str = "", max_lines: int | None = None) -> list[str]:
    import textwrap

    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, max_lines=max_lines, placeholder=" ...") or [""]


def _match(text: str, options: list[tuple[str, Any]]) -> tuple[int | None, str]:
    n = len(options)
    if re.fullmatch(r"[+-]?[0-9]+", text):  # ASCII digits only: int() of '²' fails, of 5,000 digits too
        k = int(text) if len(text) <= 9 else n + 1
        if 1 <= k <= n:
            return k - 1, ""
        shown = str(k) if len(text) <= 9 else f"{text[:6]}..."
        return None, f"{shown} is out of range: enter a number from 1 to {n}."
    low = text.lower()
    exact = [i for i, (label, _) in enumerate(options) if label.lower() == low]
    if len(exact) == 1:
        return exact[0], ""
    prefix = [i for i, (label, _) in enumerate(options) if label.lower().startswith(low)]
    if len(prefix) == 1:
        return prefix[0], ""
    if prefix:
        return None, f"{text!r} matches several choices ({', '.join(options[i][0] for i in prefix)}): be more precise."
    return None, f"{text!r} is not one of the choices: enter a number from 1 to {n} or a name from the list."


# ============================================================================ text helpers
def _seat(p: int, names: list[str] | None = None) -> str:
    who = f"{SUSPECTS[p]} (seat {p}"
    if names is not None:
        who += f", {names[p]}"
    return who + ")"


def _loc_label(loc: int) -> str:
    board = load_board()
    if board.is_room(loc):
        return ROOMS[board.room_of(loc)]
    r, c = board.squares[loc]
    return f"square {r},{c}"


def move_options(board: Any, dests: list[int]) -> list[tuple[Any, ...]]:
    """Menu entries for the legal destinations ``dests``: each room in reach (``"Kitchen (enter)"``), then for
    each room out of reach the square nearest to it (``"toward Ballroom, 3 squares short"``; rooms sharing a
    square share its entry), then, if some squares are in none of those, ``("", "other", squares)``."""
    rooms = [d for d in dests if board.is_room(d)]
    squares = [d for d in dests if not board.is_room(d)]
    options: list[tuple[Any, ...]] = [(f"{ROOMS[board.room_of(d)]} (enter)", A.MOVE0 + d) for d in rooms]
    toward: dict[int, list[tuple[int, int]]] = {}
    reached = {board.room_of(d) for d in rooms}
    if squares:
        for room in range(len(ROOMS)):
            if room in reached:
                continue
            dist = [int(board.distance[d, board.room_loc(room)]) for d in squares]
            best = min(range(len(squares)), key=lambda k: (dist[k], squares[k]))
            if dist[best] < 255:  # a square from which the room can be reached
                toward.setdefault(squares[best], []).append((dist[best], room))
    for d, targets in sorted(toward.items(), key=lambda kv: min(kv[1])):
        parts = [f"{ROOMS[r]}, {n} square{'s' if n != 1 else ''} short" for n, r in sorted(targets)[:2]]
        more = f" (+{len(targets) - 2} more)" if len(targets) > 2 else ""
        options.append(("toward " + "; ".join(parts) + more, A.MOVE0 + d))
    others = [d for d in squares if d not in toward]
    if others:
        options.append(("", "other", others))
    return options


def _triple_text(s: int, w: int, r: int) -> str:
    return f"{SUSPECTS[s]} with the {WEAPONS[w]} in the {ROOMS[r]}"


def notebook_text(snapshot: dict[str, Any], seat: int) -> str:
    """The notebook of ``seat``: :func:`cluedo_env.record.knowledge` as text."""
    k = knowledge(snapshot, seat)
    P = len(k["hand_sizes"])
    lines = [f"Notebook of {_seat(seat)}", f"  Your hand: {', '.join(k['hand']) or '-'}"]
    if k["envelope"]:
        lines.append(f"  Envelope (seen when you accused): {', '.join(k['envelope'])}")
    lines.append("  Card            holder          could not refute it")
    for name, row in k["sheet"].items():
        if row["holder"] == seat:
            holder = "you"
        elif row["holder"] == "envelope":
            holder = "ENVELOPE"
        elif row["holder"] is not None:
            holder = f"{SUSPECTS[row['holder']]} (shown)"
        else:
            holder = "?"
        passed = ", ".join(SUSPECTS[q] for q in row["passed_by"]) or ""
        lines.append(f"  {name:<15} {holder:<15} {passed}".rstrip())
    if k["i_showed"]:
        lines.append("  You showed: " + "; ".join(f"{x['card']} to {SUSPECTS[x['to']]}" for x in k["i_showed"]))
    lines.append("  Suggestions:")
    if not k["suggestions"]:
        lines.append("    none yet")
    for s in k["suggestions"]:
        who = "you" if s["player"] == seat else SUSPECTS[s["player"]]
        parts = []
        if s["passed"]:
            parts.append("no card from " + ", ".join(SUSPECTS[q] for q in s["passed"]))
        for by, card in zip(s["refuted_by"], s["shown"], strict=True):
            parts.append(f"{SUSPECTS[by]} showed " + (card if card is not None else "a card"))
        lines.append(f"    {who}: {', '.join(s['cards'])} -> {'; '.join(parts) or 'nobody asked could refute'}")
    for a in k["accusations"]:
        who = "you" if a["player"] == seat else SUSPECTS[a["player"]]
        lines.append(f"  Accusation by {who}: {', '.join(a['cards'])} - {'correct' if a['correct'] else 'wrong'}")
    out = [SUSPECTS[q] for q in range(P) if k["eliminated"][q]]
    if out:
        lines.append(f"  Eliminated: {', '.join(out)}")
    return "\n".join(lines)


HELP = """How to answer: type the number of a choice, or its name (a unique beginning is enough).
At any prompt: b = the board, n = your notebook, h = this help, q = quit (the game is saved).
Accusations: name a suspect, a weapon and a room; you are asked to confirm. A wrong
accusation eliminates you (you still show cards to others)."""


def status_lines(snapshot: dict[str, Any], seat: int) -> list[str]:
    """What a person needs in view at every decision, in at most four lines of 80 columns: where they are,
    their hand, and the cards no one has been seen holding (the summary of their notebook)."""
    k = knowledge(snapshot, seat)
    where = snapshot["suspects"].get(SUSPECTS[seat]) if snapshot.get("suspects") else None
    head = f"You: {SUSPECTS[seat]}" + (f" in the {where}" if where and where in ROOMS else "")
    lines = _wrap(f"{head} | hand: {', '.join(k['hand']) or '-'}", "  ", max_lines=2)
    if k["envelope"]:
        lines.append(f"Envelope: {', '.join(k['envelope'])}")
        return lines
    open_ = [name for name, row in k["sheet"].items() if row["holder"] is None]
    envelope = [name for name, row in k["sheet"].items() if row["holder"] == "envelope"]
    text = "Notebook: " + (f"in the envelope: {', '.join(envelope)}; " if envelope else "")
    text += f"unplaced ({len(open_)}): {', '.join(open_) or 'none'}"
    return lines + _wrap(text, "  ", max_lines=2)


# ============================================================================ the game
class HumanGame:
    """One game with humans and bots at the table; :meth:`run` plays it to the end (or a quit)."""

    def __init__(
        self,
        players: list[str],
        preset: str = "classic",
        seed: int | None = None,
        rules: dict[str, Any] | None = None,
        console: Console | None = None,
        color: bool = False,
        show_board: bool = True,
    ) -> None:
        from cluedo_env.agents.play.registry import make_agent
        from cluedo_env.engine.vector_engine import VectorEngine
        from cluedo_env.engine.views import PlayerView

        self.config = make_config(preset, **{**(rules or {}), "players": len(players)})
        self.players = list(players)
        self.seed = seed
        self.console = console or Console()
        self.color = color
        self.show_board = show_board
        self.board = load_board()
        self.eng = VectorEngine(self.config, 1)
        self.views = [PlayerView(self.eng, s) for s in range(len(players))]
        base = 0 if seed is None else seed
        seeds = [int(np.random.SeedSequence([base, s]).generate_state(1)[0]) for s in range(len(players))]
        self.agents: list[Any] = [
            None if name == HUMAN else make_agent(name, seed=seeds[s]) for s, name in enumerate(players)
        ]
        self.eng.reset(seed)
        one = np.arange(1)
        for agent, view in zip(self.agents, self.views, strict=True):
            if agent is not None:
                agent.reset(view, one)
        self.recorder = Recorder(self.eng.export_game(0), seed=seed, players=self.players)
        self.humans = [s for s, name in enumerate(players) if name == HUMAN]
        self.viewer = self.humans[0] if self.humans else None
        self.console.commands = {
            "b": lambda: self.console.say(self._board_text()),
            "board": lambda: self.console.say(self._board_text()),
            "n": lambda: self.console.say(notebook_text(self.snapshot(), self.viewer)),
            "notebook": lambda: self.console.say(notebook_text(self.snapshot(), self.viewer)),
            "h": lambda: self.console.say(HELP),
            "help": lambda: self.console.say(HELP),
            "?": lambda: self.console.say(HELP),
        }
        self.finished = False
        self._pending: list[str] = []  # the bots' narration not yet said

    # ----------------------------------------------------------------- state
    def snapshot(self) -> dict[str, Any]:
        return self.eng.export_game(0)

    def _board_text(self) -> str:
        return render_ansi(self.snapshot(), viewer=self.viewer, color=self.color)

    def record(self) -> dict[str, Any]:
        return self.recorder.finish(self.snapshot())

    # ------------------------------------------------------------------ loop
    def run(self) -> dict[str, Any]:
        """Play until the game ends or a human quits; returns the record."""
        say = self.console.say
        say(f"Cluedo: {self.config.preset}, {self.config.players} players, seed {self.seed}")
        for s, name in enumerate(self.players):
            say(f"  seat {s}: {SUSPECTS[s]:<8} {'YOU' if name == HUMAN else name}")
        say(HELP)
        from cluedo_env.agents.play.runner import (
            act_by_seat,  # the one seat-dispatch loop (agents load only when a game runs)
        )

        last_turn = None
        try:
            while self.eng.phase[0] != A.OVER:
                p = int(self.eng.actor[0])
                turn = (int(self.eng.turn_count[0]), int(self.eng.current[0]))
                if turn != last_turn:
                    last_turn = turn
                    self._flush()
                    human = turn[1] in self.humans
                    say(("\n" if human else "") + f"--- Turn {turn[0] + 1}: {_seat(turn[1], self.players)} ---")
                    if human and self.show_board:
                        self.viewer = turn[1]
                        say(self._board_text())
                seats = dict(enumerate(self.agents))
                action = int(act_by_seat(self.eng.actor, seats, self._ask, np.full(1, -1, np.int64))[0])
                self._apply(p, action)
        except Quit:
            self._flush()
            say("\nGame abandoned.")
            return self.record()
        self.finished = True
        say("\n" + render_ansi(self.snapshot(), viewer=self.viewer, color=self.color).split("\n")[1])
        return self.record()

    def _ask(self, agent: Any, seat: int, idx: np.ndarray) -> np.ndarray:
        """The seat's action: a person at this terminal (agent None) or a bot, through its view."""
        if agent is None:
            self.viewer = seat
            self._flush()
            for line in status_lines(self.snapshot(), seat):
                self.console.say(line)
            return np.array([self._ask_human(seat)], np.int64)
        return agent.act(self.views[seat], idx)

    def _apply(self, p: int, action: int) -> None:
        before = self.snapshot()
        self.eng.step(np.array([action], np.int64))
        roll = int(self.eng.last_roll[0]) if action == A.ROLL else None
        self.recorder.add(p, action, roll)
        for agent, view in zip(self.agents, self.views, strict=True):
            if agent is not None:
                agent.observe_step(view)
        lines = self._narrate(before, self.snapshot(), p, action, roll)
        if p not in self.humans:  # a bot's turn is told on as few lines as fit, once it is over
            self._pending += [x.strip() for x in lines]
            if self.eng.phase[0] == A.OVER:
                self._flush()
            return
        self._flush()
        for line in lines:
            for part in _wrap(line, "    "):
                self.console.say(part)

    def _flush(self) -> None:
        """Say what the bots did since the last line was said, folded into lines of 80 columns."""
        if self._pending:
            for part in _wrap("; ".join(self._pending), "  "):
                self.console.say(part)
            self._pending = []

    # ------------------------------------------------------------- narration
    def _who(self, q: int) -> str:
        return "You" if self.viewer == q and q in self.humans else SUSPECTS[q]

    def _narrate(self, before: dict, after: dict, p: int, action: int, roll: int | None) -> list[str]:
        """What happened, as the viewing human may know it (a card shown is named only to those involved)."""
        who, out = self._who(p), []
        if action == A.ROLL:
            moved = after["phase"] == "move"
            out.append(f"{who} rolled {roll}" + ("" if moved else ": no move is possible"))
        elif action == A.PASSAGE:
            out.append(f"{who} took the secret passage to {after['suspects'][SUSPECTS[p]]}")
        elif action == A.STAY:
            out.append(f"{who} stayed in {after['suspects'][SUSPECTS[p]]}")
        elif action == A.END_TURN:
            out.append(f"{who} ended the turn")
        elif A.MOVE0 <= action < A.SUGGEST0:
            out.append(f"{who} moved to {_loc_label(action - A.MOVE0)}")
        elif A.SUGGEST0 <= action < A.SHOW0:
            out.append(f"{who} suggested: {_triple_text(*A.triple_of(action - A.SUGGEST0))}")
        elif A.SHOW0 <= action < A.ACCUSE0:
            to = int(before["current"])
            card = CARD_NAMES[action - A.SHOW0]
            if self.viewer in (p, to) and self.viewer in self.humans:
                out.append(f"{who} showed {card} to {self._who(to) if to != self.viewer else 'you'}")
            else:
                out.append(f"{who} showed a card to {self._who(to)}")
        elif action >= A.ACCUSE0:
            acc = after["history"][-1]
            verdict = "CORRECT" if acc["correct"] else "wrong"
            out.append(f"{who} accused {_triple_text(*A.triple_of(action - A.ACCUSE0))}: {verdict}")
            if not acc["correct"] and (p == self.viewer and p in self.humans):
                out.append(f"The envelope holds: {', '.join(after['envelope'])}. You are eliminated.")
        # refutation progress of the suggestion being answered
        hist_b, hist_a = before["history"], after["history"]
        if hist_a and hist_a[-1]["type"] == "suggestion":
            rec = hist_a[-1]
            old = hist_b[len(hist_a) - 1] if len(hist_b) == len(hist_a) else None
            for q in rec["passed"][len(old["passed"]) if old else 0 :]:
                out.append(f"  {self._who(q)} could not refute")
            if after["phase"] == "refute":
                out.append(f"  {self._who(after['refuter'])} must show a card")
            elif A.SUGGEST0 <= action < A.SHOW0 and not rec["refuted_by"]:
                out.append("  Nobody could refute!")
        if after["phase"] == "over":
            if after["winner"] is not None:
                out.append(f"*** {_seat(after['winner'], self.players)} wins! ***")
            elif after["truncated"]:
                out.append("*** The game was cut at the turn limit: nobody wins ***")
            else:
                out.append("*** Everybody was eliminated: nobody wins ***")
            out.append(f"The envelope held: {', '.join(after['envelope'])}")
        return out

    # ---------------------------------------------------------------- prompts
    def _ask_human(self, p: int) -> int:
        legal = set(np.flatnonzero(self.eng.legal_action_mask[0]).tolist())
        phase = int(self.eng.phase[0])
        while True:
            try:
                if phase == A.REFUTE:
                    return self._ask_show(p, legal)
                if phase == A.MOVE:
                    return self._ask_move(legal)
                return self._ask_turn(p, phase, legal)
            except _Back:
                continue

    def _menu_with_accuse(self, title: str, options: list[tuple[str, Any]], legal: set[int]) -> int:
        accusations = sorted(a for a in legal if a >= A.ACCUSE0)
        if accusations:
            options = options + [("Make an accusation", "accuse")]
        pick = options[0][1] if len(options) == 1 else self.console.choose(title, options)
        if pick == "accuse":
            return self._ask_accusation(accusations)
        return pick

    def _ask_turn(self, p: int, phase: int, legal: set[int]) -> int:
        snap = self.snapshot()
        here = snap["suspects"][SUSPECTS[p]] if snap["suspects"] else None
        options: list[tuple[str, Any]] = []
        if phase == A.START:
            if A.ROLL in legal:
                options.append(("Roll the dice and move", A.ROLL))
            if A.PASSAGE in legal:
                target = self.board.passage_target(int(self.eng.pos[0, p]))
                options.append((f"Take the secret passage to the {_loc_label(target)}", A.PASSAGE))
            if A.STAY in legal:
                options.append((f"Stay in the {here} and make a suggestion", A.STAY))
            if A.END_TURN in legal:
                options.append(("End your turn (you cannot leave)", A.END_TURN))
            return self._menu_with_accuse("Your turn. What do you do?", options, legal)
        if phase == A.SUGGEST:
            suggestions = sorted(a for a in legal if A.SUGGEST0 <= a < A.SHOW0)
            options.append(("Make a suggestion" + (f" in the {here}" if here else ""), "suggest"))
            if A.END_TURN in legal:
                options.append(("Do not suggest; end your turn", A.END_TURN))
            pick = self._menu_with_accuse("Suggestion time.", options, legal)
            if pick == "suggest":
                return self._ask_suggestion(suggestions)
            return pick
        if phase == A.POST:
            options.append(("End your turn", A.END_TURN))
            return self._menu_with_accuse("Accuse now, or end your turn?", options, legal)
        raise AssertionError(f"no prompt for phase {phase}")

    def _ask_move(self, legal: set[int]) -> int:
        """Moves by destination: the rooms in reach, then for each other room the square that gets closest."""
        options = move_options(self.board, sorted(a - A.MOVE0 for a in legal))
        rest = options.pop() if options[-1][1] == "other" else None
        if rest is not None:
            options.append(("Another square (row,col on the map, b shows it)", "other"))
        pick = self.console.choose(f"Where do you move with {int(self.eng.roll[0])}?", options)
        if pick == "other":
            squares = rest[2]
            pick = self.console.choose("Which square? (row,col on the map; x to go back)",
                                       [(_loc_label(d), A.MOVE0 + d) for d in squares], back=True)  # fmt: skip
        return pick

    def _pick_triple(self, kind: str, legal_ids: list[int], base: int) -> tuple[int, int, int]:
        """Suspect, then weapon, then room, offering only what some legal action allows."""
        triples = [A.triple_of(a - base) for a in legal_ids]
        s = self.console.choose(
            f"{kind}: which suspect?", [(SUSPECTS[x], x) for x in sorted({t[0] for t in triples})], back=True
        )
        w = self.console.choose(
            f"{kind}: which weapon?", [(WEAPONS[x], x) for x in sorted({t[1] for t in triples if t[0] == s})], back=True
        )
        rooms = sorted({t[2] for t in triples if t[0] == s and t[1] == w})
        if len(rooms) == 1:
            r = rooms[0]
            self.console.say(f"  ({kind.lower()} in the {ROOMS[r]})")
        else:
            r = self.console.choose(f"{kind}: which room?", [(ROOMS[x], x) for x in rooms], back=True)
        return s, w, r

    def _ask_suggestion(self, suggestions: list[int]) -> int:
        s, w, r = self._pick_triple("Suggestion", suggestions, A.SUGGEST0)
        return A.SUGGEST0 + A.triple_index(s, w, r)

    def _ask_accusation(self, accusations: list[int]) -> int:
        """Names typed in (validated against the card lists), then a confirmation."""
        say = self.console.say
        triples = {A.triple_of(a - A.ACCUSE0) for a in accusations}
        rooms_ok = sorted({t[2] for t in triples})
        say("Accusation: name the suspect, the weapon and the room (x to go back).")
        picks = []
        for kind, names, allowed in (
            ("suspect", SUSPECTS, range(len(SUSPECTS))),
            ("weapon", WEAPONS, range(len(WEAPONS))),
            ("room", ROOMS, rooms_ok),
        ):
            if kind == "room" and len(rooms_ok) == 1:
                say(f"  room: {ROOMS[rooms_ok[0]]} (you must accuse the room you are in)")
                picks.append(rooms_ok[0])
                continue
            while True:
                text = self.console.ask(f"  {kind} ({', '.join(names[i] for i in allowed)}): ")
                if text.lower() in ("x", "back"):
                    raise _Back()
                if re.fullmatch(r"[+-]?[0-9]+", text):
                    say(f"  Type the {kind}'s name (a unique beginning is enough), not a number.")
                    continue
                pick, reason = _match(text, [(names[i], i) for i in allowed])
                if pick is not None:
                    picks.append(list(allowed)[pick])
                    break
                say(f"  {reason}")
        s, w, r = picks
        if (s, w, r) not in triples:  # cannot happen with the lists above, but never trust a menu
            say("  That accusation is not allowed now.")
            raise _Back()
        ans = self.console.ask(f"Accuse {_triple_text(s, w, r)}? A wrong accusation eliminates you. (y/n): ")
        if ans.lower() not in ("y", "yes"):
            say("  Accusation cancelled.")
            raise _Back()
        return A.ACCUSE0 + A.triple_index(s, w, r)

    def _ask_show(self, p: int, legal: set[int]) -> int:
        snap = self.snapshot()
        rec = snap["history"][-1]
        to = SUSPECTS[rec["player"]]
        cards = sorted(a - A.SHOW0 for a in legal)
        title = f"{to} suggested {', '.join(rec['cards'])}. You must show one of your matching cards to {to}:"
        return self.console.choose(title, [(CARD_NAMES[c], A.SHOW0 + c) for c in cards])


# ============================================================================ commands
def play(
    players: list[str],
    preset: str = "classic",
    seed: int | None = None,
    record_path: str | Path | None = None,
    rules: dict[str, Any] | None = None,
    input_fn: Callable[[str], str] | None = None,
    output: Callable[[str], None] | None = None,
    color: bool = False,
    show_board: bool = True,
) -> dict[str, Any]:
    """Play one game in the terminal (or with scripted input); save and return its record.

    The record path is checked before the first move, and should saving still fail at the end
    (the disk filled, the folder vanished), the record goes to a file in the temporary folder
    instead, so a finished game is never lost.
    """
    if record_path is not None:
        check_record_path(record_path)
    console = Console(input_fn, output)
    game = HumanGame(players, preset, seed, rules, console, color=color, show_board=show_board)
    with _hangup_as_quit():
        try:
            record = game.run()
        except BaseException:  # anything unforeseen: the game so far is saved before the error goes on
            if record_path is not None:
                _save(game.record(), record_path, console, " (unfinished game)")
            raise
    check(record)  # the record replays to the state the game reached
    if record_path is not None:
        _save(record, record_path, console, "" if game.finished else " (unfinished game)")
    return record


@contextlib.contextmanager
def _hangup_as_quit() -> Iterator[None]:
    """SIGHUP (the terminal closed) raises :class:`Hangup` at the prompt, which quits and saves the game."""

    def hangup(signum: int, frame: Any) -> None:
        raise Hangup()

    try:
        old = signal.signal(signal.SIGHUP, hangup)
    except (AttributeError, ValueError):  # no SIGHUP (Windows), or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, old)


def _save(record: dict[str, Any], record_path: str | Path, console: Console, note: str) -> None:
    """Save the record, or, should the path fail now, to a file in the temporary folder: a game is never lost."""
    try:
        save(record, record_path)
    except RecordError as exc:
        fallback = Path(tempfile.gettempdir()) / time.strftime("cluedo_game_%Y%m%d_%H%M%S.json")
        save(record, fallback)
        console.say(f"Could not save to {record_path} ({exc}); game record saved to {fallback} instead{note}")
    else:
        console.say(f"Game record saved to {record_path}{note}")
