"""Open-hand (double-dummy) alpha-beta solver for the rest of a Klaverjas deal, in numba.

The value of a position is, for team 0 (seats 0 and 2), the card points plus roem (and the
last-trick bonus) it takes from the remaining tricks minus what team 1 takes. Pit and nat are not
part of the value: the solver plays for the point difference, which is what decides them too.
It only ever sees the hands it is given: a search policy hands it a determinised deal
(``determinize.py``), never the true one.

>>> from tabletop_rl.klaverjas import rules as R
>>> s = R.position({0: ["AS", "7H"], 1: ["7S", "8S"], 2: ["KS", "8H"], 3: ["QS", "9S"]}, "H", leader=0)
>>> values = card_values_of(s)
>>> values[R.card_id("AS")], values[R.card_id("7H")]   # N-S take both tricks; W keeps QS back (no roem)
(28, 28)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import rules as R

INF = 1 << 30


@njit(cache=True)
def _trick_gain(played, t, leader, trump):
    """Winner seat and points (cards + roem + last-trick bonus) of the complete trick ``t``."""
    cards = played[4 * t:4 * t + 4]
    winner = (leader + R.winning_position(cards, 4, trump)) % 4
    gain = R.trick_points(cards, trump) + R.trick_roem(cards, trump)
    if t == 7:
        gain += R.LAST_TRICK_BONUS
    return winner, gain


TABLE_BITS = 18
EXACT, LOWER, UPPER = 0, 1, 2
# search stack columns
(S_LEADER, S_TRICK, S_N, S_BASE, S_ALPHA, S_BETA, S_ALPHA0, S_BETA0, S_LEGAL, S_BEST, S_CARD, S_SLOT,
 S_VALUE, S_SIZE) = range(14)


def new_table() -> np.ndarray:
    """A transposition table for ``alpha_beta``: rows (hands 0+1, hands 2+3, leader/trump/rules, value, bound)."""
    table = np.zeros((1 << TABLE_BITS, 5), np.int64)
    table[:, 2] = -1
    return table


@njit(cache=True, inline="always")
def _slot(hands, context):
    key = (hands[0] * 0x9E3779B97F4A7C15) ^ (hands[1] * 0xC2B2AE3D27D4EB4F) ^ (hands[2] * 0x165667B19E3779F9)
    key ^= hands[3] * 0x27D4EB2F165667C5 + context
    return (key ^ (key >> 29)) & ((1 << TABLE_BITS) - 1)


@njit(cache=True)
def _enter(d, hands, played, leader, t, n, base, alpha, beta, trump, amsterdam, table, st):
    """Open node ``d`` of the search stack; return True with ``st.value`` set when the table answers it."""
    context = leader + 4 * trump + 16 * amsterdam  # a table may be shared by deals with other trumps
    key0, key1 = hands[0] | (hands[1] << 32), hands[2] | (hands[3] << 32)
    st[d, S_SLOT] = -1
    if n == 0:
        slot = _slot(hands, context)
        row = table[slot]
        if row[0] == key0 and row[1] == key1 and row[2] == context:
            value = row[3] + base
            if row[4] == EXACT or (row[4] == LOWER and value >= beta) or (row[4] == UPPER and value <= alpha):
                st[d, S_VALUE] = value
                return True
        st[d, S_SLOT] = slot
    seat = (leader + n) % 4
    st[d, S_LEADER], st[d, S_TRICK], st[d, S_N], st[d, S_BASE] = leader, t, n, base
    st[d, S_ALPHA], st[d, S_BETA], st[d, S_ALPHA0], st[d, S_BETA0] = alpha, beta, alpha, beta
    st[d, S_LEGAL] = R.legal_cards(hands[seat], played[4 * t:4 * t + 4], n, trump, amsterdam)
    st[d, S_BEST] = -INF if seat % 2 == 0 else INF
    return False


@njit(cache=True)
def alpha_beta(hands, played, n, leader, t, trump, amsterdam, alpha, beta, table, counter):
    """Value (team 0 minus team 1) of the rest of the deal with ``n`` cards of trick ``t`` on the table
    (``played[4t:4t+n]``), ``leader`` having led it; ``hands`` are the four open hands (restored on return).
    Positions at the start of a trick are cached in ``table`` (``new_table``) with their bound.
    Iterative (an explicit stack): numba's cache cannot hold recursive functions safely."""
    st = np.zeros((33, S_SIZE), np.int64)
    d = 0
    base = 0
    if n == 4:  # a complete trick on the table: score it, then search from the next lead
        leader, gain = _trick_gain(played, t, leader, trump)
        base = gain if leader % 2 == 0 else -gain
        if t == 7:
            return base
        t, n = t + 1, 0
    if _enter(0, hands, played, leader, t, n, base, alpha, beta, trump, amsterdam, table, st):
        return st[0, S_VALUE]
    while True:
        node = st[d]
        leader, t, n = node[S_LEADER], node[S_TRICK], node[S_N]
        seat = (leader + n) % 4
        if node[S_LEGAL] and node[S_ALPHA] < node[S_BETA]:
            counter[0] += 1
            card = 63 - _leading_zeros(node[S_LEGAL])  # high cards first: they decide tricks
            node[S_LEGAL] ^= np.int64(1) << card
            node[S_CARD] = card
            hands[seat] ^= np.int64(1) << card
            played[4 * t + n] = card
            if n < 3:
                child = (leader, t, n + 1, node[S_BASE])
            else:
                winner, gain = _trick_gain(played, t, leader, trump)
                child = (winner, t + 1, 0, node[S_BASE] + (gain if winner % 2 == 0 else -gain))
            if child[1] == 8:
                value = child[3]
            elif _enter(d + 1, hands, played, child[0], child[1], child[2], child[3],
                        node[S_ALPHA], node[S_BETA], trump, amsterdam, table, st):
                value = st[d + 1, S_VALUE]
            else:
                d += 1
                continue
        else:
            value = node[S_BEST]
            if node[S_SLOT] >= 0:
                _store(table[node[S_SLOT]], hands, leader + 4 * trump + 16 * amsterdam, value, node)
            if d == 0:
                return value
            d -= 1
            node = st[d]
            seat = (node[S_LEADER] + node[S_N]) % 4
        hands[seat] |= np.int64(1) << node[S_CARD]
        if seat % 2 == 0:
            node[S_BEST] = max(node[S_BEST], value)
            node[S_ALPHA] = max(node[S_ALPHA], value)
        else:
            node[S_BEST] = min(node[S_BEST], value)
            node[S_BETA] = min(node[S_BETA], value)


