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
>>> a = p.act(None, g.legal_mask(), {"game": g, "player": g.current_player})
>>> bool(g.legal_mask()[a]), p.stats.decisions, p.stats.nodes == len(g.legal_actions())
(True, 1, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from tabletop_rl.core.kernels import copy_into
from tabletop_rl.core.policy import BasePolicy
from tabletop_rl.games.splendor import rules as R

__all__ = ["BONUS", "DEFAULT_GREEDY_WEIGHTS", "GOLD_W", "GREEDY_WEIGHT_NAMES", "GreedyPolicy", "NOBLE", "OPPONENT",
           "POINTS", "REACH", "REACH_BASE", "RESERVED_POINTS", "TOKENS", "UNKNOWN_RESERVED", "WIN", "action_values",
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


# --- evaluation ----------------------------------------------------------------------------------
@njit(cache=True, inline="always")
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
    short = max(0, short - state[b + R.P_TOKENS + R.GOLD])
    return 1.0 - short / total


@njit(cache=True, inline="always")
def _card_reach(state, q, card, cards, weights):
    return weights[REACH] * (cards[card, R.CARD_POINTS] + weights[REACH_BASE]) * _closeness(state, q, card, cards)


@njit(cache=True)
def player_value(state, q, viewer, cards, nobles, weights):
    """Heuristic value of seat ``q``'s position as ``viewer`` sees it (no hidden card is read)."""
    b = R.player_base(q)
    held = R.tokens_held(state, q)
    value = weights[POINTS] * state[b + R.P_POINTS] + weights[TOKENS] * min(held, R.TOKEN_LIMIT)
    value += weights[GOLD_W] * state[b + R.P_TOKENS + R.GOLD]
    for c in range(5):
        value += weights[BONUS] * state[b + R.P_BONUS + c]
    for i in range(R.MAX_TABLE_NOBLES):
        noble = state[R.TABLE_NOBLES + i]
        if noble >= 0:
            need = 0
            met = 0
            for c in range(5):
                need += nobles[noble, c]
                met += min(nobles[noble, c], state[b + R.P_BONUS + c])
            value += weights[NOBLE] * met / need
    for s in range(12):
        card = state[R.MARKET + s]
        if card >= 0:
            value += _card_reach(state, q, card, cards, weights)
    for i in range(state[b + R.P_NRESERVED]):
        card = state[b + R.P_RESERVED + i]
        if card < 0 or (q != viewer and (state[b + R.P_BLIND] >> i) & 1):
            value += weights[UNKNOWN_RESERVED]
        else:
            near = _closeness(state, q, card, cards)
            value += (weights[RESERVED_POINTS] * cards[card, R.CARD_POINTS] * near
                      + _card_reach(state, q, card, cards, weights))
    return value


@njit(cache=True)
def rivals_value(state, seat, cards, nobles, weights):
    """The best opponent's ``player_value`` as ``seat`` sees it."""
    best = -np.inf
    for q in range(state[R.NUM_PLAYERS_AT]):
        if q != seat:
            best = max(best, player_value(state, q, seat, cards, nobles, weights))
    return best


@njit(cache=True)
def evaluate(state, seat, cards, nobles, weights):
    """``seat``'s value minus ``weights[OPPONENT]`` times the best opponent's, plus the win term when over.

    A reserved card id of -1 is read as a card ``seat`` has not seen (see ``_hide_drawn_card``).
    """
    return _evaluate_with(state, seat, cards, nobles, weights, rivals_value(state, seat, cards, nobles, weights))


@njit(cache=True, inline="always")
def _evaluate_with(state, seat, cards, nobles, weights, rivals):
    """``evaluate`` given the best opponent's value ``rivals``."""
    value = player_value(state, seat, seat, cards, nobles, weights) - weights[OPPONENT] * rivals
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
    return _best_substep(state, mover, cards, nobles, weights, mask, inner, state,
                         rivals_value(state, mover, cards, nobles, weights))


@njit(cache=True, inline="always")
def _same_table(state, other):
    """Whether the market and the table nobles, all an opponent's value reads besides its own row, are equal."""
    for i in range(12):
        if state[R.MARKET + i] != other[R.MARKET + i]:
            return False
    for i in range(R.MAX_TABLE_NOBLES):
        if state[R.TABLE_NOBLES + i] != other[R.TABLE_NOBLES + i]:
            return False
    return True


@njit(cache=True, inline="always")
def _value_after(after, mover, cards, nobles, weights, ref, ref_rivals):
    """``evaluate(after, mover)``, given the best opponent's value ``ref_rivals`` in ``ref``, a position before
    some of ``mover``'s moves. The mover's moves change no opponent's row, so the opponents' values change only
    with the market or the nobles: most moves (token takes and returns, blind reserves) reuse them, the same
    numbers computed once."""
    rivals = ref_rivals if _same_table(ref, after) else rivals_value(after, mover, cards, nobles, weights)
    return _evaluate_with(after, mover, cards, nobles, weights, rivals)


@njit(cache=True)
def _best_substep(state, mover, cards, nobles, weights, mask, inner, ref, ref_rivals):
    """``best_substep``, valuing the candidates with ``_value_after`` (``ref``, ``ref_rivals``)."""
    R.legal_mask(state, cards, nobles, mask)
    best = -1
    best_value = -np.inf
    for a in range(R.NUM_ACTIONS):
        if mask[a]:
            copy_into(inner, state)
            R.apply_action(inner, a, cards, nobles)
            value = _value_after(inner, mover, cards, nobles, weights, ref, ref_rivals)
            if best < 0 or value > best_value:
                best = a
                best_value = value
    return best


@njit(cache=True)
def _lookahead_value(state, action, cards, nobles, weights, scratch, inner, mask, rivals):
    """Value for the mover of ``action`` followed by the rest of the mover's turn: the sub-steps it
    leads to (returns down to 10 tokens, a noble choice) are played greedily, so a take that must be
    given back is scored after the return. ``rivals``: the best opponent's value in ``state``."""
    mover = state[R.CURRENT]
    copy_into(scratch, state)
    R.apply_action(scratch, action, cards, nobles)
    _hide_drawn_card(scratch, mover, action)
    while scratch[R.STATUS] == R.PLAYING and scratch[R.CURRENT] == mover and scratch[R.PHASE] != R.MAIN:
        a = _best_substep(scratch, mover, cards, nobles, weights, mask, inner, state, rivals)
        R.apply_action(scratch, a, cards, nobles)
    return _value_after(scratch, mover, cards, nobles, weights, state, rivals)


@njit(cache=True)
def action_values(state, cards, nobles, weights, mask, scratch, values):
    """Fill ``mask`` with the legal mask and ``values[a]`` with the look-ahead value of each legal
    action for the player to act (``-inf`` where illegal); return the number of legal actions."""
    n = R.legal_mask(state, cards, nobles, mask)
    inner = np.empty_like(scratch)
    sub_mask = np.empty_like(mask)
    rivals = rivals_value(state, state[R.CURRENT], cards, nobles, weights)
    for a in range(R.NUM_ACTIONS):
        values[a] = -np.inf
        if mask[a]:
            values[a] = _lookahead_value(state, a, cards, nobles, weights, scratch, inner, sub_mask, rivals)
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
    """``info["game"]`` and ``info["player"]``, checked: the seat must be the one to act."""
    game, seat = info.get("game"), info.get("player")
    if game is None or seat is None:
        raise ValueError(f"{policy} needs info={{'game': SplendorGame, 'player': seat}}")
    if game.current_player != seat:
        raise ValueError(f"{policy}: info['player'] is {seat} but player {game.current_player} is to act")
    return game, int(seat)


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

