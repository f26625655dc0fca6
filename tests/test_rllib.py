"""RLlib integration (training/rllib_*.py) on a two-node Ray cluster started on this machine
(``ray.cluster_utils.Cluster``, one CPU per node, so two env runners land one on each node): batched
learner-vs-players PPO (heuristic and league opponents inside the env runners) trains with masks,
checkpoints are written, restored and resumed, a checkpoint plays through the tournament evaluator,
and multi-agent self-play on the PettingZoo env trains. Skipped when ray[rllib] is not installed."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] not installed (pins gymnasium==1.2.2, docs/training.md)")
pytestmark = pytest.mark.xdist_group("ray")  # one test worker runs every Ray cluster, one at a time

import ray  # noqa: E402
import torch  # noqa: E402
from cluedo_env.agents.play.registry import register_prefix  # noqa: E402

from cluedo_env.rules.actions import IllegalActionError  # noqa: E402

SMALL = {
    "env": {"preset": "cards", "players": 4},
    "env_runners": {"num_env_runners": 1, "num_envs_per_env_runner": 16, "rollout_fragment_length": 32},
    "ppo": {"train_batch_size_per_learner": 512, "minibatch_size": 256, "num_epochs": 1},
    "model": {"fcnet_hiddens": [64]},
    "eval": {"every": 0},
    "checkpoint_every": 1,
}
# Two runners x 16 games x 16 steps = 512 env steps per iteration.
TWO_RUNNERS = {**SMALL, "env_runners": {"num_env_runners": 2, "num_envs_per_env_runner": 16,
                                        "rollout_fragment_length": 16, "num_cpus_per_env_runner": 1}}  # fmt: skip
BELIEF = {"seat": "random", "macro_moves": True, "macro_accuse": True, "belief": True}


@pytest.fixture(scope="module")
def cluster():
    """A head node and a worker node on this machine, one CPU each; the driver connects as on a real cluster."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def vs_bots_run(cluster, tmp_path_factory):
    """Two iterations against heuristic + league opponents, runners on both nodes, belief features."""
    from cluedo_env.training.rllib.config import load_config
    from cluedo_env.training.rllib.train import train

    run_dir = str(tmp_path_factory.mktemp("rl"))
    cfg = load_config("configs/experiments/rllib_vs_heuristic_belief.yaml", iterations=2, run_dir=run_dir,
                      opponents=["heuristic", "league", "deducer"], league={"snapshot_every": 1, "max_snapshots": 2},
                      learner=BELIEF, precision="bfloat16", **TWO_RUNNERS)  # fmt: skip
    return cfg, train(cfg, address=cluster.address, log=lambda *a: None)


def test_env_raises_on_illegal_actions():
    """RLlib steps the bare AEC env: an illegal action raises, so a finished run proves none was sent."""
    from cluedo_env.training.rllib.algorithm import make_env

    env = make_env({"preset": "cards", "players": 4})
    obs, _ = env.reset(seed=0)
    ((agent, o),) = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step({agent: illegal})


def test_random_module_picks_legal_actions():
    from cluedo_env.training.rllib.algorithm import make_env
    from cluedo_env.training.rllib.module import RandomLegalRLModule
    from ray.rllib.core.columns import Columns

    env = make_env({"preset": "cards", "players": 4})
    space = env.get_observation_space("player_0")
    module = RandomLegalRLModule(observation_space=space, action_space=env.get_action_space("player_0"))
    rng = np.random.default_rng(0)
    mask = (rng.random((64, 870)) < 0.05).astype(np.int8)
    mask[np.arange(64), rng.integers(0, 870, 64)] = 1
    obs = {"observation": np.zeros((64, space["observation"].shape[0]), np.int8), "action_mask": mask}
    out = module.forward_exploration({Columns.OBS: obs})[Columns.ACTIONS]
    assert mask[np.arange(64), out].all()


