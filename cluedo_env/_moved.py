"""Old import paths of modules that moved when the package was split into subpackages.

``import cluedo_env.vector_engine`` (and ``from cluedo_env import cards``, and unpickling objects
saved under an old path) keeps working: the old name is an alias of the module at its new path,
and importing it raises a :class:`DeprecationWarning` that names the new path. The aliases are
strings; nothing is imported until an old name is asked for, so the aliases of the two env
modules that moved up to :mod:`training` add no upward import to ``cluedo_env``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

MOVED: dict[str, str] = {
    "cluedo_env.cards": "cluedo_env.rules.cards",
    "cluedo_env.config": "cluedo_env.rules.config",
    "cluedo_env.board": "cluedo_env.rules.board",
    "cluedo_env.actions": "cluedo_env.rules.actions",
    "cluedo_env.state": "cluedo_env.engine.state",
    "cluedo_env.kernels": "cluedo_env.engine.kernels",
    "cluedo_env.kernel_cache": "cluedo_env.engine.kernel_cache",
    "cluedo_env.movement": "cluedo_env.engine.movement",
    "cluedo_env.vector_engine": "cluedo_env.engine.vector_engine",
    "cluedo_env.reference": "cluedo_env.engine.reference",
    "cluedo_env.observation": "cluedo_env.engine.observation",
    "cluedo_env.views": "cluedo_env.engine.views",
    "cluedo_env.snapshot": "cluedo_env.engine.snapshot",
    "cluedo_env.viewer": "cluedo_env.render.html",
    "cluedo_env.envs.single_agent": "training.single_agent",
    "cluedo_env.envs.sb3_vec_env": "training.sb3.vec_env",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old module name with the module at its new path (the same object)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; import it from there (the old path will be removed)",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported under its new name."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (idempotent)."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())
