"""Splendor baselines: the greedy heuristic (numba) and its Python policy (registered as ``greedy`` by
``tabletop_rl.agents.splendor``).

``greedy_action`` looks one ply ahead: it applies each legal action to a scratch copy, plays out the
mover's sub-steps (token returns, a noble choice) the same way, and scores the result with
``evaluate`` from the mover's seat. It takes arrays and scalars only, so the vector env
runs it inside numba for its greedy opponents. It never uses what the mover cannot see: a card drawn
to refill the market is scored as an empty slot, a card drawn by a blind reserve as an unknown card,
and opponents' blind reserves as unknown cards (``_hide_drawn_card`` and ``UNKNOWN_RESERVED``).

>>> from tabletop_rl import SplendorGame
>>> g = SplendorGame(2, seed=1)
>>> p = GreedyPolicy()
>>> a = p.act(None, g.legal_mask(), g.policy_info(g.current_player))
>>> bool(g.legal_mask()[a]), p.stats.decisions, p.stats.nodes == len(g.legal_actions())
(True, 1, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from tabletop_rl.core.game import view_game_and_seat
from tabletop_rl.core.kernels import copy_into
from tabletop_rl.core.policy import BasePolicy
from tabletop_rl.games.splendor import rules as R

# The weights' indices (POINTS ... WIN) are internal: a weight is named by GREEDY_WEIGHT_NAMES (docs/agents.md).
__all__ = ["DEFAULT_GREEDY_WEIGHTS", "GREEDY_WEIGHT_NAMES", "GreedyPolicy", "MAX_GREEDY_WEIGHT", "action_values",
           "best_substep", "evaluate", "game_and_seat", "greedy_action", "player_value", "rivals_value"]

# --- greedy weights (index -> meaning; docs/agents.md has the table) -----------------------------
GREEDY_WEIGHT_NAMES = (
    "points",            # per prestige point
    "tokens",            # per token held, counting at most 10
    "gold",              # extra per gold token (it pays for any colour)
    "bonus",             # per card bought (a permanent discount)
    "noble",             # per unclaimed table noble, times the fraction of its requirement met by bonuses
    "reach",             # per market or own reserved card: (points + reach_base) * closeness
    "reach_base",        # value added to a card's points in the reach term, so 0-point cards count
    "reserved_points",   # per point of a known reserved card, times its closeness
    "unknown_reserved",  # per reserved card the viewer cannot see (another seat's blind reserve)
    "opponent",          # weight of the best opponent's value, subtracted
    "win",               # a finished game: + for a win (shared or not), - for a loss
)
POINTS, TOKENS, GOLD_W, BONUS, NOBLE, REACH, REACH_BASE, RESERVED_POINTS, UNKNOWN_RESERVED, OPPONENT, WIN = \
    range(len(GREEDY_WEIGHT_NAMES))
DEFAULT_GREEDY_WEIGHTS = np.array(
    [1.0, 0.1, 0.05, 0.8, 1.0, 0.05, 1.0, 0.3, 0.6, 0.5, 100.0], np.float64)
DEFAULT_GREEDY_WEIGHTS.setflags(write=False)
#: Each greedy weight lies in [-MAX_GREEDY_WEIGHT, MAX_GREEDY_WEIGHT] (and is finite), so every evaluation is
#: a finite number and two moves' scores always compare.
MAX_GREEDY_WEIGHT = 1e6


# --- evaluation ----------------------------------------------------------------------------------
# The evaluation's divisions are by a card's cost or a noble's requirement, never zero, so the functions that
# hold them use numpy's error model: Python's checks each division for zero, and with that check the nobles'
# terms took four times as long (docs/benchmarks.md). Its small terms are compiled functions of their own, not
# inlined by numba (LLVM inlines them anyway): numba's inlining of them at every call took greedy's cold
# compile from 12 s to 15-18 s for no speed.
@njit(cache=True, error_model="numpy")
def _near(short, gold, total):
    """1 - (what is lacking, ``short``, less ``gold``) / ``total``: the closeness of a card costing ``total``.
    Integers or floats holding integers: the same number either way."""
    return 1.0 - max(0, short - gold) / total


@njit(cache=True)
def _closeness(state, q, card, cards):
    """1 - (what seat ``q`` still lacks for ``card`` after bonuses, tokens and gold) / (its cost)."""
    b = R.player_base(q)
    total = 0
    short = 0
    for c in range(5):
        cost = cards[card, R.CARD_COST + c]
        total += cost
        lack = cost - state[b + R.P_BONUS + c] - state[b + R.P_TOKENS + c]
        if lack > 0:
            short += lack
    return _near(short, state[b + R.P_TOKENS + R.GOLD], total)


@njit(cache=True)
def _reach_scale(card, cards, weights):
    """What ``_card_reach`` multiplies the closeness by: the card's points plus a base, weighted."""
    return weights[REACH] * (cards[card, R.CARD_POINTS] + weights[REACH_BASE])


