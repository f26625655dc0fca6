"""Our engine and env() beside peer game environments (PGX, PettingZoo classic) in one run, on one core.

    python scripts/bench_peers.py                     # everything, about 2 minutes
    python scripts/bench_peers.py --quick             # short loops, no PGX chess (about 30 s)
    python scripts/bench_peers.py --pgx connect_four --pettingzoo connect_four_v3 --seconds 2
    python scripts/bench_peers.py --docs              # and put the table on the docs' benchmarks page

The peers come with the optional extra (``pip install -e '.[peers]'``: jax, pgx, and what PettingZoo's classic
games import); without it their rows say so and the rest runs. Figures from different runs, days or machines
are not comparable (a shared machine moves them by tens of percent), so the ratios are only ever taken within
one run. The process pins itself to one CPU (``--cpu``, ``os.sched_setaffinity``, as ``taskset -c`` would) and
sets ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1`` before JAX is imported, so
that no side gets more than one core.

agent-steps/s counts decisions: one agent-step is one decision of one player in one game. Rows:

* **ours**: ``VectorEngine`` classic rules, 4 players, the ``full`` workload of ``cluedo bench`` (uniform random
  legal play, a drawn accusation kept on a 1% coin, so games run their full ~500 decisions), at ``--batch`` and
  at batch 1, through :func:`cluedo_env.cli.bench.bench_engine`: per step sample, ``step``, ``legal_action_mask``
  (**mask**), plus the acting player's observation (**+obs**, int8; **+packed**, the same as bits); autoreset, so
  every step is one decision in each
  of B games. And ``cluedo_env.env()``, one game, observation and mask every step (the loops of
  ``scripts/bench_aec.py``): the peers' ``agent_iter`` loop, and the step loop that ``bench_aec`` holds to its
  target;
* **PGX** (``--pgx``, at ``--batch``): ``pgx.make(game)``, ``jax.vmap`` of its ``step``, a random legal action
  from ``state.legal_action_mask`` (``jax.random.categorical``), and the games that end replaced by ``init``'s
  new ones (``jnp.where``) in the same step, so each step is a decision in each of B games, as ours. (This reset
  ran 10-20% faster than ``pgx.experimental.auto_reset``, whose ``lax.cond`` under ``vmap`` does more work; the
  peer gets the faster.) ``lax.scan``: steps scanned inside one jitted call; ``Python loop``: one jitted call per
  step. PGX's step also computes the
  observation of the player to act, so its like on our side is between **mask** and **+packed**: the table
  gives the three ratios. Compile (and first call) seconds are reported apart, not timed;
* **PettingZoo** (``--pettingzoo``): the classic AEC envs, one game, ``for agent in env.agent_iter()``,
  ``env.last()``, a uniform random action among ``obs["action_mask"]``, ``env.step``, ``None`` for finished
  agents (not counted), ``env.reset()`` after each game. Compared with ``env()`` in the same loop.

Ratios are ours / peer (above 1: ours is faster). The targets printed at the end: ours at ``--batch`` (mask)
>= PGX connect_four ``lax.scan``; ``env()`` >= 50k; batch 1 (mask) >= 130k agent-steps/s.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's scripts package (bench_aec, gen_docs)
    sys.path.insert(0, str(ROOT))

import cluedo_env  # noqa: E402
from cluedo_env.cli.bench import bench_engine, fmt  # noqa: E402
from cluedo_env.errors import UsageError, run_cli  # noqa: E402
from cluedo_env.files import check_writable_file, write_text_atomic  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from cluedo_env.rules.config import RulesConfig  # noqa: E402
from scripts.bench_aec import play, play_agent_iter  # noqa: E402

INSTALL_HINT = "pip install -e '.[peers]'"
XLA_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
PGX_GAMES = ["connect_four", "tic_tac_toe", "othello", "chess", "go_9x9", "backgammon"]
PETTINGZOO_GAMES = ["connect_four_v3", "tictactoe_v3", "chess_v6", "leduc_holdem_v4", "texas_holdem_v4"]
DEFAULT_PGX = ["connect_four", "chess"]
QUICK_PGX = ["connect_four"]  # chess compiles for ~10-20 s and steps ~1 s per call at batch 4096
CONFIG = "classic:4"
TARGETS = {"scan": 1.0, "env": 50_000, "batch1": 130_000}  # ratio vs PGX connect_four lax.scan; agent-steps/s
PEER_VERSIONS = ["jax", "jaxlib", "pgx", "pettingzoo", "chess", "rlcard", "pygame-ce"]


def set_xla_flags() -> None:
    """One thread for XLA's CPU backend; set before any import of JAX reads XLA_FLAGS (kept if already given)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_multi_thread_eigen" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " " + XLA_FLAGS).strip()


