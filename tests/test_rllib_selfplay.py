"""Batched multi-agent self-play on RLlib (training/rllib/selfplay_runner.py, ``setup: selfplay``, ``sampler: bulk``):
each seat's episodes are exactly that seat's decisions, observations and rewards in the games the engine played
(rebuilt independently from a log of every engine step), chunks continue across ``sample()`` calls, seats map to
modules as ``policy_mapping_fn`` says, frozen modules act but return nothing, and PPO trains, checkpoints, resumes
and the result plays as an ``rllib:`` player. Skipped without ray[rllib]."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] not installed (pins gymnasium==1.2.2, docs/training.md)")
pytestmark = pytest.mark.xdist_group("ray")  # one test worker runs every Ray cluster, one at a time

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

SMALL = {
    "sampler": "bulk",
    "env": {"preset": "classic", "players": 4},  # last_standing=wins (R-E2): games with a winner
    "selfplay": {"policies": ["main", "rival"], "train": None, "mapping": "shuffled"},
    "env_runners": {"num_env_runners": 0, "num_envs_per_env_runner": 6, "rollout_fragment_length": 12},
    "ppo": {"train_batch_size_per_learner": 72, "minibatch_size": 36, "num_epochs": 1},  # 6 games x 12 steps
    "model": {"fcnet_hiddens": [32]},
    "eval": {"every": 0},
    "checkpoint_every": 1,
}


def _runner(**overrides):
    from cluedo_env.training.rllib.algorithm import build_config
    from cluedo_env.training.rllib.config import load_config
    from cluedo_env.training.rllib.selfplay_runner import BulkSelfPlayRunner

    cfg = load_config("configs/experiments/rllib_selfplay_multiagent.yaml", **{**SMALL, **overrides})
    return BulkSelfPlayRunner(config=build_config(cfg), worker_index=0)


def _less_accusing(runner, by: float = 5.0) -> None:
    """Lower every module's accusation logits: an untrained module accuses (wrongly) at once, so seat 3 would win
    every classic game by R-E2 in three steps; with fewer accusations games last longer and any seat may win."""
    from cluedo_env.rules import actions as A

    for mid in runner.module.keys():
        head = [m for m in runner.module[mid].pi.modules() if isinstance(m, torch.nn.Linear)][-1]
        with torch.no_grad():
            head.bias[A.ACCUSE0 :] -= by


def _log_engine(runner):
    """Start the runner's games and record, at every engine step, what each game's actor saw and did, the
    rewards and end flags, and every seat's view of each game that ended (before the runner deals a new one)."""
    runner._bulk_reset()
    eng = runner._eng
    step = eng.step
    log = []

    def logged(actions, *args, **kwargs):
        actor = eng.actor.astype(np.int64)
        obs = np.concatenate([eng.observe(player=actor), eng.legal_action_mask.astype(np.int8)], 1)
        gids = list(runner._game_id)
        res = step(actions, *args, **kwargs)
        over = np.flatnonzero(res.terminated | res.truncated)
        finals = {int(g): [eng.observe(player=s, idx=np.array([g]))[0] for s in range(eng.P)] for g in over}
        log.append({"actor": actor, "obs": obs, "act": np.array(actions), "rew": res.rewards.copy(),
                    "term": res.terminated.copy(), "trunc": res.truncated.copy(), "finals": finals, "gids": gids})
        return res

    eng.step = logged
    return log


def _expected(log, n, P):
    """Per (game id, agent): (observations, actions, rewards, terminated, truncated, finished), from the log."""
    out = {}
    current = [[[] for _ in range(P)] for _ in range(n)]  # per game row and seat: [(obs, action)]
    for row in log:
        for g in range(n):
            current[g][int(row["actor"][g])].append((row["obs"][g], int(row["act"][g])))
            if row["term"][g] or row["trunc"][g]:
                for s in range(P):
                    if not current[g][s]:
                        continue
                    final = np.zeros_like(row["obs"][g])
                    final[: len(row["finals"][g][s])] = row["finals"][g][s]
                    final[len(row["finals"][g][s])] = 1  # a finished game's row allows action 0 only
                    obs = np.stack([o for o, _ in current[g][s]] + [final])
                    rew = np.zeros(len(current[g][s]), np.float32)
                    rew[-1] = row["rew"][g, s]
                    out[(row["gids"][g], f"player_{s}")] = (obs, np.array([a for _, a in current[g][s]]), rew,
                                                           bool(row["term"][g]), bool(row["trunc"][g]), True)
                current[g] = [[] for _ in range(P)]
    gids = log[-1]["gids"]
    for g in range(n):
        for s in range(P):
            dec = current[g][s]
            if dec:  # unfinished: the last decision is still open, its observation ends the returned steps
                out[(gids[g], f"player_{s}")] = (np.stack([o for o, _ in dec]), np.array([a for _, a in dec[:-1]]),
                                                 np.zeros(len(dec) - 1, np.float32), False, False, False)
    return out


