"""Learner options (agents/learner/inputs.py): the accusation gate and potential-based shaping.

* Shaping adds ``gamma * phi(s') - phi(s)`` per learner step with ``phi = 0`` at the end, so over an
  episode (gamma = 1) the shaped rewards sum to the plain ones minus ``phi(s_0)``; off, nothing changes.
* The potential is read from the learner's notebook: hidden swaps leave it unchanged.
* The gate closes the macro accusation unless the notebook is solved (or the triple is likely enough);
  a checkpoint trained with it plays with it (never a wrong accusation with ``solved``).
"""

from __future__ import annotations

import numpy as np
import pytest
from cluedo_env.agents.learner.belief import BeliefTracker
from cluedo_env.agents.learner.inputs import envelope_potential
from cluedo_env.agents.play.runner import seat_actions
from cluedo_env.agents.players.base import sample_legal
from cluedo_env.agents.players.heuristic import HeuristicAgent
from cluedo_env.training.learner_core import LearnerCore
from cluedo_env.training.learner_options import LearnerOptions
from helpers import config, swap_hidden

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules.config import ConfigError


def _core(**kw) -> LearnerCore:
    return LearnerCore(LearnerOptions(32, config("cards", players=4), opponents="heuristic", seat="random",
                                      macro_moves=True, macro_accuse=True, belief=True, observation="compact", seed=5,
                                      **kw))  # fmt: skip


@pytest.mark.parametrize("kind", ["triples", "unknown"])
def test_shaping_telescopes_over_each_episode_and_leaves_the_game_alone(kind):
    plain, shaped = _core(), _core(shaping={"kind": kind, "coef": 0.1, "gamma": 1.0})
    plain.reset(seed=3)
    shaped.reset(seed=3)
    phi0 = shaped._phi.copy()
    acc = np.zeros(32)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    episodes = moved = 0
    for _ in range(70):
        ma, mb = plain.action_masks(), shaped.action_masks()
        assert np.array_equal(ma, mb)  # the same games: shaping changes rewards only
        _, ra, ta, ua, ea = plain.step(sample_legal(ma, rng_a))
        _, rb, tb, ub, eb = shaped.step(sample_legal(mb, rng_b))
        assert np.array_equal(ea, eb) and np.array_equal(ta, tb)
        acc += rb.astype(np.float64) - ra
        moved += int((np.abs(rb - ra)[~ea] > 1e-6).sum())  # potential changes during a game
        for g in np.flatnonzero(ea):
            assert acc[g] == pytest.approx(-phi0[g], abs=1e-4)  # the sum of the shaping terms is -phi(s_0)
            episodes += 1
        acc[ea] = 0.0
        phi0[ea] = shaped._phi[ea]
    assert episodes >= 10 and moved > 0 and (phi0 <= 0).all()
    off, plain = _core(shaping={"kind": kind, "coef": 0.0}), _core()  # fresh: the opponents' generators too
    off.reset(seed=3)
    plain.reset(seed=3)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(20):
        _, ra, *_ = plain.step(sample_legal(plain.action_masks(), rng_a))
        _, rb, *_ = off.step(sample_legal(off.action_masks(), rng_b))
        assert np.array_equal(ra, rb)


def test_potential_does_not_depend_on_hidden_cards():
    cfg = config("classic", players=4)
    B = 6
    eng = VectorEngine(cfg, B)
    eng.reset(4)
    views = [PlayerView(eng, s) for s in range(4)]
    agents = [HeuristicAgent(seed=s) for s in range(4)]
    for a, v in zip(agents, views, strict=True):
        a.reset(v, np.arange(B))
    rng = np.random.default_rng(2)

    def phi(snap: dict, seat: int) -> tuple[float, float]:
        e = VectorEngine(cfg, 1)
        e.import_game(0, snap)
        t = BeliefTracker([PlayerView(e, s) for s in range(4)], seed=0)
        t.reset(np.array([0]), seat)
        t.update(np.array([0]))
        return tuple(float(envelope_potential(t, np.array([0]), k, 1.0)[0]) for k in ("triples", "unknown"))

    checked = 0
    for step in range(100):
        if step % 10 == 0:
            for g in np.flatnonzero(~eng.done):
                snap = eng.export_game(int(g))
                seat = int(rng.integers(4))
                alt = swap_hidden(snap, seat, rng)
                if alt is not None:
                    assert phi(snap, seat) == phi(alt, seat)
                    checked += 1
        eng.step(seat_actions(eng, agents, views))
    assert checked >= 15


@pytest.mark.parametrize("gate", ["solved", 0.6])
def test_gate_closes_the_accusation_unless_the_notebook_allows_it(gate):
    core = _core(accuse_gate=gate)
    core.reset(seed=7)
    k = core.actions.accuse_id
    rng = np.random.default_rng(0)
    opened = closed = 0
    for _ in range(150):
        m = core.action_masks()
        could = core.actions.mask(core.eng.legal_action_mask)[:, k]
        solved = core.belief.solved(core._ar)
        if gate == "solved":
            allowed = solved
        else:
            legal = core.eng.legal_action_mask[:, -324:]
            allowed = solved | (core.belief.best_probability(core._ar, np.where(legal.any(1)[:, None], legal, True))
                                >= gate - 1e-9)  # fmt: skip
        only = core.actions.mask(core.eng.legal_action_mask).sum(1) == 1
        assert np.array_equal(m[:, k], could & (allowed | only))  # R-A1 stays the engine's: the gate only masks
        opened += int((m[:, k] & ~only).sum())
        closed += int((could & ~m[:, k]).sum())
        core.step(sample_legal(m, rng))
    assert opened > 0 and closed > 0


