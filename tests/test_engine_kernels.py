"""What the compiled engine adds to the batch API: its samplers, per-game chance, atomic batch
operations, pickling, and the benchmark script that measures it.

Rules are checked against the reference engine in ``test_differential.py``; here, properties of
the kernels themselves (``cluedo_env.engine.kernels``) as the engine exposes them.
"""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cluedo_env.engine.snapshot import SnapshotError
from cluedo_env.engine.state import State
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.rules import actions as A

ROOT = Path(__file__).resolve().parents[1]


def arrays(eng: VectorEngine) -> dict[str, np.ndarray]:
    """Copies of every state array, random streams included."""
    return {name: getattr(eng, name).copy() for name in State._fields}


def assert_same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    for name in State._fields:
        assert np.array_equal(a[name], b[name]), f"state array {name} differs"


def played(preset: str = "classic", batch: int = 16, steps: int = 150, seed: int = 0, **flags) -> VectorEngine:
    eng = VectorEngine(preset if not flags else {"preset": preset, **flags}, batch_size=batch)
    eng.reset(seed=seed)
    for _ in range(steps):
        eng.step(eng.sample_full_game_actions())
    return eng


# ============================================================================ the full-game sampler
@pytest.mark.parametrize("preset", ["classic", "seed000", "cards"])
def test_full_game_sampler_plays_only_legal_actions_and_rarely_accuses(preset):
    eng = VectorEngine(preset, batch_size=64)
    eng.reset(seed=1)
    accusations = decisions = 0
    for _ in range(300):
        acts = eng.sample_full_game_actions()
        over = eng.phase == A.OVER
        assert (acts[over] == -1).all()
        live = np.flatnonzero(~over)
        assert eng.legal_action_mask[live, acts[live]].all()
        accusations += int((acts[live] >= A.ACCUSE0).sum())
        decisions += len(live)
        eng.step(acts)
    # Uniform play accuses in nearly every decision where it may; the full player about 1% of those.
    assert decisions > 10_000 and accusations < 0.02 * decisions, (accusations, decisions)


def test_full_game_sampler_games_run_hundreds_of_decisions():
    eng = VectorEngine("classic", batch_size=32, autoreset=True)
    eng.reset(seed=2)
    games = steps = 0
    for _ in range(2000):
        result = eng.step(eng.sample_full_game_actions())
        games += int((result.terminated | result.truncated).sum())
        steps += eng.batch_size
    assert games > 10 and steps / games > 150, steps / max(games, 1)


def test_keep_accusation_one_is_uniform_play_with_short_games():
    eng = VectorEngine("classic", batch_size=256, autoreset=True)
    eng.reset(seed=3)
    games = 0
    for _ in range(40):
        result = eng.step(eng.sample_full_game_actions(keep_accusation=1.0))
        games += int(result.terminated.sum())
    assert games > 256 * 40 / 10  # a few decisions per game, as uniform random play


# ============================================================================ chance
def test_a_games_chance_does_not_depend_on_the_other_games():
    """Same seed, same actions in slot 0, different actions elsewhere: slot 0 plays out identically."""
    a, b = VectorEngine("seed000", batch_size=6), VectorEngine("seed000", batch_size=6)
    a.reset(seed=9)
    b.reset(seed=9)
    rng = np.random.default_rng(0)
    for _ in range(300):
        acts_a = a.sample_random_actions(rng)
        acts_b = b.sample_full_game_actions()
        acts_b[0] = acts_a[0]
        if a.phase[0] == A.OVER:
            break
        a.step(acts_a)
        b.step(acts_b)
        assert a.export_game(0) == b.export_game(0)


def test_the_same_seed_gives_the_same_games_whatever_the_batch_size_of_the_slot_prefix():
    a, b = VectorEngine("classic", batch_size=3), VectorEngine("classic", batch_size=3)
    a.reset(seed=4)
    b.reset(seed=4)
    assert [a.export_game(i) for i in range(3)] == [b.export_game(i) for i in range(3)]
    c = VectorEngine("classic", batch_size=3)
    c.reset(seed=5)
    assert [a.export_game(i) for i in range(3)] != [c.export_game(i) for i in range(3)]