def pin_one_core(cpu: int | None) -> int | None:
    """Run this process (and the threads it starts later: numba's, XLA's) on one CPU, as ``taskset -c`` would;
    the CPU, or None where the platform cannot pin (then the figures say "not pinned")."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    usable = sorted(os.sched_getaffinity(0))
    if cpu is None:
        cpu = usable[0]
    elif cpu not in usable:
        raise UsageError(f"--cpu {cpu} is not a CPU this process may use (allowed: {', '.join(map(str, usable))})")
    os.sched_setaffinity(0, {cpu})
    return cpu


def versions() -> dict[str, str | None]:
    """Installed versions of numpy, numba and the peers (None: not installed), without importing them."""
    out: dict[str, str | None] = {}
    for name in ["numpy", "numba", *PEER_VERSIONS]:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine_info(cpu: int | None) -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "pinned_cpu": cpu,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "python": sys.version.split()[0],
        "versions": versions(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def pin_text(machine: dict[str, Any]) -> str:
    cpu = machine["pinned_cpu"]
    return "not pinned" if cpu is None else f"pinned to one core (CPU {cpu})"


def row(side: str, env: str, loop: str, batch: int, **fields: Any) -> dict[str, Any]:
    """One line of the table: ``status`` is ok, not installed, skipped or failed (``note`` says why)."""
    return {"side": side, "env": env, "loop": loop, "batch": batch, "rate": None, "cpu_rate": None,
            "compile_s": None, "status": "ok", "note": "", **fields}  # fmt: skip


def say(text: str) -> None:
    """One line, before anything that takes more than a moment."""
    print(text, flush=True)


# --- ours ---


def bench_ours(batch: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The engine's ``full`` workload at ``batch``: mask, +obs and +packed rows (``cluedo bench``'s own loop)."""
    cfg = RulesConfig.from_preset("classic", players=4)
    ns = argparse.Namespace(seconds=args.seconds, repeats=args.repeats, seed=args.seed)
    r = bench_engine(CONFIG, cfg, batch, "full", ns)
    note = f"full workload, {r['decisions_per_game']:.0f} decisions/game"
    return [row("ours", f"VectorEngine {CONFIG}", "mask", batch, rate=r["mask"], cpu_rate=r["mask_cpu"], note=note),
            row("ours", f"VectorEngine {CONFIG}", "+obs", batch, rate=r["obs"], cpu_rate=r["obs_cpu"], note=note),
            row("ours", f"VectorEngine {CONFIG}", "+packed", batch, rate=r["packed"], cpu_rate=r["packed_cpu"],
                note=note)]  # fmt: skip


def timed(loop: Callable[[], tuple[int, int, float, float]], repeats: int) -> tuple[float, float]:
    """Median agent-steps per wall second and per CPU second of ``repeats`` runs of a ``bench_aec`` loop."""
    runs = [loop() for _ in range(repeats)]
    return statistics.median(s / w for s, _, w, _ in runs), statistics.median(s / max(c, 1e-9) for s, _, _, c in runs)


