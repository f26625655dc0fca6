"""The players' compiled kernels (agents/knowledge/, agents/players/) compute what their numpy references compute.

The players' seeded results must not change when a numpy function is replaced by its kernel,
so each kernel is compared with the reference on positions from real games (and on those
positions with random extra cells, which makes contradictions and long propagations) and on
random inputs.
"""

from __future__ import annotations

import copy

import cluedo_env.agents.knowledge.notebook as notebook_module
import cluedo_env.agents.players.deducer as deducer_module
import numpy as np
import pytest
from cluedo_env.agents.knowledge import opponent_model
from cluedo_env.agents.knowledge.deal_sampling import (
    deal_weights,
    holder_weights,
    random_clause_order,
    sample_deals,
    triple_weights,
)
from cluedo_env.agents.knowledge.envelope_search import search_envelope, valid_deals
from cluedo_env.agents.knowledge.facts import POW2, FactBits, Facts, unpack
from cluedo_env.agents.knowledge.marginals import marginals
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.knowledge.notebook_propagation import permute_live
from cluedo_env.agents.knowledge.propagation import fixpoint_bits
from cluedo_env.agents.knowledge.refuter_model import RefuterModel
from cluedo_env.agents.knowledge.suggestion_value import envelope_information
from cluedo_env.agents.knowledge.witnesses import check_witnesses_kernel
from cluedo_env.agents.play.registry import make_agent
from cluedo_env.agents.play.runner import play_games
from cluedo_env.agents.players.deducer import DeducerAgent
from numba import njit
from references.deal_sampling import deal_weights_reference, sample_deals_reference
from references.deducer import candidates_reference, information_reference
from references.envelope_search import search_envelope_reference, valid_deals_reference
from references.marginals import marginals_reference
from references.notebook import add_records_reference, sample_witnesses_reference, update_reference
from references.opponent_model import assumed_facts_reference
from references.propagation import fixpoint_bits_reference
from references.refuter_model import update_reference as refuter_update_reference
from references.suggestion_value import envelope_information_reference

from cluedo_env.rules import actions as A
from cluedo_env.rules.config import RulesConfig


def _copy(bits: FactBits) -> FactBits:
    return FactBits(*(np.array(a, copy=True) for a in bits))


def _propagate_by_statement(self: Notebook, idx) -> None:
    """:meth:`Notebook.propagate` by its statement, :meth:`Notebook.propagate_steps`, whose steps (fixpoint, witness
    sampling) are Python calls a test can spy on; the one-call ``propagate_kernel`` is held to the statement by
    ``test_propagate_kernels_match_the_numpy_statement``."""
    idx = np.asarray(idx, np.int64)
    self.version[idx] += 1
    Notebook.propagate_steps(self, idx)


