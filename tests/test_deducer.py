"""The deducer's notebook (agents/knowledge/notebook.py, its reasoning in agents/knowledge/propagation.py), the deducer
and the expert.

* soundness: on thousands of positions of real games, no fact contradicts the hidden deal;
* hand-made positions, one per inference rule, with the exact conclusions;
* completeness against brute-force enumeration (scripts/deducer_completeness.py);
* the players: always legal, never a wrong accusation from the deducer, decisions blind to
  hidden cards, and strength (deducer >> random, deducer >> heuristic, expert >= deducer).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import cluedo_env.agents.knowledge.deal_sampling as deal_sampling_module
import cluedo_env.agents.knowledge.facts as facts_module
import cluedo_env.agents.knowledge.notebook as notebook_module
import cluedo_env.agents.knowledge.opponent_model as opponent_model
import cluedo_env.agents.knowledge.propagation as deduction_module
import cluedo_env.agents.players.deducer as deducer_module
import cluedo_env.agents.players.expert as expert_module
import numpy as np
import pytest
from cluedo_env.agents.knowledge.deal_oracle import enumerate_deals
from cluedo_env.agents.knowledge.deal_sampling import sample_deals
from cluedo_env.agents.knowledge.facts import Facts
from cluedo_env.agents.knowledge.notebook import Notebook
from cluedo_env.agents.knowledge.propagation import fixpoint
from cluedo_env.agents.knowledge.refuter_model import RefuterModel
from cluedo_env.agents.knowledge.suggestion_value import envelope_information, public_information
from cluedo_env.agents.play.runner import play_games, seat_actions
from cluedo_env.agents.players.base import Agent
from cluedo_env.agents.players.deducer import DeducerAgent, information
from cluedo_env.agents.players.expert import ExpertAgent
from cluedo_env.agents.players.random_player import RandomAgent
from helpers import ENVELOPE, HANDS4, LegalityChecked, config, position, swap_hidden

from cluedo_env.engine.reference import Game
from cluedo_env.engine.state import ACCUSATION
from cluedo_env.engine.vector_engine import VectorEngine
from cluedo_env.engine.views import PlayerView
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import CARD_NAMES, ROOM_CARD0, card_id

ROOT = Path(__file__).resolve().parents[1]


from scripts import deducer_completeness as completeness  # noqa: E402

RandomSuggester = completeness.RandomSuggester


def _truth(eng: VectorEngine) -> np.ndarray:
    """(B, P + 1, 21) the true holder of every card (the test may read hidden state; players may not)."""
    P = eng.P
    holder = np.where(eng.owner < 0, P, eng.owner).astype(np.int64)
    out = np.zeros((eng.batch_size, P + 1, 21), bool)
    out[np.arange(eng.batch_size)[:, None], holder, np.arange(21)[None, :]] = True
    return out


def _play(eng: VectorEngine, views, agents, steps: int, check=None) -> dict:
    """Step a batch (autoreset) with ``agents``; call ``check()`` after each step; count accusations per seat."""
    stats = {"accusations": np.zeros(eng.P, int), "wrong": np.zeros(eng.P, int)}
    for _ in range(steps):
        actions = seat_actions(eng, agents, views)
        accusing = np.flatnonzero(actions >= A.ACCUSE0)
        seats, hl = eng.current[accusing].astype(int), eng.hist_len[accusing].astype(int)
        eng.step(actions)
        for g, s, h in zip(accusing, seats, hl, strict=True):
            stats["accusations"][s] += 1
            stats["wrong"][s] += int(not eng.hist_correct[g, h])
        # autoreset put new games in finished slots: tell the players.
        fresh = np.flatnonzero(eng.hist_len == 0)
        for agent, view in zip(agents, views, strict=True):
            nb = getattr(agent, "notebook", None)
            stale = np.flatnonzero(nb.processed > eng.hist_len) if nb is not None else fresh
            redo = np.union1d(fresh[eng.turn_count[fresh] == 0], stale)
            if len(redo):
                agent.reset(view, redo)
        if check is not None:
            check()
    return stats


# ================================================================= soundness
@pytest.mark.parametrize(("preset", "players"), [("cards", 4), ("seed000", 5), ("classic", 3)])
def test_notebook_facts_never_contradict_the_hidden_deal(preset, players):
    """Thousands of positions: every has / has-not fact of every notebook agrees with the true deal."""
    cfg = config(preset, players=players, max_turns=200)
    B = 32
    eng = VectorEngine(cfg, B, autoreset=True)
    eng.reset(11)
    views = [PlayerView(eng, s) for s in range(players)]
    agents: list[Agent] = [
        DeducerAgent(seed=1, notebook_options={"exact_triples": None}),  # exact envelope facts everywhere
        ExpertAgent(seed=2),
        RandomSuggester(3, p_accuse=0.02),  # wrong accusations make accusation clauses
    ] + [DeducerAgent(seed=4 + s) for s in range(players - 3)]
    for agent, view in zip(agents, views, strict=True):
        agent.reset(view, np.arange(B))
    checked = [0]

    def check():
        truth = _truth(eng)
        for agent in agents:
            nb = getattr(agent, "notebook", None)
            if nb is None:
                continue
            assert not nb.bad.any()
            assert not (nb.has & ~truth).any(), "a 'has' fact is false"
            assert not (nb.no & truth).any(), "a 'has-not' fact rules out the truth"
            checked[0] += B

    _play(eng, views, agents, 150, check)
    assert checked[0] >= 5000


def test_sampled_deals_are_consistent():
    """sample_deals returns only deals consistent with the facts and clauses, with normalised weights."""
    cfg = config("cards", players=4)
    B = 16
    eng = VectorEngine(cfg, B)
    eng.reset(3)
    views = [PlayerView(eng, s) for s in range(4)]
    agents = [RandomSuggester(s, p_accuse=0.0) for s in range(4)]
    _play(eng, views, agents, 40)
    nb = Notebook(B, 4, 0, exact=False)
    nb.reset(np.arange(B), views[0].hand, views[0].hand_sizes)
    nb.update(views[0], np.arange(B))
    for clauses_first in (False, True):
        owner, w, alive = sample_deals(nb.arrays(np.arange(B)), samples=64, rng=np.random.default_rng(0),
                                       clauses_first=clauses_first)  # fmt: skip
        some = alive.any(1)
        assert some.mean() >= 0.75 and np.allclose(w[some].sum(1), 1.0) and (w[~alive] == 0).all()
        for g in range(B):
            for m in np.flatnonzero(alive[g])[:8]:
                deal = owner[g, m]
                assert not nb.no[g, deal, np.arange(21)].any()
                assert (np.bincount(deal, minlength=5)[:4] == views[0].hand_sizes[g]).all()
                for k in np.flatnonzero(nb.cl_live[g]):
                    assert (deal[nb.cl_cards[g, k].astype(int)] == nb.cl_holder[g, k]).any()


def test_expert_probabilities_match_exact_counts():
    """The importance-weighted samples estimate the share of consistent deals per solution triple."""
    _, cfg = completeness.parse_config("cards:4")
    expert = ExpertAgent(seed=0, accusation_samples=4000)
    checked = 0
    for pos in completeness.positions_for(cfg, 30, 10, 100_000, 2, {"exact": True}):
        total = sum(pos.triples.values())
        if len(pos.triples) < 2:
            continue
        expert.notebook = pos.notebook
        probs, ess = expert.triple_probabilities(np.array([pos.game]))
        exact = np.zeros(324)
        for (s, w, r), k in pos.triples.items():
            exact[(s * 6 + w - 6) * 9 + r - 12] = k / total
        assert ess[0] > 50
        assert 0.5 * np.abs(probs[0] - exact).sum() < 0.12  # total variation distance
        checked += 1
    assert checked >= 10


# ================================================================= hand-made positions
def _sugg(player, cards, passed=(), refuted_by=(), shown=()):
    return {"type": "suggestion", "player": player, "cards": list(cards), "passed": list(passed),
            "refuted_by": list(refuted_by), "shown": list(shown)}  # fmt: skip


def _acc(player, cards, correct=False):
    return {"type": "accusation", "player": player, "cards": list(cards), "correct": correct}


def _notebook(history, seat=0, eliminated=(), **options):
    """Seat ``seat``'s notebook after ``history`` in the 4-player card game dealt as tests/helpers.HANDS4."""
    cfg = config("cards", players=4)
    g = position(cfg, hands=HANDS4, envelope=ENVELOPE, eliminated=eliminated)
    d = g.to_dict()
    d["history"] = history
    d["current"] = next(p for p in range(4) if p not in eliminated)
    eng = VectorEngine(cfg, 1)
    eng.import_game(0, Game.from_dict(d).to_dict())
    view = PlayerView(eng, seat)
    nb = Notebook(1, 4, seat, **options)
    nb.reset(np.array([0]), view.hand, view.hand_sizes)
    nb.update(view, np.array([0]))
    assert not nb.bad[0]
    truth = _truth(eng)[0]
    assert not (nb.has[0] & ~truth).any() and not (nb.no[0] & truth).any()
    return nb


