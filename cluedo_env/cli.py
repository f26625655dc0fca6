"""The ``cluedo`` command line: play, check and replay games; evaluate, train and benchmark players.

    cluedo play --players human deducer heuristic heuristic --preset classic --seed 1 --record game.json
    cluedo check game.json                       # replay a record and confirm its final state
    cluedo replay game.json [--out game.html]    # the record as an offline HTML replay page (cluedo_env.viewer)
    cluedo evaluate --players deducer heuristic heuristic heuristic --games 1000 --out results/eval
    cluedo train --config configs/train_vs_random.yaml [--resume]     # --backend rllib for Ray RLlib
    cluedo bench --quick
    python -m cluedo_env.cli play ...            # the same without the installed entry point

Subcommands share argument names (``--players``, ``--preset``, ``--rule``, ``--max-turns``,
``--seed``, ``--games``, ``--batch-size``, ``--out``, ``--config``, ``--no-progress``) and each has a
complete ``--help``. Bad input of any kind is one line on stderr, ``error: <what> (<what is
allowed>)``, and exit status 2 (``--debug`` shows the traceback instead); inputs and output paths are
checked before any game or training starts. The heavy parts (agents, torch, ray, the evaluator
script) are imported only by the subcommand that needs them.

``play``: one entry per seat (seat p plays suspect p; Scarlet, seat 0, moves first). ``human``
is a person at this terminal (any seat; several ``human`` entries play hot-seat); any other
name is a bot from :func:`agents.registry.make_agent` (``random``, ``heuristic``, ``deducer``,
``expert``, ``ckpt:PATH`` a trained checkpoint). Bots act through a one-game
:class:`~cluedo_env.vector_engine.VectorEngine` and see only their
:class:`~cluedo_env.views.PlayerView`. The human sees the board from their seat (their hand and
the cards shown to them, nothing else), a notebook of what they know, and numbered prompts of
their legal choices. At every prompt: ``b`` board, ``n`` notebook, ``h`` help, ``q`` quit.
The game (finished or abandoned) is saved as a game record (:mod:`cluedo_env.record`).

Input and output are injectable (``input_fn``, ``output``) so that tests can script a game.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cluedo_env import actions as A
from cluedo_env.board import load_board
from cluedo_env.cards import CARD_NAMES, ROOMS, SUSPECTS, WEAPONS
from cluedo_env.config import MAX_TURNS_LIMIT, PRESETS, make_config
from cluedo_env.errors import ArgumentParser, UsageError, check_writable_file, int_in, run_cli, seed_type
from cluedo_env.record import Recorder, RecordError, check, check_record_path, knowledge, load, save
from cluedo_env.render import render_ansi

HUMAN = "human"


class Quit(Exception):
    """The person quit (``q`` or end of input)."""


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
        self.output(text)

    def ask(self, prompt: str) -> str:
        """One answer (stripped); handles the global commands; Quit on ``q`` or end of input."""
        while True:
            try:
                raw = self.input_fn(prompt)
            except (EOFError, KeyboardInterrupt) as exc:
                raise Quit() from exc
            if raw is None:
                raise Quit()
            text = str(raw).strip()
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
        for k, (label, _) in enumerate(options, 1):
            self.say(f"  {k}) {label}")
        hint = f"1-{len(options)}" + (", x to go back" if back else "")
        while True:
            text = self.ask(f"Choose [{hint}]: ")
            if back and text.lower() in ("x", "back"):
                raise _Back()
            pick, reason = _match(text, options)
            if pick is not None:
                return options[pick][1]
            self.say(f"  {reason}")


def _match(text: str, options: list[tuple[str, Any]]) -> tuple[int | None, str]:
    n = len(options)
    if text.lstrip("+-").isdigit():
        k = int(text)
        if 1 <= k <= n:
            return k - 1, ""
        return None, f"{k} is out of range: enter a number from 1 to {n}."
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
At any prompt: b = show the board, n = your notebook, h = this help, q = quit (the game is saved).
Accusations: name a suspect, a weapon and a room; you are asked to confirm. A wrong accusation
eliminates you (you still show cards to others)."""


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
        from agents.registry import make_agent
        from cluedo_env.vector_engine import VectorEngine
        from cluedo_env.views import PlayerView

        self.config = make_config(preset, **{**(rules or {}), "players": len(players)})
        self.players = list(players)
        self.seed = seed
        self.console = console or Console()
        self.color = color
        self.show_board = show_board
        self.board = load_board()
        self.eng = VectorEngine(self.config, 1)
        self.eng.reset(seed)
        self.views = [PlayerView(self.eng, s) for s in range(len(players))]
        base = 0 if seed is None else seed
        seeds = [int(np.random.SeedSequence([base, s]).generate_state(1)[0]) for s in range(len(players))]
        self.agents: list[Any] = [
            None if name == HUMAN else make_agent(name, seed=seeds[s]) for s, name in enumerate(players)
        ]
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
        last_turn = None
        try:
            while self.eng.phase[0] != A.OVER:
                p = int(self.eng.actor[0])
                turn = (int(self.eng.turn_count[0]), int(self.eng.current[0]))
                if turn != last_turn:
                    last_turn = turn
                    say(f"\n--- Turn {turn[0] + 1}: {_seat(turn[1], self.players)} ---")
                    if turn[1] in self.humans and self.show_board:
                        self.viewer = turn[1]
                        say(self._board_text())
                if self.agents[p] is None:
                    self.viewer = p
                    action = self._ask_human(p)
                else:
                    action = int(self.agents[p].act(self.views[p], np.arange(1))[0])
                self._apply(p, action)
        except Quit:
            say("\nGame abandoned.")
            return self.record()
        self.finished = True
        say("\n" + render_ansi(self.snapshot(), viewer=self.viewer, color=self.color).split("\n")[1])
        return self.record()

    def _apply(self, p: int, action: int) -> None:
        before = self.snapshot()
        self.eng.step(np.array([action], np.int64))
        roll = int(self.eng.last_roll[0]) if action == A.ROLL else None
        self.recorder.add(p, action, roll)
        for agent, view in zip(self.agents, self.views, strict=True):
            if agent is not None:
                agent.observe_step(view)
        for line in self._narrate(before, self.snapshot(), p, action, roll):
            self.console.say(line)

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
        dests = sorted(a - A.MOVE0 for a in legal)
        rooms = [d for d in dests if self.board.is_room(d)]
        squares = [d for d in dests if not self.board.is_room(d)]
        options = [(f"{_loc_label(d)}", A.MOVE0 + d) for d in rooms + squares]
        title = f"Where do you move with {int(self.eng.roll[0])}? (rooms first; squares are row,col on the map)"
        return self.console.choose(title, options)

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
                if text.lstrip("+-").isdigit():
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
    record = game.run()
    check(record)  # the record replays to the state the game reached
    if record_path is not None:
        note = "" if game.finished else " (unfinished game)"
        try:
            save(record, record_path)
        except RecordError as exc:
            fallback = Path(tempfile.gettempdir()) / time.strftime("cluedo_game_%Y%m%d_%H%M%S.json")
            save(record, fallback)
            console.say(f"Could not save to {record_path} ({exc}); game record saved to {fallback} instead{note}")
        else:
            console.say(f"Game record saved to {record_path}{note}")
    return record


