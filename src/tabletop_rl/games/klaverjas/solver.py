"""Open-hand (double-dummy) alpha-beta solver for the rest of a Klaverjas deal, in numba.

The value of a position is, for team 0 (seats 0 and 2), the card points plus roem (and the
last-trick bonus) it takes from the remaining tricks minus what team 1 takes. Pit, nat and the kraken
multiplier are not part of the value: the solver plays for the point difference, which is what decides
them too. It only ever sees the hands it is given: a search policy hands it a determinised deal
(``determinize.py``), never the true one.

What makes it fast, each piece exact (``tests/games/klaverjas/test_klaverjas_solver.py`` checks the values
against plain minimax over the rules core under every rule knob):

- a transposition table of the positions at the start of a trick, keyed on the four remaining hands,
  the leader and the rule context, holding a lower and an upper bound relative to the score so far
  (the same rest of a deal is reached after many orders of the earlier tricks) and the best card;
- enhanced transposition cutoffs: before the last card of a trick is searched, the table is asked
  about the trick starts each card leads to;
- move ordering: the table's best card, then cards that take the trick cheaply, smearing points on a
  trick the partner holds, low cards when the trick is lost; leads try high plain cards first;
- the last trick is scored directly (every hand has one card left);
- equivalent cards: two cards of one hand, one suit and equal points with no card of another hand
  between them in trick-taking order are interchangeable in every line of play, unless one of them
  could still complete a run or a scoring quartet with other hands' cards (roem depends on exact
  sequence ranks) — then both are searched. Only one card of each interchangeable group is searched;
- null-window searches for the exact value of each card at the root (widening steps, then bisection),
  sharing the table.

>>> from tabletop_rl.games.klaverjas import rules as R
>>> s = R.position({0: ["AS", "7H"], 1: ["7S", "8S"], 2: ["KS", "8H"], 3: ["QS", "9S"]}, "H", leader=0)
>>> values = card_values_of(s)
>>> values[R.card_id("AS")], values[R.card_id("7H")]   # N-S take both tricks; W keeps QS back (no roem)
(28, 28)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabletop_rl.games.klaverjas import rules as R

__all__ = ["C_CONTEXT", "C_QUARTETS", "C_REGIME", "C_SIZE", "C_STUK_IN_TRICK", "C_STUK_SEAT", "C_TRUMP", "INF",
           "card_values", "card_values_of", "deal_value", "new_table"]

INF = 1 << 30
_TABLE_BITS = 20
# table columns: two key words, context, lower and upper bound (relative to the score so far), best card
_T_KEY0, _T_KEY1, _T_CONTEXT, _T_LOWER, _T_UPPER, _T_BEST, _T_SIZE = range(7)
# configuration of one solve (``_solver_config``): trump, follow regime, stuk counted in the trick,
# seat that scores a stuk declared from hand (-1 none), the table context of all these, quartet roem by rank
C_TRUMP, C_REGIME, C_STUK_IN_TRICK, C_STUK_SEAT, C_CONTEXT, C_QUARTETS, C_SIZE = 0, 1, 2, 3, 4, 5, 13
# search stack columns; _S_MOVES holds up to 8 ordered cards
(_S_LEADER, _S_TRICK, _S_N, _S_BASE, _S_ALPHA, _S_BETA, _S_ALPHA0, _S_BETA0, _S_BEST, _S_BEST_CARD, _S_CARD, _S_SLOT,
 _S_VALUE, _S_COUNT, _S_NEXT, _S_MOVES) = range(16)
_S_SCORES = _S_MOVES + 8  # their ordering scores
_S_SIZE = _S_SCORES + 8


def new_table(bits: int = _TABLE_BITS) -> np.ndarray:
    """A transposition table for ``card_values`` and ``deal_value`` (2**bits rows; valid across deals and rule
    sets).

    >>> new_table(4).shape
    (16, 6)
    """
    table = np.zeros((1 << bits, _T_SIZE), np.int64)
    table[:, _T_CONTEXT] = -1
    return table


@njit(cache=True)
def _solver_config(state):
    """The rule configuration of a solve from ``state`` (its hands and record): trump, follow regime, how
    stuk counts, and for ``stuk_mode="declared_from_hand"`` the seat that will score it (it holds both
    K and Q of trump, or holds one and played the other)."""
    cfg = np.zeros(C_SIZE, np.int64)
    trump = state[R.TRUMP]
    cfg[C_TRUMP] = trump
    cfg[C_REGIME] = R.follow_regime(state)
    cfg[C_STUK_IN_TRICK] = state[R.STUK_MODE] == R.STUK_SAME_TRICK
    cfg[C_STUK_SEAT] = -1
    cfg[C_QUARTETS:C_QUARTETS + 8] = state[R.QUARTETS:R.QUARTETS + 8]
    if state[R.STUK_MODE] == R.STUK_DECLARED:
        king, queen = 8 * trump + R.KING, 8 * trump + R.QUEEN
        for seat in range(4):
            holds_king, holds_queen = (state[R.HAND + seat] >> king) & 1, (state[R.HAND + seat] >> queen) & 1
            if ((holds_king and holds_queen) or (holds_king and R.player_of(state, queen) == seat)
                    or (holds_queen and R.player_of(state, king) == seat)):
                cfg[C_STUK_SEAT] = seat
    cfg[C_CONTEXT] = _rules_context(cfg)
    return cfg


@njit(cache=True)
def _rules_context(cfg):
    """Everything besides the hands and the leader that a trick-start value depends on, as one number
    (quartets hashed), so one table may serve deals of different trumps and rule sets."""
    q = 0
    for r in range(8):
        q = q * 1009 + cfg[C_QUARTETS + r]
    mode = cfg[C_TRUMP] + 4 * (cfg[C_REGIME] + 3 * (cfg[C_STUK_IN_TRICK] + 2 * (cfg[C_STUK_SEAT] + 1)))
    return 4 * (mode + 256 * (q & 0xFFFFFFFFFFF))


@njit(cache=True, inline="always")
def _slot(hands, context, size):
    key = (hands[0] * 0x9E3779B97F4A7C15) ^ (hands[1] * 0xC2B2AE3D27D4EB4F) ^ (hands[2] * 0x165667B19E3779F9)
    key ^= hands[3] * 0x27D4EB2F165667C5 + context * 0x94D049BB133111EB
    return (key ^ (key >> 29)) & (size - 1)


@njit(cache=True)
def _foreign(hands, played, t, n, seat):
    """The cards ``seat``'s cards are up against: the other hands and the ``n`` cards on the table of trick ``t``."""
    foreign = np.int64(0)
    for s in range(4):
        if s != seat:
            foreign |= hands[s]
    for k in range(n):
        foreign |= np.int64(1) << played[4 * t + k]
    return foreign


