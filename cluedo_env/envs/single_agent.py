"""Single-agent views of Cluedo over the batched engine: one learner seat, batched opponents.

The learner plays one seat in each of N games of one :class:`~cluedo_env.vector_engine.VectorEngine`;
the other seats are played by opponents. A step of these envs is one decision of the learner:
its action is applied, then the opponents act (batched, seat by seat) until, in every game, the
learner is to act again or the game is over. Three front ends share one core (:class:`LearnerCore`):

* :class:`CluedoSingleAgentEnv`: a plain ``gymnasium.Env`` (one game), registered as
  ``"cluedo_env/Cluedo-v0"`` (``gymnasium.make("cluedo_env/Cluedo-v0", opponents="heuristic")``
  once this module is imported; :func:`register_envs` does it).
* :class:`CluedoVectorEnv`: a ``gymnasium.vector.VectorEnv`` of N games with the
  ``AutoresetMode.SAME_STEP`` mode: the observation of a finished game is already the first one of
  the next game, the last observation of the finished game is in ``infos["final_obs"][i]``
  (``infos["_final_obs"][i]`` True).
* ``cluedo_env.envs.sb3_vec_env.CluedoVecEnv``: a Stable-Baselines3 ``VecEnv`` (SB3's conventions:
  ``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]``), in its own module so
  that this one does not need SB3.

All of them have ``action_masks()`` (what sb3-contrib's MaskablePPO reads).

Spaces: observation ``Box(0, 127, (D,), int8)``, the learner seat's own observation
(``VectorEngine.observe(player=seat)``, seat-relative, D = 2628 with a board). Actions
``Discrete(870)`` (the engine's action space), or with ``macro_moves=True`` ``Discrete(682)``:

=========  ==========================================================================
ids        macro action space
=========  ==========================================================================
0..3       ROLL, PASSAGE, STAY, END_TURN (as in the engine)
4..12      MOVE TOWARD ROOM k (k = 0..8): of the legal destinations of the roll, the one
           with the smallest walking distance to room k (``load_board().distance``);
           room k itself when it is reachable (distance 0). Ties: the lowest location id.
           All nine are legal whenever a move is to be made (several may name one square).
13..681    engine ids 201..869 (SUGGEST, SHOW, ACCUSE), shifted down by 188
=========  ==========================================================================

Belief features (``belief=True``): the observation is followed by the deducer's notebook for the
learner's seat (:mod:`agents.belief`: proved holders of every card, proved envelope cards, solved
flag; ``D + 2 (P + 1) 21 + 4``). They are a function of what the seat has seen, like the rest of
the observation. With ``macro_accuse=True`` (needs ``belief``) the 324 ACCUSE actions become one,
the last id (``num_actions(macro_moves, True)``: 359 with macro moves, 547 without): accuse the
legal triple that the notebook finds most likely (its solution once solved). The policy still
decides when to accuse; :class:`LearnerActions` does the mapping.

The macro mapping is a pure function of the legal MOVE destinations (:func:`macro_mask`,
:func:`macro_to_engine`); no rule is written here.

Rewards: the learner seat's rewards summed over the engine steps of one env step: +1 when it
wins, -1 when it loses (someone else won, or everyone was eliminated), 0 otherwise and on
truncation (R-E3, ``max_turns``). With ``end_on_elimination=True`` (default) the learner's episode
ends (terminated, reward -1) as soon as the learner makes a wrong accusation: an eliminated
player can never win (R-A4), so -1 is its final reward anyway, and the rest of that game (where
the learner would only show cards) is not simulated. A game that ends before the learner's
first decision (possible when it sits after other players) is dropped and replaced, since it
has no step to report: ``skipped_games`` counts them.

Opponents (``opponents``): one spec, or a list of P-1 specs for the seats after the learner in
clockwise order (the k-th sits k+1 seats to the learner's left). A spec is

* a player name for :func:`agents.registry.make_agent` (``"heuristic"``, ``"deducer"``, ``"ckpt:..."``);
  ``"random"`` is sampled straight from the engine's legal blocks (same distribution as
  ``agents.random_agent``, much cheaper);
* an object with the Agent interface (``reset(view, idx)``, ``act(view, idx)``, optionally
  ``observe_step(view)``); with ``seat="random"`` it is deep-copied for each seat it may sit in;
* a frozen policy: a callable ``fn(obs (n, D) int8, mask (n, A) bool) -> (n,) actions`` in this
  env's action space, or a :class:`PolicyOpponent` that says which action space it uses.

The learner seat: ``seat=k`` (fixed) or ``seat="random"`` (drawn anew for every game).

Seeding: ``reset(seed=s)`` seeds the engine (deal, dice), the learner-seat draws and the random
opponents from ``s``; named bots get seeds derived from ``s`` when the env is built (``seed=``).

Speed: the engine steps every game of the batch at once; games whose learner is already waiting
are left out of the opponents' steps (``VectorEngine.step(actions, active=...)``), so one env
step costs one engine step for the learner plus as many as the longest opponent sequence in
the batch.
``scripts/bench_single_agent.py`` measures it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from cluedo_env import actions as A
from cluedo_env.board import ROOM_LOC0, load_board
from cluedo_env.cards import NUM_ROOMS
from cluedo_env.config import RulesConfig, make_config
from cluedo_env.vector_engine import VectorEngine
from cluedo_env.views import PlayerView

ENV_ID = "cluedo_env/Cluedo-v0"

NUM_MOVES = A.SUGGEST0 - A.MOVE0  # 197 destinations in the full space
MACRO0 = A.MOVE0  # first macro move id (4)
MACRO_SHIFT = NUM_MOVES - NUM_ROOMS  # 188: engine id - macro id for SUGGEST..ACCUSE
NUM_MACRO_ACTIONS = A.NUM_ACTIONS - MACRO_SHIFT  # 682

NUM_TRIPLES = A.NUM_ACTIONS - A.ACCUSE0  # 324 accusations (and suggestions)

# (9, 197) walking distance from every location to each room; unreachable stays 255.
_ROOM_DIST = load_board().distance[:, ROOM_LOC0 : ROOM_LOC0 + NUM_ROOMS].T.astype(np.int32)


# ================================================================= macro moves
def num_actions(macro_moves: bool, macro_accuse: bool = False) -> int:
    """Size of the learner's action space for these options."""
    n = NUM_MACRO_ACTIONS if macro_moves else A.NUM_ACTIONS
    return n - NUM_TRIPLES + 1 if macro_accuse else n