@njit(cache=True)
def _card_reach(state, q, card, cards, weights):
    return _reach_scale(card, cards, weights) * _closeness(state, q, card, cards)


@njit(cache=True)
def _own_terms(state, q, weights):
    """The first terms of ``player_value``: points, tokens and bonuses."""
    b = R.player_base(q)
    held = R.tokens_held(state, q)
    value = weights[POINTS] * state[b + R.P_POINTS] + weights[TOKENS] * min(held, R.TOKEN_LIMIT)
    value += weights[GOLD_W] * state[b + R.P_TOKENS + R.GOLD]
    for c in range(5):
        value += weights[BONUS] * state[b + R.P_BONUS + c]
    return value


@njit(cache=True, error_model="numpy")
def _noble_term(state, q, noble, nobles, weights):
    """The term of ``player_value`` for a table noble: its weight times the share of its requirement met."""
    b = R.player_base(q)
    need = 0
    met = 0
    for c in range(5):
        need += nobles[noble, c]
        met += min(nobles[noble, c], state[b + R.P_BONUS + c])
    return weights[NOBLE] * met / need


@njit(cache=True, inline="always")
def _head_value(state, q, nobles, weights):
    """``_own_terms`` and the nobles' terms."""
    value = _own_terms(state, q, weights)
    for i in range(R.MAX_TABLE_NOBLES):
        noble = state[R.TABLE_NOBLES + i]
        if noble >= 0:
            value += _noble_term(state, q, noble, nobles, weights)
    return value


@njit(cache=True)
def _reserved_term(state, q, viewer, i, cards, weights):
    """The term of ``player_value`` for seat ``q``'s ``i``-th reserved card, as ``viewer`` sees it."""
    b = R.player_base(q)
    card = state[b + R.P_RESERVED + i]
    if card < 0 or (q != viewer and (state[b + R.P_BLIND] >> i) & 1):
        return weights[UNKNOWN_RESERVED]
    near = _closeness(state, q, card, cards)
    return weights[RESERVED_POINTS] * cards[card, R.CARD_POINTS] * near + _card_reach(state, q, card, cards, weights)


@njit(cache=True, inline="always")
def _add_reserved(state, q, viewer, value, cards, weights):
    """``value`` plus the terms of ``q``'s reserved cards, in order."""
    for i in range(state[R.player_base(q) + R.P_NRESERVED]):
        value += _reserved_term(state, q, viewer, i, cards, weights)
    return value


@njit(cache=True, inline="always")
def _add_cards(state, q, viewer, value, cards, weights):
    """``value`` (a ``_head_value``) plus the terms of the market cards and of ``q``'s reserved cards."""
    for s in range(12):
        card = state[R.MARKET + s]
        if card >= 0:
            value += _card_reach(state, q, card, cards, weights)
    return _add_reserved(state, q, viewer, value, cards, weights)