@pytest.fixture(scope="module")
def caught() -> tuple[list[FactBits], list[Facts]]:
    """The facts every notebook propagation saw, and those of the deals its witness sampling forced, in a few short
    deducer games (classic 4, cards 3 and 6 players)."""
    bits_seen: list[FactBits] = []
    facts_seen: list[Facts] = []
    fixpoint, sample = notebook_module.fixpoint_bits, notebook_module.sample_deals_bits

    def spy_fixpoint(bits: FactBits, *args, **kwargs) -> np.ndarray:
        bits_seen.append(_copy(bits))
        return fixpoint(bits, *args, **kwargs)

    def spy_sample(hb, nb, *args, **kwargs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        facts_seen.append(Facts(unpack(hb), unpack(nb), *(np.array(a, copy=True) for a in args[:6])))
        return sample(hb, nb, *args, **kwargs)

    witness = Notebook._sample_witnesses

    def spy_witness(self: Notebook, idx, bits: FactBits, unknown, valid) -> int:
        """The facts of the forced deals the witness sampling draws (one row per open cell without a witness)."""
        rows, cards = np.nonzero(unknown & ~valid)
        if len(rows):
            gi = idx[rows]
            hb = bits.hb[rows].copy()
            hb[:, self.E] |= POW2[cards]
            facts_seen.append(Facts(unpack(hb), unpack(bits.nb[rows]), *(np.array(a, copy=True) for a in (
                bits.size[rows], self.cl_holder[gi], self.cl_cards[gi], bits.cl_live[rows], self.acc_cards[gi],
                bits.acc_live[rows]))))  # fmt: skip
        return witness(self, idx, bits, unknown, valid)

    propagate = Notebook.propagate
    notebook_module.fixpoint_bits, notebook_module.sample_deals_bits = spy_fixpoint, spy_sample
    Notebook._sample_witnesses, Notebook.propagate = spy_witness, _propagate_by_statement
    try:
        for preset, players in (("classic", 4), ("cards", 3), ("cards", 6)):
            config = RulesConfig.from_preset(preset, players=players, max_turns=60)
            play_games(config, [make_agent("deducer", seed=s) for s in range(players)], 16, batch_size=16, seed=3)
    finally:
        notebook_module.fixpoint_bits, notebook_module.sample_deals_bits = fixpoint, sample
        Notebook._sample_witnesses, Notebook.propagate = witness, propagate
    return bits_seen, facts_seen


def test_fixpoint_kernel_matches_reference(caught: tuple[list[FactBits], list[Facts]]) -> None:
    positions = caught[0]
    rng = np.random.default_rng(0)
    contradictions = 0
    for bits in positions:
        for extra in (0.0, 0.03):
            start = _copy(bits)
            n, H = start.hb.shape
            start.nb[:] |= (rng.random((n, H, 21)) < extra) @ POW2
            start.hb[:] |= (rng.random((n, H, 21)) < extra / 5) @ POW2
            got, want = _copy(start), _copy(start)
            bad = fixpoint_bits(got)
            assert (bad == fixpoint_bits_reference(want)).all()
            for a, b in zip(got, want, strict=True):
                assert (a == b).all()
            contradictions += int(bad.sum())
    assert contradictions > 0  # the perturbed positions did exercise the contradiction checks


@pytest.mark.parametrize("players", [3, 4, 6])
def test_marginals_kernel_matches_reference(players: int) -> None:
    rng = np.random.default_rng(players)
    n, H = 300, players + 1
    has = rng.random((n, H, 21)) < 0.1
    no = (rng.random((n, H, 21)) < 0.4) & ~has
    size = rng.integers(1, 7, (n, H))
    size[:, -1] = 3
    assert (marginals(has, no, size) == marginals_reference(has, no, size)).all()


@pytest.mark.parametrize("players", [3, 4, 6])
@pytest.mark.parametrize("refute_all", [False, True])
@pytest.mark.parametrize("see_card", [True, False])
def test_envelope_information_kernel_matches_reference(players: int, refute_all: bool, see_card: bool) -> None:
    """Same operations in the same order: only numpy's vectorised log2 differs from the C library's, by an ulp."""
    rng = np.random.default_rng(players)
    n, T, H = 100, 36, players + 1
    prob = rng.random((n, H, 21))
    prob[rng.random(prob.shape) < 0.3] = 0.0
    prob[rng.random(prob.shape) < 0.05] = 1.0
    prob /= np.maximum(prob.sum(1, keepdims=True), 1e-9)
    cards = np.stack([rng.integers(0, 6, (n, T)), rng.integers(6, 12, (n, T)), rng.integers(12, 21, (n, T))], -1)
    order = np.broadcast_to((1 + np.arange(1, players)) % players, (n, players - 1))
    got = envelope_information(prob, cards, order, refute_all, see_card)
    want = envelope_information_reference(prob, cards, order, refute_all, see_card)
    assert np.abs(got - want).max() < 1e-13
    assert (got == want).mean() > 0.95


@pytest.mark.parametrize("clauses_first", [True, False])
def test_sample_deals_kernel_matches_reference(caught: tuple[list[FactBits], list[Facts]], clauses_first: bool) -> None:
    """Same deals, weights and survivors from the same generator, which ends in the same state (the kernel draws
    from it directly, numba's calls on the same bit generator)."""
    positions = caught[1]
    assert len(positions) > 10
    for k, facts in enumerate(positions):
        rng_got, rng_want = np.random.default_rng(k), np.random.default_rng(k)
        if k % 3 == 0:  # a half-used 32-bit buffer, which random() leaves alone
            assert rng_got.integers(0, 10, dtype=np.int32) == rng_want.integers(0, 10, dtype=np.int32)
        samples = 4 if k % 2 else 16
        got = sample_deals(facts, samples, rng_got, clauses_first=clauses_first)
        want = sample_deals_reference(facts, samples, rng_want, clauses_first=clauses_first)
        for a, b in zip(got, want, strict=True):
            assert (a == b).all()
        assert rng_got.bit_generator.state == rng_want.bit_generator.state
        assert rng_got.integers(0, 1 << 30, dtype=np.int32) == rng_want.integers(0, 1 << 30, dtype=np.int32)


def test_valid_deals_kernel_matches_reference(caught: tuple[list[FactBits], list[Facts]]) -> None:
    """Sampled deals (some consistent, some not) are judged the same; so are random deals."""
    rng = np.random.default_rng(1)
    for facts in caught[1][:60]:
        owner, _, alive = sample_deals(facts, 8, rng)
        n, H = facts.has.shape[:2]
        noise = rng.integers(0, H, owner.shape).astype(np.int8)
        for deals in (owner, np.where(rng.random(owner.shape) < 0.1, noise, owner)):
            got = valid_deals(deals, facts)
            assert (got == valid_deals_reference(deals, facts)).all()
        assert (valid_deals(owner, facts) | ~alive).all()


def _notebook_arrays(nb: Notebook) -> dict[str, np.ndarray]:
    return {k: np.array(v, copy=True) for k, v in vars(nb).items() if isinstance(v, np.ndarray) and k[0] != "_"}


def _assert_same_notebooks(got: Notebook, want: Notebook) -> None:
    """Every public array of two notebooks equal (shapes included), and their random streams in the same state."""
    a, b = _notebook_arrays(got), _notebook_arrays(want)
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].shape == b[k].shape and (a[k] == b[k]).all(), k
    assert got.rng.bit_generator.state == want.rng.bit_generator.state


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("cards", 3), ("cards", 6)])
def test_add_records_kernel_matches_reference(preset: str, players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The notebook's compiled record intake leaves every array as the numpy statement does (clause slots included)."""
    calls = [0]
    kernel = Notebook.add_records

    def both(self: Notebook, rec):
        twin = copy.deepcopy(self)
        got = kernel(self, rec)
        want = add_records_reference(twin, rec)
        assert (got == want).all()
        _assert_same_notebooks(self, twin)  # (no random numbers are drawn here: the states stay equal)
        calls[0] += int(len(rec.game) > 0)
        return got

    monkeypatch.setattr(Notebook, "add_records", both)
    monkeypatch.setattr(Notebook, "update", update_reference)  # the path that calls add_records
    config = RulesConfig.from_preset(preset, players=players, max_turns=80)
    play_games(config, [make_agent("deducer", seed=s) for s in range(players)], 24, batch_size=12, seed=5)
    assert calls[0] > 20


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("cards", 3), ("cards", 6)])
def test_update_in_one_call_matches_its_statement(preset: str, players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The notebook's one-call intake (:func:`intake_kernel`: records, records taken in, the envelope seen, the games
    to propagate) leaves every array and random stream as :func:`references.notebook.update_reference` does, game
    orders that are not sorted included."""
    calls = [0, 0]
    kernel = Notebook.update

    def both(self: Notebook, view, idx):
        idx = np.asarray(idx, np.int64)
        if calls[0] % 3 == 2:  # now and then the games in another order: the propagation's order is still sorted
            idx = idx[::-1].copy()
        twin = copy.deepcopy(self)
        kernel(self, view, idx)
        update_reference(twin, view, idx)
        _assert_same_notebooks(self, twin)
        calls[0] += 1
        calls[1] += int((self.has[idx, self.E].sum(1) == 3).any())  # some envelope proved or seen
        return None

    monkeypatch.setattr(Notebook, "update", both)
    config = RulesConfig.from_preset(preset, players=players, max_turns=80)
    play_games(config, [make_agent("deducer", seed=s) for s in range(players)], 24, batch_size=12, seed=5)
    assert calls[0] > 20 and calls[1] > 0


@pytest.mark.parametrize(("preset", "players", "options"), [("classic", 4, {}), ("cards", 3, {}),
                                                           ("cards", 5, {"exact_triples": None}),
                                                           ("cards", 4, {"exact": False})])  # fmt: skip
def test_propagate_kernels_match_the_numpy_statement(preset: str, players: int, options: dict,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The notebook's compiled propagation (packing, fixpoint, the envelope cells to decide, stored witnesses, the
    write-back) leaves every array, and the random stream, as :meth:`Notebook.propagate_steps` does."""
    calls = [0, 0]
    kernel = Notebook.propagate

    def both(self: Notebook, idx):
        twin = copy.deepcopy(self)
        kernel(self, idx)
        twin.version[np.asarray(idx, np.int64)] += 1
        Notebook.propagate_steps(twin, idx)
        _assert_same_notebooks(self, twin)
        calls[0] += 1
        calls[1] += int(self.wvalid[idx].any()) if self.exact else 1
        return None

    monkeypatch.setattr(Notebook, "propagate", both)
    config = RulesConfig.from_preset(preset, players=players, max_turns=80)
    agents = [DeducerAgent(seed=s, notebook_options=options) for s in range(players)]
    play_games(config, agents, 24, batch_size=12, seed=5)
    assert calls[0] > 20 and calls[1] > 5  # witnesses were stored and checked


