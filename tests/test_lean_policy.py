"""training/sb3/lean_policy.py: the leaner masked distribution and the bfloat16 option of the learner's policy.

The lean distribution must give sb3-contrib's log-probabilities, entropies and modes (to float32 rounding),
never sample a masked action, sample in proportion to the probabilities, and load an ``MlpPolicy`` checkpoint's
weights with the same play. ``precision: bfloat16`` must train (float32 weights, heads and outputs), stay close to
float32, reject bad values with a clear error, and leave checkpoints that play in float32.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from cluedo_env.training.sb3.lean_policy import LeanMaskablePolicy, LeanMaskedCategorical, MixedLinear  # noqa: E402
from sb3_contrib.common.maskable.distributions import MaskableCategorical  # noqa: E402


def _logits_and_masks(rows: int = 300, actions: int = 359, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, actions, generator=gen) * 4
    masks = torch.rand(rows, actions, generator=gen) < 0.2
    masks[torch.arange(rows), torch.randint(0, actions, (rows,), generator=gen)] = True  # one legal action at least
    masks[0] = False
    masks[0, 7] = True  # a row with a single legal action
    return logits, masks


@pytest.mark.parametrize("as_numpy", [False, True])
def test_lean_distribution_equals_sb3_contribs(as_numpy):
    logits, masks = _logits_and_masks()
    given = masks.numpy() if as_numpy else masks.float()  # collection passes numpy bools, the buffer floats
    ref = MaskableCategorical(logits=logits.clone())
    ref.apply_masking(masks)
    lean = LeanMaskedCategorical(logits.clone())
    lean.apply_masking(given)
    actions = torch.multinomial(masks.float(), 1).reshape(-1)  # legal actions
    assert torch.allclose(lean.log_prob(actions), ref.log_prob(actions), atol=1e-5)
    assert torch.allclose(lean.entropy(), ref.entropy(), atol=1e-5)
    assert torch.allclose(lean.probs, ref.probs, atol=1e-6)
    assert torch.equal(lean.mode(), torch.argmax(ref.probs, 1))
    assert float(lean.entropy()[0]) == pytest.approx(0.0, abs=1e-6) and int(lean.mode()[0]) == 7
    lean.apply_masking(None)  # unmasked again: a plain softmax
    assert torch.allclose(lean.probs, torch.softmax(logits, -1), atol=1e-6)


def test_lean_distribution_gradients_equal_sb3_contribs():
    logits, masks = _logits_and_masks(rows=50)
    actions = torch.multinomial(masks.float(), 1).reshape(-1)
    grads = []
    for make in (MaskableCategorical, LeanMaskedCategorical):
        x = logits.clone().requires_grad_(True)
        dist = make(logits=x) if make is MaskableCategorical else make(x)
        dist.apply_masking(masks)
        (dist.log_prob(actions).sum() + 0.1 * dist.entropy().sum()).backward()
        grads.append(x.grad)
    assert torch.allclose(grads[0], grads[1], atol=1e-5)


def test_lean_samples_are_legal_and_follow_the_probabilities():
    torch.manual_seed(0)
    logits = torch.tensor([[0.0, 1.0, 2.0, 3.0, -1.0]]).repeat(40_000, 1)
    masks = torch.tensor([[True, False, True, True, True]]).repeat(40_000, 1)
    dist = LeanMaskedCategorical(logits)
    dist.apply_masking(masks)
    draws = dist.sample()
    assert draws.shape == (40_000,) and draws.dtype == torch.int64
    counts = torch.bincount(draws, minlength=5).double() / len(draws)
    assert counts[1] == 0  # masked, with the second-largest logit
    assert torch.allclose(counts, dist.probs[0].double(), atol=0.01)


def test_lean_sample_never_takes_a_masked_action_when_the_uniform_rounds_up(monkeypatch):
    """If ``u * total`` rounds up to the total, the search runs past the end: the likeliest legal action is taken,
    not a masked trailing one."""
    dist = LeanMaskedCategorical(torch.tensor([[5.0, 0.0, 1.0, 9.0]]))
    dist.apply_masking(torch.tensor([[True, True, True, False]]))
    monkeypatch.setattr(torch, "rand", lambda shape, **kw: torch.ones(shape, dtype=kw.get("dtype")))
    assert dist.sample().tolist() == [0]


def _policies(precision: str = "float32"):
    import gymnasium as gym
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    obs = gym.spaces.Box(0, 1, (40,), np.float32)
    act = gym.spaces.Discrete(30)
    kw = {"net_arch": {"pi": [32, 32], "vf": [32, 32]}}
    torch.manual_seed(0)
    ref = MaskableActorCriticPolicy(obs, act, lambda _: 1e-3, **kw)
    lean = LeanMaskablePolicy(obs, act, lambda _: 1e-3, **kw)
    lean.load_state_dict(ref.state_dict())  # an MlpPolicy checkpoint's weights: the same parameter names
    lean.set_precision(precision)
    gen = torch.Generator().manual_seed(1)
    x = (torch.rand(64, 40, generator=gen) < 0.3).float()
    masks = (torch.rand(64, 30, generator=gen) < 0.4).numpy()
    masks[:, 0] = True
    return ref, lean, x, masks


def test_lean_policy_plays_an_mlp_policys_weights_the_same():
    ref, lean, x, masks = _policies()
    actions = torch.as_tensor(masks.argmax(1))
    with torch.no_grad():
        v0, lp0, e0 = ref.evaluate_actions(x, actions, action_masks=masks)
        v1, lp1, e1 = lean.evaluate_actions(x, actions, action_masks=masks)
        assert torch.allclose(v0, v1) and torch.allclose(lp0, lp1, atol=1e-5) and torch.allclose(e0, e1, atol=1e-5)
        det = lean.get_distribution(x, action_masks=masks).get_actions(deterministic=True)
        assert torch.equal(det, ref.get_distribution(x, action_masks=masks).get_actions(deterministic=True))
        a, v, lp = lean(x, action_masks=masks)
        assert masks[np.arange(64), a.numpy()].all()


def test_bfloat16_trains_in_float32_outputs_and_stays_close():
    ref, lean, x, masks = _policies("bfloat16")
    assert lean.precision == "bfloat16"
    # The hidden layers and the action head's product run in bfloat16; the value head (one output) in float32.
    assert isinstance(lean.action_net, MixedLinear) and lean.action_net.autocast_dtype == torch.bfloat16
    assert not isinstance(lean.value_net, MixedLinear)
    actions = torch.as_tensor(masks.argmax(1))
    v, lp, ent = lean.evaluate_actions(x, actions, action_masks=masks)
    assert v.dtype == lp.dtype == ent.dtype == torch.float32
    with torch.no_grad():
        v0, lp0, _ = ref.evaluate_actions(x, actions, action_masks=masks)
    assert torch.allclose(lp, lp0, atol=0.05) and torch.allclose(v, v0, atol=0.05)
    (v.square().mean() - lp.mean() - 0.01 * ent.mean()).backward()
    grads = [p.grad for p in lean.parameters()]
    assert all(g is not None and g.dtype == torch.float32 and torch.isfinite(g).all() for g in grads)
    assert all(p.dtype == torch.float32 for p in lean.parameters())
    with pytest.raises(ValueError, match="precision 'float16': allowed float32, bfloat16"):
        lean.set_precision("float16")


def test_precision_in_a_training_config(tmp_path):
    from cluedo_env.training.sb3.checkpoints import PolicyAgent, load_model
    from cluedo_env.training.sb3.train import TrainConfigError, Trainer
    from test_training import _tiny

    with pytest.raises(TrainConfigError, match="precision.*float32 or bfloat16"):
        Trainer(_tiny(tmp_path / "bad", precision="half"), progress=False)
    run = tmp_path / "bf16"
    with warnings.catch_warnings():  # on a CPU without bfloat16 hardware: "emulated and slower", and it still trains
        warnings.simplefilter("ignore")
        built = Trainer(_tiny(tmp_path / "built", precision="bfloat16"), progress=False)._build()
        assert built.policy.precision == "bfloat16"  # the run trains in bfloat16 ...
        Trainer(_tiny(run, precision="bfloat16", total_timesteps=256, eval={"games": 0}), progress=False).run()
    model = load_model(run / "model.zip")
    assert isinstance(model.policy, LeanMaskablePolicy) and model.policy.precision == "float32"  # ... plays float32
    assert all(m.autocast_dtype is None for m in model.policy.modules() if isinstance(m, MixedLinear))
    assert all(p.dtype == torch.float32 for p in model.policy.parameters())
    PolicyAgent(run / "model.zip")  # plays as a checkpoint player
