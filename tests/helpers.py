"""Helpers for the tests: build a game in a chosen position from a snapshot, name actions and places.

Positions are made the way a bug report would make them: take a fresh game's snapshot
(``Game.to_dict``), edit the fields that matter, and load it back (``Game.from_dict``), so
every position a test uses also passes the snapshot validator.

    g = position(suspects={"Scarlet": "Hall", "Mustard": (17, 11)}, phase="suggest")
    g.step(suggest("Mustard", "Rope", "Hall"))
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from cluedo_env.agents.players.base import Agent

from cluedo_env.engine.reference import Game
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import load_board
from cluedo_env.rules.cards import CARD_NAMES, card_category, card_id, room_id, suspect_id, weapon_id
from cluedo_env.rules.config import RulesConfig

BOARD = load_board()

# A fixed deal for four players (R-S5: sizes 5, 5, 4, 4) and the envelope that goes with it.
ENVELOPE = ["Plum", "Wrench", "Study"]
HANDS4 = [
    ["Scarlet", "Candlestick", "Kitchen", "Ballroom", "Conservatory"],
    ["Mustard", "Dagger", "Dining Room", "Billiard Room", "Library"],
    ["White", "Lead Pipe", "Lounge", "Hall"],
    ["Green", "Peacock", "Revolver", "Rope"],
]

Place = str | tuple[int, int] | list[int]


def config(preset: str = "classic", **flags: Any) -> RulesConfig:
    return RulesConfig.from_preset(preset, **flags)


def deal(envelope: list[str], players: int) -> list[list[str]]:
    """The cards not in ``envelope``, in card-id order, dealt one at a time from seat 0."""
    held = [c for c in range(len(CARD_NAMES)) if CARD_NAMES[c] not in envelope]
    return [[CARD_NAMES[c] for c in held[p::players]] for p in range(players)]


def position(
    cfg: RulesConfig | None = None,
    *,
    seed: int = 0,
    suspects: dict[str, Place] | None = None,
    weapons: dict[str, str] | None = None,
    phase: str | None = None,
    current: int | None = None,
    roll: int | None = None,
    hands: list[list[str]] | None = None,
    envelope: list[str] | None = None,
    dragged: Iterable[int] | None = None,
    eliminated: Iterable[int] | None = None,
    turn_count: int | None = None,
) -> Game:
    """A game of ``cfg`` (default classic, 4 players) in the position the arguments describe.

    Unnamed fields keep the values of ``Game(cfg, seed)``: tokens on their start squares,
    that seed's weapons, deal and envelope. ``suspects`` maps a suspect to a room name or a
    ``(row, col)`` square; ``dragged`` and ``eliminated`` are the seats that are so. Giving
    only ``envelope`` deals the other cards with :func:`deal`; giving only ``hands`` puts the
    three cards nobody holds in the envelope.
    """
    cfg = cfg or RulesConfig()
    d = Game(cfg, seed=seed).to_dict()
    players = cfg.players
    for name, place in (suspects or {}).items():
        d["suspects"][name] = place if isinstance(place, str) else list(place)
    d["weapons"] = d["weapons"] if weapons is None else {**d["weapons"], **weapons}
    if envelope is not None or hands is not None:
        if hands is None:
            hands = deal(list(envelope), players)
        if envelope is None:
            held = {c for hand in hands for c in hand}
            envelope = [c for c in CARD_NAMES if c not in held]
        d["hands"] = [list(h) for h in hands]
        d["envelope"] = list(envelope)
    for key, value in (("phase", phase), ("current", current), ("roll", roll), ("turn_count", turn_count)):
        if value is not None:
            d[key] = value
    if dragged is not None:
        d["dragged"] = [p in set(dragged) for p in range(players)]
    if eliminated is not None:
        d["eliminated"] = [p in set(eliminated) for p in range(players)]
    return Game.from_dict(json.loads(json.dumps(d)), seed=seed)


# ---------------------------------------------------------------- places and actions
def loc(place: Place) -> int:
    """Location id of a room name or a ``(row, col)`` square."""
    if isinstance(place, str):
        return BOARD.room_loc(room_id(place))
    return BOARD.square_of[tuple(place)]


def name(location: int) -> str | tuple[int, int]:
    """Room name or ``(row, col)`` of a location id (the inverse of :func:`loc`)."""
    if BOARD.is_room(location):
        return BOARD.loc_name(location)
    return BOARD.squares[location]


def where(g: Game, suspect: str) -> str | tuple[int, int]:
    return name(g.pos[suspect_id(suspect)])


def move(place: Place) -> int:
    return A.MOVE0 + loc(place)


def suggest(suspect: str, weapon: str, room: str) -> int:
    return A.SUGGEST0 + A.triple_index(suspect_id(suspect), weapon_id(weapon), room_id(room))


def accuse(suspect: str, weapon: str, room: str) -> int:
    return A.ACCUSE0 + A.triple_index(suspect_id(suspect), weapon_id(weapon), room_id(room))


def show(card: str) -> int:
    return A.SHOW0 + card_id(card)


def kind(action: int) -> str:
    """ROLL, PASSAGE, STAY, END_TURN, MOVE, SUGGEST, SHOW or ACCUSE."""
    if action < A.MOVE0:
        return ("ROLL", "PASSAGE", "STAY", "END_TURN")[action]
    for first, label in ((A.ACCUSE0, "ACCUSE"), (A.SHOW0, "SHOW"), (A.SUGGEST0, "SUGGEST")):
        if action >= first:
            return label
    return "MOVE"


def kinds(g: Game) -> dict[str, int]:
    """How many legal actions of each kind the actor has, e.g. ``{"ROLL": 1, "ACCUSE": 324}``."""
    return dict(Counter(kind(a) for a in g.legal_actions()))


def dests(g: Game) -> set[str | tuple[int, int]]:
    """The legal MOVE destinations, as room names and ``(row, col)`` squares."""
    return {name(a - A.MOVE0) for a in g.legal_actions() if A.MOVE0 <= a < A.SUGGEST0}


def dests_after_roll(g: Game, roll: int) -> set[str | tuple[int, int]]:
    """Roll ``roll`` (forced) on a copy of ``g`` and return the destinations it opens."""
    h = Game.from_dict(g.to_dict())
    h.step(A.ROLL, roll=roll)
    return dests(h)


def swap_hidden(snapshot: dict, seat: int, rng: np.random.Generator) -> dict | None:
    """The same position for ``seat`` with an envelope card and a same-category card of another
    player's hand swapped, both never named in the history (so every public fact stays true);
    None when no such pair exists."""
    named = {c for rec in snapshot["history"] for c in rec["cards"]}
    options = []
    for cat, card in enumerate(snapshot["envelope"]):
        if card in named:
            continue
        for p, hand in enumerate(snapshot["hands"]):
            if p == seat:
                continue
            for other in hand:
                if other not in named and card_category(card_id(other)) == cat:
                    options.append((cat, p, other))
    if not options:
        return None
    cat, p, other = options[rng.integers(len(options))]
    out = copy.deepcopy(snapshot)
    card = out["envelope"][cat]
    out["envelope"][cat] = other
    out["hands"][p] = sorted([c for c in out["hands"][p] if c != other] + [card], key=card_id)
    return out


def hidden_swaps(preset: str = "classic", players: int = 4, batch: int = 8, steps: int = 600, every: int = 7,
                 seed: int = 5) -> Iterable[tuple[dict, dict, int]]:  # fmt: skip
    """(snapshot, the same with hidden cards swapped (:func:`swap_hidden`), the seat to act) of positions from
    heuristic players' games, every ``every`` steps, for tests that a seat's inputs ignore what it cannot know."""
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import seat_actions

    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.engine.views import PlayerView
    from cluedo_env.rules.config import make_config

    eng = VectorEngine(make_config(preset, players=players), batch)
    eng.reset(seed)
    views = [PlayerView(eng, s) for s in range(players)]
    agents = [make_agent("heuristic", seed=s) for s in range(players)]
    for agent, view in zip(agents, views, strict=True):
        agent.reset(view, np.arange(batch))
    rng = np.random.default_rng(3)
    for step in range(steps):
        if step % every == 0:
            for g in range(batch):
                if eng.done[g]:
                    continue
                snap = eng.export_game(g)
                seat = int(eng.actor[g])  # the seat to act: where an accusation may be open
                alt = swap_hidden(snap, seat, rng)
                if alt is not None:
                    yield snap, alt, seat
        if eng.done.all():
            break
        eng.step(seat_actions(eng, agents, views))


def quiet_actions(core: Any, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions of a learner core that accuse only where nothing else is legal: the games go on and
    facts pile up."""
    mask = core.action_masks()
    accusations = core.actions.mask(np.eye(A.NUM_ACTIONS, dtype=bool)[A.ACCUSE0 :]).any(0)
    quiet = mask & ~accusations
    quiet[~quiet.any(1)] = mask[~quiet.any(1)]
    return np.array([rng.choice(np.flatnonzero(r)) for r in quiet])


