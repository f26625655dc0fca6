"""Settings for every test."""

from __future__ import annotations

import pytest

from agents.entry_point import EntryPoint


@pytest.fixture(autouse=True, scope="session")
def _entry_points_check_their_argument_types():
    """Every compiled entry point (:mod:`agents.entry_point`) types each call again and raises if its arguments'
    types ever differ from its first call's: the whole suite checks the bargain the fast path relies on."""
    EntryPoint.check = True
    yield
    EntryPoint.check = False
