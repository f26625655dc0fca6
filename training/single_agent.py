"""Single-agent views of Cluedo over the batched engine: one learner seat, batched opponents.

The learner plays one seat in each of N games of one :class:`~cluedo_env.engine.vector_engine.VectorEngine`;
the other seats are played by opponents. A step of these envs is one decision of the learner:
its action is applied, then the opponents act (batched, seat by seat) until, in every game, the
learner is to act again or the game is over. Three front ends share one core
(:class:`~cluedo_env.training.learner_core.LearnerCore`, in its own module), which takes its options checked, as one
:class:`~cluedo_env.training.learner_options.LearnerOptions`:

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
* ``cluedo_env.training.sb3.vec_env.CluedoVecEnv``: a Stable-Baselines3 ``VecEnv`` (SB3's conventions:
  ``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]``), in its own module so
  that this one does not need SB3.

All of them have ``action_masks()`` (what sb3-contrib's MaskablePPO reads); the Gymnasium ones
also put the mask, as int8 (what ``Discrete.sample(mask)`` takes), in ``info["action_mask"]``.

Mask in the observation (``mask_in_observation=True``, the Gymnasium envs only): the observation is
``spaces.Dict({"observation": <the space below>, "action_mask": Box(0, 1, (A,), int8)})``, the layout of the
PettingZoo env's observations, for learners that read the mask from the observation (a policy network that
masks its own logits, RLlib-style action-masking models). The mask is ``action_masks()`` as int8: all zeros
after the last step of an episode (single env), only action 0 on a vector row whose next step starts a new game
(``NEXT_STEP``); a ``SAME_STEP`` final observation carries an all-zero mask. Other front ends (the SB3
``VecEnv``) refuse the option: they hand out ``action_masks()``.

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

Packed observation (``packed_observation=True``; with ``observation="full"`` and no belief features): the
same observation as the engine's packed rows, ``Box(0, 255, (size,), uint8)`` (555 bytes with a board, 399
without): the 0/1 slots as bits, then a byte per count (:func:`cluedo_env.engine.observation.packed_layout`).
``observation.unpack`` (numpy) and :class:`cluedo_env.training.packed_observation.Unpack` (torch, a network's first
layer) give the int8 rows back, bit for bit. The env writes, and a rollout buffer stores, a fifth of the bytes.

Compact observation (``observation="compact"``, needs ``belief``): instead of the engine's observation
and the belief features, the pieces a learner needs in about a third of the slots (token rooms instead
of squares, travel turns to each room, the newest 4 history records, the belief features, the
notebook's envelope probabilities; :mod:`cluedo_env.agents.learner.compact_observation`, ``docs/observation.md``).

Belief features (``belief=True``): the observation is followed by the deducer's notebook for the
learner's seat (:mod:`cluedo_env.agents.learner.belief`: proved holders of every card, proved envelope cards, solved
flag; ``D + 2 (P + 1) 21 + 4``, 214 slots with 4 players). They are a function of what the seat
has seen, like the rest of the observation. With ``macro_accuse=True`` (needs ``belief``) the 324
ACCUSE actions become one, the last id (``num_actions(macro_moves, True)``: 359 with macro moves,
547 without): accuse the legal triple that the notebook finds most likely (its solution once
solved). The policy still decides when to accuse; :class:`LearnerActions` does the mapping.

Advised (``advisor="deducer"`` or any player name; needs ``belief``, no macro options): that player
plays the learner's seat (its own notebook, the seat's view only) and the learner is asked only where
it may accuse (R-A1: its own turn, at the start or after the move or suggestion), in ``Discrete(2)``:
0 = the advisor's action there, 1 = accuse the legal triple the learner's belief finds most likely.
So the policy learns *when* to accuse, and plays the rest as well as its advisor; an episode is
then about two decisions per turn of the learner.
An expert advisor (:class:`cluedo_env.agents.players.expert.ExpertAgent`, e.g. the riskless
``expert{"floor": 1.01, "accuse_assumed": false, "max_hypotheses": 0}``) also appends the expert's
accusation inputs to the observation (p1 of its best open triple, danger, hypotheses left ...:
:mod:`cluedo_env.agents.learner.accusation_features`), and action 1 accuses that triple instead of the belief's.
Without an advisor, ``accusation_features=True`` (needs ``belief``) appends the same inputs, computed by an
expert at its defaults that only perceives (its ``expert_rule`` slot stays 0); the policy makes every decision.
``holder_probabilities=True`` (needs ``belief``, no advisor) appends, from the same perceiving expert, who the
seat believes holds each card (:mod:`cluedo_env.agents.learner.holder_features`).

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

* a player name for :func:`cluedo_env.agents.play.registry.make_agent` (``"heuristic"``, ``"deducer"``, ``"ckpt:..."``);
  ``"random"`` is sampled straight from the engine's legal blocks (same distribution as
  ``cluedo_env.agents.players.random_player``, much cheaper);
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

import dataclasses
from typing import Any

import gymnasium
import numpy as np
from cluedo_env.training.learner_core import LearnerCore, PolicyOpponent
from cluedo_env.training.learner_options import OPTION_NAMES, LearnerOptions, check_keywords, keywords_of
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from cluedo_env import GYMNASIUM_ID, register_gymnasium
from cluedo_env.checks import check_seed
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
from cluedo_env.rules.config import ConfigError, RulesConfig

ENV_ID = GYMNASIUM_ID  # "cluedo_env/Cluedo-v0"

RENDER_MODES = ["ansi", "rgb_array"]
RENDER_FPS = 2


def _spaces(core: LearnerCore) -> tuple[spaces.Box, spaces.Discrete]:
    if core.packed:
        return spaces.Box(0, 255, (core.obs_size,), np.uint8), spaces.Discrete(core.n_actions)
    return spaces.Box(0, 127, (core.obs_size,), np.int8), spaces.Discrete(core.n_actions)


def _observation_space(core: LearnerCore) -> spaces.Box | spaces.Dict:
    """The observation space of a Gymnasium env over ``core``: with ``mask_in_observation``, the observation and
    the (A,) int8 mask in a Dict, as the PettingZoo env lays them out."""
    obs_space, _ = _spaces(core)
    if not core.options.mask_in_observation:
        return obs_space
    return spaces.Dict({"observation": obs_space, "action_mask": spaces.Box(0, 1, (core.n_actions,), np.int8)})


def _with_mask(obs: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    return {"observation": obs, "action_mask": mask.astype(np.int8)}  # astype copies: the caller keeps its mask


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
                 observation: str = "full", packed_observation: bool = False, mask_in_observation: bool = False,
                 render_mode: str | None = None, render_viewer: str | None = None, **flags: Any) -> None:  # fmt: skip
        check_keywords(type(self).__name__, flags, keywords_of(type(self).__init__))
        _check_render(render_mode, render_viewer)
        self.render_mode = render_mode
        self.render_viewer = render_viewer
        self.core = LearnerCore(LearnerOptions(1, _rules(config, preset), opponents, seat, macro_moves,
                                               end_on_elimination, seed=seed, illegal_action=illegal_action,
                                               macro_accuse=macro_accuse, belief=belief, unplayed_games=unplayed_games,
                                               observation=observation, packed_observation=packed_observation,
                                               mask_in_observation=mask_in_observation, rules=flags))  # fmt: skip
        self.core.keep_final_snapshots = render_mode is not None
        self.mask_in_observation = mask_in_observation
        self.observation_space, self.action_space = _observation_space(self.core), _spaces(self.core)[1]
        self._started = False
        self._in_episode = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_seed(seed)
        super().reset(seed=seed)
        if seed is not None or not self._started:
            obs = self.core.reset(seed if seed is not None else int(self.np_random.integers(2**31)))
            self._started = True
        elif self._in_episode:  # reset in the middle of a game: deal a new one
            obs = self.core.reset()
        else:  # the core dealt the next game when the last one ended
            obs = self.core.observe()
        self._in_episode = True
        return self._out(obs[0].copy(), self._info(int(self.core.seat[0]), False))

    def step(self, action: Any):
        if not self._in_episode:
            raise RuntimeError("call reset() before step() (and after an episode ends)")
        seat = int(self.core.seat[0])
        unplayed = bool(self.core.unplayed[0])
        obs, rew, term, trunc, ended = self.core.step(action)
        if ended[0]:
            obs = self.core.final_obs
            self._in_episode = False
        info = self._info(seat, unplayed)
        return self._out(obs[0].copy(), info)[0], float(rew[0]), bool(term[0]), bool(trunc[0]), info

    def _out(self, obs: np.ndarray, info: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """``(observation, info)``, the observation with its mask when ``mask_in_observation``."""
        return (_with_mask(obs, info["action_mask"]) if self.mask_in_observation else obs), info

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
                 mask_in_observation: bool = False, render_mode: str | None = None, render_viewer: str | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        env_keywords = [*keywords_of(type(self).__init__), *OPTION_NAMES]
        options = LearnerOptions.from_keywords(type(self).__name__, env_keywords, num_envs, _rules(config, preset),
                                               **kwargs)  # fmt: skip
        options = dataclasses.replace(options, mask_in_observation=mask_in_observation)  # checked again there
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        mode = next((m for m in modes if autoreset_mode in (m, m.value, m.name)), None)
        if mode is None:
            raise ConfigError(f"autoreset_mode={autoreset_mode!r} is not supported; use one of {list(modes)}")
        _check_render(render_mode, render_viewer)
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.render_mode = render_mode
        self.render_viewer = render_viewer
        self.core = LearnerCore(options)
        self.core.keep_final_snapshots = render_mode is not None
        self.num_envs = num_envs
        self.mask_in_observation = mask_in_observation
        self.single_observation_space, self.single_action_space = _observation_space(self.core), _spaces(self.core)[1]
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, bool)  # NEXT_STEP: these rows start their next game at the next step

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_seed(seed)
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
        seed = seed if seed is not None else int(self.np_random.integers(2**31))
        obs = self.core.reset(seed).copy()
        self._autoreset[:] = False
        infos = self._infos(np.zeros(self.num_envs, bool))
        return self._out(obs, infos), infos

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
                for i in np.flatnonzero(ended):  # a finished game: nothing to act on, an all-zero mask
                    final[i] = core.final_obs[i].copy()
                    if self.mask_in_observation:
                        final[i] = _with_mask(final[i], np.zeros(core.n_actions, np.int8))
                infos.update({"final_obs": final, "_final_obs": ended.copy(),
                              "final_info": {}, "_final_info": ended.copy()})  # fmt: skip
        return self._out(obs, infos), rew.astype(np.float64), term, trunc, infos

    def _out(self, obs: np.ndarray, infos: dict[str, Any]) -> np.ndarray | dict[str, np.ndarray]:
        """The batch of observations, with the (N, A) masks when ``mask_in_observation``."""
        return _with_mask(obs, infos["action_mask"]) if self.mask_in_observation else obs

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


def register_envs() -> None:
    """Register ``"cluedo_env/Cluedo-v0"`` with gymnasium (idempotent; ``import cluedo_env`` already does)."""
    register_gymnasium()


__all__ = [
    "ENV_ID",
    "NUM_MACRO_ACTIONS",
    "CluedoSingleAgentEnv",
    "CluedoVectorEnv",
    "LearnerActions",
    "PolicyOpponent",
    "as_actions",
    "engine_to_macro",
    "macro_mask",
    "macro_to_engine",
    "num_actions",
    "register_envs",
]