def bench_env(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``cluedo_env.env()`` in the peers' agent_iter loop and in bench_aec's step loop (its 50k target)."""
    kwargs = {"preset": "classic", "players": 4}
    play(cluedo_env.env(**kwargs), "full", min(0.3, args.seconds), args.seed)  # warm-up
    out = []
    for loop, fn, note in (("agent_iter", play_agent_iter, "the peers' loop"),
                           ("step loop", play, "scripts/bench_aec.py's env() loop")):  # fmt: skip
        rate, cpu_rate = timed(lambda fn=fn: fn(cluedo_env.env(**kwargs), "full", args.seconds, args.seed),
                               args.repeats)  # fmt: skip
        out.append(row("ours", "cluedo_env.env() classic:4", loop, 1, rate=rate, cpu_rate=cpu_rate, note=note))
    return out


# --- PGX ---


def bench_pgx(game: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """PGX ``game`` at ``--batch``: a Python loop of a jitted step, then a jitted ``lax.scan`` of steps."""
    env_name, batch = f"PGX {game}", args.batch
    try:
        jax = importlib.import_module("jax")
        jnp = importlib.import_module("jax.numpy")
        pgx = importlib.import_module("pgx")
    except ImportError as e:
        note = f"not installed: {INSTALL_HINT} ({e})"
        return [row("PGX", env_name, loop, batch, status="not installed", note=note)
                for loop in ("lax.scan", "Python loop")]  # fmt: skip
    env = pgx.make(game)
    step, init = jax.vmap(env.step), jax.vmap(env.init)

    def one_step(state: Any, key: Any) -> tuple[Any, Any]:
        """A random legal action in each game; a game that ends is replaced by a new one in the same step."""
        key, k_act, k_reset = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        state = step(state, jax.random.categorical(k_act, logits, axis=-1))
        done = state.terminated | state.truncated
        fresh = init(jax.random.split(k_reset, batch))
        return jax.tree.map(lambda f, s: jnp.where(done.reshape((-1,) + (1,) * (s.ndim - 1)), f, s), fresh, state), key

    step_jit = jax.jit(one_step)
    key = jax.random.PRNGKey(args.seed)
    say(f"PGX {game}, batch {batch}: compiling init and step")
    t0 = time.perf_counter()
    state = jax.jit(init)(jax.random.split(key, batch))
    state, key = step_jit(state, key)
    jax.block_until_ready(state)
    compile_loop = time.perf_counter() - t0
    out = []
    if compile_loop > args.compile_limit:
        note = f"skipped: init and step compiled in {compile_loop:.0f} s (> --compile-limit {args.compile_limit:g})"
        return [row("PGX", env_name, loop, batch, status="skipped", compile_s=compile_loop, note=note)
                for loop in ("lax.scan", "Python loop")]  # fmt: skip

    def python_loop(seconds: float) -> tuple[int, float, float, Any, Any]:
        nonlocal state, key
        steps, t0, c0 = 0, time.perf_counter(), time.process_time()
        while True:
            state, key = step_jit(state, key)
            steps += 1
            if steps % 8 == 0 or batch >= 1024:
                jax.block_until_ready(state)
                if time.perf_counter() - t0 >= seconds:
                    break
        jax.block_until_ready(state)
        return steps, time.perf_counter() - t0, time.process_time() - c0, state, key

    say(f"PGX {game}, batch {batch}: Python loop of a jitted step, {args.repeats} x {args.seconds:g} s")
    python_loop(min(0.3, args.seconds))  # warm-up
    runs = [python_loop(args.seconds) for _ in range(args.repeats)]
    loop_rate = statistics.median(batch * s / w for s, w, _, _, _ in runs)
    loop_cpu = statistics.median(batch * s / max(c, 1e-9) for s, _, c, _, _ in runs)

    # One scanned call of about a fifth of --seconds, sized from the loop's rate (its length is compiled in).
    length = int(min(512, max(1, loop_rate * args.seconds / 5 / batch)))

    def scanned(state: Any, key: Any) -> tuple[Any, Any]:
        (state, key), _ = jax.lax.scan(lambda c, _: (one_step(*c), None), (state, key), None, length=length)
        return state, key

    scan_jit = jax.jit(scanned)
    say(f"PGX {game}, batch {batch}: compiling a lax.scan of {length} steps")
    t0 = time.perf_counter()
    state, key = scan_jit(state, key)
    jax.block_until_ready(state)
    compile_scan = time.perf_counter() - t0
    say(f"PGX {game}, batch {batch}: lax.scan, {args.repeats} x {args.seconds:g} s")
    rates, cpu_rates = [], []
    for _ in range(args.repeats):
        calls, t0, c0 = 0, time.perf_counter(), time.process_time()
        while True:
            state, key = scan_jit(state, key)
            jax.block_until_ready(state)
            calls += 1
            if time.perf_counter() - t0 >= args.seconds:
                break
        rates.append(batch * length * calls / (time.perf_counter() - t0))
        cpu_rates.append(batch * length * calls / max(time.process_time() - c0, 1e-9))
    out.append(row("PGX", env_name, "lax.scan", batch, rate=statistics.median(rates),
                   cpu_rate=statistics.median(cpu_rates), compile_s=compile_scan,
                   note=f"{length} step{'s' if length > 1 else ''} per jitted call"))  # fmt: skip
    out.append(row("PGX", env_name, "Python loop", batch, rate=loop_rate, cpu_rate=loop_cpu, compile_s=compile_loop,
                   note="one jitted call per step"))  # fmt: skip
    return out


# --- PettingZoo classic ---


def bench_pettingzoo(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One PettingZoo classic AEC env in the agent_iter loop, uniform random legal actions."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # pygame's greeting on import
    try:
        module = importlib.import_module(f"pettingzoo.classic.{name}")
    except ImportError as e:
        return row("PettingZoo", name, "agent_iter", 1, status="not installed", note=f"not installed: {INSTALL_HINT} "
                   f"({e})")  # fmt: skip
    play_agent_iter(module.env(), "uniform", min(0.2, args.seconds), args.seed)  # warm-up
    rate, cpu_rate = timed(lambda: play_agent_iter(module.env(), "uniform", args.seconds, args.seed), args.repeats)
    return row("PettingZoo", name, "agent_iter", 1, rate=rate, cpu_rate=cpu_rate, note="uniform random legal play")


# --- the report ---


def _find(rows: list[dict[str, Any]], side: str, loop: str, batch: int, key: str = "rate") -> float | None:
    return next((r[key] for r in rows if (r["side"], r["loop"], r["batch"]) == (side, loop, batch)), None)


def add_ratios(rows: list[dict[str, Any]], batch: int) -> None:
    """``ratios`` of each peer row: ours / peer, ours being the engine at ``batch`` (mask, +obs) for PGX and
    ``env()`` in the same agent_iter loop for PettingZoo; ``ratios_cpu`` the same per CPU second of this process
    (what a machine shared with other jobs still shows of each side's own speed)."""
    where = {"mask": ("mask", batch), "+obs": ("+obs", batch), "+packed": ("+packed", batch),
             "env()": ("agent_iter", 1)}  # fmt: skip
    for r in rows:
        if r["side"] == "ours" or not r["rate"]:
            continue
        keys = ("mask", "+obs", "+packed") if r["side"] == "PGX" else ("env()",)
        for field, rate in (("ratios", "rate"), ("ratios_cpu", "cpu_rate")):
            ours = {k: _find(rows, "ours", *where[k], key=rate) for k in keys}
            r[field] = {k: v / r[rate] for k, v in ours.items() if v and r[rate]}


def ratio_text(r: dict[str, Any]) -> str:
    return ", ".join(f"{v:.2f}x ({k})" if v < 10 else f"{v:.0f}x ({k})" for k, v in r.get("ratios", {}).items()) or "-"


def targets(rows: list[dict[str, Any]], batch: int) -> list[dict[str, Any]]:
    """The three targets, each with its figure by the wall clock (``met`` on it; None: not measured in this run)
    and per CPU second."""
    scan = next((r for r in rows if r["env"] == "PGX connect_four" and r["loop"] == "lax.scan"), {})
    ratio, ratio_cpu = scan.get("ratios", {}).get("mask"), scan.get("ratios_cpu", {}).get("mask")
    env_rate, b1 = _find(rows, "ours", "step loop", 1), _find(rows, "ours", "mask", 1)
    env_cpu, b1_cpu = _find(rows, "ours", "step loop", 1, "cpu_rate"), _find(rows, "ours", "mask", 1, "cpu_rate")
    return [
        {"what": f"ours, batch {batch}, mask / PGX connect_four lax.scan", "target": f">= {TARGETS['scan']:.1f}",
         "figure": None if ratio is None else f"{ratio:.2f}", "figure_cpu": None if ratio_cpu is None else
         f"{ratio_cpu:.2f}", "met": None if ratio is None else ratio >= TARGETS["scan"]},
        {"what": "env() classic:4, full-length games (bench_aec's step loop)", "target": f">= {fmt(TARGETS['env'])}",
         "figure": fmt(env_rate), "figure_cpu": fmt(env_cpu),
         "met": None if env_rate is None else env_rate >= TARGETS["env"]},
        {"what": "ours, batch 1, mask", "target": f">= {fmt(TARGETS['batch1'])}", "figure": fmt(b1),
         "figure_cpu": fmt(b1_cpu), "met": None if b1 is None else b1 >= TARGETS["batch1"]},
    ]  # fmt: skip


def rate_text(r: dict[str, Any]) -> str:
    return fmt(r["rate"]) if r["status"] == "ok" else r["status"]


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'side':<11}{'environment':<30}{'loop':<12}{'batch':>6}  {'agent-steps/s':>13} {'(cpu)':>8}"
          f"  {'compile s':>9}  {'ours / peer':<46}  note")  # fmt: skip
    for r in rows:
        comp = "-" if r["compile_s"] is None else f"{r['compile_s']:.1f}"
        print(f"{r['side']:<11}{r['env']:<30}{r['loop']:<12}{r['batch']:>6}  {rate_text(r):>13} "
              f"{fmt(r['cpu_rate']):>8}  {comp:>9}  {ratio_text(r):<46}  {r['note']}")  # fmt: skip