# ============================================================================ atomic batch operations
def test_an_illegal_action_changes_nothing_not_even_the_random_streams():
    eng = played(batch=8)
    before = arrays(eng)
    acts = eng.sample_full_game_actions()  # advances the sampler streams, and only them
    after_sampling = arrays(eng)
    live = np.flatnonzero(eng.phase != A.OVER)
    acts[live[-1]] = int(np.flatnonzero(~eng.legal_action_mask[live[-1]])[0])
    with pytest.raises(A.IllegalActionError, match="no game was changed"):
        eng.step(acts)
    assert_same(after_sampling, arrays(eng))
    assert not np.array_equal(before["sampler"], after_sampling["sampler"])  # sampling did draw


def _bad_snapshots(snap: dict) -> list[tuple[str, dict]]:
    """Snapshots that Game.from_dict may read but that do not fit the engine."""
    out = []
    sugg = next(i for i, rec in enumerate(snap["history"]) if rec["type"] == "suggestion")
    for what, edit in [
        ("turn_count 10**10", lambda s: s.update(turn_count=10**10)),
        ("negative turn_count", lambda s: s.update(turn_count=-1)),
        # The engine holds max_turns + players + 16 records; more suggestions than turns cannot happen.
        ("420 history records", lambda s: s.update(history=[s["history"][sugg]] * 420)),
        ("more suggestions than turns", lambda s: s.update(turn_count=0)),
        ("passed seat 7", lambda s: s["history"][sugg].update(passed=[7])),
        ("suggester seat 9", lambda s: s["history"][sugg].update(player=9)),
    ]:
        bad = copy.deepcopy(snap)
        try:
            edit(bad)
        except (KeyError, TypeError):
            continue
        out.append((what, bad))
    return out


def test_import_game_validates_everything_before_writing():
    eng = played(batch=4, steps=400)
    i = int(np.argmax([len(eng.export_game(k)["history"]) for k in range(4)]))
    snap = eng.export_game(i)
    assert any(rec["type"] == "suggestion" for rec in snap["history"])
    before = arrays(eng)
    cases = _bad_snapshots(snap)
    assert len(cases) >= 4
    for what, bad in cases:
        with pytest.raises((SnapshotError, ValueError)):
            eng.import_game(1, bad)
        assert_same(before, arrays(eng)), what
        eng.step(eng.sample_full_game_actions())  # the batch still steps
        before = arrays(eng)


@pytest.mark.parametrize("slot", [-1, 4, 2.0, True, "0"])
def test_import_and_export_refuse_slots_outside_the_batch(slot):
    eng = played(batch=4, steps=5)
    snap = eng.export_game(0)
    before = arrays(eng)
    with pytest.raises(IndexError, match=r"0\.\.3"):
        eng.import_game(slot, snap)
    with pytest.raises(IndexError, match=r"0\.\.3"):
        eng.export_game(slot)
    assert_same(before, arrays(eng))


# ============================================================================ pickling
def test_a_pickled_engine_goes_on_exactly_as_the_original():
    eng = played("seed000", batch=5, steps=60)
    twin = pickle.loads(pickle.dumps(eng))
    assert twin.pos is twin.state.pos and np.shares_memory(twin.special, twin.mask)
    for _ in range(100):
        a, b = eng.sample_full_game_actions(), twin.sample_full_game_actions()
        assert np.array_equal(a, b)
        ra, rb = eng.step(a), twin.step(b)
        assert np.array_equal(ra.rewards, rb.rewards)
        assert np.array_equal(eng.observe(), twin.observe())
    assert_same(arrays(eng), arrays(twin))


# ============================================================================ observations
def test_observe_defaults_to_each_games_actor_and_accepts_an_out_buffer():
    eng = played(batch=8, steps=50)
    actor = np.where(eng.actor >= 0, eng.actor, eng.current)
    buf = np.empty((8, eng.observation_size), np.int8)
    assert eng.observe(out=buf) is buf
    assert np.array_equal(buf, eng.observe(player=actor))
    one = eng.observe_game(3, int(actor[3]))
    assert np.array_equal(one, buf[3])
    with pytest.raises(ValueError, match="seat 0..3"):
        eng.observe(player=4)


# ============================================================================ the benchmark script
def test_bench_script_prints_the_table_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "scripts/bench.py", "--configs", "classic:4", "--batch-sizes", "8", "--workloads", "full",
         "uniform", "--seconds", "0.05", "--repeats", "1", "--json", str(out)],  # fmt: skip
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert "full" in done.stdout and "uniform" in done.stdout
    rows = json.loads(out.read_text())["results"]
    assert {r["workload"] for r in rows} == {"full", "uniform"}
    assert all(r["mask"] > 0 and r["obs"] > 0 and r["bytes_per_game"] > 0 for r in rows)


