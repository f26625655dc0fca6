"""The peers' benchmark (``scripts/bench_peers.py``): its table, JSON and docs entry, and that it still runs, with
rows that say how to install them, where the peers (the ``peers`` extra, not installed in CI) are missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cluedo_env.errors import UsageError
from scripts import bench_peers, gen_docs

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--seconds", "0.02", "--repeats", "1", "--batch", "8", "--no-pin"]


def _hide_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Imports of JAX, PGX and the PettingZoo classic envs fail, as where the extra is not installed."""
    for name in ("jax", "jax.numpy", "pgx", *(f"pettingzoo.classic.{g}" for g in bench_peers.PETTINGZOO_GAMES)):
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: `import name` raises ImportError


def test_without_the_peers_every_row_is_there_and_says_how_to_install(monkeypatch, tmp_path, capsys):
    _hide_peers(monkeypatch)
    monkeypatch.delenv("XLA_FLAGS", raising=False)  # the run sets it; restored after
    out = tmp_path / "peers.json"
    code = bench_peers.main([*TINY, "--pgx", "connect_four", "--pettingzoo", "connect_four_v3", "chess_v6",
                             "--json", str(out), "--markdown"])  # fmt: skip
    assert code == 0
    report = json.loads(out.read_text())
    rows = report["results"]
    keys = [(r["side"], r["env"], r["loop"], r["batch"]) for r in rows]
    assert keys == [
        ("ours", "VectorEngine classic:4", "mask", 8), ("ours", "VectorEngine classic:4", "+obs", 8),
        ("ours", "VectorEngine classic:4", "+packed", 8),
        ("ours", "VectorEngine classic:4", "mask", 1), ("ours", "VectorEngine classic:4", "+obs", 1),
        ("ours", "VectorEngine classic:4", "+packed", 1),
        ("ours", "cluedo_env.env() classic:4", "agent_iter", 1), ("ours", "cluedo_env.env() classic:4", "step loop", 1),
        ("PGX", "PGX connect_four", "lax.scan", 8), ("PGX", "PGX connect_four", "Python loop", 8),
        ("PettingZoo", "connect_four_v3", "agent_iter", 1), ("PettingZoo", "chess_v6", "agent_iter", 1),
    ]  # fmt: skip
    for r in rows:
        if r["side"] == "ours":
            assert r["status"] == "ok" and r["rate"] > 0 and r["cpu_rate"] > 0, r
        else:
            assert r["status"] == "not installed" and r["rate"] is None and "ratios" not in r, r
            assert "pip install -e '.[peers]'" in r["note"], r
    scan, env_target, batch1 = report["targets"]
    assert scan["met"] is None and scan["figure"] is None  # PGX missing: not measured, not "failed"
    assert env_target["met"] in (True, False) and batch1["met"] in (True, False)
    assert report["machine"]["pinned_cpu"] is None and "xla_cpu_multi_thread_eigen=false" in os.environ["XLA_FLAGS"]
    printed = capsys.readouterr().out
    assert "not installed" in printed and "(not measured)" in printed
    assert "| PGX: PGX connect_four | lax.scan | 8 | not installed: pip install -e '.[peers]'" in printed


def test_ratios_are_ours_over_the_peer_in_the_same_run():
    rows = [bench_peers.row("ours", "VectorEngine classic:4", "mask", 64, rate=3e6, cpu_rate=4e6),
            bench_peers.row("ours", "VectorEngine classic:4", "+obs", 64, rate=6e5),
            bench_peers.row("ours", "cluedo_env.env() classic:4", "agent_iter", 1, rate=40e3),
            bench_peers.row("ours", "cluedo_env.env() classic:4", "step loop", 1, rate=55e3),
            bench_peers.row("ours", "VectorEngine classic:4", "mask", 1, rate=120e3),
            bench_peers.row("PGX", "PGX connect_four", "lax.scan", 64, rate=2e6, cpu_rate=2e6),
            bench_peers.row("PettingZoo", "chess_v6", "agent_iter", 1, rate=500.0),
            bench_peers.row("PettingZoo", "tictactoe_v3", "agent_iter", 1, status="not installed")]  # fmt: skip
    bench_peers.add_ratios(rows, 64)
    assert rows[5]["ratios"] == pytest.approx({"mask": 1.5, "+obs": 0.3})
    assert rows[5]["ratios_cpu"] == pytest.approx({"mask": 2.0})  # +obs has no CPU figure here
    assert rows[6]["ratios"] == pytest.approx({"env()": 80.0})
    assert "ratios" not in rows[7]
    assert bench_peers.ratio_text(rows[5]) == "1.50x (mask), 0.30x (+obs)"
    scan, env_target, batch1 = bench_peers.targets(rows, 64)
    assert (scan["figure"], scan["figure_cpu"], scan["met"]) == ("1.50", "2.00", True)
    assert (env_target["figure"], env_target["met"]) == ("55.0k", True)  # the step loop, not agent_iter
    assert (batch1["figure"], batch1["met"]) == ("120.0k", False)


