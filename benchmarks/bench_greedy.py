"""How fast greedy decides, against the same look-ahead evaluating every position in full. Prints one table;
never part of the test suite.

    python benchmarks/bench_greedy.py
    python benchmarks/bench_greedy.py --games 300 --repeats 7

Positions come from seeded games of 2, 3 and 4 players in which each move is greedy's, or with probability
``--epsilon`` a uniformly random legal one (so that the positions are not only greedy's own). Both rows run
inside numba, one compiled loop over every position:

- ``greedy_action``: the shipped look-ahead, which keeps the evaluation's parts of the position it starts
  from and adds up those a move leaves unchanged (see ``tabletop_rl.games.splendor.baselines``);
- ``full evaluation``: the yardstick, the same look-ahead written plainly: each legal move applied to a copy,
  its drawn card hidden, the token returns and noble choice played by the best ``evaluate``, and the result
  scored by ``evaluate``.

The two must choose the same move in every position (``same moves`` says whether they did): the kept parts
are the same numbers added in the same order. Times are the best of ``--repeats`` passes. A second table
says what a decision looks at: the legal moves it values, the sub-step positions (token returns, a noble
choice) their look-ahead plays through, and the candidates valued at those.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np
from numba import njit

from tabletop_rl.core.kernels import copy_into
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.baselines import (
    DEFAULT_GREEDY_WEIGHTS,
    _hide_drawn_card,
    evaluate,
    greedy_action,
)
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.ui.bench import print_markdown


@njit(cache=True)
def _best_by_evaluate(state, mover, cards, nobles, weights, mask, inner, counts):
    """The legal move of ``state`` after which ``evaluate`` for ``mover`` is highest, lowest id on ties; adds
    the sub-step position and its candidates to ``counts[1]`` and ``counts[2]``."""
    counts[1] += 1
    counts[2] += R.legal_mask(state, cards, nobles, mask)
    best, best_value = -1, -np.inf
    for a in range(R.NUM_ACTIONS):
        if mask[a]:
            copy_into(inner, state)
            R.apply_action(inner, a, cards, nobles)
            value = evaluate(inner, mover, cards, nobles, weights)
            if best < 0 or value > best_value:
                best, best_value = a, value
    return best


@njit(cache=True)
def full_evaluation_action(state, cards, nobles, weights, mask, sub_mask, after, inner, counts):
    """Greedy's move found by evaluating every position in full (the yardstick). It adds what it looks at to
    ``counts``: the legal moves valued, the sub-step positions (token returns, noble choices) their look-ahead
    plays through, and the candidates valued at those (greedy's own look-ahead looks at the same)."""
    n = R.legal_mask(state, cards, nobles, mask)
    counts[0] += n
    if n == 0:
        return -1
    mover = state[R.CURRENT]
    best, best_value = -1, -np.inf
    for a in range(R.NUM_ACTIONS):
        if mask[a]:
            copy_into(after, state)
            R.apply_action(after, a, cards, nobles)
            _hide_drawn_card(after, mover, a)
            while after[R.STATUS] == R.PLAYING and after[R.CURRENT] == mover and after[R.PHASE] != R.MAIN:
                R.apply_action(after, _best_by_evaluate(after, mover, cards, nobles, weights, sub_mask, inner, counts),
                               cards, nobles)
            value = evaluate(after, mover, cards, nobles, weights)
            if best < 0 or value > best_value:
                best, best_value = a, value
    return best


@njit(cache=True)
def _greedy_all(rows, cards, nobles, weights, out):
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    scratch = np.zeros(rows.shape[1], rows.dtype)
    for i in range(rows.shape[0]):
        out[i] = greedy_action(rows[i], cards, nobles, weights, mask, scratch)


@njit(cache=True)
def _full_all(rows, cards, nobles, weights, out, counts):
    counts[:] = 0
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    sub_mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    after = np.zeros(rows.shape[1], rows.dtype)
    inner = np.zeros(rows.shape[1], rows.dtype)
    for i in range(rows.shape[0]):
        out[i] = full_evaluation_action(rows[i], cards, nobles, weights, mask, sub_mask, after, inner, counts)


def positions(games: int, epsilon: float, seed: int) -> np.ndarray:
    """Every position (one state row each) of ``games`` seeded games, 2-4 players in turn."""
    cards, nobles = R.tables()
    rng = np.random.default_rng(seed)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    scratch = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)
    rows = []
    for g in range(games):
        game = SplendorGame(2 + g % 3, seed=seed + g)
        while not game.is_over:
            rows.append(game.state.copy())
            if rng.random() < epsilon:
                action = int(rng.choice(game.legal_actions()))
            else:
                action = greedy_action(game.state, cards, nobles, DEFAULT_GREEDY_WEIGHTS, mask, scratch)
            game.step(action)
    return np.array(rows)


def best_pass(run, rows: np.ndarray, repeats: int, *extra: np.ndarray) -> tuple[float, np.ndarray]:
    """(best seconds of ``repeats`` passes of ``run`` over ``rows``, the moves chosen); ``extra``: more
    arguments for ``run``."""
    cards, nobles = R.tables()
    out = np.zeros(len(rows), np.int64)
    run(rows[:2], cards, nobles, DEFAULT_GREEDY_WEIGHTS, out[:2], *extra)  # compiled (or loaded) outside the clock
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        run(rows, cards, nobles, DEFAULT_GREEDY_WEIGHTS, out, *extra)
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=300, help="seeded games whose positions are timed")
    ap.add_argument("--epsilon", type=float, default=0.3, help="share of random moves in those games")
    ap.add_argument("--repeats", type=int, default=5, help="passes over the positions; the best is kept")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rows = positions(args.games, args.epsilon, args.seed)
    greedy_s, greedy_moves = best_pass(_greedy_all, rows, args.repeats)
    counts = np.zeros(3, np.int64)  # one pass's: _full_all starts each pass from zero
    full_s, full_moves = best_pass(_full_all, rows, args.repeats, counts)
    digest = hashlib.sha1(greedy_moves.tobytes()).hexdigest()[:12]
    print(f"{len(rows):,} positions from {args.games} games; greedy's moves digest {digest}; "
          f"same moves: {'yes' if np.array_equal(greedy_moves, full_moves) else 'NO'}")
    print_markdown(("look-ahead", "us a decision", "decisions/s", "ratio to full evaluation"), [
        ("`greedy_action`", f"{greedy_s / len(rows) * 1e6:.2f}", f"{len(rows) / greedy_s:,.0f}",
         f"{full_s / greedy_s:.2f}"),
        ("full evaluation", f"{full_s / len(rows) * 1e6:.2f}", f"{len(rows) / full_s:,.0f}", "1.00"),
    ])
    print()
    print_markdown(("a decision, on average", "legal moves valued", "sub-step positions played through",
                    "candidates valued at those"), [
        ("`greedy_action` (counted by the full evaluation, which looks at the same)",
         *(f"{c / len(rows):.2f}" for c in counts)),
    ])


if __name__ == "__main__":
    main()