@njit(cache=True)
def _trick_gain(played, t, leader, cfg):
    """Winner seat and points (cards + roem + last-trick bonus) of the complete trick ``t``."""
    cards = played[4 * t:4 * t + 4]
    trump = cfg[C_TRUMP]
    winner = (leader + R.winning_position(cards, 4, trump)) % 4
    gain = R.trick_points(cards, trump) + R.trick_roem(cards, trump, cfg[C_QUARTETS:C_QUARTETS + 8],
                                                        cfg[C_STUK_IN_TRICK] != 0)
    if t == 7:
        gain += R.LAST_TRICK_BONUS
    return winner, gain


@njit(cache=True, inline="always")
def _declared_stuk(remaining, seat, card, cfg):
    """Roem (signed for team 0) that ``seat`` scores by playing ``card`` and keeping ``remaining``: the
    stuk declared from hand, when this was the last of its K and Q of trump."""
    if seat != cfg[C_STUK_SEAT] or R.suit_of(card) != cfg[C_TRUMP]:
        return 0
    pair = (np.int64(1) << (8 * cfg[C_TRUMP] + R.KING)) | (np.int64(1) << (8 * cfg[C_TRUMP] + R.QUEEN))
    if (np.int64(1) << card) & pair == 0 or remaining & pair:
        return 0
    return R.STUK_ROEM if seat % 2 == 0 else -R.STUK_ROEM


