"""scripts/decision_swap.py: a player with one kind of decision taken by another, head to head."""

from __future__ import annotations

import numpy as np
import pytest

from cluedo_env.rules import actions as A


class Fixed:
    """A stand-in player that answers a fixed row of engine actions and counts the calls it follows."""

    def __init__(self, actions: list[int]) -> None:
        self.actions = np.array(actions, np.int64)
        self.calls = {"reset": 0, "observe_step": 0, "act": 0}

    def reset(self, view, idx) -> None:
        self.calls["reset"] += 1

    def observe_step(self, view) -> None:
        self.calls["observe_step"] += 1

    def act(self, view, idx) -> np.ndarray:
        self.calls["act"] += 1
        return self.actions.copy()


#  columns: own move vs other move, own suggest vs other suggest, own show vs other show,
#  own accuse vs other move, own move vs other accuse
OWN = [A.ROLL, A.SUGGEST0 + 5, A.SHOW0 + 1, A.ACCUSE0 + 3, A.MOVE0 + 7]
OTHER = [A.MOVE0 + 2, A.SUGGEST0 + 9, A.SHOW0 + 2, A.END_TURN, A.ACCUSE0 + 8]


@pytest.mark.parametrize(("swap", "from_other"), [
    ("none", [0, 0, 0, 0, 0]),
    ("move", [1, 0, 0, 0, 0]),  # the player's own accusation stays
    ("suggest", [0, 1, 0, 0, 0]),
    ("show", [0, 0, 1, 0, 0]),
    ("accuse", [0, 0, 0, 1, 1]),  # wherever either accuses, the other player decides
    ("all-but-accuse", [1, 1, 1, 0, 0]),
])  # fmt: skip
def test_each_swap_plays_the_other_players_choice_exactly_where_its_kind_says(swap, from_other) -> None:
    from scripts.decision_swap import Swapped, kind_of, swapped_kinds

    assert list(kind_of(np.array(OWN))) == ["move", "suggest", "show", "accuse", "move"]
    own, other = Fixed(OWN), Fixed(OTHER)
    agent = Swapped(own, other, swapped_kinds(swap))
    idx = np.arange(5)
    agent.reset(None, idx)
    agent.observe_step(None)
    got = agent.act(None, idx)
    assert list(got) == [o if take else p for p, o, take in zip(OWN, OTHER, from_other, strict=True)]
    assert own.calls == other.calls == {"reset": 1, "observe_step": 1, "act": 1}  # both follow every decision


def test_a_swap_changes_play_and_the_script_runs_end_to_end() -> None:
    from scripts.decision_swap import decision_swap, main, swapped_kinds

    out = decision_swap("random", by="deducer", against="random", swaps=("none", "all-but-accuse", "accuse"),
                        games=64, seed=3)  # fmt: skip
    assert list(out) == ["none", "all-but-accuse", "accuse"]
    assert all(r.games == 64 for r in out.values())
    # a random player's accusations lose almost every game it accuses in; the deducer's never do
    assert out["accuse"].wrong_accusations_a == 0 < out["none"].wrong_accusations_a
    assert out["accuse"].win_rate > out["none"].win_rate
    assert main(["heuristic", "--kinds", "suggest", "--games", "8", "--preset", "cards"]) == 0
    with pytest.raises(ValueError, match="allowed"):
        swapped_kinds("everything")
