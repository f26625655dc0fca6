"""Settings for every test."""

from __future__ import annotations

import os

import pytest
from cluedo_env.agents.compiled import EntryPoint


@pytest.fixture(autouse=True, scope="session")
def _entry_points_check_their_argument_types():
    """Every compiled entry point (:mod:`cluedo_env.agents.compiled`) types each call again and raises if its arguments'
    types ever differ from its first call's: the whole suite checks the bargain the fast path relies on."""
    EntryPoint.check = True
    yield
    EntryPoint.check = False


@pytest.fixture(autouse=True, scope="session")
def _sb3_default_logs_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory):
    """SB3's default logger (a ``learn`` without a log folder) makes a ``/tmp/SB3-<date>`` folder per run; here
    they go to the session's temporary folder (``SB3_LOGDIR``), which pytest cleans up."""
    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3"))
    yield
    if before is None:
        del os.environ["SB3_LOGDIR"]
    else:
        os.environ["SB3_LOGDIR"] = before
