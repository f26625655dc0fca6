"""The deducer's compiled choices and probabilities (agents/players/deducer_decisions.py: refutations, proved
accusations, the naive-player model's probabilities) equal their numpy statements (:mod:`references.deducer`:
``refute_reference``, ``accusations_reference``; ``DeducerAgent._probabilities``), decision by decision, random
numbers included, over whole games on each preset.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from call_tree import typed_call_tree
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.knowledge.opponent_model import assumed_bits
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.players.base import replace_illegal, suggestion_room
from cluedo_env.agents.players.deducer import DeducerAgent
from cluedo_env.agents.players.deducer_decisions import decision_rows_kernel
from cluedo_env.agents.players.expert import ExpertAgent
from cluedo_env.agents.players.refutation import choose_refutation, refute_kernel, suggester_candidates
from cluedo_env.agents.players.types import RefuteScratch
from helpers import config
from numba.core import types
from references.deducer import accusations_reference, goal_room_reference, refute_reference

from cluedo_env.rules import actions as A


class CheckedProbabilities:
    """Compiled probabilities (:meth:`DeducerAgent._probabilities_into`) checked bit for bit against the numpy
    statement (``_probabilities``), counting the rows where the opponent models added facts."""

    probability_rows = modelled = 0

    def _probabilities_into(self, view, idx, out):
        super()._probabilities_into(view, idx, out)
        ref = self._probabilities(view, idx)
        assert np.array_equal(out[idx], ref)  # bit for bit
        self.probability_rows += len(idx)
        opts = self.model_options(view, idx)
        self.modelled += int(assumed_bits(self.notebook, idx, view.config.has_board, **opts)[1].sum())
        return None


class CheckedExpert(CheckedProbabilities, ExpertAgent):
    """An expert whose deducer-side probabilities (naive-player and refuter models) are checked."""


class CheckedDeducer(CheckedProbabilities, DeducerAgent):
    """A deducer that answers with its compiled choices after checking them against the numpy statements."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.refutations = self.seen_choices = self.proved = 0
        self.goal_rooms = 0

    def refute(self, view, idx, mask):
        state = self.rng.bit_generator.state
        a = super().refute(view, idx, mask)
        after = self.rng.bit_generator.state
        self.rng.bit_generator.state = state
        b = refute_reference(self, view, idx, mask)
        assert np.array_equal(a, b), (idx[a != b], a[a != b], b[a != b])
        assert self.rng.bit_generator.state == after  # the same random numbers drawn
        legal = mask[:, A.SHOW0 : A.ACCUSE0]
        self.refutations += int((legal.sum(1) > 1).sum())  # a real choice between cards
        seen = self.notebook.shown_by_me[idx, view.current[idx].astype(np.int64)]
        self.seen_choices += int(((legal & seen).any(1) & (legal & ~seen).any(1)).sum())
        return a

    def _goal_room(self, idx, value):
        want = goal_room_reference(self, idx, value.copy())
        got = super()._goal_room(idx, value.copy())
        assert np.array_equal(got, want)
        self.goal_rooms += int(self.notebook.solved(idx).sum())
        return got

    def accusations(self, view, idx, mask):
        a = super().accusations(view, idx, mask)
        b = accusations_reference(self, view, idx, mask)
        assert np.array_equal(a, b), (idx[a != b], a[a != b], b[a != b])
        self.proved += int((a >= 0).sum())
        return a


SETTINGS = [("classic", 4, {}), ("classic", 6, {"accusation_in_room": True}), ("cards", 3, {}), ("cards", 5, {})]


@pytest.mark.parametrize(("preset", "players", "flags"), SETTINGS)
def test_compiled_refutations_and_accusations_equal_their_statements(preset, players, flags):
    cfg = config(preset, players=players, **flags)
    agents = [CheckedDeducer(seed=s) for s in range(players)]
    records = play_games(cfg, agents, 96, batch_size=32, seed=3)
    assert len(records) == 96
    assert sum(a.refutations for a in agents) > 20  # choices between several cards were compared
    if cfg.has_board:  # ... some between a card the suggester saw and one it did not (rare in the card game)
        assert sum(a.seen_choices for a in agents) > 0
    assert sum(a.proved for a in agents) > 0  # proved accusations were compared
    assert sum(a.modelled for a in agents) > 100  # probabilities where the naive-player model added facts
    assert sum(a.probability_rows for a in agents) > 500
    if cfg.accusation_in_room:  # R-A1: a proved solution is accused from its room, so its room is the goal
        assert sum(a.goal_rooms for a in agents) > 0