def markdown_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """The table's rows for markdown and the docs: environment, loop, batch, agent-steps/s, ours / peer, compile."""
    out = []
    for r in rows:
        rate = fmt(r["rate"]) if r["status"] == "ok" else r["note"]
        comp = "-" if r["compile_s"] is None else f"{r['compile_s']:.1f}"
        out.append([f"{r['side']}: {r['env']}", r["loop"], str(r["batch"]), rate, fmt(r["cpu_rate"]), ratio_text(r),
                    comp])
    return out


MARKDOWN_COLUMNS = ["environment", "loop", "batch", "agent-steps/s", "(per CPU s)", "ours / peer", "compile s"]


def print_markdown(rows: list[dict[str, Any]]) -> None:
    print("| " + " | ".join(MARKDOWN_COLUMNS) + " |")
    print("|" + "---|" * len(MARKDOWN_COLUMNS))
    for cells in markdown_rows(rows):
        print("| " + " | ".join(cells) + " |")


def check_names(given: list[str], allowed: list[str], option: str) -> None:
    bad = [g for g in given if g not in allowed]
    if bad:
        raise UsageError(f"{option} {' '.join(bad)}: unknown (allowed: {', '.join(allowed)}; or none)")


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="scripts/bench_peers.py", description=__doc__.split("\n\n")[0], epilog=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--seconds", type=float, default=1.0, help="seconds per timed loop (default 1.0)")
    ap.add_argument("--repeats", type=int, default=3, help="timed loops per figure, the median is reported")
    ap.add_argument("--batch", type=int, default=4096, help="batch of our engine and of PGX (default 4096)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pgx", nargs="*", default=None, metavar="GAME",
                    help=f"PGX games (default {' '.join(DEFAULT_PGX)}; allowed {', '.join(PGX_GAMES)})")
    ap.add_argument("--pettingzoo", nargs="*", default=None, metavar="ENV",
                    help=f"PettingZoo classic envs (default all: {', '.join(PETTINGZOO_GAMES)})")
    ap.add_argument("--compile-limit", type=float, default=60.0,
                    help="skip a PGX game whose init and step take longer than this to compile (s, default 60)")
    ap.add_argument("--cpu", type=int, default=None, help="the CPU to run on (default: the first this process may use)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU (XLA_FLAGS are still set)")
    ap.add_argument("--quick", action="store_true", help=f"0.3 s x 1 per figure, PGX {' '.join(QUICK_PGX)} only")
    ap.add_argument("--json", default="results/bench_peers.json", help="where to write the results ('' for nowhere)")
    ap.add_argument("--markdown", action="store_true", help="also print the table as markdown")
    ap.add_argument("--docs", action="store_true",
                    help="put this run into the docs' peers table (docs/data/benchmarks.json) and render the page")
    args = ap.parse_args(argv)
    if not 0 < args.seconds < float("inf"):
        raise UsageError(f"--seconds {args.seconds} is out of range (a finite number > 0, e.g. 1.0)")
    if not 0 < args.compile_limit < float("inf"):
        raise UsageError(f"--compile-limit {args.compile_limit} is out of range (a finite number > 0, e.g. 60)")
    for name, value, lo in (("repeats", args.repeats, 1), ("batch", args.batch, 1), ("seed", args.seed, 0)):
        if value < lo:
            raise UsageError(f"--{name} {value} is out of range (an integer >= {lo})")
    if args.quick:
        args.seconds, args.repeats = 0.3, 1
    pgx_games = args.pgx if args.pgx is not None else (QUICK_PGX if args.quick else DEFAULT_PGX)
    pz_games = args.pettingzoo if args.pettingzoo is not None else PETTINGZOO_GAMES
    check_names(pgx_games, PGX_GAMES, "--pgx")
    check_names(pz_games, PETTINGZOO_GAMES, "--pettingzoo")
    if args.json:
        check_writable_file(args.json, "--json")  # before minutes of measuring
    if args.docs and not args.json:
        raise UsageError("--docs reads the run's --json report: give --json a path (or leave its default)")

    set_xla_flags()
    cpu = None if args.no_pin else pin_one_core(args.cpu)
    machine = machine_info(cpu)  # the load average before this run adds its own
    print(f"{pin_text({'pinned_cpu': cpu})}; XLA_FLAGS={os.environ['XLA_FLAGS']}")
    rows: list[dict[str, Any]] = []
    for batch in dict.fromkeys([args.batch, 1]):
        say(f"ours: VectorEngine {CONFIG}, batch {batch}, full workload, mask, +obs and +packed "
            f"({3 * args.repeats} x {args.seconds:g} s)")  # fmt: skip
        rows += bench_ours(batch, args)
    say(f"ours: cluedo_env.env() {CONFIG}, agent_iter and step loops ({2 * args.repeats} x {args.seconds:g} s)")
    rows += bench_env(args)
    for game in pgx_games:
        rows += bench_pgx(game, args)
    for name in pz_games:
        say(f"PettingZoo {name}: agent_iter, {args.repeats} x {args.seconds:g} s")
        rows.append(bench_pettingzoo(name, args))
    add_ratios(rows, args.batch)
    report = {"machine": machine, "settings": {k: v for k, v in vars(args).items() if k != "docs"},
              "results": rows, "targets": targets(rows, args.batch)}  # fmt: skip
    print()
    print_table(rows)
    if args.markdown:
        print()
        print_markdown(rows)
    print()
    for t in report["targets"]:
        verdict = "not measured" if t["met"] is None else "met" if t["met"] else "NOT met"
        print(f"target: {t['what']} {t['target']}: {t['figure']} ({verdict}); per CPU second {t['figure_cpu']}")
    print("ours / peer: ours at the same batch (mask; +obs; +packed) for PGX, env() in the same loop for PettingZoo. "
          "(cpu) = per CPU second of this process.")  # fmt: skip
    m = report["machine"]
    print(f"machine: {m['cpus']} CPUs, {pin_text(m)}, load average {m['load_average']}, "
          f"Python {m['python']}; " + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v))  # fmt: skip
    if args.json:
        path = Path(args.json)
        write_text_atomic(path, json.dumps(report, indent=1, default=float) + "\n")
        print(f"written {path}")
    if args.docs:
        from scripts.gen_docs import replace_table

        command = "python scripts/bench_peers.py " + " ".join(a for a in (argv or []) if a != "--docs")
        replace_table("peers", peers_table(report, command.strip()))
        print("docs/data/benchmarks.json and docs/benchmarks.md: the peers table replaced by this run")
    return 0