@njit(cache=True)
def _may_score_roem(card, foreign, cfg):
    """Whether ``card`` could still be part of a run or a scoring quartet with cards of other hands
    (``foreign``: the cards other seats hold or have on the table in this trick)."""
    suit, rank = R.suit_of(card), R.rank_of(card)
    other = (foreign >> (8 * suit)) & 0xFF
    below2 = rank >= 2 and (other >> (rank - 2)) & 3 == 3
    around = 1 <= rank <= 6 and (other >> (rank - 1)) & 1 and (other >> (rank + 1)) & 1
    above2 = rank <= 5 and (other >> (rank + 1)) & 3 == 3
    if below2 or around or above2:
        return True
    if cfg[C_QUARTETS + rank] == 0:
        return False
    for s in range(4):
        if s != suit and not (foreign >> (8 * s + rank)) & 1:
            return False
    return True


@njit(cache=True)
def _equivalents(legal, foreign, cfg):
    """The legal cards that need no search of their own: each is interchangeable with a lower card of its
    suit that is searched. Only cards without points can be interchangeable (every other card of a suit
    has its own point value); those are the 7 8 9 of a plain suit and the 7 8 of trump, the lowest in
    trick-taking order, so two of them are neighbours unless another hand holds a card between them."""
    pruned = np.int64(0)
    for suit in range(4):
        prev, gap = -1, False
        for rank in range(2 if suit == cfg[C_TRUMP] else 3):
            card = 8 * suit + rank
            if (foreign >> card) & 1:
                gap = True
            elif (legal >> card) & 1:
                if _may_score_roem(card, foreign, cfg):
                    prev = -1
                elif prev >= 0 and not gap:
                    pruned |= np.int64(1) << card
                else:
                    prev, gap = card, False
    return pruned


@njit(cache=True)
def _fill_moves(node, hands, played, t, n, seat, cfg, first):
    """Ordered, equivalence-pruned legal cards of ``seat`` into ``node[_S_MOVES:]``; ``first``: a card
    to try first (the table's best), -1 none. Order (higher first): take the trick cheaply, smear
    points as last to play on a trick the partner holds, else go low; a lead tries high plain cards
    first. (Orders tried on first-trick deals: this one needs about half the nodes of "strongest first".)"""
    trump = cfg[C_TRUMP]
    legal = R.legal_cards(hands[seat], played[4 * t:4 * t + 4], n, trump, cfg[C_REGIME])
    node[_S_NEXT] = 0
    if legal & (legal - 1) == 0:
        node[_S_MOVES] = R.lowest_card(legal)
        node[_S_COUNT] = 1
        return
    foreign = _foreign(hands, played, t, n, seat)
    led, best, partner = -1, 0, False
    if n:
        cards = played[4 * t:4 * t + 4]
        led = R.suit_of(cards[0])
        winning = R.winning_position(cards, n, trump)
        best = R.strength(cards[winning], trump, led)
        partner = winning == n - 2
    legal &= ~_equivalents(legal, foreign, cfg)
    count = 0
    while legal:
        card = R.lowest_card(legal)
        legal ^= np.int64(1) << card
        points = R.card_points(card, trump)
        if card == first:
            score = INF
        elif n == 0:  # plain suits' high cards first, trumps after them (measured: fewest nodes)
            strength = R.strength(card, trump, R.suit_of(card))
            score = strength if R.suit_of(card) == trump else 10 * strength
        else:
            mine = R.strength(card, trump, led)
            if partner:
                score = 100 + points if n == 3 else 50 - points - mine
            elif mine > best:
                score = 300 - mine + (points if n == 3 else 0)
            else:
                score = 50 - points - mine
        i = count
        while i > 0 and node[_S_SCORES + i - 1] < score:
            node[_S_SCORES + i] = node[_S_SCORES + i - 1]
            node[_S_MOVES + i] = node[_S_MOVES + i - 1]
            i -= 1
        node[_S_SCORES + i] = score
        node[_S_MOVES + i] = card
        count += 1
    node[_S_COUNT] = count


