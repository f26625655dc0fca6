"""Play batches of games between batched players: the loop every evaluation uses.

``play_games`` puts one :class:`cluedo_env.agents.players.base.Agent` in each seat of a VectorEngine, asks
each seat's player for the games where that seat is to act, and steps all games
together until ``games`` games have finished. Finished slots are refilled with new
games (until enough have been started), so the batch stays full.

Each finished game gives a :class:`GameRecord`: winner, how it ended, turns, suggestions, the
rounds it lasted and the winner's own turns (a round is one turn of each seat still in, so
"rounds to a win" is the winner's turn count), and wrong accusations per seat (for soundness
checks: the deducer must have none).

``record``: an optional callable that receives, for each of the first ``record_games`` games
started (all of them when None), its game record (:mod:`cluedo_env.record`) when it ends. Without
it nothing is recorded and the loop does no extra work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from cluedo_env.agents.players.base import Agent

from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import RulesConfig


@dataclass
class GameRecord:
    """The outcome of one finished game (public facts only)."""

    winner: int  # seat, -1 if none
    ending: str  # "accusation", "last_standing", "all_eliminated", "truncated"
    turns: int
    suggestions: int  # suggestions made in the game
    seat_order: tuple[int, ...] = field(default=())  # agent index per seat (set by the caller)
    rounds: int = 0  # rounds played: the most turns any seat took (the last round may be partial)
    winner_turns: int = 0  # turns the winner took, the winning one included (0 without a winner)
    wrong_accusations: tuple[int, ...] = field(default=())  # wrong accusations per seat (soundness checks)


def _ending(truncated: bool, winner: int, won_by_accusation: bool) -> str:
    if truncated:
        return "truncated"
    if winner < 0:
        return "all_eliminated"
    return "accusation" if won_by_accusation else "last_standing"


def _game_records(eng: VectorEngine, ended: np.ndarray, seat_turns: np.ndarray) -> list[GameRecord]:
    """The records of the games ``ended`` (slots whose games just ended), from one compiled pass over their
    histories (:meth:`VectorEngine.history_counts`)."""
    suggestions, wrong, won = eng.history_counts(ended)
    rounds = seat_turns[ended].max(1)
    winners = eng.winner[ended].astype(np.int64)
    winner_turns = seat_turns[ended, np.maximum(winners, 0)] * (winners >= 0)
    return [
        GameRecord(w, _ending(t, w, ok), turns, s, rounds=r, winner_turns=wt, wrong_accusations=tuple(wr))
        for w, t, ok, turns, s, r, wt, wr in zip(
            winners.tolist(), eng.truncated[ended].tolist(), won.tolist(), eng.turn_count[ended].tolist(),
            suggestions.tolist(), rounds.tolist(), winner_turns.tolist(), wrong.tolist(), strict=True,
        )
    ]  # fmt: skip


def act_by_seat(
    actor: np.ndarray,
    players: Mapping[int, Any],
    act: Callable[[Any, int, np.ndarray], np.ndarray],
    out: np.ndarray,
    where: np.ndarray | None = None,
) -> np.ndarray:
    """The one seat-dispatch loop: ``out[idx] = act(player, seat, idx)`` for each seat's games.

    ``actor`` (B,) is who is to act in each game; ``players`` maps seats to whatever plays them;
    ``idx`` are the games (among ``where``, a (B,) bool selection, if given) where that seat is to
    act. The runner, the learner envs (opponents by seat) and the terminal game all ask their
    players through it; ``act`` says how a player of theirs is asked.
    """
    for seat, player in players.items():
        chosen = actor == seat if where is None else where & (actor == seat)
        idx = np.flatnonzero(chosen)
        if len(idx):
            out[idx] = act(player, seat, idx)
    return out


def seat_actions(eng: VectorEngine, agents: list[Agent], views: list[PlayerView]) -> np.ndarray:
    """(B,) actions: each seat's player acts in the games where that seat is to act; -1 where a game is over."""
    return act_by_seat(eng.actor, dict(enumerate(agents)), lambda agent, seat, idx: agent.act(views[seat], idx),
                       np.full(eng.batch_size, -1, np.int64))  # fmt: skip