@njit(cache=True)
def player_value(state, q, viewer, cards, nobles, weights):
    """Heuristic value of seat ``q``'s position as ``viewer`` sees it (no hidden card is read)."""
    return _add_cards(state, q, viewer, _head_value(state, q, nobles, weights), cards, weights)


@njit(cache=True)
def rivals_value(state, seat, cards, nobles, weights):
    """The best opponent's ``player_value`` as ``seat`` sees it."""
    best = -np.inf
    for q in range(state[R.NUM_PLAYERS_AT]):
        if q != seat:
            best = max(best, player_value(state, q, seat, cards, nobles, weights))
    return best


# ``player_value`` kept in parts for one reference position (``_keep_terms``). Greedy's look-ahead reaches its
# positions by the mover's own moves, with drawn cards hidden, so the market only loses cards and the other
# seats' rows stay as they were: it adds up the parts that did not change instead of computing them again, in
# the same order, so to the same number.
# - Row ``q`` for each opponent: ``_head_value``, then one ``_card_reach`` per market slot, then one
#   ``_reserved_term`` per reserved card. Row ``seat``, the mover: one ``_noble_term`` per table noble.
# - Rows ``_COST`` (five), ``_TOTAL`` and ``_SCALE``: per market slot, its card's cost by colour, its total
#   cost, and ``weights[REACH] * (points + weights[REACH_BASE])``; small integers held exactly as floats, so
#   that the mover's market terms are computed slot by slot in one pass. Row ``_SHORT`` holds what the mover
#   lacks for each slot's card (``_closeness``'s ``short``, a whole number as a float) and row ``_TERM`` the
#   mover's market terms.
_HEAD, _SLOT_TERMS, _RESERVED_TERMS = 0, 1, 13
_COST, _TOTAL, _SCALE = R.MAX_PLAYERS, R.MAX_PLAYERS + 5, R.MAX_PLAYERS + 6
_SHORT, _TERM = R.MAX_PLAYERS + 7, R.MAX_PLAYERS + 8
TERMS_SHAPE = (_TERM + 1, _RESERVED_TERMS + R.MAX_RESERVED)


@njit(cache=True)
def _keep_terms(state, seat, cards, nobles, weights, terms):
    """Fill ``terms`` (``TERMS_SHAPE``) for ``state`` and return ``rivals_value(state, seat)``."""
    for s in range(12):
        card = max(state[R.MARKET + s], 0)  # an empty slot's parts are never added
        total = 0
        for c in range(5):
            terms[_COST + c, s] = cards[card, R.CARD_COST + c]
            total += cards[card, R.CARD_COST + c]
        terms[_TOTAL, s] = total
        terms[_SCALE, s] = _reach_scale(card, cards, weights)
    for i in range(R.MAX_TABLE_NOBLES):
        noble = state[R.TABLE_NOBLES + i]
        if noble >= 0:
            terms[seat, i] = _noble_term(state, seat, noble, nobles, weights)
    for q in range(state[R.NUM_PLAYERS_AT]):
        if q != seat:
            terms[q, _HEAD] = _head_value(state, q, nobles, weights)
            for s in range(12):
                card = state[R.MARKET + s]
                if card >= 0:
                    terms[q, _SLOT_TERMS + s] = _card_reach(state, q, card, cards, weights)
            for i in range(state[R.player_base(q) + R.P_NRESERVED]):
                terms[q, _RESERVED_TERMS + i] = _reserved_term(state, q, seat, i, cards, weights)
    return _rivals_from(terms, state, seat)


@njit(cache=True, inline="always")
def _rivals_from(terms, state, seat):
    """``rivals_value(state, seat)`` summed from ``terms`` kept for a position whose opponents' rows and
    nobles are those of ``state`` and whose market held the same cards, some slots since emptied: the same
    terms added in the same order as ``player_value`` adds them, so the sum is the same number."""
    best = -np.inf
    for q in range(state[R.NUM_PLAYERS_AT]):
        if q != seat:
            value = terms[q, _HEAD]
            for s in range(12):
                if state[R.MARKET + s] >= 0:
                    value += terms[q, _SLOT_TERMS + s]
            for i in range(state[R.player_base(q) + R.P_NRESERVED]):
                value += terms[q, _RESERVED_TERMS + i]
            best = max(best, value)
    return best


