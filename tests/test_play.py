"""Human play in the terminal (cluedo_env.cli), driven by scripted input, bad input included."""

from __future__ import annotations

import json

import pytest

from cluedo_env import record as R
from cluedo_env.cli import main
from cluedo_env.cli.human_game import Console, HumanGame, play
from cluedo_env.rules.cards import ROOMS, SUSPECTS, WEAPONS


class Script:
    """An input function: answers from ``plan`` in order, each when its pattern is in the prompt; else ``default``.

    ``plan`` holds (pattern, answer) pairs, matched against the prompt and the output printed since the
    previous prompt (``out``, the list the game writes to); an answer may be an exception class to raise.
    """

    def __init__(self, plan=(), default="1", limit=5000, out=None):
        self.plan = plan if isinstance(plan, list) else list(plan)  # a list may still grow after this
        self.out = out if out is not None else []  # the output so far: the text since the last prompt counts too
        self.mark = 0
        self.default = default
        self.prompts: list[str] = []
        self.limit = limit

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        assert len(self.prompts) < self.limit, "the game asks for input forever"
        context = "\n".join(self.out[self.mark :]) + "\n" + prompt
        self.mark = len(self.out)
        if self.plan and self.plan[0][0] in context:
            answer = self.plan.pop(0)[1]
            if isinstance(answer, type) and issubclass(answer, BaseException):
                raise answer()
            return answer
        return self.default


def _text(lines: list[str]) -> str:
    return "\n".join(lines)


def test_scripted_game_with_bad_input_reaches_the_end_and_saves_a_record(tmp_path):
    out: list[str] = []
    script = Script(
        [
            ("Choose", "0"),  # out of range
            ("Choose", "99"),
            ("Choose", "-3"),
            ("Choose", "banana"),  # text that is no choice
            ("Choose", "   "),  # nothing
            ("Choose", "h"),  # help, board, notebook: shown, then asked again
            ("Choose", "b"),
            ("Choose", "n"),
            ("Choose", "Roll"),  # a name instead of a number
            ("Accuse now", "Make"),  # open the accusation menu (unique prefix), then cancel it
            ("suspect", "Nobody"),  # unknown card names
            ("suspect", "3"),  # a number where a name is wanted
            ("suspect", "plum"),
            ("weapon", "Spoon"),
            ("weapon", "rope"),
            ("room", "Atrium"),
            ("room", "Ballroom"),
            ("Accuse", "n"),
            ("Accuse now", "x"),  # not a choice here either
            ("Accuse now", "1"),
        ],
        out=out,
    )
    path = tmp_path / "game.json"
    players = ["human", "deducer", "heuristic", "heuristic"]
    record = play(players, "classic", 1, path, input_fn=script, output=out.append)
    assert not script.plan, f"unused answers: {script.plan}"
    text = _text(out)
    for reason in (
        "0 is out of range: enter a number from 1 to",
        "99 is out of range",
        "-3 is out of range",
        "'banana' is not one of the choices",
        "Please type an answer",
        "How to answer",
        "Notebook of Scarlet (seat 0)",
        "'Nobody' is not one of the choices",
        "Type the suspect's name",
        "'Spoon' is not one of the choices",
        "'Atrium' is not one of the choices",
        "Accusation cancelled",
        "'x' is not one of the choices",
    ):
        assert reason in text, reason
    assert "Viewer: Scarlet (seat 0), hand:" in text  # the board from the human's seat
    assert record["final"]["phase"] == "over" and ("wins!" in text or "nobody wins" in text)
    assert "Game record saved" in text
    loaded = R.load(path)
    assert loaded["players"] == ["human", "deducer", "heuristic", "heuristic"] and loaded["seed"] == 1
    assert R.replay(loaded)[-1] == loaded["final"] == record["final"]


def test_the_human_sees_no_hidden_cards():
    out: list[str] = []
    script = Script(default="1")
    game = HumanGame(["heuristic", "human", "heuristic"], "cards", seed=4, console=Console(script, out.append))
    snap0 = game.snapshot()
    record = game.run()
    text = _text(out)
    final = record["final"]
    k = R.knowledge(final, 1)
    seen = {x["card"] for x in k["shown_to_me"]}
    for q in (0, 2):  # other hands: never printed in a "hand:" line, and only shown cards named in "showed"
        assert f"hand: {', '.join(snap0['hands'][q])}" not in text
    assert any("showed a card" in line for line in out)  # refutations between the bots, card hidden
    for card in set(snap0["hands"][0]) | set(snap0["hands"][2]):
        assert (f"showed {card}" not in text) or card in seen, card
    before_end = text[: text.index("The envelope held")]
    assert f"hand: {', '.join(snap0['hands'][1])}" in before_end


