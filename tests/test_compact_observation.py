"""The compact learner observation (agents/learner/compact_observation.py): layout, content, privacy, options.

Every compact slot is a copy or a function of the engine's observation and the belief tracker, so
each piece is checked against its source in the same games, and the whole vector against hidden
changes of the deal (other hands, the envelope), which must leave it byte-identical.
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.agents.learner.belief import BeliefTracker, belief_layout
from cluedo_env.agents.learner.compact_observation import (
    COMPACT_HISTORY,
    CompactObservation,
    compact_layout,
    compact_size,
)
from cluedo_env.agents.planning.movement import travel_turns
from cluedo_env.agents.play.runner import seat_actions
from cluedo_env.agents.players.base import sample_legal
from cluedo_env.agents.players.heuristic import HeuristicAgent
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import LearnerOptions
from cluedo_env.training.single_agent import CluedoSingleAgentEnv
from helpers import config, swap_hidden
from references.compact_observation import encode_reference

from cluedo_env.engine.observation import layout
from cluedo_env.engine.observation import size as observation_size
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules.board import NUM_LOCATIONS, ROOM_LOC0
from cluedo_env.rules.cards import NUM_ROOMS, NUM_SUSPECTS
from cluedo_env.rules.config import ConfigError


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("classic", 6), ("cards", 3)])
def test_layout_is_contiguous_and_about_a_third_of_the_full_one(preset, players):
    cfg = config(preset, players=players)
    pieces = compact_layout(cfg)
    at = 0
    for p in pieces:
        assert p.offset == at and p.doc, p.name
        at += p.size
    assert at == compact_size(cfg)
    names = [p.name for p in pieces]
    assert len(set(names)) == len(names)
    assert ("token_room" in names) == cfg.has_board and "token_location" not in names
    full = observation_size(cfg) + 2 * (players + 1) * 21 + 4
    if cfg.has_board:
        assert compact_size(cfg) < 0.37 * full  # 958 vs 2,842 with 4 players, 1,042 vs 2,926 with 6


def _pair(preset: str, seed: int, n: int = 16):
    """Two learner cores playing the same games, one with the full observation and one with the compact."""
    kw = dict(opponents="heuristic", seat="random", macro_moves=preset == "classic", macro_accuse=True, belief=True)
    full = LearnerCore(LearnerOptions(n, preset, seed=seed, **kw))
    compact = LearnerCore(LearnerOptions(n, preset, seed=seed, observation="compact", **kw))
    return full, compact


@pytest.mark.parametrize("preset", ["classic", "cards"])
def test_every_piece_matches_its_source(preset):
    full, compact = _pair(preset, seed=5)
    cfg = full.config
    eng_pieces = {p.name: p for p in layout(cfg)}
    bel = {name: (shape, off) for name, shape, off in belief_layout(cfg.players)}
    D = observation_size(cfg)
    fo, co = full.reset(seed=5).copy(), compact.reset(seed=5).copy()
    rng = np.random.default_rng(0)
    checked_rooms = 0
    for _step in range(60):
        pieces = {p.name: p for p in compact_layout(cfg)}

        def piece(obs, p):
            return obs[:, p.offset : p.offset + p.size]

        for name, p in pieces.items():
            got = piece(co, p)
            if name in eng_pieces:  # kept pieces, and the newest history rows
                assert np.array_equal(got, piece(fo, eng_pieces[name])[:, : p.size]), name
            elif name in bel:
                shape, off = bel[name]
                assert np.array_equal(got, fo[:, D + off : D + off + p.size]), name
        p = pieces["envelope_prob"]
        probs = compact.belief.envelope_probabilities(np.arange(compact.N))
        levels = piece(co, p).reshape(-1, 21, 4)
        assert np.array_equal(levels, (probs[:, :, None] > [0, 0.25, 0.5, 0.75]).astype(np.int8))
        assert (np.diff(levels, axis=-1) <= 0).all()  # a thermometer: each level implies the ones below
        if cfg.has_board:
            t = eng_pieces["token_location"]
            loc = piece(fo, t).reshape(-1, NUM_SUSPECTS, NUM_LOCATIONS).argmax(-1)
            rooms = piece(co, pieces["token_room"]).reshape(-1, NUM_SUSPECTS, NUM_ROOMS + 1)
            assert (rooms.sum(-1) == 1).all()
            want = np.where(loc >= ROOM_LOC0, loc - ROOM_LOC0, NUM_ROOMS)
            assert np.array_equal(rooms.argmax(-1), want)
            me = piece(fo, eng_pieces["my_suspect"]).argmax(1)
            my_loc = loc[np.arange(len(loc)), me]
            turns = travel_turns(cfg.dice)[my_loc][:, :, None] <= np.array([1, 2, 3, 5]) + 1e-9
            assert np.array_equal(piece(co, pieces["room_turns"]).reshape(-1, 9, 4), turns.astype(np.int8))
            checked_rooms += int((my_loc >= ROOM_LOC0).sum())
        ar = np.arange(compact.N)  # the compiled encoder gives what its numpy statement gives
        engine_obs = compact.eng.observe(player=compact.seat, idx=ar)
        enc = compact.compact
        want = encode_reference(enc, engine_obs, compact.belief, ar)
        assert np.array_equal(enc.encode(engine_obs, compact.belief, ar), want)
        acts = sample_legal(full.action_masks(), rng)
        assert np.array_equal(full.action_masks(), compact.action_masks())
        fo = full.step(acts)[0].copy()
        co = compact.step(acts)[0].copy()
    assert COMPACT_HISTORY == pieces["hist_valid"].size
    assert (co[:, pieces["hist_valid"].offset] == 1).any()
    if cfg.has_board:
        assert checked_rooms > 0  # some tokens were in rooms: both branches of token_room ran


def test_compact_observation_does_not_depend_on_hidden_cards():
    """Swapping an unnamed envelope card with an unnamed card of another hand leaves it byte-identical."""
    cfg = config("classic", players=4)
    B = 6
    eng = VectorEngine(cfg, B)
    eng.reset(11)
    views = [PlayerView(eng, s) for s in range(4)]
    agents = [HeuristicAgent(seed=s) for s in range(4)]
    for a, v in zip(agents, views, strict=True):
        a.reset(v, np.arange(B))
    rng = np.random.default_rng(2)
    encoder = CompactObservation(cfg)
    checked = 0

    def compact(snap: dict, seat: int) -> np.ndarray:
        e = VectorEngine(cfg, 1)
        e.import_game(0, snap)
        t = BeliefTracker([PlayerView(e, s) for s in range(4)], seed=0)
        one = np.array([0])
        t.reset(one, seat)
        t.update(one)
        return encoder.encode(e.observe(player=seat, idx=one), t, one)[0]

    for step in range(120):
        if step % 10 == 0:
            for g in range(B):
                if eng.done[g]:
                    continue
                snap = eng.export_game(g)
                seat = int(rng.integers(4))
                alt = swap_hidden(snap, seat, rng)
                if alt is None:
                    continue
                assert np.array_equal(compact(snap, seat), compact(alt, seat))
                checked += 1
        if eng.done.all():
            break
        eng.step(seat_actions(eng, agents, views))
    assert checked >= 20


def test_bad_options_are_refused():
    with pytest.raises(ConfigError, match="needs belief=True"):
        LearnerCore(LearnerOptions(2, "classic", observation="compact"))
    with pytest.raises(ConfigError, match=r"one of \['full', 'compact'\]"):
        LearnerCore(LearnerOptions(2, "classic", observation="small", belief=True))
    encoder = CompactObservation(config("classic", players=4))
    with pytest.raises(ValueError, match="engine observations of shape"):
        encoder.encode(np.zeros((2, 10), np.int8), None, np.arange(2))


def test_gymnasium_env_with_the_compact_observation():
    from gymnasium.utils.env_checker import check_env

    env = CluedoSingleAgentEnv("classic", opponents="heuristic", macro_moves=True, macro_accuse=True, belief=True,
                               observation="compact", seed=0)  # fmt: skip
    assert env.observation_space.shape == (compact_size(env.core.config),)
    check_env(env, skip_render_check=True)
