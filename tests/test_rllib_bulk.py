"""The bulk env runner (training/rllib/bulk_runner.py, ``sampler: bulk``): its episodes match what the env
did and what the module computed, chunks continue across ``sample()`` calls, its metrics are RLlib's, and
PPO trains with it (local runner, league snapshots, checkpoint and resume). Skipped without ray[rllib]."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] not installed (pins gymnasium==1.2.2, docs/training.md)")
pytestmark = pytest.mark.xdist_group("ray")  # one test worker runs every Ray cluster, one at a time

import torch  # noqa: E402
from helpers import RLLIB_SMALL as SMALL  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

BELIEF = {"seat": "random", "macro_moves": True, "macro_accuse": True, "belief": True, "observation": "compact"}


def _runner(**overrides):
    from cluedo_env.training.rllib.algorithm import build_config
    from cluedo_env.training.rllib.bulk_runner import BulkEnvRunner
    from cluedo_env.training.rllib.config import load_config

    cfg = load_config("configs/experiments/rllib_vs_heuristic_compact.yaml", **{**SMALL, **overrides})
    return BulkEnvRunner(config=build_config(cfg), worker_index=0)


def _log_env_steps(runner):
    """Record what the env's core returned at every step (actions in, rewards/flags/observations out)."""
    core = runner.env.unwrapped.core
    log = []
    step = core.step

    def logged(actions):
        obs, rew, term, trunc, ended = step(actions)
        log.append({"act": np.array(actions), "rew": rew.copy(), "term": term.copy(), "trunc": trunc.copy(),
                    "ended": ended.copy(), "final": core.final_obs.copy()})  # fmt: skip
        return obs, rew, term, trunc, ended

    core.step = logged
    return log


def test_episodes_match_the_env_and_the_module():
    runner = _runner(learner=BELIEF, opponents="heuristic")
    log = _log_env_steps(runner)
    n, n_act = runner.num_envs, int(runner.env.single_action_space.n)
    fragments = [runner.sample(explore=True) for _ in range(3)]
    module = runner.module
    for eps in fragments:
        assert sum(len(e) for e in eps) == n * 8  # every row of every call is a learner decision (no reset rows)
    steps = [e for eps in fragments for e in eps]
    # each action legal under the mask in its observation row; logp and dist inputs are the module's
    for ep in steps:
        obs = ep.get_observations(slice(0, len(ep) + 1))
        acts = ep.get_actions(slice(0, len(ep)))
        assert obs.dtype == np.int8 and obs.shape == (len(ep) + 1, runner.env.single_observation_space.shape[0])
        assert (obs[np.arange(len(ep)), obs.shape[1] - n_act + acts] == 1).all()
        with torch.no_grad():
            logits = module.forward_inference({Columns.OBS: torch.from_numpy(obs[:-1])})[Columns.ACTION_DIST_INPUTS]
        logp = torch.log_softmax(logits, -1)[torch.arange(len(ep)), torch.from_numpy(acts)].numpy()
        np.testing.assert_allclose(ep.get_extra_model_outputs(Columns.ACTION_LOGP, slice(0, len(ep))), logp,
                                   rtol=1e-4, atol=1e-4)  # fmt: skip
        np.testing.assert_allclose(ep.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS, slice(0, len(ep))),
                                   logits.numpy(), rtol=1e-4, atol=1e-3)  # fmt: skip
        if ep.is_done:  # a finished game's last observation allows only action 0, as the NEXT_STEP env shows it
            assert (obs[-1, -n_act:] == np.eye(n_act, dtype=np.int8)[0]).all()
    # episodes, rebuilt independently from the env's log: same actions, rewards and end flags
    expected, current = [], [[] for _ in range(n)]
    for row in log:
        for i in range(n):
            current[i].append((int(row["act"][i]), float(row["rew"][i])))
            if row["ended"][i]:
                expected.append((tuple(current[i]), bool(row["term"][i]), bool(row["trunc"][i] and not row["term"][i])))
                current[i] = []
    # join the chunks of each episode with RLlib's own concat_episode (checks ids, t and the boundary observations)
    whole: dict[str, object] = {}
    for eps in fragments:
        for ep in eps:
            if ep.id_ in whole:
                whole[ep.id_].concat_episode(ep)
            else:
                whole[ep.id_] = ep
    done = [e for e in whole.values() if e.is_done]
    got = sorted((tuple(zip(map(int, e.get_actions()), map(float, e.get_rewards()), strict=True)), e.is_terminated,
                  e.is_truncated) for e in done)  # fmt: skip
    assert got == sorted(expected) and len(done) > 10
    open_ = [e for e in whole.values() if not e.is_done]
    assert len(open_) <= n and all(tuple(zip(map(int, e.get_actions()), map(float, e.get_rewards()), strict=True))
                                   in {tuple(c) for c in current} for e in open_)  # fmt: skip
    # RLlib's metrics: steps, episodes, and the mean return/length of the finished episodes
    metrics = runner.get_metrics()
    assert metrics["num_env_steps_sampled_lifetime"].peek() == 3 * n * 8
    assert metrics["num_episodes_lifetime"].peek() == len(expected)
    returns = [sum(r for _, r in steps) for steps, *_ in expected][-100:]
    assert metrics["episode_return_mean"].peek() == pytest.approx(np.mean(returns))
    # explore=False: the argmax of the masked logits, logp 0
    eps = runner.sample(explore=False)
    for ep in eps[:5]:
        obs = ep.get_observations(slice(0, len(ep)))
        with torch.no_grad():
            logits = module.forward_inference({Columns.OBS: torch.from_numpy(obs)})[Columns.ACTION_DIST_INPUTS]
        assert (ep.get_actions(slice(0, len(ep))) == logits.argmax(-1).numpy()).all()
        assert (ep.get_extra_model_outputs(Columns.ACTION_LOGP, slice(0, len(ep))) == 0).all()