@njit(cache=True)
def _enter(st, d, hands, played, leader, t, n, base, alpha, beta, cfg, table):
    """Open node ``d`` of the search stack; return True with ``st[d, _S_VALUE]`` set when the table answers."""
    node = st[d]
    node[_S_SLOT] = -1
    first = -1
    if n == 0:
        context = cfg[C_CONTEXT] + leader
        slot = _slot(hands, context, table.shape[0])
        row = table[slot]
        if row[_T_KEY0] == hands[0] | (hands[1] << 32) and row[_T_KEY1] == hands[2] | (hands[3] << 32) \
                and row[_T_CONTEXT] == context:
            lower, upper = row[_T_LOWER] + base, row[_T_UPPER] + base
            if lower >= beta or lower == upper:
                node[_S_VALUE] = lower
                return True
            if upper <= alpha:
                node[_S_VALUE] = upper
                return True
            alpha, beta = max(alpha, lower), min(beta, upper)
            first = row[_T_BEST]
        node[_S_SLOT] = slot
    seat = (leader + n) % 4
    node[_S_LEADER], node[_S_TRICK], node[_S_N], node[_S_BASE] = leader, t, n, base
    node[_S_ALPHA], node[_S_BETA], node[_S_ALPHA0], node[_S_BETA0] = alpha, beta, alpha, beta
    node[_S_BEST] = -INF if seat % 2 == 0 else INF
    node[_S_BEST_CARD] = -1
    _fill_moves(node, hands, played, t, n, seat, cfg, first)
    if n == 3 and t < 6:
        return _transposition_cutoff(node, hands, played, leader, t, base, alpha, beta, cfg, table)
    return False


@njit(cache=True)
def _transposition_cutoff(node, hands, played, leader, t, base, alpha, beta, cfg, table):
    """Before searching the last card of a trick, look up the trick-start positions each card leads to:
    one whose known bound already refutes the window answers the node (enhanced transposition cutoff)."""
    seat = (leader + 3) % 4
    for i in range(node[_S_COUNT]):
        card = node[_S_MOVES + i]
        hands[seat] ^= np.int64(1) << card
        played[4 * t + 3] = card
        winner, gain = _trick_gain(played, t, leader, cfg)
        child_base = base + _declared_stuk(hands[seat], seat, card, cfg) + (gain if winner % 2 == 0 else -gain)
        row = table[_slot(hands, cfg[C_CONTEXT] + winner, table.shape[0])]
        hit = row[_T_KEY0] == hands[0] | (hands[1] << 32) and row[_T_KEY1] == hands[2] | (hands[3] << 32) \
            and row[_T_CONTEXT] == cfg[C_CONTEXT] + winner
        hands[seat] |= np.int64(1) << card
        if hit:
            if seat % 2 == 0 and row[_T_LOWER] + child_base >= beta:
                node[_S_VALUE] = row[_T_LOWER] + child_base
                return True
            if seat % 2 == 1 and row[_T_UPPER] + child_base <= alpha:
                node[_S_VALUE] = row[_T_UPPER] + child_base
                return True
    return False


