"""``policy: factored`` (training/sb3/factored_policy.py): per-card scores added to the 324 suggestion logits.

The head must add ``score[s] + score[6 + w] + score[12 + r]`` to suggestion ``(s * 6 + w) * 9 + r`` and nothing
elsewhere, and a checkpoint with it must reload (same logits) and play as a ``ckpt:`` player.
"""

from __future__ import annotations

from helpers import config


def test_factored_policy_adds_card_scores_to_suggestions_and_reloads(tmp_path):
    import torch
    from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model, make_meta, save_model_atomic
    from cluedo_env.training.sb3.factored_policy import FactoredMaskablePolicy, suggest0_of
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv
    from sb3_contrib import MaskablePPO

    cfg = config("cards", players=4)
    env = CluedoVecEnv(4, cfg, seed=0, macro_moves=True, macro_accuse=True, belief=True, observation="compact")
    s0 = suggest0_of(True)
    model = MaskablePPO(FactoredMaskablePolicy, env, n_steps=8, batch_size=32, seed=0,
                        policy_kwargs={"net_arch": [16], "suggest0": s0})  # fmt: skip
    model.learn(64)
    head = model.policy.action_net
    latent = torch.randn(5, 16)
    with torch.no_grad():
        c = head.cards(latent)
        diff = head(latent) - head.base(latent)
    assert (diff[:, :s0] == 0).all() and (diff[:, s0 + 324 :] == 0).all()
    s, w, r = 2, 4, 7  # triple (s * 6 + w) * 9 + r gets score[s] + score[6 + w] + score[12 + r]
    assert torch.allclose(diff[:, s0 + (s * 6 + w) * 9 + r], c[:, s] + c[:, 6 + w] + c[:, 12 + r], atol=1e-6)
    model.cluedo_meta = make_meta(cfg, True, env.core.obs_size, macro_accuse=True, belief=True, observation="compact")
    save_model_atomic(model, tmp_path / "m.zip")
    again = load_model(tmp_path / "m.zip")
    assert isinstance(again.policy, FactoredMaskablePolicy) and again.policy.suggest0 == s0
    obs = torch.as_tensor(env.reset(), dtype=torch.float32)
    with torch.no_grad():
        a = model.policy.get_distribution(obs, action_masks=env.action_masks()).distribution.logits
        b = again.policy.get_distribution(obs, action_masks=env.action_masks()).distribution.logits
    assert torch.allclose(a, b)
    PolicyAgent(tmp_path / "m.zip")  # plays as a checkpoint player
    # precision: bfloat16 reaches both parts of the head (the base and the card scores); float32 comes back exactly.
    model.policy.set_precision("bfloat16")
    assert head.base.autocast_dtype == head.cards.autocast_dtype == torch.bfloat16
    with torch.no_grad():
        low = head(latent)
    assert low.dtype == torch.float32 and torch.allclose(low, head.base(latent) + diff, atol=0.05)
    model.policy.set_precision("float32")
    assert head.base.autocast_dtype is None and head.cards.autocast_dtype is None


def test_an_mlp_checkpoint_starts_a_factored_policy_with_the_same_play():
    import torch
    from cluedo_env.training.sb3.factored_policy import FactoredMaskablePolicy, mlp_to_factored_state, suggest0_of
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv
    from sb3_contrib import MaskablePPO

    env = CluedoVecEnv(4, config("cards", players=4), seed=0, macro_moves=True, macro_accuse=True, belief=True,
                       observation="compact")  # fmt: skip
    mlp = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=32, seed=0, policy_kwargs={"net_arch": [16]})
    fac = MaskablePPO(FactoredMaskablePolicy, env, n_steps=8, batch_size=32, seed=1,
                      policy_kwargs={"net_arch": [16], "suggest0": suggest0_of(True)})  # fmt: skip
    fac.policy.load_state_dict(mlp_to_factored_state(mlp.policy.state_dict(), fac.policy))
    obs = torch.as_tensor(env.reset(), dtype=torch.float32)
    with torch.no_grad():
        a = mlp.policy.get_distribution(obs, action_masks=env.action_masks()).distribution.probs
        b = fac.policy.get_distribution(obs, action_masks=env.action_masks()).distribution.probs
    assert torch.allclose(a, b)


def test_the_accusation_head_adds_its_own_card_scores_to_the_accusations():
    import torch
    from cluedo_env.training.sb3.factored_policy import FactoredMaskablePolicy, accuse0_of, suggest0_of
    from cluedo_env.training.sb3.vec_env import CluedoVecEnv
    from sb3_contrib import MaskablePPO

    env = CluedoVecEnv(4, config("cards", players=4), seed=0, macro_moves=True, belief=True, observation="compact")
    s0, a0 = suggest0_of(True), accuse0_of(True, False)
    assert accuse0_of(True, True) is None and a0 == env.action_space.n - 324
    model = MaskablePPO(FactoredMaskablePolicy, env, n_steps=8, batch_size=32, seed=0,
                        policy_kwargs={"net_arch": [16], "suggest0": s0, "accuse0": a0})  # fmt: skip
    head = model.policy.action_net
    latent = torch.randn(5, 16)
    with torch.no_grad():
        head.accuse_cards.bias.add_(torch.arange(21.0))  # scores the test can tell apart from the suggestions'
        sug, acc = head.cards(latent), head.accuse_cards(latent)
        diff = head(latent) - head.base(latent)
    assert (diff[:, :s0] == 0).all() and (diff[:, s0 + 324 : a0] == 0).all()
    s, w, r = 5, 1, 3
    t = (s * 6 + w) * 9 + r
    assert torch.allclose(diff[:, s0 + t], sug[:, s] + sug[:, 6 + w] + sug[:, 12 + r], atol=1e-5)
    assert torch.allclose(diff[:, a0 + t], acc[:, s] + acc[:, 6 + w] + acc[:, 12 + r], atol=1e-5)
    assert not torch.allclose(diff[:, a0 + t], diff[:, s0 + t])