def test_vector_env_through_gymnasium_make_vec():
    """RLlib's runner builds the env with gymnasium.make_vec(vector_entry_point): N games, obs then mask."""
    from cluedo_env.training.rllib.vector_env import make_vector_env

    venv = make_vector_env({"num_envs": 6, "preset": "cards", "players": 4, "seed": 3, "learner": BELIEF,
                            "opponents": ["heuristic", "deducer", "random"]})  # fmt: skip
    inner = venv.unwrapped
    obs, infos = venv.reset(seed=3)
    n_act = int(inner.single_action_space.n)
    assert obs.shape == (6, inner.single_observation_space.shape[0] + n_act) and obs.dtype == np.int8
    assert infos == {}
    rng = np.random.default_rng(0)
    for _ in range(30):
        mask = obs[:, -n_act:].astype(bool)
        assert (mask == inner.action_masks()).all() and mask.any(1).all()
        obs, rew, term, trunc, _ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    assert venv.single_observation_space.contains(obs[0])
    # Ray hands the creator no runner index; the on_environment_created callback reseeds the opponents per runner
    from cluedo_env.training.rllib.vector_env import reseed_opponents
    from ray.rllib.env.env_context import EnvContext

    before = [dict(row) for row in inner.core.players]
    reseed_opponents(env=inner, env_context=EnvContext({"seed": 3}, worker_index=2))
    after = inner.core.players
    assert all(after[k][s] is not before[k][s] for k in (0, 1) for s in before[k])  # heuristic, deducer rebuilt


def test_league_seats_play_their_snapshot_for_the_whole_game():
    """A league seat draws one snapshot per game; with none yet it plays random legal moves."""
    from cluedo_env.training.rllib.league import league_pools
    from cluedo_env.training.rllib.module import MaskedPPOTorchRLModule
    from cluedo_env.training.rllib.vector_env import make_vector_env

    venv = make_vector_env({"num_envs": 8, "preset": "cards", "players": 4, "seed": 0, "learner": BELIEF,
                            "opponents": ["league", "heuristic", "league"]})  # fmt: skip
    (pool,) = league_pools(venv)  # both league seats (all their seat copies) share one pool
    inner = venv.unwrapped
    module = MaskedPPOTorchRLModule(observation_space=venv.single_observation_space,
                                    action_space=inner.single_action_space,
                                    model_config={"fcnet_hiddens": [32]})  # fmt: skip
    venv.reset(seed=0)
    leagues = [p for row in inner.core.players for p in row.values() if type(p).__name__ == "LeagueAgent"]
    assert leagues and all((p.game_version == -1).all() for p in leagues)  # empty pool: random legal moves
    assert pool.add(module) == 0 and pool.add(module) == 1 and pool.add(module, max_snapshots=2) == 2
    assert pool.versions() == [1, 2]  # the oldest dropped
    obs, _ = venv.reset(seed=1)
    assert all(set(np.unique(p.game_version)) <= {1, 2} for p in leagues)
    rng = np.random.default_rng(0)
    n_act = int(inner.single_action_space.n)
    for _ in range(40):  # the league seats act through the snapshots; an illegal engine action would raise
        mask = obs[:, -n_act:].astype(bool)
        obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))


def test_bad_config_values_name_what_is_allowed():
    from cluedo_env.training.rllib.config import load_config

    from cluedo_env.errors import TrainConfigError

    selfplay = {"setup": "selfplay", "opponents": "heuristic"}
    for overrides, text in [({"opponents": "nosuchbot"}, "unknown agent 'nosuchbot'"),
                            ({"opponents": ["heuristic"]}, "a list of 3"),
                            ({"opponents": "league"}, "league.snapshot_every is 0"),
                            ({"learner": {"seat": 7}}, "0..3 or 'random'"),
                            ({"learner": {"macro_accuse": True}}, "needs learner.belief=true"),
                            ({"learner": {"colour": 1}}, "unknown config key 'learner.colour'"),
                            ({"learner": {"observation": "compact"}}, "needs belief=True"),
                            ({"learner": {"observation": "tiny", "belief": True}}, "one of ['full', 'compact']"),
                            ({"learner": {"unplayed_games": "hide"}}, "one of step, skip"),
                            ({"precision": "half"}, "precision='half' is not allowed (one of float32, bfloat16)"),
                            (selfplay, "not allowed with setup=selfplay")]:  # fmt: skip
        with pytest.raises(TrainConfigError) as err:
            load_config("configs/rllib_vs_random.yaml", **overrides)
        assert text in str(err.value), (overrides, str(err.value))