def _has(nb, holder, name):
    return bool(nb.has[0, holder, card_id(name)])


def _no(nb, holder, name):
    return bool(nb.no[0, holder, card_id(name)])


E4 = 4  # the envelope's holder index with 4 players


def test_own_hand_and_nothing_else_at_the_start():
    nb = _notebook([])
    own = np.zeros(21, bool)
    own[[card_id(c) for c in HANDS4[0]]] = True
    assert (nb.has[0, 0] == own).all() and (nb.no[0, 0] == ~own).all()
    assert (nb.no[0, 1:] == own).all()  # own cards are nowhere else
    assert not nb.has[0, 1:].any()


def test_a_pass_means_none_of_the_three():
    # Mustard (1) suggests Green, Revolver, Study: White's player (2) passes, seat 3 shows a card seat 0 does not see.
    nb = _notebook([_sugg(1, ["Green", "Revolver", "Study"], passed=[2], refuted_by=[3], shown=["Green"])])
    for c in ("Green", "Revolver", "Study"):
        assert _no(nb, 2, c) and not _has(nb, 3, c)
    own = nb.has[0, 0]
    assert (nb.no[0, 1] == own).all() and (nb.no[0, 3] == own).all()  # of seats 1 and 3 only that mine are mine
    assert nb.cl_live[0].sum() == 1 and nb.cl_holder[0, 0] == 3


def test_a_card_shown_to_me_is_held_by_the_refuter_and_nowhere_else():
    nb = _notebook([_sugg(0, ["Mustard", "Dagger", "Study"], refuted_by=[1], shown=["Dagger"])])
    assert _has(nb, 1, "Dagger")
    assert all(_no(nb, h, "Dagger") for h in (0, 2, 3, E4))
    assert not _has(nb, 1, "Mustard") and not _no(nb, 1, "Mustard")  # seat 1 was not forced to show Mustard


def test_hand_size_saturation():
    # Seat 2 (4 cards) shows seat 0 each of its cards: it holds nothing else.
    hist = [
        _sugg(0, ["White", "Candlestick", "Kitchen"], passed=[1], refuted_by=[2], shown=["White"]),
        _sugg(0, ["Scarlet", "Lead Pipe", "Kitchen"], passed=[1], refuted_by=[2], shown=["Lead Pipe"]),
        _sugg(0, ["Scarlet", "Candlestick", "Lounge"], passed=[1], refuted_by=[2], shown=["Lounge"]),
        _sugg(0, ["Scarlet", "Candlestick", "Hall"], passed=[1], refuted_by=[2], shown=["Hall"]),
    ]
    nb = _notebook(hist)
    hand2 = np.zeros(21, bool)
    hand2[[card_id(c) for c in HANDS4[2]]] = True
    assert (nb.has[0, 2] == hand2).all() and (nb.no[0, 2] == ~hand2).all()


def test_hand_size_forces_the_only_possible_cards():
    # Seat 3 (4 cards) passes on suggestions naming every card it lacks (that seat 0 does not hold):
    # the 4 cards left possible for it are its hand.
    nb = _notebook(_triples_seat3_lacks())
    hand3 = np.zeros(21, bool)
    hand3[[card_id(c) for c in HANDS4[3]]] = True
    assert (nb.has[0, 3] == hand3).all()