@njit(cache=True, inline="always")
def _same_bonuses(ref, after, mover):
    """Whether ``mover``'s bonuses, all its nobles' terms read besides the nobles, are as in ``ref``."""
    b = R.player_base(mover) + R.P_BONUS
    for c in range(5):
        if ref[b + c] != after[b + c]:
            return False
    return True


@njit(cache=True, inline="always")
def _own_shortfalls(after, mover, terms):
    """Fill row ``_SHORT`` of ``terms`` with what ``mover`` lacks in ``after`` for each market slot's card kept in
    ``terms``: ``_closeness``'s ``short``, the same operations on the same numbers, in floats."""
    b = R.player_base(mover)
    h0 = np.float64(after[b + R.P_BONUS] + after[b + R.P_TOKENS])
    h1 = np.float64(after[b + R.P_BONUS + 1] + after[b + R.P_TOKENS + 1])
    h2 = np.float64(after[b + R.P_BONUS + 2] + after[b + R.P_TOKENS + 2])
    h3 = np.float64(after[b + R.P_BONUS + 3] + after[b + R.P_TOKENS + 3])
    h4 = np.float64(after[b + R.P_BONUS + 4] + after[b + R.P_TOKENS + 4])
    for s in range(12):
        terms[_SHORT, s] = (max(terms[_COST, s] - h0, 0.0) + max(terms[_COST + 1, s] - h1, 0.0)
                            + max(terms[_COST + 2, s] - h2, 0.0) + max(terms[_COST + 3, s] - h3, 0.0)
                            + max(terms[_COST + 4, s] - h4, 0.0))


@njit(cache=True, inline="always")
def _own_market_terms(terms, colour, had, gold):
    """Fill row ``_TERM`` of ``terms`` with ``_card_reach`` of each market slot for the mover holding ``gold``
    gold tokens, from the shortfalls of row ``_SHORT``; with one token of ``colour`` given back (0-4, of
    which the mover had ``had`` with bonuses) when ``colour`` is not -1. Giving one back adds one to what the
    mover lacks for a card exactly when the card costs at least ``had`` of it: the sum stays whole, and the same
    number as ``_own_shortfalls`` of the row after the return."""
    for s in range(12):
        short = terms[_SHORT, s]
        if colour >= 0 and terms[_COST + colour, s] >= had:
            short += 1.0
        terms[_TERM, s] = terms[_SCALE, s] * _near(short, gold, terms[_TOTAL, s])


@njit(cache=True, inline="always")
def _own_value(after, mover, cards, nobles, weights, ref, terms, change):
    """``player_value(after, mover, mover)`` from the parts in ``terms`` (kept for ``ref``) where the table
    ``change`` (``_table_change``) allows: the nobles' terms unless a buy changed the bonuses, and the market
    cards' terms computed slot by slot from the kept costs. A noble's visit (``change`` 2) computes it in full."""
    if change == 2:
        return player_value(after, mover, mover, cards, nobles, weights)
    _own_shortfalls(after, mover, terms)
    _own_market_terms(terms, -1, 0, np.float64(after[R.player_base(mover) + R.P_TOKENS + R.GOLD]))
    return _own_sum(after, mover, cards, nobles, weights, ref, terms)


@njit(cache=True, inline="always")
def _own_sum(after, mover, cards, nobles, weights, ref, terms):
    """``player_value(after, mover, mover)`` with the market cards' terms read from row ``_TERM``, added in
    ``player_value``'s order."""
    value = _own_terms(after, mover, weights)
    # When the bonuses changed this is ``_head_value``'s loop; inlined here too it added 0.5 s to greedy's cold
    # compile, and as a call it made every full evaluation 15% slower.
    same = _same_bonuses(ref, after, mover)
    for i in range(R.MAX_TABLE_NOBLES):
        noble = after[R.TABLE_NOBLES + i]
        if noble >= 0:
            value += terms[mover, i] if same else _noble_term(after, mover, noble, nobles, weights)
    for s in range(12):
        if after[R.MARKET + s] >= 0:
            value += terms[_TERM, s]
    return _add_reserved(after, mover, mover, value, cards, weights)