def test_bench_from_a_missing_checkpoint_is_a_clear_error(tmp_path):
    """``--bench-from`` names an algorithm checkpoint; a wrong path fails before Ray starts, saying what to give."""
    from cluedo_env.training.rllib.train import main

    from cluedo_env.errors import CheckpointError

    with pytest.raises(CheckpointError, match="--bench-from .*no such checkpoint folder"):
        main(["--config", "configs/experiments/rllib_selfplay_bulk.yaml", "--run-dir", str(tmp_path), "--bench", "1",
              "--bench-from", str(tmp_path / "nope")])  # fmt: skip


def test_runners_on_both_nodes_and_league_snapshots(vs_bots_run, cluster):
    cfg, summary = vs_bots_run
    nodes = summary["env_runner_nodes"]
    assert len(nodes) == 2 and len(set(nodes)) == 2, nodes  # one env runner per node
    assert len({n["NodeID"] for n in ray.nodes() if n["Alive"]}) == 2
    assert [r.get("league_snapshots") for r in summary["iterations"]] == [1, 2]


def test_training_iterations_with_masking_and_checkpoints(vs_bots_run):
    from cluedo_env.training.rllib.module import load_module
    from cluedo_env.training.rllib.train import latest_checkpoint

    cfg, summary = vs_bots_run
    rows = summary["iterations"]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert all(int(r["env_steps"]) >= 512 and int(r["episodes"]) > 0 for r in rows)
    ckpt = latest_checkpoint(cfg.run_dir)
    assert ckpt is not None and ckpt.name == "iter_000002" and str(ckpt) == summary["checkpoint"]
    first = load_module(ckpt.parent / "iter_000001")
    second = load_module(os.path.relpath(ckpt))  # a relative path (run_dir: runs/...) loads too
    a, b = first.state_dict(), second.state_dict()
    assert a.keys() == b.keys()
    assert any(not torch.equal(torch.as_tensor(a[k]), torch.as_tensor(b[k])) for k in a), "main was not trained"


def test_restored_module_masks_its_logits(vs_bots_run):
    from cluedo_env.training.rllib.module import load_module, module_options
    from cluedo_env.training.rllib.train import latest_checkpoint
    from cluedo_env.training.rllib.vector_env import make_vector_env
    from ray.rllib.core.columns import Columns

    cfg, _ = vs_bots_run
    module = load_module(latest_checkpoint(cfg.run_dir))
    assert module_options(module) == {"macro_moves": True, "macro_accuse": True, "belief": True, "observation": "full",
                                      "packed_observation": False}
    assert module.model_config["precision"] == "bfloat16" and module.precision == "float32"  # trained bf16, plays fp32
    venv = make_vector_env({**cfg.env, "num_envs": 4, "seed": 1, "learner": cfg.to_dict()["learner"],
                            "opponents": "random"})  # fmt: skip
    obs, _ = venv.reset(seed=1)
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: torch.as_tensor(obs)})[Columns.ACTION_DIST_INPUTS]
    legal = torch.as_tensor(obs[:, -logits.shape[1] :]) > 0
    assert logits[~legal].max() < -1e30 < logits[legal].min()