def _triples_seat3_lacks():
    """Suggestions by seat 2 that seat 3 passes, naming every card seat 3 lacks and seat 0 does not hold."""
    lacks = [c for c in CARD_NAMES if c not in HANDS4[0] and c not in HANDS4[3]]
    sus = [c for c in lacks if card_id(c) < 6]
    wea = [c for c in lacks if 6 <= card_id(c) < 12]
    roo = [c for c in lacks if card_id(c) >= 12]
    n = max(len(sus), len(wea), len(roo))
    hist = []
    for k in range(n):
        triple = [sus[k % len(sus)], wea[k % len(wea)], roo[k % len(roo)]]
        # seat 3 passes; the next seats (0, 1) answer truthfully
        holders = [p for p in (0, 1) if any(c in HANDS4[p] for c in triple)]
        if holders:
            p = holders[0]
            shown = next(c for c in triple if c in HANDS4[p])
            passed = [3] + ([0] if p == 1 else [])
            hist.append(_sugg(2, triple, passed=passed, refuted_by=[p], shown=[shown]))
        else:
            hist.append(_sugg(2, triple, passed=[3, 0, 1]))
    return hist


def test_a_refutation_clause_resolves_when_two_of_its_cards_are_located():
    hist = [
        # White's player (2) suggests its own White and Hall with Revolver: seat 3 refutes, unseen by seat 0.
        _sugg(2, ["White", "Revolver", "Hall"], refuted_by=[3], shown=["Revolver"]),
    ]
    nb = _notebook(hist)
    assert not _has(nb, 3, "Revolver")
    hist += [
        _sugg(0, ["White", "Candlestick", "Kitchen"], passed=[1], refuted_by=[2], shown=["White"]),
        _sugg(0, ["Scarlet", "Candlestick", "Hall"], passed=[1], refuted_by=[2], shown=["Hall"]),
    ]
    nb = _notebook(hist)
    assert _has(nb, 3, "Revolver")  # White and Hall are seat 2's, so seat 3 showed the Revolver
    assert all(_no(nb, h, "Revolver") for h in (0, 1, 2, E4))
    assert not nb.cl_live[0].any()  # the clause is satisfied and dropped


def test_envelope_by_elimination_of_the_other_suspects():
    hist = [
        _sugg(0, ["Mustard", "Candlestick", "Kitchen"], refuted_by=[1], shown=["Mustard"]),
        _sugg(0, ["White", "Candlestick", "Kitchen"], passed=[1], refuted_by=[2], shown=["White"]),
        _sugg(0, ["Green", "Candlestick", "Kitchen"], passed=[1, 2], refuted_by=[3], shown=["Green"]),
        _sugg(0, ["Peacock", "Candlestick", "Kitchen"], passed=[1, 2], refuted_by=[3], shown=["Peacock"]),
    ]
    nb = _notebook(hist)
    assert _has(nb, E4, "Plum")
    assert nb.envelope_known(np.array([0]))[0, 0] == card_id("Plum")
    assert all(_no(nb, E4, c) for c in ("Scarlet", "Mustard", "White", "Green", "Peacock"))
    assert not nb.solved(np.array([0]))[0]


def test_nobody_refutes_so_the_cards_not_held_are_the_envelope():
    nb = _notebook([_sugg(0, ["Plum", "Wrench", "Kitchen"], passed=[1, 2, 3])])
    assert _has(nb, E4, "Plum") and _has(nb, E4, "Wrench") and not _has(nb, E4, "Kitchen")


def test_a_wrong_accusation_by_another_player_rules_out_the_last_card():
    hist = [
        _sugg(0, ["Plum", "Wrench", "Kitchen"], passed=[1, 2, 3]),  # Plum and Wrench are in the envelope
        _acc(1, ["Plum", "Wrench", "Lounge"]),  # seat 1 accuses wrongly: so not the Lounge
    ]
    nb = _notebook(hist, eliminated=[1])
    assert _no(nb, E4, "Lounge")
    nb = _notebook(hist[1:], eliminated=[1])  # without knowing Plum and Wrench: only a clause
    assert not _no(nb, E4, "Lounge") and nb.acc_live[0].sum() == 1


def test_the_exact_search_finds_what_propagation_misses():
    """Positions from real games where propagation alone misses an envelope fact; the exact notebook proves it."""
    cfg = config("cards", players=4, max_turns=300)
    missed = 0
    for pos in completeness.positions_for(cfg, 60, 11, 200_000, 0, {"exact": False}):
        P = pos.info["players"]
        e_no = ~pos.occurs[P]
        if not (e_no & ~pos.no[P]).any():
            continue
        missed += 1
        exact = Notebook(pos.notebook.B, P, pos.view.seat)
        exact.reset(np.arange(exact.B), pos.view.hand, pos.view.hand_sizes)
        exact.update(pos.view, np.array([pos.game]))
        assert (exact.no[pos.game, P] == e_no).all()  # every envelope has-not fact, and no more
    assert missed >= 1, "no position where plain propagation is incomplete (did the positions change?)"


# ================================================================= completeness
def test_completeness_against_enumeration():
    """Every envelope fact that enumeration proves, the notebook proves; players' facts above the measured floor."""
    total = {k: np.zeros(3, int) for k in completeness.KINDS}
    for spec in ("cards:4", "seed000:4", "cards:3"):
        _, cfg = completeness.parse_config(spec)
        for pos in completeness.positions_for(cfg, 25, 10, 100_000, 1, {"exact": True}):
            for k, v in completeness.compare(pos.info, pos.occurs, pos.has, pos.no).items():
                total[k] += v
    assert total["all"][0] > 1000
    assert total["all"][2] == 0  # never claims more than enumeration proves (soundness)
    assert total["envelope"][1] == total["envelope"][0]  # 100% of envelope facts
    assert total["players"][1] / total["players"][0] >= 0.98  # measured about 99.3-99.7%


