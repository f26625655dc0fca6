"""The constraint-reasoning notebook of one seat over a whole batch of games.

For every game the notebook keeps, for each *holder* (the P players, then the envelope as
holder ``P``) and each of the 21 cards, one of three values: unknown, has, has-not. They
are two bool arrays ``has`` and ``no`` of shape (B, P + 1, 21). Facts come from what the
seat may know (:class:`cluedo_env.engine.views.PlayerView`):

* its own hand (R-S6): ``has`` on its cards, ``no`` on every other card;
* the public hand sizes (R-S5) and the envelope's three cards, one per category (R-S4);
* a player who could not refute a suggestion holds none of its three cards (R-G6, R-G7);
* a card shown to this seat is held by the player who showed it;
* a refutation this seat did not see: the refuter holds *at least one* of the three cards,
  a clause that shrinks as cards are located elsewhere and becomes a fact at one card;
* a wrong accusation by another player: the envelope lacks at least one of the three
  named cards (a clause on the envelope);
* its own accusation shows it the envelope (R-A2).

:func:`fixpoint` closes the facts under these rules, batched over games, until nothing
changes:

1. a card located at one holder is absent from every other holder;
2. a card that every holder but one lacks is held by that one;
3. a holder with as many known cards as its hand size holds nothing else;
4. a holder whose possible cards are just enough for its hand size holds all of them;
5. the envelope holds exactly one card per category (its own hand sizes: 1, 1, 1);
6. a clause with no card left possible is a contradiction, with one card left a fact,
   and a clause with a held card is satisfied and dropped;
7. an accusation clause with two of its cards known to be in the envelope rules out the third.

Every rule is sound: it only draws conclusions true in every deal consistent with what
the seat knows, so the truth is never ruled out (``tests/test_deducer.py`` checks this
against the hidden state of thousands of positions). The rules run on bitmasks (one
int64 per holder, bit c = card c: :func:`fixpoint_bits`), which keeps each pass to a few
dozen numpy calls whatever the batch size.

Propagation alone is not complete: a deal-level argument can combine several clauses and
hand sizes. So the envelope cells are decided *exactly* (``exact=True``, the default):

* a cell is possible as soon as some complete deal consistent with everything known puts
  the card in the envelope (a *witness*). Witnesses are kept per game and cell and re-used
  while new facts do not contradict them; new ones come from a few deals sampled with the
  card forced into the envelope (:func:`sample_deals`, clauses satisfied first);
* the cells left are settled by a batched backtracking search (:func:`search_envelope`:
  place the card, propagate, branch on the most constrained card, back up on a
  contradiction), which either finds a witness or proves the card is not in the envelope.
  The search is bounded (``search_rounds``); an unfinished query proves nothing.

So every envelope fact that enumeration of all consistent deals would prove, the notebook
proves (``scripts/deducer_completeness.py`` measures it; players' cells are decided by
propagation only, 99.7% of what enumeration proves). ``exact_triples`` restricts the exact
step to games with at most that many solution hypotheses left (the players use 8: that is
where it decides the accusation; exactness everywhere makes a game of 4 deducers about 2.5
times slower, 55 instead of 140 classic games/s at batch 256 on 2 cores). Optional
failed-literal probing (:func:`probe`, ``probe_cells``) is kept for comparison.

:func:`sample_deals` also serves players that want probabilities: importance-weighted deals,
uniform over the consistent ones (batched, a fixed number of numpy steps).
"""

from __future__ import annotations

import numpy as np

from cluedo_env.engine.views import HIDDEN, PASSED, PlayerView, Records
from cluedo_env.rules import actions as A
from cluedo_env.rules.cards import NUM_CARDS, ROOM_CARD0, WEAPON_CARD0

CATEGORY = np.array([0] * WEAPON_CARD0 + [1] * (ROOM_CARD0 - WEAPON_CARD0) + [2] * (NUM_CARDS - ROOM_CARD0))
CAT_SLICES = (slice(0, WEAPON_CARD0), slice(WEAPON_CARD0, ROOM_CARD0), slice(ROOM_CARD0, NUM_CARDS))
CAT_ONEHOT = CATEGORY[None, :] == np.arange(3)[:, None]  # (3, 21)
ENVELOPE_SIZE = 3


FULL = (1 << NUM_CARDS) - 1
POW2 = np.int64(1) << np.arange(NUM_CARDS, dtype=np.int64)  # bit of each card
CAT_BITS = np.array([int(POW2[CAT_ONEHOT[k]].sum()) for k in range(3)], np.int64)


def pack(cells: np.ndarray) -> np.ndarray:
    """(..., 21) bool -> (...) int64 bitmask (bit c = card c)."""
    return cells.astype(np.int64) @ POW2


def unpack(bits: np.ndarray) -> np.ndarray:
    """(...) int64 bitmask -> (..., 21) bool."""
    return (bits[..., None] >> np.arange(NUM_CARDS)) & 1 == 1


def popcount(bits: np.ndarray) -> np.ndarray:
    return np.bitwise_count(bits).astype(np.int64)


def fixpoint(
    has: np.ndarray,
    no: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    max_iter: int = 100,
) -> np.ndarray:
    """Close the facts of n games under the rules of the module docstring, in place.

    has, no: (n, H, 21) bool (holder H - 1 is the envelope); size: (n, H) hand sizes (3 for
    the envelope); cl_holder (n, K) int, cl_cards (n, K, 3) card ids, cl_live (n, K) bool:
    "holder holds at least one of cards"; acc_cards (n, A, 3), acc_live (n, A): "the envelope
    lacks at least one of cards". ``cl_live`` is updated in place (satisfied clauses drop).
    Returns (n,) bool: the facts are contradictory (no consistent deal exists).
    Works on bitmasks (:func:`fixpoint_bits`).
    """
    hb, nb = pack(has), pack(no)
    bad = fixpoint_bits(hb, nb, size, cl_holder, triple_mask(cl_cards), cl_live, triple_mask(acc_cards), acc_live,
                        max_iter)  # fmt: skip
    has[:] = unpack(hb)
    no[:] = unpack(nb)
    return bad


