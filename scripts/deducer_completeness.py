"""How much of what can be proved does the deducer's notebook prove? Brute force decides.

    .venv/bin/python scripts/deducer_completeness.py                       # default grid, about a minute
    .venv/bin/python scripts/deducer_completeness.py --mode fixpoint       # propagation only
    .venv/bin/python scripts/deducer_completeness.py --mode agent --players deducer
    .venv/bin/python scripts/deducer_completeness.py --configs cards:3 cards:6 --max-free 12

``--mode`` picks the notebook's reasoning: ``fixpoint`` (the propagation rules only), ``probe``
(+ failed-literal probing of envelope cells), ``probe-all`` (+ probing every cell), ``agent``
(what DeducerAgent plays with: exact envelope facts once at most 8 solution hypotheses are
left) or ``exact`` (exact envelope facts everywhere: witnesses and backtracking search).

Positions come from games played by players that suggest at random (and accuse wrongly
now and then, which gives accusation clauses), or with ``--players deducer`` by deducers;
a position is one seat's information at a random moment. Positions where at most
``--max-free`` cards are unplaced by the raw information (own hand, cards shown to the
seat) are enumerated: every deal of the free cards to the holders (the other players and
the envelope) that fits the hand sizes, one envelope card per category, the passes, the
refutations not seen ("holds at least one of") and the wrong accusations is listed
(:func:`cluedo_env.agents.knowledge.deal_oracle.enumerate_deals`, bounded by ``--node-limit`` nodes; bigger
positions are skipped). A fact is a (holder, card) cell that every consistent deal agrees
on: the card is there (has) or it is not (has-not). The table gives, per config and kind
of cell, the facts enumeration proves and the share the notebook proves too; "derived"
leaves out the facts the raw information states directly (own hand, shown cards, passes).
The notebook must never claim a fact enumeration does not prove (it would be unsound):
the script counts such claims and fails if there is one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cluedo_env.agents.knowledge.deal_oracle import enumerate_deals, raw_information  # noqa: E402
from cluedo_env.agents.knowledge.notebook import Notebook  # noqa: E402
from cluedo_env.agents.play.runner import seat_actions  # noqa: E402
from cluedo_env.agents.players.base import Agent, sample_legal  # noqa: E402

from cluedo_env.engine.vector_engine import VectorEngine  # noqa: E402
from cluedo_env.engine.views import PlayerView  # noqa: E402
from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from cluedo_env.rules import actions as A  # noqa: E402
from cluedo_env.rules.cards import NUM_CARDS  # noqa: E402
from cluedo_env.rules.config import RulesConfig  # noqa: E402

KINDS = ("envelope", "players", "derived", "all")
# --mode -> Notebook options
MODES = {
    "fixpoint": {"exact": False, "probe_cells": None},
    "probe": {"exact": False, "probe_cells": "envelope"},
    "probe-all": {"exact": False, "probe_cells": "all"},
    "agent": {"exact": True, "exact_triples": 8, "probe_cells": None},  # DeducerAgent's default
    "exact": {"exact": True, "probe_cells": None},
}


class RandomSuggester(Agent):
    """Random legal actions, but accuses only with probability ``p_accuse`` when something else is legal."""

    name = "random-suggester"

    def __init__(self, seed: int, p_accuse: float = 0.01) -> None:
        self.rng = np.random.default_rng(seed)
        self.p = p_accuse

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        m = view.legal_action_mask[idx].copy()
        other = m[:, : A.ACCUSE0].any(1)
        m[other & (self.rng.random(len(idx)) >= self.p), A.ACCUSE0 :] = False
        return sample_legal(m, self.rng)


def parse_config(spec: str) -> tuple[str, RulesConfig]:
    preset, _, players = spec.partition(":")
    cfg = RulesConfig.from_preset(preset, players=int(players) if players else 4, max_turns=300)
    return f"{preset}:{cfg.players}", cfg


class Position(NamedTuple):
    """An enumerated position: the seat's raw information, what enumeration found, and the notebook."""

    info: dict
    occurs: np.ndarray  # (H, 21) some consistent deal puts the card with the holder
    triples: dict  # envelope (suspect, weapon, room) card ids -> number of consistent deals
    notebook: Notebook  # the seat's notebook (game ``game`` of its batch)
    game: int
    view: PlayerView  # the seat's view (valid until the generator resumes)

    @property
    def has(self) -> np.ndarray:
        return self.notebook.has[self.game]

    @property
    def no(self) -> np.ndarray:
        return self.notebook.no[self.game]


