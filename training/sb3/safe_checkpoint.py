"""Checkpoints as data: a MaskablePPO zip rebuilt from JSON and weight tensors, never from a pickle.

Stable-Baselines3's own loader (``MaskablePPO.load``) unpickles the ``data`` entry of a zip (the policy class, the
spaces, the schedules are cloudpickle blobs in it), so a crafted file runs whatever code it likes the moment it is
loaded. A checkpoint written here carries, beside SB3's entries (kept, so that ``MaskablePPO.load`` still reads it
for whoever trusts the file), one more entry, ``cluedo_env.json``: the format version, the ``cluedo_meta``, the
policy class as a name from :data:`POLICY_CLASSES`, its keyword arguments as JSON (a class among them, such as the
packed-observation extractor or an activation, as a name from :data:`KWARG_CLASSES`), the observation and action
spaces as JSON, the PPO settings and the progress a ``--resume`` needs. :func:`read_model` builds the model from
that entry the way SB3's loader does (same constructor, same seeding, same buffers) and reads the weights and the
optimizer state with ``torch.load(..., weights_only=True)``, which accepts tensors and plain containers only.
A zip without the entry is refused by :func:`cluedo_env.training.sb3.checkpoints.load_model`, naming the one-time
conversion (:mod:`cluedo_env.training.sb3.convert_checkpoint`).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections import deque
from typing import IO, Any

import gymnasium as gym
import numpy as np
import torch
from cluedo_env.training.sb3.factored_policy import FactoredMaskablePolicy
from cluedo_env.training.sb3.lean_policy import LeanMaskablePolicy
from cluedo_env.training.sb3.packed_extractor import PackedObservationExtractor
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import FlattenExtractor
from stable_baselines3.common.utils import ConstantSchedule, FloatSchedule, check_for_correct_spaces
from torch import nn

from cluedo_env.errors import CheckpointError

ENTRY = "cluedo_env.json"  # the zip entry this module writes and reads
FORMAT = "cluedo_env.sb3_checkpoint"
VERSION = 1
ENTRY_LIMIT = 64 * 1024**2  # bytes: the entry is a few kB (a train_config and two spaces); more is not ours
# SB3's rollout state (the last observation of each training game): SB3 pickles it with a model; this format leaves
# it out (a loaded model's games restart before it trains again), and a shipped or converted copy drops it.
ROLLOUT_STATE = ("_last_obs", "_last_original_obs", "_last_episode_starts")
# The policy classes a checkpoint may name: the only code a checkpoint can choose to run.
POLICY_CLASSES: dict[str, type] = {
    "MaskableActorCriticPolicy": MaskableActorCriticPolicy,
    "LeanMaskablePolicy": LeanMaskablePolicy,
    "FactoredMaskablePolicy": FactoredMaskablePolicy,
}
# Classes that may appear as values of the policy's keyword arguments, by name.
KWARG_CLASSES: dict[str, type] = {
    c.__name__: c
    for c in (PackedObservationExtractor, FlattenExtractor, nn.ReLU, nn.Tanh, nn.ELU, nn.LeakyReLU, nn.GELU, nn.SiLU,
              torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD, torch.optim.RMSprop)  # fmt: skip
}
SPACE_DTYPES = ("int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64")
# PPO settings rebuilt from the entry: (attribute, JSON kind); "?": may be null; "schedule": a constant SB3 keeps as
# a schedule (the configs give numbers only).
SETTINGS = (("learning_rate", "number"), ("n_steps", "int"), ("batch_size", "int"), ("n_epochs", "int"),
            ("gamma", "number"), ("gae_lambda", "number"), ("ent_coef", "number"), ("vf_coef", "number"),
            ("max_grad_norm", "number"), ("clip_range", "schedule"), ("clip_range_vf", "schedule?"),
            ("normalize_advantage", "bool"), ("target_kl", "number?"), ("use_sde", "bool"),
            ("sde_sample_freq", "int"), ("seed", "int?"), ("n_envs", "int"), ("_stats_window_size", "int"),
            ("tensorboard_log", "str?"), ("verbose", "int"))  # fmt: skip
# Where a run stands: what --resume continues from (the step count, the schedules' progress, the log's counters).
PROGRESS = (("num_timesteps", "int"), ("_total_timesteps", "int"), ("_num_timesteps_at_start", "int"),
            ("_episode_num", "int"), ("_current_progress_remaining", "number"), ("_n_updates", "int"))  # fmt: skip


# ------------------------------------------------------------------------------------------------ writing
def model_record(model) -> dict[str, Any]:
    """The ``cluedo_env.json`` entry of ``model``; a :class:`CheckpointError` names what cannot be stored as data."""
    if model.rollout_buffer_class not in (None, MaskableRolloutBuffer) or model.rollout_buffer_kwargs:
        raise CheckpointError(f"rollout buffer {model.rollout_buffer_class} {model.rollout_buffer_kwargs} cannot be "
                              "saved as data (MaskableRolloutBuffer without arguments)")  # fmt: skip
    return {
        "format": FORMAT,
        "version": VERSION,
        "cluedo_meta": _json_value(getattr(model, "cluedo_meta", None), "cluedo_meta"),
        "policy": {"class": _name_of(type(model.policy), POLICY_CLASSES, "policy class"),
                   "kwargs": {k: _encode_kwarg(k, v) for k, v in model.policy_kwargs.items()}},  # fmt: skip
        "observation_space": _encode_space(model.observation_space),
        "action_space": _encode_space(model.action_space),
        "settings": {k: _encode_setting(k, getattr(model, k), kind) for k, kind in SETTINGS},
        "progress": {k: _encode_setting(k, getattr(model, k), kind) for k, kind in PROGRESS},
        "episodes": _numbers_only(getattr(model, "ep_info_buffer", None)),
        "successes": [float(s) for s in (getattr(model, "ep_success_buffer", None) or ()) if math.isfinite(s)],
    }


def write_model(model, file: IO[bytes], record: dict[str, Any] | None = None) -> None:
    """SB3's zip of ``model`` (``model.save``) plus the ``cluedo_env.json`` entry, written to ``file``."""
    record = model_record(model) if record is None else record
    buf = io.BytesIO()
    model.save(buf)
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr(ENTRY, json.dumps(record, indent=1, sort_keys=True, allow_nan=False), zipfile.ZIP_DEFLATED)
    file.write(buf.getvalue())


