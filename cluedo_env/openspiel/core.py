"""One Cluedo game as OpenSpiel sees it: the reference engine plus explicit chance nodes.

OpenSpiel's Python games keep their state in the ``State`` object's attributes, clone a state
by deep-copying those attributes and serialize one by pickling them. :class:`Core` is the one
attribute: it copies cheaply (:meth:`cluedo_env.engine.reference.Game.copy`, not a deep copy
of the board) and pickles as plain data (the rules and the action list), rebuilt by replay.

The rules stay in the reference engine. What this module adds is the chance model of RULES.md
as OpenSpiel chance nodes, in this order:

* R-S4: the envelope's suspect, weapon and room (outcome = card id, uniform over the category);
* R-S5: the other 18 cards one at a time (outcome = card id, uniform over the cards left),
  card ``k`` going to seat ``k % players``, as the engine deals them;
* R-S3 (board only): each weapon's room in turn (outcome = room index, uniform over the rooms
  no earlier weapon took);
* R-D1: after a player's ROLL, the dice total (outcome = the total, with its true probability
  for one or two six-sided dice), applied with ``Game.step(ROLL, roll=total)``.

Once the deal is complete the engine is set up with ``Game.deal`` from these outcomes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cluedo_env.engine.history import Suggestion
from cluedo_env.engine.reference import Game
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, NUM_ROOMS, NUM_WEAPONS, ROOM_CARD0, WEAPON_CARD0
from cluedo_env.rules.config import RulesConfig
from cluedo_env.rules.dice import roll_distribution

CHANCE = -1  # the actor of a chance event in the event log (OpenSpiel's kChancePlayerId)
ENVELOPE_STEPS = 3  # R-S4: suspect, weapon, room
CARD_STEPS = ENVELOPE_STEPS + NUM_CARDS - 3  # R-S5: then the 18 cards
BOARD_STEPS = CARD_STEPS + NUM_WEAPONS  # R-S3: then the six weapons' rooms
CATEGORY_RANGES = ((0, WEAPON_CARD0), (WEAPON_CARD0, ROOM_CARD0), (ROOM_CARD0, NUM_CARDS))


@cache
def dice_outcomes(dice: int) -> tuple[tuple[int, float], ...]:
    """(total, probability) of the sum of ``dice`` six-sided dice (R-D1), totals ascending, as OpenSpiel's chance
    outcomes (:func:`cluedo_env.rules.dice.roll_distribution`)."""
    return tuple((t, float(p)) for t, p in enumerate(roll_distribution(dice)) if p > 0)


class Core:
    """The state of one game: the deal so far, then the engine, and the log of events.

    ``log`` holds one tuple per event after the deal, in order: ``(CHANCE, total, ())`` for a roll,
    ``(seat, action, passed)`` for a player's action, where ``passed`` is the seats that could not
    refute as a consequence of it (R-G6: after a SUGGEST, or after a SHOW with ``refutation=all``).
    """

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.deal: list[int] = []  # chance outcomes of the setup, in the order above
        self.game: Game | None = None
        self.pending_roll = False  # a ROLL was chosen; the dice node comes next
        self.log: list[tuple[int, int, tuple[int, ...]]] = []

    # ------------------------------------------------------------ copies
    def __deepcopy__(self, memo: dict) -> Core:
        new = Core.__new__(Core)
        new.config, new.pending_roll = self.config, self.pending_roll
        new.deal, new.log = list(self.deal), list(self.log)
        new.game = self.game.copy() if self.game is not None else None
        return new

    def __getstate__(self) -> dict[str, Any]:
        """Plain data only (the rules and the actions): unpickling replays them through the engine."""
        return {"config": self.config.to_dict(), "actions": self.actions()}

    def __setstate__(self, data: dict[str, Any]) -> None:
        fresh = Core(RulesConfig(**data["config"]))
        for action in data["actions"]:
            fresh.apply(int(action))
        self.__dict__.update(fresh.__dict__)

    def actions(self) -> list[int]:
        """Every action and chance outcome applied so far, in order (OpenSpiel's history)."""
        return self.deal + [action for _, action, _ in self.log]

    # ------------------------------------------------------------ queries
    @property
    def setup_steps(self) -> int:
        return BOARD_STEPS if self.config.has_board else CARD_STEPS

    def is_chance(self) -> bool:
        return self.game is None or self.pending_roll

    def is_terminal(self) -> bool:
        return self.game is not None and self.game.is_over

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The outcomes of the chance node here and their probabilities (see the module docstring)."""
        if self.pending_roll:
            return list(dice_outcomes(self.config.dice))
        k = len(self.deal)
        if k < ENVELOPE_STEPS:  # R-S4
            lo, hi = CATEGORY_RANGES[k]
            return [(c, 1.0 / (hi - lo)) for c in range(lo, hi)]
        if k < CARD_STEPS:  # R-S5
            left = sorted(set(range(NUM_CARDS)) - set(self.deal))
            return [(c, 1.0 / len(left)) for c in left]
        taken = set(self.deal[CARD_STEPS:])  # R-S3: six different rooms
        left = [r for r in range(NUM_ROOMS) if r not in taken]
        return [(r, 1.0 / len(left)) for r in left]

    def legal_actions(self) -> list[int]:
        if self.is_chance():
            return [o for o, _ in self.chance_outcomes()]
        assert self.game is not None
        return self.game.legal_actions()

    def hand_so_far(self, seat: int) -> list[int]:
        """The cards dealt to ``seat`` so far (its whole hand once the deal is complete), sorted."""
        P = self.config.players
        return sorted(self.deal[ENVELOPE_STEPS + i] for i in range(seat, min(len(self.deal), CARD_STEPS) - 3, P))

    def weapon_rooms_so_far(self) -> list[int]:
        return self.deal[CARD_STEPS:] if self.config.has_board else []

    # ------------------------------------------------------------ moves
    def apply(self, action: int) -> None:
        """Apply a chance outcome or the actor's action; an illegal one raises and changes nothing."""
        if self.game is None:
            if action not in [o for o, _ in self.chance_outcomes()]:
                raise A.IllegalActionError(
                    f"chance outcome {action} is not possible at deal step {len(self.deal)} "
                    f"(possible: {[o for o, _ in self.chance_outcomes()]})"
                )
            self.deal.append(action)
            if len(self.deal) == self.setup_steps:
                game = Game(self.config, seed=0)  # its RNG is never used: every chance event comes from here
                game.deal(tuple(self.deal[:ENVELOPE_STEPS]), self.deal[ENVELOPE_STEPS:CARD_STEPS],
                          self.weapon_rooms_so_far())  # fmt: skip
                self.game = game
            return
        game = self.game
        if self.pending_roll:  # R-D1: the dice total of the ROLL just chosen
            if action not in [o for o, _ in dice_outcomes(self.config.dice)]:
                raise A.IllegalActionError(f"dice total {action} is impossible with {self.config.dice} dice")
            game.step(A.ROLL, roll=action)
            self.pending_roll = False
            self.log.append((CHANCE, action, ()))
            return
        seat = game.actor
        if action == A.ROLL:
            if A.ROLL not in game.legal_actions():
                game.step(action)  # raises the engine's IllegalActionError, with its message
            self.pending_roll = True
            self.log.append((seat, action, ()))
            return
        asked = len(game.history)
        before = len(game.history[-1].passed) if asked and isinstance(game.history[-1], Suggestion) else 0
        game.step(action)
        passed: tuple[int, ...] = ()
        record = game.history[-1] if game.history else None
        if isinstance(record, Suggestion):
            if A.SUGGEST0 <= action < A.SHOW0:
                passed = tuple(record.passed)
            elif A.SHOW0 <= action < A.ACCUSE0:
                passed = tuple(record.passed[before:])
        self.log.append((seat, action, passed))

    def returns(self) -> list[float]:
        """+1 the winner, -1 the others (R-E1, R-E2); -1 for all if all are eliminated (R-E4); 0 on truncation."""
        if not self.is_terminal():
            return [0.0] * self.config.players
        assert self.game is not None
        return list(self.game.rewards)
