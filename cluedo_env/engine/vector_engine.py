"""The vectorized engine: a batch of B games of Cluedo stepped at once, on compiled kernels.

The rules are those of the reference engine (:mod:`cluedo_env.engine.reference`), which is the
oracle; ``tests/test_differential.py`` plays both side by side and compares every field.
The state is a struct of numpy arrays, batch first (:mod:`cluedo_env.engine.state` documents every
array); the hot paths (transitions, legal actions, the mask, random legal play, observations)
are numba loops over the games (:mod:`cluedo_env.engine.kernels`, :func:`cluedo_env.engine.observation.encode`),
so one engine serves batch 1 (the PettingZoo env) and batch 16k (training) alike.

Usage::

    eng = VectorEngine(RulesConfig.from_preset("classic", players=4), batch_size=4096)
    eng.reset(seed=0)
    while True:
        actions = eng.sample_random_actions()          # or a policy using eng.legal_action_mask
        eng.step(actions)
        obs = eng.observe()                             # acting player's observation

Every state array is an attribute (``eng.pos``, ``eng.phase``, ``eng.hist_response`` ...); they
are updated in place, so copy what you keep. ``special``, ``move_dest`` and ``show`` are views of
the legal-action mask's ROLL..END_TURN, MOVE and SHOW blocks.

Chance: each game has its own random stream, seeded by ``reset(seed)``; a game's deal and dice
depend only on the seed and its slot, never on the other games or on the players' choices.

Threads: ``threads`` shares each call out among threads (:mod:`~cluedo_env.engine.thread_host`; one by default),
with the same results whatever the count. One engine serves one Python thread at a time: calls from several are
taken in turn (a lock), never interleaved. Which kernel each call runs: :mod:`~cluedo_env.engine.entry_points`;
snapshots of one game: :mod:`~cluedo_env.engine.batch_snapshot`.
Observations come as int8 rows (``observe()``) or as the same information in bits (``observe(packed=True)``,
a fifth of the bytes; :func:`cluedo_env.engine.observation.unpack` gives the int8 rows back).

Compilation: the kernels are compiled on first use and cached on disk (``cache=True``), so only
the first process after an install pays for it; ``scripts/bench.py`` reports both times.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

import numpy as np

from cluedo_env.checks import check_seed, is_int
from cluedo_env.engine import batch_snapshot, kernels, thread_jobs
from cluedo_env.engine.entry_points import CompiledEntryPoints
from cluedo_env.engine.movement import move_tables, with_scratch
from cluedo_env.engine.observation import offsets, packed_layout, size
from cluedo_env.engine.state import (
    State,
    check_batch_size,
    history_capacity,
    new_state,
    rules_of,
    tables_of,
)
from cluedo_env.engine.thread_host import THREADS_OWN, ThreadHost, default_threads, serialised
from cluedo_env.errors import CluedoError, CluedoIndexError, CluedoTypeError
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import load_board
from cluedo_env.rules.config import RulesConfig, make_config

FULL_GAME_KEEP_ACCUSATION = 0.01  # the `full` benchmark player keeps a drawn accusation with this chance


class StepResult(NamedTuple):
    """What one step produced, per game: copies, safe to keep."""

    rewards: np.ndarray  # (B, P) float32
    terminated: np.ndarray  # (B,) bool: the game ended in this step with a win or R-E4
    truncated: np.ndarray  # (B,) bool: the game was cut at max_turns in this step


def _check_out(out: Any, shape: tuple[int, ...], dtype: type) -> None:
    """An ``out=`` array the compiled encoder can fill: a C-contiguous ndarray of ``shape`` and ``dtype``."""
    if not isinstance(out, np.ndarray) or out.dtype != dtype or out.shape != shape or not out.flags.c_contiguous:
        got = f"{out.dtype} {out.shape}{'' if out.flags.c_contiguous else ' not C-contiguous'}" if isinstance(
            out, np.ndarray) else type(out).__name__  # fmt: skip
        raise CluedoTypeError(
            f"out must be a C-contiguous {shape} {np.dtype(dtype).name} array, got {got} (or leave out=None)")


class VectorEngine(CompiledEntryPoints, ThreadHost):
    """B games with one rules config; see :mod:`cluedo_env.engine.state` for the state arrays."""

    def __init__(
        self,
        config: RulesConfig | str | dict | None = None,
        batch_size: int = 1,
        autoreset: bool = False,
        threads: int | str | None = None,
    ):
        """``threads``: how many threads step, sample, reset and observe the batch, sharing out its games block
        by block (the kernels release the GIL). Results are the same whatever the count: every game has its own
        random streams. ``"auto"``: one per usable core, with at least ``GAMES_PER_THREAD`` games each, so batches
        under 4096 use one thread. Default (None): :func:`default_threads`, one unless ``CLUEDO_NUM_THREADS`` says
        otherwise."""
        self.config = make_config(config)
        if not is_int(batch_size) or batch_size < 1:
            raise (CluedoError if is_int(batch_size) else CluedoTypeError)(
                f"batch_size must be a positive integer, got {batch_size!r}"
            )
        self.batch_size = int(batch_size)
        self.P = self.config.players
        self.H = history_capacity(self.config)
        check_batch_size(self.batch_size, self.P, self.H)
        self.autoreset = bool(autoreset)
        self.board = load_board()
        self.has_board = self.config.has_board
        self.rules = rules_of(self.config)
        self.tables = tables_of(self.board)
        self.moves = with_scratch(move_tables(self.config.max_roll))  # shared tables, own working memory
        self.state = new_state(self.batch_size, self.P, self.H)
        for name, array in zip(State._fields, self.state, strict=True):
            setattr(self, name, array)  # eng.pos is eng.state.pos: one buffer
        self.special = self.mask[:, : A.MOVE0]  # (B, 4) ROLL, PASSAGE, STAY, END_TURN
        self.move_dest = self.mask[:, A.MOVE0 : A.SUGGEST0]  # (B, 197) destinations (phase MOVE)
        self.show = self.mask[:, A.SHOW0 : A.ACCUSE0]  # (B, 21) legal SHOWs
        self.obs_offsets = offsets(self.config)
        self.observation_size = size(self.config)
        self.packed_layout = packed_layout(self.config)
        self.packed_observation_size = self.packed_layout.size
        self.rng = np.random.default_rng()
        self._ar = np.arange(self.batch_size, dtype=np.int64)
        self._actions = np.zeros(self.batch_size, np.int64)
        self._all_active = np.zeros(0, bool)  # empty: every game is active
        B = self.batch_size
        self._out = (np.zeros((B, self.P), np.float32), np.zeros(B, bool), np.zeros(B, bool))
        self._no_uniforms = np.zeros(0, np.float64)
        self._actor_seats = np.full(self.batch_size, -1, np.int64)  # observe(): "each game's actor"
        self._one_game = np.zeros(1, np.int64)
        self._one_seat = np.zeros(1, np.int64)
        self.work = kernels.new_scratch()
        self._lock = threading.RLock()  # one caller at a time (serialised)
        self.threads = self._check_threads(default_threads() if threads is None else threads)
        self._compile_ahead()
        self._start_threads()

    @serialised
    def close(self) -> None:
        """Stop the engine's worker threads (they also stop when the engine is garbage-collected)."""
        self._stop_threads()

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the arrays, not the compiled entry points or threads (rebuilt on load, from numba's cache)."""
        own = (*THREADS_OWN, "_lock")
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("_k_") and k not in own}
        for name in (*State._fields, "special", "move_dest", "show"):  # aliases of self.state
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        for name, array in zip(State._fields, self.state, strict=True):
            setattr(self, name, array)
        self.special = self.mask[:, : A.MOVE0]
        self.move_dest = self.mask[:, A.MOVE0 : A.SUGGEST0]
        self.show = self.mask[:, A.SHOW0 : A.ACCUSE0]
        self._start_threads()

    # ================================================================= reset
    @serialised
    def reset(self, seed: int | None = None) -> None:
        """Deal new games in every slot; each slot's chance stream is seeded from ``seed``."""
        if self.threads > 1:
            self._pool_here().check_running()  # (before the streams change: a closed engine refuses, changing nothing)
        self.rng = np.random.default_rng(check_seed(seed))
        self.chance[:] = self.rng.integers(0, 2**64, size=self.batch_size, dtype=np.uint64, endpoint=False)
        self.sampler[:] = self.rng.integers(0, 2**64, size=self.batch_size, dtype=np.uint64, endpoint=False)
        if self.threads > 1:
            thread_jobs.new_games_job(self._job_context.job)
            self._on_threads(thread_jobs.NEW_GAMES)
        else:
            self._new_games(self._ar)

    @serialised
    def reset_games(self, idx: np.ndarray) -> None:
        """Start new games in the slots ``idx`` (e.g. finished ones); each slot's stream goes on."""
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        self._new_games(self._slots(idx))

    def _slots(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        if idx.size and (not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 or idx.max() >= self.batch_size):
            raise CluedoIndexError(f"game indices must be integers 0..{self.batch_size - 1}, got {idx.tolist()[:8]}")
        return np.ascontiguousarray(idx, np.int64).reshape(-1)

    def _new_games(self, idx: np.ndarray) -> None:
        if len(idx):
            self._k_new(self.state, self.rules, self.tables, idx, self.work)

    # ================================================================ queries

    @property
    def actor(self) -> np.ndarray:
        """(B,) int8: the seat to act in each game (the refuter while refuting); -1 when over (compiled:
        :func:`cluedo_env.engine.kernels.actors`, the rule that players' masks use too)."""
        out = np.empty(self.batch_size, np.int8)
        kernels.actors(self.phase, self.refuter, self.current, out)
        return out

    current_player = actor

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated

    @property
    def legal_action_mask(self) -> np.ndarray:
        """(B, 870) bool mask of the legal actions of each game's actor (all False when over).

        A read-only view of the buffer the engine keeps up to date: copy it to keep it.
        """
        view = self.mask.view()
        view.flags.writeable = False
        return view

    def legal_counts(self) -> np.ndarray:
        """(B,) number of legal actions per game."""
        count = self.tables.triple_count
        return (self.n_special + self.n_move + count[self.suggest_set + 1]
                + self.n_show + count[self.accuse_set + 1])  # fmt: skip

    @serialised
    def sample_random_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """(B,) int64: a uniformly random legal action per game (-1 for finished games).

        Chance comes from ``rng`` when given (one uniform per game), else from each game's own
        sampler stream (seeded by ``reset``). ``step`` accepts -1 only for finished games.
        """
        out = np.empty(self.batch_size, np.int64)
        u = self._no_uniforms if rng is None else rng.random(self.batch_size)
        if self.threads > 1:
            thread_jobs.sample_job(self._job_context.job, u, out)
            self._on_threads(thread_jobs.SAMPLE_UNIFORM)
        else:
            self._k_sample(self.state, self.tables, u, out)
        return out

    @serialised
    def sample_full_game_actions(self, keep_accusation: float = FULL_GAME_KEEP_ACCUSATION) -> np.ndarray:
        """(B,) int64: the ``full`` benchmark player's actions (-1 for finished games).

        Uniform random legal play, except that a drawn accusation is kept only with probability
        ``keep_accusation`` (else the player ends its turn: END_TURN, or ROLL at the turn's start),
        so games run their full length (~440 decisions with 4 players) instead of ending in a few
        random accusations. Every benchmark uses it; chance from the sampler streams.
        """
        out = np.empty(self.batch_size, np.int64)
        keep = float(keep_accusation)
        if self.threads > 1:
            thread_jobs.full_game_job(self._job_context.job, keep, out)
            self._on_threads(thread_jobs.SAMPLE_FULL)
        else:
            self._k_full(self.state, self.tables, keep, out)
        return out

    # =================================================================== step
    @serialised
    def step(self, actions: np.ndarray, active: np.ndarray | None = None, *, copy: bool = True) -> StepResult:
        """Apply one action per game for that game's actor; return what the step produced.

        The action of a finished game (phase OVER, when not autoresetting) is ignored: pass
        -1. ``active``: an optional (B,) bool mask; games where it is False are left exactly
        as they are (their action is ignored too), e.g. while a single-agent wrapper waits for
        its learner. All or nothing: if any live game's action is illegal, IllegalActionError
        names the first one and no game changes. The returned rewards and end flags describe
        this step even when ``autoreset`` has already put a new game in a finished slot.
        The step writes them into new arrays; ``copy=False`` into the engine's own result buffers instead
        (overwritten by the next step), which saves three allocations a step where that matters (batch 1).
        """
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        if actions.shape != (self.batch_size,) or actions.dtype.kind not in "iu":
            raise A.IllegalActionError(
                f"actions must be a ({self.batch_size},) integer array, got {actions.dtype} {actions.shape}"
            )
        if active is None:
            active = self._all_active
        else:
            active = np.asarray(active)
            if active.shape != (self.batch_size,) or active.dtype != bool:
                raise CluedoTypeError(
                    f"active must be a ({self.batch_size},) bool mask, got {active.dtype} {active.shape}"
                )
            active = np.ascontiguousarray(active)
        if actions.dtype == np.int64 and actions.flags.c_contiguous:
            acts = actions
        else:
            acts = self._actions
            np.copyto(acts, actions, casting="unsafe")
            if actions.dtype.kind == "u":
                acts[actions > A.NUM_ACTIONS] = -1  # no huge unsigned value may wrap into a legal id
        B = self.batch_size
        out = (np.empty((B, self.P), np.float32), np.empty(B, bool), np.empty(B, bool)) if copy else self._out
        rewards, terminated, truncated = out
        if self.threads > 1:
            first, count = self._step_on_threads(acts, active, out)
        else:
            first, count = self._k_step(self.state, self.rules, self.tables, self.moves, self.work, acts, active,
                                        self.autoreset, rewards, terminated, truncated)  # fmt: skip
        if first >= 0:
            g = int(first)
            a = int(actions[g])
            raise A.IllegalActionError(
                f"game {g}: illegal action {A.describe(a)} (id {a}) for player "
                f"{int(self.actor[g])} in phase '{A.PHASE_NAMES[self.phase[g]]}' ({A.PHASE_HELP[self.phase[g]]}); "
                f"{int(count)} game(s) of {self.batch_size} had an illegal action; no game was changed"
            )
        return StepResult(rewards, terminated, truncated)

    # ============================================================ observations
    @serialised
    def observe(
        self,
        player: np.ndarray | int | None = None,
        idx: np.ndarray | None = None,
        out: np.ndarray | None = None,
        *,
        packed: bool = False,
    ) -> np.ndarray:
        """(n, D) int8 observations; see :mod:`cluedo_env.engine.observation` and docs/observation.md.

        ``player``: a seat (int or (n,) array); default each game's actor (once a game is over,
        the player whose turn it was). ``idx``: games (default all). ``out``: an (n, D) int8
        C-contiguous array to fill (saves allocating 10 MB a step at batch 4096).
        ``packed=True``: (n, ``packed_observation_size``) uint8 rows of the packed layout instead
        (:func:`cluedo_env.engine.observation.packed_layout`, a fifth of the bytes; ``unpack`` gives the int8 rows).
        """
        games = self._ar if idx is None else self._slots(idx)
        n = len(games)
        if player is None:
            seats = self._actor_seats[:n]
        else:
            seats = np.ascontiguousarray(np.broadcast_to(np.asarray(player), (n,)), np.int64)
            if n and (seats.min() < 0 or seats.max() >= self.P):
                raise CluedoIndexError(f"player must be a seat 0..{self.P - 1}, got {np.unique(seats).tolist()}")
        D, dtype = (self.packed_observation_size, np.uint8) if packed else (self.observation_size, np.int8)
        if out is None:
            out = np.empty((n, D), dtype)
        else:
            _check_out(out, (n, D), dtype)
        if self.threads > 1 and idx is None:  # every game, the threads sharing out the rows
            kind = thread_jobs.OBSERVE_PACKED if packed else thread_jobs.OBSERVE
            thread_jobs.observe_job(self._job_context.job, kind, seats, out)
            self._on_threads(kind)
        else:
            kernel, at = (self._k_obs_packed, self.packed_layout.offsets) if packed else (self._k_obs, self.obs_offsets)
            kernel(self.state, self.rules, at, games, seats, out, packed)
        return out

    # ------------------------------------------------------- one game, lean
    # The PettingZoo env steps one game at a time; these skip the batch checks above.
    @serialised
    def is_legal(self, i: int, action: int) -> bool:
        """Whether ``action`` is legal for game ``i``'s actor."""
        if type(i) is not int or not 0 <= i < self.batch_size:
            i = self._slot(i)
        if type(action) is not int and not is_int(action):
            raise CluedoTypeError(f"action must be an integer 0..{A.NUM_ACTIONS - 1}, got {action!r}")
        if not 0 <= action < A.NUM_ACTIONS:
            return False
        return bool(self._k_is_legal(self.state, i, action))

    @serialised
    def observe_game(self, i: int, seat: int, out: np.ndarray | None = None, *, packed: bool = False) -> np.ndarray:
        """(D,) int8: seat ``seat``'s observation of game ``i``; the checks cost a few type tests.
        ``packed=True``: its (``packed_observation_size``,) uint8 packed row instead."""
        if type(i) is not int or not 0 <= i < self.batch_size:
            i = self._slot(i)
        if type(seat) is not int or not 0 <= seat < self.P:
            if not is_int(seat) or not 0 <= seat < self.P:
                raise CluedoIndexError(f"seat must be an integer 0..{self.P - 1}, got {seat!r}")
        D, dtype = (self.packed_observation_size, np.uint8) if packed else (self.observation_size, np.int8)
        if out is None:
            out = np.empty(D, dtype)
        else:
            _check_out(out, (D,), dtype)
        games = self._one_game
        games[0] = i
        seats = self._one_seat
        seats[0] = seat
        if packed:
            self._k_obs_packed(self.state, self.rules, self.packed_layout.offsets, games, seats, out.reshape(1, -1),
                               True)  # fmt: skip
        else:
            self._k_obs(self.state, self.rules, self.obs_offsets, games, seats, out.reshape(1, -1), False)
        return out

    # ---------------------------------------------------------- summaries
    @serialised
    def rebuild_summaries(self, idx: np.ndarray) -> None:
        """Recompute the history summaries (``seen`` ... ``accused_at``) from the history."""
        for i in self._slots(idx):
            self._k_summaries(self.state, self.rules, int(i))

    def history_counts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Public counts of games ``idx`` from their histories: suggestions (n,) int64, wrong accusations by seat
        (n, P) int64, and whether the last record is a correct accusation (n,) bool (compiled:
        :func:`cluedo_env.engine.kernels.history_counts`, one pass for all games that ended together)."""
        idx = self._slots(idx)
        n = len(idx)
        suggestions, wrong, won = np.empty(n, np.int64), np.empty((n, self.P), np.int64), np.empty(n, bool)
        kernels.history_counts(idx, self.hist_len, self.hist_kind, self.hist_player, self.hist_correct, suggestions,
                               wrong, won)  # fmt: skip
        return suggestions, wrong, won

    # ============================================================= snapshots
    @serialised
    def export_game(self, i: int) -> dict[str, Any]:
        """Game ``i`` as a reference-engine snapshot dict (docs/snapshot.md)."""
        return batch_snapshot.export_game(self, self._slot(i))

    def _slot(self, i: Any) -> int:
        if not isinstance(i, (int, np.integer)) or isinstance(i, (bool, np.bool_)) or not 0 <= i < self.batch_size:
            raise CluedoIndexError(f"game index must be an integer 0..{self.batch_size - 1}, got {i!r}")
        return int(i)

    @serialised
    def import_game(self, i: int, snapshot: dict[str, Any]) -> None:
        """Put the game a snapshot describes into slot ``i`` (its rules must be this engine's).

        All or nothing: the snapshot is read and checked completely (``Game.from_dict``, then this
        engine's limits: rules, history length) before anything is written, so a bad snapshot
        raises and leaves every game, slot ``i`` included, as it was.
        """
        i = self._slot(i)
        batch_snapshot.write_game(self, i, batch_snapshot.read_game(self, snapshot))
        self._k_summaries(self.state, self.rules, i)
        self.move_dest[i] = False
        self.n_move[i] = 0
        if self.phase[i] == A.MOVE:
            self.n_move[i] = self._k_dest(self.state, self.moves, i, np.zeros(6, np.int16), self.mask[i, 4:201])
        self._k_legal(self.state, self.rules, self.tables, i)


__all__ = ["FULL_GAME_KEEP_ACCUSATION", "StepResult", "VectorEngine"]