def test_resume_continues_from_the_latest_checkpoint(vs_bots_run, cluster):
    from cluedo_env.training.rllib.train import latest_checkpoint, train

    cfg, _ = vs_bots_run
    lines = []
    summary = train(cfg.with_overrides(iterations=3), address=cluster.address, resume=True, log=lines.append)
    assert lines[0].startswith("resumed from") and "iter_000002" in lines[0]
    assert [r["iteration"] for r in summary["iterations"]] == [3]
    assert latest_checkpoint(cfg.run_dir).name == "iter_000003"


def test_selfplay_shared_policy_trains_one_iteration(cluster, tmp_path):
    from cluedo_env.training.rllib.algorithm import build_config
    from cluedo_env.training.rllib.config import load_config
    from cluedo_env.training.rllib.train import train

    one_game = {"num_env_runners": 1, "num_envs_per_env_runner": 1, "rollout_fragment_length": 100}
    small = {**SMALL, "env_runners": one_game,
             "ppo": {"train_batch_size_per_learner": 600, "minibatch_size": 200, "num_epochs": 1}}  # fmt: skip
    cfg = load_config("configs/experiments/rllib_selfplay_multiagent.yaml", iterations=1, run_dir=str(tmp_path),
                      **small)
    assert set(build_config(cfg).policies) == {"main"}
    summary = train(cfg, log=lambda *a: None)
    (row,) = summary["iterations"]
    assert int(row["env_steps"]) >= 600 and row["main_return"] is not None


def test_checkpoint_plays_through_the_evaluator(vs_bots_run, tmp_path):
    import cluedo_env.training.rllib.module as rm
    from cluedo_env.training.rllib.train import latest_checkpoint

    from cluedo_env.cli import evaluate as ev

    cfg, _ = vs_bots_run
    made: list[rm.RllibAgent] = []

    def counting(spec, seed=None, **kw):
        made.append(rm.RllibAgent(spec, seed=seed, **kw))
        return made[-1]

    register_prefix("rllib", counting, replace=True)
    try:
        ckpt = latest_checkpoint(cfg.run_dir)
        # a barely trained learner rarely accuses, so games would run to 400 turns: cap them
        res = ev.main(["--players", f"rllib:{ckpt}", "random", "random", "random", "--games", "8",
                       "--preset", "cards", "--out", str(tmp_path), "--no-progress",
                       "--max-turns", "40"])  # fmt: skip
    finally:
        rm.register()
    entry = res["entries"][0]
    assert entry["player"] == f"rllib:{ckpt}" and entry["games"] == 8
    assert made and sum(a.illegal for a in made) == 0
    assert (tmp_path / "tournament.json").is_file()


def test_lean_categorical_equals_torchs_on_masked_logits():
    """The masked module's action distribution (``LeanTorchCategorical``, log_softmax-normalised) gives torch's
    ``Categorical`` log-probabilities, entropies and probabilities on logits masked with ``FLOAT_MIN``, and never
    samples a masked action."""
    from cluedo_env.training.rllib.module import LeanTorchCategorical
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(200, 50, generator=gen) * 3
    mask = torch.rand(200, 50, generator=gen) < 0.3
    mask[:, 4] = True
    masked = torch.where(mask, logits, torch.full_like(logits, FLOAT_MIN))
    ref = torch.distributions.Categorical(logits=masked, validate_args=False)
    lean = LeanTorchCategorical.from_logits(masked)
    actions = torch.multinomial(mask.float(), 1, generator=gen)[:, 0]
    assert torch.allclose(lean.logp(actions), ref.log_prob(actions), atol=1e-5)
    assert torch.allclose(lean.entropy(), ref.entropy(), atol=1e-5)
    assert torch.allclose(lean._dist.probs, ref.probs, atol=1e-6)
    draws = lean.sample(sample_shape=(20,))
    assert mask.gather(1, draws.T).all()
    assert torch.equal(lean.to_deterministic().sample(), masked.argmax(-1))


