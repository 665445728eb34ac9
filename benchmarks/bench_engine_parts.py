"""Where the engine loop's time goes per decision: the legal moves (as bits, ``rules.legal_set``), the pick among
them, the random draw, and applying the move (its refill and end-of-turn checks included); and, beside it, what
writing the legal mask (``rules.legal_mask``, which the Python doors and the envs need) costs on top.

    python benchmarks/bench_engine_parts.py --games 4000

The loop is the engine loop of ``bench_peers.py`` (uniform random legal 2-player play, one thread). Each part
is timed by the slope method: the same loop is run again with the part done ``--extra`` more times per decision
(on the same inputs, results discarded), and the part's cost is the added time divided by ``--extra``. Applying a
move is timed on a scratch copy, so the copy's own cost (timed the same way) is subtracted. Rows are medians of
``--repeats`` interleaved runs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit

from tabletop_rl.core.kernels import pick_bit, popcount
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.ui.bench import print_markdown

BASE, LEGAL, PICK, DRAW, COPY, APPLY, MASK = range(7)
PARTS = {LEGAL: "legal moves as bits", PICK: "pick the k-th legal move", DRAW: "random draw (below n)",
         APPLY: "apply the move (refill, nobles, end of turn)"}


@njit(cache=True)
def _play(states, cards, nobles, part, extra):
    """Random legal play of every game in ``states``; ``part`` done ``extra`` more times per decision."""
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    scratch = np.zeros(R.STATE_SIZE, np.int16)
    decisions, sink = 0, 0
    for i in range(states.shape[0]):
        state = states[i]
        while True:
            bits, base = R.legal_set(state, cards, nobles)
            n = popcount(bits)
            if part == LEGAL:
                for _ in range(extra):
                    more, _ = R.legal_set(state, cards, nobles)
                    sink += popcount(more)
            elif part == MASK:
                for _ in range(extra):
                    sink += R.legal_mask(state, cards, nobles, mask)
            if n == 0:
                break
            k = R.random_below(state, n)
            if part == DRAW:
                for _ in range(extra):
                    sink += R.random_below(scratch, n)
            a = base + pick_bit(bits, k)
            if part == PICK:
                for j in range(extra):
                    sink += pick_bit(bits, (k + j) % n)
            elif part == COPY or part == APPLY:
                for _ in range(extra):
                    scratch[:] = state
                    if part == APPLY:
                        R.apply_action(scratch, a, cards, nobles)
                    sink += scratch[R.CURRENT]
            R.apply_action(state, a, cards, nobles)
            decisions += 1
    return decisions, sink


def _ns_per_decision(deals: np.ndarray, part: int, extra: int) -> float:
    cards, nobles = R.tables()
    states = deals.copy()
    t0 = time.perf_counter()
    decisions, _ = _play(states, cards, nobles, part, extra)
    return (time.perf_counter() - t0) / decisions * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=4000, help="games per run")
    ap.add_argument("--extra", type=int, default=4, help="extra times a part is done per decision")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved runs; medians are shown")
    args = ap.parse_args()
    deals = R.new_states(args.games)
    R.reset_batch(deals, np.arange(args.games, dtype=np.int64), 2, 1000, False)
    cards, nobles = R.tables()
    for part in (BASE, LEGAL, PICK, DRAW, COPY, APPLY, MASK):  # load the compiled kernels, untimed
        _play(deals[:2].copy(), cards, nobles, part, 1)
    runs: dict[int, list[float]] = {p: [] for p in (BASE, LEGAL, PICK, DRAW, COPY, APPLY, MASK)}
    for _ in range(args.repeats):
        for part, times in runs.items():
            times.append(_ns_per_decision(deals, part, 0 if part == BASE else args.extra))
    med = {p: statistics.median(t) for p, t in runs.items()}
    base = med[BASE]
    cost = {p: (med[p] - base) / args.extra for p in PARTS}
    cost[APPLY] -= (med[COPY] - base) / args.extra
    rows = [(name, f"{cost[p]:.1f}" if cost[p] >= 1 else "< 1 (within the noise)", f"{100 * cost[p] / base:.0f}%")
            for p, name in PARTS.items()]
    rows.append(("the rest (loop, bookkeeping)", f"{base - sum(cost.values()):.1f}",
                 f"{100 * (base - sum(cost.values())) / base:.0f}%"))
    rows.append(("a decision in all", f"{base:.1f}", "100%"))
    rows.append(("(not in the loop) the legal mask written from the bits", f"{(med[MASK] - base) / args.extra:.1f}",
                 ""))
    print(f"\nrandom legal 2-player play, one thread, {args.games} games, medians of {args.repeats} runs\n")
    print_markdown(("part", "ns per decision", "share"), rows)


if __name__ == "__main__":
    main()