@njit(cache=True)
def _store(table, node, hands, cfg):
    """Record a searched trick-start node as bounds (fail-soft: a result outside the window is a bound),
    merged with what the table knew of the same position."""
    row = table[node[_S_SLOT]]
    key0, key1, context = hands[0] | (hands[1] << 32), hands[2] | (hands[3] << 32), cfg[C_CONTEXT] + node[_S_LEADER]
    if row[_T_KEY0] != key0 or row[_T_KEY1] != key1 or row[_T_CONTEXT] != context:
        row[_T_KEY0], row[_T_KEY1], row[_T_CONTEXT], row[_T_LOWER], row[_T_UPPER] = key0, key1, context, -INF, INF
    best, value = node[_S_BEST], node[_S_BEST] - node[_S_BASE]
    if best > node[_S_ALPHA0]:
        row[_T_LOWER] = max(row[_T_LOWER], value) if best >= node[_S_BETA0] else value
    if best < node[_S_BETA0]:
        row[_T_UPPER] = min(row[_T_UPPER], value) if best <= node[_S_ALPHA0] else value
    row[_T_BEST] = node[_S_BEST_CARD]


@njit(cache=True)
def _last_trick(hands, played, leader, cfg):
    """Value (signed for team 0) of the last trick, every hand holding its one card (no choice left)."""
    stuk = 0
    for k in range(4):
        seat = (leader + k) % 4
        played[28 + k] = R.lowest_card(hands[seat])
        stuk += _declared_stuk(0, seat, played[28 + k], cfg)
    winner, gain = _trick_gain(played, 7, leader, cfg)
    return stuk + (gain if winner % 2 == 0 else -gain)


@njit(cache=True)
def _alpha_beta(hands, played, n, leader, t, alpha, beta, cfg, table, counter):
    """Fail-soft value (team 0 minus team 1) of the rest of the deal with ``n`` cards of trick ``t`` on the
    table (``played[4t:4t+n]``), ``leader`` having led it; ``hands`` are the four open hands (restored on
    return), ``cfg`` from ``_solver_config``. Iterative (an explicit stack): numba's cache cannot hold
    recursive functions safely. ``counter[0]`` counts the cards tried."""
    st = np.zeros((33, _S_SIZE), np.int64)
    base = 0
    if n == 4:  # a complete trick on the table: score it, then search from the next lead
        leader, gain = _trick_gain(played, t, leader, cfg)
        base = gain if leader % 2 == 0 else -gain
        if t == 7:
            return base
        t, n = t + 1, 0
    d = 0
    if _enter(st, 0, hands, played, leader, t, n, base, alpha, beta, cfg, table):
        return st[0, _S_VALUE]
    while True:
        node = st[d]
        leader, t, n = node[_S_LEADER], node[_S_TRICK], node[_S_N]
        seat = (leader + n) % 4
        if node[_S_NEXT] < node[_S_COUNT] and node[_S_ALPHA] < node[_S_BETA]:
            counter[0] += 1
            card = node[_S_MOVES + node[_S_NEXT]]
            node[_S_NEXT] += 1
            node[_S_CARD] = card
            hands[seat] ^= np.int64(1) << card
            played[4 * t + n] = card
            child_base = node[_S_BASE] + _declared_stuk(hands[seat], seat, card, cfg)
            if n < 3:
                child_leader, child_t, child_n = leader, t, n + 1
            else:
                child_leader, gain = _trick_gain(played, t, leader, cfg)
                child_base += gain if child_leader % 2 == 0 else -gain
                child_t, child_n = t + 1, 0
            if child_t == 8:
                value = child_base
            elif child_t == 7 and child_n == 0:
                value = child_base + _last_trick(hands, played, child_leader, cfg)
            elif _enter(st, d + 1, hands, played, child_leader, child_t, child_n, child_base,
                        node[_S_ALPHA], node[_S_BETA], cfg, table):
                value = st[d + 1, _S_VALUE]
            else:
                d += 1
                continue
        else:
            value = node[_S_BEST]
            if node[_S_SLOT] >= 0:
                _store(table, node, hands, cfg)
            if d == 0:
                return value
            d -= 1
            node = st[d]
            seat = (node[_S_LEADER] + node[_S_N]) % 4
        hands[seat] |= np.int64(1) << node[_S_CARD]
        if seat % 2 == 0:
            if value > node[_S_BEST]:
                node[_S_BEST], node[_S_BEST_CARD] = value, node[_S_CARD]
            node[_S_ALPHA] = max(node[_S_ALPHA], value)
        else:
            if value < node[_S_BEST]:
                node[_S_BEST], node[_S_BEST_CARD] = value, node[_S_CARD]
            node[_S_BETA] = min(node[_S_BETA], value)


