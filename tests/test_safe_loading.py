"""Loading never runs code from the file: checkpoints (``ckpt:``, ``load_model``, ``--resume``), the shipped
``pretrained:`` players, ``rllib:`` checkpoints (training/sb3/safe_checkpoint.py, checkpoints.py,
convert_checkpoint.py; training/rllib/module.py)."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from cluedo_env.agents.play.registry import make_agent  # noqa: E402
from cluedo_env.training import pretrained  # noqa: E402
from cluedo_env.training.sb3.checkpoints import load_model, save_model_atomic  # noqa: E402
from cluedo_env.training.sb3.config import load_train_config  # noqa: E402
from cluedo_env.training.sb3.convert_checkpoint import convert_checkpoint  # noqa: E402
from cluedo_env.training.sb3.safe_checkpoint import ENTRY  # noqa: E402
from cluedo_env.training.sb3.train import Trainer  # noqa: E402

from cluedo_env.cli import main as cli_main  # noqa: E402
from cluedo_env.errors import CheckpointError, UsageError  # noqa: E402


class _WritesAFile:
    """Unpickling this creates the file ``path``: what a crafted checkpoint would do (any code could run)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _payload(marker: Path) -> bytes:
    return pickle.dumps(_WritesAFile(marker))


def test_the_payload_really_writes_the_file(tmp_path):
    """The crafted bytes below do run code when unpickled (so the other tests would see it if a loader did)."""
    marker = tmp_path / "proof"
    pickle.loads(_payload(marker)).close()
    assert marker.exists()


def _tiny(run_dir: Path, **over) -> dict:
    cfg = {"run_dir": str(run_dir), "seed": 0, "total_timesteps": 256, "checkpoint_every": 256,
           "env": {"num_envs": 16, "opponents": "random", "seat": "random", "macro_moves": True},
           "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1, "net_arch": [32]},
           "eval": {"every": 0, "games": 0, "batch_size": 8}}  # fmt: skip
    for k, v in over.items():
        cfg[k] = {**cfg.get(k, {}), **v} if isinstance(v, dict) else v
    return load_train_config(None, **cfg)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, Trainer]:
    """A tiny training run (factored policy): its model.zip is a checkpoint of this format, its model the live one."""
    run_dir = tmp_path_factory.mktemp("safe") / "run"
    trainer = Trainer(_tiny(run_dir, policy="factored"), progress=False)
    trainer.run()
    return run_dir, trainer


