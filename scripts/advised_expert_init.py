"""Warm start for an advised learner with an expert advisor: its policy cloned from the expert's rule.

Trained from random weights, the advised learner learns never to accuse before it finds the
accusations that pay (see :mod:`cluedo_env.agents.learner.accusation_features`). This script starts it from the
expert's own rule instead: it plays ``--steps`` learner decisions in the config's env, following
the ``expert_rule`` slot (accuse where the expert at its defaults would), and fits the policy of
``--base`` (a checkpoint of the same config: its network, its value head kept) to accuse with
probability ``--high`` where the slot is set and ``--low`` elsewhere (soft targets: the policy keeps
exploring), wherever action 1 is open. The result is a checkpoint for the config's ``init_from``.

    PYTHONPATH=. python scripts/advised_expert_init.py --config configs/train_vs_deducer.yaml \\
        --base runs/x/model.zip --out runs/advised_expert_init.zip
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    ap.add_argument("--base", required=True, help="checkpoint of the same config (network and value head)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=80, help="decisions per game slot collected (x num_envs)")
    ap.add_argument("--high", type=float, default=0.9)
    ap.add_argument("--low", type=float, default=0.01)
    ap.add_argument("--updates", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    import torch
    from cluedo_env.agents.learner.accusation_features import ACCUSATION_SIZE, accusation_layout
    from cluedo_env.training.learner_core import LearnerCore
    from cluedo_env.training.learner_options import LearnerOptions
    from cluedo_env.training.sb3.checkpoints import load_model, save_model_atomic
    from cluedo_env.training.sb3.config import load_train_config

    env = load_train_config(args.config).env
    options = LearnerOptions(env.num_envs, env.rules_config, opponents=env.opponents, seat=env.seat,
                             belief=True, observation=env.observation, advisor=env.advisor, seed=args.seed)
    core = LearnerCore(options)
    if not core.accusation_features:
        raise SystemExit("the config's advisor gives no accusation features (an expert advisor is needed)")
    rule = core.obs_size - ACCUSATION_SIZE + accusation_layout()["expert_rule"][0]
    obs = core.reset(seed=args.seed)
    xs, ts = [], []
    for _ in range(args.steps):
        mask = core.action_masks()
        act = (mask[:, 1] & (obs[:, rule] == 1)).astype(np.int64)
        keep = mask[:, 1] & ~core.unplayed
        xs.append(obs[keep].copy())
        ts.append(np.where(obs[keep, rule] == 1, args.high, args.low))
        obs, *_ = core.step(act)
    x = torch.as_tensor(np.concatenate(xs), dtype=torch.float32)
    t = torch.as_tensor(np.concatenate(ts), dtype=torch.float32)
    print(f"{len(x)} decisions with action 1 open, expert rule set in {(t > 0.5).float().mean():.3%}")
    model = load_model(args.base)
    pol = model.policy
    params = list(pol.mlp_extractor.policy_net.parameters()) + list(pol.action_net.parameters())
    if getattr(pol, "share_features_extractor", True):
        params += list(pol.features_extractor.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    gen = torch.Generator().manual_seed(args.seed)
    for k in range(args.updates):
        b = torch.randint(0, len(x), (4096,), generator=gen)
        latent_pi = pol.mlp_extractor.forward_actor(pol.extract_features(x[b], pol.pi_features_extractor))
        logp = torch.log_softmax(pol.action_net(latent_pi), 1)
        loss = -(t[b] * logp[:, 1] + (1 - t[b]) * logp[:, 0]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if k % 100 == 0 or k == args.updates - 1:
            with torch.no_grad():
                p = logp[:, 1].exp()
                on = t[b] > 0.5
                print(f"update {k}: loss {loss.item():.4f}, P(accuse) rule set {p[on].mean():.3f}, "
                      f"unset {p[~on].mean():.4f}")  # fmt: skip
    save_model_atomic(model, args.out)
    print("saved", args.out)


if __name__ == "__main__":
    main()