def test_enumeration_oracle_on_a_tiny_position():
    """The oracle itself, on a position small enough to enumerate by hand: exactly two deals."""
    # Seat 0 holds 6 cards; seat 1 showed all 6 of its cards, seat 2 five of its 6. Free: Peacock, Plum,
    # Wrench, Study. The envelope must take the Wrench and the Study (the only weapon and room left) and
    # one of Peacock / Plum; seat 2 has the other.
    info = {"players": 3, "seat": 0, "hand": [0, 6, 12, 13, 14, 15], "sizes": [6, 6, 6], "passes": [],
            "shown": [(1, c) for c in (1, 7, 8, 16, 17, 18)] + [(2, c) for c in (2, 3, 9, 10, 19)],
            "clauses": [], "accusations": [], "envelope": None}  # fmt: skip
    count, occurs = enumerate_deals(info)
    assert count == 2
    assert occurs[3, 11] and occurs[3, 20] and not occurs[2, 11] and not occurs[2, 20]
    assert occurs[3, 4] and occurs[3, 5] and occurs[2, 4] and occurs[2, 5]
    info["clauses"] = [(2, [4, 11, 20])]  # seat 2 refuted Peacock, Wrench, Study: it holds the Peacock
    count, occurs = enumerate_deals(info)
    assert count == 1 and occurs[2, 4] and occurs[3, 5] and not occurs[3, 4]


# ================================================================= the players
LEGAL_CASES = [("classic", 2), ("classic", 6), ("seed000", 3), ("seed000", 6), ("cards", 3), ("cards", 6)]


@pytest.mark.parametrize(("preset", "players"), LEGAL_CASES)
def test_deducer_and_expert_always_legal_and_games_end(preset, players):
    cfg = config(preset, players=players, max_turns=300)
    names = [DeducerAgent, ExpertAgent, RandomAgent, DeducerAgent, ExpertAgent, DeducerAgent]
    agents = [names[i](seed=i) for i in range(players)]
    records = play_games(cfg, agents, 48, batch_size=24, seed=players)
    assert len(records) == 48
    assert all(r.ending != "truncated" for r in records)
    for agent in agents:
        if isinstance(agent, DeducerAgent):
            assert agent.fallbacks == 0
            assert not agent.notebook.bad.any()


def test_every_action_is_in_the_legal_mask():
    """Against random players and each other; the fallback counter would hide an illegal choice, so check directly."""

    for preset in ("classic", "seed000", "cards"):
        cfg = config(preset, players=4, max_turns=300)
        agents = [LegalityChecked(DeducerAgent(seed=0)), LegalityChecked(ExpertAgent(seed=1)), RandomAgent(2),
                  LegalityChecked(DeducerAgent(3))]
        play_games(cfg, agents, 32, batch_size=32, seed=7)
        assert all(a.inner.fallbacks == 0 for a in agents if isinstance(a, LegalityChecked))


def test_deducer_touches_the_game_only_through_its_player_view():
    modules = (deducer_module, notebook_module, deduction_module, facts_module, deal_sampling_module, expert_module)
    for module in modules:
        source = inspect.getsource(module)
        assert "_eng" not in source and "VectorEngine" not in source and ".owner" not in source


def test_decisions_do_not_depend_on_hidden_cards():
    cfg = config("cards", players=4)
    rng = np.random.default_rng(0)
    B = 8
    eng = VectorEngine(cfg, B)
    eng.reset(2)
    views = [PlayerView(eng, s) for s in range(4)]
    players = [DeducerAgent(seed=s) for s in range(4)]
    for p, v in zip(players, views, strict=True):
        p.reset(v, np.arange(B))
    checked = 0
    for step in range(60):
        actor = eng.actor
        for i in np.flatnonzero(actor >= 0)[:2]:
            seat = int(actor[i])
            snap = eng.export_game(int(i))
            alt = swap_hidden(snap, seat, rng)
            if alt is None:
                continue
            acts = []
            for cls in (DeducerAgent, ExpertAgent):
                for s in (snap, alt):
                    e2 = VectorEngine(cfg, 1)
                    e2.import_game(0, s)
                    v2 = PlayerView(e2, seat)
                    agent = cls(seed=step)
                    agent.reset(v2, np.array([0]))
                    acts.append(int(agent.act(v2, np.array([0]))[0]))
            assert acts[0] == acts[1] and acts[2] == acts[3], (step, [A.describe(a) for a in acts])
            checked += 1
        actions = np.full(B, -1, np.int64)
        for s in range(4):
            idx = np.flatnonzero(actor == s)
            if len(idx):
                actions[idx] = players[s].act(views[s], idx)
        eng.step(actions)
        if eng.done.all():
            break
    assert checked >= 30


def test_information_prefers_a_question_with_an_uncertain_answer():
    """A triple of known cards is worth nothing; one whose holders are unknown is worth something."""
    nb = _notebook([])
    prob = nb.marginals(np.array([0]))
    own = [card_id(c) for c in ("Scarlet", "Candlestick", "Kitchen")]
    unknown = [card_id(c) for c in ("Plum", "Wrench", "Study")]
    cards = np.array([[own, unknown]])
    order = np.array([[1, 2, 3]])
    score = information(prob, cards, order, refute_all=False)[0]
    assert score[0] == pytest.approx(0.0, abs=1e-9) and score[1] > 0.5


def test_envelope_information_ignores_holders_that_cannot_be_the_envelope():
    """Two cards proved outside the envelope but with unknown holders: a question about them is worth
    deal bits and no envelope bits; a question about a card that is the envelope's with probability 1/2 is
    worth envelope bits. The deducer's score follows the envelope."""
    prob = np.zeros((1, 5, 21))  # holders: seats 0..3, the envelope
    prob[0, 0, :] = 1.0  # by default seat 0's own card (a blank)
    # Suspects: Plum and White each 1/2 envelope, 1/2 seat 2's.
    prob[0, :, card_id("Plum")] = [0, 0, 0.5, 0, 0.5]
    prob[0, :, card_id("White")] = [0, 0, 0.5, 0, 0.5]
    # Two weapons not in the envelope, each seat 1's or seat 3's.
    for name in ("Rope", "Dagger"):
        prob[0, :, card_id(name)] = [0, 0.5, 0, 0.5, 0]
    prob[0, :, card_id("Wrench")] = [0, 0, 0, 0, 1.0]
    order = np.array([[1, 2, 3]])
    holders = [card_id(c) for c in ("Scarlet", "Rope", "Kitchen")]  # deal question: who holds the Rope
    envelope = [card_id(c) for c in ("Plum", "Candlestick", "Kitchen")]  # envelope question: is it Plum
    cards = np.array([[holders, envelope]])
    env = envelope_information(prob, cards, order, refute_all=False)[0]
    deal = information(prob, cards, order, refute_all=False)[0]
    assert env[0] == pytest.approx(0.0, abs=1e-9) and env[1] == pytest.approx(1.0, abs=1e-6)
    assert deal[0] > 0.5  # the old score found the holder question worth asking
    for refute_all in (False, True):  # the same with every seat answering
        assert envelope_information(prob, cards, order, refute_all=refute_all)[0].argmax() == 1
    # What the table learns: only who refuted. Seat 2 refutes exactly when Plum is not the envelope's.
    public = public_information(prob, cards, order, False, seat=0, hand_sizes=np.array([[5, 5, 4, 4]]))[0]
    assert 0.0 <= public[1] <= env[1] + 1e-9


