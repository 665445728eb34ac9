"""Strength of Klaverjas policies: team A against team B over deal seeds, each seed played with A as N-S
and again as E-W, under both rule sets (default knobs otherwise).

    python benchmarks/bench_klaverjas_strength.py --players model,heuristic --seeds 500

A deal is won by the team with the higher deal score (the makers unless they go nat), a tie counts half.
Prints, per rule set and overall, A's share of the deals won with its 95% Wilson interval and A's mean
score difference per deal. Policies see only the acting seat's view (``KlaverjasGame.policy_info``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tabletop_rl.agents import make_policy
from tabletop_rl.core.stats import wilson_interval
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.game import KlaverjasGame


def play_deal(seed: int, rule_set: str, seats: list) -> np.ndarray:
    """One deal with ``seats[s]`` the policy of seat ``s``; the final state."""
    state = R.new_state(seed=seed, rules=rule_set)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    while int(state[R.PHASE]) != R.OVER:
        R.legal_mask(state, mask)
        seat = int(state[R.CURRENT])
        R.apply_action(state, seats[seat].act(None, mask, KlaverjasGame(state).policy_info(seat)))
    return state


def match(a: str, b: str, seeds: range, rule_set: str) -> tuple[float, list[int]]:
    """A's deals won (ties half) and A's score difference per deal, both seatings of every seed."""
    won, diffs = 0.0, []
    for seed in seeds:
        for a_team in (0, 1):
            team_a = [make_policy(a, game="klaverjas", seed=seed * 4 + s) for s in range(2)]
            team_b = [make_policy(b, game="klaverjas", seed=seed * 4 + 2 + s) for s in range(2)]
            seats = [(team_a if s % 2 == a_team else team_b)[s // 2] for s in range(4)]
            state = play_deal(seed, rule_set, seats)
            diff = int(state[R.DEAL_SCORE + a_team]) - int(state[R.DEAL_SCORE + 1 - a_team])
            won += 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
            diffs.append(diff)
    return won, diffs


def report(label: str, won: float, diffs: list[int]) -> str:
    low, high = wilson_interval(won, len(diffs))
    spread = np.std(diffs) / np.sqrt(len(diffs))
    return (f"{label:10s} {100 * won / len(diffs):5.1f}% [{100 * low:.1f}, {100 * high:.1f}] of {len(diffs)} deals, "
            f"score difference {np.mean(diffs):+.1f} +- {spread:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="model,heuristic", help="two policy specs: A,B")
    parser.add_argument("--seeds", type=int, default=500, help="deal seeds per rule set (each played twice)")
    parser.add_argument("--first-seed", type=int, default=10_000, help="away from the teacher data's seeds")
    args = parser.parse_args()
    a, b = args.players.split(",")
    print(f"{a} (A) vs {b} (B)")
    total_won, total_diffs = 0.0, []
    start = time.perf_counter()
    for rule_set in R.RULE_SETS:
        won, diffs = match(a, b, range(args.first_seed, args.first_seed + args.seeds), rule_set)
        print(report(rule_set, won, diffs), flush=True)
        total_won += won
        total_diffs += diffs
    print(report("both", total_won, total_diffs))
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
