"""mkdocs hooks of the docs site (``mkdocs.yml``): the pages rendered at build time.

``cli.md``: each ``cluedo`` subcommand's ``--help``, rendered from the parsers by :func:`scripts.gen_docs.render_cli`,
so the reference cannot drift from the command line. The other generated pages (benchmarks, results) are kept in
``docs/`` (``python scripts/gen_docs.py``) so that they read on the repository too; the test suite checks them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.structure.files import File

_GEN = Path(__file__).resolve().with_name("gen_docs.py")


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", _GEN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_files(files, config):
    files.append(File.generated(config, "cli.md", content=_gen_docs().render_cli()))
    return files