@pytest.mark.parametrize(("preset", "players", "samples"), [("classic", 4, 4), ("cards", 3, 4), ("cards", 6, 2)])
def test_witness_sampling_kernels_match_the_numpy_statement(preset: str, players: int, samples: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The compiled witness sampling (the cells to witness, the forced deals, clauses first, the registration) stores
    the same witnesses, and draws the same random numbers, as :func:`references.notebook.sample_witnesses_reference`.

    The notebooks propagate by :meth:`Notebook.propagate_steps` here, the path that calls ``_sample_witnesses``;
    the one-call ``propagate_kernel`` is held to that statement by the test above."""
    calls = [0, 0]

    kernel = Notebook._sample_witnesses

    def both(self: Notebook, idx, bits, unknown, valid):
        twin, twin_valid = copy.deepcopy(self), valid.copy()
        left = kernel(self, idx, bits, unknown, valid)
        want = sample_witnesses_reference(twin, idx, bits, unknown, twin_valid)
        assert left == want
        assert (valid == twin_valid).all()
        assert (self.witness == twin.witness).all()
        assert self.rng.bit_generator.state == twin.rng.bit_generator.state
        calls[0] += 1
        calls[1] += int(self.cl_live[idx].any())  # clauses were satisfied first
        return left

    monkeypatch.setattr(Notebook, "_sample_witnesses", both)
    monkeypatch.setattr(Notebook, "propagate", _propagate_by_statement)
    config = RulesConfig.from_preset(preset, players=players, max_turns=80)
    agents = [DeducerAgent(seed=s, notebook_options={"witness_samples": samples}) for s in range(players)]
    play_games(config, agents, 24, batch_size=12, seed=5)
    assert calls[0] > 20 and calls[1] > 5


@njit
def _permute_live(rng: np.random.Generator, live: np.ndarray, out: np.ndarray) -> int:
    """``permute_live`` called from Python: the players' inline helpers are compiled for their kernels only."""
    return permute_live(rng, live, out)


def test_clause_order_in_the_kernel_is_numpys_permutation() -> None:
    """``permute_live`` (the fused propagation's clause order) gives :func:`random_clause_order`'s order from the same
    random numbers, and leaves the generator where numpy's ``permutation`` leaves it (none drawn for 0 or 1 slots)."""
    masks = np.random.default_rng(3)
    for seed in range(200):
        K = int(masks.integers(1, 40))
        live = masks.random(K) < masks.random()
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        out = np.empty(K, np.int64)
        m = _permute_live(a, live, out)
        assert out[:m].tolist() == random_clause_order(b, live).tolist()
        assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("players", [3, 4, 6])
@pytest.mark.parametrize("k", [1, 3])
def test_candidates_kernel_matches_reference(players: int, k: int) -> None:
    """The deducer's shortlist of cards per category: the same cards in the same order, from the same random numbers."""
    rng = np.random.default_rng(players + 10 * k)
    n, H = 200, players + 1
    prob = rng.random((n, H, 21))
    prob[rng.random(prob.shape) < 0.4] = 0.0
    prob /= np.maximum(prob.sum(1, keepdims=True), 1e-9)
    known = rng.random((n, 21)) < 0.3  # some cards certainly ours or the envelope's: blanks
    holder = np.where(rng.random((n, 21)) < 0.5, 0, H - 1)
    prob.transpose(0, 2, 1)[known] = 0.0
    r, c = np.nonzero(known)
    prob[r, holder[r, c], c] = 1.0
    got_agent, want_agent = DeducerAgent(seed=players), DeducerAgent(seed=players)
    for a in (got_agent, want_agent):
        a.notebook = Notebook(n, players, 0)
    got = got_agent._candidates(prob, k)
    want = candidates_reference(want_agent, prob, k)
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape == (n, k + 1) and (a == b).all()
    assert got_agent.rng.random() == want_agent.rng.random()
    # Suspects and weapons only (the room values): the same two rows, and the same numbers drawn.
    got = got_agent._candidates(prob, k, categories=2)
    want = candidates_reference(want_agent, prob, k)
    for a, b in zip(got[:2], want[:2], strict=True):
        assert (a == b).all()
    assert got_agent.rng.random() == want_agent.rng.random()


def test_check_witnesses_kernel_matches_valid_deals(caught: tuple[list[FactBits], list[Facts]]) -> None:
    """The notebook's in-place witness check judges stored deals as :func:`valid_deals` does."""
    rng = np.random.default_rng(2)
    for facts in caught[1][:60]:
        owner, _, _ = sample_deals(facts, 21, rng)  # one deal per witness row
        n, H = facts.has.shape[:2]
        noise = rng.integers(0, H, owner.shape).astype(np.int8)
        deals = np.where(rng.random(owner.shape) < 0.05, noise, owner)
        want = valid_deals(deals, facts)
        valid = rng.random((n, 21)) < 0.7
        idx = rng.permutation(n)  # the kernel reads witnesses and clauses at idx, cells and live flags by row
        witness, cl_holder, cl_cards, acc_cards = (np.empty_like(a) for a in (deals, *facts[3:5], facts.acc_cards))
        witness[idx], cl_holder[idx], cl_cards[idx], acc_cards[idx] = (
            deals,
            facts.cl_holder,
            facts.cl_cards,
            facts.acc_cards,
        )
        got = valid.copy()
        check_witnesses_kernel(
            idx, facts.bits().nb, cl_holder.astype(np.int64), cl_cards.astype(np.int64), facts.cl_live,
            acc_cards.astype(np.int64), facts.acc_live, witness, got,
        )  # fmt: skip
        assert (got == (valid & want)).all()


def _decisions(preset: str, players: int, player: str, **overrides) -> list[np.ndarray]:
    config = RulesConfig.from_preset(preset, players=players, max_turns=120, **overrides)
    agents = [make_agent(player, seed=s) for s in range(players)]
    seen: list[np.ndarray] = []
    for agent in agents:
        act = agent.act

        def logged(view, idx, _act=act):
            out = _act(view, idx)
            seen.append(np.concatenate([idx, out]))
            return out

        agent.act = logged
    play_games(config, agents, 48, batch_size=16, seed=11)
    return seen


def _assumed_bits_reference(nb, idx, has_board, allow=None, extra_no=None, naive=True, **kwargs):
    """:func:`opponent_model.assumed_bits` through the numpy statement."""
    facts, used = assumed_facts_reference(nb, idx, has_board, allow, extra_no, naive, **kwargs)
    return facts.bits(), used


@pytest.mark.parametrize(("preset", "players"), [("classic", 4), ("cards", 4), ("cards", 3)])
def test_assumed_facts_kernel_matches_reference(preset: str, players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled opponent model (:func:`opponent_model.assumed_bits`) gives the facts and ``used`` flags of
    :func:`references.opponent_model.assumed_facts_reference` at every call of seeded games (naive-player model, the
    expert's refuter model and its rounds), at naive and strong tables."""
    calls = [0, 0, 0]
    kernel = opponent_model.assumed_bits

    def both(nb, idx, has_board, allow=None, extra_no=None, naive=True, **kwargs):
        bits, used = kernel(nb, idx, has_board, allow, extra_no, naive, **kwargs)
        want, want_used = assumed_facts_reference(nb, idx, has_board, allow, extra_no, naive, **kwargs)
        got = bits.facts(nb.cl_cards[idx], nb.acc_cards[idx])
        assert (used == want_used).all()
        for a, b in zip(got, want, strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype and (a == b).all()
        for a, b in zip(bits, want.bits(), strict=True):  # the packed arrays too (masks, dtypes)
            assert a.dtype == b.dtype and (a == b).all()
        calls[0] += 1
        calls[1] += int(used.sum())
        if kwargs.get("refuters") is not None:  # rows where a refuter's choice adds a fact
            lacks, deviant = kwargs["refuters"]
            calls[2] += int((lacks[idx] & ~nb.no[idx, : nb.P] & ~nb.has[idx, : nb.P]).any((1, 2)).sum())
        return bits, used

    monkeypatch.setattr(deducer_module, "assumed_bits", both)
    config = RulesConfig.from_preset(preset, players=players, max_turns=80)
    names = ["expert", "deducer", "heuristic", "expert"][:players]
    play_games(config, [make_agent(n, seed=s) for s, n in enumerate(names)], 32, batch_size=16, seed=7)
    assert calls[0] > 20 and calls[1] > 20 and calls[2] > 0


def test_refuter_model_kernel_matches_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled refuter model (:meth:`RefuterModel.update`) leaves the arrays
    :func:`references.refuter_model.update_reference` leaves, at every call of seeded games (experts against
    deducers: strong refuters, facts found, deviants too)."""
    seen = [0, 0]
    compiled = RefuterModel.update

    def both(self, view, idx, shown_by_me=None):
        twin = copy.deepcopy(self)
        compiled(self, view, idx, shown_by_me)
        refuter_update_reference(twin, view, idx, shown_by_me)
        for name in ("processed", "shown", "received", "lacks", "deviant"):
            assert (getattr(self, name) == getattr(twin, name)).all(), name
        seen[0] += int(self.lacks.sum())
        seen[1] += int(self.deviant.sum())

    monkeypatch.setattr(RefuterModel, "update", both)
    for preset, players, names in [("cards", 4, ["expert", "deducer", "deducer", "heuristic"]),
                                   ("classic", 3, ["expert", "expert", "notebook"]),
                                   ("cards", 5, ["expert", "deducer", "notebook", "expert", "heuristic"])]:  # fmt: skip
        config = RulesConfig.from_preset(preset, players=players, max_turns=80)
        play_games(config, [make_agent(n, seed=s) for s, n in enumerate(names)], 32, batch_size=16, seed=5)
    assert seen[0] > 0 and seen[1] > 0  # deviants are rare: seed 5 has some (seed 3 none since the accusation screen)


@pytest.mark.parametrize(
    ("preset", "players", "player", "overrides"),
    [("classic", 4, "deducer", {}), ("cards", 4, "deducer", {}), ("cards", 5, "deducer", {"refutation": "all"}),
     ("classic", 3, "expert", {}), ("cards", 4, "expert", {})],
)  # fmt: skip
def test_compiled_player_paths_play_as_the_numpy_statements(
    preset: str, players: int, player: str, overrides: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded games take the same decisions with the compiled suggestion, room value, candidate and record
    paths as with their numpy statements."""
    fast = _decisions(preset, players, player, **overrides)
    monkeypatch.setattr(DeducerAgent, "_envelope_only", lambda self, view, idx: False)
    monkeypatch.setattr(DeducerAgent, "_candidates", candidates_reference)
    monkeypatch.setattr(Notebook, "add_records", add_records_reference)
    monkeypatch.setattr(deducer_module, "information", information_reference)
    monkeypatch.setattr(deducer_module, "assumed_bits", _assumed_bits_reference)
    # no probability cache: computed at every call
    monkeypatch.setattr(DeducerAgent, "probabilities", lambda self, view, idx: self._probabilities(view, idx))
    slow = _decisions(preset, players, player, **overrides)
    assert len(fast) == len(slow) > 50
    for a, b in zip(fast, slow, strict=True):
        assert a.shape == b.shape and (a == b).all()


def test_holder_and_triple_weights_match_bincount() -> None:
    """The expert's sums over sampled deals: the same numbers as np.bincount (same order of additions)."""
    rng = np.random.default_rng(4)
    for H in (4, 5, 7):
        n, M, C, E = 30, 64, 21, H - 1
        owner = rng.integers(-1, H, (n, M, C)).astype(np.int8)
        w = rng.random((n, M)) * (rng.random((n, M)) < 0.8)
        holder = np.maximum(owner, 0)
        flat = ((np.arange(n)[:, None, None] * H + holder) * C + np.arange(C)).ravel()
        want = np.bincount(flat, weights=np.repeat(w, C), minlength=n * H * C).reshape(n, H, C)
        assert (holder_weights(owner, w, H) == want).all()
        env = owner == E
        t = A.triple_index(env[..., :6].argmax(-1), env[..., 6:12].argmax(-1), env[..., 12:].argmax(-1))
        flat = (np.arange(n)[:, None] * A.NUM_TRIPLES + t).ravel()
        want = np.bincount(flat, weights=w.ravel(), minlength=n * A.NUM_TRIPLES).reshape(n, A.NUM_TRIPLES)
        assert (triple_weights(owner, w, E) == want).all()


@pytest.mark.parametrize("players", [3, 4, 6])
@pytest.mark.parametrize("refute_all", [False, True])
def test_deal_information_kernel_matches_reference(players: int, refute_all: bool) -> None:
    """The whole-deal information (the expert's bonus against strong tables): the numpy statement's values up to the
    order of its sums (matrix products)."""
    rng = np.random.default_rng(players)
    n, T, H = 100, 36, players + 1
    prob = rng.random((n, H, 21))
    prob[rng.random(prob.shape) < 0.3] = 0.0
    prob[rng.random(prob.shape) < 0.05] = 1.0
    prob /= np.maximum(prob.sum(1, keepdims=True), 1e-9)
    cards = np.stack([rng.integers(0, 6, (n, T)), rng.integers(6, 12, (n, T)), rng.integers(12, 21, (n, T))], -1)
    order = np.broadcast_to((1 + np.arange(1, players)) % players, (n, players - 1))
    got = deducer_module.information(prob, cards, order, refute_all)
    want = information_reference(prob, cards, order, refute_all)
    assert np.abs(got - want).max() < 1e-13


@pytest.mark.parametrize("players", [3, 4, 6])
@pytest.mark.parametrize("refute_all", [False, True])
def test_best_suggestion_and_room_values_skip_only_losers(players: int, refute_all: bool) -> None:
    """The suggestion and room-value kernels skip triples by bounds (prior entropy, log-free entropy lower
    bounds, partial sums); they must still return exactly the best of the full scores, ties included."""
    from cluedo_env.agents.players.suggestion_choice import best_suggestion_kernel, room_values_kernel

    from cluedo_env.rules.cards import ROOM_CARD0 as _R0
    from cluedo_env.rules.cards import WEAPON_CARD0 as _W0

    rng = np.random.default_rng(10 + players)
    n, H, K = 400, players + 1, players - 1
    prob = rng.random((n, H, 21))
    prob[rng.random(prob.shape) < 0.3] = 0.0
    prob[rng.random(prob.shape) < 0.05] = 1.0
    prob /= np.maximum(prob.sum(1, keepdims=True), 1e-9)
    prob[: n // 4, :, 1] = prob[: n // 4, :, 0]  # equal cards: exactly tied triples (scored once, bounded once)
    prob[: n // 4, :, 2] = prob[: n // 4, :, 0]
    prob[: n // 4, :, _W0 + 1] = prob[: n // 4, :, _W0]
    prob[: n // 4, :, [_R0 + 4, _R0 + 7]] = prob[: n // 4, :, _R0 + 2, None]  # equal rooms: one room value, copied
    cs = np.stack([rng.permutation(6)[:4] for _ in range(n)])
    cs[: n // 4, :3] = [0, 1, 2]
    cw = np.stack([_W0 + rng.permutation(6)[:4] for _ in range(n)])
    cw[: n // 4, 1:3] = [_W0 + 1, _W0]
    cr = np.stack([_R0 + rng.permutation(9)[:4] for _ in range(n)])
    order = np.ascontiguousarray(np.broadcast_to((1 + np.arange(1, players)) % players, (n, K)))
    legal = rng.random((n, 324)) < 0.8
    noise = rng.random((n, 64))
    noise[: n // 8] = 0.5  # equal noise: ties go to the first triple in order
    pre = np.empty((3 * K + 2, 21))
    best = np.empty(n, np.int64)
    best_suggestion_kernel(prob, cs, cw, cr, order, refute_all, legal, noise, best, pre, np.empty(2 * 64),
                           np.empty((3, 4), np.int64))  # fmt: skip
    cards = np.stack([np.repeat(cs, 16, 1), np.tile(np.repeat(cw, 4, 1), (1, 4)), np.tile(cr, (1, 16))], -1)
    score = envelope_information(prob, cards, order, refute_all, True) + 1e-9 * noise
    t = A.cards_triple(cards[..., 0], cards[..., 1], cards[..., 2])
    score = np.where(legal[np.arange(n)[:, None], t], score, -np.inf)
    want = np.where(np.isfinite(score.max(1)), t[np.arange(n), score.argmax(1)], -1)
    assert (best == want).all()

    values = np.empty((n, 9))
    room_values_kernel(prob, cs, cw, order, refute_all, values, pre, np.empty((3, 9), np.int64))
    rooms = np.arange(_R0, 21)
    pairs = np.stack([np.repeat(cs, 4, 1), np.tile(cw, (1, 4))], -1)  # (n, 16, 2)
    for r in range(9):
        triples = np.concatenate([pairs, np.full((n, 16, 1), rooms[r])], -1)
        assert (values[:, r] == envelope_information(prob, triples, order, refute_all, True).max(1)).all()


@pytest.fixture(scope="module")
def searches() -> list[tuple[FactBits, np.ndarray, dict]]:
    """The inputs of every envelope search the notebooks ran in a few deducer games (cards 3 and 5, classic 4; no
    witness sampling, so the search decides every open cell)."""
    seen: list[tuple[FactBits, np.ndarray, dict]] = []
    search = notebook_module.search_envelope

    def spy(facts, query=None, max_rounds=400, rng=None):
        seen.append((_copy(facts), np.array(query, copy=True), rng.bit_generator.state))
        return search(facts, query=query, max_rounds=max_rounds, rng=rng)

    mp = pytest.MonkeyPatch()
    mp.setattr(notebook_module, "search_envelope", spy)
    try:
        for preset, players in [("cards", 3), ("cards", 5), ("classic", 4)]:
            config = RulesConfig.from_preset(preset, players=players, max_turns=80)
            agents = [make_agent("deducer", seed=s, notebook_options={"witness_samples": 0}) for s in range(players)]
            play_games(config, agents, 24, batch_size=12, seed=9)
    finally:
        mp.undo()
    return seen


@pytest.mark.parametrize("max_rounds", [400, 3])
def test_search_envelope_kernel_matches_reference(searches, max_rounds: int) -> None:
    """The compiled envelope search decides, witnesses and proves what the numpy statement does, from the same random
    numbers (the generator ends in the same state), on every search of real games; with 3 rounds, queries stay open
    (undecided) too."""
    assert len(searches) > 20
    proved = opened = witnessed_cells = 0
    for facts, query, state in searches:
        got_facts, want_facts = _copy(facts), _copy(facts)
        rng_a, rng_b = np.random.default_rng(), np.random.default_rng()
        rng_a.bit_generator.state = rng_b.bit_generator.state = state
        got = search_envelope(got_facts, query=query, max_rounds=max_rounds, rng=rng_a)
        want = search_envelope_reference(want_facts, query=query, max_rounds=max_rounds, rng=rng_b)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype and (a == b).all()
        assert (got_facts.nb == want_facts.nb).all() and (got_facts.hb == facts.hb).all()
        assert rng_a.bit_generator.state == rng_b.bit_generator.state
        proved += int((got_facts.nb != facts.nb).sum())
        opened += int((~got[0]).sum())
        witnessed_cells += int(got[2].sum())
    assert proved > 0 and witnessed_cells > 0
    if max_rounds == 3:
        assert opened > 0


def test_deal_weights_kernel_matches_reference() -> None:
    """Importance weights from proposal probabilities: the compiled loop and the numpy statement give the same bits,
    a game with no live deal weighs nothing, and each game's weights sum to 1."""
    rng = np.random.default_rng(3)
    for n, M in ((1, 1), (5, 4), (40, 64), (7, 128)):
        q = np.exp(-rng.random(n * M) * 60.0)
        alive = rng.random(n * M) < 0.7
        alive[:M] = False  # the first game: every deal dead
        got = deal_weights(q, alive, n, M)
        want = deal_weights_reference(q, alive, n, M)
        assert (got == want).all()
        assert (got[0] == 0).all()
        live = alive.reshape(n, M).any(1)
        assert np.allclose(got[live].sum(1), 1.0)
        assert (got[~alive.reshape(n, M)] == 0).all()
        best = np.where(alive.reshape(n, M), q.reshape(n, M), np.inf).argmin(1)  # the likeliest proposal weighs most
        assert (got[live].argmax(1) == best[live]).all()