def _old_format(src: Path, dst: Path, marker: Path | None = None) -> Path:
    """``src`` without its ``cluedo_env.json`` entry (a checkpoint as SB3 alone writes it), with ``marker``'s
    payload as the pickled policy class if given (a crafted one)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename == ENTRY:
                continue
            data = zin.read(item.filename)
            if item.filename == "data" and marker is not None:
                fields = json.loads(data)
                fields["policy_class"][":serialized:"] = base64.b64encode(_payload(marker)).decode()
                data = json.dumps(fields).encode()
            zout.writestr(item.filename, data)
    return dst


def test_a_crafted_old_format_checkpoint_is_refused_everywhere_and_runs_nothing(run, tmp_path, monkeypatch):
    run_dir, _ = run
    marker = tmp_path / "pwned"
    crafted = _old_format(run_dir / "model.zip", tmp_path / "crafted.zip", marker)
    hint = "convert-checkpoint .*--trust-pickle"
    with pytest.raises(CheckpointError, match=hint):
        load_model(crafted)
    with pytest.raises(CheckpointError, match=hint):
        make_agent(f"ckpt:{crafted}")
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "evil.zip").write_bytes(crafted.read_bytes())
    (shipped / "index.json").write_text(json.dumps({"evil": {"file": "evil.zip", "card": {}}}))
    monkeypatch.setattr(pretrained, "DIRECTORY", shipped)
    with pytest.raises(CheckpointError, match=hint):
        make_agent("pretrained:evil")
    with pytest.raises(CheckpointError, match="trust"):  # the conversion itself wants the flag
        convert_checkpoint(crafted, tmp_path / "new.zip")
    assert cli_main(["convert-checkpoint", str(crafted), str(tmp_path / "new.zip")]) == 2
    assert not marker.exists() and not (tmp_path / "new.zip").exists()


def test_pickles_inside_a_new_format_checkpoint_are_never_read(run, tmp_path):
    """SB3's pickled fields are ignored (the JSON entry describes the model); a weight file that is a pickle of
    anything but tensors is refused by ``torch.load(weights_only=True)``."""
    run_dir, _ = run
    marker = tmp_path / "pwned"
    with zipfile.ZipFile(run_dir / "model.zip") as zin, zipfile.ZipFile(tmp_path / "a.zip", "w") as za, \
            zipfile.ZipFile(tmp_path / "b.zip", "w") as zb:  # fmt: skip
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "data":  # every pickled field of SB3's entry replaced by the payload
                fields = json.loads(data)
                for value in fields.values():
                    if isinstance(value, dict) and ":serialized:" in value:
                        value[":serialized:"] = base64.b64encode(_payload(marker)).decode()
                data = json.dumps(fields).encode()
            za.writestr(item.filename, data)
            zb.writestr(item.filename, _payload(marker) if item.filename == "policy.pth" else zin.read(item.filename))
    model = load_model(tmp_path / "a.zip")
    assert model.cluedo_meta["format"] == "cluedo_env.maskable_ppo.v1"
    with pytest.raises(CheckpointError, match="policy.pth is not a plain tensor file"):
        load_model(tmp_path / "b.zip")
    assert not marker.exists()


def test_a_malformed_entry_names_what_is_wrong(run, tmp_path):
    run_dir, _ = run
    with zipfile.ZipFile(run_dir / "model.zip") as zf:
        entry = json.loads(zf.read(ENTRY))
    for change, message in ((lambda e: e["policy"].update({"class": "os.system"}), "policy class 'os.system'"),
                            (lambda e: e["policy"]["kwargs"].update({"x": {"class": "Popen"}}), "names class 'Popen'"),
                            (lambda e: e.update({"version": 99}), "version 99"),
                            (lambda e: e["settings"].update({"n_steps": "16"}), "'n_steps' must be a int"),
                            (lambda e: e["observation_space"].update({"dtype": "object"}), "malformed")):  # fmt: skip
        bad = json.loads(json.dumps(entry))
        change(bad)
        path = tmp_path / "bad.zip"
        with zipfile.ZipFile(run_dir / "model.zip") as zin, zipfile.ZipFile(path, "w") as zout:
            for item in zin.infolist():
                zout.writestr(item.filename, json.dumps(bad) if item.filename == ENTRY else zin.read(item.filename))
        with pytest.raises(CheckpointError, match=message):
            load_model(path)


def _same_play(a, b, n_obs: int, n_act: int) -> None:
    """Two models give the same logits, values and sampled actions (same seed) on random observations and masks."""
    gen = np.random.default_rng(1)
    obs = torch.as_tensor(gen.integers(0, 2, size=(300, n_obs)).astype(np.float32))
    mask = gen.random((300, n_act)) < 0.3
    mask[:, 0] = True
    with torch.no_grad():
        da, db = (m.policy.get_distribution(obs, action_masks=mask) for m in (a, b))
        assert torch.equal(da.distribution.logits, db.distribution.logits)
        assert torch.equal(a.policy.predict_values(obs), b.policy.predict_values(obs))
        torch.manual_seed(5)
        sa = da.get_actions(deterministic=False)
        torch.manual_seed(5)
        assert torch.equal(sa, db.get_actions(deterministic=False))


def test_a_saved_checkpoint_loads_and_plays_as_the_live_model_and_as_sb3s_loader(run, tmp_path):
    from sb3_contrib import MaskablePPO

    run_dir, trainer = run
    live = trainer.model
    loaded = load_model(run_dir / "model.zip")
    assert type(loaded.policy) is type(live.policy) and loaded.cluedo_meta == json.loads(json.dumps(live.cluedo_meta))
    assert loaded.num_timesteps == live.num_timesteps and loaded.n_steps == live.n_steps
    assert loaded.clip_range(1.0) == live.clip_range(1.0) and loaded.lr_schedule(1.0) == live.lr_schedule(1.0)
    n_obs, n_act = live.observation_space.shape[0], live.action_space.n
    _same_play(live, loaded, n_obs, n_act)
    # SB3's own loader still opens the file (for those who trust it), and both loaders seed torch the same way
    torch.manual_seed(0)
    theirs = MaskablePPO.load(run_dir / "model.zip", device="cpu")
    after_theirs = torch.get_rng_state()
    torch.manual_seed(0)
    ours = load_model(run_dir / "model.zip")
    assert torch.equal(after_theirs, torch.get_rng_state())
    _same_play(theirs, ours, n_obs, n_act)


def test_the_conversion_needs_the_flag_and_keeps_the_weights(run, tmp_path, capsys):
    run_dir, _ = run
    old = _old_format(run_dir / "model.zip", tmp_path / "old.zip")
    with pytest.raises(CheckpointError, match="convert-checkpoint"):
        load_model(old)
    new = tmp_path / "new.zip"
    from cluedo_env.cli.convert_checkpoint import main as convert

    with pytest.raises(UsageError, match="--trust-pickle"):
        convert([str(old), str(new)])
    assert not new.exists()
    assert cli_main(["convert-checkpoint", str(old), str(new), "--trust-pickle"]) == 0
    assert "wrote" in capsys.readouterr().out
    a, b = load_model(run_dir / "model.zip").policy.state_dict(), load_model(new).policy.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert cli_main(["convert-checkpoint", str(old), str(new), "--trust-pickle"]) == 2  # never over a file


def test_a_float16_copy_converts_bit_for_bit(run, tmp_path):
    """A shipped copy (float16 weights) converts to float16 weights, not float32: the same bits and size."""
    run_dir, _ = run
    pretrained.export(run_dir / "model.zip", "half", {}, directory=tmp_path)
    old = _old_format(tmp_path / "half.zip", tmp_path / "old.zip")
    new = convert_checkpoint(old, tmp_path / "new.zip", trust_pickle=True)
    with zipfile.ZipFile(old) as zo, zipfile.ZipFile(new) as zn:
        wo, wn = (torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True) for z in (zo, zn))
    assert all(v.dtype == wn[k].dtype == torch.float16 and torch.equal(v, wn[k]) for k, v in wo.items())


def test_an_old_format_resume_names_the_conversion(run, tmp_path):
    run_dir, _ = run
    copy = tmp_path / "run"
    (copy / "checkpoints").mkdir(parents=True)
    for ckpt in (run_dir / "checkpoints").glob("step_*.zip"):
        _old_format(ckpt, copy / "checkpoints" / ckpt.name)
    _old_format(run_dir / "model.zip", copy / "model.zip")
    state = json.loads((run_dir / "state.json").read_text())
    state["config"]["run_dir"] = str(copy)
    (copy / "state.json").write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match=r"nothing to resume.*convert-checkpoint .*--trust-pickle"):
        Trainer(_tiny(copy, policy="factored", total_timesteps=512), resume=True, progress=False).run()


@pytest.mark.parametrize("name", sorted(pretrained.catalogue()))
def test_every_shipped_player_loads_with_every_unpickler_disabled(name, monkeypatch):
    """The shipped players load with pickle, cloudpickle and SB3's loader made to fail: nothing but
    ``torch.load(weights_only=True)`` (its own restricted reader) touches the file's bytes."""
    import cloudpickle
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common import save_util

    def refuse(*args, **kwargs):
        raise AssertionError("an unpickler was called")

    for owner, attr in ((pickle, "loads"), (pickle, "load"), (cloudpickle, "loads"), (cloudpickle, "load"),
                        (save_util, "json_to_data"), (save_util, "load_from_zip_file")):  # fmt: skip
        monkeypatch.setattr(owner, attr, refuse)
    monkeypatch.setattr(MaskablePPO, "load", classmethod(refuse))
    with zipfile.ZipFile(pretrained.path_of(name)) as zf:
        assert ENTRY in zf.namelist()
    agent = make_agent(f"pretrained:{name}", seed=0)
    tables = pretrained.tables_of(name)  # a name with tables loads the network of each table size it covers
    for network in [agent.network_for(n) for n in tables] if tables else [agent]:
        assert network.model.action_space.n == network.meta["n_actions"]


def test_an_untrusted_rllib_checkpoint_is_refused_and_runs_nothing(tmp_path):
    pytest.importorskip("ray")
    from cluedo_env.training.rllib.module import load_module

    marker = tmp_path / "pwned"
    folder = tmp_path / "module"
    folder.mkdir()
    (folder / "class_and_ctor_args.pkl").write_bytes(_payload(marker))
    (folder / "module_state.pkl").write_bytes(_payload(marker))
    with pytest.raises(CheckpointError, match=r'trust_pickle": true'):
        load_module(folder)
    with pytest.raises(CheckpointError, match="trust_pickle"):
        make_agent(f"rllib:{folder}")
    assert not marker.exists()


def test_save_refuses_what_is_not_data(run, tmp_path):
    """A model whose settings are not plain data (a policy class outside the list) is refused before writing."""
    run_dir, _ = run
    model = load_model(run_dir / "model.zip")
    model.policy_kwargs = {**model.policy_kwargs, "activation_fn": type("Mine", (torch.nn.ReLU,), {})}
    with pytest.raises(CheckpointError, match="activation_fn"):
        save_model_atomic(model, tmp_path / "x.zip")
    assert not (tmp_path / "x.zip").exists()
