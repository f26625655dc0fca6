"""``mask_in_observation=True``: the Gymnasium envs' observation as ``{"observation", "action_mask"}``, declared.

The Dict must be the declared space (Gymnasium's ``check_env``; every observation ``contains``-checked, the
vector env's against its batched space), its mask must be ``action_masks()`` at every step (episode ends and the
vector env's autoreset rows included), and its observation the one the env gives without the option, on the same
seed and actions. Gymnasium 1.2 has no checker for vector envs; the vector tests check what its ``check_env``
checks of a single env: the spaces, reset and step outputs, and determinism under a seed.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from cluedo_env.agents.players.base import sample_legal
from cluedo_env.training.learner_options import GYMNASIUM_ONLY_OPTIONS, OPTION_NAMES
from cluedo_env.training.single_agent import CluedoSingleAgentEnv, CluedoVectorEnv
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import cluedo_env
from cluedo_env.errors import CluedoError
from cluedo_env.rules.config import ConfigError

GYM_ID = cluedo_env.GYMNASIUM_ID
VARIANTS = [{"preset": "classic"}, {"preset": "cards", "players": 3, "seat": "random"},
            {"preset": "classic", "macro_moves": True, "packed_observation": True},
            {"preset": "cards", "belief": True, "macro_accuse": True}]  # fmt: skip
VARIANT_IDS = ["classic", "cards:random-seat", "macro+packed", "belief+macro-accuse"]


@pytest.mark.parametrize("kwargs", VARIANTS, ids=VARIANT_IDS)
def test_gymnasium_check_env_passes(kwargs):
    env = gymnasium.make(GYM_ID, mask_in_observation=True, render_mode="ansi", **kwargs)  # with the passive checker
    check_env(env.unwrapped)
    plain = CluedoSingleAgentEnv(**kwargs)
    space = env.observation_space
    assert isinstance(space, spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}
    assert space["observation"] == plain.observation_space
    mask_space = space["action_mask"]
    assert mask_space.dtype == np.int8 and mask_space.shape == (env.action_space.n,)
    assert mask_space.low.min() == 0 and mask_space.high.max() == 1


def test_the_layout_is_the_pettingzoo_envs():
    ours = CluedoSingleAgentEnv(mask_in_observation=True).observation_space
    theirs = cluedo_env.env().observation_space("player_0")
    assert list(ours.spaces) == list(theirs.spaces)
    for key in ours.spaces:
        assert (ours[key].shape, ours[key].dtype, ours[key].low.max(), ours[key].high.min()) == \
               (theirs[key].shape, theirs[key].dtype, theirs[key].low.max(), theirs[key].high.min())  # fmt: skip


@pytest.mark.parametrize("kwargs", VARIANTS[:3], ids=VARIANT_IDS[:3])
def test_single_env_mask_is_action_masks_and_the_observation_is_unchanged(kwargs):
    kwargs = {**kwargs, "opponents": "heuristic", "seed": 3}  # they rarely accuse: long games; seeded bots
    env = CluedoSingleAgentEnv(mask_in_observation=True, **kwargs)
    plain = CluedoSingleAgentEnv(**kwargs)
    obs, info = env.reset(seed=3)
    want, _ = plain.reset(seed=3)
    rng = np.random.default_rng(3)
    episodes = steps = 0
    while episodes < 8:
        assert env.observation_space.contains(obs)
        assert np.array_equal(obs["observation"], want)
        assert np.array_equal(obs["action_mask"].astype(bool), env.action_masks())
        assert np.array_equal(obs["action_mask"], info["action_mask"])
        assert obs["action_mask"] is not info["action_mask"]  # a policy may write into one of them
        if not env.action_masks().any():  # the step that ended an episode: nothing to act on
            obs, info = env.reset()
            want, _ = plain.reset()
            episodes += 1
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[0] if rng.random() < 0.9 else rng.choice(legal))  # the lowest id: seldom an accusation
        obs, rew, term, trunc, info = env.step(action)
        want, rew2, term2, trunc2, _ = plain.step(action)
        assert (rew, term, trunc) == (rew2, term2, trunc2)
        if term or trunc:
            assert not obs["action_mask"].any()
        steps += 1
    assert steps > 100


def _vector_run(mode: AutoresetMode, steps: int, **kwargs) -> int:
    venv = gymnasium.make_vec(GYM_ID, num_envs=6, vectorization_mode="vector_entry_point", autoreset_mode=mode,
                              mask_in_observation=True, **kwargs)  # fmt: skip
    plain = CluedoVectorEnv(6, autoreset_mode=mode, **kwargs)
    single = venv.single_observation_space
    assert isinstance(single, spaces.Dict) and venv.observation_space == gymnasium.vector.utils.batch_space(single, 6)
    obs, info = venv.reset(seed=5)
    want, _ = plain.reset(seed=5)
    rng = np.random.default_rng(5)
    ended = 0
    for _ in range(steps):
        assert venv.observation_space.contains(obs)
        assert all(single.contains({k: v[i] for k, v in obs.items()}) for i in range(6))
        assert np.array_equal(obs["observation"], want)
        assert np.array_equal(obs["action_mask"].astype(bool), venv.unwrapped.action_masks())
        assert obs["action_mask"].any(axis=1).all()  # every row has an action (an autoreset row: 0, ignored)
        actions = sample_legal(obs["action_mask"].astype(bool), rng)
        obs, rew, term, trunc, info = venv.step(actions)
        want, *_, plain_info = plain.step(actions)
        done = term | trunc
        if mode is AutoresetMode.NEXT_STEP:
            assert (np.flatnonzero(obs["action_mask"][done]) % obs["action_mask"].shape[1] == 0).all()
        elif done.any():
            for i in np.flatnonzero(done):
                final = info["final_obs"][i]
                assert single.contains(final) and not final["action_mask"].any()
                assert np.array_equal(final["observation"], plain_info["final_obs"][i])
        ended += int(done.sum())
    return ended


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next-step", "same-step"])
def test_vector_env_mask_is_action_masks_through_autoresets(mode):
    assert _vector_run(mode, 60, preset="cards", players=3, seat="random") >= 5


def test_vector_env_is_deterministic_under_a_seed_and_runs_in_gymnasium_wrappers():
    def run() -> list:
        venv = gymnasium.make_vec(GYM_ID, num_envs=4, mask_in_observation=True, preset="cards", players=3)
        venv = gymnasium.wrappers.vector.RecordEpisodeStatistics(venv)
        obs, info = venv.reset(seed=9)
        rng = np.random.default_rng(9)
        out = []
        for _ in range(40):
            obs, rew, term, trunc, info = venv.step(sample_legal(obs["action_mask"].astype(bool), rng))
            out.append((obs["observation"].copy(), obs["action_mask"].copy(), rew.copy(), term.copy()))
        return out

    a, b = run(), run()
    assert all(all(np.array_equal(x, y) for x, y in zip(s, t, strict=True)) for s, t in zip(a, b, strict=True))


def test_the_option_is_checked_and_other_front_ends_refuse_it():
    assert GYMNASIUM_ONLY_OPTIONS == ("mask_in_observation",) and "mask_in_observation" not in OPTION_NAMES
    for bad in ("yes", 1, None):
        with pytest.raises(CluedoError, match="mask_in_observation"):
            CluedoSingleAgentEnv(mask_in_observation=bad)
        with pytest.raises(CluedoError, match="mask_in_observation"):
            CluedoVectorEnv(2, mask_in_observation=bad)
    assert not isinstance(CluedoSingleAgentEnv().observation_space, spaces.Dict)  # off by default
    pytest.importorskip("stable_baselines3")
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv

    with pytest.raises(ConfigError, match=r"unknown keyword argument\(s\) \['mask_in_observation'\]"):
        CluedoVecEnv(2, mask_in_observation=True)
