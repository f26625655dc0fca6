"""Where a player's wins come from: the same head-to-head with one kind of its decisions taken by another player.

    python scripts/decision_swap.py pretrained:champion --by expert --against expert --games 2000 --seed 7
    python scripts/decision_swap.py pretrained:cards_champion --preset cards --kinds accuse suggest

The player plays alone against ``--against`` players (seats rotated, as ``scripts/evaluate.py --head-to-head``),
once as itself and once per swap, each on the same seed. In a swap, the ``--by`` player follows every decision of
the seat too (its own notebook, the seat's :class:`~cluedo_env.engine.views.PlayerView` only) and its choice is
played wherever it is of the swapped kind:

* ``move``: moving and ending the turn (roll, secret passage, stay, the square moved to, end the turn); in the card
  game (no board) ending the turn is the only such choice, and this swap changes no game there;
* ``suggest``: the suggestion; ``show``: the card shown to refute another player's suggestion;
* ``accuse``: whether to accuse and what: wherever either player would accuse, the ``--by`` player decides;
* ``all-but-accuse``: every decision but those.

A swap of a kind other than ``accuse`` leaves the player's own accusations alone: where the player accuses, it
accuses. Why: a trained network and the rule-based player it imitated can agree most of the time and still win
at different rates; swapping one kind at a time says which of its decisions carry the difference. A diagnostic:
the swapped player is never offered as a player elsewhere (every decision of a shipped champion is its own).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.agents.play.head_to_head import HeadToHead, head_to_head  # noqa: E402
from cluedo_env.agents.play.registry import make_agent  # noqa: E402
from cluedo_env.agents.players.base import Agent  # noqa: E402
from cluedo_env.training.players import check_player_names  # noqa: E402

from cluedo_env.checks import check_int  # noqa: E402
from cluedo_env.engine.views import PlayerView  # noqa: E402
from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from cluedo_env.rules import actions as A  # noqa: E402
from cluedo_env.rules.config import make_config  # noqa: E402

KINDS = ("move", "suggest", "show", "accuse")
SWAPS = ("none", *KINDS, "all-but-accuse")


def kind_of(actions: np.ndarray) -> np.ndarray:
    """(n,) engine action ids -> (n,) kind names (:data:`KINDS`)."""
    a = np.asarray(actions)
    return np.select([a < A.SUGGEST0, a < A.SHOW0, a < A.ACCUSE0], ["move", "suggest", "show"], "accuse")


def swapped_kinds(swap: str) -> frozenset[str]:
    """The kinds of decision ``swap`` (one of :data:`SWAPS`) hands to the other player."""
    if swap not in SWAPS:
        raise ValueError(f"swap {swap!r}: allowed {', '.join(SWAPS)}")
    if swap == "all-but-accuse":
        return frozenset(KINDS) - {"accuse"}
    return frozenset() if swap == "none" else frozenset({swap})


class Swapped(Agent):
    """``player`` in one seat, with the decisions of ``kinds`` taken by ``by`` (see the module docstring)."""

    def __init__(self, player: Agent, by: Agent, kinds: frozenset[str]) -> None:
        self.player, self.by, self.kinds = player, by, kinds
        self.name = f"{getattr(player, 'name', 'player')} with {'+'.join(sorted(kinds)) or 'nothing'} swapped"

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        self.player.reset(view, idx)
        self.by.reset(view, idx)

    def observe_step(self, view: PlayerView) -> None:
        self.player.observe_step(view)
        self.by.observe_step(view)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        own, other = self.player.act(view, idx), self.by.act(view, idx)  # both follow every decision
        own_kind, other_kind = kind_of(own), kind_of(other)
        take = np.isin(other_kind, list(self.kinds))
        if "accuse" in self.kinds:
            take |= own_kind == "accuse"
        else:
            take &= own_kind != "accuse"
        return np.where(take, other, own).astype(np.int64)


def decision_swap(player: str, by: str = "expert", against: str = "expert", swaps: tuple[str, ...] = SWAPS,
                  preset: str = "classic", num_players: int = 4, games: int = 2000,
                  seed: int = 0) -> dict[str, HeadToHead]:  # fmt: skip
    """{swap: the head-to-head of ``player`` with that swap against ``against``}, every swap on ``seed``."""
    check_player_names([player, by, against])  # registers the ckpt: and pretrained: loaders; a bad name fails here
    kinds = {swap: swapped_kinds(swap) for swap in swaps}
    config = make_config(preset, players=num_players)
    out = {}
    for swap, swapped in kinds.items():

        def make(name: str, seed: int | None = None, swapped: frozenset[str] = swapped) -> Agent:
            if name != "swapped":
                return make_agent(name, seed=seed)
            by_seed = None if seed is None else int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])
            return Swapped(make_agent(player, seed=seed), make_agent(by, seed=by_seed), swapped)

        result = head_to_head(config, "swapped", against, games, seed=seed, batch_size=min(games, 1024), make=make)
        result.a = f"{player}, {swap} swapped" if swap != "none" else player
        out[swap] = result
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("player", help="the player examined (as in evaluate: pretrained:NAME, ckpt:PATH, deducer ...)")
    ap.add_argument("--by", default="expert", help="the player that takes the swapped decisions (default expert)")
    ap.add_argument("--against", default="expert", help="the other seats' player (default expert)")
    ap.add_argument("--kinds", nargs="+", choices=SWAPS, default=list(SWAPS), help="swaps to play (default all)")
    ap.add_argument("--preset", default="classic")
    ap.add_argument("--num-players", type=int, default=4, help="seats at the table (default 4)")
    ap.add_argument("--games", type=int, default=2000, help="games per swap (default 2000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    check_int("--games", args.games, 1, 1 << 20)
    swaps = tuple(dict.fromkeys(args.kinds))
    print(f"playing {args.player} against {args.num_players - 1} x {args.against}, {args.games} games per swap "
          f"({len(swaps)} swaps, {args.preset})...", file=sys.stderr, flush=True)  # fmt: skip
    out = decision_swap(args.player, args.by, args.against, swaps, args.preset, args.num_players, args.games,
                        args.seed)  # fmt: skip
    print(f"| decisions taken by {args.by} | wins | 95% CI | wrong accusations (player / others) |")
    print("|---|---|---|---|")
    for swap, r in out.items():
        lo, hi = r.ci95
        print(f"| {swap} | {r.win_rate:.1%} | {lo:.1%}-{hi:.1%} | {r.wrong_accusations_a} / {r.wrong_accusations_b} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
