"""How much a player's suggestions teach, scored as the expert scores its own: where a learner loses to the expert.

    python scripts/suggestion_information.py pretrained:champion --games 256
    python scripts/suggestion_information.py ckpt:runs/champion/checkpoints/step_0000000000.zip deducer

The expert (:class:`cluedo_env.agents.players.expert.ExpertAgent`) plays every seat of ``--games`` games. Wherever
a seat suggests, each player named on the command line is shown the same position from that seat (its own notebook
and inputs, the seat's :class:`~cluedo_env.engine.views.PlayerView` only) and asked what it would suggest; nothing
it answers is played. Every legal suggestion there is scored by the expert's own measure
(:meth:`cluedo_env.agents.players.deducer.DeducerAgent.suggestion_scores` on the expert's holder probabilities:
the expected information about the envelope, in bits), and the table reports the mean score of each player's
choices beside the teacher's (the expert playing the games: the best by that measure), a uniformly random legal
suggestion's and the worst's.
"gap closed" is how far a player gets from random to the teacher: (player - random) / (teacher - random).

Why: an imitating network can agree with the expert about as often as a second expert with another seed does
(their suggestions tie often) and still play several points worse; this says whether its suggestions are the
reason. It measures choices on the expert's positions, not the player's own games.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluedo_env.agents.play.registry import make_agent  # noqa: E402
from cluedo_env.agents.play.runner import play_games  # noqa: E402
from cluedo_env.agents.players.base import Agent  # noqa: E402
from cluedo_env.training.players import check_player_names  # noqa: E402

from cluedo_env.checks import check_int  # noqa: E402
from cluedo_env.engine.views import PlayerView  # noqa: E402
from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from cluedo_env.rules import actions as A  # noqa: E402
from cluedo_env.rules.config import make_config  # noqa: E402

TRIPLE_CARDS = np.stack(A.triple_cards(np.arange(A.NUM_TRIPLES)), 1)  # (324, 3) the cards of each triple


class Scorer(Agent):
    """Plays one seat as an expert and scores, at each of its suggestions, the expert's choice and each asked
    player's (``players``: name -> agent for this seat), by the expert's measure."""

    def __init__(self, seed: int, players: dict[str, Agent]) -> None:
        self.expert = make_agent("expert", seed=seed)
        self.players = players
        self.name = "scorer"
        self.scores: dict[str, list[np.ndarray]] = {k: [] for k in ("teacher", "random", "worst", *players)}

    def reset(self, view: PlayerView, idx: np.ndarray) -> None:
        self.expert.reset(view, idx)
        for p in self.players.values():
            p.reset(view, idx)

    def observe_step(self, view: PlayerView) -> None:
        self.expert.observe_step(view)
        for p in self.players.values():
            p.observe_step(view)

    def act(self, view: PlayerView, idx: np.ndarray) -> np.ndarray:
        chosen = self.expert.act(view, idx)
        answers = {k: p.act(view, idx) for k, p in self.players.items()}  # every player follows every decision
        legal = view.legal_action_mask_of(idx)[:, A.SUGGEST0 : A.SHOW0]
        rows = np.flatnonzero(legal.any(1))
        if len(rows):
            g = idx[rows]
            prob = self.expert.probabilities(view, g)
            cards = np.broadcast_to(TRIPLE_CARDS, (len(g), A.NUM_TRIPLES, 3))
            score = np.where(legal[rows], self.expert.suggestion_scores(view, g, prob, cards), np.nan)
            at = np.arange(len(rows))
            self.scores["teacher"].append(score[at, chosen[rows] - A.SUGGEST0])
            self.scores["random"].append(np.nanmean(score, 1))
            self.scores["worst"].append(np.nanmin(score, 1))
            for k, a in answers.items():
                t = a[rows] - A.SUGGEST0
                ok = (t >= 0) & (t < A.NUM_TRIPLES)  # a player that does something else scores nothing here
                self.scores[k].append(np.where(ok, score[at, np.clip(t, 0, A.NUM_TRIPLES - 1)], np.nan))
        return chosen


def suggestion_information(players: list[str], preset: str = "classic", num_players: int = 4, games: int = 256,
                           seed: int = 0) -> dict[str, dict[str, float]]:  # fmt: skip
    """{chooser: {bits, gap_closed, suggestions}}: ``teacher`` (the expert playing the games), ``random`` (a
    uniformly random legal suggestion), ``worst``, then each of ``players`` by name."""
    if len(set(players)) != len(players) or {"teacher", "random", "worst"} & set(players):
        raise ValueError(f"players {players}: each at most once, and none named teacher, random or worst")
    check_player_names(list(players))  # registers the ckpt: and pretrained: loaders; a bad name fails here
    config = make_config(preset, players=num_players)
    # the teachers' seeds do not depend on who is asked: the same games whatever players are compared, and
    # the k-th player asked at seat s has the same seed in every comparison
    teacher_seeds = np.random.SeedSequence([seed, 0]).generate_state(num_players)
    seats = []
    for s in range(num_players):
        asked = {name: make_agent(name, seed=int(np.random.SeedSequence([seed, 1, s, k]).generate_state(1)[0]))
                 for k, name in enumerate(players)}  # fmt: skip
        seats.append(Scorer(int(teacher_seeds[s]), asked))
    play_games(config, seats, games, seed=seed, batch_size=min(games, 256))
    merged = {k: np.concatenate([x for sc in seats for x in sc.scores[k]] or [np.zeros(0)]) for k in seats[0].scores}
    best, rand = float(np.nanmean(merged["teacher"])), float(np.nanmean(merged["random"]))
    out = {}
    for k, v in merged.items():
        bits = float(np.nanmean(v)) if len(v) else float("nan")
        out[k] = {"bits": bits, "gap_closed": (bits - rand) / (best - rand) if best > rand else float("nan"),
                  "suggestions": int(np.isfinite(v).sum())}  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("players", nargs="+", help="players to ask (names as in evaluate: ckpt:PATH, pretrained:NAME, "
                                               "deducer ...)")  # fmt: skip
    ap.add_argument("--preset", default="classic")
    ap.add_argument("--num-players", type=int, default=4, help="seats at the table (default 4)")
    ap.add_argument("--games", type=int, default=256, help="expert games played (default 256)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    check_int("--games", args.games, 1, 1 << 20)
    print(f"scoring suggestions in {args.games} expert games ({args.preset}, {args.num_players} players)...",
          file=sys.stderr, flush=True)  # fmt: skip
    out = suggestion_information(args.players, args.preset, args.num_players, args.games, args.seed)
    print("| chooser | bits per suggestion | gap closed | suggestions |")
    print("|---|---|---|---|")
    for k, r in out.items():
        print(f"| {k} | {r['bits']:.3f} | {r['gap_closed']:.2f} | {r['suggestions']} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
