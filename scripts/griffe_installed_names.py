"""A griffe extension for the API pages (``mkdocs.yml``): ``agents/`` and ``training/`` install as
``cluedo_env.agents`` and ``cluedo_env.training`` (``pyproject.toml``'s package-dir), which a static reading of the
``cluedo_env/`` folder cannot see. When griffe has read ``cluedo_env``, this reads the two folders and hangs them
under it, so ``::: cluedo_env.training.single_agent.CluedoSingleAgentEnv`` resolves as it imports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import griffe

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("agents", "training")  # installed as cluedo_env.<folder>


class InstalledNames(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.name != "cluedo_env":
            return
        for folder in FOLDERS:
            module = griffe.GriffeLoader(search_paths=[str(ROOT)], docstring_parser=loader.docstring_parser,
                                         docstring_options=loader.docstring_options).load(folder)  # fmt: skip
            pkg.set_member(folder, module)
