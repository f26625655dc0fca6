"""The layers import one way, down (CONTRIBUTING.md), and nothing loads a script by its file path.

Layers, bottom to top: ``cluedo_env`` (rules, engines, envs, rendering, records) <- ``agents``
(players, the runner, tournaments) <- ``training`` (learner envs, SB3, RLlib) <- ``scripts`` and
the command line (``cluedo_env.cli``), which may import everything. Inside ``cluedo_env`` the parts
are ordered too: ``errors`` <- ``rules`` <- ``engine`` <- ``render``, ``record`` <- ``envs``.

Every ``import`` statement is read from the source (at any depth: a lazy import in a function
counts like one at the top), plus ``importlib.import_module("literal")``, so a layer cannot be
crossed by deferring the import. The same graph has no cycles: two modules that import each
other, even lazily, are one module in two files (or need their shared part moved below both).
"""

from __future__ import annotations

import ast
import base64
import json
import pickletools
import re
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cluedo_env", "agents", "training", "scripts")
# The folders that install under cluedo_env (pyproject.toml's package-dir): one installed import name.
INSTALLED_AS = {"agents": "cluedo_env.agents", "training": "cluedo_env.training"}

# (rank, name) of a module: it may import modules of lower or equal rank only.
# Within cluedo_env the parts are ranked too; the CLI sits with the scripts, on top.
CLUEDO_PARTS = {
    "errors": 0,
    "files": 0,
    "checks": 0,  # the one validator of booleans, integers and seeds
    "rules": 1,
    "options": 1.5,  # argument types and the rules options (--preset, --rule)
    "engine": 2,
    "render": 3,
    "record": 3,
    "envs": 4,
    "cluedo_v0": 4,
    "openspiel": 4,  # the game for OpenSpiel, beside the envs
}
# Within agents: the kernels' plumbing, then what a seat knows and where it moves, the players, what a learned
# policy sees, and the loops that seat players (agents/__init__.py).
AGENTS_PARTS = {"compiled": 0, "knowledge": 1, "planning": 1, "players": 2, "learner": 3, "play": 4}
TOP = 30  # the command line and the scripts


def rank(module: str) -> float | None:
    """The layer of a module of this project (None for third-party modules)."""
    parts = module.split(".")
    if parts[0] == "cluedo_env":
        if len(parts) == 1:
            return 0  # the package itself: registration strings and lazy names only
        if parts[1] == "cli":
            return TOP
        if parts[1] == "agents":
            # a module at the top of agents/: the lowest part
            return 10 + (AGENTS_PARTS.get(parts[2], 0) / 10 if len(parts) > 2 else 0)
        if parts[1] == "training":
            return 20
        return CLUEDO_PARTS[parts[1]]
    return {"scripts": TOP}.get(parts[0])


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts[0] in INSTALLED_AS:
        parts = INSTALLED_AS[parts[0]].split(".") + parts[1:]
    return ".".join(parts)


def path_of(module: str) -> Path:
    """The file or folder (no suffix) of a module of this checkout: the inverse of :func:`module_name`."""
    parts = module.split(".")
    for folder, name in INSTALLED_AS.items():
        if parts[:2] == name.split("."):
            parts = [folder] + parts[2:]
    return ROOT / Path(*parts)


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
    path = path_of(module)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def project_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def violations(files: list[Path]) -> list[str]:
    bad = []
    for path in files:
        own = rank(module_name(path))
        for line, mod in imports_of(path):
            if mod.split(".")[0] in INSTALLED_AS:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {mod} (not an installed name: cluedo_env.{mod})")
                continue
            other = rank(mod)
            if own is not None and other is not None and other > own:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {mod} (a layer above)")
    return bad


def test_imports_run_one_way_down_the_layers():
    assert violations(project_files()) == []


LOADERS = {"spec_from_file_location", "run_path", "SourceFileLoader", "exec_module"}
# The one file that loads Python by path on purpose: a user's policy file named by ``py:FILE:fn``.
USER_CODE_LOADER = ROOT / "agents" / "learner" / "callable_player.py"


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


