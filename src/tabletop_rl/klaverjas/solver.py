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
def alpha_beta(hands, played, n, leader, t, trump, amsterdam, alpha, beta, table, counter):
    """Value (team 0 minus team 1) of the rest of the deal with ``n`` cards of trick ``t`` on the table
    (``played[4t:4t+n]``), ``leader`` having led it; ``hands`` are the four open hands (restored on return).
    Positions at the start of a trick are cached in ``table`` (``new_table``) with their bound."""
    counter[0] += 1
    if n == 4:
        winner, gain = _trick_gain(played, t, leader, trump)
        value = gain if winner % 2 == 0 else -gain
        if t == 7:
            return value
        return value + alpha_beta(hands, played, 0, winner, t + 1, trump, amsterdam,
                                  alpha - value, beta - value, table, counter)
    slot = -1
    context = leader + 4 * trump + 16 * amsterdam  # a table may be shared by deals with other trumps
    if n == 0:
        slot = _slot(hands, context)
        row = table[slot]
        if row[0] == (hands[0] | (hands[1] << 32)) and row[1] == (hands[2] | (hands[3] << 32)) and row[2] == context:
            if row[4] == EXACT or (row[4] == LOWER and row[3] >= beta) or (row[4] == UPPER and row[3] <= alpha):
                return row[3]
    alpha0, beta0 = alpha, beta
    seat = (leader + n) % 4
    legal = R.legal_cards(hands[seat], played[4 * t:4 * t + 4], n, trump, amsterdam)
    maximizing = seat % 2 == 0
    best = -INF if maximizing else INF
    while legal:
        card = 63 - _leading_zeros(legal)  # high cards first: they decide tricks
        bit = np.int64(1) << card
        legal ^= bit
        hands[seat] ^= bit
        played[4 * t + n] = card
        value = alpha_beta(hands, played, n + 1, leader, t, trump, amsterdam, alpha, beta, table, counter)
        hands[seat] |= bit
        if maximizing:
            best = max(best, value)
            alpha = max(alpha, value)
        else:
            best = min(best, value)
            beta = min(beta, value)
        if alpha >= beta:
            break
    if slot >= 0:
        row = table[slot]
        row[0] = hands[0] | (hands[1] << 32)
        row[1] = hands[2] | (hands[3] << 32)
        row[2] = context
        row[3] = best
        row[4] = UPPER if best <= alpha0 else (LOWER if best >= beta0 else EXACT)
    return best


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