def _name_of(cls: type, allowed: dict[str, type], what: str) -> str:
    for name, known in allowed.items():
        if cls is known:
            return name
    raise CheckpointError(f"{what} {getattr(cls, '__qualname__', cls)!r} cannot be saved as data "
                          f"(allowed: {', '.join(allowed)})")  # fmt: skip


def _json_value(value: Any, key: str) -> Any:
    """``value`` as it comes back from JSON (tuples become lists), or a clear error if it is not JSON."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{key}: {value!r} cannot be saved as JSON ({exc})") from exc


def _encode_kwarg(key: str, value: Any) -> Any:
    if isinstance(value, type):
        return {"class": _name_of(value, KWARG_CLASSES, f"policy_kwargs[{key!r}]")}
    return _json_value(value, f"policy_kwargs[{key!r}]")


def _encode_space(space: gym.Space) -> dict[str, Any]:
    if isinstance(space, gym.spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, gym.spaces.Box) and np.dtype(space.dtype).name in SPACE_DTYPES:
        out: dict[str, Any] = {"type": "Box", "shape": list(space.shape), "dtype": np.dtype(space.dtype).name}
        for bound in ("low", "high"):  # one number where every entry is the same (the learner's spaces: 0 and 127)
            arr = np.asarray(getattr(space, bound))
            flat = np.unique(arr)
            out[bound] = flat[0].item() if len(flat) == 1 else arr.tolist()
        return out
    raise CheckpointError(f"space {space!r} cannot be saved as data (Discrete, or Box of {', '.join(SPACE_DTYPES)})")


def _constant(value: Any, key: str) -> float:
    """The number behind a constant SB3 schedule (or the number itself)."""
    while isinstance(value, FloatSchedule):
        value = value.value_schedule
    if isinstance(value, ConstantSchedule):
        value = value.val
    if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
        return float(value)
    raise CheckpointError(f"{key}: {value!r} is not a constant; only constant settings are saved as data")


def _encode_setting(key: str, value: Any, kind: str) -> Any:
    if value is None and kind.endswith("?"):
        return None
    kind = kind.rstrip("?")
    if kind in ("schedule", "number"):
        return _constant(value, key)
    if kind == "int":
        return int(_constant(value, key))
    return _json_value(value, key)


def _numbers_only(buffer: Any) -> list[dict[str, float]]:
    """The recent episodes' ``{"r", "l", "t"}`` (SB3's log window), finite numbers only."""
    out = []
    for item in buffer or ():
        if isinstance(item, dict):
            row = {str(k): float(v) for k, v in item.items() if isinstance(v, (int, float, np.number))}
            out.append({k: v for k, v in row.items() if math.isfinite(v)})
    return out


# ------------------------------------------------------------------------------------------------ reading
def read_record(zf: zipfile.ZipFile, where: str) -> dict[str, Any]:
    """The checked ``cluedo_env.json`` entry of an open checkpoint zip (parsed with ``json`` only)."""
    if zf.getinfo(ENTRY).file_size > ENTRY_LIMIT:
        raise CheckpointError(f"{where}: {ENTRY} is over {ENTRY_LIMIT} bytes (not a checkpoint's metadata)")
    try:
        record = json.loads(zf.read(ENTRY).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CheckpointError(f"{where}: {ENTRY} is not JSON ({exc})") from exc
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise CheckpointError(f"{where}: {ENTRY} is not a {FORMAT} record")
    if record.get("version") != VERSION:
        raise CheckpointError(f"{where}: {ENTRY} has version {record.get('version')!r}; this cluedo_env reads "
                              f"version {VERSION} (written by a newer cluedo_env?)")  # fmt: skip
    for key, kind in (("policy", dict), ("observation_space", dict), ("action_space", dict), ("settings", dict),
                      ("progress", dict), ("episodes", list), ("successes", list)):  # fmt: skip
        if not isinstance(record.get(key), kind):
            raise CheckpointError(f"{where}: {ENTRY} needs {key!r} as a JSON {kind.__name__}")
    return record


def decode_space(spec: dict[str, Any], where: str) -> gym.Space:
    """A Box or Discrete space from its JSON (as :func:`model_record` writes it)."""
    try:
        if spec.get("type") == "Discrete":
            n = _int(spec["n"])
            if n < 1:
                raise ValueError(f"n={n} (at least 1)")
            return gym.spaces.Discrete(n, start=_int(spec.get("start", 0)))
        if spec.get("type") == "Box":
            shape = tuple(_int(n) for n in spec["shape"])
            if spec["dtype"] not in SPACE_DTYPES or not shape or not all(0 < n <= 10**7 for n in shape):
                raise ValueError(f"shape {shape} dtype {spec['dtype']!r} (positive sizes; {', '.join(SPACE_DTYPES)})")
            low, high = (np.broadcast_to(np.asarray(spec[b], dtype=spec["dtype"]), shape) for b in ("low", "high"))
            return gym.spaces.Box(low=low, high=high, shape=shape, dtype=np.dtype(spec["dtype"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"{where}: malformed space {str(spec)[:200]} ({exc})") from exc
    raise CheckpointError(f"{where}: space type {spec.get('type')!r} (allowed: Box, Discrete)")


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not an integer")
    return value


def _decode_setting(key: str, value: Any, kind: str, where: str) -> Any:
    if value is None and kind.endswith("?"):
        return None
    kind = kind.rstrip("?")
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = {"int": number and isinstance(value, int), "number": number, "schedule": number,
          "bool": isinstance(value, bool), "str": isinstance(value, str)}[kind]  # fmt: skip
    if not ok:
        raise CheckpointError(f"{where}: {ENTRY} setting {key!r} must be a {kind}, got {value!r}")
    return ConstantSchedule(float(value)) if kind == "schedule" else value


def _decode_kwargs(kwargs: dict[str, Any], where: str) -> dict[str, Any]:
    out = {}
    for key, value in kwargs.items():
        if isinstance(value, dict) and set(value) == {"class"}:
            if value["class"] not in KWARG_CLASSES:
                raise CheckpointError(f"{where}: policy_kwargs[{key!r}] names class {value['class']!r} "
                                      f"(allowed: {', '.join(KWARG_CLASSES)})")  # fmt: skip
            value = KWARG_CLASSES[value["class"]]
        out[key] = value
    return out


def read_tensors(zf: zipfile.ZipFile, name: str, device: str, where: str) -> Any:
    """An entry written by ``torch.save``, read with ``weights_only=True`` (tensors and plain containers only)."""
    if name not in zf.namelist():
        raise CheckpointError(f"{where}: no {name} (a MaskablePPO zip has policy.pth and policy.optimizer.pth)")
    try:
        return torch.load(io.BytesIO(zf.read(name)), map_location=device, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - the restricted unpickler refuses anything but tensors, in many ways
        raise CheckpointError(f"{where}: {name} is not a plain tensor file ({exc})") from exc


def read_model(zf: zipfile.ZipFile, record: dict[str, Any], where: str, env=None, device: str = "cpu",
               **overrides: Any) -> MaskablePPO:  # fmt: skip
    """A MaskablePPO built from ``record`` (:func:`read_record`) and the zip's tensors, as SB3's loader builds one:
    the same constructor, settings, seeding (``set_random_seed(seed)`` in ``_setup_model``, then the policy's
    initialisation) and buffers, then the policy's and the optimizer's state (float16 weights become float32
    parameters, as there). With ``env`` (spaces checked) the model takes its number of games, ready to train on."""
    policy = record["policy"]
    if policy.get("class") not in POLICY_CLASSES:
        raise CheckpointError(f"{where}: policy class {policy.get('class')!r} (allowed: {', '.join(POLICY_CLASSES)})")
    if not isinstance(policy.get("kwargs"), dict):
        raise CheckpointError(f"{where}: {ENTRY} needs policy.kwargs as a JSON object")
    attrs: dict[str, Any] = {
        "policy_kwargs": _decode_kwargs(policy["kwargs"], where),
        "observation_space": decode_space(record["observation_space"], where),
        "action_space": decode_space(record["action_space"], where),
        "cluedo_meta": record.get("cluedo_meta"),
    }
    for group, fields in (("settings", SETTINGS), ("progress", PROGRESS)):
        for key, kind in fields:
            if key not in record[group]:
                raise CheckpointError(f"{where}: {ENTRY} has no {group}.{key}")
            attrs[key] = _decode_setting(key, record[group][key], kind, where)
    params = {"policy": read_tensors(zf, "policy.pth", device, where),
              "policy.optimizer": read_tensors(zf, "policy.optimizer.pth", device, where)}  # fmt: skip
    try:
        if env is not None:
            env = MaskablePPO._wrap_env(env, attrs["verbose"])
            check_for_correct_spaces(env, attrs["observation_space"], attrs["action_space"])
            attrs["n_envs"] = env.num_envs  # the buffers follow the env given; its games start afresh (reset)
        model = MaskablePPO(policy=POLICY_CLASSES[policy["class"]], env=env, device=device, _init_setup_model=False)
        model.__dict__.update(attrs)
        model.__dict__.update(overrides)
        window = int(model._stats_window_size)
        model.ep_info_buffer = deque((r for r in record["episodes"] if isinstance(r, dict)), maxlen=window)
        model.ep_success_buffer = deque((s for s in record["successes"] if isinstance(s, float)), maxlen=window)
        model._setup_model()
        model.set_parameters(params, exact_match=True, device=device)
    except Exception as exc:  # noqa: BLE001 - settings or tensors that do not fit the network: a bad file
        raise CheckpointError(f"{where}: its {ENTRY} and weights do not make a MaskablePPO model ({exc!r})") from exc
    if model.use_sde:
        model.policy.reset_noise()
    return model


__all__ = ["ENTRY", "FORMAT", "KWARG_CLASSES", "POLICY_CLASSES", "ROLLOUT_STATE", "VERSION", "decode_space",
           "model_record", "read_model", "read_record", "read_tensors", "write_model"]  # fmt: skip