def test_bfloat16_module_gives_float32_masked_outputs_close_to_float32():
    """``precision: bfloat16`` runs the module's networks under autocast: logits and values come back float32,
    illegal actions exactly ``FLOAT_MIN`` and legal ones the float32 module's logits to bfloat16 rounding; the
    float32 module's legal logits are its network's own (the additive mask adds exactly 0 there)."""
    import gymnasium as gym
    from cluedo_env.training.rllib.module import MaskedPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    D, A = 40, 30
    spaces = {"observation_space": gym.spaces.Box(0, 127, (D + A,), np.int8), "action_space": gym.spaces.Discrete(A)}
    torch.manual_seed(0)
    full = MaskedPPOTorchRLModule(**spaces, model_config={"fcnet_hiddens": [32, 32], "precision": "float32"})
    low = MaskedPPOTorchRLModule(**spaces, model_config={"fcnet_hiddens": [32, 32], "precision": "bfloat16"})
    low.load_state_dict(full.state_dict())
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 2, (64, D)).astype(np.int8)
    mask = rng.random((64, A)) < 0.4
    mask[:, 0] = True
    batch = {Columns.OBS: torch.as_tensor(np.concatenate([obs, mask.astype(np.int8)], 1))}
    legal = torch.as_tensor(mask)
    with torch.no_grad():
        raw = full.pi(full.encoder({Columns.OBS: torch.as_tensor(obs).float()})["encoder_out"]["actor"])
        for forward in ("forward_exploration", "forward_inference", "forward_train"):
            a = getattr(full, forward)(batch)[Columns.ACTION_DIST_INPUTS]
            b = getattr(low, forward)(batch)[Columns.ACTION_DIST_INPUTS]
            assert a.dtype == b.dtype == torch.float32
            assert (a[~legal] == FLOAT_MIN).all() and (b[~legal] == FLOAT_MIN).all()
            assert torch.equal(a[legal], raw[legal])
            assert torch.allclose(a[legal], b[legal], atol=0.05)
        va, vb = full.compute_values(batch), low.compute_values(batch)
    assert va.dtype == vb.dtype == torch.float32 and torch.allclose(va, vb, atol=0.05)

    def critic(*args, **kwargs):
        raise AssertionError("acting ran the critic's encoder")

    # a critic with its own encoder (vf_share_layers: false): acting reads the actor's network only, same logits
    sep = MaskedPPOTorchRLModule(**spaces, model_config={"fcnet_hiddens": [32, 32], "vf_share_layers": False})
    with torch.no_grad():
        raw = sep.pi(sep.encoder({Columns.OBS: torch.as_tensor(obs).float()})["encoder_out"]["actor"])
        sep.encoder.critic_encoder.forward = critic
        for forward in ("forward_exploration", "forward_inference"):
            assert torch.equal(getattr(sep, forward)(batch)[Columns.ACTION_DIST_INPUTS][legal], raw[legal])
        with pytest.raises(AssertionError, match="critic"):
            sep.forward_train(batch)
    with pytest.raises(ValueError, match="precision='half'"):
        MaskedPPOTorchRLModule(**spaces, model_config={"fcnet_hiddens": [32], "precision": "half"})


def test_every_shipped_rllib_config_loads():
    """Each ``configs/rllib_*.yaml`` (and ``configs/experiments/rllib_*.yaml``) passes the config checks without Ray."""
    from pathlib import Path

    from cluedo_env.training.rllib.config import RllibConfig, load_config

    configs = Path(__file__).resolve().parents[1] / "configs"
    paths = sorted(configs.glob("rllib_*.yaml")) + sorted((configs / "experiments").glob("rllib_*.yaml"))
    assert len(paths) >= 6
    for path in paths:
        cfg = load_config(path)
        assert cfg.precision in ("float32", "bfloat16"), path
        assert RllibConfig.from_dict(cfg.to_dict()) == cfg, path  # what a run saves builds the same config
    assert load_config(configs / "rllib_vs_heuristic.yaml").precision == "bfloat16"