def play_games(
    config: RulesConfig,
    agents: list[Agent],
    games: int,
    *,
    seed: int = 0,
    batch_size: int = 1024,
    progress=None,
    record: Callable[[dict], None] | None = None,
    record_games: int | None = None,
) -> list[GameRecord]:
    """Play ``games`` games with ``agents[s]`` in seat ``s``; return their records in finishing order.

    ``progress``: an optional callable taking the number of games just finished (e.g. a tqdm
    bar's ``update``). ``record`` / ``record_games``: see the module docstring.
    """
    if len(agents) != config.players:
        raise ValueError(f"need one agent per seat: {config.players} seats, {len(agents)} agents")
    B = max(1, min(batch_size, games))
    eng = VectorEngine(config, B, autoreset=False)
    views = [PlayerView(eng, s) for s in range(config.players)]
    eng.reset(seed)
    all_games = np.arange(B)
    for agent, view in zip(agents, views, strict=True):
        agent.reset(view, all_games)
    started, records = B, []
    active = np.ones(B, bool)
    seat_turns = np.zeros((B, config.players), np.int64)  # turns each seat has taken in each slot's game
    rec = _Recording(eng, agents, seed, record, record_games) if record is not None else None
    if rec is not None:
        rec.start(all_games, 0)
    while active.any():
        actor = eng.actor
        actions = seat_actions(eng, agents, views)
        turn_owner, turns_before = eng.current.astype(np.int64), eng.turn_count.astype(np.int64)
        result = eng.step(actions)
        ended_turn = np.flatnonzero(eng.turn_count != turns_before)  # the turn of ``turn_owner`` ended
        seat_turns[ended_turn, turn_owner[ended_turn]] += 1
        if rec is not None:
            rec.step(actor, actions)
        for agent, view in zip(agents, views, strict=True):
            agent.observe_step(view)
        ended = np.flatnonzero((result.terminated | result.truncated) & active)
        if len(ended):
            records += _game_records(eng, ended, seat_turns)
            if rec is not None:
                for i in ended.tolist():
                    rec.finish(i)
        if progress is not None and len(ended):
            progress(len(ended))
        if len(ended):
            refill = ended[: max(0, games - started)]
            if len(refill):
                eng.reset_games(refill)
                seat_turns[refill] = 0
                if rec is not None:
                    rec.start(refill, started)
                for agent, view in zip(agents, views, strict=True):
                    agent.reset(view, refill)
                started += len(refill)
            active[ended[len(refill) :]] = False
        assert not (active & (eng.phase == A.OVER)).any()
    return records


class _Recording:
    """Collects the game records of the first ``limit`` games a ``play_games`` call starts."""

    def __init__(self, eng: VectorEngine, agents: list[Agent], seed: int, sink, limit: int | None) -> None:
        self.eng, self.sink, self.seed = eng, sink, seed
        self.limit = limit
        self.players = [getattr(a, "name", type(a).__name__) for a in agents]
        self.on = np.zeros(eng.batch_size, bool)  # slots whose current game is recorded
        self.initial: list[dict | None] = [None] * eng.batch_size
        self.steps: list[list[tuple[int, int, int | None]]] = [[] for _ in range(eng.batch_size)]

    def start(self, slots: np.ndarray, first_number: int) -> None:
        """Games number ``first_number``, ``first_number + 1``, ... start in ``slots``."""
        for k, i in enumerate(slots):
            i = int(i)
            self.on[i] = self.limit is None or first_number + k < self.limit
            self.initial[i] = self.eng.export_game(i) if self.on[i] else None
            self.steps[i] = []

    def step(self, actor: np.ndarray, actions: np.ndarray) -> None:
        idx = np.flatnonzero(self.on & (actor >= 0))
        if not len(idx):
            return
        rolls = self.eng.last_roll[idx].tolist()
        for i, p, a, r in zip(idx.tolist(), actor[idx].tolist(), actions[idx].tolist(), rolls, strict=True):
            self.steps[i].append((p, a, r if a == A.ROLL else None))

    def finish(self, i: int) -> None:
        if not self.on[i]:
            return
        from cluedo_env.record import record_from_engine_game

        self.on[i] = False
        initial, steps = self.initial[i], self.steps[i]
        self.initial[i], self.steps[i] = None, []
        self.sink(record_from_engine_game(self.eng, i, initial, steps, seed=self.seed, players=self.players))


__all__ = [
    "GameRecord",
    "play_games",
    "seat_actions",
]