class TwinDeducer(DeducerAgent):
    """A deducer whose every action is decided twice: by the one-call path (:meth:`DeducerAgent._decision_args`)
    and, on a copy of it, by the Python steps it replaces; both must choose the same actions, draw the same random
    numbers and leave the same caches."""

    compiled_calls = 0

    def act(self, view, idx):
        assert self._compiled_decisions()
        twin = copy.deepcopy(self)
        twin._compiled_decisions = lambda: False  # the Python steps: accusations, refute, suggest, room values
        want = DeducerAgent.act(twin, view, idx)
        got = super().act(view, idx)
        assert np.array_equal(got, want), (np.asarray(idx)[got != want], got[got != want], want[got != want])
        assert self.rng.bit_generator.state == twin.rng.bit_generator.state
        assert self.notebook.rng.bit_generator.state == twin.notebook.rng.bit_generator.state
        if twin._rv is None:  # no room values yet (the card game has none): none in the one-call path either
            assert (self._rv_turn == -1).all()
        else:
            assert np.array_equal(self._rv, twin._rv) and np.array_equal(self._rv_turn, twin._rv_turn)
        if twin._pcache is None:  # no probabilities yet: none computed in the one-call path either
            assert (self._pcache[3] == -1).all()
        else:
            for a, b in zip(self._pcache[2:], twin._pcache[2:], strict=True):  # the probability cache, bit for bit
                assert np.array_equal(a, b)
        TwinDeducer.compiled_calls += 1
        return got


@pytest.mark.parametrize(("preset", "players", "options"), [("classic", 4, {}), ("classic", 3, {"shortlist": 2}),
                                                           ("cards", 4, {}), ("cards", 6, {"naive_model_rounds": 1.5}),
                                                           ("cards", 3, {"room_shortlist": 2}),
                                                           ("classic", 4, {"blocking_aware": True})])  # fmt: skip
def test_one_call_decisions_equal_the_python_steps(preset, players, options):
    """:func:`cluedo_env.agents.players.deducer_decisions.deducer_decisions_kernel` against the steps it stands for,
    over whole
    games
    (every kind of decision: proved accusations, refutations, suggestions, room values at START and MOVE)."""
    TwinDeducer.compiled_calls = 0
    cfg = config(preset, players=players)
    records = play_games(cfg, [TwinDeducer(seed=s, **options) for s in range(players)], 24, batch_size=12, seed=4)
    assert len(records) == 24 and TwinDeducer.compiled_calls > 50
    assert sum(r.winner >= 0 for r in records) > 12  # games were solved: proved accusations were decided


def test_subclasses_and_options_that_change_a_step_take_the_python_path():
    assert DeducerAgent(seed=0)._compiled_decisions()
    assert not DeducerAgent(seed=0, deal_weight=0.5)._compiled_decisions()
    assert not DeducerAgent(seed=0, naive_model=False)._compiled_decisions()
    assert not ExpertAgent(seed=0)._compiled_decisions()
    assert not CheckedDeducer(seed=0)._compiled_decisions()


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("cards", 4)])
def test_the_experts_compiled_probabilities_equal_their_statement(preset, players):
    """The expert's deducer-side probabilities take its refuter model and strong-table rule into the compiled
    path: bit for bit the numpy statement, at tables of experts and deducers (strong refuters)."""
    cfg = config(preset, players=players)
    agents = [CheckedExpert(seed=0), DeducerAgent(seed=1), CheckedExpert(seed=2), DeducerAgent(seed=3)][:players]
    play_games(cfg, agents, 48, batch_size=24, seed=5)
    checked = [a for a in agents if isinstance(a, CheckedExpert)]
    assert sum(a.probability_rows for a in checked) > 200
    assert sum(a.modelled for a in checked) > 20
    refuter_rows = sum(int(a.refuters.lacks.any((1, 2)).sum()) for a in checked)
    assert refuter_rows > 0  # the refuter model had facts to add


def test_compiled_refutation_equals_its_statement_on_random_notebooks():
    """Arbitrary notebook contents (many cards seen by the suggester or shown to others, several legal cards)."""
    rng = np.random.default_rng(5)
    B, P, n = 64, 4, 48
    nb = Notebook(B, P, seat=1)
    nb.has[:] = rng.random(nb.has.shape) < 0.15
    nb.no[:] = (rng.random(nb.no.shape) < 0.4) & ~nb.has
    nb.size[:] = rng.integers(3, 6, nb.size.shape)
    nb.shown_by_me[:] = rng.random(nb.shown_by_me.shape) < 0.2
    nb.shown_to[:] = rng.integers(0, 9, nb.shown_to.shape)
    idx = rng.choice(B, n, replace=False).astype(np.int64)
    suggester = rng.choice([0, 2, 3], n).astype(np.int64)
    mask = np.zeros((n, A.NUM_ACTIONS), bool)
    mask[:, A.SHOW0 : A.ACCUSE0] = rng.random((n, 21)) < 0.15
    mask[np.arange(n), A.SHOW0 + rng.integers(0, 21, n)] = True  # at least one card to show
    noise = rng.random((n, 21))
    out = np.empty(n, np.int64)
    scratch = RefuteScratch(np.empty((1, P + 1, 21)), np.empty((P + 1, 21)), np.empty((1, P + 1), np.int64),
                            np.empty((1, P + 1), np.int64))  # fmt: skip
    refute_kernel(nb.facts, nb.tallies, idx, suggester, mask, noise, out, scratch)
    seen = nb.shown_by_me[idx, suggester]
    to_others = nb.shown_by_me[idx].any(1) & ~seen
    left = suggester_candidates(nb, nb.marginals(idx), idx, suggester)
    ref = A.SHOW0 + choose_refutation(mask[:, A.SHOW0 : A.ACCUSE0], seen, to_others, left, _Fixed(noise))
    assert np.array_equal(out, ref)
    legal = mask[:, A.SHOW0 : A.ACCUSE0]
    assert ((legal & seen).any(1) & (legal & ~seen).any(1)).sum() > 5  # the seen-card rule was exercised
    chose_seen = seen[np.arange(n), out - A.SHOW0]
    assert chose_seen[(legal & seen).any(1)].all()  # a card the suggester has seen, whenever there is one


