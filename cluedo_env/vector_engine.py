"""The vectorized engine: a batch of B games of Cluedo stepped at once as numpy arrays.

The rules are those of the reference engine (:mod:`cluedo_env.reference`), which is the
oracle; ``tests/test_differential.py`` plays both side by side and compares every field.
Games in a batch may be in different phases: a step groups games by the kind of action
taken (``idx = flatnonzero(kind == k)``) and applies array operations to each group, with
no Python loop over games.

Usage::

    eng = VectorEngine(RulesConfig.from_preset("classic", players=4), batch_size=4096)
    eng.reset(seed=0)
    while True:
        actions = eng.sample_random_actions()          # or a policy using eng.legal_action_mask
        eng.step(actions)
        obs = eng.observe()                             # acting player's observation

State arrays (B = batch size, P = players; all updated in place):

================  ===============  =========================================================
name              shape, dtype     meaning
================  ===============  =========================================================
pos               (B, 6) int16     location of each suspect token (board.py numbering); 0 without a board
weapon_room       (B, 6) int8      room of each weapon; 0 without a board
owner             (B, 21) int8     seat holding each card, -1 for the envelope
hand_size         (B, P) int8      cards in each seat's hand (public, fixed by the deal)
envelope          (B, 3) int8      the solution as card ids (suspect, weapon, room)
phase             (B,) int8        actions.START .. actions.OVER
current           (B,) int8        seat whose turn it is
refuter           (B,) int8        seat that must show a card (phase REFUTE), else -1
roll              (B,) int8        this turn's roll, 0 before rolling
turn_count        (B,) int32       completed turns (R-E3)
eliminated        (B, P) bool      made a wrong accusation (R-A4)
dragged           (B, P) bool      moved by another's suggestion since own last turn (R-T3)
winner            (B,) int8        winning seat, -1 if none (yet)
terminated        (B,) bool        the game ended with a win or R-E4
truncated         (B,) bool        the game was cut at max_turns (R-E3)
rewards           (B, P) float32   rewards of the last step
last_roll         (B,) int8        dice rolled in the last step, 0 if that step was no ROLL
                                   (``roll`` is 0 again if the forfeited move ended the turn)
move_dest         (B, 197) bool    destinations of the rolled move (phase MOVE), else all False
hist_len          (B,) int16       number of history records
hist_kind         (B, H) int8      0 none, 1 suggestion, 2 accusation
hist_player       (B, H) int8      suggester or accuser
hist_triple       (B, H, 3) int8   suspect, weapon, room indices
hist_correct      (B, H) bool      accusation was right
hist_response     (B, H, P) int8   per seat for a suggestion: -1 not asked (yet), -2 could not
                                   refute, c >= 0 showed card c (seen by suggester and refuter only)
seen              (B, P, P, 21)    seen[b, to, by, c]: seat ``by`` showed card c to seat ``to``
                  bool
passed_on         (B, P, 21) bool  seat could not refute a suggestion naming the card (public)
refuted_on        (B, P, 21) int8  times the seat showed a card for a suggestion naming it (public, capped)
named_count       (B, P, 21) int8  times the seat named the card in its suggestions (public, capped)
accused_at        (B, P) int16     history index of the seat's accusation, -1 if none (R-A6)
================  ===============  =========================================================

The last five are summaries of the history, kept up to date step by step so that an
observation never has to scan the history (``rebuild_summaries`` recomputes them).

H = max_turns + players: each turn holds at most one suggestion, each player one accusation.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from cluedo_env import actions as A
from cluedo_env.board import NUM_LOCATIONS, NUM_SQUARES, ROOM_LOC0, load_board
from cluedo_env.cards import (
    NUM_CARDS,
    NUM_ROOMS,
    NUM_SUSPECTS,
    NUM_WEAPONS,
    PASSAGES,
    ROOM_CARD0,
    WEAPON_CARD0,
)
from cluedo_env.config import RulesConfig, make_config
from cluedo_env.movement import destinations, exits, move_tables

NOT_ASKED, PASSED = -1, -2
SUGGESTION, ACCUSATION = 1, 2
ALL_TRIPLES = NUM_ROOMS  # triple-set id 9: every triple (the card-only game, free accusations)
NO_TRIPLES = -1

# (11, 324) bool: triple-set id + 1 -> allowed triples. id -1 none, 0..8 that room only, 9 all.
_TRIPLE_SETS = np.zeros((NUM_ROOMS + 2, A.NUM_TRIPLES), bool)
for _r in range(NUM_ROOMS):
    _TRIPLE_SETS[_r + 1, [A.triple_index(s, w, _r) for s in range(6) for w in range(6)]] = True
_TRIPLE_SETS[NUM_ROOMS + 1] = True
_TRIPLE_COUNT = _TRIPLE_SETS.sum(axis=1)  # 0, 36 x 9, 324


def _loc_passage() -> np.ndarray:
    """(197,) int16: location the secret passage leads to, -1 where none (R-T2)."""
    out = np.full(NUM_LOCATIONS, -1, np.int16)
    for room, target in PASSAGES.items():
        out[ROOM_LOC0 + room] = ROOM_LOC0 + target
    return out


class StepResult(NamedTuple):
    """What one step produced, per game: copies, safe to keep."""

    rewards: np.ndarray  # (B, P) float32
    terminated: np.ndarray  # (B,) bool: the game ended in this step with a win or R-E4
    truncated: np.ndarray  # (B,) bool: the game was cut at max_turns in this step


class VectorEngine:
    """B games with one rules config; see the module docstring for the state arrays."""

    def __init__(self, config: RulesConfig | str | dict | None = None, batch_size: int = 1, autoreset: bool = False):
        self.config = make_config(config)
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.B = int(batch_size)
        self.P = self.config.players
        self.H = self.config.max_turns + self.P
        self.autoreset = autoreset
        self.board = load_board()
        self.has_board = self.config.has_board
        self.moves = move_tables(self.config.max_roll) if self.has_board else None
        self.exits = exits(self.board).astype(np.int64)
        self.passage = _loc_passage()
        self.front_room = np.full(NUM_LOCATIONS, -1, np.int16)
        for sq, room in self.board.front_room.items():
            self.front_room[sq] = room
        self.distance = self.board.distance
        B, P, H = self.B, self.P, self.H
        self._ar = np.arange(B)
        # --- state ---
        self.pos = np.zeros((B, NUM_SUSPECTS), np.int16)
        self.weapon_room = np.zeros((B, NUM_WEAPONS), np.int8)
        self.owner = np.zeros((B, NUM_CARDS), np.int8)
        self.hand_size = np.zeros((B, P), np.int8)  # public; fixed by the deal
        self.envelope = np.zeros((B, 3), np.int8)
        self.phase = np.full(B, A.OVER, np.int8)
        self.current = np.zeros(B, np.int8)
        self.refuter = np.full(B, -1, np.int8)
        self.roll = np.zeros(B, np.int8)
        self.turn_count = np.zeros(B, np.int32)
        self.eliminated = np.zeros((B, P), bool)
        self.dragged = np.zeros((B, P), bool)
        self.winner = np.full(B, -1, np.int8)
        self.terminated = np.zeros(B, bool)
        self.truncated = np.zeros(B, bool)
        self.rewards = np.zeros((B, P), np.float32)
        self.last_roll = np.zeros(B, np.int8)
        self.hist_len = np.zeros(B, np.int16)
        self.hist_kind = np.zeros((B, H), np.int8)
        self.hist_player = np.zeros((B, H), np.int8)
        self.hist_triple = np.zeros((B, H, 3), np.int8)
        self.hist_correct = np.zeros((B, H), bool)
        self.hist_response = np.full((B, H, P), NOT_ASKED, np.int8)
        self.seen = np.zeros((B, P, P, NUM_CARDS), bool)
        self.passed_on = np.zeros((B, P, NUM_CARDS), bool)
        self.refuted_on = np.zeros((B, P, NUM_CARDS), np.int8)
        self.named_count = np.zeros((B, P, NUM_CARDS), np.int8)
        self.accused_at = np.full((B, P), -1, np.int16)
        self._observer = None
        # --- legal actions, kept as blocks (see _update_legal) ---
        # The special, move and show blocks live inside the mask buffer itself (views), so the
        # mask only needs its two triple blocks filled when asked for.
        self._mask_buffer = np.zeros((B, A.NUM_ACTIONS), bool)
        self._mask_ready = False
        self.special = self._mask_buffer[:, : A.MOVE0]  # (B, 4) ROLL, PASSAGE, STAY, END_TURN
        self.move_dest = self._mask_buffer[:, A.MOVE0 : A.SUGGEST0]  # (B, 197) destinations (phase MOVE)
        self.show = self._mask_buffer[:, A.SHOW0 : A.ACCUSE0]  # (B, 21) legal SHOWs
        self.n_special = np.zeros(B, np.int16)  # number of True in special
        self.n_move = np.zeros(B, np.int16)  # number of True in move_dest
        self.n_show = np.zeros(B, np.int16)  # number of True in show
        self.suggest_set = np.full(B, NO_TRIPLES, np.int8)  # triple-set id of legal SUGGESTs
        self.accuse_set = np.full(B, NO_TRIPLES, np.int8)  # triple-set id of legal ACCUSEs
        self.rng = np.random.default_rng()

    # ================================================================= reset
    def reset(self, seed: int | None = None) -> None:
        """Deal new games in every slot; chance from ``np.random.default_rng(seed)``."""
        self.rng = np.random.default_rng(seed)
        self._new_games(self._ar)

    def reset_games(self, idx: np.ndarray) -> None:
        """Start new games in the slots ``idx`` (e.g. finished ones), from the engine's RNG."""
        self._new_games(np.asarray(idx, np.int64))

    def _new_games(self, idx: np.ndarray) -> None:
        n, rng, P = len(idx), self.rng, self.P
        if n == 0:
            return
        # R-S4: one suspect, one weapon and one room card into the envelope.
        env = np.stack(
            [rng.integers(0, NUM_SUSPECTS, n), WEAPON_CARD0 + rng.integers(0, NUM_WEAPONS, n),
             ROOM_CARD0 + rng.integers(0, NUM_ROOMS, n)], axis=1)  # fmt: skip
        self.envelope[idx] = env
        # R-S5: shuffle the other 18 and deal them clockwise from seat 0.
        keys = rng.random((n, NUM_CARDS))
        keys[np.arange(n)[:, None], env] = 2.0  # envelope cards sort last
        deck = np.argsort(keys, axis=1)[:, : NUM_CARDS - 3]
        owner = np.full((n, NUM_CARDS), -1, np.int8)
        owner[np.arange(n)[:, None], deck] = (np.arange(NUM_CARDS - 3) % P).astype(np.int8)
        self.owner[idx] = owner
        self.hand_size[idx] = (NUM_CARDS - 3) // P + (np.arange(P) < (NUM_CARDS - 3) % P)
        if self.has_board:
            self.pos[idx] = np.array(self.board.starts, np.int16)  # R-S2
            # R-S3: six weapons in six different rooms.
            self.weapon_room[idx] = np.argsort(rng.random((n, NUM_ROOMS)), axis=1)[:, :NUM_WEAPONS]
            self.phase[idx] = A.START  # R-S1: Scarlet first
        else:
            self.pos[idx] = 0
            self.weapon_room[idx] = 0
            self.phase[idx] = A.SUGGEST  # R-C2
        self.current[idx] = 0
        self.refuter[idx] = -1
        self.roll[idx] = 0
        self.turn_count[idx] = 0
        self.eliminated[idx] = False
        self.dragged[idx] = False
        self.winner[idx] = -1
        self.terminated[idx] = False
        self.truncated[idx] = False
        self.rewards[idx] = 0
        self.move_dest[idx] = False
        self.n_move[idx] = 0
        self.hist_len[idx] = 0  # records past hist_len are stale and never read
        self.seen[idx] = False
        self.passed_on[idx] = False
        self.refuted_on[idx] = 0
        self.named_count[idx] = 0
        self.accused_at[idx] = -1
        # Every new game is in the same public position, so its legal blocks are too.
        first = idx[:1]
        self._update_legal(first)
        rest = idx[1:]
        for block in (self.special, self.n_special, self.suggest_set, self.accuse_set, self.show, self.n_show):
            block[rest] = block[first]

    # ================================================================ queries
    @property
    def batch_size(self) -> int:
        return self.B

    @property
    def actor(self) -> np.ndarray:
        """(B,) int8: the seat to act in each game (the refuter while refuting); -1 when over."""
        out = np.where(self.phase == A.REFUTE, self.refuter, self.current)
        return np.where(self.phase == A.OVER, -1, out).astype(np.int8)

    current_player = actor

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated

    @property
    def legal_action_mask(self) -> np.ndarray:
        """(B, 870) bool mask of the legal actions of each game's actor (all False when over).

        Built on first access after each step into a buffer that the next step reuses
        (fresh memory for 3.5 MB a step costs more than building it): copy it to keep it.
        """
        mask = self._mask_buffer
        if not self._mask_ready:
            mask[:, A.SUGGEST0 : A.SHOW0] = _TRIPLE_SETS[self.suggest_set + 1]
            mask[:, A.ACCUSE0 :] = _TRIPLE_SETS[self.accuse_set + 1]
            self._mask_ready = True
        view = mask.view()
        view.flags.writeable = False
        return view

    def legal_counts(self) -> np.ndarray:
        """(B,) number of legal actions per game."""
        return (self.n_special + self.n_move + _TRIPLE_COUNT[self.suggest_set + 1]
                + self.n_show + _TRIPLE_COUNT[self.accuse_set + 1])  # fmt: skip

    def sample_random_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """(B,) int64: a uniformly random legal action per game (-1 for finished games).

        Works on the legal blocks rather than the (B, 870) mask: a random rank among the
        legal actions of each game, then the block and the action at that rank. Finished
        games get -1, which ``step`` accepts only for finished games.
        """
        rng = rng or self.rng
        n_special = self.n_special
        n_move = self.n_move
        n_sug = _TRIPLE_COUNT[self.suggest_set + 1]
        n_show = self.n_show
        n_acc = _TRIPLE_COUNT[self.accuse_set + 1]
        bounds = np.cumsum(np.stack([n_special, n_move, n_sug, n_show, n_acc], 1), axis=1)  # (B, 5)
        total = bounds[:, -1]
        rank = (rng.random(self.B) * total).astype(np.int64)
        block = (rank[:, None] >= bounds).sum(1)  # 0..4 (5 when over: total 0)
        out = np.full(self.B, -1, np.int64)
        below = np.concatenate([np.zeros((self.B, 1), np.int64), bounds], axis=1)[self._ar, block]
        r = rank - below  # rank inside the block
        for b_id, (flags, base) in enumerate(((self.special, 0), (self.move_dest, A.MOVE0))):
            idx = np.flatnonzero(block == b_id)
            if len(idx):
                csum = np.cumsum(flags[idx], axis=1)
                out[idx] = base + (csum > r[idx, None]).argmax(1)
        for b_id, sets, base in ((2, self.suggest_set, A.SUGGEST0), (4, self.accuse_set, A.ACCUSE0)):
            idx = np.flatnonzero(block == b_id)
            if len(idx):
                s_id, rr = sets[idx].astype(np.int64), r[idx]
                # A room set lists (suspect, weapon) pairs in order; the full set is every triple.
                room_only = rr * NUM_ROOMS + s_id  # rank rr = suspect * 6 + weapon
                out[idx] = base + np.where(s_id == ALL_TRIPLES, rr, room_only)
        idx = np.flatnonzero(block == 3)
        if len(idx):
            csum = np.cumsum(self.show[idx], axis=1)
            out[idx] = A.SHOW0 + (csum > r[idx, None]).argmax(1)
        return out

    # =================================================================== step
    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> StepResult:
        """Apply one action per game for that game's actor; return what the step produced.

        The action of a finished game (phase OVER, when not autoresetting) is ignored: pass
        -1. ``active``: an optional (B,) bool mask; games where it is False are left exactly
        as they are (their action is ignored too), e.g. while a single-agent wrapper waits for
        its learner. Raises IllegalActionError naming the first game whose action is illegal,
        before any game's state changes. The returned rewards and end flags describe this
        step even when ``autoreset`` has already put a new game in a finished slot.
        """
        actions = np.asarray(actions)
        if actions.shape != (self.B,) or not np.issubdtype(actions.dtype, np.integer):
            raise A.IllegalActionError(
                f"actions must be a ({self.B},) integer array, got {actions.dtype} {actions.shape}"
            )
        done = self.phase == A.OVER
        if active is not None:
            active = np.asarray(active, bool)
            if active.shape != (self.B,):
                raise ValueError(f"active must be a ({self.B},) bool mask, got shape {active.shape}")
            done = done | ~active
        act = np.where(done, 0, actions).astype(np.int64)
        ok = self._is_legal(act) | done
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0])
            raise A.IllegalActionError(
                f"game {g}: illegal action {A.describe(int(act[g]))} (id {int(act[g])}) for player "
                f"{int(self.actor[g])} in phase '{A.PHASE_NAMES[self.phase[g]]}' ({A.PHASE_HELP[self.phase[g]]}); "
                f"{int((~ok).sum())} game(s) of {self.B} had an illegal action; no game was changed"
            )
        self._mask_ready = False
        self.rewards[:] = 0
        self.last_roll[:] = 0
        live = ~done
        kind = np.full(self.B, -1, np.int64)
        kind[live] = np.searchsorted(_KIND_STARTS, act[live], side="right") - 1
        end_turn: list[np.ndarray] = []

        idx = np.flatnonzero(kind == _ROLL)
        if len(idx):
            self._roll(idx, end_turn)
        idx = np.flatnonzero(kind == _PASSAGE)
        if len(idx):  # R-T2: counts as entering the opposite corner room
            cur = self.current[idx]
            self.pos[idx, cur] = self.passage[self.pos[idx, cur]]
            self.phase[idx] = A.SUGGEST
        idx = np.flatnonzero(kind == _STAY)
        if len(idx):  # R-T3
            self.phase[idx] = A.SUGGEST
        idx = np.flatnonzero(kind == _MOVE)
        if len(idx):
            dest = (act[idx] - A.MOVE0).astype(np.int16)
            self.pos[idx, self.current[idx]] = dest
            self.move_dest[idx] = False
            self.n_move[idx] = 0
            into_room = dest >= ROOM_LOC0
            self.phase[idx[into_room]] = A.SUGGEST  # R-G2
            self._after_move(idx[~into_room], end_turn)
        idx = np.flatnonzero(kind == _SUGGEST)
        if len(idx):
            self._suggest(idx, act[idx] - A.SUGGEST0, end_turn)
        idx = np.flatnonzero(kind == _SHOW)
        if len(idx):
            self._show(idx, act[idx] - A.SHOW0, end_turn)
        idx = np.flatnonzero(kind == _ACCUSE)
        if len(idx):
            self._accuse(idx, act[idx] - A.ACCUSE0, end_turn)
        idx = np.flatnonzero(kind == _END)
        if len(idx):
            end_turn.append(idx)
        if end_turn:
            self._end_turn(np.concatenate(end_turn))
        self._update_legal(np.flatnonzero(live))
        result = StepResult(self.rewards.copy(), self.terminated & live, self.truncated & live)
        if self.autoreset:
            finished = np.flatnonzero(self.phase == A.OVER)
            if len(finished):
                self._new_games(finished)
        return result

    def _is_legal(self, act: np.ndarray) -> np.ndarray:
        """(B,) bool: ``act`` is legal in each game, read from the legal blocks (no mask needed)."""
        ar = self._ar
        ok = np.zeros(self.B, bool)
        a = np.clip(act, 0, A.NUM_ACTIONS - 1)
        in_range = act == a
        ok |= (a < A.MOVE0) & self.special[ar, np.minimum(a, 3)]
        ok |= (a >= A.MOVE0) & (a < A.SUGGEST0) & self.move_dest[ar, np.clip(a - A.MOVE0, 0, NUM_LOCATIONS - 1)]
        t = np.clip(a - A.SUGGEST0, 0, A.NUM_TRIPLES - 1)
        ok |= (a >= A.SUGGEST0) & (a < A.SHOW0) & _TRIPLE_SETS[self.suggest_set + 1, t]
        ok |= (a >= A.SHOW0) & (a < A.ACCUSE0) & self.show[ar, np.clip(a - A.SHOW0, 0, NUM_CARDS - 1)]
        t = np.clip(a - A.ACCUSE0, 0, A.NUM_TRIPLES - 1)
        ok |= (a >= A.ACCUSE0) & _TRIPLE_SETS[self.accuse_set + 1, t]
        return ok & in_range

    # ------------------------------------------------------------ transitions
    def _roll(self, idx: np.ndarray, end_turn: list) -> None:
        """R-T1, R-D1: roll, then find the destinations (R-M*); none forfeits the move (R-M8)."""
        dice = self.rng.integers(1, 7, size=(len(idx), self.config.dice)).sum(1)
        self.roll[idx] = dice
        self.last_roll[idx] = dice
        dest = self._destinations(idx)
        count = dest.sum(1)
        has = count > 0
        self.move_dest[idx[has]] = dest[has]
        self.n_move[idx[has]] = count[has]
        self.phase[idx[has]] = A.MOVE
        self._after_move(idx[~has], end_turn)

    def _destinations(self, idx: np.ndarray) -> np.ndarray:
        cur = self.current[idx].astype(np.int64)
        start = self.pos[idx, cur].astype(np.int64)
        others = self.pos[idx].astype(np.int64)
        others[np.arange(len(idx)), cur] = -1  # the mover does not block itself
        return destinations(self.moves, start, self.roll[idx].astype(np.int64), others)

    def _after_move(self, idx: np.ndarray, end_turn: list) -> None:
        """After a move onto a square or a forfeited move: accuse or end (R-A1, R-M8)."""
        if len(idx) == 0:
            return
        can_accuse = self._accuse_set_for(idx) != NO_TRIPLES
        self.phase[idx[can_accuse]] = A.POST
        end_turn.append(idx[~can_accuse])

    def _append_history(self, idx: np.ndarray, kind: int, player: np.ndarray, triple: np.ndarray) -> np.ndarray:
        h = self.hist_len[idx].astype(np.int64)
        flat = idx * self.H + h  # flat record index: one gather/scatter instead of a 2-D one
        self.hist_kind.reshape(-1)[flat] = kind
        self.hist_player.reshape(-1)[flat] = player
        self.hist_triple.reshape(-1, 3)[flat] = triple
        self.hist_len[idx] = h + 1
        return h

    def _suggest(self, idx: np.ndarray, triple_id: np.ndarray, end_turn: list) -> None:
        s, w, r = triple_id // (NUM_WEAPONS * NUM_ROOMS), (triple_id // NUM_ROOMS) % NUM_WEAPONS, triple_id % NUM_ROOMS
        cur = self.current[idx].astype(np.int64)
        if self.has_board:
            # R-G3: the named suspect and weapon move into the room.
            dest = (ROOM_LOC0 + r).astype(np.int16)
            moved = self.pos[idx, s] != dest
            self.pos[idx, s] = dest
            drag = moved & (s < self.P) & (s != cur)
            self.dragged[idx[drag], s[drag]] = True  # R-T3 opens for their next turn
            self.weapon_room[idx, w] = r
        h = self._append_history(idx, SUGGESTION, cur, np.stack([s, w, r], 1))
        self.hist_response[idx, h] = NOT_ASKED
        for card in (s, WEAPON_CARD0 + w, ROOM_CARD0 + r):
            cnt = self.named_count[idx, cur, card]
            self.named_count[idx, cur, card] = np.minimum(cnt, 126) + 1
        self._ask_refuters(idx, cur, end_turn)

    def _ask_refuters(self, idx: np.ndarray, after: np.ndarray, end_turn: list) -> None:
        """R-G6: ask the seats after ``after`` in turn order until one holds a named card."""
        P = self.P
        h = self.hist_len[idx].astype(np.int64) - 1
        sugg = self.hist_player[idx, h].astype(np.int64)
        trip = self.hist_triple[idx, h].astype(np.int64)
        named = np.stack([trip[:, 0], WEAPON_CARD0 + trip[:, 1], ROOM_CARD0 + trip[:, 2]], 1)
        holder = self.owner[idx[:, None], named].astype(np.int64)  # (n, 3) seat or -1
        start = (after - sugg) % P  # distance from the suggester of the last seat asked
        rel = np.where(holder >= 0, (holder - sugg[:, None]) % P, P)  # suggester's own cards: 0
        rel = np.where(rel > start[:, None], rel, P)
        first = rel.min(1)  # nearest holder after the last seat asked; P = nobody
        # Everyone strictly between is asked and cannot refute (public, R-G7).
        k = np.arange(1, P)
        passed = (k[None, :] > start[:, None]) & (k[None, :] < first[:, None])  # (n, P-1) by distance
        rows, cols = np.nonzero(passed)
        seat = (sugg[rows] + cols + 1) % P
        self.hist_response[idx[rows], h[rows], seat] = PASSED
        for j in range(3):
            self.passed_on[idx[rows], seat, named[rows, j]] = True
        found = first < P
        self.refuter[idx[found]] = (sugg[found] + first[found]) % P
        self.phase[idx[found]] = A.REFUTE
        self._suggestion_resolved(idx[~found], end_turn)

    def _show(self, idx: np.ndarray, card: np.ndarray, end_turn: list) -> None:
        h = self.hist_len[idx].astype(np.int64) - 1
        ref = self.refuter[idx].astype(np.int64)
        self.hist_response[idx, h, ref] = card
        self.seen[idx, self.hist_player[idx, h], ref, card] = True
        trip = self.hist_triple[idx, h].astype(np.int64)
        for named in (trip[:, 0], WEAPON_CARD0 + trip[:, 1], ROOM_CARD0 + trip[:, 2]):
            cnt = self.refuted_on[idx, ref, named]
            self.refuted_on[idx, ref, named] = np.minimum(cnt, 126) + 1
        self.refuter[idx] = -1
        if self.config.refutation == "all":  # R-G6 variant: keep asking round the table
            self._ask_refuters(idx, ref, end_turn)
        else:
            self._suggestion_resolved(idx, end_turn)

    def _suggestion_resolved(self, idx: np.ndarray, end_turn: list) -> None:
        if len(idx) == 0:
            return
        self.refuter[idx] = -1
        if self.config.accuse_after_suggestion:  # R-G8
            self.phase[idx] = A.POST
        else:
            end_turn.append(idx)

    def _accuse(self, idx: np.ndarray, triple_id: np.ndarray, end_turn: list) -> None:
        s, w, r = triple_id // (NUM_WEAPONS * NUM_ROOMS), (triple_id // NUM_ROOMS) % NUM_WEAPONS, triple_id % NUM_ROOMS
        cur = self.current[idx].astype(np.int64)
        named = np.stack([s, WEAPON_CARD0 + w, ROOM_CARD0 + r], 1)
        env = self.envelope[idx]
        correct = (named[:, 0] == env[:, 0]) & (named[:, 1] == env[:, 1]) & (named[:, 2] == env[:, 2])  # R-A2
        h = self._append_history(idx, ACCUSATION, cur, np.stack([s, w, r], 1))
        self.hist_correct[idx, h] = correct
        self.accused_at[idx, cur] = h
        self._finish(idx[correct], cur[correct])  # R-A3, R-E1
        wrong, wcur = idx[~correct], cur[~correct]
        self.eliminated[wrong, wcur] = True  # R-A4
        if self.has_board:
            loc = self.pos[wrong, wcur].astype(np.int64)
            room = np.where(loc < NUM_SQUARES, self.front_room[np.minimum(loc, NUM_LOCATIONS - 1)], -1)
            at_door = room >= 0
            self.pos[wrong[at_door], wcur[at_door]] = ROOM_LOC0 + room[at_door]  # R-A5
        alive = self.P - np.count_nonzero(self.eliminated[wrong], axis=1)
        nobody = alive == 0
        self._finish(wrong[nobody], np.full(int(nobody.sum()), -1))  # R-E4
        if self.config.last_standing == "wins":  # R-E2
            last = alive == 1
            self._finish(wrong[last], np.argmax(~self.eliminated[wrong[last]], axis=1))
            nobody |= last
        end_turn.append(wrong[~nobody])  # R-A4: every accusation ends the turn

    def _finish(self, idx: np.ndarray, winner: np.ndarray) -> None:
        if len(idx) == 0:
            return
        self.winner[idx] = winner
        self.terminated[idx] = True
        self.phase[idx] = A.OVER
        self.refuter[idx] = -1
        self.turn_count[idx] += 1
        won = winner >= 0
        self.rewards[idx[won]] = -1.0  # R-E1: everyone else loses
        self.rewards[idx[won], winner[won]] = 1.0
        self.rewards[idx[~won]] = -1.0  # R-E4

    def _end_turn(self, idx: np.ndarray) -> None:
        if len(idx) == 0:
            return
        cur = self.current[idx].astype(np.int64)
        self.dragged[idx, cur] = False  # R-T3 lasts until the end of one's next turn
        self.turn_count[idx] += 1
        self.roll[idx] = 0
        cut = self.turn_count[idx] >= self.config.max_turns  # R-E3
        self.truncated[idx[cut]] = True
        self.phase[idx[cut]] = A.OVER
        go, cur = idx[~cut], cur[~cut]
        # Clockwise to the next seat still in the game (R-A4).
        order = (cur[:, None] + np.arange(1, self.P + 1)) % self.P
        nxt = order[np.arange(len(go)), np.argmax(~self.eliminated[go[:, None], order], axis=1)]
        self.current[go] = nxt
        self.phase[go] = A.START if self.has_board else A.SUGGEST

    def observe(
        self, player: np.ndarray | int | None = None, idx: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """(n, D) int8 observations; see :mod:`cluedo_env.observation` and docs/observation.md.

        ``player``: a seat (int or (n,) array); default each game's actor. ``idx``: games
        (default all). ``out``: an (n, D) int8 array to fill (saves allocating 10 MB a step
        at batch 4096).
        """
        if self._observer is None:
            from cluedo_env.observation import Observer

            self._observer = Observer(self)
        return self._observer.observe(player, idx, out)

    @property
    def observation_size(self) -> int:
        from cluedo_env.observation import size

        return size(self.config)

    # ---------------------------------------------------------- legal blocks
    def _accuse_set_for(self, idx: np.ndarray) -> np.ndarray:
        """Triple-set id of the accusations open to the current player (R-A1)."""
        if not self.config.accusation_in_room:
            return np.full(len(idx), ALL_TRIPLES, np.int8)
        loc = self.pos[idx, self.current[idx]].astype(np.int64)
        return np.where(loc >= ROOM_LOC0, loc - ROOM_LOC0, NO_TRIPLES).astype(np.int8)

    def _update_legal(self, idx: np.ndarray) -> None:
        """Recompute the legal-action blocks of games ``idx`` from their state."""
        self._mask_ready = False
        cfg = self.config
        ph = self.phase[idx]
        self.special[idx] = False
        self.suggest_set[idx] = NO_TRIPLES
        self.accuse_set[idx] = NO_TRIPLES
        self.show[idx] = False
        self.n_special[idx] = 0
        self.n_show[idx] = 0

        g = idx[ph == A.START]
        if len(g):
            cur = self.current[g].astype(np.int64)
            loc = self.pos[g, cur].astype(np.int64)
            ex = self.exits[loc]  # (n, 4) first steps
            others = self.pos[g].astype(np.int64)
            others[np.arange(len(g)), cur] = -1
            taken = ex == others[:, :1]
            for j in range(1, NUM_SUSPECTS):
                taken |= ex == others[:, j : j + 1]
            free = (ex >= 0) & ~taken
            can_roll = free.any(1) | (self.front_room[loc] >= 0) & (loc < NUM_SQUARES)  # R-T1, R-M6
            passage = self.passage[loc] >= 0  # R-T2
            stay = self.dragged[g, cur]  # R-T3
            self.special[g, 0] = can_roll
            self.special[g, 1] = passage
            self.special[g, 2] = stay
            self.special[g, 3] = ~(can_roll | passage | stay)  # R-T5
            self.n_special[g] = np.maximum(can_roll.astype(np.int16) + passage + stay, 1)
            self.accuse_set[g] = self._accuse_set_for(g)  # R-T4
        g = idx[ph == A.SUGGEST]
        if len(g):
            if self.has_board:
                self.suggest_set[g] = self.pos[g, self.current[g]] - ROOM_LOC0  # R-G1
            else:
                self.suggest_set[g] = ALL_TRIPLES  # R-C2
            if self.has_board and cfg.suggestion_on_entry == "optional":  # R-G2 variant
                self.special[g, 3] = True
                self.n_special[g] = 1
                self.accuse_set[g] = self._accuse_set_for(g)
            elif not cfg.accuse_after_suggestion:  # R-G8 variant
                self.accuse_set[g] = self._accuse_set_for(g)
        g = idx[ph == A.REFUTE]
        if len(g):
            h = self.hist_len[g].astype(np.int64) - 1
            trip = self.hist_triple[g, h].astype(np.int64)
            ref = self.refuter[g]
            n = np.zeros(len(g), np.int16)
            for card in (trip[:, 0], WEAPON_CARD0 + trip[:, 1], ROOM_CARD0 + trip[:, 2]):
                held = self.owner[g, card] == ref  # R-G6: only a named card held
                self.show[g, card] = held
                n += held
            self.n_show[g] = n
        g = idx[ph == A.POST]
        if len(g):
            self.special[g, 3] = True  # R-G8, R-M8
            self.n_special[g] = 1
            self.accuse_set[g] = self._accuse_set_for(g)

    def rebuild_summaries(self, idx: np.ndarray) -> None:
        """Recompute the history summaries (``seen`` ... ``accused_at``) from the history."""
        for i in np.asarray(idx, np.int64):
            self.seen[i] = False
            self.passed_on[i] = False
            self.refuted_on[i] = 0
            self.named_count[i] = 0
            self.accused_at[i] = -1
            for h in range(int(self.hist_len[i])):
                if self.hist_kind[i, h] == ACCUSATION:
                    self.accused_at[i, self.hist_player[i, h]] = h
                    continue
                s, w, r = (int(x) for x in self.hist_triple[i, h])
                named = [s, WEAPON_CARD0 + w, ROOM_CARD0 + r]
                p = int(self.hist_player[i, h])
                self.named_count[i, p, named] = np.minimum(self.named_count[i, p, named], 126) + 1
                for seat, resp in enumerate(self.hist_response[i, h]):
                    if resp == PASSED:
                        self.passed_on[i, seat, named] = True
                    elif resp >= 0:
                        self.seen[i, p, seat, resp] = True
                        self.refuted_on[i, seat, named] = np.minimum(self.refuted_on[i, seat, named], 126) + 1

    # ============================================================= snapshots
    def export_game(self, i: int) -> dict[str, Any]:
        """Game ``i`` as a reference-engine snapshot dict (docs/snapshot.md)."""
        from cluedo_env.reference import Accusation, Game, Suggestion

        g = Game.__new__(Game)
        g.config, g.board, g.num_players = self.config, self.board, self.P
        g.positions = [int(x) for x in self.pos[i]] if self.has_board else []
        g.weapons = [int(x) for x in self.weapon_room[i]] if self.has_board else []
        g.hands = [sorted(int(c) for c in np.flatnonzero(self.owner[i] == p)) for p in range(self.P)]
        g.envelope = tuple(int(c) for c in self.envelope[i])
        g.phase, g.current, g.refuter = int(self.phase[i]), int(self.current[i]), int(self.refuter[i])
        g.roll, g.turn_count = int(self.roll[i]), int(self.turn_count[i])
        g.eliminated = [bool(x) for x in self.eliminated[i]]
        g.dragged = [bool(x) for x in self.dragged[i]]
        g.winner = int(self.winner[i])
        g.terminated, g.truncated = bool(self.terminated[i]), bool(self.truncated[i])
        g.rewards = [float(x) for x in self.rewards[i]]
        g.history = []
        for h in range(int(self.hist_len[i])):
            s, w, r = (int(x) for x in self.hist_triple[i, h])
            p = int(self.hist_player[i, h])
            if self.hist_kind[i, h] == ACCUSATION:
                g.history.append(Accusation(p, s, w, r, bool(self.hist_correct[i, h])))
                continue
            rec = Suggestion(p, s, w, r)
            for k in range(1, self.P):  # in the order asked (R-G6)
                seat = (p + k) % self.P
                resp = int(self.hist_response[i, h, seat])
                if resp == PASSED:
                    rec.passed.append(seat)
                elif resp >= 0:
                    rec.refuted_by.append(seat)
                    rec.shown.append(resp)
            g.history.append(rec)
        return g.to_dict()

    def import_game(self, i: int, snapshot: dict[str, Any]) -> None:
        """Put the game a snapshot describes into slot ``i`` (its rules must be this engine's)."""
        from cluedo_env.reference import Accusation, Game

        game = Game.from_dict(snapshot)
        if game.config != self.config:
            raise ValueError(f"snapshot rules {game.config} differ from this engine's {self.config}")
        if len(game.history) > self.H:
            raise ValueError(f"snapshot history has {len(game.history)} records; this engine holds {self.H}")
        if self.has_board:
            self.pos[i] = game.positions
            self.weapon_room[i] = game.weapons
        self.owner[i] = -1
        for p, hand in enumerate(game.hands):
            self.owner[i, hand] = p
            self.hand_size[i, p] = len(hand)
        self.envelope[i] = game.envelope
        self.phase[i], self.current[i], self.refuter[i] = game.phase, game.current, game.refuter
        self.roll[i], self.turn_count[i] = game.roll, game.turn_count
        self.eliminated[i], self.dragged[i] = game.eliminated, game.dragged
        self.winner[i], self.terminated[i], self.truncated[i] = game.winner, game.terminated, game.truncated
        self.rewards[i] = game.rewards
        self.hist_len[i] = len(game.history)
        self.hist_kind[i] = 0
        self.hist_response[i] = NOT_ASKED
        for h, rec in enumerate(game.history):
            self.hist_triple[i, h] = (rec.suspect, rec.weapon, rec.room)
            if isinstance(rec, Accusation):
                self.hist_kind[i, h], self.hist_player[i, h], self.hist_correct[i, h] = (
                    ACCUSATION,
                    rec.accuser,
                    rec.correct,
                )
            else:
                self.hist_kind[i, h], self.hist_player[i, h] = SUGGESTION, rec.suggester
                self.hist_response[i, h, rec.passed] = PASSED
                self.hist_response[i, h, rec.refuted_by] = rec.shown
        idx = np.array([i])
        self.rebuild_summaries(idx)
        self.move_dest[i] = False
        if self.phase[i] == A.MOVE:
            self.move_dest[i] = self._destinations(idx)[0]
        self.n_move[i] = self.move_dest[i].sum()
        self._update_legal(idx)


# Action kinds, in the order of the action space's sub-ranges.
_ROLL, _PASSAGE, _STAY, _END, _MOVE, _SUGGEST, _SHOW, _ACCUSE = range(8)
_KIND_STARTS = np.array([A.ROLL, A.PASSAGE, A.STAY, A.END_TURN, A.MOVE0, A.SUGGEST0, A.SHOW0, A.ACCUSE0])