def test_a_gated_checkpoint_plays_with_its_gate():
    from cluedo_env.training.sb3.checkpoints import PolicyAgent, make_meta
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv
    from sb3_contrib import MaskablePPO

    cfg = config("cards", players=4)
    env = CluedoVecEnv(4, cfg, seed=0, macro_moves=True, macro_accuse=True, belief=True, observation="compact",
                       accuse_gate="solved")  # fmt: skip
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=32, seed=0, policy_kwargs={"net_arch": [16]})
    model.cluedo_meta = make_meta(cfg, True, env.core.obs_size, macro_accuse=True, belief=True,
                                  observation="compact", accuse_gate="solved")  # fmt: skip
    B = 24
    eng = VectorEngine(cfg, B)
    eng.reset(1)
    views = [PlayerView(eng, s) for s in range(4)]
    agents = [PolicyAgent(model=model, deterministic=False), *(HeuristicAgent(seed=s) for s in range(3))]
    for a, v in zip(agents, views, strict=True):
        a.reset(v, np.arange(B))
    for _ in range(600):
        if eng.done.all():
            break
        eng.step(seat_actions(eng, agents, views))
        assert not eng.eliminated[:, 0].any()  # a solved notebook's accusation is never wrong
    assert (eng.done & (eng.winner == 0)).any()


def test_bad_option_values_say_what_is_allowed():
    from cluedo_env.training.sb3.config import load_train_config
    from cluedo_env.training.sb3.train import TrainConfigError

    env = {"preset": "cards", "belief": True, "macro_accuse": True, "observation": "compact"}
    with pytest.raises(TrainConfigError, match=r"accuse_gate='sure' .*'solved', or a probability"):
        load_train_config(env={**env, "accuse_gate": "sure"})
    with pytest.raises(TrainConfigError, match=r"accuse_gate.*\(0, 1\]"):
        load_train_config(env={**env, "accuse_gate": 1.5})
    with pytest.raises(TrainConfigError, match="accuse_gate needs macro_accuse"):
        load_train_config(env={**env, "macro_accuse": False, "accuse_gate": "solved"})
    with pytest.raises(TrainConfigError, match="shaping.kind='info' .*triples, unknown"):
        load_train_config(env={**env, "shaping": {"kind": "info"}})
    with pytest.raises(TrainConfigError, match=r"shaping: unknown key\(s\) \['coeff'\]"):
        load_train_config(env={**env, "shaping": {"kind": "triples", "coeff": 1}})
    with pytest.raises(TrainConfigError, match="shaping.coef=-1"):
        load_train_config(env={**env, "shaping": {"kind": "triples", "coef": -1}})
    with pytest.raises(TrainConfigError, match="shaping needs belief"):
        load_train_config(env={"preset": "cards", "shaping": {"kind": "unknown"}})
    cfg = load_train_config(env={**env, "accuse_gate": 0.8, "shaping": {"kind": "triples", "coef": 0.05}})
    assert cfg.env.accuse_gate == 0.8
    with pytest.raises(ConfigError, match="accuse_gate"):
        _core(accuse_gate="yes")



def test_learner_options_are_one_checked_frozen_object():
    """``LearnerOptions`` checks every option when it is built (the messages the envs give), fills in the
    shaping defaults and resolves the rules; the envs build it from their keyword arguments."""
    import dataclasses

    from cluedo_env.training.learner_options import LearnerOptions

    opts = LearnerOptions(4, "cards", rules={"players": 3}, belief=True, shaping={"kind": "triples"})
    assert opts.rules_config.players == 3 and opts.shaping == {"kind": "triples", "coef": 0.05, "gamma": 1.0}
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.seat = 1  # type: ignore[misc]
    assert dataclasses.replace(opts, seat="random").seat == "random"
    for kwargs, message in (({"batch_size": 0}, "batch_size must be a positive integer"),
                            ({"seat": 5}, r"seat must be 0\.\.3 or 'random'"),
                            ({"macro_accuse": True}, "macro_accuse=True needs belief=True"),
                            ({"illegal_action": "ignore"}, "illegal_action must be 'raise' or 'lose'"),
                            ({"unplayed_games": "hide"}, "unplayed_games must be one of"),
                            ({"advisor": "deducer"}, "advisor needs belief=True"),
                            ({"rules": {"players": 9}}, "players")):  # fmt: skip
        with pytest.raises(ConfigError, match=message):
            LearnerOptions(**{"config": "classic", **kwargs})
    with pytest.raises(ConfigError, match=r"Env: unknown keyword argument\(s\) \['nosuch'\]; env keywords: a, b"):
        LearnerOptions.from_keywords("Env", ["a", "b"], 2, "classic", nosuch=1)
    built = LearnerOptions.from_keywords("Env", [], 2, "classic", players=3, seat="random")
    assert built.rules == {"players": 3} and built.seat == "random" and built.batch_size == 2