def _joined(chunks):
    """Chunks of one seat's episode (by id), in order, joined: (observations, actions, rewards, ends)."""
    chunks = sorted(chunks, key=lambda c: c.t_started)
    t = 0
    obs, act, rew = [], [], []
    for j, c in enumerate(chunks):
        assert c.t_started == t, "chunks continue where the last one stopped"
        o = c.get_observations(slice(0, len(c) + 1))
        if j:
            assert (o[0] == obs[-1][-1]).all(), "a chunk starts with the open decision the last one ended with"
            o = o[1:]
        obs.append(o)
        act.append(c.get_actions(slice(0, len(c))))
        rew.append(c.get_rewards(slice(0, len(c))))
        t += len(c)
    assert not any(c.is_done for c in chunks[:-1])
    return np.concatenate(obs), np.concatenate(act), np.concatenate(rew), chunks[-1]


SHUFFLED_BOT = {"policies": ["main"], "train": None, "mapping": "shuffled", "bots": ["heuristic"]}


@pytest.mark.parametrize("selfplay", [SMALL["selfplay"], SHUFFLED_BOT], ids=["two_modules", "module_and_bot"])
def test_seat_episodes_are_the_games_the_engine_played(selfplay):
    from cluedo_env.training.rllib.selfplay_runner import GameRef, seat_mapping

    names = tuple(selfplay["policies"]) + tuple(selfplay.get("bots", ()))
    runner = _runner(selfplay=selfplay)
    _less_accusing(runner)
    log = _log_engine(runner)
    n, P = runner._games, 4
    fragments = [runner.sample(explore=True) for _ in range(4)]
    chunks = [c for f in fragments for c in f]
    assert len(log) == 4 * 12
    n_act = int(runner.module["main"].action_space.n)
    groups: dict = {}
    for c in chunks:
        assert len(c) > 0 and c.agent_id.startswith("player_") and c.module_id in selfplay["policies"]
        groups.setdefault(c.id_, []).append(c)
    expected = _expected(log, n, P)
    seen = set()
    for chunks_of in groups.values():
        first = chunks_of[0]
        key = (first.multi_agent_episode_id, first.agent_id)
        assert key not in seen
        seen.add(key)
        assert all((c.multi_agent_episode_id, c.agent_id, c.module_id) == (*key, first.module_id) for c in chunks_of)
        assert first.module_id == seat_mapping(first.agent_id, GameRef(key[0]), policies=names, mapping="shuffled",
                                               players=4)  # fmt: skip
        obs, act, rew, last = _joined(chunks_of)
        e_obs, e_act, e_rew, e_term, e_trunc, finished = expected[key]
        assert last.is_done == finished and last.is_terminated == e_term and last.is_truncated == e_trunc
        np.testing.assert_array_equal(act, e_act)
        np.testing.assert_array_equal(obs, e_obs)
        np.testing.assert_array_equal(rew, e_rew)
        assert (obs[np.arange(len(act)), obs.shape[1] - n_act + act] == 1).all()  # every action legal
    # every module seat that acted and finished a transition has its episode; nothing else (bots) is returned
    modules = {k for k, v in expected.items() if len(v[1])
               and seat_mapping(k[1], GameRef(k[0]), policies=names, mapping="shuffled", players=4) != "heuristic"}
    assert seen == modules and len(modules) < len(expected) if "bots" in selfplay else seen == modules
    # finished games: +1 for the winner, -1 for the others (R-E1..R-E4), as the engine paid them
    winners = [int(np.argmax(r["rew"][g])) for r in log for g in range(n) if r["term"][g] and r["rew"][g].max() > 0]
    if "bots" not in selfplay:  # (heuristic bots take ~50 turns a game: none ends here)
        assert len(set(winners)) >= 2, "games won by different seats (else a seat mix-up could go unseen)"
    for r in log:
        for g in np.flatnonzero(r["term"]):
            assert sorted(r["rew"][g].tolist()) in ([-1.0] * 3 + [1.0], [-1.0] * 4)
    # logp and dist inputs are the module's for the row it saw
    for c in chunks[:20]:
        o = c.get_observations(slice(0, len(c)))
        with torch.no_grad():
            logits = runner.module[c.module_id].forward_inference({Columns.OBS: torch.from_numpy(o)})[
                Columns.ACTION_DIST_INPUTS
            ]
        a = torch.from_numpy(c.get_actions(slice(0, len(c))))
        logp = torch.log_softmax(logits, -1)[torch.arange(len(c)), a].numpy()
        np.testing.assert_allclose(c.get_extra_model_outputs(Columns.ACTION_LOGP, slice(0, len(c))), logp,
                                   rtol=1e-4, atol=1e-4)  # fmt: skip
    metrics = runner.get_metrics()
    assert metrics["num_env_steps_sampled_lifetime"].peek() == 4 * 12 * n
    module_steps = {m: v.peek() for m, v in metrics["num_module_steps_sampled_lifetime"].items()}
    decided: dict = {}  # decisions per module or bot, from the log
    for r in log:
        for g in range(n):
            name = seat_mapping(f"player_{r['actor'][g]}", GameRef(r["gids"][g]), policies=names, mapping="shuffled",
                                players=4)  # fmt: skip
            decided[name] = decided.get(name, 0) + 1
    assert module_steps == {m: decided[m] for m in selfplay["policies"]}
    if "bots" in selfplay:
        assert decided["heuristic"] > 0
        assert all(agent.fallbacks == 0 for agents in runner._bots for agent in agents if hasattr(agent, "fallbacks"))
    games = sum(bool(r["term"][g] or r["trunc"][g]) for r in log for g in range(n))
    assert metrics["num_episodes_lifetime"].peek() == games


