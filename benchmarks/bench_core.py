"""Throughput of the Splendor rules core. Prints a table; never part of the test suite.

    python benchmarks/bench_core.py --games 20000 --players 2

Measures: cold compile (an empty numba cache, in a subprocess), warm import to first step
(subprocess), single-game Python API steps/s (step + legal_mask), batched random legal play
(mask + choice + step) single-thread and all threads, games/s, bytes per game.
"""

from __future__ import annotations

import argparse

import numba
import numpy as np

from tabletop_rl.ui.bench import batched, compile_times, print_table, python_api


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=20000, help="games per batched measurement")
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    ap.add_argument("--repeats", type=int, default=3, help="batched runs; the best is reported")
    ap.add_argument("--api-seconds", type=float, default=3.0, help="duration of the Python API loop")
    ap.add_argument("--skip-compile", action="store_true", help="skip the cold/warm start subprocesses")
    args = ap.parse_args()

    from tabletop_rl.games.splendor import rules as R

    rows: list[tuple[str, str]] = []
    if not args.skip_compile:
        cold, warm = compile_times()
        rows += [("cold compile to first step (empty cache)", f"{cold:.1f} s"),
                 ("warm import to first step", f"{warm:.2f} s")]
    rows.append(("Python API step + legal_mask (2p)", f"{python_api(args.api_seconds):,.0f} steps/s"))
    for parallel in (False, True):
        label = f"{numba.get_num_threads()} threads" if parallel else "1 thread"
        sps, gps, plies = batched(args.games, args.players, parallel, args.repeats)
        rows.append((f"batched random play ({args.players}p, {label})", f"{sps / 1e6:.2f} M steps/s"))
        rows.append((f"games ({args.players}p, {label})", f"{gps:,.0f} games/s, {plies:.0f} plies/game"))
    rows.append(("bytes per game", f"{R.STATE_SIZE * np.dtype(R.STATE_DTYPE).itemsize}"))
    print_table(("measure", "value"), rows)


if __name__ == "__main__":
    main()
