"""scripts/suggestion_information.py: players' suggestions scored on the expert's positions by the expert's measure."""

from __future__ import annotations

import numpy as np
import pytest


def test_the_expert_sets_the_scale_and_a_weaker_suggester_falls_below_it() -> None:
    from scripts.suggestion_information import main, suggestion_information

    out = suggestion_information(["heuristic", "expert"], games=16, seed=2)
    assert list(out) == ["teacher", "random", "worst", "heuristic", "expert"]
    n = {r["suggestions"] for r in out.values()}
    assert len(n) == 1 and n.pop() > 50  # every chooser scored at the same positions
    assert out["worst"]["bits"] <= out["random"]["bits"] < out["heuristic"]["bits"] < out["expert"]["bits"]
    assert out["expert"]["bits"] <= out["teacher"]["bits"] + 1e-12  # another expert's samples: never better
    assert out["teacher"]["gap_closed"] == pytest.approx(1.0) and out["random"]["gap_closed"] == pytest.approx(0.0)
    assert np.isfinite([r["bits"] for r in out.values()]).all()
    alone = suggestion_information(["heuristic"], games=16, seed=2)
    assert alone["teacher"] == out["teacher"] and alone["heuristic"] == out["heuristic"]  # the same games
    assert main(["deducer", "--games", "4", "--preset", "cards"]) == 0


def test_bad_arguments_are_refused() -> None:
    from cluedo_env.checks import OptionRangeError
    from cluedo_env.errors import CluedoError
    from scripts.suggestion_information import main, suggestion_information

    with pytest.raises(OptionRangeError, match="--games"):
        main(["deducer", "--games", "0"])
    with pytest.raises(ValueError, match="each at most once"):
        suggestion_information(["deducer", "deducer"], games=1)
    with pytest.raises(CluedoError, match="nosuch"):
        suggestion_information(["nosuch"], games=1)