def test_learner_inputs_seat_episodes_follow_the_engine():
    """Modules on the vs_bots learner's inputs (belief features, compact observation, macro moves and accusation):
    each seat's chunks hold its decisions in order, in the learner's space: same count, rewards and ends as the
    engine log, every action legal under the chunk's own mask and the one the engine received (mapped back)."""
    from cluedo_env.training.rllib.selfplay_runner import input_sizes

    from cluedo_env.envs.learner_actions import LearnerActions, engine_to_macro
    from cluedo_env.rules import actions as A

    opts = {"belief": True, "observation": "compact", "macro_moves": True, "macro_accuse": True}
    runner = _runner(learner=opts, selfplay=SHUFFLED_BOT)
    log = _log_engine(runner)
    n, P = runner._games, 4
    chunks = [c for _ in range(4) for c in runner.sample(explore=True)]
    width, n_act = input_sizes(runner._eng.config, opts)
    assert (runner._D, runner._A) == (width, n_act) and n_act == LearnerActions(True, True).n
    expected = _expected(log, n, P)
    groups: dict = {}
    for c in chunks:
        groups.setdefault((c.multi_agent_episode_id, c.agent_id), []).append(c)
    assert groups
    accuse_id = LearnerActions(True, True).accuse_id
    for key, chunks_of in groups.items():
        obs, act, rew, last = _joined(chunks_of)
        _, e_act, e_rew, e_term, e_trunc, finished = expected[key]
        assert obs.shape[1] == width + n_act and len(act) == len(e_act)
        assert (obs[np.arange(len(act)), width + act] == 1).all()  # legal in the learner's space
        np.testing.assert_array_equal(rew, e_rew)
        assert last.is_done == finished and last.is_terminated == e_term and last.is_truncated == e_trunc
        is_move = (e_act >= A.MOVE0) & (e_act < A.SUGGEST0)
        is_accuse = e_act >= A.ACCUSE0
        assert ((act == accuse_id) == is_accuse).all()  # the macro accusation became an engine accusation
        plain = ~is_move & ~is_accuse
        np.testing.assert_array_equal(act[plain], engine_to_macro(e_act[plain]))