class _Fixed:
    """A stand-in generator whose ``random`` returns given numbers (the reference's tie-break noise)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def random(self, shape):
        assert tuple(shape) == self.values.shape
        return self.values


def test_suggestion_room_and_replace_illegal_on_hand_made_masks():
    mask = np.zeros((4, A.NUM_ACTIONS), bool)
    mask[0, A.SUGGEST0 + A.triple_index(2, 3, 5)] = True  # the room of the legal suggestions (R-G1)
    mask[0, A.SUGGEST0 + A.triple_index(4, 1, 5)] = True
    mask[1, A.ROLL] = True  # no suggestion legal
    mask[2, A.SUGGEST0 + A.triple_index(0, 0, 8)] = True
    mask[3, A.SUGGEST0] = True
    assert suggestion_room(mask).tolist() == [5, -1, 8, 0]
    rng = np.random.default_rng(0)
    out = np.array([A.SUGGEST0 + A.triple_index(2, 3, 5), A.ROLL, A.SUGGEST0 + A.triple_index(0, 0, 8), A.SUGGEST0])
    assert replace_illegal(out, mask, rng) == 0
    out[1] = A.END_TURN  # illegal: replaced by the one legal action
    out[3] = -1  # no action: replaced
    assert replace_illegal(out, mask, rng) == 2
    assert out[1] == A.ROLL and out[3] == A.SUGGEST0


def test_decision_rows_sort_games_by_what_is_left_to_decide():
    phase = np.array([A.START, A.POST, A.REFUTE, A.SUGGEST, A.MOVE, A.POST, A.REFUTE, A.SUGGEST], np.int8)
    accuse = np.array([-1, -1, -1, -1, -1, A.ACCUSE0 + 7, -1, A.ACCUSE0], np.int64)
    out, rows, counts = np.empty(8, np.int64), np.empty((3, 8), np.int64), np.empty(3, np.int64)
    decision_rows_kernel(phase, accuse, out, rows, counts)
    assert out.tolist() == [-1, A.END_TURN, -1, -1, -1, A.ACCUSE0 + 7, -1, A.ACCUSE0]  # an accusation comes first
    assert [rows[k, : counts[k]].tolist() for k in range(3)] == [[2, 6], [3], [0, 4]]


def test_the_decisions_compile_one_version_of_each_helper():
    """Numba compiles a function once per signature of its calls, and types a constant argument (a literal ``0``)
    as its own type: each helper the one-call decisions reach is typed for one signature (int64 rows and
    categories, not constants), except the versions that differ on purpose: the two scorings of a triple
    (``triple_value``, ``triple_bound``: exact or log-free, their flags folded in) and ``_same_columns`` of the
    room cards' constant row. Each extra version was up to a second more of every first compile."""
    from cluedo_env.agents.knowledge import suggestion_value
    from cluedo_env.agents.knowledge.facts import envelope_card, pack_cells
    from cluedo_env.agents.players import suggestion_choice

    agents = [DeducerAgent(seed=s) for s in range(4)]
    play_games(config("classic"), agents, 1, batch_size=2)
    tree = typed_call_tree(agents[0]._decisions.dispatcher, agents[0]._decisions.signature)
    two = {suggestion_value.envelope_triple_above, suggestion_value._seat_answers, suggestion_value._h2_or_below,
           suggestion_choice._same_columns}  # fmt: skip
    counts = {d.__name__: len(sigs) for d, sigs in tree.items() if len(sigs) > (2 if d in two else 1)}
    assert not counts, counts
    for helper in (envelope_card, pack_cells, suggestion_choice._same_columns):
        assert helper in tree and not any(isinstance(t, types.Literal) for sig in tree[helper] for t in sig), helper
