"""Whether a ``--resume`` continues the same run: its config against the one the run was started with.

Both backends save the config a run starts with and compare it on ``--resume``. A key that changes what is learned
(rules, opponents, network, optimiser settings, seed) would make the resumed run another experiment under the old
name, so the resume is refused with the differing keys; each backend names the keys that may change (how long it
trains, how it is saved and watched).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from cluedo_env.errors import TrainConfigError


def _flat(d: object, prefix: str = "") -> dict[str, object]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, object] = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) and v else {f"{prefix}{k}": v})
    return out


def config_changes(saved: dict, cfg: dict, safe: Sequence[str]) -> list[str]:
    """The dotted keys whose value differs between a run's saved config and ``cfg``, except those under ``safe``."""
    old, new = _flat(saved), _flat(cfg)
    keys = sorted(set(old) | set(new))
    return [k for k in keys if k.split(".", 1)[0] not in safe and old.get(k, None) != new.get(k, None)]


def check_same_run(saved: dict | None, cfg: dict, run_dir: Path, safe: Sequence[str]) -> None:
    """Refuse a ``--resume`` whose config differs from the run's (``saved``), naming the keys (old -> new)."""
    if not isinstance(saved, dict):
        return  # a run from before configs were saved: nothing to compare
    cfg = json.loads(json.dumps(cfg, default=str))  # as the run's file holds it: lists, not tuples
    changed = config_changes(saved, cfg, safe)
    if changed:
        old, new = _flat(saved), _flat(cfg)
        shown = "; ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in changed[:6])
        more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
        raise TrainConfigError(
            f"--resume {run_dir}: the config differs from the run's in {shown}{more} (resume with the run's config, "
            f"or start a new run_dir; only {', '.join(safe)} may change)"
        )


__all__ = ["check_same_run", "config_changes"]
