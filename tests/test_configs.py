"""Every file of ``configs/`` loads with its loader: rules presets, SB3 and RLlib training configs.

``configs/`` is a catalogue (docs/training.md lists it): a handful of canonical configs at the top level and the
ones a result or a shipped player cites in ``configs/experiments/`` (indexed in its README). Every config named in
the docs, the README or ``training/pretrained/index.json`` must exist.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.yaml")) + sorted((ROOT / "configs" / "experiments").glob("*.yaml"))
RULES = {"classic.yaml", "cards.yaml", "seed000.yaml"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_every_config_loads(path):
    if path.name in RULES:
        from cluedo_env.rules.config import RulesConfig, load_config

        assert isinstance(load_config(path), RulesConfig)
    elif path.name.startswith("rllib_"):
        from cluedo_env.training.rllib.config import load_config

        assert load_config(path).run_dir
    else:
        from cluedo_env.training.sb3.config import load_train_config

        assert load_train_config(path).run_dir


def test_catalogue_is_small_and_indexed():
    top = [p for p in CONFIGS if p.parent.name == "configs"]
    assert len(top) <= 12, [p.name for p in top]
    index = (ROOT / "configs" / "experiments" / "README.md").read_text()
    for path in CONFIGS:
        if path.parent.name == "experiments":
            assert f"`{path.name}`" in index, f"{path.name} is not in configs/experiments/README.md"
    catalogue = (ROOT / "docs" / "training.md").read_text()
    for path in top:
        assert f"configs/{path.name}" in catalogue, f"configs/{path.name} is not listed in docs/training.md"


def test_every_cited_config_exists():
    texts = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "training" / "pretrained" / "index.json",
             *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "docs" / "data").glob("*.json")),
             *sorted((ROOT / "scripts").glob("*.py")), *sorted((ROOT / "training").rglob("*.py"))]  # fmt: skip
    json.loads((ROOT / "training" / "pretrained" / "index.json").read_text())  # still valid JSON
    for text_path in texts:
        for name in re.findall(r"configs/[a-z0-9_/]+\.yaml", text_path.read_text()):
            assert (ROOT / name).is_file(), f"{text_path.relative_to(ROOT)} cites {name}, which does not exist"
