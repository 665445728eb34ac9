"""Throughput of the Splendor rules core. Prints a table; never part of the test suite.

    python benchmarks/bench_core.py --games 20000 --players 2

Measures: cold compile (an empty numba cache, in a subprocess), warm import to first step
(subprocess), single-game Python API steps/s (step + legal_mask), batched random legal play
(mask + choice + step) single-thread and all threads, games/s, bytes per game.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

FIRST_STEP = (
    "import time; t=time.perf_counter(); from tabletop_rl import SplendorGame; "
    "g=SplendorGame(2, seed=1); g.step(g.legal_actions()[0]); g.legal_mask(); "
    "print(time.perf_counter()-t)"
)


def subprocess_seconds(env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", FIRST_STEP], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def compile_times() -> tuple[float, float]:
    """(cold: first step with an empty numba cache, warm: first step with the cache filled)."""
    cache = tempfile.mkdtemp(prefix="tabletop-numba-")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    try:
        cold = subprocess_seconds(env)
        warm = min(subprocess_seconds(env) for _ in range(3))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return cold, warm


def python_api(seconds: float) -> float:
    from tabletop_rl import SplendorGame

    picks = np.random.default_rng(0).integers(0, 1 << 30, 1 << 16).tolist()  # cheap random choice
    steps, seed, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        g = SplendorGame(2, seed=seed)
        seed += 1
        while not g.is_over:
            legal = g.legal_mask().nonzero()[0]
            g.step(int(legal[picks[steps & 0xFFFF] % len(legal)]))
            steps += 1
    return steps / (time.perf_counter() - t0)


def batched(games: int, players: int, parallel: bool, repeats: int) -> tuple[float, float, float]:
    """(steps/s, games/s, mean plies per game) of random legal play to the end, best of ``repeats``."""
    from tabletop_rl.splendor import rules as R

    cards, nobles = R.tables()
    reset = R.reset_batch_parallel if parallel else R.reset_batch
    play = R.play_random_batch_parallel if parallel else R.play_random_batch
    states = R.new_states(games)
    steps = np.zeros(games, np.int64)
    seeds = np.arange(games, dtype=np.int64)
    reset(states[:2], seeds[:2], players, 1000)
    play(states[:2], cards, nobles, steps[:2])  # compile / load
    best = None
    for _ in range(repeats):
        reset(states, seeds, players, 1000)
        t0 = time.perf_counter()
        play(states, cards, nobles, steps)
        dt = time.perf_counter() - t0
        if best is None or dt < best:
            best = dt
    total = int(steps.sum())
    return total / best, games / best, total / games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=20000, help="games per batched measurement")
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    ap.add_argument("--repeats", type=int, default=3, help="batched runs; the best is reported")
    ap.add_argument("--api-seconds", type=float, default=3.0, help="duration of the Python API loop")
    ap.add_argument("--skip-compile", action="store_true", help="skip the cold/warm start subprocesses")
    args = ap.parse_args()

    from tabletop_rl.splendor import rules as R

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
    width = max(len(k) for k, _ in rows)
    print(f"{'measure':<{width}}  value")
    print(f"{'-' * width}  {'-' * 24}")
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