def compare(info: dict, occurs: np.ndarray, has: np.ndarray, no: np.ndarray) -> dict[str, np.ndarray]:
    """Per kind: [facts proved by enumeration, of which the notebook proves, notebook claims beyond]."""
    P = info["players"]
    E = P
    e_has = occurs & (occurs.sum(0, keepdims=True) == 1)
    e_no = ~occurs
    direct = np.zeros_like(occurs)
    direct[info["seat"]] = True
    for _, c in info["shown"]:
        direct[:, c] = True
    for seat, cards in info["passes"]:
        direct[seat, cards] = True
    if info["envelope"]:
        direct[:, info["envelope"]] = True
    masks = {
        "envelope": np.arange(P + 1)[:, None] == E,
        "players": np.arange(P + 1)[:, None] != E,
        "derived": ~direct,
        "all": np.ones_like(occurs),
    }
    out = {}
    for kind, m in masks.items():
        m = np.broadcast_to(m, occurs.shape)
        proved = (e_has | e_no) & m
        got = ((has & e_has) | (no & e_no)) & m
        wrong = ((has & ~e_has) | (no & ~e_no)) & m
        out[kind] = np.array([proved.sum(), got.sum(), wrong.sum()])
    return out


def positions_for(
    cfg: RulesConfig,
    count: int,
    max_free: int,
    node_limit: int,
    seed: int,
    probe: dict,
    players: str = "random",
    batch: int = 64,
    max_steps: int = 3000,
):
    """Yield a :class:`Position` for each of ``count`` enumerable positions of games with config ``cfg``."""
    rng = np.random.default_rng(seed)
    eng = VectorEngine(cfg, batch, autoreset=True)
    eng.reset(seed)
    P = cfg.players
    views = [PlayerView(eng, s) for s in range(P)]
    if players == "deducer":
        from cluedo_env.agents.players.deducer import DeducerAgent

        agents: list[Agent] = [DeducerAgent(seed=seed + s) for s in range(P)]
        for a, v in zip(agents, views, strict=True):
            a.reset(v, np.arange(batch))
    else:
        agents = [RandomSuggester(seed + s) for s in range(P)]
    found = 0
    for _ in range(max_steps):
        eng.step(seat_actions(eng, agents, views))
        if players == "deducer":
            fresh = np.flatnonzero(eng.hist_len == 0)
            for a, v in zip(agents, views, strict=True):
                stale = np.flatnonzero(a.notebook.processed > eng.hist_len)
                redo = np.union1d(fresh, stale)
                if len(redo):
                    a.reset(v, redo)
        for g in np.flatnonzero(rng.random(batch) < 0.05):
            if eng.phase[g] == A.OVER:
                continue
            seat = int(rng.integers(P))
            view = views[seat]
            info = raw_information(view, int(g))
            placed = set(info["hand"]) | {c for _, c in info["shown"]} | set(info["envelope"] or [])
            if NUM_CARDS - len(placed) > max_free:
                continue
            res = enumerate_deals(info, node_limit, with_triples=True)
            if res is None or res[0] == 0:
                continue
            nb = Notebook(batch, P, seat, **probe)
            nb.reset(np.arange(batch), view.hand, view.hand_sizes)
            nb.update(view, np.array([g]))
            yield Position(info, res[1], res[2], nb, int(g), view)
            found += 1
            if found >= count:
                return


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", nargs="+", default=["cards:3", "cards:4", "cards:6", "seed000:4", "classic:3"])
    ap.add_argument("--positions", type=int, default=150, help="enumerated positions per config")
    ap.add_argument("--max-free", type=int, default=11, help="most unplaced cards in an enumerated position")
    ap.add_argument("--node-limit", type=int, default=200_000)
    ap.add_argument(
        "--mode",
        choices=list(MODES),
        default="exact",
        help="notebook reasoning: fixpoint only, + envelope probing, + probing every cell, the players' default "
        "(exact envelope once <= 8 hypotheses are left), or exact envelope everywhere (default)",
    )
    ap.add_argument("--players", choices=["random", "deducer"], default="random")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    probe = MODES[args.mode]
    print(f"mode={args.mode} players={args.players} max_free={args.max_free} positions/config={args.positions}")
    header = f"| config | positions | {' | '.join(f'{k} facts (deducer %)' for k in KINDS)} | unsound |"
    print(header)
    print("|" + "---|" * (len(KINDS) + 3))
    total = {k: np.zeros(3, np.int64) for k in KINDS}
    total_pos = 0
    t0 = time.time()
    for spec in args.configs:
        label, cfg = parse_config(spec)
        acc = {k: np.zeros(3, np.int64) for k in KINDS}
        n = 0
        for pos in positions_for(cfg, args.positions, args.max_free, args.node_limit, args.seed, probe, args.players):
            for k, v in compare(pos.info, pos.occurs, pos.has, pos.no).items():
                acc[k] += v
            n += 1
        for k in KINDS:
            total[k] += acc[k]
        total_pos += n
        cells = " | ".join(f"{acc[k][0]} ({100 * acc[k][1] / max(acc[k][0], 1):.2f}%)" for k in KINDS)
        print(f"| {label} | {n} | {cells} | {acc['all'][2]} |", flush=True)
    cells = " | ".join(f"{total[k][0]} ({100 * total[k][1] / max(total[k][0], 1):.2f}%)" for k in KINDS)
    print(f"| **all** | {total_pos} | {cells} | {total['all'][2]} |")
    print(f"({time.time() - t0:.1f} s)")
    return 1 if total["all"][2] else 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
