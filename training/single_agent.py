"""Single-agent views of Cluedo over the batched engine: one learner seat, batched opponents.

The learner plays one seat in each of N games of one :class:`~cluedo_env.engine.vector_engine.VectorEngine`;
the other seats are played by opponents. A step of these envs is one decision of the learner:
its action is applied, then the opponents act (batched, seat by seat) until, in every game, the
learner is to act again or the game is over. Three front ends share one core (:class:`LearnerCore`):

* :class:`CluedoSingleAgentEnv`: a plain ``gymnasium.Env`` (one game), registered as
  ``"cluedo_env/Cluedo-v0"`` by ``import cluedo_env`` (``gymnasium.make("cluedo_env/Cluedo-v0",
  opponents="heuristic")``; ``gymnasium.make("cluedo_env:cluedo_env/Cluedo-v0")`` imports it first).
* :class:`CluedoVectorEnv`: a ``gymnasium.vector.VectorEnv`` of N games, the vector entry point of
  the same id (``gymnasium.make_vec("cluedo_env/Cluedo-v0", num_envs=N)``). Autoreset mode
  ``NEXT_STEP`` by default, Gymnasium's own default, which its vector wrappers
  (``RecordEpisodeStatistics``, ``NormalizeObservation`` ...) assume: the step that ends a game
  returns its last observation, the next step starts the next game (that row's action is ignored,
  reward 0, and its mask allows only action 0). ``autoreset_mode=AutoresetMode.SAME_STEP``
  returns the next game's first observation at once, the last one in ``infos["final_obs"][i]``.
* ``training.sb3_vec_env.CluedoVecEnv``: a Stable-Baselines3 ``VecEnv`` (SB3's conventions:
  ``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]``), in its own module so
  that this one does not need SB3.

All of them have ``action_masks()`` (what sb3-contrib's MaskablePPO reads); the Gymnasium ones
also put the mask, as int8 (what ``Discrete.sample(mask)`` takes), in ``info["action_mask"]``.

Spaces: observation ``Box(0, 127, (D,), int8)``, the learner seat's own observation
(``VectorEngine.observe(player=seat)``, seat-relative, D = 2628 with a board, 1385 without). Actions
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
flag; ``D + 2 (P + 1) 21 + 4``, 214 slots with 4 players). They are a function of what the seat
has seen, like the rest of the observation. With ``macro_accuse=True`` (needs ``belief``) the 324
ACCUSE actions become one, the last id (``num_actions(macro_moves, True)``: 359 with macro moves,
547 without): accuse the legal triple that the notebook finds most likely (its solution once
solved). The policy still decides when to accuse; :class:`LearnerActions` does the mapping.

The macro mapping is a pure function of the legal MOVE destinations (:func:`macro_mask`,
:func:`macro_to_engine`); no rule is written here.

Rewards: the learner seat's rewards summed over the engine steps of one env step: +1 when it
wins, -1 when it loses (someone else won, or everyone was eliminated), 0 otherwise and on
truncation (R-E3, ``max_turns`` turns of all players: ``truncated=True``; the registered id sets
no ``max_episode_steps``, since env steps are not turns). With ``end_on_elimination=True``
(default) the learner's episode ends (terminated, reward -1) as soon as the learner makes a
wrong accusation: an eliminated player can never win (R-A4), so -1 is its final reward anyway,
and the rest of that game (where the learner would only show cards) is not simulated.

Games that end before the learner's first decision (possible when it sits after other players:
with random opponents, who accuse blindly, a quarter of the games at a random seat) are **not
hidden** (``unplayed_games="step"``, the default): the learner sees the finished game, its mask
allows only action 0, and that one step returns the game's result as its reward (+1 when the
others eliminated themselves and the learner is the last one standing, -1 when one of them
won), terminated, with ``info["unplayed"]`` True. So every game is one episode, and episode
statistics (``RecordEpisodeStatistics``, SB3's ``VecMonitor``) give the win rate that
``scripts/evaluate.py`` reports for the same seats. A forced step has a single legal action, so
it adds nothing to a masked policy's gradient. ``unplayed_games="skip"`` drops such games and
deals new ones instead (counted in ``skipped_games``): fewer wasted steps, but the statistics
then leave those games out.

Actions must be integers (Python ``int``, numpy integers, integer arrays): a float, a string or
a bool raises :class:`~cluedo_env.rules.actions.IllegalActionError` whatever ``illegal_action`` says,
since it is a bug in the caller, not a move. An integer that is illegal now, or outside the
action space, raises ``IllegalActionError`` naming it and the legal ones
(``illegal_action="raise"``, the default of the vector envs; no game changes), or ends that
episode with reward -1 (``illegal_action="lose"``, the default of the Gymnasium single env, as
PettingZoo's classic games do).

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

Rendering (``render_mode="ansi"`` or ``"rgb_array"``, :mod:`cluedo_env.render`): the table as a
spectator sees it (public facts only) or, with ``render_viewer="learner"``, the learner seat's view.
After the last step of an episode the render shows the finished game.

An unknown keyword argument raises :class:`~cluedo_env.rules.config.ConfigError` listing every keyword
the env takes (its own and the rules flags).

Speed: the engine steps every game of the batch at once; games whose learner is already waiting
are left out of the opponents' steps (``VectorEngine.step(actions, active=...)``), so one env
step costs one engine step for the learner plus as many as the longest opponent sequence in
the batch.
``scripts/bench_single_agent.py`` measures it.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Iterable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from cluedo_env import GYMNASIUM_ID, register_gymnasium
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.envs.learner_actions import (  # noqa: F401 - re-exported: the env's action spaces
    MACRO0,
    MACRO_SHIFT,
    NUM_MACRO_ACTIONS,
    NUM_MOVES,
    NUM_TRIPLES,
    LearnerActions,
    as_actions,
    engine_to_macro,
    macro_mask,
    macro_to_engine,
    num_actions,
)
from cluedo_env.rules import actions as A
from cluedo_env.rules.config import ConfigError, RulesConfig, make_config

ENV_ID = GYMNASIUM_ID  # "cluedo_env/Cluedo-v0"

UNPLAYED_MODES = ("step", "skip")
RENDER_MODES = ["ansi", "rgb_array"]
RENDER_FPS = 2

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


# ================================================================= argument checks
def _rules_keywords() -> list[str]:
    return [f.name for f in dataclasses.fields(RulesConfig) if f.name != "preset"]


def _keywords(*functions: Callable[..., Any]) -> list[str]:
    """The named parameters of ``functions`` (in order, no duplicates, no ``self`` or ``**flags``)."""
    names: list[str] = []
    for fn in functions:
        for p in inspect.signature(fn).parameters.values():
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self" and p.name not in names:
                names.append(p.name)
    return names


def check_keywords(owner: str, flags: dict[str, Any], env_keywords: Iterable[str]) -> None:
    """Refuse keyword arguments that are neither the env's nor rules flags, listing all it takes.

    Tools pass keywords a user never typed (SB3's ``make_vec_env`` passes ``render_mode``), so the
    message names every keyword that would have been accepted, not only the rules flags.
    """
    rules = _rules_keywords()
    unknown = sorted(set(flags) - set(rules))
    if unknown:
        raise ConfigError(
            f"{owner}: unknown keyword argument(s) {unknown}; env keywords: {', '.join(env_keywords)}; "
            f"rules keywords: {', '.join(rules)}"
        )


def _ids_text(ids: np.ndarray, limit: int = 12) -> str:
    """``0, 1, 13..336`` style list of action ids (runs of consecutive ids folded), at most ``limit`` items."""
    runs: list[str] = []
    ids = [int(i) for i in ids]
    k = 0
    while k < len(ids):
        j = k
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        runs.append(str(ids[k]) if j == k else f"{ids[k]}..{ids[j]}")
        k = j + 1
    if not runs:
        return "none"
    return ", ".join(runs[:limit]) + (f", ... ({len(ids)} in all)" if len(runs) > limit else "")


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
        unplayed_games: str = "step",
        **flags: Any,
    ) -> None:
        check_keywords("LearnerCore", flags, _keywords(LearnerCore.__init__))
        if macro_accuse and not belief:
            raise ConfigError("macro_accuse=True needs belief=True (the accusation is the belief's best triple)")
        if illegal_action not in ("raise", "lose"):
            raise ConfigError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        if unplayed_games not in UNPLAYED_MODES:
            raise ConfigError(f"unplayed_games must be one of {list(UNPLAYED_MODES)}, got {unplayed_games!r}")
        if type(num_envs) is not int or num_envs < 1:
            raise ConfigError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.illegal_action = illegal_action
        self.unplayed_mode = unplayed_games
        self.illegal_count = 0
        self.config = make_config(config, **flags)
        P = self.P = self.config.players
        if seat != "random" and not (isinstance(seat, (int, np.integer)) and 0 <= seat < P):
            raise ConfigError(f"seat must be 0..{P - 1} or 'random', got {seat!r}")
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
        # Games over before the learner's first decision, waiting for their one forced step.
        self.unplayed = np.zeros(self.N, bool)
        self._unplayed_rew = np.zeros(self.N, np.float32)
        self._unplayed_trunc = np.zeros(self.N, bool)
        self.skipped_games = 0  # unplayed_games="skip": games dropped since the last reset
        self.unplayed_reported = 0  # unplayed_games="step": forced steps reported since the last reset
        self.episodes = 0
        # Set keep_final_snapshots to keep, per game, (snapshot, seat) of the game that ended last (renders).
        self.keep_final_snapshots = False
        self.final_snapshots: dict[int, tuple[dict[str, Any], int]] = {}
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
        self.unplayed_reported = 0
        self.unplayed[:] = False
        self.final_snapshots.clear()
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
        """(N, A) bool legal actions of the learner in this env's action space (a fresh array).

        A game that ended before the learner's first decision allows only action 0 (its forced step).
        """
        m = self.actions.mask(self.eng.legal_action_mask)
        if self.unplayed.any():
            m[self.unplayed] = False
            m[self.unplayed, 0] = True
        return m

    def to_engine(self, actions: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Learner actions of games ``idx`` (default: all) -> engine actions."""
        actions = as_actions(actions, self.N if idx is None else len(idx), self.n_actions)
        mask = self.eng.legal_action_mask if idx is None else self.eng.legal_action_mask[idx]
        accuse = None
        if self.belief is not None:
            belief, rows_of = self.belief, (self._ar if idx is None else idx)
            accuse = lambda rows, legal: belief.best_accusations(rows_of[rows], legal)  # noqa: E731
        return self.actions.to_engine(actions, mask, accuse)

    def step(self, actions: Any, active: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """One learner decision in every game (or in the games ``active`` marks; the others are left
        as they are and report nothing). Returns (obs, rewards, terminated, truncated, ended): ``ended``
        marks the games whose episode ended in this step; their last observation is in
        ``self.final_obs`` and ``obs`` already shows the next game (autoreset)."""
        acts = as_actions(actions, self.N, self.n_actions)
        live = np.ones(self.N, bool) if active is None else np.array(active, bool).reshape(self.N)
        in_range = (acts >= 0) & (acts < self.n_actions)
        masks = self.action_masks()
        ok = in_range.copy()
        ok[in_range] = masks[np.flatnonzero(in_range), acts[in_range]]
        bad = np.flatnonzero(~ok & live)
        if len(bad) and self.illegal_action == "raise":
            g, a = int(bad[0]), int(acts[bad[0]])
            what = "not legal now" if in_range[g] else f"outside Discrete({self.n_actions})"
            raise A.IllegalActionError(
                f"game {g}: action {a} is {what}; legal actions there: {_ids_text(np.flatnonzero(masks[g]))} "
                f"(see action_masks()); {len(bad)} game(s) of {self.N} had an illegal action; no game was changed"
            )
        rew = np.zeros(self.N, np.float32)
        term = np.zeros(self.N, bool)
        trunc = np.zeros(self.N, bool)
        ended = np.zeros(self.N, bool)
        fresh = np.zeros(self.N, bool)  # a new game started in this step: the learner has not acted in it
        if len(bad):  # illegal_action="lose"
            self.illegal_count += len(bad)
            self.final_obs[bad] = self._observe(bad)
            rew[bad], term[bad], ended[bad] = -1.0, True, True
            self.episodes += len(bad)
            self._restart(bad, fresh)
            live[bad] = False
        rep = np.flatnonzero(live & self.unplayed)
        if len(rep):  # the forced step of a game that ended before the learner's first decision
            self.final_obs[rep] = self._observe(rep)
            rew[rep] = self._unplayed_rew[rep]
            trunc[rep] = self._unplayed_trunc[rep]
            term[rep] = ~self._unplayed_trunc[rep]
            ended[rep] = True
            self.episodes += len(rep)
            self.unplayed_reported += len(rep)
            self._restart(rep, fresh)
            live[rep] = False
        if live.any():
            idx = np.flatnonzero(live)
            eng_actions = np.full(self.N, -1, np.int64)
            eng_actions[idx] = self.to_engine(acts[idx], idx)
            res = self._engine_step(eng_actions, None if live.all() else live)
            self._collect(res, rew, term, trunc, ended, fresh)
        self._advance(rew, term, trunc, ended, fresh)
        return self.observe(), rew, term, trunc, ended

    def _advance(self, rew, term, trunc, ended, fresh) -> None:
        """Let the opponents act until the learner is to act (or sees an unplayed game) everywhere."""
        while True:
            pending = (self.eng.actor != self.seat) & ~self.unplayed
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
        live = ~fresh & ~self.unplayed
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
        early = np.flatnonzero(over & fresh)  # over before the learner's first decision (before restarts below)
        done_idx = np.flatnonzero(out_now)
        if len(done_idx):
            self.final_obs[done_idx] = self._observe(done_idx)
            ended[done_idx] = True
            self.episodes += len(done_idx)
            self._restart(done_idx, fresh)
        if len(early):
            if self.unplayed_mode == "skip":
                self.skipped_games += len(early)
                self._restart(early, fresh)
            else:
                self.unplayed[early] = True
                self._unplayed_rew[early] = r[early]
                self._unplayed_trunc[early] = res.truncated[early] & ~res.terminated[early]

    def _restart(self, idx: np.ndarray, fresh: np.ndarray) -> None:
        if self.keep_final_snapshots:
            for i in idx:
                self.final_snapshots[int(i)] = (self.eng.export_game(int(i)), int(self.seat[i]))
        self.eng.reset_games(idx)
        self.unplayed[idx] = False
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

    # ------------------------------------------------------------ rendering
    def render(self, i: int, mode: str, viewer: str | None, final: bool = False) -> str | np.ndarray:
        """Game ``i`` rendered by :mod:`cluedo_env.render` (``final``: the game that ended last there)."""
        from cluedo_env import render

        if final and i in self.final_snapshots:
            snapshot, seat = self.final_snapshots[i]
        else:
            snapshot, seat = self.eng.export_game(i), int(self.seat[i])
        who = seat if viewer == "learner" else None
        return render.render_ansi(snapshot, who) if mode == "ansi" else render.render_rgb(snapshot, who)


def _spaces(core: LearnerCore) -> tuple[spaces.Box, spaces.Discrete]:
    return spaces.Box(0, 127, (core.obs_size,), np.int8), spaces.Discrete(core.n_actions)


def _check_render(render_mode: str | None, render_viewer: str | None) -> None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ConfigError(f"render_mode={render_mode!r} is not one of {RENDER_MODES} (or None)")
    if render_viewer not in (None, "learner"):
        raise ConfigError(f"render_viewer={render_viewer!r} must be None (public facts only) or 'learner'")


def _rules(config: Any, preset: str | None) -> Any:
    if config is not None and preset is not None:
        raise TypeError("pass the rules either as config=... or as preset=..., not both")
    return config if config is not None else preset


# ================================================================= gymnasium.Env
class CluedoSingleAgentEnv(gymnasium.Env):
    """One game; the learner in one seat, opponents in the others. Arguments: see :class:`LearnerCore`.

    ``step`` returns ``(obs, reward, terminated, truncated, info)``; ``action_masks()`` gives the
    (A,) bool legal actions (sb3-contrib's MaskablePPO reads it), ``info["action_mask"]`` the same
    as int8 (all zeros once the episode is over). ``info["seat"]`` is the learner's seat and
    ``info["unplayed"]`` marks the forced step of a game that ended before the learner's first
    decision. An illegal action (``illegal_action="lose"``, the default here, as PettingZoo's
    classic games do) ends the episode with reward -1; ``illegal_action="raise"`` raises
    ``IllegalActionError`` instead.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS}

    def __init__(self, config: RulesConfig | str | dict | None = None, *, preset: str | None = None,
                 opponents: Any = "random", seat: int | str = 0, macro_moves: bool = False,
                 end_on_elimination: bool = True, illegal_action: str = "lose", seed: int | None = None,
                 macro_accuse: bool = False, belief: bool = False, unplayed_games: str = "step",
                 render_mode: str | None = None, render_viewer: str | None = None, **flags: Any) -> None:  # fmt: skip
        check_keywords(type(self).__name__, flags, _keywords(type(self).__init__))
        _check_render(render_mode, render_viewer)
        self.render_mode = render_mode
        self.render_viewer = render_viewer
        self.core = LearnerCore(1, _rules(config, preset), opponents, seat, macro_moves, end_on_elimination,
                                seed=seed, illegal_action=illegal_action, macro_accuse=macro_accuse, belief=belief,
                                unplayed_games=unplayed_games, **flags)  # fmt: skip
        self.core.keep_final_snapshots = render_mode is not None
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
        return obs[0].copy(), self._info(int(self.core.seat[0]), False)

    def step(self, action: Any):
        if not self._in_episode:
            raise RuntimeError("call reset() before step() (and after an episode ends)")
        seat = int(self.core.seat[0])
        unplayed = bool(self.core.unplayed[0])
        obs, rew, term, trunc, ended = self.core.step(action)
        if ended[0]:
            obs = self.core.final_obs
            self._in_episode = False
        return obs[0].copy(), float(rew[0]), bool(term[0]), bool(trunc[0]), self._info(seat, unplayed)

    def _info(self, seat: int, unplayed: bool) -> dict[str, Any]:
        if self._in_episode:
            mask = self.core.action_masks()[0].astype(np.int8)
        else:
            mask = np.zeros(self.core.n_actions, np.int8)
        return {"seat": seat, "action_mask": mask, "unplayed": unplayed}

    def action_masks(self) -> np.ndarray:
        """(A,) bool legal actions (all False once the episode is over, until ``reset``)."""
        if not self._in_episode:
            return np.zeros(self.core.n_actions, bool)
        return self.core.action_masks()[0]

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        return self.core.render(0, self.render_mode, self.render_viewer, final=self._started and not self._in_episode)


# ================================================================= gymnasium VectorEnv
class CluedoVectorEnv(gymnasium.vector.VectorEnv):
    """N games in one engine; autoreset NEXT_STEP by default (see the module docstring).

    ``infos["action_mask"]`` is the (N, A) int8 mask, ``infos["unplayed"]`` (N,) marks forced steps
    of games that ended before the learner's first decision, ``infos["seat"]`` the learner's seat in
    the game each row's observation shows.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": RENDER_MODES, "render_fps": RENDER_FPS}

    def __init__(self, num_envs: int = 1, config: RulesConfig | str | dict | None = None, *,
                 preset: str | None = None, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 render_mode: str | None = None, render_viewer: str | None = None, **kwargs: Any) -> None:  # fmt: skip
        check_keywords(type(self).__name__, {k: v for k, v in kwargs.items() if k not in _CORE_KEYWORDS},
                       _keywords(type(self).__init__, LearnerCore.__init__))  # fmt: skip
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        mode = next((m for m in modes if autoreset_mode in (m, m.value, m.name)), None)
        if mode is None:
            raise ConfigError(f"autoreset_mode={autoreset_mode!r} is not supported; use one of {list(modes)}")
        _check_render(render_mode, render_viewer)
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.render_mode = render_mode
        self.render_viewer = render_viewer
        self.core = LearnerCore(num_envs, _rules(config, preset), **kwargs)
        self.core.keep_final_snapshots = render_mode is not None
        self.num_envs = num_envs
        self.single_observation_space, self.single_action_space = _spaces(self.core)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, bool)  # NEXT_STEP: these rows start their next game at the next step

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
        seed = seed if seed is not None else int(self.np_random.integers(2**31))
        obs = self.core.reset(seed).copy()
        self._autoreset[:] = False
        return obs, self._infos(np.zeros(self.num_envs, bool))

    def step(self, actions: Any):
        core = self.core
        pending = self._autoreset
        unplayed = core.unplayed & ~pending
        seats = core.seat.copy()
        obs, rew, term, trunc, ended = core.step(actions, ~pending if pending.any() else None)
        obs = obs.copy()
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            obs[ended] = core.final_obs[ended]
            self._autoreset = ended.copy()
            infos = self._infos(unplayed)
            infos["seat"][ended] = seats[ended]  # the seat of the finished game these rows still show
        else:
            infos = self._infos(unplayed)
            if ended.any():
                final = np.full(self.num_envs, None, dtype=object)
                for i in np.flatnonzero(ended):
                    final[i] = core.final_obs[i].copy()
                infos.update({"final_obs": final, "_final_obs": ended.copy(),
                              "final_info": {}, "_final_info": ended.copy()})  # fmt: skip
        return obs, rew.astype(np.float64), term, trunc, infos

    def _infos(self, unplayed: np.ndarray) -> dict[str, Any]:
        every = np.ones(self.num_envs, bool)
        return {"action_mask": self.action_masks().astype(np.int8), "_action_mask": every,
                "unplayed": unplayed.copy(), "_unplayed": every,
                "seat": self.core.seat.copy(), "_seat": every}  # fmt: skip

    def action_masks(self) -> np.ndarray:
        """(N, A) bool legal actions; a row whose next step starts a new game (NEXT_STEP) allows only 0 (ignored)."""
        m = self.core.action_masks()
        if self._autoreset.any():
            m[self._autoreset] = False
            m[self._autoreset, 0] = True
        return m

    def render(self) -> tuple[str | np.ndarray, ...] | None:
        """One render per game (a row that just ended, NEXT_STEP: its finished game)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        return tuple(self.core.render(i, self.render_mode, self.render_viewer, final=bool(self._autoreset[i]))
                     for i in range(self.num_envs))  # fmt: skip


_CORE_KEYWORDS = frozenset(_keywords(LearnerCore.__init__))


def register_envs() -> None:
    """Register ``"cluedo_env/Cluedo-v0"`` with gymnasium (idempotent; ``import cluedo_env`` already does)."""
    register_gymnasium()


__all__ = [
    "ENV_ID",
    "NUM_MACRO_ACTIONS",
    "UNPLAYED_MODES",
    "CluedoSingleAgentEnv",
    "CluedoVectorEnv",
    "LearnerActions",
    "LearnerCore",
    "PolicyOpponent",
    "as_actions",
    "check_keywords",
    "engine_to_macro",
    "macro_mask",
    "macro_to_engine",
    "num_actions",
    "register_envs",
]
