"""The numpy statements of the deducer's compiled steps (:class:`cluedo_env.agents.players.deducer.DeducerAgent`): the
information about the whole deal, proved accusations, refutations, the shortlist of candidate cards and the goal room.
Functions taking the agent; the tests compare them with the compiled paths decision by decision, random numbers
included, or swap them in for the compiled methods.
"""

from __future__ import annotations

import numpy as np
from cluedo_env.agents.knowledge.facts import CAT_SLICES
from cluedo_env.agents.knowledge.suggestion_value import h2
from cluedo_env.agents.players.deducer import DeducerAgent
from cluedo_env.agents.players.refutation import choose_refutation, suggester_candidates

from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_ROOMS, ROOM_CARD0

SUBSETS = np.array([[(m >> j) & 1 for j in range(3)] for m in range(1, 8)], bool)  # (7, 3)
SUBSET_SIZE = SUBSETS.sum(1)
SHOW_SHARE = SUBSETS / SUBSET_SIZE[:, None]  # (7, 3): chance each member is the one shown
LOG_SIZE = np.log2(SUBSET_SIZE)


def _entropy_terms(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.0, 1.0)
    return np.where(p > 1e-12, -p * np.log2(np.where(p > 1e-12, p, 1.0)), 0.0)


def information_reference(prob: np.ndarray, cards: np.ndarray, order: np.ndarray, refute_all: bool) -> np.ndarray:
    """:func:`cluedo_env.agents.players.deducer.information` in numpy: (n, T) expected information (bits) about the
    whole deal of
    suggesting each triple of ``cards`` (n, T, 3).

    prob (n, H, 21): probability of each holder holding each card; order (n, P - 1): the
    seats asked, in order (R-G6). Cards are treated as independent. With the first-refuter
    rule the answer is (first seat holding a named card, the card it shows) or nobody; with
    ``refute_all`` each asked seat answers on its own (summed). The refuter picks among its
    named cards uniformly (the information of that pick is subtracted: it says nothing
    about the deal).
    """
    n, T, _ = cards.shape
    r = np.arange(n)[:, None, None, None]
    q = prob[r, order[:, None, :, None], cards[:, :, None, :]]  # (n, T, K, 3) asked seat k holds card x
    if refute_all:
        other = 1.0 - q
    else:
        before = np.cumsum(q, axis=2) - q
        other = np.clip(1.0 - before - q, 0.0, 1.0)  # held by a seat asked later, by us, or the envelope
    ps = _subset_probs(q, other)  # (n, T, K, 7)
    shown = ps @ SHOW_SHARE  # (n, T, K, 3)
    cond = ps @ LOG_SIZE  # (n, T, K) bits of the refuter's own choice
    if refute_all:
        none = other.prod(-1)  # (n, T, K) seat k holds none
        return (_entropy_terms(none) + _entropy_terms(shown).sum(-1) - cond).sum(-1)
    none = np.clip(1.0 - q.sum(2), 0.0, 1.0).prod(-1)  # (n, T): nobody asked holds any
    return _entropy_terms(none) + _entropy_terms(shown).sum((-1, -2)) - cond.sum(-1)


def _subset_probs(yes: np.ndarray, no: np.ndarray) -> np.ndarray:
    """(..., 7) probability of each subset S (order of SUBSETS) from per-card (..., 3) in / out probabilities."""
    f = np.stack([no, yes], -1)  # (..., 3, 2)
    ps = f[..., 2, :, None, None] * f[..., 1, None, :, None] * f[..., 0, None, None, :]  # index 4 i2 + 2 i1 + i0
    return ps.reshape(ps.shape[:-3] + (8,))[..., 1:]


def _card_uncertainty(prob: np.ndarray) -> np.ndarray:
    """(n, 21) entropy (bits) of each card's holder."""
    return _entropy_terms(prob).sum(1)


def accusations_reference(agent: DeducerAgent, view: PlayerView, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:meth:`DeducerAgent.accusations` in numpy: the readable statement."""
    nb = agent.notebook
    env = nb.envelope_known(idx)
    solved = nb.solved(idx)
    unknown_as_first = np.maximum(env, A.CATEGORY_CARD0)  # -1 (unknown): any card; solved rows are exact
    action = A.ACCUSE0 + A.cards_triple(*unknown_as_first.T)
    legal = mask[np.arange(len(idx)), action]
    return np.where(solved & legal & (view.phase[idx] != A.REFUTE), action, -1)


def refute_reference(agent: DeducerAgent, view: PlayerView, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:meth:`DeducerAgent.refute` in numpy (:mod:`cluedo_env.agents.players.refutation`): the readable statement."""
    nb = agent.notebook
    legal = mask[:, A.SHOW0 : A.ACCUSE0]
    suggester = view.current[idx].astype(np.int64)
    seen = nb.shown_by_me[idx, suggester]  # (n, 21)
    to_others = nb.shown_by_me[idx].any(1) & ~seen
    left = suggester_candidates(nb, nb.marginals(idx), idx, suggester)
    return A.SHOW0 + choose_refutation(legal, seen, to_others, left, agent.rng)


def candidates_reference(agent: DeducerAgent, prob: np.ndarray, k: int, categories: int = 3) -> list[np.ndarray]:
    """:meth:`DeducerAgent._candidates` in numpy: the readable statement (it chooses all three
    categories whatever ``categories`` says; a caller that asks for two reads two)."""
    E = prob.shape[1] - 1
    u = h2(prob[:, E]) + 0.1 * _card_uncertainty(prob) + 1e-6 * agent.rng.random(prob.shape[::2])
    blank = (prob[:, agent.notebook.seat] > 0.999) | (prob[:, E] > 0.999)  # nobody can show it
    out = []
    for sl in CAT_SLICES:
        uc = u[:, sl]
        top = np.argsort(-uc, axis=1)[:, :k]
        b = np.where(blank[:, sl], agent.rng.random(uc.shape), -1.0).argmax(1)  # a blank if any (else a card)
        out.append(np.concatenate([top, b[:, None]], 1) + sl.start)
    return out


def goal_room_reference(agent: DeducerAgent, idx: np.ndarray, value: np.ndarray) -> np.ndarray:
    """:meth:`DeducerAgent._goal_room` in numpy: the readable statement."""
    n = len(idx)
    nb = agent.notebook
    solved = nb.solved(idx)
    if solved.any():
        env_room = nb.envelope_known(idx)[:, 2] - ROOM_CARD0
        goal = np.zeros((n, NUM_ROOMS))
        goal[np.arange(n), np.clip(env_room, 0, NUM_ROOMS - 1)] = 1.0
        value = np.where(solved[:, None], goal, value)
    return np.maximum(value, 0.0)