def _solved_but_rooms_position(phase="suggest", board=False):
    """Seat 0 (HANDS4) has been shown every suspect, weapon and room except seat 1's fifth card:
    the envelope is Plum, Wrench and the Study or the Library (seat 1 holds the other one)."""
    shown = [(1, "Mustard"), (1, "Dagger"), (1, "Dining Room"), (1, "Billiard Room"), (2, "White"), (2, "Lead Pipe"),
             (2, "Lounge"), (2, "Hall"), (3, "Green"), (3, "Peacock"), (3, "Revolver"), (3, "Rope")]  # fmt: skip
    history = [_sugg(0, ["Plum", "Wrench", "Study"], refuted_by=[p], shown=[c]) for p, c in shown]
    cfg = config("classic" if board else "cards", players=4)
    kw = {"suspects": {"Scarlet": "Kitchen"}} if board else {}
    g = position(cfg, hands=HANDS4, envelope=ENVELOPE, phase=phase, **kw)
    d = g.to_dict()
    d["history"] = history
    eng = VectorEngine(cfg, 1)
    eng.import_game(0, Game.from_dict(d).to_dict())
    return eng


def test_the_deducer_isolates_the_open_room_with_its_own_cards():
    """Only the room is open, and seat 1 (asked first) holds the other candidate: a suspect and weapon that
    seat 1 cannot show (own, proved, or held by a seat asked later) force seat 1 to show the room if it has
    it, which settles the case; naming seat 1's Mustard or Dagger would let it show that instead."""
    eng = _solved_but_rooms_position()
    view = PlayerView(eng, 0)
    for seed in range(6):
        agent = DeducerAgent(seed=seed)
        agent.reset(view, np.array([0]))
        action = int(agent.act(view, np.array([0]))[0])
        s, w, r = A.triple_of(action - A.SUGGEST0)
        assert A.SUGGEST0 <= action < A.SHOW0
        assert CARD_NAMES[s] != "Mustard" and CARD_NAMES[6 + w] != "Dagger"
        assert CARD_NAMES[12 + r] in ("Study", "Library")


def test_room_values_follow_the_envelope_question():
    """On the board the same position: only the Study and the Library are worth walking to."""
    eng = _solved_but_rooms_position(phase="start", board=True)
    view = PlayerView(eng, 0)
    agent = DeducerAgent(seed=0)
    agent.reset(view, np.array([0]))
    agent.notebook.update(view, np.array([0]))
    value = agent.room_values(view, np.array([0]))[0]
    rooms = [CARD_NAMES[12 + r] for r in np.flatnonzero(value > 0.5)]
    assert sorted(rooms) == ["Library", "Study"] and value.max() == pytest.approx(1.0, abs=1e-6)
    assert np.delete(value, [card_id("Library") - 12, card_id("Study") - 12]).max() < 1e-6


def test_fixpoint_detects_a_contradiction():
    has = np.zeros((1, 3, 21), bool)
    no = np.zeros((1, 3, 21), bool)
    has[0, 0, 0] = has[0, 1, 0] = True  # one card in two places
    size = np.array([[9, 9, 3]])
    bad = fixpoint(Facts(has, no, size, np.zeros((1, 0), int), np.zeros((1, 0, 3), int), np.zeros((1, 0), bool),
                         np.zeros((1, 0, 3), int), np.zeros((1, 0), bool)))  # fmt: skip
    assert bad[0]


# ================================================================= strength
def test_deducers_crush_a_random_player_and_never_accuse_wrongly():
    cfg = config("classic", players=4)
    B = 64
    deducer_wins = games = 0
    for rot in range(4):
        eng = VectorEngine(cfg, B)
        eng.reset(rot)
        views = [PlayerView(eng, s) for s in range(4)]
        agents: list[Agent] = [DeducerAgent(seed=10 * rot + s) for s in range(4)]
        agents[rot] = RandomAgent(rot)
        for a, v in zip(agents, views, strict=True):
            a.reset(v, np.arange(B))
        stats = {"accusations": np.zeros(4, int), "wrong": np.zeros(4, int)}
        while not eng.done.all():
            s = _play_one(eng, views, agents)
            stats["accusations"] += s["accusations"]
            stats["wrong"] += s["wrong"]
        deducers = [s for s in range(4) if s != rot]
        assert stats["wrong"][deducers].sum() == 0 and stats["accusations"][deducers].sum() > 0
        deducer_wins += int(np.isin(eng.winner, deducers).sum())
        games += B
    assert deducer_wins / games > 0.9  # 3 of 4 seats: share 0.75; measured about 0.99


def _play_one(eng, views, agents):
    """One step of a batch without autoreset (finished games get -1)."""
    stats = {"accusations": np.zeros(eng.P, int), "wrong": np.zeros(eng.P, int)}
    actions = seat_actions(eng, agents, views)
    accusing = np.flatnonzero(actions >= A.ACCUSE0)
    seats, hl = eng.current[accusing].astype(int), eng.hist_len[accusing].astype(int)
    eng.step(actions)
    for g, s, h in zip(accusing, seats, hl, strict=True):
        assert eng.hist_kind[g, h] == ACCUSATION
        stats["accusations"][s] += 1
        stats["wrong"][s] += int(not eng.hist_correct[g, h])
    return stats


def _rotated_win_rate(cfg, make, games_per_rotation, lineup):
    """Win rate of the entries marked True in ``lineup`` (one bool per seat), over all seat rotations."""
    P = cfg.players
    wins = total = 0
    for rot in range(P):
        marked = [lineup[(s - rot) % P] for s in range(P)]
        agents = [make(m, 100 * rot + s) for s, m in enumerate(marked)]
        records = play_games(cfg, agents, games_per_rotation, batch_size=games_per_rotation, seed=rot)
        wins += sum(r.winner >= 0 and marked[r.winner] for r in records)
        total += len(records)
    return wins / total