def test_direct_episode_build_equals_rllibs_constructor():
    from cluedo_env.training.rllib.bulk_runner import EpisodeChunk, EpisodeFactory, check_episode_layout, episode_layout
    from gymnasium import spaces

    obs_space, act_space = spaces.Box(0, 127, (7,), np.int8), spaces.Discrete(3)
    assert check_episode_layout(obs_space, act_space)
    rng = np.random.default_rng(0)
    args = dict(id_="abc", observations=rng.integers(0, 2, (5, 7)).astype(np.int8), actions=np.array([0, 2, 1, 1]),
                rewards=np.array([0, 0, 0, 1], np.float32), extra={Columns.ACTION_LOGP: np.zeros(4, np.float32)},
                terminated=False, truncated=True, t_started=9, lookback=1, start_time=1.0, last_time=2.5)  # fmt: skip
    fast, slow = EpisodeFactory(obs_space, act_space), EpisodeFactory(obs_space, act_space, fast=False)
    assert fast.fast and not slow.fast
    a, b = fast.make(EpisodeChunk(**args)), slow.make(EpisodeChunk(**args))
    assert episode_layout(a) == episode_layout(b)
    assert len(a) == 3 and a.t == 12 and a.get_return() == 1.0 and a.get_duration_s() == 1.5


def test_sampler_key_is_checked():
    from cluedo_env.training.rllib.config import load_config

    from cluedo_env.errors import TrainConfigError

    with pytest.raises(TrainConfigError, match="one of rllib, bulk"):
        load_config("configs/rllib_vs_random.yaml", sampler="fast")


def test_ppo_trains_with_the_bulk_runner_league_and_resume(tmp_path):
    """Two iterations (local runner, no remote actors), a league seat snapshotting the module, then a resume."""
    import ray
    from cluedo_env.training.rllib.algorithm import build_config
    from cluedo_env.training.rllib.bulk_runner import BulkEnvRunner
    from cluedo_env.training.rllib.config import load_config
    from cluedo_env.training.rllib.train import latest_checkpoint, train

    cfg = load_config("configs/experiments/rllib_vs_heuristic_compact.yaml", iterations=2, run_dir=str(tmp_path),
                      opponents=["heuristic", "league", "random"], league={"snapshot_every": 1, "max_snapshots": 2},
                      learner=BELIEF, ray={"num_cpus": 1}, **{k: v for k, v in SMALL.items()})  # fmt: skip
    assert build_config(cfg).env_runner_cls is BulkEnvRunner
    try:
        summary = train(cfg, log=lambda *a: None)
        rows = summary["iterations"]
        assert [r["iteration"] for r in rows] == [1, 2] and [r.get("league_snapshots") for r in rows] == [1, 2]
        assert all(int(r["env_steps"]) >= 128 and r["main_return"] is not None for r in rows)
        lines = []
        again = train(cfg.with_overrides(iterations=3), resume=True, log=lines.append)
        assert lines[0].startswith("resumed from") and "iter_000002" in lines[0]
        assert [r["iteration"] for r in again["iterations"]] == [3]
        assert latest_checkpoint(cfg.run_dir).name == "iter_000003"
    finally:
        ray.shutdown()


def test_draw_actions_never_draws_a_masked_action(monkeypatch):
    """The bulk runners' draw (inverse CDF in float32): actions follow the masked softmax, masked actions are never
    drawn, and a draw that rounds up to the total (u = 1) takes the last legal action, not a masked one."""
    from cluedo_env.training.rllib.bulk_runner import draw_actions

    n, A, D = 4000, 12, 3
    rng = np.random.default_rng(0)
    mask = (rng.random((n, A)) < 0.4).astype(np.int8)
    mask[:, 1] = 1
    mask[:, -1] = 0  # the last action is never legal: a draw past the end must not land there
    logits = torch.from_numpy(rng.normal(size=(n, A)).astype(np.float32))

    class Stub:
        def forward_exploration(self, batch, t):
            legal = torch.from_numpy(mask).float()
            return {Columns.ACTION_DIST_INPUTS: logits + (1 - legal) * -3.4e38}

    obs = np.concatenate([np.zeros((n, D), np.int8), mask], 1)
    gen = torch.Generator().manual_seed(0)
    actions, logp, _ = draw_actions(Stub(), obs, True, 0, gen)
    assert (mask[np.arange(n), actions] == 1).all()
    probs = torch.softmax(logits + (1 - torch.from_numpy(mask).float()) * -3.4e38, -1).numpy()
    np.testing.assert_allclose(logp, np.log(probs[np.arange(n), actions]), rtol=1e-5, atol=1e-5)
    # frequencies: the first row's distribution, drawn many times
    rows = np.zeros((n, A + D), np.int8)
    rows[:] = obs[0]
    logits[:] = logits[0]
    mask[:] = mask[0]
    actions, _, _ = draw_actions(Stub(), rows, True, 0, gen)
    freq = np.bincount(actions, minlength=A) / n
    np.testing.assert_allclose(freq, probs[0], atol=0.03)
    # u = 1: past the last legal action
    monkeypatch.setattr(torch, "rand", lambda shape, generator=None, dtype=None: torch.ones(shape))
    actions, _, _ = draw_actions(Stub(), rows, True, 0, gen)
    assert (actions == np.flatnonzero(mask[0])[-1]).all()