PEERS_TITLE = "Peers in the same run: PGX and PettingZoo classic"
PEERS_WHAT = (
    "Agent-steps (one decision of one player) per second, all in one process pinned to one core, so that the ratios "
    "hold whatever the machine's speed. Ours: classic rules, 4 players, the `full` workload (full-length games) "
    "through `VectorEngine` (**mask**: sample, `step`, `legal_action_mask`; **+obs**: also the acting player's "
    "observation, int8; **+packed**: the same as bits) and through `cluedo_env.env()` (one game). PGX: `vmap` of "
    "`step`, random legal actions from "
    "`legal_action_mask`, ended games replaced by new ones in the same step (every step a decision in each game, as "
    "ours); its step also computes the observation, so the three ratios are given; compile seconds apart, not timed. "
    "PettingZoo: the classic AEC envs, one game, random legal actions in the `agent_iter` loop, compared with "
    "`env()` in the same loop. Ratios are ours / peer by the wall clock (above 1: ours is faster); the per CPU "
    "second column is what a machine shared with other jobs still shows of each side's speed. Medians of {loops} "
    "of {seconds:g} s. The "
    "peers come with `pip install -e '.[peers]'`."
)


def peers_table(report: dict[str, Any], command: str) -> dict[str, Any]:
    """The ``peers`` table of ``docs/data/benchmarks.json`` from this script's report."""
    m = report["machine"]
    v = m["versions"]
    peers = ", ".join(f"{k} {v[k]}" for k in ("jax", "pgx", "pettingzoo") if v.get(k))
    load = "" if m["load_average"] is None else f" (load average {m['load_average'][0]:.1f} at the start)"
    machine = (f"{m['cpus']} CPUs{load}, {pin_text(m)}; "
               f"Python {m['python']}, numpy {v['numpy']}, numba {v['numba']}; {peers}")  # fmt: skip
    settings = report.get("settings", {})
    repeats = settings.get("repeats", 3)
    what = PEERS_WHAT.format(loops=f"{repeats} loop{'s' if repeats > 1 else ''}", seconds=settings.get("seconds", 1.0))
    return {"title": PEERS_TITLE, "what": what, "command": command, "machine": machine, "date": m["date"][:10],
            "columns": MARKDOWN_COLUMNS,
            "rows": markdown_rows(report["results"])}  # fmt: skip


if __name__ == "__main__":
    sys.exit(run_cli(main))
