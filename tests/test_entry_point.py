"""agents/compiled.py: a kernel called through the machine code of its first call's types."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from cluedo_env.agents.compiled import EntryPoint
from cluedo_env.agents.knowledge.deal_sampling import deal_weights_kernel
from numba import njit


@njit
def _add_into(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        out[i] += x[i]


def test_an_entry_point_calls_the_kernel_and_keeps_its_first_signature() -> None:
    call = EntryPoint(_add_into)
    out = np.zeros(3)
    call(np.arange(3.0), out)
    call(np.ones(3), out)
    assert out.tolist() == [1.0, 2.0, 3.0]
    assert len(call.signature) == 2 and str(call.signature[0]) == "array(float64, 1d, C)"


def test_a_changed_argument_type_raises_while_checking(monkeypatch: pytest.MonkeyPatch) -> None:
    """With :attr:`EntryPoint.check` (on in the whole suite) a call whose types differ from the first call's is
    refused with the positions that changed, instead of running machine code on arrays it was not built for."""
    monkeypatch.setattr(EntryPoint, "check", True)
    call = EntryPoint(_add_into)
    call(np.arange(3.0), np.zeros(3))
    with pytest.raises(TypeError, match=r"argument types changed.*\(0, "):
        call(np.arange(6.0)[::2], np.zeros(3))  # a strided view: another layout
    with pytest.raises(TypeError, match="argument types changed"):
        call(np.arange(3), np.zeros(3))  # int64 instead of float64


def test_a_plain_function_is_called_as_it_is() -> None:
    seen = []
    call = EntryPoint(lambda *args: seen.append(args) or 7)
    assert call(1, 2) == 7 and seen == [(1, 2)]


def test_copies_and_pickles_call_the_same_kernel() -> None:
    call = EntryPoint(deal_weights_kernel)
    q, alive, out = np.arange(1.0, 7.0), np.array([True, True, False, True, False, True]), np.empty((2, 3))
    call(q, alive, 3, out)
    assert out[0].tolist() == [2 / 3, 1 / 3, 0.0]
    for twin in (copy.deepcopy(call), pickle.loads(pickle.dumps(call))):
        got = np.empty((2, 3))
        twin(q, alive, 3, got)
        assert (got == out).all()
