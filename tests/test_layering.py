"""The layers import one way, down (CONTRIBUTING.md), and nothing loads a script by its file path.

Layers, bottom to top: ``cluedo_env`` (rules, engines, envs, rendering, records) <- ``agents``
(players, the runner, tournaments) <- ``training`` (learner envs, SB3, RLlib) <- ``scripts`` and
the command line (``cluedo_env.cli``), which may import everything. Inside ``cluedo_env`` the parts
are ordered too: ``errors`` <- ``rules`` <- ``engine`` <- ``render``, ``record`` <- ``envs``.

Every ``import`` statement is read from the source (at any depth: a lazy import in a function
counts like one at the top), plus ``importlib.import_module("literal")``, so a layer cannot be
crossed by deferring the import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cluedo_env._moved import MOVED

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cluedo_env", "agents", "training", "scripts")

# (rank, name) of a module: it may import modules of lower or equal rank only.
# Within cluedo_env the parts are ranked too; the CLI sits with the scripts, on top.
CLUEDO_PARTS = {
    "_moved": 0,
    "errors": 0,
    "files": 0,
    "rules": 1,
    "options": 1.5,  # argument types and the rules options (--preset, --rule)
    "engine": 2,
    "render": 3,
    "record": 3,
    "envs": 4,
    "cluedo_v0": 4,
}
TOP = 30  # the command line and the scripts


def rank(module: str) -> float | None:
    """The layer of a module of this project (None for third-party modules)."""
    parts = module.split(".")
    if parts[0] == "cluedo_env":
        if len(parts) == 1:
            return 0  # the package itself: registration strings and lazy names only
        if parts[1] == "cli":
            return TOP
        return CLUEDO_PARTS[parts[1]]
    return {"agents": 10, "training": 20, "scripts": TOP}.get(parts[0])


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, relative imports resolved, ``import_module`` literals included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
            # ``from cluedo_env import record`` imports the submodule cluedo_env.record
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names if _is_submodule(f"{mod}.{a.name}")]
        elif _is_import_module_call(node):
            found.append((node.lineno, node.args[0].value))
    return found


def _is_import_module_call(node: ast.AST) -> bool:
    """``importlib.import_module("a.literal.name")``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _is_submodule(module: str) -> bool:
    path = ROOT / Path(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def project_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def violations(files: list[Path]) -> list[str]:
    bad = []
    for path in files:
        own = rank(module_name(path))
        for line, mod in imports_of(path):
            other = rank(mod)
            if own is not None and other is not None and other > own:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {mod} (a layer above)")
    return bad


def test_imports_run_one_way_down_the_layers():
    assert violations(project_files()) == []


LOADERS = {"spec_from_file_location", "run_path", "SourceFileLoader", "exec_module"}
# The one file that loads Python by path on purpose: a user's policy file named by ``py:FILE:fn``.
USER_CODE_LOADER = ROOT / "agents" / "callable_player.py"


def test_nothing_loads_a_script_by_its_path():
    bad = []
    for path in [*project_files(), *sorted((ROOT / "tests").rglob("*.py"))]:
        if path == USER_CODE_LOADER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node, "attr", None) or getattr(node, "id", None)
            if name in LOADERS:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {name}")
    assert bad == []


@pytest.mark.parametrize(
    "where,source,fragment",
    [
        ("cluedo_env/engine/fake.py", "from agents.base import Agent\n", "imports agents.base"),
        ("cluedo_env/rules/fake.py", "def f():\n    from cluedo_env.engine import state\n", "cluedo_env.engine.state"),
        ("agents/fake.py", "import training.sb3.checkpoints\n", "imports training.sb3.checkpoints"),
        ("agents/fake.py", "import importlib\nimportlib.import_module('training.sb3.train')\n", "training.sb3.train"),
        ("training/fake.py", "from cluedo_env.cli import main\n", "cluedo_env.cli"),
        ("cluedo_env/envs/fake.py", "from scripts import bench\n", "scripts"),
    ],
)
def test_the_layering_check_catches_an_upward_import(tmp_path, monkeypatch, where, source, fragment):
    """The checker itself: each kind of upward import (top level, lazy, by name) is reported."""
    path = ROOT / where
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source if self == path else _read(self))
    found = violations([path])
    assert found and any(fragment in f for f in found), found


def test_the_cli_and_scripts_may_import_everything():
    assert violations([ROOT / "cluedo_env" / "cli" / "__init__.py", ROOT / "scripts" / "bench.py"]) == []


_real_read_text = Path.read_text


def _read(path: Path) -> str:
    return _real_read_text(path, encoding="utf-8")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_moved_modules_keep_their_old_path_with_a_warning(old, monkeypatch):
    """``import cluedo_env.vector_engine`` and the rest still work: the same module, a warning naming the new path."""
    import importlib
    import sys


    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_objects_pickled_under_an_old_module_path_still_load():
    """A pickle written before the move names ``cluedo_env.config.RulesConfig``; it loads as the same class."""
    import pickle
    import warnings

    from cluedo_env.rules.config import RulesConfig

    data = pickle.dumps(RulesConfig.from_preset("cards", players=3), protocol=0).replace(  # text: names unprefixed
        b"cluedo_env.rules.config", b"cluedo_env.config"
    )
    assert b"cluedo_env.config" in data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loaded = pickle.loads(data)
    assert isinstance(loaded, RulesConfig) and loaded.players == 3


def test_the_training_backends_never_import_each_other():
    """``training.sb3`` and ``training.rllib`` sit side by side over the shared core: what both need lives there."""
    bad = []
    for side, other in (("sb3", "rllib"), ("rllib", "sb3")):
        for path in sorted((ROOT / "training" / side).rglob("*.py")):
            bad += [f"{path.relative_to(ROOT)}:{line} imports {mod}" for line, mod in imports_of(path)
                    if mod == f"training.{other}" or mod.startswith(f"training.{other}.")]  # fmt: skip
    assert bad == []