def triple_mask(cards: np.ndarray) -> np.ndarray:
    """(..., 3) card ids -> (...) int64 bitmask."""
    return np.bitwise_or.reduce(POW2[cards.astype(np.int64)], axis=-1) if cards.size else cards.sum(-1).astype(np.int64)


def fixpoint_bits(
    hb: np.ndarray,
    nb: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_mask: np.ndarray,
    cl_live: np.ndarray,
    acc_mask: np.ndarray,
    acc_live: np.ndarray,
    max_iter: int = 100,
) -> np.ndarray:
    """:func:`fixpoint` on bitmasks: hb, nb (n, H) int64 has / has-not per holder, in place.

    cl_mask (n, K) and acc_mask (n, A) are the clauses' cards as bitmasks.
    """
    n, H = hb.shape
    E = H - 1
    bad = np.zeros(n, bool)
    if n == 0:
        return bad
    ar = np.arange(n)
    K = cl_live.shape[1]
    nacc = acc_live.shape[1]
    if K:
        rk = ar[:, None]
        hk = cl_holder.astype(np.int64)
    shifts = np.arange(NUM_CARDS)
    for _ in range(max_iter):
        old_h, old_n = hb.copy(), nb.copy()
        # 1, 2: each card in exactly one place.
        located = np.bitwise_or.reduce(hb, axis=1)
        nb |= located[:, None] & ~hb
        poss = ~nb & FULL
        nposs = ((poss[:, :, None] >> shifts) & 1).sum(1)  # (n, 21)
        bad |= (nposs == 0).any(1)
        single = (nposs == 1) @ POW2
        hb |= poss & single[:, None]
        # 5: one envelope card per category.
        env_h = hb[:, E, None] & CAT_BITS  # (n, 3)
        env_p = ~nb[:, E, None] & CAT_BITS
        nh = np.bitwise_count(env_h)
        npo = np.bitwise_count(env_p)
        bad |= ((nh > 1) | (npo == 0)).any(1)
        nb[:, E] |= np.bitwise_or.reduce((CAT_BITS & ~env_h) * (nh >= 1), axis=1)
        hb[:, E] |= np.bitwise_or.reduce(env_p * (npo == 1), axis=1)
        # 3, 4: exact hand sizes.
        nh = np.bitwise_count(hb)
        nhu = nh + np.bitwise_count(~(hb | nb) & FULL)
        bad |= ((nh > size) | (nhu < size)).any(1)
        nb |= (~hb & FULL) * (nh >= size)
        hb |= (~nb & FULL) * (nhu <= size)
        # 6: "holds at least one of" clauses.
        if K and cl_live.any():
            gh = hb[rk, hk]
            cand = cl_mask & ~nb[rk, hk]
            live = cl_live & ((cl_mask & gh) == 0)
            nc = popcount(cand)
            bad |= (live & (nc == 0)).any(1)
            unit = live & (nc == 1)
            if unit.any():
                rows, ks = np.nonzero(unit)
                np.bitwise_or.at(hb, (rows, hk[rows, ks]), cand[rows, ks])
            cl_live[:] = live
        # 7: "the envelope lacks at least one of" clauses.
        if nacc and acc_live.any():
            env_h = hb[:, E]
            live = acc_live & ((acc_mask & nb[:, E][:, None]) == 0)
            n3 = popcount(acc_mask & env_h[:, None])
            bad |= (live & (n3 == 3)).any(1)
            two = live & (n3 == 2)
            nb[:, E] |= np.bitwise_or.reduce(np.where(two, acc_mask & ~env_h[:, None], 0), axis=1)
            acc_live[:] = live
        bad |= ((hb & nb) != 0).any(1)
        if (hb == old_h).all() and (nb == old_n).all():
            break
    bad |= (((hb[:, :, None] >> shifts) & 1).sum(1) > 1).any(1)  # a card in two places
    return bad


def probe(
    has: np.ndarray,
    no: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    cells: str = "envelope",
    rounds: int = 3,
) -> np.ndarray:
    """Failed-literal reasoning on top of :func:`fixpoint`, in place; returns the contradiction flags.

    For every unknown cell (only the envelope's with ``cells="envelope"``, every holder's with
    ``"all"``), assume it holds (and with ``"all"`` also that it does not), propagate, and
    keep the opposite conclusion when the assumption is contradictory. Repeated up to
    ``rounds`` times while it finds something. Sound: a contradiction proves that no
    consistent deal has the assumed value.
    """
    hb, nb = pack(has), pack(no)
    clm, accm = triple_mask(cl_cards), triple_mask(acc_cards)
    bad = fixpoint_bits(hb, nb, size, cl_holder, clm, cl_live, accm, acc_live)
    n, H = hb.shape
    E = H - 1
    for _ in range(rounds):
        unknown = unpack(~hb & ~nb & FULL)
        unknown[bad] = False
        if cells == "envelope":
            unknown[:, :E] = False
        g, h, c = np.nonzero(unknown)
        if len(g) == 0:
            break
        found = False
        for value in (True, False) if cells == "all" else (True,):
            ph, pn = hb[g].copy(), nb[g].copy()
            r = np.arange(len(g))
            if value:
                ph[r, h] |= POW2[c]
            else:
                pn[r, h] |= POW2[c]
            pbad = fixpoint_bits(ph, pn, size[g], cl_holder[g], clm[g], cl_live[g].copy(), accm[g], acc_live[g].copy())
            if pbad.any():
                found = True
                k = np.flatnonzero(pbad)
                np.bitwise_or.at(nb if value else hb, (g[k], h[k]), POW2[c[k]])
        if not found:
            break
        bad |= fixpoint_bits(hb, nb, size, cl_holder, clm, cl_live, accm, acc_live)
    has[:] = unpack(hb)
    no[:] = unpack(nb)
    return bad


