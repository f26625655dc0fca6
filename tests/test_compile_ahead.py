"""A kernel compiled ahead in a helper process (:mod:`cluedo_env.engine.compile_ahead`) is loaded here from the
cache, with the helpers it calls, and gives the same results; a failed helper only leaves the work to this process.
"""

import importlib

import pytest
from numba import types

from cluedo_env.engine import compile_ahead
from cluedo_env.engine.numba_internals import is_cached

SOURCE = """
from numba import njit


@njit(cache=True)
def scaled(x, k):
    return k * x


@njit(cache=True)
def total(values, k):
    out = 0
    for v in values:
        out += scaled(v, k)
    return out
"""

TOTAL = (types.Array(types.int64, 1, "C"), types.int64)  # the signature compiled ahead
SCALED = (types.int64, types.int64)  # ... and that of the helper it calls


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """A fresh module of two cached kernels (a new name per test: nothing compiled or cached yet), and room for one
    helper process whatever the machine's cores (and whatever helpers earlier tests' engines left compiling)."""
    name = f"ahead_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(compile_ahead, "usable_cores", lambda: 2)
    monkeypatch.setattr(compile_ahead, "_JOBS", {})
    monkeypatch.delenv(compile_ahead.ENV_SWITCH, raising=False)
    return importlib.import_module(name)


def test_a_kernel_compiled_ahead_is_loaded_from_the_cache_with_its_callees(kernels):
    import numpy as np

    assert not is_cached(kernels.total, TOTAL)
    assert compile_ahead.submit([(kernels.total, TOTAL)])
    assert not compile_ahead.submit([(kernels.total, TOTAL)])  # already on its way: one helper per version
    compile_ahead.collect(kernels.total, TOTAL)
    assert is_cached(kernels.total, TOTAL) and is_cached(kernels.scaled, SCALED)
    assert kernels.total(np.arange(4), 3) == 18
    assert kernels.total.stats.cache_hits[TOTAL] == 1 and not kernels.total.stats.cache_misses  # loaded, not compiled
    assert not compile_ahead.submit([(kernels.total, TOTAL)])  # compiled here now: nothing to do ahead


def test_nothing_starts_on_a_warm_cache_with_one_core_or_when_switched_off(kernels, monkeypatch):
    kernels.scaled.compile(SCALED)  # (cached on disk too)
    kernels.scaled.overloads.clear()  # as a new process finds it: cached, not compiled here
    assert is_cached(kernels.scaled, SCALED)
    assert not compile_ahead.submit([(kernels.scaled, SCALED)])
    monkeypatch.setattr(compile_ahead, "usable_cores", lambda: 1)
    assert not compile_ahead.submit([(kernels.total, TOTAL)])
    monkeypatch.setattr(compile_ahead, "usable_cores", lambda: 2)
    monkeypatch.setattr(compile_ahead, "_JOBS", {})
    monkeypatch.setenv(compile_ahead.ENV_SWITCH, "0")
    assert not compile_ahead.submit([(kernels.total, TOTAL)])
    compile_ahead.collect(kernels.total, TOTAL)  # (nothing was started: nothing to wait for)


def test_kernels_handed_over_while_a_helper_works_queue_behind_its_own(kernels):
    """A second hand-over joins the working helper's queue (no core is free for another, nor needed): the helper
    stays up until every kernel it was given is collected, then stops."""
    assert compile_ahead.submit([(kernels.total, TOTAL)])
    assert compile_ahead.submit([(kernels.scaled, SCALED)])  # the only helper a 2-core machine allows is busy
    helper = compile_ahead._JOBS[(kernels.total, TOTAL)]
    assert compile_ahead._JOBS[(kernels.scaled, SCALED)] is helper and compile_ahead.is_pending(kernels.scaled, SCALED)
    compile_ahead.collect(kernels.total, TOTAL)
    assert helper.process.poll() is None  # one kernel still to hand back
    compile_ahead.collect(kernels.scaled, SCALED)
    assert helper.process.poll() is not None and not compile_ahead.is_pending(kernels.scaled, SCALED)
    assert is_cached(kernels.total, TOTAL) and is_cached(kernels.scaled, SCALED)
    assert not helper.add([(kernels.total, (types.float64[:], types.int64))])  # a stopped helper takes nothing