def test_deducer_beats_the_heuristic():
    heuristic = pytest.importorskip("cluedo_env.agents.players.heuristic")
    cfg = config("classic", players=4)

    def make(is_deducer, seed):
        return DeducerAgent(seed=seed) if is_deducer else heuristic.HeuristicAgent(seed=seed)

    rate = _rotated_win_rate(cfg, make, 60, [True, False, True, False])
    assert rate > 0.7  # share 0.5; measured about 0.87


def test_expert_at_least_matches_the_deducer():
    cfg = config("cards", players=4)

    def make(is_expert, seed):
        return ExpertAgent(seed=seed) if is_expert else DeducerAgent(seed=seed)

    rate = _rotated_win_rate(cfg, make, 100, [True, False, False, False])
    assert rate > 0.25  # share 0.25; measured about 0.37 (classic: about 0.30)


def _refutation(history, suggester, cards, passed, cls, seeds=range(5)):
    """The cards seat 0 shows when ``suggester`` names ``cards`` after ``history`` (4-player cards game, HANDS4)."""
    cfg = config("cards", players=4)
    g = position(cfg, hands=HANDS4, envelope=ENVELOPE)
    d = g.to_dict()
    d["history"] = history + [_sugg(suggester, cards, passed=passed)]
    d["current"], d["phase"], d["refuter"] = suggester, "refute", 0
    eng = VectorEngine(cfg, 1)
    eng.import_game(0, d)
    view = PlayerView(eng, 0)
    shown = set()
    for seed in seeds:
        agent = cls(seed=seed)
        agent.reset(view, np.array([0]))
        action = int(agent.act(view, np.array([0]))[0])
        assert A.SHOW0 <= action < A.ACCUSE0
        shown.add(CARD_NAMES[action - A.SHOW0])
    return shown


@pytest.mark.parametrize("cls", [DeducerAgent, ExpertAgent])
def test_refutation_prefers_a_card_already_shown_to_that_player(cls):
    # Seat 0 refutes a suggestion of seat 3 naming three of its cards, having shown the Kitchen to seat 3 before.
    history = [_sugg(3, ["Plum", "Wrench", "Kitchen"], refuted_by=[0], shown=["Kitchen"])]
    assert _refutation(history, 3, ["Scarlet", "Candlestick", "Kitchen"], [], cls) == {"Kitchen"}


@pytest.mark.parametrize("cls", [DeducerAgent, ExpertAgent])
def test_refutation_shows_a_room_first_at_the_start(cls):
    """Nothing shown yet: the suggester has 9 rooms to 6 suspects or weapons, so a room teaches it least."""
    assert _refutation([], 3, ["Scarlet", "Candlestick", "Ballroom"], [], cls) == {"Ballroom"}


def test_refutation_shows_the_category_where_the_suggester_is_furthest_from_the_answer():
    """Seat 1 holds three rooms (it showed them to seat 0) and has seen two of seat 0's rooms: it has about
    3.5 rooms left but 5.2 suspects and 4.4 weapons, so seat 0 shows its suspect, not its room (nor weapon)."""
    history = [
        _sugg(0, ["Plum", "Wrench", "Dining Room"], refuted_by=[1], shown=["Dining Room"]),
        _sugg(0, ["Plum", "Wrench", "Billiard Room"], refuted_by=[1], shown=["Billiard Room"]),
        _sugg(0, ["Plum", "Wrench", "Library"], refuted_by=[1], shown=["Library"]),
        _sugg(0, ["Plum", "Dagger", "Study"], refuted_by=[1], shown=["Dagger"]),
        _sugg(1, ["Plum", "Wrench", "Kitchen"], passed=[2, 3], refuted_by=[0], shown=["Kitchen"]),
        _sugg(1, ["Plum", "Wrench", "Conservatory"], passed=[2, 3], refuted_by=[0], shown=["Conservatory"]),
    ]
    assert _refutation(history, 1, ["Scarlet", "Candlestick", "Ballroom"], [2, 3], DeducerAgent) == {"Scarlet"}
    # Without that knowledge, the room again.
    assert _refutation([], 1, ["Scarlet", "Candlestick", "Ballroom"], [2, 3], DeducerAgent) == {"Ballroom"}


def test_expert_reads_the_table_from_deliberate_blanks():
    """Seat 1 names the Mustard, which it showed seat 0 before: a deliberate blank, a deducer-like player.
    Seat 3 names only cards it may not hold: as far as seat 0 can tell, a player that only crosses off.
    The expert's danger counts seat 1 as closer to solving than seat 3 with the same refutations."""
    cfg = config("cards", players=4)
    g = position(cfg, hands=HANDS4, envelope=ENVELOPE)
    d = g.to_dict()
    d["history"] = [
        _sugg(0, ["Mustard", "Wrench", "Study"], refuted_by=[1], shown=["Mustard"]),
        _sugg(1, ["Mustard", "Rope", "Lounge"], passed=[], refuted_by=[2], shown=["Lounge"]),
        _sugg(2, ["Green", "Dagger", "Study"], refuted_by=[3], shown=["Green"]),
        _sugg(3, ["Plum", "Dagger", "Kitchen"], refuted_by=[0], shown=["Kitchen"]),
    ]
    d["current"], d["phase"] = 0, "suggest"
    eng = VectorEngine(cfg, 1)
    eng.import_game(0, Game.from_dict(d).to_dict())
    view = PlayerView(eng, 0)
    agent = ExpertAgent(seed=0)
    agent.reset(view, np.array([0]))
    agent.notebook.update(view, np.array([0]))
    assert agent.strong_opponents(view, np.array([0]))[0].tolist() == [False, True, False, False]
    nb = agent.notebook
    nb.shown_to[0, 1:] = 6  # the same refutations received by every opponent
    nb.unrefuted[0] = 0
    nb.named[0, 3] = False  # seat 3 named nothing: only seat 1 reads as strong
    strong = agent.danger(view, np.array([0]))[0]
    nb.named[0, 1] = False
    naive = agent.danger(view, np.array([0]))[0]
    assert strong > naive > 0