AGENTS, TRAINING = "cluedo_env.agents", "cluedo_env.training"


@pytest.mark.parametrize(
    "where,source,fragment",
    [
        ("cluedo_env/engine/fake.py", f"from {AGENTS}.players.base import Agent\n", f"imports {AGENTS}.players.base"),
        ("cluedo_env/rules/fake.py", "def f():\n    from cluedo_env.engine import state\n", "cluedo_env.engine.state"),
        ("agents/fake.py", f"import {TRAINING}.sb3.checkpoints\n", f"imports {TRAINING}.sb3.checkpoints"),
        ("agents/knowledge/fake.py", f"from {AGENTS}.players.base import Agent\n", f"imports {AGENTS}.players.base"),
        ("agents/players/fake.py", f"def f():\n    from {AGENTS}.play import registry\n", f"{AGENTS}.play.registry"),
        ("agents/fake.py", f"import importlib\nimportlib.import_module('{TRAINING}.sb3.train')\n",
         f"{TRAINING}.sb3.train"),
        ("training/fake.py", "from cluedo_env.cli import main\n", "cluedo_env.cli"),
        ("cluedo_env/envs/fake.py", "from scripts import bench\n", "scripts"),
        ("training/fake.py", "from agents.play import registry\n", "not an installed name"),
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


# ------------------------------------------------------------------ import cycles
def import_graph(files: list[Path]) -> dict[str, set[str]]:
    """Module -> the project modules it names in an import (lazy ones included), self-imports left out."""
    modules = {module_name(p) for p in files}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for path in files:
        here = module_name(path)
        graph[here] |= {mod for _, mod in imports_of(path) if mod in modules and mod != here}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycles():
    assert cycles(import_graph(project_files())) == []


def test_the_cycle_check_catches_a_lazy_import_cycle(monkeypatch):
    """The checker itself: a cycle closed by an import inside a function is found."""
    low, high = ROOT / "cluedo_env" / "engine" / "fake_low.py", ROOT / "cluedo_env" / "engine" / "fake_high.py"
    sources = {
        low: "def f():\n    import cluedo_env.engine.fake_high\n",
        high: "from cluedo_env.engine.fake_low import f\n",
    }
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: sources.get(self) or _read(self))
    assert cycles(import_graph([low, high])) == [["cluedo_env.engine.fake_high", "cluedo_env.engine.fake_low"]]


# ------------------------------------------------------------------ shipped pickles
PROJECT_NAME = re.compile(r"(cluedo_env|agents|training|scripts)(\.\w+)*")


def pickled_modules(zip_path: Path) -> set[str]:
    """The project modules named by the pickles inside a Stable-Baselines3 model zip (its ``data`` entries)."""
    with zipfile.ZipFile(zip_path) as zf:
        data = json.loads(zf.read("data"))
    found = set()
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            for _, arg, _ in pickletools.genops(base64.b64decode(value[":serialized:"])):
                if isinstance(arg, str) and PROJECT_NAME.fullmatch(arg):
                    found.add(arg)
    return found


@pytest.mark.parametrize("model", sorted((ROOT / "training" / "pretrained").glob("*.zip")), ids=lambda p: p.name)
def test_shipped_models_name_only_modules_that_exist(model):
    """Moving a module a shipped model pickled (a policy class) breaks loading it: nothing keeps old paths."""
    from cluedo_env.training.sb3.convert_checkpoint import _POLICY_CLASS_OF_MODULE  # older checkpoints' classes

    missing = [m for m in sorted(pickled_modules(model)) if not _is_submodule(m) and m not in _POLICY_CLASS_OF_MODULE]
    assert missing == []


def test_the_training_backends_never_import_each_other():
    """``cluedo_env.training.sb3`` and ``cluedo_env.training.rllib`` sit side by side over the shared core: what both
    need lives there."""
    bad = []
    for side, other in (("sb3", "rllib"), ("rllib", "sb3")):
        for path in sorted((ROOT / "training" / side).rglob("*.py")):
            bad += [f"{path.relative_to(ROOT)}:{line} imports {mod}" for line, mod in imports_of(path)
                    if mod == f"{TRAINING}.{other}" or mod.startswith(f"{TRAINING}.{other}.")]  # fmt: skip
    assert bad == []


# ------------------------------------------------------------------ numba's internals in one module
NUMBA_INTERNALS_HOMES = {ROOT / "cluedo_env" / "engine" / "numba_internals.py"}
NUMBA_PUBLIC = {"numba", "numba.extending", "numba.typed", "numba.types"}
# Private attributes of numba's objects that module reads (a use elsewhere is a use of numba's internals too).
NUMBA_PRIVATE_NAMES = {"_cache_file", "_index_key", "_load_index", "_locator_classes", "call_conv",
                       "get_pointer_to_function", "fndesc", "targetctx"}  # fmt: skip


def numba_internals_used(path: Path) -> list[str]:
    """Where ``path`` imports a numba module outside its public API or reads one of numba's private attributes."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("numba"):
            if node.module not in NUMBA_PUBLIC:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {a.name}" for a in node.names
                      if a.name.startswith("numba.") and a.name not in NUMBA_PUBLIC]  # fmt: skip
        elif isinstance(node, ast.Attribute) and node.attr in NUMBA_PRIVATE_NAMES:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} reads .{node.attr}")
    return found


def test_numba_internals_are_used_in_one_module_only():
    """Every use of numba's internals sits in ``cluedo_env.engine.numba_internals`` (code generation and the on-disk
    cache), and each is listed, with the numba versions it was checked against, in its ``NUMBA_INTERNALS``
    (pyproject.toml bounds numba at the newest)."""
    elsewhere = [hit for p in project_files() if p not in NUMBA_INTERNALS_HOMES for hit in numba_internals_used(p)]
    assert elsewhere == []
    from cluedo_env.engine.numba_internals import NUMBA_CHECKED, NUMBA_INTERNALS

    for used in {hit.split(" ", 1)[1].split()[-1] for p in NUMBA_INTERNALS_HOMES for hit in numba_internals_used(p)}:
        assert any(used.lstrip(".") in name for name in NUMBA_INTERNALS), f"{used} is not in NUMBA_INTERNALS"
    import tomllib
    from packaging.requirements import Requirement
    from packaging.version import Version

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    (numba,) = [Requirement(d) for d in deps if Requirement(d).name == "numba"]
    low, high = (Version(v) for v in NUMBA_CHECKED)
    assert low in numba.specifier and high in numba.specifier
    assert Version(f"{high.major}.{high.minor + 1}.0") not in numba.specifier, "numba needs an upper bound"
    assert Version(f"{low.major}.{low.minor - 1}.0") not in numba.specifier


def test_the_internals_check_catches_an_import_and_a_private_read(tmp_path, monkeypatch):
    path = ROOT / "cluedo_env" / "engine" / "fake.py"
    source = "from numba.core.caching import Cache\nx = dispatcher._cache._cache_file\n"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source if self == path else _read(self))
    assert [h.split(" ", 1)[1] for h in numba_internals_used(path)] == ["imports numba.core.caching",
                                                                        "reads ._cache_file"]


def test_each_backends_config_is_the_bottom_of_its_package():
    """``training/sb3/config.py`` and ``training/rllib/config.py`` are read top-down: the trainer, the runners and the
    envs import the config (and the names it shares with them), never the other way, so a config loads and is
    checked without its backend's runners."""
    def own_package(side: str, name: str) -> list[str]:
        path = ROOT / "training" / side / name
        return [f"{path.relative_to(ROOT)}:{line} imports {mod}" for line, mod in imports_of(path)
                if mod == f"{TRAINING}.{side}" or mod.startswith(f"{TRAINING}.{side}.")]  # fmt: skip

    assert own_package("sb3", "config.py") + own_package("rllib", "config.py") == []
    # the same check sees the imports that run the other way (it is not empty by construction)
    assert any(f"imports {TRAINING}.rllib.config" in hit for hit in own_package("rllib", "vector_env.py"))
    assert any(f"imports {TRAINING}.sb3.config" in hit for hit in own_package("sb3", "train.py"))
