"""Search policies for Splendor: expectiminimax with chance nodes, and information-set MCTS.

Both search only a copy of the position as their player sees it: ``game.seat_view(seat, seed)``
re-deals every card the seat cannot see (deck order, other seats' blind reserves) from ``seed``, so
two positions that differ only in hidden cards give the same search and the same move. The search
loops are numba functions over preallocated arrays; the Python classes only set budgets and buffers.

>>> from tabletop_rl import SplendorGame
>>> from tabletop_rl.agents import make_policy
>>> g = SplendorGame(2, seed=3)
>>> info = g.policy_info(g.current_player)
>>> emm = make_policy("expectiminimax:depth=2,budget_ms=0,nodes=2000", "splendor", seed=1)
>>> mcts = make_policy("mcts:simulations=50", "splendor", seed=1)
>>> all(bool(g.legal_mask()[p.act(None, g.legal_mask(), info)]) for p in (emm, mcts))
True
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from tabletop_rl.core.kernels import copy_into, pick_legal, splitmix64
from tabletop_rl.core.policy import BasePolicy
from tabletop_rl.core.text import quote
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.baselines import (
    DEFAULT_GREEDY_WEIGHTS,
    WIN,
    action_values,
    best_substep,
    evaluate,
    game_and_seat,
    greedy_action,
    player_value,
)

__all__ = ["ExpectiminimaxPolicy", "MAX_BUDGET_MS", "MAX_C", "MAX_NODES", "MAX_ROLLOUT_DEPTH", "MAX_SIMULATIONS",
           "MAX_UNBUDGETED_DEPTH", "MCTSPolicy", "place_drawn", "result_shares", "rewards_into", "rollout",
           "unseen_pool"]

_MAX_LEVELS = 48  # recursion levels of the expectiminimax stack: one per turn searched
_BOUND_MARGIN = 100.0  # evaluations are clamped to +-(win weight + this) for the chance-node bounds
_FIRST_RATE = 200_000.0  # nodes/s assumed before a policy has timed its own search
_VALUE_SCALE = 4.0  # MCTS: a rollout's evaluation lead of this much maps to a reward of 0.73
_CHUNK = 32  # MCTS iterations between clock checks under a time budget

# --- the options' bounds (docs/agents.md), so that a spec cannot ask for unbounded memory or time -------------
#: A move's time budget, for every search: a minute.
MAX_BUDGET_MS = 60_000.0
#: MCTS keeps one tree node per simulation, 328 bytes (a row of 72 child ids and five counters): a million is
#: about 330 MB, and takes over a minute a move. A time budget stops growing the tree here too.
MAX_SIMULATIONS = 1_000_000
#: Expectiminimax's node budget: its memory is fixed (one row per level), this bounds the time (minutes).
MAX_NODES = 100_000_000
#: With neither a time nor a node budget, expectiminimax searches every depth in full: at the opening depth 3
#: takes a tenth of a second (59 thousand nodes), depth 4 seconds (1.9 million), depth 5 minutes (63 million).
MAX_UNBUDGETED_DEPTH = 3
#: The exploration constant of both tree searches (mcts' UCT, az's PUCT): values past a few are all exploration.
MAX_C = 100.0
#: Turns a rollout (mcts) or a leaf's greedy play-out (az) runs: longer than any game.
MAX_ROLLOUT_DEPTH = 200


# --- shared helpers --------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _next(rng):
    """The next 64 random bits of the splitmix64 stream held in ``rng[0]``."""
    rng[0], z = splitmix64(rng[0])
    return z


@njit(cache=True, inline="always")
def _below(rng, n):
    return np.int64(_next(rng) % np.uint64(n))


@njit(cache=True, inline="always")
def _uniform(rng):
    return np.float64(_next(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def _stream(seed: int) -> np.ndarray:
    return np.array([seed], np.uint64)


# --- expectiminimax: chance over the cards the searcher cannot see ------------------------------------
@njit(cache=True)
def unseen_pool(state, searcher, lv, pool):
    """Write into ``pool`` the sorted ids of level ``lv`` cards ``searcher`` cannot see (the rest of
    the deck and the other seats' blind reserves); return how many. Sorted, so the pool is a set:
    it does not depend on how the hidden cards happen to be dealt."""
    k = 0
    start = R.DECK + R.LEVEL_START[lv]
    for i in range(state[R.DECK_DRAWN + lv], R.LEVEL_SIZE[lv]):
        pool[k] = state[start + i]
        k += 1
    for q in range(state[R.NUM_PLAYERS_AT]):
        if q != searcher:
            b = R.player_base(q)
            for i in range(state[b + R.P_NRESERVED]):
                card = state[b + R.P_RESERVED + i]
                if (state[b + R.P_BLIND] >> i) & 1 and R.level_of(card) == lv:
                    pool[k] = card
                    k += 1
    pool[:k].sort()
    return k


@njit(cache=True)
def _draw_site(state, action, searcher):
    """Where ``action``'s deck draw lands in the row and the deck's level, or ``(-1, -1)`` when the
    searcher need not average over it: market refills and the searcher's own blind reserves are
    chance events; another seat's blind reserve stays a card the searcher's evaluation never reads."""
    if R.RESERVE <= action < R.RESERVE_DECK:
        return R.MARKET + action - R.RESERVE, (action - R.RESERVE) // R.SLOTS_PER_LEVEL
    if R.BUY <= action < R.BUY_RESERVED:
        return R.MARKET + action - R.BUY, (action - R.BUY) // R.SLOTS_PER_LEVEL
    if R.RESERVE_DECK <= action < R.BUY and state[R.CURRENT] == searcher:
        b = R.player_base(searcher)
        return b + R.P_RESERVED + state[b + R.P_NRESERVED], action - R.RESERVE_DECK
    return -1, -1


@njit(cache=True)
def place_drawn(state, at, card, searcher):
    """Make ``card`` the card just drawn into ``state[at]``; the card the deck really gave takes
    ``card``'s old place (deck or another seat's blind reserve), so the row stays one consistent deal."""
    drawn = state[at]
    if drawn == card:
        return
    lv = R.level_of(card)
    start = R.DECK + R.LEVEL_START[lv]
    for i in range(state[R.DECK_DRAWN + lv], R.LEVEL_SIZE[lv]):
        if state[start + i] == card:
            state[start + i] = drawn
            state[at] = card
            return
    for q in range(state[R.NUM_PLAYERS_AT]):
        b = R.player_base(q)
        for i in range(state[b + R.P_NRESERVED]):
            if q != searcher and state[b + R.P_RESERVED + i] == card:
                state[b + R.P_RESERVED + i] = drawn
                state[at] = card
                return


@njit(cache=True)
def _play_turn(child, parent, action, at, card, searcher, cards, nobles, weights, mask, inner):
    """``child`` = ``parent`` after ``action``, the draw at ``at`` (if any) set to ``card``, and the
    rest of the mover's turn (token returns, a noble choice) played by greedy's one-ply rule."""
    copy_into(child, parent)
    mover = parent[R.CURRENT]
    R.apply_action(child, action, cards, nobles)
    if at >= 0:
        place_drawn(child, at, card, searcher)
    while child[R.STATUS] == R.PLAYING and child[R.CURRENT] == mover and child[R.PHASE] != R.MAIN:
        R.apply_action(child, best_substep(child, mover, cards, nobles, weights, mask, inner), cards, nobles)


@njit(cache=True)
def _order_moves(state, cards, nobles, weights, mask, values, order, scratch, first):
    """Legal actions into ``order``, best greedy look-ahead value for the mover first (``first``, if
    legal, goes before all); return how many."""
    n = action_values(state, cards, nobles, weights, mask, scratch, values)
    k = 0
    for a in range(R.NUM_ACTIONS):
        if mask[a]:
            if a == first:
                values[a] = np.inf
            j = k
            while j > 0 and values[order[j - 1]] < values[a]:  # insertion sort, stable on ties
                order[j] = order[j - 1]
                j -= 1
            order[j] = a
            k += 1
    return n


@njit(cache=True)
def _sample_outcomes(pool, k, chance, rng):
    """Move ``chance`` cards picked at random without replacement to ``pool[:chance]`` (all ``k``
    when there are no more); return how many outcomes the chance node has."""
    if k <= chance:
        return k
    for i in range(chance):
        j = i + _below(rng, k - i)
        t = pool[i]
        pool[i] = pool[j]
        pool[j] = t
    return chance


@njit(cache=True)
def _expectiminimax(buffers, level, depth, alpha, beta, searcher, cards, nobles, weights, chance, counters, rng):
    """Value for ``searcher`` of ``buffers[0][level]`` searched ``depth`` turns deep (paranoid: every
    other seat minimises it), with alpha-beta at decision nodes and Star1 bounds at chance nodes.

    ``counters``: [nodes, node limit, aborted, best root action, root move tried first]. Once the
    limit is reached the search unwinds with ``counters[2] = 1`` and its values are meaningless.
    """
    rows, masks, values, orders, pools, scratch, inner, sub_mask = buffers
    state = rows[level]
    if counters[0] >= counters[1]:
        counters[2] = 1
        return 0.0
    counters[0] += 1
    bound = weights[WIN] + _BOUND_MARGIN
    if depth == 0 or state[R.STATUS] != R.PLAYING:
        return min(bound, max(-bound, evaluate(state, searcher, cards, nobles, weights)))
    first = counters[4] if level == 0 else -1
    n = _order_moves(state, cards, nobles, weights, masks[level], values[level], orders[level], scratch, first)
    maximising = state[R.CURRENT] == searcher
    best = -np.inf if maximising else np.inf
    pool = pools[level]
    for i in range(n):
        action = orders[level, i]
        at, lv = _draw_site(state, action, searcher)
        outcomes = 1
        if at >= 0:
            outcomes = _sample_outcomes(pool, unseen_pool(state, searcher, lv, pool), chance, rng)
            if outcomes == 0:
                at = -1
                outcomes = 1
        total = 0.0
        value = 0.0
        for j in range(outcomes):
            _play_turn(rows[level + 1], state, action, at, pool[j], searcher, cards, nobles, weights, sub_mask, inner)
            rest = outcomes - j - 1
            lo = max(-bound, outcomes * alpha - total - rest * bound)  # Star1: the child window that
            hi = min(bound, outcomes * beta - total + rest * bound)  # can still move this average
            total += _expectiminimax(buffers, level + 1, depth - 1, lo, hi, searcher, cards, nobles, weights,
                                     chance, counters, rng)
            if counters[2]:
                return 0.0
            value = (total + rest * bound) / outcomes
            if value <= alpha:
                break
            value = (total - rest * bound) / outcomes
            if value >= beta:
                break
            value = total / outcomes
        if maximising and value > best:
            best = value
            alpha = max(alpha, value)
            if level == 0:
                counters[3] = action
        elif not maximising and value < best:
            best = value
            beta = min(beta, value)
        if alpha >= beta:
            break
    return best


class _Stack:
    """Preallocated per-level buffers for ``_expectiminimax``: rows, masks, values, move orders, pools."""

    def __init__(self) -> None:
        self.buffers = (np.zeros((_MAX_LEVELS, R.STATE_SIZE), R.STATE_DTYPE),
                        np.zeros((_MAX_LEVELS, R.NUM_ACTIONS), np.bool_),
                        np.zeros((_MAX_LEVELS, R.NUM_ACTIONS)), np.zeros((_MAX_LEVELS, R.NUM_ACTIONS), np.int64),
                        np.zeros((_MAX_LEVELS, R.NUM_CARDS), R.STATE_DTYPE), np.zeros(R.STATE_SIZE, R.STATE_DTYPE),
                        np.zeros(R.STATE_SIZE, R.STATE_DTYPE), np.zeros(R.NUM_ACTIONS, np.bool_))


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


class ExpectiminimaxPolicy(BasePolicy):
    """Iterative-deepening expectiminimax on a determinised copy of the position.

    ``depth`` counts turns (a main action with its token returns and noble choice; the sub-steps are
    played by greedy's rule below the root). Iterative deepening runs depth 1, 2, ... ``depth`` until
    ``budget_ms`` (wall time, 0 = none) or ``nodes`` (0 = none) runs out and returns the best move of
    the deepest search, counting the moves an unfinished depth completed (the previous best is tried
    first, so any move that beat it really is better). A market refill or the searcher's own blind
    reserve is a chance node averaging ``chance`` cards sampled from the unseen pool of that level.

    >>> p = ExpectiminimaxPolicy(depth=2, budget_ms=0, nodes=500)
    >>> p.depth, p.nodes, p.chance
    (2, 500, 3)
    """

    def __init__(self, name: str = "expectiminimax", seed: int | None = None, depth: int = 20,
                 budget_ms: float = 100.0, nodes: int = 0, chance: int = 3) -> None:
        super().__init__(name, seed)
        _check(1 <= depth < _MAX_LEVELS, f"expectiminimax depth must be in 1..{_MAX_LEVELS - 1}, got {depth}")
        _check(budget_ms >= 0, f"expectiminimax budget_ms must be >= 0 (0 = no time limit), got {budget_ms}")
        _check(budget_ms <= MAX_BUDGET_MS,
               f"expectiminimax budget_ms must be at most {MAX_BUDGET_MS:g}, got {budget_ms}")
        _check(nodes >= 0, f"expectiminimax nodes must be >= 0 (0 = no node limit), got {nodes}")
        _check(nodes <= MAX_NODES, f"expectiminimax nodes must be at most {MAX_NODES}, got {nodes}")
        _check(budget_ms > 0 or nodes > 0 or depth <= MAX_UNBUDGETED_DEPTH,
               f"expectiminimax depth must be at most {MAX_UNBUDGETED_DEPTH} without budget_ms or nodes, got {depth}")
        _check(chance >= 1, f"expectiminimax chance must be >= 1 card per chance node, got {chance}")
        _check(chance <= R.LEVEL_SIZE[0], f"expectiminimax chance must be at most {R.LEVEL_SIZE[0]} (a deck's "
               f"cards), got {chance}")
        self.depth, self.budget_ms, self.nodes, self.chance = depth, budget_ms, nodes, chance
        self.weights = DEFAULT_GREEDY_WEIGHTS.copy()
        self.cards, self.nobles = R.tables()
        self.rate = _FIRST_RATE
        self.depth_reached = 0
        self._stack = _Stack()

    def _node_limit(self, used: int, start: float) -> int:
        limits = [np.iinfo(np.int64).max]
        if self.nodes:
            limits.append(self.nodes - used)
        if self.budget_ms:
            limits.append(int((self.budget_ms / 1000 - (time.perf_counter() - start)) * self.rate))
        return max(0, min(limits))

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        game, seat = game_and_seat(info, "expectiminimax")
        seed = int(self.rng.integers(1 << 62))
        rows = self._stack.buffers[0]
        rows[0] = game.seat_view(seat, seed).state
        rng = _stream(seed)
        start = time.perf_counter()
        best, used = -1, 0
        self.depth_reached = 0
        for depth in range(1, self.depth + 1):
            limit = self._node_limit(used, start)
            if limit == 0:
                break
            counters = np.array([0, limit, 0, -1, best], np.int64)
            _expectiminimax(self._stack.buffers, 0, depth, -np.inf, np.inf, seat, self.cards, self.nobles,
                            self.weights, self.chance, counters, rng)
            used += int(counters[0])
            if counters[3] >= 0:
                best = int(counters[3])
            if counters[2]:
                break
            self.depth_reached = depth
        elapsed = time.perf_counter() - start
        if used > 1000 and elapsed > 0:
            self.rate = used / elapsed
        self.add_nodes(used)
        if best < 0:  # the budget ended before one move was searched: greedy's move
            best = greedy_action(rows[0], self.cards, self.nobles, self.weights,
                                 self._stack.buffers[1][0], self._stack.buffers[5])
        return best


# --- information-set MCTS ------------------------------------------------------------------------------
@njit(cache=True)
def result_shares(state, out):
    """For a finished game, each seat's share of the win in ``out`` (winners 1/k each, k winners; the rest 0)
    and True; False, with ``out`` zeroed, while the game goes on. Both searches score an end this way."""
    out[:] = 0.0
    if state[R.STATUS] != R.OVER:
        return False
    won = np.zeros(R.MAX_PLAYERS, np.int8)
    R.winners_into(state, won)
    k = won.sum()
    for p in range(state[R.NUM_PLAYERS_AT]):
        out[p] = won[p] / k
    return True


@njit(cache=True)
def rewards_into(state, cards, nobles, weights, out):
    """Each seat's reward in [0, 1]: a finished game gives the winners 1/k each (k winners) and the
    others 0; otherwise a logistic squashing of the seat's evaluation lead over its best opponent."""
    n = state[R.NUM_PLAYERS_AT]
    if result_shares(state, out):
        return
    own = np.empty(n)
    for p in range(n):
        own[p] = player_value(state, p, p, cards, nobles, weights)
    for p in range(n):
        lead = np.inf
        for q in range(n):
            if q != p:
                lead = min(lead, own[p] - own[q])
        out[p] = 1.0 / (1.0 + np.exp(-lead / _VALUE_SCALE))


@njit(cache=True)
def rollout(state, turns, greedy, epsilon, cards, nobles, weights, mask, scratch, rng):
    """Play ``turns`` main actions (and their sub-steps) from ``state``: greedy's move, or with
    probability ``epsilon`` (always, when not ``greedy``) a uniformly random legal one."""
    while state[R.STATUS] == R.PLAYING:
        if state[R.PHASE] == R.MAIN:
            if turns == 0:
                return
            turns -= 1
        if greedy and _uniform(rng) >= epsilon:
            action = greedy_action(state, cards, nobles, weights, mask, scratch)
        else:
            action = pick_legal(mask, _below(rng, R.legal_mask(state, cards, nobles, mask)))
        R.apply_action(state, action, cards, nobles)


@njit(cache=True)
def _select_or_expand(tree, node, state, c, cards, nobles, weights, mask, values, scratch):
    """The action to take at ``node`` in this determinisation: the best unexpanded legal action by
    greedy's look-ahead if any, else UCT over the legal children (available counts as the parent's
    visits). Returns (action, True when it is new). Every legal child's available count goes up."""
    children, visits, value, avail = tree
    action_values(state, cards, nobles, weights, mask, scratch, values)
    new = -1
    best = -1
    best_score = -np.inf
    for a in range(R.NUM_ACTIONS):
        if not mask[a]:
            continue
        ch = children[node, a]
        if ch < 0:
            if new < 0 or values[a] > values[new]:
                new = a
            continue
        avail[ch] += 1
        score = value[ch] / visits[ch] + c * np.sqrt(np.log(avail[ch]) / visits[ch])
        if score > best_score:
            best = a
            best_score = score
    if new >= 0:
        return new, True
    return best, False


@njit(cache=True)
def _mcts_iterations(tree, used, root, searcher, iterations, c, greedy, turns, epsilon, cards, nobles, weights,
                     work, path, movers, rng):
    """Run ``iterations`` ISMCTS iterations from ``root`` on ``tree`` (``used[0]`` nodes in use; node 0
    is the root): re-deal the searcher's unseen cards, descend (select/expand one node), roll out,
    and add each seat's reward to the nodes it moved into."""
    children, visits, value, avail = tree
    state, scratch, mask, values, reward = work
    capacity = children.shape[0]
    for _ in range(iterations):
        copy_into(state, root)
        R.determinize_state(state, searcher, _next(rng))
        node = 0
        length = 0
        while state[R.STATUS] == R.PLAYING:
            mover = state[R.CURRENT]
            action, new = _select_or_expand(tree, node, state, c, cards, nobles, weights, mask, values, scratch)
            if new:
                if used[0] == capacity:
                    break
                child = used[0]
                used[0] += 1
                children[child, :] = -1
                visits[child] = 0
                value[child] = 0.0
                avail[child] = 1
                children[node, action] = child
            R.apply_action(state, action, cards, nobles)
            node = children[node, action]
            path[length] = node
            movers[length] = mover
            length += 1
            if new:
                break
        rollout(state, turns, greedy, epsilon, cards, nobles, weights, mask, scratch, rng)
        rewards_into(state, cards, nobles, weights, reward)
        visits[0] += 1
        for i in range(length):
            visits[path[i]] += 1
            value[path[i]] += reward[movers[i]]


class _Tree:
    """The MCTS tree in flat arrays: children[node, action] (-1: none), visits, value sums, available counts."""

    def __init__(self, capacity: int) -> None:
        self.arrays = self._allocate(capacity)
        self.used = np.zeros(1, np.int64)
        self.path = np.zeros(capacity, np.int64)  # a descent's nodes and their movers: at most one per node
        self.movers = np.zeros(capacity, np.int64)

    @staticmethod
    def _allocate(size: int) -> tuple[np.ndarray, ...]:
        return (np.full((size, R.NUM_ACTIONS), -1, np.int32), np.zeros(size, np.int64), np.zeros(size),
                np.zeros(size, np.int64))

    def clear(self) -> None:
        self.arrays[0][0] = -1
        self.arrays[1][0] = 0
        self.used[0] = 1

    def ensure(self, capacity: int) -> None:
        """Room for ``capacity`` nodes, keeping the nodes in use; never past ``MAX_SIMULATIONS + 1`` nodes (a
        search under a time budget goes on in a full tree: its iterations then add visits, not nodes)."""
        old = self.arrays[0].shape[0]
        if capacity <= old or old > MAX_SIMULATIONS:
            return
        size = min(max(capacity, 2 * old), MAX_SIMULATIONS + 1)
        grown = self._allocate(size)
        for new, arr in zip(grown, self.arrays):
            new[:old] = arr
        self.arrays = grown
        self.path = np.zeros(size, np.int64)
        self.movers = np.zeros(size, np.int64)


class MCTSPolicy(BasePolicy):
    """Single-observer information-set MCTS: each iteration re-deals the cards the seat cannot see,
    descends with UCT over the actions legal in that deal (available counts), expands one node (the
    best unexpanded action by greedy's look-ahead), rolls out ``rollout_depth`` turns (``greedy``:
    epsilon-greedy, ``random``: uniform), and backs each seat's [0, 1] reward up its own moves.
    ``budget_ms`` (when given) replaces ``simulations`` by a time budget. Returns the most visited
    root action.

    >>> MCTSPolicy(simulations=10, rollout="random").rollout
    'random'
    """

    def __init__(self, name: str = "mcts", seed: int | None = None, simulations: int = 2000,
                 budget_ms: float | None = None, c: float = 0.7, rollout: str = "greedy",
                 rollout_depth: int = 4, epsilon: float = 0.1) -> None:
        super().__init__(name, seed)
        _check(simulations >= 1, f"mcts simulations must be >= 1, got {simulations}")
        _check(simulations <= MAX_SIMULATIONS, f"mcts simulations must be at most {MAX_SIMULATIONS} (a tree node "
               f"each), got {simulations}")
        _check(budget_ms is None or budget_ms > 0, f"mcts budget_ms must be > 0 when given, got {budget_ms}")
        _check(budget_ms is None or budget_ms <= MAX_BUDGET_MS,
               f"mcts budget_ms must be at most {MAX_BUDGET_MS:g}, got {budget_ms}")
        _check(0 <= c <= MAX_C, f"mcts c must be >= 0 and at most {MAX_C:g}, got {c}")
        _check(rollout in ("greedy", "random"), f"mcts rollout must be 'greedy' or 'random', got {quote(rollout)}")
        _check(0 <= rollout_depth <= MAX_ROLLOUT_DEPTH,
               f"mcts rollout_depth must be >= 0 turns and at most {MAX_ROLLOUT_DEPTH}, got {rollout_depth}")
        _check(0 <= epsilon <= 1, f"mcts epsilon must be in [0, 1], got {epsilon}")
        self.simulations, self.budget_ms, self.c = simulations, budget_ms, c
        self.rollout, self.rollout_depth, self.epsilon = rollout, rollout_depth, epsilon
        self.weights = DEFAULT_GREEDY_WEIGHTS.copy()
        self.cards, self.nobles = R.tables()
        self.tree = _Tree(simulations + 1 if budget_ms is None else min(4096, MAX_SIMULATIONS + 1))
        self.iterations = 0
        self._work = (np.zeros(R.STATE_SIZE, R.STATE_DTYPE), np.zeros(R.STATE_SIZE, R.STATE_DTYPE),
                      np.zeros(R.NUM_ACTIONS, np.bool_), np.zeros(R.NUM_ACTIONS), np.zeros(R.MAX_PLAYERS))

    def _run(self, root: np.ndarray, seat: int, iterations: int, rng: np.ndarray) -> None:
        self.tree.ensure(int(self.tree.used[0]) + iterations)
        _mcts_iterations(self.tree.arrays, self.tree.used, root, seat, iterations, self.c, self.rollout == "greedy",
                         self.rollout_depth, self.epsilon, self.cards, self.nobles, self.weights, self._work,
                         self.tree.path, self.tree.movers, rng)
        self.iterations += iterations

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        game, seat = game_and_seat(info, "mcts")
        seed = int(self.rng.integers(1 << 62))
        root = game.seat_view(seat, seed).state
        rng = _stream(seed)
        self.tree.clear()
        self.iterations = 0
        if self.budget_ms is None:
            self._run(root, seat, self.simulations, rng)
        else:
            deadline = time.perf_counter() + self.budget_ms / 1000
            while time.perf_counter() < deadline:
                self._run(root, seat, _CHUNK, rng)
        self.add_nodes(int(self.tree.used[0]))
        return self._most_visited(mask)

    def _most_visited(self, mask: np.ndarray) -> int:
        """The legal root action visited most (then the higher mean reward, then the lowest id)."""
        children, visits, value, _ = self.tree.arrays
        best, key = -1, (-1, -np.inf)
        for a in np.flatnonzero(mask):
            ch = children[0, a]
            if ch >= 0 and (visits[ch], value[ch] / max(visits[ch], 1)) > key:
                best, key = int(a), (visits[ch], value[ch] / max(visits[ch], 1))
        return best if best >= 0 else int(np.flatnonzero(mask)[0])