@njit(cache=True)
def evaluate(state, seat, cards, nobles, weights):
    """``seat``'s value minus ``weights[OPPONENT]`` times the best opponent's, plus the win term when over.

    A reserved card id of -1 is read as a card ``seat`` has not seen (see ``_hide_drawn_card``).
    """
    return _evaluate_with(state, seat, weights, player_value(state, seat, seat, cards, nobles, weights),
                          rivals_value(state, seat, cards, nobles, weights))


@njit(cache=True, inline="always")
def _evaluate_with(state, seat, weights, own, rivals):
    """``evaluate`` given ``seat``'s own value ``own`` and the best opponent's value ``rivals``."""
    value = own - weights[OPPONENT] * rivals
    if state[R.STATUS] == R.OVER:
        won = np.zeros(R.MAX_PLAYERS, np.int8)
        R.winners_into(state, won)
        value += weights[WIN] if won[seat] else -weights[WIN]
    return value


@njit(cache=True, inline="always")
def _hide_drawn_card(state, mover, action):
    """Forget the card ``action`` just drew from a deck, which the mover could not know beforehand:
    a refilled market slot becomes empty, a blind reserve becomes an unknown card (-1)."""
    if R.RESERVE <= action < R.RESERVE_DECK:
        state[R.MARKET + action - R.RESERVE] = -1
    elif R.BUY <= action < R.BUY_RESERVED:
        state[R.MARKET + action - R.BUY] = -1
    elif R.RESERVE_DECK <= action < R.BUY:
        b = R.player_base(mover)
        state[b + R.P_RESERVED + state[b + R.P_NRESERVED] - 1] = -1


@njit(cache=True)
def best_substep(state, mover, cards, nobles, weights, mask, inner):
    """The sub-step (token return or noble choice) with the best value for ``mover``, lowest id on ties."""
    terms = np.empty(TERMS_SHAPE, np.float64)
    rivals = _keep_terms(state, mover, cards, nobles, weights, terms)
    return _best_substep(state, mover, cards, nobles, weights, mask, inner, state, terms, rivals)


@njit(cache=True, inline="always")
def _table_change(ref, after):
    """How the table (market and nobles: all an opponent's value reads besides its own row) changed from
    ``ref`` to ``after``: 0 not at all, 1 market slots emptied and nothing else, 2 otherwise."""
    for i in range(R.MAX_TABLE_NOBLES):
        if ref[R.TABLE_NOBLES + i] != after[R.TABLE_NOBLES + i]:
            return 2
    change = 0
    for i in range(12):
        if ref[R.MARKET + i] != after[R.MARKET + i]:
            if after[R.MARKET + i] >= 0:
                return 2
            change = 1
    return change


# Not inlined by numba: it is called from three places, and inlining it into each took greedy's cold compile
# from 12 s to 16 s for about 0.3 us a decision.
@njit(cache=True, error_model="numpy")
def _value_after(after, mover, cards, nobles, weights, ref, terms, ref_rivals):
    """``evaluate(after, mover)`` for a position ``after`` reached by ``mover``'s moves from ``ref``, whose best
    opponent's value is ``ref_rivals`` and its parts ``terms`` (``_keep_terms``). The mover's moves change no
    opponent's row, so the opponents' values change only with the table: token takes and returns and blind
    reserves reuse ``ref_rivals``; a buy or a reserve from the market (whose refill greedy does not see) sums the
    kept terms without the emptied slot; only a noble's visit computes them again (``_own_value`` likewise)."""
    change = _table_change(ref, after)
    if change == 0:
        rivals = ref_rivals
    elif change == 1:
        rivals = _rivals_from(terms, after, mover)
    else:
        rivals = rivals_value(after, mover, cards, nobles, weights)
    own = _own_value(after, mover, cards, nobles, weights, ref, terms, change)
    return _evaluate_with(after, mover, weights, own, rivals)


