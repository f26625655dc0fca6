"""The reference engine: one game of Cluedo in plain Python, written to be read.

This is the oracle. Every rule of shared/RULES.md is implemented here once, with its ID
in a comment, and the vectorized engine is tested against it step for step. Speed is not
a goal here; clarity is.

Seats: player ``p`` plays suspect ``p`` (R-S1: the first N suspects in turn order), so a
player index is also a suspect index. Cards are ids from :mod:`cluedo_env.rules.cards`,
locations from :mod:`cluedo_env.rules.board`, actions from :mod:`cluedo_env.rules.actions`.

Typical use::

    game = Game(RulesConfig.from_preset("classic", players=4), seed=7)
    while not game.is_over:
        game.step(random.choice(game.legal_actions()))
    game.rewards   # +1 winner, -1 others; all 0 on truncation
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np

from cluedo_env.engine.history import Accusation, Suggestion
from cluedo_env.engine.snapshot import game_from_dict, game_to_dict
from cluedo_env.rules import actions as A
from cluedo_env.rules.board import Board, load_board
from cluedo_env.rules.cards import (
    NUM_CARDS,
    NUM_ROOMS,
    NUM_SUSPECTS,
    NUM_WEAPONS,
    ROOM_CARD0,
    WEAPON_CARD0,
)
from cluedo_env.rules.config import RulesConfig


def move_destinations(board: Board, start: int, roll: int, occupied: set[int]) -> list[int]:
    """Every location a token at ``start`` may end its move on with ``roll`` pips.

    R-M1 orthogonal steps over walkable squares, one pip per square stepped on.
    R-M2 simple path; no square occupied by a suspect token may be entered.
    R-M3 a move that ends on a square uses exactly ``roll`` pips.
    R-M4 a room is entered through a door from the square in front of it, at no pip cost,
         and entering ends the move: so rooms need *at most* ``roll`` pips, and a token
         that starts on the square in front of a door may enter with any roll.
    R-M5 leaving a room: the first step is onto the square in front of one of its doors
         (one pip), and the room left may not be re-entered in the same move.
    R-M6 a door whose square in front is occupied cannot be used.
    ``occupied`` holds the squares of all the *other* suspect tokens.
    """
    found: set[int] = set()
    origin_room = board.room_of(start)

    def walk(square: int, used: int, visited: set[int]) -> None:
        room = board.front_room.get(square)
        if room is not None and room != origin_room:  # R-M4, R-M5
            found.add(board.room_loc(room))
        if used == roll:  # R-M3
            if square != start:
                found.add(square)
            return
        for nxt in board.neighbors[square]:
            if nxt not in visited and nxt not in occupied:  # R-M2
                visited.add(nxt)
                walk(nxt, used + 1, visited)
                visited.remove(nxt)

    if origin_room >= 0:
        for front in board.room_fronts[origin_room]:
            if front not in occupied:  # R-M6
                walk(front, 1, {front})  # R-M5: stepping out costs one pip
    else:
        walk(start, 0, {start})
    return sorted(found)


def can_leave(board: Board, loc: int, occupied: set[int]) -> bool:
    """R-T1, R-M6: the token has a first step (an unblocked door, a free neighbour, or a door in front)."""
    room = board.room_of(loc)
    if room >= 0:
        return any(f not in occupied for f in board.room_fronts[room])
    return loc in board.front_room or any(n not in occupied for n in board.neighbors[loc])


_ACCUSE_ANY = list(range(A.ACCUSE0, A.ACCUSE0 + A.NUM_TRIPLES))
_ACCUSE_IN_ROOM = [
    [A.ACCUSE0 + A.triple_index(s, w, room) for s in range(NUM_SUSPECTS) for w in range(NUM_WEAPONS)]
    for room in range(NUM_ROOMS)
]


class Game:
    """One game of Cluedo. Mutated in place by :meth:`step`."""

    def __init__(self, config: RulesConfig | None = None, seed: int | None = None) -> None:
        self.config = config or RulesConfig()
        self.board = load_board()
        self.rng = np.random.default_rng(seed)
        self.num_players = self.config.players
        P = self.num_players
        # --- state (everything a snapshot holds) -----------------------------
        self.pos: list[int] = []  # suspect -> location; empty without a board
        self.weapon_room: list[int] = []  # weapon -> room index; empty without a board
        self.hands: list[list[int]] = [[] for _ in range(P)]  # sorted card ids
        self.envelope: tuple[int, int, int] = (0, WEAPON_CARD0, ROOM_CARD0)  # card ids
        self.phase = A.START
        self.current = 0  # whose turn it is
        self.refuter = -1  # who must show a card, in phase REFUTE
        self.roll = 0  # this turn's roll, 0 before rolling (public, R-D1)
        self.turn_count = 0  # completed turns, for truncation (R-E3)
        self.eliminated = [False] * P
        self.dragged = [False] * P  # R-T3: moved into a room by another's suggestion since own last turn
        self.history: list[Suggestion | Accusation] = []
        self.winner = -1
        self.terminated = False
        self.truncated = False
        self.rewards = [0.0] * P  # rewards of the last step
        self._moves_cache: tuple[Any, list[int]] = (None, [])
        self._setup()

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        rng = self.rng
        # R-S4: one card of each kind, shuffled separately, into the envelope.
        suspect = int(rng.integers(NUM_SUSPECTS))
        weapon = int(rng.integers(NUM_WEAPONS))
        room = int(rng.integers(NUM_ROOMS))
        envelope = (suspect, WEAPON_CARD0 + weapon, ROOM_CARD0 + room)
        # R-S5: the other 18 cards shuffled together.
        rest = np.array([c for c in range(NUM_CARDS) if c not in envelope])
        deck = [int(c) for c in rest[rng.permutation(len(rest))]]
        # R-S3: six weapons in six different random rooms.
        weapon_room = [int(r) for r in rng.permutation(NUM_ROOMS)[:NUM_WEAPONS]] if self.config.has_board else []
        self.deal(envelope, deck, weapon_room)

    def deal(self, envelope: tuple[int, int, int], deck: list[int], weapon_room: list[int]) -> None:
        """Set up the game from given chance outcomes instead of the RNG's draws (R-S2..R-S5).

        The hook for an explicit chance model (OpenSpiel's deal nodes) and for replaying another
        engine's deal: ``envelope`` the (suspect, weapon, room) card ids, ``deck`` the other 18 cards
        in dealing order, ``weapon_room`` the room index of each weapon (six different rooms; empty
        without a board). Only a game no one has acted in may be dealt.
        """
        if self.history or self.turn_count or self.roll or self.phase not in (A.START, A.SUGGEST):
            raise ValueError("deal() sets up a new game: this game has already been played")
        ok_envelope = (
            len(envelope) == 3
            and 0 <= envelope[0] < WEAPON_CARD0 <= envelope[1] < ROOM_CARD0 <= envelope[2] < NUM_CARDS
        )
        if not ok_envelope:
            raise ValueError(f"envelope must be (suspect, weapon, room) card ids, got {envelope!r}")
        if sorted(deck) != [c for c in range(NUM_CARDS) if c not in envelope]:
            raise ValueError(f"deck must hold each of the 18 cards outside the envelope once, got {deck!r}")
        rooms = list(weapon_room)
        distinct_rooms = len(set(rooms)) == NUM_WEAPONS and set(rooms) <= set(range(NUM_ROOMS))
        if self.config.has_board != bool(rooms) or (rooms and (len(rooms) != NUM_WEAPONS or not distinct_rooms)):
            raise ValueError(
                f"weapon_room must be {NUM_WEAPONS} different rooms 0..{NUM_ROOMS - 1} on the board and empty "
                f"without one, got {weapon_room!r}"
            )
        self.envelope = (int(envelope[0]), int(envelope[1]), int(envelope[2]))
        # R-S5: dealt one at a time clockwise, the first card to the first player.
        self.hands = [[] for _ in range(self.num_players)]
        for i, card in enumerate(deck):
            self.hands[i % self.num_players].append(int(card))
        for hand in self.hands:
            hand.sort()  # R-S6: each player knows their hand; order carries no information
        if self.config.has_board:
            self.pos = list(self.board.starts)  # R-S2: all six tokens on their start squares, played or not
            self.weapon_room = [int(r) for r in rooms]  # R-S3
            self.phase = A.START  # R-S1: Scarlet (seat 0) moves first
        else:
            self.phase = A.SUGGEST  # R-C2: a card-only turn starts with the suggestion

    def copy(self) -> Game:
        """An independent copy that shares only what never changes (config, board, hands, RNG).

        Search (OpenSpiel's MCTS and ISMCTS clone a state per simulation) needs a copy that
        costs the size of the game's mutable state, not a deep copy of the board. Only the
        last history entry can still change (its refutation), so it alone is copied.
        """
        new = Game.__new__(Game)
        new.__dict__.update(self.__dict__)
        new.pos, new.weapon_room = list(self.pos), list(self.weapon_room)
        new.eliminated, new.dragged, new.rewards = list(self.eliminated), list(self.dragged), list(self.rewards)
        new.history = list(self.history)
        last = new.history[-1] if new.history else None
        if isinstance(last, Suggestion):
            new.history[-1] = Suggestion(
                last.suggester, last.suspect, last.weapon, last.room, list(last.passed), list(last.refuted_by),
                list(last.shown),
            )  # fmt: skip
        return new

    # ------------------------------------------------------------- queries
    @property
    def is_over(self) -> bool:
        return self.phase == A.OVER

    @property
    def actor(self) -> int:
        """The one player who acts now (the refuter during a refutation); -1 when over."""
        if self.phase == A.OVER:
            return -1
        return self.refuter if self.phase == A.REFUTE else self.current

    def occupied(self, exclude: int) -> set[int]:
        """Squares occupied by suspect tokens other than ``exclude`` (all six block, R-M2)."""
        return {loc for s, loc in enumerate(self.pos) if s != exclude and not self.board.is_room(loc)}

    def current_room(self) -> int:
        """Room index the current player's token is in, -1 on a square or without a board."""
        if not self.config.has_board:
            return -1
        return self.board.room_of(self.pos[self.current])

    def destinations(self) -> list[int]:
        """Locations the current player may move to with this turn's roll."""
        p = self.current
        key = (tuple(self.pos), self.roll, p)
        if self._moves_cache[0] != key:  # the search is the slow part of this engine
            self._moves_cache = (key, move_destinations(self.board, self.pos[p], self.roll, self.occupied(p)))
        return self._moves_cache[1]

    def _accusations(self) -> list[int]:
        """Accusation actions open to the current player (R-A1, R-A6; eliminated players never act).

        The lists are shared constants: callers must not modify them.
        """
        if self.config.accusation_in_room:  # R-A1 variant: name the room one is in
            room = self.current_room()
            return _ACCUSE_IN_ROOM[room] if room >= 0 else []
        return _ACCUSE_ANY

    def legal_actions(self) -> list[int]:
        """Sorted legal actions of :attr:`actor`; empty only when the game is over."""
        p, board, cfg = self.current, self.board, self.config
        if self.phase == A.OVER:
            return []
        if self.phase == A.START:
            loc = self.pos[p]
            acts = []
            if can_leave(board, loc, self.occupied(p)):  # R-T1
                acts.append(A.ROLL)
            if board.passage_target(loc) is not None:  # R-T2
                acts.append(A.PASSAGE)
            if self.dragged[p]:  # R-T3
                acts.append(A.STAY)
            if not acts:  # R-T5: only when locked in
                acts.append(A.END_TURN)
            return sorted(acts + self._accusations())  # R-T4
        if self.phase == A.MOVE:
            return [A.MOVE0 + loc for loc in self.destinations()]
        if self.phase == A.SUGGEST:
            if not cfg.has_board:  # R-C2: any triple
                acts = list(range(A.SUGGEST0, A.SUGGEST0 + A.NUM_TRIPLES))
            else:  # R-G1: the room the token is in
                room = self.current_room()
                acts = [
                    A.SUGGEST0 + A.triple_index(s, w, room) for s in range(NUM_SUSPECTS) for w in range(NUM_WEAPONS)
                ]
            if cfg.has_board and cfg.suggestion_on_entry == "optional":  # R-G2 variant: may decline, may accuse (R-A1)
                acts = [A.END_TURN] + acts + self._accusations()
            elif not cfg.accuse_after_suggestion:  # R-G8 variant: accuse in place of the suggestion
                acts = acts + self._accusations()
            return acts
        if self.phase == A.REFUTE:
            return [A.SHOW0 + c for c in self._matching_cards(self.refuter)]
        if self.phase == A.POST:  # R-G8, R-M8, R-A1
            return [A.END_TURN] + self._accusations()
        raise AssertionError(f"unknown phase {self.phase}")

    def legal_action_mask(self) -> np.ndarray:
        """(870,) bool mask of :meth:`legal_actions` (the engine's and PGX's name)."""
        mask = np.zeros(A.NUM_ACTIONS, dtype=bool)
        mask[self.legal_actions()] = True
        return mask

    def _matching_cards(self, player: int) -> list[int]:
        last = self.history[-1]
        assert isinstance(last, Suggestion)
        named = last.cards
        return [c for c in self.hands[player] if c in named]

    # ---------------------------------------------------------------- step
    def step(self, action: int, roll: int | None = None) -> None:
        """Apply ``action`` for :attr:`actor`.

        ``roll`` forces the dice total of a ROLL (for tests and for replaying another
        engine's chance outcomes); otherwise the dice come from the game's RNG (R-D1).
        Raises IllegalActionError, leaving the state unchanged, for an illegal action.
        """
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            raise A.IllegalActionError(f"an action is an integer 0..{A.NUM_ACTIONS - 1}, got {action!r}")
        action = int(action)
        legal = self.legal_actions()  # sorted
        i = bisect_left(legal, action)
        if i == len(legal) or legal[i] != action:
            phase = A.PHASE_NAMES[self.phase]
            raise A.IllegalActionError(
                f"illegal action {A.describe(action)} (id {action}) for player {self.actor} in phase "
                f"'{phase}' ({A.PHASE_HELP[self.phase]}); {len(legal)} legal actions, e.g. "
                f"{', '.join(A.describe(a) for a in legal[:5])}"
            )
        if roll is not None and action == A.ROLL and not 1 * self.config.dice <= roll <= self.config.max_roll:
            raise ValueError(f"forced roll {roll} impossible with {self.config.dice} dice")
        self.rewards = [0.0] * self.num_players
        p = self.current
        if action == A.ROLL:  # R-T1, R-D1
            self.roll = int(roll) if roll is not None else int(self.rng.integers(1, 7, size=self.config.dice).sum())
            if self.destinations():
                self.phase = A.MOVE
            else:  # R-M8: the move is forfeited
                self._after_move()
        elif action == A.PASSAGE:  # R-T2: counts as entering the opposite corner room
            self.pos[p] = self.board.passage_target(self.pos[p])
            self.phase = A.SUGGEST
        elif action == A.STAY:  # R-T3
            self.phase = A.SUGGEST
        elif A.MOVE0 <= action < A.SUGGEST0:
            dest = action - A.MOVE0
            self.pos[p] = dest
            if self.board.is_room(dest):  # R-G2: entering obliges (or allows) a suggestion
                self.phase = A.SUGGEST
            else:
                self._after_move()
        elif A.SUGGEST0 <= action < A.SHOW0:
            self._suggest(*A.triple_of(action - A.SUGGEST0))
        elif A.SHOW0 <= action < A.ACCUSE0:
            self._show(action - A.SHOW0)
        elif action >= A.ACCUSE0:
            self._accuse(*A.triple_of(action - A.ACCUSE0))
        elif action == A.END_TURN:  # R-T5, R-G8, R-M8, declined optional suggestion (R-G2)
            self._end_turn()

    def _after_move(self) -> None:
        """After a move to a square or a forfeited move (R-M8): accuse or end the turn (R-A1)."""
        if self._accusations():
            self.phase = A.POST
        else:  # nothing left to decide
            self._end_turn()

    def _suggest(self, suspect: int, weapon: int, room: int) -> None:
        p = self.current
        if self.config.has_board:
            # R-G3: the named suspect token and weapon are moved into the room.
            dest = self.board.room_loc(room)
            if self.pos[suspect] != dest:
                self.pos[suspect] = dest
                if suspect < self.num_players and suspect != p:
                    self.dragged[suspect] = True  # R-T3 opens for their next turn
            self.weapon_room[weapon] = room
        self.history.append(Suggestion(p, suspect, weapon, room))
        self._ask_refuters(start_after=p)

    def _ask_refuters(self, start_after: int) -> None:
        """R-G6: ask the players after ``start_after`` in turn order, up to the suggester."""
        record = self.history[-1]
        assert isinstance(record, Suggestion)
        P = self.num_players
        seat = (start_after + 1) % P
        while seat != record.suggester:
            if self._matching_cards(seat):
                self.refuter = seat
                self.phase = A.REFUTE  # the refuter chooses the card (R-G6)
                return
            record.passed.append(seat)
            seat = (seat + 1) % P
        self._suggestion_resolved()

    def _show(self, card: int) -> None:
        record = self.history[-1]
        assert isinstance(record, Suggestion)
        record.refuted_by.append(self.refuter)
        record.shown.append(card)
        refuter, self.refuter = self.refuter, -1
        if self.config.refutation == "all":  # R-G6 variant: every other player is asked
            self._ask_refuters(start_after=refuter)
        else:
            self._suggestion_resolved()

    def _suggestion_resolved(self) -> None:
        self.refuter = -1
        if self.config.accuse_after_suggestion:  # R-G8
            self.phase = A.POST
        else:  # R-G8 variant: the turn ends with the suggestion
            self._end_turn()

    def _accuse(self, suspect: int, weapon: int, room: int) -> None:
        p = self.current
        correct = (suspect, WEAPON_CARD0 + weapon, ROOM_CARD0 + room) == self.envelope  # R-A2
        self.history.append(Accusation(p, suspect, weapon, room, correct))
        if correct:  # R-A3, R-E1
            self._finish(winner=p)
            return
        self.eliminated[p] = True  # R-A4
        if self.config.has_board:
            room_in_front = self.board.front_room.get(self.pos[p])
            if room_in_front is not None:  # R-A5: do not block the door
                self.pos[p] = self.board.room_loc(room_in_front)
        alive = [q for q in range(self.num_players) if not self.eliminated[q]]
        if not alive:  # R-E4
            self._finish(winner=-1)
        elif len(alive) == 1 and self.config.last_standing == "wins":  # R-E2
            self._finish(winner=alive[0])
        else:
            self._end_turn()  # R-A4: every accusation ends the accuser's turn

    def _finish(self, winner: int) -> None:
        self.winner = winner
        self.terminated = True
        self.turn_count += 1  # the turn that ended the game counts as played
        self.phase = A.OVER
        self.refuter = -1
        if winner >= 0:  # R-E1, R-E2
            self.rewards = [1.0 if q == winner else -1.0 for q in range(self.num_players)]
        else:  # R-E4
            self.rewards = [-1.0] * self.num_players

    def _end_turn(self) -> None:
        p = self.current
        self.dragged[p] = False  # R-T3 lasts until the end of the player's next turn
        self.turn_count += 1
        self.roll = 0
        if self.turn_count >= self.config.max_turns:  # R-E3: truncation, no winner, reward 0
            self.truncated = True
            self.phase = A.OVER
            return
        # Play passes clockwise; eliminated players are skipped (R-A4). Someone is alive here.
        nxt = (p + 1) % self.num_players
        while self.eliminated[nxt]:
            nxt = (nxt + 1) % self.num_players
        self.current = nxt
        self.phase = A.START if self.config.has_board else A.SUGGEST

    # ------------------------------------------------------------ snapshots
    def to_dict(self) -> dict[str, Any]:
        """The whole game state as a JSON-serialisable dict (schema: docs/snapshot.md)."""
        return game_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], seed: int | None = None) -> Game:
        """A game in the state ``data`` describes; chance from now on comes from ``seed``."""
        return game_from_dict(cls, data, seed)
