"""``cluedo warmup``: compile every kernel once, so that no later command waits on numba.

numba compiles a kernel on its first call and caches the machine code on disk (:mod:`cluedo_env.engine.kernel_cache`
keeps that cache in step with the sources; :mod:`cluedo_env.engine.compile_ahead` shares the largest kernels with a
helper process where a second core is free). On an empty cache and two cores the first game of the engine waits
about 12 s and the first game of four deducers about 40 s. ``cluedo warmup`` pays that once (under a minute on two
cores), visibly, one line per step: the engine and the PettingZoo env, a deducer's notebook (whose decisions then
compile in a helper process while this one compiles the other players' kernels), then a short batch of each
built-in player on a board preset and on the card game (the paths differ: movement planning exists only on the
board). A warm cache makes it a matter of seconds. ``make demo`` and ``make test`` run it first.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cluedo_env.options import ArgumentParser

DESCRIPTION = "compile every kernel once (the engine's and the players'), so later runs start at once"
PLAYERS = ("belief_random", "heuristic", "notebook", "random", "deducer", "expert")
PRESETS = ("classic", "cards")


def _engine() -> None:
    import numpy as np

    from cluedo_env import env
    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.rules.config import RulesConfig

    for preset in PRESETS:  # the classic engine on two threads, so that the workers' compiled loop is built too
        eng = VectorEngine(RulesConfig.from_preset(preset), batch_size=4, autoreset=True,
                           threads=2 if preset == "classic" else 1)  # fmt: skip
        eng.reset(0)
        for _ in range(50):
            eng.observe()
            eng.step(eng.sample_random_actions())
    aec = env()
    aec.reset(seed=0)
    for _ in range(20):
        obs, _, term, trunc, _ = aec.last()
        aec.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


def _deducer_notebook() -> None:
    """A deducer's first notebook, on a dealt game. On an empty cache it hands the deducer's decisions (the largest
    kernel of the package) to a helper process (:mod:`cluedo_env.engine.compile_ahead`), where they compile while
    this process compiles the notebook's propagation and then the other players' kernels, in the steps that follow."""
    import numpy as np

    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView
    from cluedo_env.rules.config import RulesConfig

    eng = VectorEngine(RulesConfig.from_preset("classic"), batch_size=2)
    eng.reset(0)
    make_agent("deducer", seed=0).reset(PlayerView(eng, 0), np.arange(2))


def _players(name: str) -> Callable[[], None]:
    def play() -> None:
        from cluedo_env.agents.play.registry import make_agent
        from cluedo_env.agents.play.runner import play_games
        from cluedo_env.rules.config import RulesConfig

        for preset in PRESETS:
            config = RulesConfig.from_preset(preset)
            play_games(config, [make_agent(name, seed=s) for s in range(config.players)], 2, batch_size=2)

    return play


def steps() -> list[tuple[str, Callable[[], None]]]:
    """(what, do) of every step, in order."""
    return [("the engine and the PettingZoo env", _engine),
            ("the deducer's notebook (its decisions meanwhile in a helper process)", _deducer_notebook)] + [
        (f"player {n}", _players(n)) for n in PLAYERS]  # fmt: skip


def main(argv: list[str] | None = None, output: Callable[[str], None] | None = None) -> int:
    ap = ArgumentParser(prog="cluedo warmup", description=DESCRIPTION + ". " + __doc__.split("\n\n")[1])
    ap.parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    todo = steps()
    t_all = time.perf_counter()
    for k, (what, do) in enumerate(todo, 1):
        t0 = time.perf_counter()
        say(f"[{k}/{len(todo)}] {what} ...")
        do()
        say(f"[{k}/{len(todo)}] {what}: ready in {time.perf_counter() - t0:.1f} s")
    say(f"every kernel is compiled and cached ({time.perf_counter() - t_all:.1f} s)")
    return 0


__all__ = ["DESCRIPTION", "main", "steps"]