@njit(cache=True)
def _best_substep(state, mover, cards, nobles, weights, mask, inner, ref, terms, ref_rivals):
    """``best_substep``, valuing the candidates with ``_value_after`` (``ref``, ``terms``, ``ref_rivals``)."""
    if state[R.PHASE] == R.RETURN:
        return _best_return(state, mover, cards, nobles, weights, inner, ref, terms, ref_rivals)
    R.legal_mask(state, cards, nobles, mask)
    best = -1
    best_value = -np.inf
    for a in range(R.NUM_ACTIONS):
        if mask[a]:
            copy_into(inner, state)
            R.apply_action(inner, a, cards, nobles)
            value = _value_after(inner, mover, cards, nobles, weights, ref, terms, ref_rivals)
            if best < 0 or value > best_value:
                best = a
                best_value = value
    return best


@njit(cache=True, inline="always")
def _best_return(state, mover, cards, nobles, weights, inner, ref, terms, ref_rivals):
    """``_best_substep`` for a token return. Returning one colour or another gives the same row but for that
    colour's two counts (the mover's and the bank's), since nothing a return sets off (the end of the turn, a
    noble's visit, the end of the game) reads tokens. So the first candidate is applied to ``inner`` and each
    next one made from it by moving one token across colours: the row that applying it would give.
    The candidates share the table, and with it the opponents' values. Their market terms follow from the
    mover's shortfalls before the return, by one comparison a slot (``_own_market_terms``), and they are valued
    here rather than by a call to ``_value_after`` each: the calls cost more than the sums (docs/benchmarks.md)."""
    b = R.player_base(mover)
    t = b + R.P_TOKENS
    best = -1
    best_value = -np.inf
    last = -1
    change = 0
    rivals = ref_rivals
    for c in range(6):
        if state[t + c] > 0:
            if last < 0:
                copy_into(inner, state)
                R.apply_action(inner, R.RETURN_TOKEN + c, cards, nobles)
                change = _table_change(ref, inner)
                if change == 1:
                    rivals = _rivals_from(terms, inner, mover)
                _own_shortfalls(state, mover, terms)
            else:
                inner[t + last] += 1
                inner[R.BANK + last] -= 1
                inner[t + c] -= 1
                inner[R.BANK + c] += 1
            last = c
            if change == 2:  # a noble's visit: everything again
                value = _value_after(inner, mover, cards, nobles, weights, ref, terms, ref_rivals)
            else:
                colour = c if c < R.GOLD else -1
                _own_market_terms(terms, colour, state[b + R.P_BONUS + c] + state[t + c] if colour >= 0 else 0,
                                  np.float64(inner[t + R.GOLD]))
                own = _own_sum(inner, mover, cards, nobles, weights, ref, terms)
                value = _evaluate_with(inner, mover, weights, own, rivals)
            if best < 0 or value > best_value:
                best = R.RETURN_TOKEN + c
                best_value = value
    return best


# Inlined by numba into ``action_values``, its one caller: one separately compiled level less in greedy's chain
# saves about as much cold compile as ``_best_return``'s inlined valuation costs (docs/benchmarks.md).
@njit(cache=True, inline="always")
def _lookahead_value(state, action, cards, nobles, weights, scratch, inner, mask, terms, rivals):
    """Value for the mover of ``action`` followed by the rest of the mover's turn: the sub-steps it
    leads to (returns down to 10 tokens, a noble choice) are played greedily, so a take that must be
    given back is scored after the return. ``terms``, ``rivals``: the opponents' values in ``state``."""
    mover = state[R.CURRENT]
    copy_into(scratch, state)
    R.apply_action(scratch, action, cards, nobles)
    _hide_drawn_card(scratch, mover, action)
    while scratch[R.STATUS] == R.PLAYING and scratch[R.CURRENT] == mover and scratch[R.PHASE] != R.MAIN:
        a = _best_substep(scratch, mover, cards, nobles, weights, mask, inner, state, terms, rivals)
        R.apply_action(scratch, a, cards, nobles)
    return _value_after(scratch, mover, cards, nobles, weights, state, terms, rivals)