def macro_mask(mask: np.ndarray) -> np.ndarray:
    """(n, 870) engine mask -> (n, 682) macro mask: the nine macro moves are legal when any MOVE is."""
    mask = np.asarray(mask, bool)
    out = np.empty((len(mask), NUM_MACRO_ACTIONS), bool)
    out[:, :MACRO0] = mask[:, : A.MOVE0]
    out[:, MACRO0 : MACRO0 + NUM_ROOMS] = mask[:, A.MOVE0 : A.SUGGEST0].any(1)[:, None]
    out[:, MACRO0 + NUM_ROOMS :] = mask[:, A.SUGGEST0 :]
    return out


def macro_to_engine(actions: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Macro actions -> engine actions, given the (n, 870) engine mask of the same games."""
    actions = np.asarray(actions, np.int64)
    out = np.where(actions >= MACRO0 + NUM_ROOMS, actions + MACRO_SHIFT, actions)
    move = np.flatnonzero((actions >= MACRO0) & (actions < MACRO0 + NUM_ROOMS))
    if len(move):
        legal = np.asarray(mask)[move, A.MOVE0 : A.SUGGEST0]
        cost = np.where(legal, _ROOM_DIST[actions[move] - MACRO0], 1 << 20)
        out[move] = A.MOVE0 + cost.argmin(1)  # no legal MOVE: cost all equal -> the engine rejects it
    return out


def engine_to_macro(actions: np.ndarray) -> np.ndarray:
    """Engine actions -> macro ids (a MOVE maps to -1: it has no single macro id)."""
    actions = np.asarray(actions, np.int64)
    out = np.where(actions >= A.SUGGEST0, actions - MACRO_SHIFT, actions)
    return np.where((actions >= A.MOVE0) & (actions < A.SUGGEST0), -1, out)


class LearnerActions:
    """The learner's action space: the engine's, with macro moves and/or the macro accusation.

    ``mask(engine_mask)`` gives the (n, A) legal actions in this space; ``to_engine(actions,
    engine_mask, accuse)`` maps actions back to engine ids. With ``macro_accuse`` the 324
    accusations become one action (the last id), resolved by ``accuse(rows, legal)`` -> (k,)
    triple indices, given the rows that chose it and their (k, 324) legal accusations (the
    learner's belief: :meth:`agents.belief.BeliefTracker.best_accusations`).
    """

    def __init__(self, macro_moves: bool = False, macro_accuse: bool = False) -> None:
        self.macro_moves = bool(macro_moves)
        self.macro_accuse = bool(macro_accuse)
        self.n = num_actions(self.macro_moves, self.macro_accuse)
        self.accuse_id = (A.ACCUSE0 - (MACRO_SHIFT if self.macro_moves else 0)) if self.macro_accuse else -1

    def __repr__(self) -> str:
        return f"LearnerActions(macro_moves={self.macro_moves}, macro_accuse={self.macro_accuse}, n={self.n})"

    def mask(self, engine_mask: np.ndarray) -> np.ndarray:
        """(n, 870) engine mask -> (n, A) bool legal actions in this space (a fresh array)."""
        m = macro_mask(engine_mask) if self.macro_moves else np.array(engine_mask, bool)
        if self.macro_accuse:
            k = self.accuse_id
            m = np.concatenate([m[:, :k], m[:, k:].any(1, keepdims=True)], 1)
        return m

    def to_engine(self, actions: np.ndarray, engine_mask: np.ndarray,
                  accuse: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> np.ndarray:  # fmt: skip
        """Actions of this space -> engine actions (an id outside the space -> -1, which the engine rejects)."""
        actions = np.asarray(actions, np.int64)
        ok = (actions >= 0) & (actions < self.n)
        if self.macro_accuse:
            acc = ok & (actions == self.accuse_id)
            safe = np.where(ok & ~acc, actions, 0)
        else:
            acc = np.zeros(len(actions), bool)
            safe = np.where(ok, actions, 0)
        out = macro_to_engine(safe, engine_mask) if self.macro_moves else safe.copy()
        rows = np.flatnonzero(acc)
        if len(rows):
            if accuse is None:
                raise ValueError("the macro accusation needs an accuse(rows, legal) resolver")
            legal = np.asarray(engine_mask)[rows, A.ACCUSE0 :]
            none = ~legal.any(1)  # not legal now: keep it illegal for the engine to reject
            out[rows] = A.ACCUSE0 + accuse(rows, np.where(none[:, None], True, legal))
            out[rows[none]] = A.ACCUSE0 + NUM_TRIPLES  # past the last accusation: rejected as out of range
        out[~ok] = -1
        return out


# ================================================================= opponents
class PolicyOpponent:
    """A frozen policy as an opponent: ``fn(obs, mask) -> actions`` in the full or the macro space."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], macro_moves: bool = False) -> None:
        self.fn = fn
        self.macro_moves = macro_moves

    def actions(self, obs: np.ndarray, full_mask: np.ndarray) -> np.ndarray:
        if self.macro_moves:
            return macro_to_engine(self.fn(obs, macro_mask(full_mask)), full_mask)
        return np.asarray(self.fn(obs, full_mask), np.int64)


_FAST_RANDOM = "random"


def _is_agent(obj: Any) -> bool:
    return hasattr(obj, "act") and hasattr(obj, "reset")


def _normalise_opponents(opponents: Any, players: int) -> list[Any]:
    if isinstance(opponents, (str, PolicyOpponent)) or _is_agent(opponents) or callable(opponents):
        opponents = [opponents] * (players - 1)
    opponents = list(opponents)
    if len(opponents) != players - 1:
        raise ValueError(f"{players} players: need 1 or {players - 1} opponent specs, got {len(opponents)}")
    return opponents


class LearnerCore:
    """N games, the learner in one seat of each; see the module docstring. Arrays, no spaces."""

    def __init__(
        self,
        num_envs: int = 1,
        config: RulesConfig | str | dict | None = None,
        opponents: Any = "random",
        seat: int | str = 0,
        macro_moves: bool = False,
        end_on_elimination: bool = True,
        seed: int | None = None,
        illegal_action: str = "raise",
        macro_accuse: bool = False,
        belief: bool = False,
        **flags: Any,
    ) -> None:
        if macro_accuse and not belief:
            raise ValueError("macro_accuse=True needs belief=True (the accusation is the belief's best triple)")
        if illegal_action not in ("raise", "lose"):
            raise ValueError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_count = 0
        self.config = make_config(config, **flags)
        P = self.P = self.config.players
        if seat != "random" and not (isinstance(seat, (int, np.integer)) and 0 <= seat < P):
            raise ValueError(f"seat must be 0..{P - 1} or 'random', got {seat!r}")
        self.seat_mode = seat
        self.N = int(num_envs)
        self.macro_moves = bool(macro_moves)
        self.end_on_elimination = bool(end_on_elimination)
        self.actions = LearnerActions(self.macro_moves, macro_accuse)
        self.n_actions = self.actions.n
        self.eng = VectorEngine(self.config, self.N, autoreset=False)
        self.views = [PlayerView(self.eng, s) for s in range(P)]
        self.engine_obs_size = self.eng.observation_size
        self.belief = None
        if belief:
            from agents.belief import BeliefTracker  # envs never import agents at module level

            self.belief = BeliefTracker(self.views, seed=seed)
        self.obs_size = self.engine_obs_size + (self.belief.size if self.belief is not None else 0)
        self.seat = np.zeros(self.N, np.int64)
        self._ar = np.arange(self.N)
        self._obs = np.zeros((self.N, self.obs_size), np.int8)
        self.final_obs = np.zeros((self.N, self.obs_size), np.int8)
        self.skipped_games = 0
        self.episodes = 0
        self._seed_seq = np.random.SeedSequence(seed)
        self._rng = np.random.default_rng(self._seed_seq.spawn(1)[0])
        self.set_opponents(opponents, seed=seed)

    # ------------------------------------------------------------ opponents
    def set_opponents(self, opponents: Any, seed: int | None = None) -> None:
        """Replace the opponents (takes effect at once; call :meth:`reset` to start fresh games)."""
        specs = _normalise_opponents(opponents, self.P)
        seats = range(self.P) if self.seat_mode == "random" else [(int(self.seat_mode) + 1 + k) % self.P
                                                                   for k in range(self.P - 1)]  # fmt: skip
        self.specs = specs
        # players[k][s]: the k-th opponent when it sits in absolute seat s (None: fast random).
        self.players: list[dict[int, Any]] = []
        ss = np.random.SeedSequence(seed).spawn(self.P * self.P)
        for k, spec in enumerate(specs):
            row: dict[int, Any] = {}
            used_obj = False
            for s in range(self.P):
                if self.seat_mode != "random" and s != seats[k]:
                    continue
                if isinstance(spec, str):
                    if spec == _FAST_RANDOM:
                        row[s] = None
                    else:
                        from agents.registry import make_agent  # envs never import agents at module level

                        row[s] = make_agent(spec, seed=int(ss[k * self.P + s].generate_state(1)[0]))
                elif isinstance(spec, PolicyOpponent):
                    row[s] = spec
                elif _is_agent(spec):
                    row[s] = spec if not used_obj else copy.deepcopy(spec)
                    used_obj = True
                elif callable(spec):
                    if self.belief is not None:
                        raise TypeError(
                            f"opponent {k}: a bare policy callable sees only the engine's observation and plays "
                            "the engine's or the macro-move space; with belief=True pass an Agent that builds its "
                            "own inputs (training.policy.PolicyAgent) or a PolicyOpponent"
                        )
                    row[s] = PolicyOpponent(spec, self.macro_moves)
                else:
                    raise TypeError(f"opponent {k}: expected a name, an Agent or a policy callable, got {spec!r}")
            self.players.append(row)
        self._agents = [(s, p) for row in self.players for s, p in row.items() if p is not None and _is_agent(p)]
        self._all_fast = all(p is None for row in self.players for p in row.values())
        self._opp_rng = np.random.default_rng(self._seed_seq.spawn(1)[0])

    # ------------------------------------------------------------ reset / step
    def reset(self, seed: int | None = None) -> np.ndarray:
        """Start new games everywhere; returns the (N, D) learner observations (a buffer: copy to keep)."""
        if seed is not None:
            self._seed_seq = np.random.SeedSequence(seed)
            rng_engine, rng_seat, rng_opp = self._seed_seq.spawn(3)
            self._rng = np.random.default_rng(rng_seat)
            self._opp_rng = np.random.default_rng(rng_opp)
            self.eng.reset(int(rng_engine.generate_state(1)[0]))
        else:
            self.eng.reset_games(self._ar)
        self.skipped_games = 0
        self._new_seats(self._ar)
        if self.belief is not None:
            self.belief.reset(self._ar, self.seat)
        for s, agent in self._agents:
            agent.reset(self.views[s], self._ar)
        fresh = np.ones(self.N, bool)
        rew = np.zeros(self.N, np.float32)
        self._advance(rew, np.zeros(self.N, bool), np.zeros(self.N, bool), np.zeros(self.N, bool), fresh)
        return self.observe()

    def _new_seats(self, idx: np.ndarray) -> None:
        if self.seat_mode == "random":
            self.seat[idx] = self._rng.integers(0, self.P, len(idx))
        else:
            self.seat[idx] = int(self.seat_mode)

    def observe(self) -> np.ndarray:
        """(N, D) learner observations of every game (a buffer: copy to keep)."""
        if self.belief is None:
            return self.eng.observe(player=self.seat, out=self._obs)
        self._obs[:] = self._observe(self._ar)
        return self._obs

    def _observe(self, idx: np.ndarray) -> np.ndarray:
        """(n, D) learner observations of games ``idx`` (the engine's, then the belief features)."""
        obs = self.eng.observe(player=self.seat[idx], idx=idx)
        if self.belief is None:
            return obs
        self.belief.update(idx)
        return np.concatenate([obs, self.belief.features(idx)], 1)

    def engine_mask(self) -> np.ndarray:
        """(N, 870) bool: the learner's legal engine actions (a read-only buffer)."""
        return self.eng.legal_action_mask

    def action_masks(self) -> np.ndarray:
        """(N, A) bool legal actions of the learner in this env's action space (a fresh array)."""
        return self.actions.mask(self.eng.legal_action_mask)

    def to_engine(self, actions: np.ndarray) -> np.ndarray:
        actions = np.asarray(actions).reshape(self.N).astype(np.int64)
        accuse = None if self.belief is None else self.belief.best_accusations
        return self.actions.to_engine(actions, self.eng.legal_action_mask, accuse)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One learner decision in every game. Returns (obs, rewards, terminated, truncated, ended):
        ``ended`` marks the games whose episode ended in this step; their last observation is in
        ``self.final_obs`` and ``obs`` already shows the next game (autoreset)."""
        eng_actions = self.to_engine(actions)
        rew = np.zeros(self.N, np.float32)
        term = np.zeros(self.N, bool)
        trunc = np.zeros(self.N, bool)
        ended = np.zeros(self.N, bool)
        fresh = np.zeros(self.N, bool)  # a new game started in this step: the learner has not acted in it
        active = None
        if self.illegal_action == "lose":
            ok = (eng_actions >= 0) & (eng_actions < A.NUM_ACTIONS)
            ok[ok] = self.eng.legal_action_mask[np.flatnonzero(ok), eng_actions[ok]]
            bad = np.flatnonzero(~ok)
            if len(bad):
                self.illegal_count += len(bad)
                self.final_obs[bad] = self._observe(bad)
                rew[bad], term[bad], ended[bad] = -1.0, True, True
                self.episodes += len(bad)
                self._restart(bad, fresh)
                active = ok
        res = self._engine_step(eng_actions, active)
        self._collect(res, rew, term, trunc, ended, fresh)
        self._advance(rew, term, trunc, ended, fresh)
        return self.observe(), rew, term, trunc, ended

    def _advance(self, rew, term, trunc, ended, fresh) -> None:
        """Let the opponents act until the learner is to act in every game."""
        while True:
            pending = self.eng.actor != self.seat
            if not pending.any():
                return
            res = self._engine_step(self._opponent_actions(pending), pending)
            self._collect(res, rew, term, trunc, ended, fresh)

    def _engine_step(self, actions: np.ndarray, active: np.ndarray | None):
        eng = self.eng
        if active is not None:
            actions[~active] = -1
        res = eng.step(actions, active=active)  # games not active (learner waiting) stay as they are
        for s, agent in self._agents:
            hook = getattr(agent, "observe_step", None)
            if hook is not None:
                hook(self.views[s])
        return res

    def _collect(self, res, rew, term, trunc, ended, fresh) -> None:
        r = res.rewards[self._ar, self.seat]
        over = res.terminated | res.truncated
        live = ~fresh
        rew += np.where(live, r, 0.0).astype(np.float32)
        out_now = over & live
        if self.end_on_elimination:
            elim = self.eng.eliminated[self._ar, self.seat] & live & ~over
            if elim.any():
                rew[elim] += -1.0
                term |= elim
                out_now |= elim
        term |= res.terminated & live
        trunc |= res.truncated & ~res.terminated & live
        restart = np.flatnonzero(out_now | (over & fresh))
        self.skipped_games += int((over & fresh).sum())
        done_idx = np.flatnonzero(out_now)
        if len(done_idx):
            self.final_obs[done_idx] = self._observe(done_idx)
            ended[done_idx] = True
            self.episodes += len(done_idx)
        if len(restart):
            self._restart(restart, fresh)

    def _restart(self, idx: np.ndarray, fresh: np.ndarray) -> None:
        self.eng.reset_games(idx)
        self._new_seats(idx)
        if self.belief is not None:
            self.belief.reset(idx, self.seat[idx])
        for s, agent in self._agents:
            agent.reset(self.views[s], idx)
        fresh[idx] = True

    def _opponent_actions(self, pending: np.ndarray) -> np.ndarray:
        eng = self.eng
        actor = eng.actor.astype(np.int64)
        acts = np.full(self.N, -1, np.int64)
        if self._all_fast:
            rnd = eng.sample_random_actions(self._opp_rng)
            acts[pending] = rnd[pending]
            return acts
        rel = (actor - self.seat - 1) % self.P
        rnd = None
        for k, row in enumerate(self.players):
            sel = pending & (rel == k)
            if not sel.any():
                continue
            for s, player in row.items():
                idx = np.flatnonzero(sel & (actor == s))
                if not len(idx):
                    continue
                if player is None:
                    if rnd is None:
                        rnd = eng.sample_random_actions(self._opp_rng)
                    acts[idx] = rnd[idx]
                elif isinstance(player, PolicyOpponent):
                    obs = eng.observe(player=s, idx=idx)
                    acts[idx] = player.actions(obs, eng.legal_action_mask[idx])
                else:
                    acts[idx] = player.act(self.views[s], idx)
        return acts


def _spaces(core: LearnerCore) -> tuple[spaces.Box, spaces.Discrete]:
    return spaces.Box(0, 127, (core.obs_size,), np.int8), spaces.Discrete(core.n_actions)


# ================================================================= gymnasium.Env
class CluedoSingleAgentEnv(gymnasium.Env):
    """One game; the learner in one seat, opponents in the others. Arguments: see :class:`LearnerCore`.

    ``step`` returns ``(obs, reward, terminated, truncated, info)``; ``action_masks()`` gives the
    (A,) bool legal actions (sb3-contrib's MaskablePPO reads it). ``info["seat"]`` is the learner's seat.
    An illegal action (``illegal_action="lose"``, the default here, as PettingZoo's classic games do) ends
    the episode with reward -1; ``illegal_action="raise"`` raises ``IllegalActionError`` instead.
    """

    metadata = {"render_modes": []}

    def __init__(self, config: RulesConfig | str | dict | None = None, *, preset: str | None = None,
                 opponents: Any = "random", seat: int | str = 0, macro_moves: bool = False,
                 end_on_elimination: bool = True, illegal_action: str = "lose", seed: int | None = None,
                 macro_accuse: bool = False, belief: bool = False, **flags: Any) -> None:  # fmt: skip
        if config is not None and preset is not None:
            raise TypeError("pass the rules either as config=... or as preset=..., not both")
        self.core = LearnerCore(1, config if config is not None else preset, opponents, seat, macro_moves,
                                end_on_elimination, seed=seed, illegal_action=illegal_action,
                                macro_accuse=macro_accuse, belief=belief, **flags)  # fmt: skip
        self.observation_space, self.action_space = _spaces(self.core)
        self._started = False
        self._in_episode = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None or not self._started:
            obs = self.core.reset(seed if seed is not None else int(self.np_random.integers(2**31)))
            self._started = True
        elif self._in_episode:  # reset in the middle of a game: deal a new one
            obs = self.core.reset()
        else:  # the core dealt the next game when the last one ended
            obs = self.core.observe()
        self._in_episode = True
        return obs[0].copy(), {"seat": int(self.core.seat[0])}

    def step(self, action):
        if not self._in_episode:
            raise RuntimeError("call reset() before step() (and after an episode ends)")
        seat = int(self.core.seat[0])
        obs, rew, term, trunc, ended = self.core.step(np.array([int(action)]))
        if ended[0]:
            obs = self.core.final_obs
            self._in_episode = False
        return obs[0].copy(), float(rew[0]), bool(term[0]), bool(trunc[0]), {"seat": seat}

    def action_masks(self) -> np.ndarray:
        return self.core.action_masks()[0]


# ================================================================= gymnasium VectorEnv
class CluedoVectorEnv(gymnasium.vector.VectorEnv):
    """N games in one engine, autoreset mode SAME_STEP (see the module docstring)."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, config: RulesConfig | str | dict | None = None, **kwargs: Any) -> None:
        self.core = LearnerCore(num_envs, config, **kwargs)
        self.num_envs = num_envs
        self.single_observation_space, self.single_action_space = _spaces(self.core)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
        seed = seed if seed is not None else int(self.np_random.integers(2**31))
        return self.core.reset(seed).copy(), {}

    def step(self, actions):
        obs, rew, term, trunc, ended = self.core.step(actions)
        infos: dict[str, Any] = {}
        if ended.any():
            final = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(ended):
                final[i] = self.core.final_obs[i].copy()
            infos = {"final_obs": final, "_final_obs": ended.copy(),
                     "final_info": {}, "_final_info": ended.copy()}  # fmt: skip
        return obs.copy(), rew.astype(np.float64), term, trunc, infos

    def action_masks(self) -> np.ndarray:
        return self.core.action_masks()


def register_envs() -> None:
    """Register ``"cluedo_env/Cluedo-v0"`` with gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point="cluedo_env.envs.single_agent:CluedoSingleAgentEnv",
                           vector_entry_point="cluedo_env.envs.single_agent:CluedoVectorEnv")  # fmt: skip


register_envs()

__all__ = [
    "ENV_ID",
    "NUM_MACRO_ACTIONS",
    "CluedoSingleAgentEnv",
    "CluedoVectorEnv",
    "LearnerActions",
    "LearnerCore",
    "PolicyOpponent",
    "engine_to_macro",
    "macro_mask",
    "macro_to_engine",
    "num_actions",
    "register_envs",
]
