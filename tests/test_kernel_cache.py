"""numba's cache kept honest: a cache file that cannot be read is removed and its kernel compiled again.

A truncated or damaged index or machine-code file (a full disk, an interrupted copy of a cache folder) used to fail
every later run with numba's ``UnpicklingError`` until the user found and deleted the cache. Each run here is a fresh
process over a small module of kernels of its own in a temporary folder, so the package's own cache is never touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

KERNELS = """
import numpy as np
from numba import njit

import cluedo_env.engine.numba_internals  # noqa: F401 - what is tested: its loader of numba's cache

@njit(cache=True)
def total(x):
    s = 0
    for v in x:
        s += v
    return s

print(total(np.arange(10)))
"""


def _run(folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    env.pop("NUMBA_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-c", "import damaged_cache_kernels"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.mark.parametrize("damaged", ["nbi", "nbc"])
def test_a_truncated_cache_file_is_removed_and_compiled_again(tmp_path, damaged):
    (tmp_path / "damaged_cache_kernels.py").write_text(KERNELS)
    first = _run(tmp_path)
    assert first.returncode == 0 and first.stdout.strip() == "45", first.stderr
    cache = tmp_path / "__pycache__"
    (victim,) = cache.glob(f"damaged_cache_kernels.total-*.{damaged}")
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])  # cut in half, as a full disk leaves it
    second = _run(tmp_path)
    assert second.returncode == 0 and second.stdout.strip() == "45", second.stderr
    assert "could not be read" in second.stderr and "compiling that kernel again" in second.stderr
    assert second.stderr.count("could not be read") == 1  # one line
    third = _run(tmp_path)  # the cache written anew loads without a word
    assert third.returncode == 0 and third.stdout.strip() == "45" and "could not be read" not in third.stderr
    for suffix in ("nbi", "nbc"):
        assert list(cache.glob(f"damaged_cache_kernels.total-*.{suffix}"))