@njit(cache=True)
def _exact_value(hands, played, n, leader, t, guess, cfg, table, counter):
    """The exact value of a position by null-window searches: from ``guess``, widening steps until the
    value is bracketed, then bisection; each test answers "at least x?" and the table keeps its bounds.
    (Values are always even: they are differences of two team totals that add up to an even sum.)"""
    lower, upper = -INF, INF
    test, step = guess, 16
    while lower < upper:
        g = _alpha_beta(hands, played, n, leader, t, test - 1, test, cfg, table, counter)
        if g < test:
            upper = g
        else:
            lower = g
        if lower >= upper:
            break
        if upper == INF:
            test, step = max(lower + 1, test + step), 2 * step
        elif lower == -INF:
            test, step = min(upper, test - step), 2 * step
        else:
            test = (lower + upper + 1) // 2
            test = max(lower + 1, min(upper, test))
    return lower


@njit(cache=True)
def card_values(state, out, table, counter):
    """Exact value, for the team of the seat to act, of each legal card of the position ``state``
    (open hands as stored in it); ``out[card]`` gets it, other entries ``-INF``."""
    out[:] = -INF
    hands = state[R.HAND:R.HAND + 4].copy()
    played = state[R.TRICK:R.TRICK + 32].copy()
    t, n = state[R.TRICK_NO], state[R.IN_TRICK]
    leader, seat = state[R.LEADER + t], state[R.CURRENT]
    cfg = _solver_config(state)
    sign = 1 if seat % 2 == 0 else -1
    root = np.zeros(_S_SIZE, np.int64)
    _fill_moves(root, hands, played, t, n, seat, cfg, -1)
    guess = 0
    for i in range(root[_S_COUNT]):
        card = root[_S_MOVES + i]
        bit = np.int64(1) << card
        hands[seat] ^= bit
        played[4 * t + n] = card
        gain = _declared_stuk(hands[seat], seat, card, cfg)
        guess = _exact_value(hands, played, n + 1, leader, t, guess - gain, cfg, table, counter) + gain
        out[card] = sign * guess
        hands[seat] |= bit
    _copy_equivalents(out, hands, played, t, n, seat, cfg)


@njit(cache=True)
def _copy_equivalents(out, hands, played, t, n, seat, cfg):
    """Give each legal card pruned as interchangeable the value of the nearest lower searched card of
    its suit (the one it is interchangeable with, see ``_equivalents``)."""
    legal = R.legal_cards(hands[seat], played[4 * t:4 * t + 4], n, cfg[C_TRUMP], cfg[C_REGIME])
    pruned = _equivalents(legal, _foreign(hands, played, t, n, seat), cfg)
    for card in range(R.NUM_CARDS):
        if (pruned >> card) & 1:
            rep = card - 1
            while out[rep] == -INF:
                rep -= 1
            out[card] = out[rep]


@njit(cache=True)
def deal_value(state, table, counter):
    """Exact value (team 0 minus team 1) of the rest of the deal of ``state`` in play, its hands open."""
    hands = state[R.HAND:R.HAND + 4].copy()
    played = state[R.TRICK:R.TRICK + 32].copy()
    t = state[R.TRICK_NO]
    return _exact_value(hands, played, state[R.IN_TRICK], state[R.LEADER + t], t, 0, _solver_config(state), table,
                       counter)


def card_values_of(state: np.ndarray) -> dict[int, int]:
    """``{card: value}`` for each legal card of an open-hand position in play (see ``card_values``)."""
    out = np.empty(R.NUM_CARDS, np.int64)
    card_values(state, out, new_table(12), np.zeros(1, np.int64))
    return {c: int(v) for c, v in enumerate(out) if v > -INF}
