"""What a greedy rollout of d turns does to greedy's evaluation at a search's leaf (the ``az`` blend's rollout
half). Prints one table; never part of the test suite.

    python benchmarks/rollout_tempo.py                    # 2,000 plies of greedy games, depths 0-6
    python benchmarks/rollout_tempo.py --plies 4000 --depths 8 --seed 1

From each main-phase position of greedy games (its hidden cards re-dealt for the seat to move, "the mover"),
greedy plays d more turns and the searches' reward (``rewards_into``: the logistic squashing of the mover's
evaluation lead over its best opponent) is read for the mover, as the ``az`` blend reads it at a leaf with
``rollout_depth=d``. The same re-dealt position is then played out by greedy to the end, and that result (1 a
win, 0 a loss, 1/2 a draw) is what each depth's evaluation is scored against. Columns: the mean evaluation
with its 95% interval, its mean difference from depth 0 with that difference's interval (a tempo bias: after an
odd number of turns the mover has just moved and its opponent's reply is still to come), and the squared error
(Brier score) against the played-out result, with its interval.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_puct import positions

from tabletop_rl.agents.search.splendor import result_shares, rewards_into, rollout
from tabletop_rl.core.stats import Z95
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.baselines import DEFAULT_GREEDY_WEIGHTS
from tabletop_rl.ui.bench import print_markdown

#: More turns than any game lasts: a rollout that long plays to the end.
TO_THE_END = 1000


def evaluations(plies: int, depths: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The mover's evaluation after d = 0..depths-1 greedy turns, one row per main-phase position whose playout
    to the end finished, the result of each playout, and how many playouts did not finish (greedy can stall)."""
    cards, nobles = R.tables()
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    scratch = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)
    rng = np.array([seed + 7], np.uint64)  # greedy's playouts draw nothing from it (epsilon 0)
    rewards = np.zeros(R.MAX_PLAYERS)
    rows, results, unfinished = [], [], 0
    for i, game in enumerate(positions(plies, seed)):
        if game.state[R.PHASE] != R.MAIN:
            continue
        mover = int(game.state[R.CURRENT])
        base = game.state.copy()
        R.determinize_state(base, mover, 1000 * seed + i)
        state = base.copy()
        rollout(state, TO_THE_END, True, 0.0, cards, nobles, DEFAULT_GREEDY_WEIGHTS, mask, scratch, rng)
        if not result_shares(state, rewards):
            unfinished += 1
            continue
        results.append(rewards[mover])
        row = []
        for depth in range(depths):
            state = base.copy()
            rollout(state, depth, True, 0.0, cards, nobles, DEFAULT_GREEDY_WEIGHTS, mask, scratch, rng)
            rewards_into(state, cards, nobles, DEFAULT_GREEDY_WEIGHTS, rewards)
            row.append(rewards[mover])
        rows.append(row)
    return np.array(rows), np.array(results), unfinished


def interval(values: np.ndarray) -> str:
    """The mean of ``values`` with its normal 95% interval."""
    half = Z95 * values.std(ddof=1) / np.sqrt(len(values))
    return f"{values.mean():.3f} [{values.mean() - half:.3f}, {values.mean() + half:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=2000, help="plies of greedy games the positions come from")
    parser.add_argument("--depths", type=int, default=7, help="rollout depths 0 to this minus one")
    parser.add_argument("--seed", type=int, default=5, help="the first greedy game's deal")
    args = parser.parse_args()
    rows, results, unfinished = evaluations(args.plies, args.depths, args.seed)
    print(f"{len(rows)} main-phase positions (and {unfinished} whose playout to the end stalled, left out); "
          f"greedy's playout won {results.mean():.3f} of them for the mover")
    header = ["greedy turns before the evaluation", "mover's evaluation [95%]", "minus depth 0's [95%]",
              "squared error against the playout's result [95%]"]
    print_markdown(header, [[str(depth), interval(rows[:, depth]),
                             interval(rows[:, depth] - rows[:, 0]) if depth else "-",
                             interval((rows[:, depth] - results) ** 2)] for depth in range(args.depths)])


if __name__ == "__main__":
    main()
