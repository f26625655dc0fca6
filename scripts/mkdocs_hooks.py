"""mkdocs hooks of the docs site (``mkdocs.yml``): the pages rendered at build time.

``cli.md``: each ``cluedo`` subcommand's ``--help``, rendered from the parsers by :func:`scripts.gen_docs.render_cli`,
so the reference cannot drift from the command line. The other generated pages (benchmarks, results) are kept in
``docs/`` (``python scripts/gen_docs.py``) so that they read on the repository too; the test suite checks them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File

_ROOT = Path(__file__).resolve().parents[1]


def _gen_docs():
    """:mod:`scripts.gen_docs` (mkdocs loads this file by path; the checkout's root makes ``scripts`` importable)."""
    if str(_ROOT) not in sys.path:
        sys.path.insert(0, str(_ROOT))
    from scripts import gen_docs

    return gen_docs


def on_files(files, config):
    files.append(File.generated(config, "cli.md", content=_gen_docs().render_cli()))
    return files