@njit(cache=True, inline="always")
def _store(row, hands, context, value, node):
    row[0] = hands[0] | (hands[1] << 32)
    row[1] = hands[2] | (hands[3] << 32)
    row[2] = context
    row[3] = value - node[S_BASE]  # relative: the same deal rest can be reached with other scores
    row[4] = UPPER if value <= node[S_ALPHA0] else (LOWER if value >= node[S_BETA0] else EXACT)


@njit(cache=True, inline="always")
def _leading_zeros(x):
    n = 0
    while not (x >> (63 - n)) & 1:
        n += 1
    return n


@njit(cache=True)
def card_values(state, out, table, counter):
    """Exact value, for the team of the seat to act, of each legal card of the position ``state``
    (open hands as stored in it); ``out[card]`` gets it, other entries ``-INF``."""
    out[:] = -INF
    hands = state[R.HAND:R.HAND + 4].copy()
    played = state[R.TRICK:R.TRICK + 32].copy()
    t, n, trump = state[R.TRICK_NO], state[R.IN_TRICK], state[R.TRUMP]
    leader, seat = state[R.LEADER + t], state[R.CURRENT]
    amsterdam = state[R.RULES] == R.AMSTERDAM
    sign = 1 if seat % 2 == 0 else -1
    legal = R.legal_cards(hands[seat], played[4 * t:4 * t + 4], n, trump, amsterdam)
    while legal:
        card = R.lowest_card(legal)
        bit = np.int64(1) << card
        legal ^= bit
        hands[seat] ^= bit
        played[4 * t + n] = card
        out[card] = sign * alpha_beta(hands, played, n + 1, leader, t, trump, amsterdam, -INF, INF, table, counter)
        hands[seat] |= bit


def card_values_of(state: np.ndarray) -> dict[int, int]:
    """``{card: value}`` for each legal card of an open-hand position in play (see ``card_values``)."""
    out = np.empty(R.NUM_CARDS, np.int64)
    card_values(state, out, new_table(), np.zeros(1, np.int64))
    return {c: int(v) for c, v in enumerate(out) if v > -INF}
