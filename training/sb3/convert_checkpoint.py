"""The one-time conversion of a checkpoint that only pickle can read into one that loads as data.

Checkpoints written before ``cluedo_env.json`` existed hold their settings only as cloudpickle blobs in SB3's
``data`` entry; reading them means running whatever code the file holds. :func:`convert_checkpoint` is the only
place in the package that calls SB3's unpickling loader (``MaskablePPO.load``), and only when told the file is
trusted (``trust_pickle=True``, ``cluedo convert-checkpoint OLD.zip NEW.zip --trust-pickle``). It writes the same
model with :func:`~cluedo_env.training.sb3.checkpoints.save_model_atomic`, keeping the stored weights' dtype (the
shipped players hold float16 weights: they stay float16, bit for bit), then loads the new file the safe way and
checks that every weight equals the old file's.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import torch
from cluedo_env.training.sb3.checkpoints import CONVERT_COMMAND, FORMAT, load_model, save_model_atomic
from cluedo_env.training.sb3.factored_policy import FactoredMaskablePolicy
from cluedo_env.training.sb3.lean_policy import LeanMaskablePolicy
from cluedo_env.training.sb3.safe_checkpoint import ENTRY, ROLLOUT_STATE
from sb3_contrib import MaskablePPO

from cluedo_env.errors import CheckpointError
from cluedo_env.files import check_input_file

# A checkpoint pickles its policy class by module path. Checkpoints saved while the training code was the top-level
# package ``training`` (the shipped players among them) name these paths: they load with the same classes.
_POLICY_CLASS_OF_MODULE = {
    "training.lean_policy": LeanMaskablePolicy,
    "training.factored_policy": FactoredMaskablePolicy,
    "training.sb3.lean_policy": LeanMaskablePolicy,
    "training.sb3.factored_policy": FactoredMaskablePolicy,
}
_LIMIT = 4 * 1024**3  # bytes, as for any checkpoint


def convert_checkpoint(old: str | os.PathLike, new: str | os.PathLike, *, trust_pickle: bool = False) -> Path:
    """Write ``old`` (a checkpoint only pickle can read) as ``new`` (one :func:`load_model` reads as data).

    ``trust_pickle`` must be True: reading ``old`` unpickles it, which runs any code it holds. Returns ``new``.
    """
    old, new = Path(old), Path(new)
    if trust_pickle is not True:
        raise CheckpointError(
            f"checkpoint {old}: converting it unpickles it, which runs any code the file holds; convert only a file "
            f"you trust (one you trained, or from a source you trust), saying so: {CONVERT_COMMAND}"
        )
    check_input_file(old, "checkpoint", _LIMIT, CheckpointError)
    if new.exists():
        raise CheckpointError(f"converted checkpoint {new}: already exists (give a new path for NEW.zip)")
    try:
        with zipfile.ZipFile(old) as zf:
            names = set(zf.namelist())
            if not {"data", "policy.pth"} <= names:
                raise CheckpointError(f"checkpoint {old}: not a Stable-Baselines3 model (has {sorted(names)})")
            if ENTRY in names:
                raise CheckpointError(f"checkpoint {old}: already holds {ENTRY}; it loads as it is")
            module = _policy_module(zf)
            stored = torch.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu", weights_only=True)
    except (zipfile.BadZipFile, OSError) as exc:
        raise CheckpointError(f"checkpoint {old}: not a readable zip ({exc})") from exc
    custom = {"policy_class": _POLICY_CLASS_OF_MODULE[module]} if module in _POLICY_CLASS_OF_MODULE else {}
    try:
        model = MaskablePPO.load(old, device="cpu", custom_objects=custom)  # the trusted unpickling
    except Exception as exc:  # noqa: BLE001 - any failure inside SB3's loader means a bad file
        raise CheckpointError(f"checkpoint {old}: cannot be loaded as a MaskablePPO model ({exc!r})") from exc
    meta = getattr(model, "cluedo_meta", None)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {old}: no Cluedo metadata (format {FORMAT!r}); not made by "
                              "cluedo_env.training.sb3.train")  # fmt: skip
    for attr in ROLLOUT_STATE:  # a loaded model's games restart (reset) before it trains again
        setattr(model, attr, None)
    dtypes = {v.dtype for v in stored.values() if v.is_floating_point()}
    if len(dtypes) == 1:  # keep the stored precision (float16 in the shipped players): the same bits, the same size
        model.policy.to(dtypes.pop())
    save_model_atomic(model, new)
    _check_same_weights(old, new, stored)
    return new


def _check_same_weights(old: Path, new: Path, stored: dict[str, torch.Tensor]) -> None:
    """The new file's weights, stored and loaded, are the old file's bit for bit."""
    with zipfile.ZipFile(new) as zf:
        again = torch.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu", weights_only=True)
    loaded = load_model(new).policy.state_dict()
    same = set(again) == set(stored) and all(
        again[k].dtype == v.dtype and torch.equal(again[k], v) and torch.equal(loaded[k], v.to(loaded[k].dtype))
        for k, v in stored.items()
    )
    if not same:
        new.unlink()
        raise CheckpointError(f"checkpoint {old}: the converted weights differ from the file's (nothing written)")


def _policy_module(zf: zipfile.ZipFile) -> str | None:
    """The module path a checkpoint's pickled policy class names (SB3 writes it beside the pickle), if readable."""
    try:
        entry = json.loads(zf.read("data")).get("policy_class")
    except (ValueError, KeyError, AttributeError):
        return None
    return entry.get("__module__") if isinstance(entry, dict) else None


__all__ = ["convert_checkpoint"]