def test_human_in_any_seat_card_game_with_suggestions_and_showing(tmp_path):
    script = Script(default="1")
    out: list[str] = []
    record = play(["random", "heuristic", "human"], "cards", 7, tmp_path / "g.json", input_fn=script, output=out.append)
    text = _text(out)
    assert "Suggestion: which room?" in text  # the card-only game names any room
    assert record["players"][2] == "human" and record["final"]["phase"] == "over"
    assert any("You suggested" in line for line in out)
    R.check(R.load(tmp_path / "g.json"))


def test_wrong_accusation_eliminates_the_human_and_the_bots_play_on(tmp_path):
    out: list[str] = []
    plan = [("Your turn", "make")]
    script = Script(plan, out=out)
    game = HumanGame(["deducer", "human", "random"], "classic", seed=2, console=Console(script, out.append))
    env = game.snapshot()["envelope"]
    wrong_suspect = next(s for s in SUSPECTS if s != env[0])
    plan += [("suspect", wrong_suspect), ("weapon", env[1]), ("room", env[2]), ("Accuse", "y")]
    record = game.run()
    text = _text(out)
    assert f"You accused {wrong_suspect} with the {env[1]} in the {env[2]}: wrong" in text
    assert "You are eliminated" in text
    final = record["final"]
    assert final["eliminated"][1] and final["phase"] == "over"
    assert not script.plan
    R.check(record)


def test_right_accusation_wins(tmp_path):
    out: list[str] = []
    plan = [("Your turn", "2")]
    script = Script(plan, out=out)
    game = HumanGame(["human", "random", "random"], "classic", seed=3, console=Console(script, out.append))
    env = game.snapshot()["envelope"]
    assert env[0] in SUSPECTS and env[1] in WEAPONS and env[2] in ROOMS
    plan += [("suspect", env[0].upper()), ("weapon", env[1][:4]), ("room", env[2]), ("Accuse", "yes")]
    record = game.run()
    assert record["result"]["winner"] == 0 and len(record["steps"]) == 1
    assert "Scarlet (seat 0, human) wins" in _text(out)


@pytest.mark.parametrize("stop", [EOFError, KeyboardInterrupt, "q", "quit"])
def test_end_of_input_or_quit_ends_cleanly_and_saves(tmp_path, stop):
    plan = [("Choose", "1"), ("Choose", stop)]
    out: list[str] = []
    path = tmp_path / "q.json"
    record = play(["human", "heuristic"], "classic", 5, path, input_fn=Script(plan), output=out.append)
    text = _text(out)
    assert "Game abandoned" in text and "(unfinished game)" in text
    assert record["final"]["phase"] != "over"
    loaded = R.load(path)
    assert R.replay(loaded)[-1] == loaded["final"]


def test_command_line_play_and_check(tmp_path):
    path = tmp_path / "cli.json"
    out: list[str] = []
    argv = ["play", "--players", "heuristic", "human", "random", "--preset", "cards", "--seed", "3", "--record",
            str(path), "--no-board"]  # fmt: skip
    assert main(argv, input_fn=Script(default="1"), output=out.append) == 0
    assert path.exists() and f"Game record saved to {path}" in _text(out)
    out.clear()
    assert main(["check", str(path)], output=out.append) == 0
    assert "OK" in out[0]
    data = json.loads(path.read_text())
    data["final"]["turn_count"] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    out.clear()
    assert main(["check", str(path), str(bad)], output=out.append) == 1
    assert "INVALID" in out[1] and "does not replay" in out[1]


def test_command_line_errors_are_messages(tmp_path, capsys):
    out: list[str] = []
    assert main(["play", "--players", "human", "nosuchbot", "--no-record"], Script(), out.append) == 2
    assert "error: unknown player 'nosuchbot'" in capsys.readouterr().err
    assert main(["play", "--players", "human", "random", "--preset", "cards", "--no-record"], Script(), out.append) == 2
    assert "players=2 is not allowed" in capsys.readouterr().err
    assert main(["play", "--players", "human", "random", "--preset", "nope", "--no-record"], Script(), out.append) == 2
    assert "unknown preset" in capsys.readouterr().err
    assert out == []  # nothing was played


def test_command_line_replay_writes_a_page(tmp_path, capsys):
    pytest.importorskip("cluedo_env.render.html")
    path = tmp_path / "r.json"
    assert main(["play", "--players", "random", "human", "random", "--preset", "cards", "--seed", "1", "--record",
                 str(path)], Script(), lambda _: None) == 0  # fmt: skip
    out: list[str] = []
    assert main(["replay", str(path)], output=out.append) == 0
    page = tmp_path / "r.html"
    assert page.exists() and "<html" in page.read_text().lower() and str(page) in out[0]
    (tmp_path / "bad.json").write_text("{")
    assert main(["replay", str(tmp_path / "bad.json")], output=out.append) == 2
    assert "not valid JSON" in capsys.readouterr().err