# ================================================================= opponent models (assumed, never proved)
def _view_after(history, seat=0, preset="cards"):
    """Seat ``seat``'s view of the 4-player game dealt as HANDS4 after ``history``, seat 0 to play."""
    cfg = config(preset, players=4)
    g = position(cfg, hands=HANDS4, envelope=ENVELOPE)
    d = g.to_dict()
    d["history"] = history
    d["current"], d["phase"] = 0, "start" if cfg.has_board else "suggest"
    eng = VectorEngine(cfg, 1)
    eng.import_game(0, Game.from_dict(d).to_dict())
    return PlayerView(eng, seat)


# Each opponent names Plum (and more) without holding it: naive players name only open cards.
NAIVE_TABLE = [
    _sugg(1, ["Plum", "Wrench", "Hall"], refuted_by=[2], shown=["Hall"]),
    _sugg(2, ["Plum", "Rope", "Study"], refuted_by=[3], shown=["Rope"]),
    _sugg(3, ["Plum", "Wrench", "Kitchen"], refuted_by=[0], shown=["Kitchen"]),
]


def test_naive_opponents_do_not_hold_what_they_name():
    """A player that only crosses cards off never names its own (R-S6, R-G4): every opponent named Plum, seat 0
    does not hold it, so under that model Plum is the envelope's. The sound notebook does not know it; the
    deducer's probabilities lean that way (85% model), and the expert's sampled ones follow the model."""
    view = _view_after(NAIVE_TABLE)
    idx = np.array([0])
    expert = ExpertAgent(seed=0)
    expert.reset(view, idx)
    expert.notebook.update(view, idx)
    nb = expert.notebook
    plum, wrench, hall = card_id("Plum"), card_id("Wrench"), card_id("Hall")
    assert not nb.has[0, E4, plum]
    bits, used = opponent_model.assumed_bits(nb, idx, has_board=False)
    facts = bits.facts(nb.cl_cards[idx], nb.acc_cards[idx])
    assert used[0] and facts.has[0, E4, plum]
    assert facts.no[0, 1, wrench] and facts.no[0, 1, hall] and facts.no[0, 3, wrench]
    assert not facts.no[0, 2, hall]  # seat 2 did not name the Hall (it showed it to seat 1)
    deducer = DeducerAgent(seed=0)
    deducer.reset(view, idx)
    deducer.notebook.update(view, idx)
    sound = deducer.notebook.marginals(idx)[0, E4, plum]
    leaning = deducer.probabilities(view, idx)[0, E4, plum]
    assert sound < 0.6 and leaning > 0.85 * 1.0 + 0.15 * sound - 1e-9
    assert expert.probabilities(view, idx)[0, E4, plum] > 0.95  # sampled under the model, blended by sample size
    assert not deducer.notebook.solved(idx)[0]  # nothing assumed is proved: the deducer accuses only on proof


def test_a_deliberate_blank_turns_the_model_off_for_the_whole_table():
    """Seat 1 names the Mustard it showed seat 0 before: it names its own cards, so it is no naive player, and
    the others may just not have been caught yet: no assumption about anyone."""
    history = [_sugg(0, ["Mustard", "Rope", "Study"], refuted_by=[1], shown=["Mustard"])] + NAIVE_TABLE
    history.append(_sugg(1, ["Mustard", "Wrench", "Study"], passed=[2, 3], refuted_by=[], shown=[]))
    view = _view_after(history)
    idx = np.array([0])
    agent = DeducerAgent(seed=0)
    agent.reset(view, idx)
    agent.notebook.update(view, idx)
    assert opponent_model.strong_players(agent.notebook, idx, False)[0].tolist()[1:] == [True, False, False]
    assert not opponent_model.naive_players(agent.notebook, idx, False).any()
    _, used = opponent_model.assumed_bits(agent.notebook, idx, has_board=False)
    assert not used[0]
    # Per player (not the whole table): seats 2 and 3 are still taken as naive.
    assert opponent_model.naive_players(agent.notebook, idx, False, whole_table=False)[0].tolist() == [
        False, False, True, True]  # fmt: skip


def test_on_the_board_the_named_room_says_nothing():
    """On the board one names the room one stands in (R-G1): a naive player may hold it."""
    view = _view_after([_sugg(3, ["Plum", "Wrench", "Kitchen"], refuted_by=[0], shown=["Kitchen"])], preset="classic")
    idx = np.array([0])
    agent = DeducerAgent(seed=0)
    agent.reset(view, idx)
    agent.notebook.update(view, idx)
    no = opponent_model.assumed_no(agent.notebook, idx, has_board=True)[0, 3]
    assert no[card_id("Plum")] and no[card_id("Wrench")] and not no[ROOM_CARD0:].any()


def _refuter_model(history):
    view = _view_after(history)
    m = RefuterModel(1, 4, 0)
    m.update(view, np.array([0]))
    return m


def test_a_strong_refuter_showing_a_suspect_lacks_the_room():
    """Seat 0 names White, Rope, Study; seat 1 passes and seat 2 shows White. A deducer or an expert shows a room
    first when it holds one (seat 0 has about 7 rooms left against 4.6 suspects, agents/players/refutation.py), so seat
    2
    does not hold the Study (true: it is the envelope's). Suspects and weapons are level: nothing about Rope."""
    m = _refuter_model([_sugg(0, ["White", "Rope", "Study"], passed=[1], refuted_by=[2], shown=["White"])])
    assert m.lacks[0, 2, card_id("Study")] and not m.lacks[0, 2, card_id("Rope")]
    assert not m.lacks[0, 2, card_id("White")] and not m.deviant[0, 2]


def test_a_card_shown_again_says_nothing():
    """Seat 2 has shown seat 0 the White; named again with the Lounge (also seat 2's), it shows the White again
    (agents/players/refutation.py rule 1): nothing to conclude about the Lounge."""
    history = [
        _sugg(0, ["White", "Rope", "Study"], passed=[1], refuted_by=[2], shown=["White"]),
        _sugg(0, ["White", "Candlestick", "Lounge"], passed=[1], refuted_by=[2], shown=["White"]),
    ]
    m = _refuter_model(history)
    assert not m.lacks[0, 2, card_id("Lounge")] and not m.deviant[0, 2]


