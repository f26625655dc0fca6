"""Checkpoints that vote: ``PolicyAgent(path, ensemble=[...])`` and ``policy_fn(model, members=...)``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from cluedo_env.agents.play.registry import make_agent  # noqa: E402
from cluedo_env.agents.play.runner import play_games  # noqa: E402
from cluedo_env.training import pretrained  # noqa: E402
from cluedo_env.training.players import check_player_names  # noqa: E402
from cluedo_env.training.sb3.checkpoints import PolicyAgent, input_differences, load_model, policy_fn  # noqa: E402

from cluedo_env.errors import CheckpointError  # noqa: E402
from cluedo_env.rules.config import make_config  # noqa: E402

CARDS = pretrained.path_of("cards_champion")


def _perturbed(seed: int):
    """The card champion's network with every weight moved by noise: another network with the same inputs."""
    model = load_model(CARDS)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.05)
    return model


def _probs(model, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        return model.policy.get_distribution(obs_t, action_masks=mask).distribution.probs.numpy()


def test_the_ensemble_plays_the_most_probable_action_of_its_networks_mean():
    """Reference statement: argmax over legal actions of the mean of the networks' masked probabilities."""
    models = [load_model(CARDS), _perturbed(1), _perturbed(2)]
    rng = np.random.default_rng(0)
    n, size = 64, models[0].cluedo_meta["obs_size"]
    obs = (rng.random((n, size)) < 0.2).astype(np.float32)
    mask = rng.random((n, models[0].cluedo_meta["n_actions"])) < 0.3
    mask[:, 0] = True  # at least one legal action per row
    mean = np.mean([_probs(m, obs, mask) for m in models], axis=0)
    want = np.where(mask, mean, -1.0).argmax(axis=1)
    got = policy_fn(models[0], True, models[1:])(obs, mask)
    np.testing.assert_array_equal(got, want)
    alone = policy_fn(models[0], True)(obs, mask)
    assert (alone != got).any(), "the noise should change some choices, or this test shows nothing"
    torch.manual_seed(0)
    drawn = policy_fn(models[0], False, models[1:])(obs, mask)
    assert mask[np.arange(n), drawn].all(), "a sampled ensemble action must be legal"


def test_a_checkpoint_voting_with_itself_plays_as_it_does_alone():
    check_player_names(["pretrained:cards_champion"])
    config = make_config("cards")
    games = []
    for ensemble in ((), [CARDS]):
        agent = PolicyAgent(CARDS, seed=0, ensemble=ensemble)
        others = [make_agent("expert", seed=s) for s in range(1, 4)]
        games.append([(g.winner, g.rounds) for g in play_games(config, [agent, *others], 40, batch_size=40, seed=3)])
    assert games[0] == games[1]


def test_a_ckpt_name_takes_the_ensemble_option():
    agent = make_agent(f'ckpt:{CARDS}{{"ensemble": ["{CARDS}"]}}', seed=0)
    assert len(agent.members) == 1


def test_networks_with_other_inputs_cannot_vote_together():
    with pytest.raises(CheckpointError, match="cannot vote with .*differ in .*obs_size.*rules"):
        PolicyAgent(CARDS, ensemble=[pretrained.path_of("champion")])
    with pytest.raises(CheckpointError, match="ensemble must be a list of checkpoint paths"):
        PolicyAgent(CARDS, ensemble=str(CARDS))
    with pytest.raises(CheckpointError, match="no such file"):
        PolicyAgent(CARDS, ensemble=["nowhere.zip"])


def test_a_pretrained_player_takes_the_ensemble_option_too():
    agent = make_agent(f'pretrained:cards_champion{{"ensemble": ["{CARDS}"]}}', seed=0)
    assert agent.name == "pretrained:cards_champion" and len(agent.network_for(4).members) == 1


def test_members_may_differ_in_the_turn_limit_only_among_the_rules():
    meta = load_model(CARDS).cluedo_meta
    longer = {**meta, "rules": {**meta["rules"], "max_turns": 999}, "train_config": {}}
    assert input_differences(meta, longer) == []
    other = {**meta, "rules": {**meta["rules"], "refutation": "all"}}
    assert input_differences(meta, other) == ["rules"]
