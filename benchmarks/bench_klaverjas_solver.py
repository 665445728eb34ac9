"""Speed of the open-hand Klaverjas solver: exact values of every legal card (``solver.card_values``) at the
first lead of a deal and at the start of trick 2, both rule sets, random deals and trumps.

    python benchmarks/bench_klaverjas_solver.py --positions 30

Prints milliseconds and solver nodes (cards tried) per position. One table is shared by all positions of
a row, as the search policy shares it; the first position of a row is solved once beforehand so compile
time is not counted.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.solver import card_values, new_table


def positions(count: int, rule_set: str, cards_played: int, seed: int = 0) -> list[np.ndarray]:
    """Random deals, trump at random, ``cards_played`` random legal cards into the play."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    out = []
    while len(out) < count:
        state = R.new_state(seed=int(rng.integers(1 << 40)), rules=rule_set)
        R.apply_action(state, R.NAME_TRUMP + int(rng.integers(4)))
        for _ in range(cards_played):
            R.legal_mask(state, mask)
            R.apply_action(state, int(rng.choice(np.flatnonzero(mask))))
        out.append(state)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=30)
    args = parser.parse_args()
    values = np.empty(R.NUM_CARDS, np.int64)
    print("| rules | position | ms per position | nodes per position |\n|---|---|---|---|")
    for rule_set in R.RULE_SETS:
        for played, label in ((0, "first lead"), (4, "trick 2 lead")):
            batch = positions(args.positions, rule_set, played)
            table, counter = new_table(), np.zeros(1, np.int64)
            card_values(batch[0], values, table, counter)
            counter[:] = 0
            start = time.perf_counter()
            for state in batch:
                card_values(state, values, table, counter)
            ms = (time.perf_counter() - start) / len(batch) * 1000
            print(f"| {rule_set} | {label} | {ms:.0f} | {counter[0] // len(batch):,} |", flush=True)


if __name__ == "__main__":
    main()
