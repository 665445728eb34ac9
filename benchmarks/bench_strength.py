"""Head-to-head strength of Splendor policies. Prints a table; never part of the test suite.

    python benchmarks/bench_strength.py --pairs greedy:random,expectiminimax:greedy --games 400 --jobs 2
    python benchmarks/bench_strength.py --pairs "mcts:budget_ms=1000 greedy" --games 40

``--pairs`` lists matches ``A:B`` separated by commas. A policy spec that has options of its own
(``mcts:budget_ms=1000``) contains ':' and ',', so such pairs are written with a space between the
two specs and given one ``--pairs`` each: ``--pairs "mcts:budget_ms=1000 greedy"``. Each match
plays ``--games`` two-player games: deal ``i // 2`` (seed ``--seed + i // 2``) is played twice with
the seats swapped. Columns: A's wins/draws/losses (a shared win or a game cut off at the ply cap is
a draw), A's win rate with a 95% Wilson interval (draws count half), mean points of A and B, mean
plies, mean decision time per move of A and B, and search nodes per second of A and B.
"""

from __future__ import annotations

import argparse
import time
from multiprocessing import Pool

import numpy as np

from tabletop_rl.core.stats import wilson_interval


def play_game(task: tuple[str, str, int, bool]) -> dict:
    """One game of ``a`` against ``b`` on deal ``seed``; ``swap``: ``b`` sits first. Returns A's view."""
    from tabletop_rl.agents import make_policy
    from tabletop_rl.games.splendor.game import SplendorGame

    a, b, seed, swap = task
    specs = [b, a] if swap else [a, b]
    policies = [make_policy(spec, game="splendor", seed=seed * 2 + seat) for seat, spec in enumerate(specs)]
    game = SplendorGame(2, seed=seed)
    while not game.is_over:
        seat = game.current_player
        game.step(policies[seat].act(game.observe(seat), game.legal_mask(), game.policy_info(seat)))
    seat_a, seat_b = (1, 0) if swap else (0, 1)
    winners = game.winners
    outcome = 0.5 if len(winners) != 1 else float(winners == [seat_a])
    stats = [policies[seat_a].stats, policies[seat_b].stats]
    return {"outcome": outcome, "points": (game.scores[seat_a], game.scores[seat_b]), "plies": game.ply,
            "time": tuple(s.total_time_s for s in stats), "decisions": tuple(s.decisions for s in stats),
            "nodes": tuple(s.nodes for s in stats)}


def parse_pairs(items: list[str]) -> list[tuple[str, str]]:
    """``["greedy:random,mcts:greedy", "mcts:budget_ms=1000 greedy"]`` -> the (A, B) spec pairs."""
    pairs = []
    for item in items:
        if " " in item.strip():
            a, b = item.split()
            pairs.append((a, b))
            continue
        for pair in item.split(","):
            a, sep, b = pair.partition(":")
            if not sep or not a or not b:
                raise SystemExit(f"bad pair {pair!r}: write A:B, or 'SPEC_A SPEC_B' for specs with options")
            pairs.append((a.strip(), b.strip()))
    return pairs


def summarise(a: str, b: str, results: list[dict]) -> list[str]:
    n = len(results)
    outcomes = [r["outcome"] for r in results]
    wins, draws = outcomes.count(1.0), outcomes.count(0.5)
    low, high = wilson_interval(sum(outcomes), n)
    time_s = np.sum([r["time"] for r in results], axis=0)
    decisions = np.sum([r["decisions"] for r in results], axis=0)
    nodes = np.sum([r["nodes"] for r in results], axis=0)
    return [f"{a} vs {b}", f"{wins}/{draws}/{n - wins - draws}", f"{sum(outcomes) / n:.3f} [{low:.3f}, {high:.3f}]",
            f"{np.mean([r['points'][0] for r in results]):.1f}-{np.mean([r['points'][1] for r in results]):.1f}",
            f"{np.mean([r['plies'] for r in results]):.0f}",
            f"{1000 * time_s[0] / decisions[0]:.1f}/{1000 * time_s[1] / decisions[1]:.1f}",
            f"{nodes[0] / time_s[0]:,.0f}/{nodes[1] / time_s[1]:,.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", action="append", required=True, help="A:B[,A:B...] or 'SPEC_A SPEC_B'")
    parser.add_argument("--games", type=int, default=400, help="games per pair (even: each deal twice)")
    parser.add_argument("--seed", type=int, default=0, help="first deal's seed")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args()
    from tabletop_rl.agents import parse_spec

    pairs = parse_pairs(args.pairs)
    for spec in {s for pair in pairs for s in pair}:
        parse_spec(spec, "splendor")  # a bad spec fails here, before any game
    header = ["match (A vs B)", "A W/D/L", "A win rate [95%]", "points A-B", "plies", "ms/move A/B", "nodes/s A/B"]
    rows = [header]
    with Pool(args.jobs) as pool:
        for a, b in pairs:
            start = time.perf_counter()
            tasks = [(a, b, args.seed + i // 2, i % 2 == 1) for i in range(args.games)]
            rows.append(summarise(a, b, pool.map(play_game, tasks, chunksize=1)))
            # each row as soon as it is measured, so a later pair's failure loses nothing
            print(f"{a} vs {b}: {args.games} games in {time.perf_counter() - start:.0f} s: {' | '.join(rows[-1][1:])}",
                  flush=True)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))


if __name__ == "__main__":
    main()