# ============================================================================ the kernel cache
def _kernel_group(tmp_path):
    """A group of two kernel modules in two folders, its sources the engine's file names."""
    from cluedo_env.engine.kernel_cache import ENGINE, KernelSources
    sources = tuple(tmp_path / "pkg" / path.name for path in ENGINE.sources)
    modules = (tmp_path / "pkg" / "engine" / "kernels.py", tmp_path / "pkg" / "players" / "deducer.py")
    for path in (*sources, *modules):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {path.name}\n")
    return KernelSources("kernels.stamp", sources, modules)


def _stale_files(group):
    caches = group.caches()
    assert len(caches) == 2
    stale = [cache / "kernels.step-1.py311.nbi" for cache in caches]
    for path in stale:
        path.write_text("stale")
    return stale


def test_the_kernel_cache_is_cleared_when_a_kernel_source_changes(tmp_path, monkeypatch):
    from numba.core import config
    monkeypatch.setattr(config, "CACHE_DIR", "")
    group = _kernel_group(tmp_path)
    assert {c.name for c in group.caches()} == {"__pycache__"}  # beside the modules, as numba keeps them
    stale = _stale_files(group)
    assert group.ensure_fresh() and not any(p.exists() for p in stale)  # no stamp yet: cleared
    for path in stale:
        path.write_text("fresh")
    assert not group.ensure_fresh() and all(p.exists() for p in stale)  # same sources: kept
    (tmp_path / "pkg" / "movement.py").write_text("# edited\n")  # inlined into kernels.py: every folder is stale
    assert group.ensure_fresh() and not any(p.exists() for p in stale)


def test_the_kernel_cache_guard_covers_numba_cache_dir(tmp_path, monkeypatch):
    """With NUMBA_CACHE_DIR set numba keeps the machine code there; the guard clears it there."""
    from numba.core import config
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba_cache"))
    group = _kernel_group(tmp_path)
    assert all(str(c).startswith(str(tmp_path / "numba_cache")) for c in group.caches())
    stale = _stale_files(group)
    assert group.ensure_fresh() and not any(p.exists() for p in stale)
    for path in stale:
        path.write_text("fresh")
    (tmp_path / "pkg" / "cards.py").write_text("# edited\n")
    assert group.ensure_fresh() and not any(p.exists() for p in stale)


def test_the_kernel_cache_guard_covers_the_per_user_cache_of_a_read_only_install(tmp_path, monkeypatch):
    """A package folder nobody may write (a system install): numba caches per user; the guard follows it.

    numba's in-tree locator declines a folder it cannot write (its ``from_function`` returns None); that is
    stood in for here, since the tests may run as root, who can write anywhere."""
    from numba.core import caching, config
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user_cache"))
    monkeypatch.setattr(caching.InTreeCacheLocator, "from_function", classmethod(lambda cls, f, file: None))
    group = _kernel_group(tmp_path)
    assert all(str(c).startswith(str(tmp_path / "user_cache")) for c in group.caches())
    stale = _stale_files(group)
    assert group.ensure_fresh() and not any(p.exists() for p in stale)


def test_a_cold_kernel_group_says_once_that_it_compiles(tmp_path, monkeypatch, capsys):
    """The first compile of a group's kernel prints one line (a newcomer never waits in silence); later ones don't."""
    import importlib

    from cluedo_env.engine.kernel_cache import KernelSources

    (tmp_path / "coldgroup_kernels.py").write_text(
        "from numba import njit\n\n@njit\ndef twice(x):\n    return 2 * x\n\n@njit\ndef thrice(x):\n    return 3 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    group = KernelSources("cold.stamp", (tmp_path / "coldgroup_kernels.py",), (), package="coldgroup_",
                          title="the test's kernels", first_run="a moment")  # fmt: skip
    group.ensure_fresh()  # registers the group's notice
    module = importlib.import_module("coldgroup_kernels")
    assert module.twice(2) == 4 and module.thrice(2) == 6
    err = capsys.readouterr().err
    assert err.count("compiling the test's kernels (first run only, a moment") == 1
    assert module.twice(3) == 6 and capsys.readouterr().err == ""  # compiled: nothing more