# ============================================================================ shared arguments
# Every subcommand spells a shared idea the same way: --players, --preset, --rule, --max-turns,
# --seed, --games, --batch-size, --out, --config, --no-progress, --record.
def parse_rule(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` of ``--rule``; the value is read as YAML (``2``, ``true``, ``all``)."""
    import yaml

    if "=" not in text or not text.split("=", 1)[0].strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. --rule refutation=all)")
    key, value = text.split("=", 1)
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        parsed = value
    return key.strip(), parsed


def add_rules_args(ap: argparse.ArgumentParser) -> None:
    """``--preset``, ``--rule KEY=VALUE`` (repeatable) and ``--max-turns``: the rules of the games."""
    ap.add_argument("--preset", default="classic", help=f"rules preset: {', '.join(PRESETS)}, or a YAML rules file")
    ap.add_argument("--rule", action="append", type=parse_rule, default=[], metavar="KEY=VALUE",
                    help="a rules flag on top of the preset, e.g. --rule refutation=all (repeatable)")  # fmt: skip
    ap.add_argument("--max-turns", type=int_in(1, MAX_TURNS_LIMIT), default=None, metavar="N",
                    help=f"cut a game after N turns (1..{MAX_TURNS_LIMIT}; default: the preset's)")  # fmt: skip


def add_seed_arg(ap: argparse.ArgumentParser, default: int | None, what: str) -> None:
    shown = "random" if default is None else default
    ap.add_argument("--seed", type=seed_type, default=default, metavar="N",
                    help=f"seed of {what} (an integer from 0 to 2**63-1; default: {shown})")  # fmt: skip


def rules_overrides(rules: list[tuple[str, object]], max_turns: int | None, players_option: str | None = None,
                    players: int | None = None) -> dict[str, Any]:  # fmt: skip
    """The ``--rule`` and ``--max-turns`` flags as config overrides.

    ``players`` (the seat count another option fixes) wins only if no ``--rule players=...``
    says otherwise: a conflicting ``--rule players=N`` is an error, never silently ignored.
    """
    overrides = dict(rules)
    if max_turns is not None:
        if "max_turns" in overrides and overrides["max_turns"] != max_turns:
            raise UsageError(
                f"--rule max_turns={overrides['max_turns']} conflicts with --max-turns {max_turns} (give one of them)"
            )
        overrides["max_turns"] = max_turns
    if players is not None:
        if "players" in overrides and overrides["players"] != players:
            raise UsageError(
                f"--rule players={overrides['players']!r} conflicts with {players_option} ({players} seats) "
                f"(the seat count comes from {players_option}; drop --rule players)"
            )
        overrides["players"] = players
    return overrides


def register_player_prefixes(names: list[str]) -> None:
    """Import the code behind ``ckpt:`` / ``rllib:`` players named in ``names`` (lazily: it needs torch / ray)."""
    for prefix, module, extra in (("ckpt:", "training.policy", "train"), ("rllib:", "training.rllib_module", "rllib")):
        if any(isinstance(n, str) and n.startswith(prefix) for n in names):
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise UsageError(
                    f"{prefix} players need {module}, which cannot be imported ({exc}) "
                    f"(install the extra: pip install -e '.[{extra}]')"
                ) from exc


def check_player_names(names: list[str], allowed_extra: tuple[str, ...] = ()) -> None:
    """Every name is a known player (or ``ckpt:FILE`` naming an existing file) before any game starts."""
    from agents.registry import available_agents

    register_player_prefixes(names)
    known = [n for n in available_agents() if not n.endswith(":...")]
    prefixes = [n[:-4] for n in available_agents() if n.endswith(":...")]
    for name in names:
        if name in allowed_extra or name in known:
            continue
        prefix, colon, arg = name.partition(":")
        if colon and prefix in prefixes:
            if prefix == "ckpt" and not Path(arg).is_file():
                raise UsageError(f"player {name!r}: checkpoint {arg!r} is not a file (ckpt:PATH to a model .zip)")
            continue
        allowed = ", ".join([*allowed_extra, *known, "ckpt:PATH", "rllib:PATH"])
        raise UsageError(f"unknown player {name!r} (available: {allowed})")


# ============================================================================ subcommands
COMMANDS: dict[str, str] = {
    "play": "play a game in the terminal against bots (or watch bots play)",
    "check": "replay game records and confirm each reaches its recorded final state",
    "replay": "write a game record as a self-contained HTML replay page",
    "evaluate": "tournaments and round robins between players, seats rotated (scripts/evaluate.py)",
    "train": "train a player: MaskablePPO (training.train) or Ray RLlib (--backend rllib)",
    "bench": "speed of the vectorized engine on the workloads users run (scripts/bench.py)",
}

EPILOG = """examples:
  cluedo play --players human deducer heuristic heuristic --seed 1 --record game.json
  cluedo check game.json
  cluedo replay game.json --out game.html
  cluedo evaluate --players deducer heuristic heuristic heuristic --games 1000 --out results/eval
  cluedo train --config configs/train_vs_random.yaml
  cluedo bench --quick

Every command takes --debug (a traceback instead of the one-line error) and --help."""


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: only for ``cluedo --help``; each subcommand builds its own parser when run."""
    ap = ArgumentParser(prog="cluedo", description="Cluedo (Clue) for reinforcement learning: one command line.",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--debug", action="store_true", help="show the traceback of an error instead of one line")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        sub.add_parser(name, help=text, add_help=False)
    return ap


def play_parser() -> ArgumentParser:
    p = ArgumentParser(prog="cluedo play", description=COMMANDS["play"] + ". " + HELP.splitlines()[0],
                       epilog="Players: 'human' (a person at this terminal; several play hot-seat), random, "
                       "heuristic, deducer, expert, belief_random, ckpt:PATH (a trained MaskablePPO .zip), "
                       "rllib:PATH.")  # fmt: skip
    p.add_argument("--players", nargs="+", default=[HUMAN, "deducer", "heuristic", "heuristic"], metavar="NAME",
                   help="one entry per seat: 'human' or a player name (random, heuristic, deducer, expert, "
                   "ckpt:PATH); the count sets the number of players "
                   "(default: human deducer heuristic heuristic)")  # fmt: skip
    add_rules_args(p)
    add_seed_arg(p, None, "the deal and the dice")
    p.add_argument("--record", default=None, metavar="FILE",
                   help="where to save the game record (default: cluedo_game_<date>_<time>.json)")  # fmt: skip
    p.add_argument("--no-record", action="store_true", help="do not save the game")
    p.add_argument("--color", action="store_true", help="ANSI colours on the board")
    p.add_argument("--no-board", action="store_true", help="do not print the board at each of your turns")
    return p


def _cmd_play(argv: list[str], input_fn: Callable[[str], str] | None, output: Callable[[str], None] | None) -> int:
    args = play_parser().parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    if args.record is not None and args.no_record:
        raise UsageError("--record and --no-record contradict each other (give one of them)")
    check_player_names(args.players, allowed_extra=(HUMAN,))
    rules = rules_overrides(args.rule, args.max_turns, "--players", len(args.players))
    make_config(args.preset, **rules)  # a bad preset or rule fails here, before anything else
    path = None if args.no_record else (args.record or time.strftime("cluedo_game_%Y%m%d_%H%M%S.json"))
    if path is not None:
        check_record_path(path)
    if HUMAN not in args.players:
        say("note: no 'human' among --players; the bots play on their own")
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().generate_state(1)[0] >> 1)
    play(args.players, args.preset, seed, path, rules, input_fn, output, color=args.color,
         show_board=not args.no_board)  # fmt: skip
    return 0


def _cmd_check(argv: list[str], output: Callable[[str], None] | None) -> int:
    p = ArgumentParser(prog="cluedo check", description=COMMANDS["check"] + "; exit status 1 if any does not.")
    p.add_argument("files", nargs="+", metavar="FILE", help="game records (JSON, schema cluedo_env.record/1)")
    args = p.parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    for f in args.files:  # a path that is not a readable file is bad input, not a bad record
        if not Path(f).is_file():
            raise UsageError(f"record {f!r} is not a file (give paths of game record .json files)")
    bad = 0
    for f in args.files:
        try:
            rec = load(f)
            final = check(rec)
            res = rec["result"]
            say(f"{f}: OK, {len(rec['steps'])} steps, winner {res['winner']}, phase {final['phase']}")
        except RecordError as exc:
            bad += 1
            say(f"{f}: INVALID: {exc}")
    return 1 if bad else 0


def _cmd_replay(argv: list[str], output: Callable[[str], None] | None) -> int:
    p = ArgumentParser(prog="cluedo replay", description=COMMANDS["replay"] + " (opens offline in a browser).")
    p.add_argument("file", metavar="FILE", help="a game record (JSON), e.g. from cluedo play or evaluate --record")
    p.add_argument("--out", default=None, metavar="HTML", help="the page to write (default: FILE with .html)")
    args = p.parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    out = Path(args.out) if args.out else Path(args.file).with_suffix(".html")
    if Path(args.file).suffix.lower() == ".html" and out == Path(args.file):
        raise UsageError(f"the page {out} would overwrite the record (give --out or a .json record)")
    check_writable_file(out, "--out page")
    try:
        from cluedo_env.viewer import write_html
    except ImportError as exc:
        raise UsageError(f"the replay viewer is not available ({exc}) (reinstall cluedo_env with its data)") from exc
    rec = load(args.file)
    check(rec)  # a record that does not replay makes a page that lies: refuse it before writing
    written = write_html(rec, out)
    say(f"wrote {written}: open it in a browser (works offline)")
    return 0


def _script(name: str) -> Any:
    """``scripts/<name>.py`` of the source checkout as a module (scripts are not part of the installed package)."""
    root = Path(__file__).resolve().parents[1]
    path = root / "scripts" / f"{name}.py"
    mod_name = f"cluedo_scripts_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    if not path.is_file():
        raise UsageError(f"cluedo {name} needs {path} (run from a source checkout installed with pip install -e .)")
    import importlib.util

    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    spec.loader.exec_module(mod)
    return mod


def _cmd_evaluate(argv: list[str]) -> int:
    _script("evaluate").main(argv, prog="cluedo evaluate")
    return 0


def _cmd_train(argv: list[str]) -> int:
    backend = "sb3"
    for i, a in enumerate(argv):
        if a == "--backend" and i + 1 < len(argv):
            backend = argv[i + 1]
        elif a.startswith("--backend="):
            backend = a.split("=", 1)[1]
    if backend not in ("sb3", "rllib"):
        raise UsageError(f"--backend {backend!r} is not allowed (choose from sb3, rllib)")
    module = "training.train" if backend == "sb3" else "training.rllib_train"
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        extra = "train" if backend == "sb3" else "rllib"
        raise UsageError(f"cluedo train needs {module} ({exc}) (install it: pip install -e '.[{extra}]')") from exc
    mod.main(argv, prog="cluedo train")
    return 0


def _cmd_bench(argv: list[str]) -> int:
    return _script("bench").main(argv, prog="cluedo bench")


def _dispatch(argv: list[str], input_fn: Callable[[str], str] | None, output: Callable[[str], None] | None) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        if not argv:
            raise UsageError(f"no command given (commands: {', '.join(COMMANDS)}; cluedo --help)")
        build_parser().print_help()
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        raise UsageError(f"unknown command {command!r} (commands: {', '.join(COMMANDS)})")
    if command == "play":
        return _cmd_play(rest, input_fn, output)
    if command == "check":
        return _cmd_check(rest, output)
    if command == "replay":
        return _cmd_replay(rest, output)
    if command == "evaluate":
        return _cmd_evaluate(rest)
    if command == "train":
        return _cmd_train(rest)
    return _cmd_bench(rest)


def main(
    argv: list[str] | None = None,
    input_fn: Callable[[str], str] | None = None,
    output: Callable[[str], None] | None = None,
) -> int:
    """``cluedo COMMAND ...``: returns the exit status (2 and one ``error:`` line on stderr for bad input)."""
    return run_cli(lambda args: _dispatch(args, input_fn, output), argv)


if __name__ == "__main__":
    sys.exit(main())