def test_bots_that_follow_every_step_get_their_seat_view():
    """A bot with an ``observe_step`` hook (as ``ckpt:`` players and the tournament's wrappers have) is called with
    its seat's view after every engine step, and sampling goes on (a regression: the hook loop once overwrote the
    observation buffer)."""
    from cluedo_env.agents.play.registry import register_agent
    from cluedo_env.agents.players.heuristic import HeuristicAgent

    seen = []

    class Following(HeuristicAgent):
        def observe_step(self, view):
            seen.append(view.seat)

    register_agent("following_heuristic", lambda seed=None, **kw: Following(seed=seed, **kw), replace=True)
    runner = _runner(selfplay={"policies": ["main"], "train": None, "mapping": "by_seat",
                               "bots": ["following_heuristic"]})  # fmt: skip
    eps = runner.sample(explore=True) + runner.sample(explore=True)
    assert eps and {e.module_id for e in eps} == {"main"}
    assert len(seen) == 2 * 12 * 4 and set(seen) == {0, 1, 2, 3}  # every step, each seat's bot, its own view


def test_league_seats_play_frozen_snapshots_of_main():
    """``selfplay.bots: [league]``: seats played by frozen copies of ``main`` taken by the snapshot callback (random
    legal moves before the first), one snapshot per game; only ``main`` returns steps."""
    from cluedo_env.training.rllib.league import add_snapshot

    runner = _runner(selfplay={"policies": ["main"], "train": None, "mapping": "by_seat", "bots": ["league"]},
                     league={"snapshot_every": 1, "max_snapshots": 2})  # fmt: skip
    first = runner.sample(explore=True)
    assert first and {e.module_id for e in first} == {"main"}
    assert [add_snapshot(runner, 2) for _ in range(3)] == [1, 2, 2]  # the oldest dropped beyond max_snapshots
    pool = runner._league_pool
    frozen = pool.modules[pool.versions()[-1]]
    main = runner.module["main"]
    pairs = zip(frozen.parameters(), main.parameters(), strict=True)
    assert frozen is not main and all(torch.equal(a, b) for a, b in pairs)
    with torch.no_grad():
        next(main.parameters()).add_(1.0)  # training main later does not move its snapshots
    assert not torch.equal(next(frozen.parameters()), next(main.parameters()))
    runner._eng.reset_games(np.arange(runner._games))  # new games: league seats draw a snapshot each
    runner._map_seats(np.arange(runner._games))
    drawn = np.concatenate([agents[0].game_version for agents in runner._bots])
    assert set(drawn.tolist()) <= set(pool.versions()) and len(drawn)
    assert runner.sample(explore=True)


def test_frozen_modules_act_but_return_no_steps():
    runner = _runner(selfplay={"policies": ["main", "rival"], "train": ["main"], "mapping": "by_seat"})
    eps = runner.sample(explore=True) + runner.sample(explore=True)
    assert eps and {e.module_id for e in eps} == {"main"}
    assert {e.agent_id for e in eps} <= {"player_0", "player_2"}  # by_seat: seats 0 and 2 play main
    steps = runner.get_metrics()["num_module_steps_sampled_lifetime"]
    assert steps["rival"].peek() > 0 and steps["main"].peek() > 0


def test_seat_mapping():
    from cluedo_env.training.rllib.selfplay_runner import GameRef, seat_mapping

    assert [seat_mapping(f"player_{k}", None, policies=("a", "b", "c")) for k in range(4)] == ["a", "b", "c", "a"]
    for i in range(20):
        ref = GameRef(f"game{i}")
        got = [seat_mapping(f"player_{k}", ref, policies=("a", "b"), mapping="shuffled", players=4)
               for k in range(4)]  # fmt: skip
        assert sorted(got) == ["a", "a", "b", "b"]  # a permutation of the by_seat assignment
        assert got == [seat_mapping(f"player_{k}", ref, policies=("a", "b"), mapping="shuffled", players=4)
                       for k in range(4)]  # fmt: skip