def test_a_run_becomes_the_docs_peers_table(monkeypatch, tmp_path):
    """``--docs``: the peers table goes after the AEC table the first time and is replaced, not repeated, after."""
    data = json.loads((ROOT / "docs" / "data" / "benchmarks.json").read_text())
    data["tables"] = [t for t in data["tables"] if t["id"] != "peers"]
    (tmp_path / "benchmarks.json").write_text(json.dumps(data))
    monkeypatch.setattr(gen_docs, "DATA", tmp_path)
    monkeypatch.setattr(gen_docs, "main", lambda argv: 0)  # the real page stays as it is
    machine = {"cpus": 2, "pinned_cpu": 1, "load_average": [0.2, 0.1, 0.1], "python": "3.11.7",
               "versions": {"numpy": "2.4.6", "numba": "0.68.1", "jax": "0.10.2", "pgx": "2.6.0",
                            "pettingzoo": "1.27.0"}, "date": "2026-12-03T09:00:00Z"}  # fmt: skip
    rows = [bench_peers.row("ours", "VectorEngine classic:4", "mask", 4096, rate=2.5e6, cpu_rate=2.5e6),
            bench_peers.row("PGX", "PGX connect_four", "lax.scan", 4096, rate=2e6, cpu_rate=2.1e6, compile_s=3.25),
            bench_peers.row("PGX", "PGX chess", "lax.scan", 4096, status="skipped", note="skipped: slow")]
    bench_peers.add_ratios(rows, 4096)
    for command in ("python scripts/bench_peers.py", "python scripts/bench_peers.py --seconds 2"):
        gen_docs.replace_table("peers", bench_peers.peers_table({"machine": machine, "results": rows}, command))
    tables = json.loads((tmp_path / "benchmarks.json").read_text())["tables"]
    ids = [t["id"] for t in tables]
    assert ids.count("peers") == 1 and ids.index("peers") == ids.index("aec") + 1
    peers = tables[ids.index("peers")]
    assert peers["command"] == "python scripts/bench_peers.py --seconds 2" and peers["date"] == "2026-12-03"
    assert "pinned to one core (CPU 1)" in peers["machine"] and "pgx 2.6.0" in peers["machine"]
    assert peers["rows"][1] == ["PGX: PGX connect_four", "lax.scan", "4096", "2.00M", "2.10M", "1.25x (mask)", "3.2"]
    assert peers["rows"][2][3] == "skipped: slow"
    page = gen_docs.render_benchmarks({"tables": tables})
    assert "## Peers in the same run" in page and "| PGX: PGX connect_four | lax.scan | 4096 | 2.00M |" in page


@pytest.mark.parametrize(
    "argv, says",
    [(["--pgx", "pong"], "--pgx pong: unknown (allowed: connect_four,"),
     (["--pettingzoo", "go_v5"], "--pettingzoo go_v5: unknown (allowed: connect_four_v3,"),
     (["--seconds", "0"], "--seconds 0.0 is out of range (a finite number > 0"),
     (["--batch", "0"], "--batch 0 is out of range (an integer >= 1)"),
     (["--seconds", "soon"], "invalid float value: 'soon'")],
)  # fmt: skip
def test_bad_arguments_say_what_is_allowed(argv: list[str], says: str):
    with pytest.raises(UsageError) as e:
        bench_peers.main([*argv, "--json", ""])
    assert says in str(e.value)


def test_a_bad_argument_exits_2_with_one_line():
    done = subprocess.run([sys.executable, "scripts/bench_peers.py", "--pgx", "pong"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "allowed: connect_four" in done.stderr


@pytest.mark.slow  # ~10 s where the extra is installed (JAX's import and two compiles); skipped without it
def test_pgx_connect_four_when_installed():
    """With the extra: PGX at a tiny batch gives both loops, timed apart from their compile."""
    pytest.importorskip("pgx")
    args: Any = bench_peers.argparse.Namespace(batch=8, seconds=0.02, repeats=1, seed=0, compile_limit=60.0)
    scan, loop = bench_peers.bench_pgx("connect_four", args)
    assert (scan["loop"], loop["loop"]) == ("lax.scan", "Python loop")
    for r in (scan, loop):
        assert r["status"] == "ok" and r["rate"] > 0 and r["compile_s"] > 0, r