def train_tiny_perceiving_run(tmp_path: Any, **env: Any) -> tuple[Any, dict, Any]:
    """A tiny run (imitation, then PPO) on the classic board against experts with the learner options ``env``;
    returns (model.zip's path, its meta, a ``ckpt:`` player of it that has played 16 whole games against experts)."""
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.training.sb3.checkpoints import load_model
    from cluedo_env.training.sb3.train import Trainer
    from test_imitation import _tiny

    from cluedo_env.rules.config import make_config

    cfg = _tiny(tmp_path / "run", env={"preset": "classic", "opponents": "expert", **env})
    Trainer(cfg, progress=False).run()
    path = tmp_path / "run" / "model.zip"
    player = make_agent(f'ckpt:{path}{{"deterministic": false}}', seed=0)
    others = [make_agent("expert", seed=k) for k in range(3)]
    records = play_games(make_config("classic", players=4), [player, *others], 16, batch_size=8, seed=1)
    assert len(records) == 16
    return path, load_model(path).cluedo_meta, player


class LegalityChecked(Agent):
    """A player whose every action is checked against the legal mask (its fallback counter would hide an
    illegal choice that it replaced)."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner

    def reset(self, view, idx):
        self.inner.reset(view, idx)

    def act(self, view, idx):
        a = self.inner.act(view, idx)
        assert view.legal_action_mask[idx, a].all()
        return a


# The smallest RLlib run of the bulk sampler the tests train: a card game, one local runner, one minibatch epoch.
RLLIB_SMALL = {
    "sampler": "bulk",
    "env": {"preset": "cards", "players": 4},
    "env_runners": {"num_env_runners": 0, "num_envs_per_env_runner": 16, "rollout_fragment_length": 8},
    "ppo": {"train_batch_size_per_learner": 128, "minibatch_size": 64, "num_epochs": 1},
    "model": {"fcnet_hiddens": [32]},
    "eval": {"every": 0},
    "checkpoint_every": 1,
}