def test_a_refuter_that_does_not_show_again_is_not_modelled():
    """Showing the Lounge while holding the White it showed before breaks the strong refuters' rule: a random
    refuter (heuristic, notebook), whose choices say nothing."""
    history = [
        _sugg(0, ["White", "Rope", "Study"], passed=[1], refuted_by=[2], shown=["White"]),
        _sugg(0, ["White", "Candlestick", "Lounge"], passed=[1], refuted_by=[2], shown=["Lounge"]),
    ]
    assert _refuter_model(history).deviant[0, 2]


# Every opponent names Plum, Wrench and Study in refuted suggestions; seat 0 holds none of them. Under the
# naive-player model all three are the envelope's (true here); the sound facts leave Plum with seat 1 or the
# envelope, and Wrench with seat 1, seat 2 or the envelope.
NAIVE_SOLVES = [
    _sugg(1, ["Plum", "Wrench", "Hall"], refuted_by=[2], shown=["Hall"]),
    _sugg(2, ["Plum", "Wrench", "Kitchen"], passed=[3], refuted_by=[0], shown=["Kitchen"]),
    _sugg(3, ["Plum", "Wrench", "Ballroom"], refuted_by=[0], shown=["Ballroom"]),
    _sugg(1, ["Plum", "Rope", "Study"], passed=[2], refuted_by=[3], shown=["Rope"]),
    _sugg(2, ["Green", "Wrench", "Study"], refuted_by=[3], shown=["Green"]),
    _sugg(3, ["Mustard", "Wrench", "Study"], passed=[0], refuted_by=[1], shown=["Mustard"]),
]


@pytest.mark.parametrize("turns, expert_accuses", [(8, True), (0, False)])
def test_expert_accuses_what_the_naive_model_settles_and_the_deducer_waits(turns, expert_accuses):
    """After its suggestion (phase post), seat 0 may accuse. The expert accuses Plum, Wrench, Study once the
    naive-player model settles it, from round 2 on (``naive_accuse_rounds``: before that a table of deducers
    may look naive too); the deducer, which accuses only on proof, ends its turn."""
    cfg = config("cards", players=4)
    d = position(cfg, hands=HANDS4, envelope=ENVELOPE).to_dict()
    d["history"], d["current"], d["phase"], d["turn_count"] = NAIVE_SOLVES, 0, "post", turns
    eng = VectorEngine(cfg, 1)
    eng.import_game(0, Game.from_dict(d).to_dict())
    view = PlayerView(eng, 0)
    idx = np.array([0])
    solution = A.ACCUSE0 + A.cards_triple(*(np.array([card_id(c)]) for c in ENVELOPE))[0]
    expert, deducer = ExpertAgent(seed=0), DeducerAgent(seed=0)
    for agent in (expert, deducer):
        agent.reset(view, idx)
    assert (int(expert.act(view, idx)[0]) == solution) == expert_accuses
    assert int(deducer.act(view, idx)[0]) == A.END_TURN
    assert not deducer.notebook.solved(idx)[0]


def test_the_accusation_screen_settles_only_checks_far_below_the_threshold():
    """A check is settled by its screen (``screen_samples`` deals) only where the screen's best triple lies more
    than ``screen_z`` standard errors of the difference below the threshold, never on too few effective samples.
    Margin here: 3 * 0.5 * sqrt(1/32 + 1/128) = 0.2965."""
    expert = ExpertAgent(seed=0)
    assert (expert.screen_samples, expert.screen_z, expert.accusation_samples, expert.min_ess) == (32, 3.0, 128, 8.0)
    p1 = np.array([0.30, 0.70, 0.30, 0.55, 0.61])
    ess = np.array([32.0, 32.0, 4.0, 32.0, 32.0])
    out = expert._screened_out(p1, ess, np.full(5, 0.9))
    assert out.tolist() == [True, False, False, True, False]


@pytest.mark.parametrize("options", [{"screen_samples": -1}, {"screen_samples": 2.5}, {"screen_samples": True},
                                     {"screen_z": 0}, {"screen_z": "3"}])  # fmt: skip
def test_a_bad_screen_option_is_refused_with_what_is_allowed(options: dict) -> None:
    with pytest.raises(ValueError, match="must be"):
        ExpertAgent(seed=0, **options)


class _ScreenAudit(ExpertAgent):
    """An expert that also runs the full accusation check, with a generator of its own (so its play is the
    plain expert's), on every check its screen settles, and counts those where the full check would accuse."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self.audit_rng = np.random.default_rng(1000 + seed)
        self.counts = {"checks": 0, "screened": 0, "full_accuses": 0, "screened_but_full_accuses": 0}

    def accusations(self, view, idx, mask):
        self._idx, self._mask = idx, mask  # the acting games (sorted) and their masks
        return super().accusations(view, idx, mask)

    def triple_probabilities(self, idx, view=None, bits=None, samples=None):
        if samples is not None:  # the screen: the full check of the same games too, on the audit's own numbers
            own, self.rng = self.rng, self.audit_rng
            self._full = super().triple_probabilities(idx, view, bits), self._mask[np.searchsorted(self._idx, idx)]
            self.rng = own
        return super().triple_probabilities(idx, view, bits, samples)

    def _screened_out(self, p1, ess, need):
        out = super()._screened_out(p1, ess, need)
        (probs, ess_full), mask = self._full
        _, p1_full = self._best_open(probs, mask)
        full = (ess_full >= self.min_ess) & (p1_full >= need)
        c = self.counts
        c["checks"] += len(out)
        c["screened"] += int(out.sum())
        c["full_accuses"] += int(full.sum())
        c["screened_but_full_accuses"] += int((full & out).sum())
        return out


def test_checks_the_accusation_screen_settles_are_checks_the_full_check_would_not_accuse():
    """Whole games of four experts (classic board): every accusation check the screen settles is also run in
    full on fresh deals; none of those would have accused, while the screen settles most checks and the full
    check accuses in some of the others (so the comparison can fail)."""
    agents = [_ScreenAudit(seed=s) for s in range(4)]
    play_games(config("classic", players=4), agents, 192, batch_size=192, seed=3)
    total = {k: sum(a.counts[k] for a in agents) for k in agents[0].counts}
    assert total["screened_but_full_accuses"] == 0
    assert total["screened"] > 0.5 * total["checks"]
    assert total["full_accuses"] > 0