def test_kernels_of_another_root_never_queue_behind_a_helper(kernels, tmp_path_factory, monkeypatch):
    """A helper imports and reports the modules of its own root only: a kernel from another folder gets a helper of
    its own where a core is free, else compiles here (queued behind the first, it was lost, and so was the rest of
    that helper's queue)."""
    other_root = tmp_path_factory.mktemp("other_root")
    (other_root / "ahead_other_root.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(other_root))
    other = importlib.import_module("ahead_other_root")
    assert compile_ahead.submit([(kernels.total, TOTAL)])
    helper = compile_ahead._JOBS[(kernels.total, TOTAL)]
    assert not compile_ahead.submit([(other.total, TOTAL)])  # no core free (2 usable), and not this helper's root
    assert helper.kernels == [(kernels.total, TOTAL)]
    monkeypatch.setattr(compile_ahead, "usable_cores", lambda: 3)
    assert compile_ahead.submit([(other.total, TOTAL)])
    assert compile_ahead._JOBS[(other.total, TOTAL)] is not helper
    compile_ahead.collect(kernels.total, TOTAL)
    compile_ahead.collect(other.total, TOTAL)
    assert is_cached(kernels.total, TOTAL) and is_cached(other.total, TOTAL)


def test_a_helper_that_fails_leaves_the_compile_to_this_process(kernels):
    import numpy as np

    wrong = (types.unicode_type, types.int64)  # numba cannot compile total for these: the helper exits with an error
    assert compile_ahead.submit([(kernels.total, wrong)])
    compile_ahead.collect(kernels.total, wrong)
    assert not is_cached(kernels.total, wrong)
    assert kernels.total(np.arange(3), 2) == 6  # compiled here, as without a helper


def test_the_step_parts_compiled_ahead_are_the_versions_the_step_calls():
    """:func:`cluedo_env.engine.kernels.step_parts` names each helper with the argument types the step passes it: a
    step compiled again (a copy of its source, uncached) adds no other version of any of them."""
    import numpy as np
    from numba import njit

    from cluedo_env.engine import kernels
    from cluedo_env.engine.compile_ahead import signature_of
    from cluedo_env.engine.compile_options import KERNEL
    from cluedo_env.engine.vector_engine import VectorEngine

    eng = VectorEngine("classic", batch_size=2)
    roll, rest = kernels.step_parts(eng.state, eng.rules, eng.tables, eng.moves, eng.work)
    parts = [(part, signature_of(args)) for part, args in [roll, *rest]]
    for part, signature in parts:
        part.compile(signature)
    before = {part: set(part.overloads) for part, _ in parts}
    fresh = njit(**{**KERNEL, "cache": False})(kernels.apply_actions.py_func)  # (the step's body: it calls the helpers)
    step_args = (eng.state, eng.rules, eng.tables, eng.moves, eng.work, eng._actions, eng._all_active, True,
                 *eng._out)  # fmt: skip
    fresh.compile(signature_of(step_args))
    assert {part: set(part.overloads) for part, _ in parts} == before
    # ... and the move search under _roll, the deal's and the dice's draws are typed for one signature each, none
    # for a constant (a literal 0 compiled the move search twice)
    from call_tree import typed_call_tree
    from numba import types

    from cluedo_env.engine import movement

    tree = typed_call_tree(kernels.step, signature_of(step_args))
    deal_args = (eng.state, eng.rules, eng.tables, np.zeros(1, np.int64), eng.work)
    typed_call_tree(kernels.new_games, signature_of(deal_args), tree)
    for helper in (kernels._destinations, movement.fill_destinations, movement._mark, kernels.randint):
        assert len(tree[helper]) == 1 and not any(isinstance(t, types.Literal) for t in next(iter(tree[helper]))), (
            helper, tree[helper])


def test_the_deducer_compiles_ahead_the_version_of_its_decisions_it_then_calls(monkeypatch):
    """The deducer hands a helper its one-call decisions (on an empty cache) for the argument types its first
    decision then passes (else the helper's work would be lost), when its notebook is made at the first reset, so
    that they compile while this process compiles the notebook's kernels."""
    from cluedo_env.agents.play.runner import play_games
    from cluedo_env.agents.players.deducer import DeducerAgent

    from cluedo_env.engine.vector_engine import VectorEngine
    from cluedo_env.rules.config import RulesConfig

    asked = []  # (dispatcher, signature) handed over, and "engine" where the engine's loop starts compiling here
    monkeypatch.setattr(compile_ahead, "submit", lambda kernels: asked.extend(kernels) or False)
    compile_engine = VectorEngine._compile
    monkeypatch.setattr(VectorEngine, "_compile", lambda eng: asked.append("engine") or compile_engine(eng))
    agents = [DeducerAgent(seed=s) for s in range(4)]
    play_games(RulesConfig.from_preset("classic"), agents, 2, batch_size=2)
    decisions = [i for i, job in enumerate(asked) if job[0] is agents[0]._decisions.dispatcher]
    assert decisions and {asked[i][1] for i in decisions} == {a._decisions.signature for a in agents}
    assert decisions[0] > asked.index("engine")  # handed over at the first reset, once the engine is compiled