def search_envelope(
    hb: np.ndarray,
    nb: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_mask: np.ndarray,
    cl_live: np.ndarray,
    acc_mask: np.ndarray,
    acc_live: np.ndarray,
    query: np.ndarray | None = None,
    max_rounds: int = 400,
    rng: np.random.Generator | None = None,
    stats: dict | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decide envelope cells of n games exactly, by a batched backtracking search; ``nb`` in place.

    Arguments as :func:`fixpoint_bits` (bitmasks). One query per envelope cell of ``query``
    (n, 21) bool (default: every unknown one): is there a consistent deal with this card in
    the envelope? Each query runs a depth-first search (DPLL): place the card, propagate
    with :func:`fixpoint_bits`, branch on the unplaced card with the fewest possible
    holders (trying them in random order, weighted by their open slots, so that a
    consistent deal is usually found on the first descent), back up on a contradiction.
    All queries advance together, one node each per round. A query that reaches a complete
    consistent deal proves its card possible (and so does every other query of the same
    game whose card that deal puts in the envelope); one whose tree is exhausted proves the
    card is not in the envelope, which is written into ``nb``. Queries still open after
    ``max_rounds`` rounds prove nothing (sound either way).

    Returns (decided (n,) bool: every queried cell was decided; witness (n, 21, 21) int8:
    for each envelope card found possible, a consistent deal (holder of every card) with it
    in the envelope; witnessed (n, 21) bool: which witness rows are filled). ``stats``, if
    given, receives per query its outcome (1, -1, 0 open) and the round that settled it.
    """
    n, H = hb.shape
    C = NUM_CARDS
    E = H - 1
    witness = np.zeros((n, C, C), np.int8)
    witnessed = np.zeros((n, C), bool)
    if query is None:
        query = unpack(~hb[:, E] & ~nb[:, E] & FULL)
    qg, qc = np.nonzero(query)
    Q = len(qg)
    if Q == 0:
        return np.ones(n, bool), witness, witnessed
    D = C + 1
    st_h = np.zeros((Q, D, H), np.int64)
    st_n = np.zeros((Q, D, H), np.int64)
    br_card = np.zeros((Q, D), np.int64)
    tried = np.zeros((Q, D, H), bool)
    depth = np.full(Q, -1, np.int64)
    status = np.zeros(Q, np.int8)  # 0 open, 1 possible, -1 impossible
    qa = np.arange(Q)
    shifts = np.arange(C)
    rng = rng or np.random.default_rng(0)

    def expand(q: np.ndarray, d: np.ndarray, ch: np.ndarray, cn: np.ndarray) -> None:
        """Propagate children (ch, cn) of queries q, to be put at depth d."""
        g = qg[q]
        bad = fixpoint_bits(ch, cn, size[g], cl_holder[g], cl_mask[g], cl_live[g].copy(), acc_mask[g],
                            acc_live[g].copy())  # fmt: skip
        located = np.bitwise_or.reduce(ch, axis=1)
        done = ~bad & (located == FULL)
        if done.any():
            owner = unpack(ch[done]).argmax(1).astype(np.int8)  # (r, C)
            env = np.nonzero(unpack(ch[done, E]))  # three cards per deal
            rows = g[done][env[0]]
            witness[rows, env[1]] = owner[env[0]]
            witnessed[rows, env[1]] = True
        grow = ~bad & (located != FULL)
        if grow.any():
            q, d, ch, cn, loc = q[grow], d[grow], ch[grow], cn[grow], located[grow]
            st_h[q, d], st_n[q, d] = ch, cn
            nposs = ((~cn[:, :, None] >> shifts) & 1).sum(1)  # (r, C) possible holders per card
            nposs = np.where((loc[:, None] >> shifts) & 1 == 1, 99, nposs)
            br_card[q, d] = nposs.argmin(1)
            tried[q, d] = False
            depth[q] = d

    root_h, root_n = hb[qg].copy(), nb[qg].copy()
    root_h[qa, E] |= POW2[qc]
    expand(qa, np.zeros(Q, np.int64), root_h, root_n)
    settled = np.full(Q, -1)
    for rnd in range(max_rounds):
        status[(status == 0) & witnessed[qg, qc]] = 1
        status[(status == 0) & (depth < 0)] = -1
        settled[(settled < 0) & (status != 0)] = rnd
        run = np.flatnonzero(status == 0)
        if len(run) == 0:
            break
        d = depth[run]
        card = br_card[run, d]
        cand = ((st_n[run, d] >> card[:, None]) & 1 == 0) & ~tried[run, d]
        left = cand.any(1)
        depth[run[~left]] -= 1  # every holder tried: back up
        go = run[left]
        if len(go) == 0:
            continue
        d, card = d[left], card[left]
        slots = np.maximum(size[qg[go]] - popcount(st_h[go, d]), 0) + 0.5
        h = np.where(cand[left], slots * rng.random(slots.shape), -1.0).argmax(1)
        tried[go, d, h] = True
        ch, cn = st_h[go, d].copy(), st_n[go, d].copy()
        ch[np.arange(len(go)), h] |= POW2[card]
        expand(go, d + 1, ch, cn)
    status[(status == 0) & witnessed[qg, qc]] = 1
    status[(status == 0) & (depth < 0)] = -1
    if stats is not None:
        stats.setdefault("status", []).append(status.copy())
        stats.setdefault("settled", []).append(settled)
    out = status == -1
    np.bitwise_or.at(nb, (qg[out], E), POW2[qc[out]])
    decided = np.ones(n, bool)
    decided[qg[status == 0]] = False
    return decided, witness, witnessed


def valid_deals(
    owner: np.ndarray,
    no: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
) -> np.ndarray:
    """(n, W) bool: deals ``owner`` (n, W, 21) (holder per card) agree with the facts and clauses.

    Hand sizes are not checked: deals are built complete, and sizes never change. ``no``
    must be closed under rule 1 (a located card is absent elsewhere), as after :func:`fixpoint`.
    """
    n, W, C = owner.shape
    E = no.shape[1] - 1
    o = owner.astype(np.int64)
    r = np.arange(n)[:, None, None]
    ok = ~no[r, o, np.arange(C)[None, None, :]].any(2)
    if cl_live.shape[1]:
        held = o[r[..., None], np.arange(W)[None, :, None, None], cl_cards[:, None].astype(np.int64)]  # (n, W, K, 3)
        sat = (held == cl_holder[:, None, :, None]).any(3) | ~cl_live[:, None, :]
        ok &= sat.all(2)
    if acc_live.shape[1]:
        held = o[r[..., None], np.arange(W)[None, :, None, None], acc_cards[:, None].astype(np.int64)]
        ok &= ~((held == E).all(3) & acc_live[:, None, :]).any(2)
    return ok


class Notebook:
    """Seat ``seat``'s knowledge of every game of a batch of ``batch_size`` games with ``players`` players.

    Arrays (B = batch size, H = players + 1, the envelope last):

    ``has``, ``no`` (B, H, 21) bool; ``size`` (B, H) hand sizes; clauses "holder holds at
    least one of three cards" in ``cl_holder`` (B, K), ``cl_cards`` (B, K, 3), ``cl_live`` (B, K)
    (K grows when needed); accusation clauses "the envelope lacks one of" in ``acc_cards``
    (B, P, 3), ``acc_live`` (B, P); ``processed`` (B,) history records taken in; ``shown_by_me``
    (B, P, 21): cards this seat showed to each player; ``shown_to`` (B, P): refutations each
    player received, ``unrefuted`` (B, P): suggestions of each player that nobody refuted
    (public counts, for guessing how close opponents are), ``named`` (B, P, 21): cards each player
    has named in a suggestion (public, for telling how an opponent plays); ``bad`` (B,) contradiction seen (never
    happens in a consistent game); ``witness`` (B, 21, 21) / ``wvalid`` (B, 21): a stored
    consistent deal with each envelope card in the envelope (see ``_exact_envelope``);
    ``undecided`` (B,): the last exact search ran out of rounds; ``version`` (B,): a counter
    bumped whenever a game's facts may have changed (for caches).

    Options: ``exact`` decides every envelope cell exactly (witnesses and search, default);
    ``probe_cells`` ("envelope", "all" or None) adds failed-literal probing (:func:`probe`);
    ``search_rounds`` bounds the search; ``witness_samples`` sampled deals are tried as
    witnesses before searching.
    """

    def __init__(
        self,
        batch_size: int,
        players: int,
        seat: int,
        exact: bool = True,
        exact_triples: int | None = None,
        probe_cells: str | None = None,
        search_rounds: int = 200,
        witness_samples: int = 4,
        seed: int | None = None,
    ) -> None:
        B, P = batch_size, players
        self.B, self.P, self.seat, self.E = B, P, seat, P
        self.exact = exact
        self.exact_triples = exact_triples
        self.probe_cells = probe_cells
        self.search_rounds = search_rounds
        self.witness_samples = witness_samples
        self.rng = np.random.default_rng(seed)
        self.has = np.zeros((B, P + 1, NUM_CARDS), bool)
        self.no = np.zeros((B, P + 1, NUM_CARDS), bool)
        self.size = np.zeros((B, P + 1), np.int64)
        self.cl_holder = np.zeros((B, 8), np.int8)
        self.cl_cards = np.zeros((B, 8, 3), np.int8)
        self.cl_live = np.zeros((B, 8), bool)
        self.acc_cards = np.zeros((B, P, 3), np.int8)
        self.acc_live = np.zeros((B, P), bool)
        self.processed = np.zeros(B, np.int64)
        self.shown_by_me = np.zeros((B, P, NUM_CARDS), bool)
        self.shown_to = np.zeros((B, P), np.int64)  # public: refutations each player has received
        self.unrefuted = np.zeros((B, P), np.int64)  # public: suggestions of each player nobody refuted
        self.named = np.zeros((B, P, NUM_CARDS), bool)  # public: cards each player has named in a suggestion
        self.bad = np.zeros(B, bool)
        self.witness = np.zeros((B, NUM_CARDS, NUM_CARDS), np.int8)
        self.wvalid = np.zeros((B, NUM_CARDS), bool)
        self.undecided = np.zeros(B, bool)
        self.version = np.zeros(B, np.int64)  # bumped whenever a game's facts may have changed
        self.search_stats: dict | None = None  # set to {} to collect search statistics

    # ------------------------------------------------------------------ reset
    def reset(self, idx: np.ndarray, hand: np.ndarray, hand_sizes: np.ndarray) -> None:
        """Games ``idx`` start: own hand (n, 21) bool, public hand sizes (n, P)."""
        idx = np.asarray(idx, np.int64)
        self.has[idx] = False
        self.no[idx] = False
        self.has[idx, self.seat] = hand
        self.no[idx, self.seat] = ~hand  # R-S6: the whole hand is known
        self.size[idx, : self.P] = hand_sizes
        self.size[idx, self.E] = ENVELOPE_SIZE
        self.cl_live[idx] = False
        self.acc_live[idx] = False
        self.processed[idx] = 0
        self.shown_by_me[idx] = False
        self.shown_to[idx] = 0
        self.unrefuted[idx] = 0
        self.named[idx] = False
        self.bad[idx] = False
        self.wvalid[idx] = False
        self.undecided[idx] = False
        self.propagate(idx)

    # ---------------------------------------------------------------- records
    def _grow(self, need: int) -> None:
        K = self.cl_live.shape[1]
        if need <= K:
            return
        newK = max(need, 2 * K)
        for name in ("cl_holder", "cl_cards", "cl_live"):
            old = getattr(self, name)
            new = np.zeros((old.shape[0], newK) + old.shape[2:], old.dtype)
            new[:, :K] = old
            setattr(self, name, new)

    def add_records(self, rec: Records) -> np.ndarray:
        """Take in history records (complete ones only); returns the games that got new facts."""
        if len(rec.game) == 0:
            return np.zeros(0, np.int64)
        me = self.seat
        g = rec.game
        cards = A.category_cards(rec.triple)  # (m, 3)
        resp = rec.response  # (m, P)
        sugg = ~rec.is_accusation
        # Passes: holds none of the three (R-G6).
        rows, seats = np.nonzero((resp == PASSED) & sugg[:, None])
        for j in range(3):
            self.no[g[rows], seats, cards[rows, j]] = True
        # Shown to me: has. Shown by me: remembered (for the refutation policy).
        rows, seats = np.nonzero((resp >= 0) & sugg[:, None])
        card = resp[rows, seats].astype(np.int64)
        to_me = rec.player[rows] == me
        self.has[g[rows[to_me]], seats[to_me], card[to_me]] = True
        by_me = (seats == me) & ~to_me
        self.shown_by_me[g[rows[by_me]], rec.player[rows[by_me]], card[by_me]] = True
        # Public counts: refutations received, suggestions nobody refuted.
        shows = ((resp >= 0) | (resp == HIDDEN)).sum(1)
        np.add.at(self.shown_to, (g[sugg], rec.player[sugg].astype(np.int64)), shows[sugg])
        lone = sugg & (shows == 0)
        np.add.at(self.unrefuted, (g[lone], rec.player[lone].astype(np.int64)), 1)
        self.named[g[sugg, None], rec.player[sugg, None].astype(np.int64), cards[sugg]] = True
        # Hidden refutations: clauses.
        rows, seats = np.nonzero((resp == HIDDEN) & sugg[:, None])
        if len(rows):
            cg = g[rows]
            order = np.argsort(cg, kind="stable")
            rows, seats, cg = rows[order], seats[order], cg[order]
            # Put each new clause in a free slot: compact the live clauses first.
            self._compact(np.unique(cg))
            first = np.searchsorted(cg, cg, side="left")
            slot = self.cl_live[cg].sum(1) + np.arange(len(cg)) - first
            self._grow(int(slot.max()) + 1)
            self.cl_holder[cg, slot] = seats
            self.cl_cards[cg, slot] = cards[rows]
            self.cl_live[cg, slot] = True
        # Wrong accusations of others: the envelope lacks at least one of the three.
        wrong = rec.is_accusation & ~rec.correct & (rec.player != me)
        if wrong.any():
            wg, wp = g[wrong], rec.player[wrong].astype(np.int64)
            self.acc_cards[wg, wp] = cards[wrong]
            self.acc_live[wg, wp] = True
        return np.unique(g)

    def _compact(self, games: np.ndarray) -> None:
        """Move the live clauses of ``games`` to the front of their rows."""
        if len(games) == 0:
            return
        order = np.argsort(~self.cl_live[games], axis=1, kind="stable")
        r = games[:, None]
        self.cl_holder[games] = self.cl_holder[r, order]
        self.cl_cards[games] = self.cl_cards[r, order]
        self.cl_live[games] = self.cl_live[r, order]

    def set_envelope(self, idx: np.ndarray, envelope: np.ndarray) -> None:
        """Envelope card ids (n, 3), -1 where unknown (this seat accused: R-A2)."""
        known = envelope[:, 0] >= 0
        if known.any():
            gi = idx[known]
            self.has[gi[:, None], self.E, envelope[known].astype(np.int64)] = True

    def update(self, view: PlayerView, idx: np.ndarray) -> None:
        """Take in every complete record of games ``idx`` not yet seen, then propagate."""
        idx = np.asarray(idx, np.int64)
        if len(idx) == 0:
            return
        hl = view.hist_len.astype(np.int64)
        # The last record of a game being refuted is still incomplete: leave it for later.
        limit = hl - (view.phase == A.REFUTE)
        seen = hl.copy()
        seen[idx] = np.minimum(self.processed[idx], limit[idx])
        rec = view.new_records(seen)
        keep = rec.index < limit[rec.game]
        if not keep.all():
            rec = Records(*(a[keep] for a in rec))
        changed = self.add_records(rec)
        self.processed[idx] = np.maximum(self.processed[idx], limit[idx])
        env = view.envelope_if_known[idx]
        self.set_envelope(idx, env)
        changed = np.union1d(changed, idx[env[:, 0] >= 0])
        if len(changed):
            self.propagate(changed)

    # ------------------------------------------------------------ propagation
    def arrays(self, idx: np.ndarray) -> tuple[np.ndarray, ...]:
        """Copies of the arrays of games ``idx`` in the argument order of :func:`fixpoint`."""
        return (
            self.has[idx].copy(),
            self.no[idx].copy(),
            self.size[idx],
            self.cl_holder[idx],
            self.cl_cards[idx],
            self.cl_live[idx].copy(),
            self.acc_cards[idx],
            self.acc_live[idx].copy(),
        )

    def propagate(self, idx: np.ndarray) -> None:
        """Close the facts of games ``idx`` (:func:`fixpoint`, then exact envelope facts if ``exact``)."""
        idx = np.asarray(idx, np.int64)
        if len(idx) == 0:
            return
        self.version[idx] += 1
        args = self.arrays(idx)
        if self.probe_cells:
            bad = probe(*args, cells=self.probe_cells)
            has, no, size, clh, clc, cll, accc, accl = args
            hb, nb = pack(has), pack(no)
        else:
            has, no, size, clh, clc, cll, accc, accl = args
            hb, nb = pack(has), pack(no)
            bad = fixpoint_bits(hb, nb, size, clh, triple_mask(clc), cll, triple_mask(accc), accl)
        if self.exact:
            bits = (hb, nb, size, clh, triple_mask(clc), cll, triple_mask(accc), accl)
            bad |= self._exact_envelope(idx, bits, bad)
        self.has[idx], self.no[idx] = unpack(hb), unpack(nb)
        self.cl_live[idx], self.acc_live[idx] = cll, accl
        self.bad[idx] |= bad

    def _exact_envelope(self, idx: np.ndarray, bits: tuple[np.ndarray, ...], bad: np.ndarray) -> np.ndarray:
        """Decide every unknown envelope cell: possible if a stored or new witness deal shows it, else search.

        A witness is a complete deal consistent with everything known that puts the card in
        the envelope; it stays valid until new facts contradict it, so most cells need no
        search after the first time. New witnesses come from a few deals sampled with the
        card forced into the envelope, then from :func:`search_envelope`, which also proves
        the impossible cells. ``bits`` are the
        arguments of :func:`fixpoint_bits`, updated in place. Returns new contradiction
        flags (none in a consistent game).
        """
        hb, nb = bits[0], bits[1]
        E = self.E
        unknown = unpack(~hb[:, E] & ~nb[:, E] & FULL) & ~bad[:, None]
        if self.exact_triples is not None:  # only where few envelope hypotheses are left
            triples = np.bitwise_count(~nb[:, E, None] & CAT_BITS).astype(np.int64).prod(1)
            unknown &= (triples <= self.exact_triples)[:, None]
        valid = self.wvalid[idx] & unknown
        check = np.flatnonzero(valid.any(1))
        if len(check):
            gi = idx[check]
            ok = valid_deals(self.witness[gi], unpack(nb[check]), self.cl_holder[gi], self.cl_cards[gi],
                             bits[5][check], self.acc_cards[gi], bits[7][check])  # fmt: skip
            valid[check] &= ok
        need = unknown & ~valid
        new_bad = np.zeros(len(idx), bool)
        todo = np.flatnonzero(need.any(1))
        if len(todo) and self.witness_samples:
            # Deals sampled with each unwitnessed card forced into the envelope, clauses satisfied first.
            rows, cards = np.nonzero(need[todo])
            rows = todo[rows]
            gi = idx[rows]
            h0 = unpack(hb[rows])
            h0[np.arange(len(rows)), E, cards] = True
            owner, _, alive = sample_deals(
                h0, unpack(nb[rows]), bits[2][rows], self.cl_holder[gi], self.cl_cards[gi], bits[5][rows],
                self.acc_cards[gi], bits[7][rows], samples=self.witness_samples, rng=self.rng, clauses_first=True,
            )  # fmt: skip
            self._register(idx, rows, owner, alive, valid)
            need = unknown & ~valid
            todo = np.flatnonzero(need.any(1))
        if len(todo):
            sub = [a[todo] for a in bits]
            decided, witness, witnessed = search_envelope(
                *sub, query=need[todo], max_rounds=self.search_rounds, rng=self.rng, stats=self.search_stats
            )
            gi = idx[todo]
            self.undecided[gi] = ~decided
            self.witness[gi] = np.where(witnessed[:, :, None], witness, self.witness[gi])
            valid[todo] |= witnessed
            new_bad[todo] = fixpoint_bits(*sub)
            for k in (0, 1, 5, 7):  # hb, nb, cl_live, acc_live
                bits[k][todo] = sub[k]
        self.wvalid[idx] = valid
        return new_bad

    def _register(
        self, idx: np.ndarray, rows: np.ndarray, owner: np.ndarray, alive: np.ndarray, valid: np.ndarray
    ) -> None:
        """Store sampled consistent deals (owner (r, M, 21), alive (r, M)) as witnesses of their envelope cards."""
        r, m, c = np.nonzero((owner == self.E) & alive[:, :, None])
        if len(r):
            self.witness[idx[rows[r]], c] = owner[r, m]
            valid[rows[r], c] = True

    # ---------------------------------------------------------------- queries
    def envelope_known(self, idx: np.ndarray) -> np.ndarray:
        """(n, 3) envelope card ids where the category is determined, else -1."""
        env = self.has[idx, self.E]  # (n, 21)
        out = np.full((len(idx), 3), -1, np.int64)
        for k, sl in enumerate(CAT_SLICES):
            part = env[:, sl]
            out[:, k] = np.where(part.any(1), part.argmax(1) + sl.start, -1)
        return out

    def solved(self, idx: np.ndarray) -> np.ndarray:
        """(n,) bool: the whole envelope is determined (and the notebook is consistent)."""
        return (self.has[idx, self.E].sum(1) == 3) & ~self.bad[idx]

    def marginals(self, idx: np.ndarray) -> np.ndarray:
        """(n, H, 21) rough probability that each holder holds each card, from the facts only.

        A holder that may hold a card weighs (open slots) / (possible cards) (the envelope
        per category); weights are normalised over the holders of each card.
        """
        has, no = self.has[idx], self.no[idx]
        return marginals(has, no, self.size[idx])


def marginals(has: np.ndarray, no: np.ndarray, size: np.ndarray) -> np.ndarray:
    """See :meth:`Notebook.marginals`; (n, H, 21) float."""
    E = has.shape[1] - 1
    unknown = ~has & ~no
    slots = np.maximum(size - has.sum(2), 0).astype(np.float64)  # (n, H)
    cand = unknown.sum(2).astype(np.float64)
    w = np.where(unknown, (slots / np.maximum(cand, 1))[:, :, None], 0.0)
    env_u = unknown[:, E]  # (n, 21)
    for sl in CAT_SLICES:
        cnt = env_u[:, sl].sum(1, keepdims=True)
        open_ = ~has[:, E, sl].any(1, keepdims=True)
        w[:, E, sl] = np.where(env_u[:, sl] & open_, 1.0 / np.maximum(cnt, 1), 0.0)
    total = w.sum(1, keepdims=True)
    p = np.where(total > 0, w / np.where(total > 0, total, 1), 0.0)
    return np.where(has, 1.0, p)


def sample_deals(
    has: np.ndarray,
    no: np.ndarray,
    size: np.ndarray,
    cl_holder: np.ndarray,
    cl_cards: np.ndarray,
    cl_live: np.ndarray,
    acc_cards: np.ndarray,
    acc_live: np.ndarray,
    samples: int,
    rng: np.random.Generator,
    clauses_first: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted deals consistent with the facts and clauses of n games (sequential importance sampling).

    Unknown cards are placed one at a time (fewest possible holders first), each among the
    holders that may hold it and have room, with probability proportional to the room
    they have; deals that break a clause are dropped and the rest weighted by 1 / (their
    proposal probability), which makes the weighted sample target the uniform distribution
    over consistent deals. Returns owner (n, M, 21) int8 holder per card, weights (n, M)
    summing to 1 per game (all 0 where no sample survived), and alive (n, M): the deal is
    consistent (its weight may still underflow to 0).

    ``clauses_first``: first satisfy each open clause by placing one of its possible cards
    (at random) with its holder, then fill in the rest. Many more samples survive when the
    clauses are tight, but the weights are then meaningless (uniform over the survivors):
    use it to find consistent deals (witnesses), not to estimate probabilities.
    """
    n, H, C = has.shape
    E = H - 1
    M = samples
    N = n * M
    g_of = np.repeat(np.arange(n), M)
    known = has.any(1)
    owner0 = np.where(known, has.argmax(1), -1).astype(np.int8)  # (n, 21)
    owner = np.repeat(owner0, M, axis=0)  # (N, 21)
    cap = np.repeat(np.maximum(size - has.sum(2), 0), M, axis=0).astype(np.int64)  # (N, H)
    env_open = np.stack([~has[:, E, sl].any(1) for sl in CAT_SLICES], 1)  # (n, 3)
    env_cap = np.repeat(env_open, M, axis=0).astype(np.int64)  # (N, 3)
    unk_total = np.repeat((~known).sum(1), M).astype(np.int64)
    unk_cat = np.repeat(np.stack([(~known[:, sl]).sum(1) for sl in CAT_SLICES], 1), M, axis=0).astype(np.int64)
    nposs = (~no).sum(1) + 100 * known  # known cards last
    order = np.argsort(nposs, axis=1, kind="stable")  # (n, 21)
    steps = int((~known).sum(1).max()) if n else 0
    logq = np.zeros(N)
    alive = np.ones(N, bool)
    ar = np.arange(N)
    allowed_all = ~no  # (n, H, 21)
    if clauses_first and cl_live.shape[1]:
        slots = np.flatnonzero(cl_live.any(0))
        for k in rng.permutation(slots):
            hk = cl_holder[g_of, k].astype(np.int64)
            ck = cl_cards[g_of, k].astype(np.int64)  # (N, 3)
            held = owner[ar[:, None], ck]
            todo = alive & cl_live[g_of, k] & ~(held == hk[:, None]).any(1) & (cap[ar, hk] > 0)
            cand = (held < 0) & allowed_all[g_of[:, None], hk[:, None], ck] & todo[:, None]
            rows = np.flatnonzero(cand.any(1))
            if len(rows) == 0:
                continue
            j = np.where(cand[rows], rng.random((len(rows), 3)), -1.0).argmax(1)
            cr = ck[rows, j]
            owner[rows, cr] = hk[rows]
            cap[rows, hk[rows]] -= 1
            unk_total[rows] -= 1
            unk_cat[rows, CATEGORY[cr]] -= 1
    for t in range(steps):
        c = order[g_of, t]  # (N,)
        todo = alive & (owner[ar, c] < 0)
        if not todo.any():
            continue
        rows = np.flatnonzero(todo)
        cr = c[rows]
        cat = CATEGORY[cr]
        allowed = allowed_all[g_of[rows], :, cr]  # (r, H)
        w = np.zeros((len(rows), H))
        w[:, :E] = cap[rows, :E] / np.maximum(unk_total[rows], 1)[:, None]
        w[:, E] = env_cap[rows, cat] / np.maximum(unk_cat[rows, cat], 1)
        w = np.where(allowed, w, 0.0)
        tot = w.sum(1)
        dead = tot <= 0
        alive[rows[dead]] = False
        live = ~dead
        rows, cr, cat, w, tot = rows[live], cr[live], cat[live], w[live], tot[live]
        cum = np.cumsum(w, 1)
        u = rng.random(len(rows)) * tot
        h = np.minimum((cum <= u[:, None]).sum(1), H - 1)
        # guard against rounding picking a zero-weight holder
        h = np.where(w[np.arange(len(rows)), h] > 0, h, w.argmax(1))
        logq[rows] += np.log(w[np.arange(len(rows)), h] / tot)
        owner[rows, cr] = h
        is_env = h == E
        cap[rows[~is_env], h[~is_env]] -= 1
        env_cap[rows[is_env], cat[is_env]] -= 1
        unk_total[rows] -= 1
        unk_cat[rows, cat] -= 1
    # Clauses.
    K = cl_live.shape[1]
    if K:
        held = owner[ar[:, None, None], np.repeat(cl_cards, M, axis=0).astype(np.int64)]  # (N, K, 3)
        ok = (held == np.repeat(cl_holder, M, axis=0)[:, :, None]).any(2) | ~np.repeat(cl_live, M, axis=0)
        alive &= ok.all(1)
    if acc_live.shape[1]:
        held = owner[ar[:, None, None], np.repeat(acc_cards, M, axis=0).astype(np.int64)]
        broken = (held == E).all(2) & np.repeat(acc_live, M, axis=0)
        alive &= ~broken.any(1)
    if clauses_first:
        logq[:] = 0.0
    logw = np.where(alive, -logq, -np.inf).reshape(n, M)
    top = logw.max(1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    w = np.exp(logw - top)
    s = w.sum(1, keepdims=True)
    w = np.where(s > 0, w / np.where(s > 0, s, 1), 0.0)
    return owner.reshape(n, M, C), w, alive.reshape(n, M)


# ============================================================ reference oracle (tests, completeness)
def raw_information(view: PlayerView, game: int, upto: int | None = None) -> dict:
    """What seat ``view.seat`` knows of game ``game`` from its first ``upto`` records, as plain Python.

    Keys: ``players``, ``seat``, ``hand`` (card list), ``sizes`` (per seat), ``passes``
    [(seat, cards)], ``shown`` [(seat, card)] shown to this seat, ``clauses`` [(seat, cards)]
    refutations not seen, ``accusations`` [cards] wrong accusations of others, ``envelope``
    (card ids, or None). Only complete records count (as in :meth:`Notebook.update`).
    """
    hl = int(view.hist_len[game])
    limit = hl - int(view.phase[game] == A.REFUTE)
    upto = limit if upto is None else min(upto, limit)
    rec = view.records(np.full(upto, game), np.arange(upto))
    me = view.seat
    info = {
        "players": view.num_players,
        "seat": me,
        "hand": [int(c) for c in np.flatnonzero(view.hand[game])],
        "sizes": [int(x) for x in view.hand_sizes[game]],
        "passes": [],
        "shown": [],
        "clauses": [],
        "accusations": [],
        "envelope": None,
    }
    for k in range(upto):
        cards = [int(c) for c in A.category_cards(rec.triple[k])]
        if rec.is_accusation[k]:
            if not rec.correct[k] and rec.player[k] != me:
                info["accusations"].append(cards)
            continue
        for seat, r in enumerate(rec.response[k]):
            if r == PASSED:
                info["passes"].append((seat, cards))
            elif r == HIDDEN:
                info["clauses"].append((seat, cards))
            elif r >= 0 and rec.player[k] == me:
                info["shown"].append((seat, int(r)))
    env = view.envelope_if_known[game]
    if env[0] >= 0:
        info["envelope"] = [int(c) for c in env]
    return info


def enumerate_deals(info: dict, node_limit: int = 200_000, with_triples: bool = False) -> tuple | None:
    """Every deal consistent with ``info`` (see :func:`raw_information`), by brute force.

    Returns (number of deals, occurs) with occurs (H, 21) bool: some consistent deal puts
    the card with that holder (holder P is the envelope), plus with ``with_triples`` a dict
    envelope (suspect, weapon, room) card ids -> number of deals; None if the search would
    visit more than ``node_limit`` nodes. Uses only the raw information, none of the notebook's
    rules, so it is an independent oracle for what can be proved.
    """
    P, me = info["players"], info["seat"]
    E = P
    owner = [-1] * NUM_CARDS
    for c in info["hand"]:
        owner[c] = me
    for seat, c in info["shown"]:
        owner[c] = seat
    if info["envelope"]:
        for c in info["envelope"]:
            owner[c] = E
    allowed = [[h for h in range(P + 1) if h != me] for _ in range(NUM_CARDS)]
    for seat, cards in info["passes"]:
        for c in cards:
            if seat in allowed[c]:
                allowed[c].remove(seat)
    cap = [info["sizes"][h] for h in range(P)] + [0]
    env_cap = [1, 1, 1]
    for c in range(NUM_CARDS):
        if owner[c] >= 0:
            if owner[c] == E:
                env_cap[CATEGORY[c]] -= 1
            else:
                cap[owner[c]] -= 1
            if owner[c] not in allowed[c] and owner[c] != me:
                return (0, np.zeros((P + 1, NUM_CARDS), bool)) + (({},) if with_triples else ())  # inconsistent
    free = sorted((c for c in range(NUM_CARDS) if owner[c] < 0), key=lambda c: len(allowed[c]))
    clauses = info["clauses"]
    accs = info["accusations"]
    # Check each clause as soon as its last card is placed.
    last_pos = {c: i for i, c in enumerate(free)}
    check_at: list[list[tuple[str, int, list[int]]]] = [[] for _ in range(len(free) + 1)]
    for seat, cards in clauses:
        at = max((last_pos.get(c, -1) for c in cards), default=-1) + 1
        check_at[at].append(("c", seat, cards))
    for cards in accs:
        at = max((last_pos.get(c, -1) for c in cards), default=-1) + 1
        check_at[at].append(("a", E, cards))
    occurs = np.zeros((P + 1, NUM_CARDS), bool)
    triples: dict[tuple[int, int, int], int] = {}
    count = 0
    nodes = 0

    def ok(at: int) -> bool:
        for kind, seat, cards in check_at[at]:
            if kind == "c" and not any(owner[c] == seat for c in cards):
                return False
            if kind == "a" and all(owner[c] == E for c in cards):
                return False
        return True

    def dfs(i: int) -> bool:
        nonlocal count, nodes
        nodes += 1
        if nodes > node_limit:
            return False
        if not ok(i):
            return True
        if i == len(free):
            count += 1
            for c in range(NUM_CARDS):
                occurs[owner[c], c] = True
            env = tuple(c for c in range(NUM_CARDS) if owner[c] == E)
            triples[env] = triples.get(env, 0) + 1
            return True
        c = free[i]
        k = CATEGORY[c]
        for h in allowed[c]:
            if h == E:
                if env_cap[k] == 0:
                    continue
                env_cap[k] -= 1
            elif cap[h] == 0:
                continue
            else:
                cap[h] -= 1
            owner[c] = h
            go_on = dfs(i + 1)
            owner[c] = -1
            if h == E:
                env_cap[k] += 1
            else:
                cap[h] += 1
            if not go_on:
                return False
        return True

    extra = (triples,) if with_triples else ()
    if not ok(0) or any(x < 0 for x in cap) or any(x < 0 for x in env_cap):
        return (0, occurs) + extra
    if not dfs(0):
        return None
    return (count, occurs) + extra