@njit(cache=True)
def action_values(state, cards, nobles, weights, mask, scratch, values):
    """Fill ``mask`` with the legal mask and ``values[a]`` with the look-ahead value of each legal
    action for the player to act (``-inf`` where illegal); return the number of legal actions."""
    n = R.legal_mask(state, cards, nobles, mask)
    inner = np.empty_like(scratch)
    sub_mask = np.empty_like(mask)
    terms = np.empty(TERMS_SHAPE, np.float64)
    rivals = _keep_terms(state, state[R.CURRENT], cards, nobles, weights, terms)
    for a in range(R.NUM_ACTIONS):
        values[a] = -np.inf
        if mask[a]:
            values[a] = _lookahead_value(state, a, cards, nobles, weights, scratch, inner, sub_mask, terms, rivals)
    return n


@njit(cache=True)
def greedy_action(state, cards, nobles, weights, mask, scratch):
    """The legal action with the best one-ply value (lowest id on ties), or -1 when the game is over.

    ``mask`` (bool[72]) and ``scratch`` (a state row) are work buffers, overwritten; ``state`` is not changed.
    """
    values = np.empty(R.NUM_ACTIONS, np.float64)
    n = action_values(state, cards, nobles, weights, mask, scratch, values)
    if n == 0:
        return -1
    best = -1
    for a in range(R.NUM_ACTIONS):
        if mask[a] and (best < 0 or values[a] > values[best]):
            best = a
    return best


# --- Python policies -------------------------------------------------------------------------------
def game_and_seat(info: Mapping[str, Any], policy: str) -> tuple[Any, int]:
    """The view's game and seat (``core.game.view_game_and_seat``), checked: the seat must be the one to act."""
    game, seat = view_game_and_seat(info, policy)
    if game.current_player != seat:
        raise ValueError(f"{policy}: the view's seat is {seat} but seat {game.current_player} is to act")
    return game, seat


class GreedyPolicy(BasePolicy):
    """One-ply look-ahead on ``evaluate``; options are the weights by name (``greedy:opponent=0.3``).

    Deterministic: the same position gives the same move; ``seed`` is unused. ``stats.nodes`` counts
    the positions evaluated.
    """

    def __init__(self, name: str = "greedy", seed: int | None = None, **weights: float) -> None:
        super().__init__(name, seed)
        unknown = set(weights) - set(GREEDY_WEIGHT_NAMES)
        if unknown:
            raise ValueError(f"unknown greedy weight(s) {sorted(unknown)}; known: {', '.join(GREEDY_WEIGHT_NAMES)}")
        for key, value in weights.items():
            if not -MAX_GREEDY_WEIGHT <= value <= MAX_GREEDY_WEIGHT:  # NaN fails both comparisons
                raise ValueError(f"greedy {key} must be a finite number in [-{MAX_GREEDY_WEIGHT:g}, "
                                 f"{MAX_GREEDY_WEIGHT:g}], got {value}")
        self.weights = DEFAULT_GREEDY_WEIGHTS.copy()
        for i, key in enumerate(GREEDY_WEIGHT_NAMES):
            self.weights[i] = weights.get(key, self.weights[i])
        self.cards, self.nobles = R.tables()
        self._mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        self._scratch = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        game, _ = game_and_seat(info, "greedy")
        action = greedy_action(game.state, self.cards, self.nobles, self.weights, self._mask, self._scratch)
        self.add_nodes(int(self._mask.sum()))
        return action