def test_selfplay_config_is_checked():
    from cluedo_env.training.rllib.config import load_config

    from cluedo_env.errors import TrainConfigError

    path = "configs/experiments/rllib_selfplay_multiagent.yaml"
    for bad, match in (
        ({"mapping": "round_robin"}, "selfplay.mapping='round_robin' is not allowed"),
        ({"policies": []}, "selfplay.policies=\\[\\] is not allowed"),
        ({"policies": ["a", "a"]}, "distinct module names"),
        ({"policies": ["a"], "train": ["b"]}, "selfplay.train=\\['b'\\] is not allowed"),
        ({"teams": 2}, "unknown config key 'selfplay.teams'"),
        ({"bots": ["main"]}, "must differ from the module names"),
        ({"bots": ["nobody"]}, "'nobody' is not a usable player"),
    ):
        with pytest.raises(TrainConfigError, match=match):
            load_config(path, sampler="bulk", selfplay={**SMALL["selfplay"], **bad})
    with pytest.raises(TrainConfigError, match="opponents are for setup=vs_bots"):
        load_config(path, opponents="heuristic")
    assert load_config(path, sampler="bulk").sampler == "bulk"
    with pytest.raises(TrainConfigError, match="selfplay.bots needs sampler: bulk"):
        load_config(path, selfplay={"bots": ["heuristic"]})
    with pytest.raises(TrainConfigError, match="belief features and macro actions in self-play need sampler: bulk"):
        load_config(path, learner={"belief": True})
    with pytest.raises(TrainConfigError, match=r"\['shaping'\] do not apply to setup=selfplay"):
        load_config(path, sampler="bulk", learner={"belief": True, "shaping": {"kind": "triples"}})
    with pytest.raises(TrainConfigError, match="include 'league' but league.snapshot_every is 0"):
        load_config(path, sampler="bulk", selfplay={"bots": ["league"]})
    with pytest.raises(TrainConfigError, match="num_learners > 1 is not allowed"):
        load_config(path, sampler="bulk", learners={"num_learners": 2})
    with pytest.raises(TrainConfigError, match="macro_accuse=true needs learner.belief=true"):
        load_config(path, sampler="bulk", learner={"macro_accuse": True})


def test_ppo_trains_bulk_selfplay_resumes_and_plays(tmp_path):
    """Two iterations with two learning modules (local runner), a resume, then ``main`` as an ``rllib:`` player."""
    import ray
    from cluedo_env.agents.play.registry import make_agent
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.training.rllib.algorithm import build_config
    from cluedo_env.training.rllib.config import load_config
    from cluedo_env.training.rllib.selfplay_runner import BulkSelfPlayRunner
    from cluedo_env.training.rllib.train import latest_checkpoint, train

    from cluedo_env.rules.config import make_config

    cfg = load_config("configs/experiments/rllib_selfplay_multiagent.yaml", iterations=2, run_dir=str(tmp_path),
                      ray={"num_cpus": 1}, **SMALL)  # fmt: skip
    assert build_config(cfg).env_runner_cls is BulkSelfPlayRunner
    try:
        summary = train(cfg, log=lambda *a: None)
        rows = summary["iterations"]
        assert [r["iteration"] for r in rows] == [1, 2]
        assert all(int(r["env_steps"]) >= 72 and r["main_return"] is not None for r in rows)
        lines = []
        again = train(cfg.with_overrides(iterations=3), resume=True, log=lines.append)
        assert lines[0].startswith("resumed from") and "iter_000002" in lines[0]
        assert [r["iteration"] for r in again["iterations"]] == [3]
        ckpt = latest_checkpoint(cfg.run_dir)
        assert ckpt.name == "iter_000003"
    finally:
        ray.shutdown()
    import cluedo_env.training.rllib.module  # noqa: F401 - registers rllib:

    config = make_config("classic", players=4)
    players = [make_agent(f"rllib:{ckpt}", seed=0), *(make_agent("random", seed=s) for s in (1, 2, 3))]
    records = play_games(config, players, 8, batch_size=8, seed=0)
    assert len(records) == 8 and players[0].illegal == 0
    rival = make_agent(f"rllib:{ckpt}", seed=0, module="rival")
    assert rival.module is not players[0].module
