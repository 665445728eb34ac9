"""The vector env's threads on shared cores: ``SplendorVectorEnv`` stepped on numba's threads under each
OpenMP wait setting, with a busy neighbour on every core and then with none, each row as a ratio to one
thread (``parallel=False``) measured in the same regime and round. Never part of the test suite.

    python benchmarks/bench_vector_threads.py
    python benchmarks/bench_vector_threads.py --seconds 2 --rounds 3 --num-envs 1024

Every measurement runs in a fresh Python process, because OpenMP reads its settings once, when numba
first starts its threads. The busy regime starts one spinning Python process per core, at this script's
own nice level, for the length of its measurements. The package's default is the first threaded row; the
others name the environment variable that gives them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tabletop_rl.ui.bench import print_markdown

# (label, environment added, parallel); the first row is the yardstick, the second the package's default
SETTINGS: list[tuple[str, dict[str, str], bool | str]] = [
    ("1 thread (`parallel=False`)", {}, False),
    ("the package's default: `parallel=\"auto\"`, OpenMP spins 3000 rounds", {}, "auto"),
    ("threads always (`parallel=True`), spin 3000 rounds", {}, True),
    ("threads always, `OMP_WAIT_POLICY=PASSIVE`", {"OMP_WAIT_POLICY": "PASSIVE"}, True),
    ("threads always, libgomp's own spin (about 3 ms)", {"GOMP_SPINCOUNT": "300000"}, True),
    ("threads always, numba's `workqueue` layer", {"NUMBA_THREADING_LAYER": "workqueue"}, True),
]

_MEASURE = (
    "import sys, numba; from tabletop_rl.ui.bench import vector_steps_per_second as v; "
    "n, s, p = int(sys.argv[1]), float(sys.argv[2]), {'1': True, '0': False}.get(sys.argv[3], sys.argv[3]); "
    "print(v(n, 'random', s, parallel=p, warm_up=float(sys.argv[4])))"
)


def measure(num_envs: int, seconds: float, env: dict[str, str], parallel: bool | str, warm_up: float) -> float:
    """Env-steps/s of one fresh process stepping ``num_envs`` games for ``seconds`` with ``env`` added."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(num_envs), str(seconds), _flag(parallel), str(warm_up)],
                         env=dict(os.environ, **env), capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _flag(parallel: bool | str) -> str:
    return parallel if isinstance(parallel, str) else str(int(parallel))


@contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """``count`` processes spinning in Python at this process's nice level while the block runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def regime(num_envs: int, seconds: float, rounds: int, warm_up: float) -> list[tuple[float, float]]:
    """(median env-steps/s, median ratio to the yardstick of its round) of every setting."""
    rates = [[measure(num_envs, seconds, env, parallel, warm_up) for _label, env, parallel in SETTINGS]
             for _ in range(rounds)]
    return [(statistics.median(r[i] for r in rates), statistics.median(r[i] / r[0] for r in rates))
            for i in range(len(SETTINGS))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="timed seconds of each measurement")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every setting in each regime (medians)")
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--warm-up", type=float, default=2.0,
                    help="untimed seconds of steps before each measurement (the auto setting settles in them)")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    load_before = os.getloadavg()[0]
    with busy_cores(cores):
        busy = regime(args.num_envs, args.seconds, args.rounds, args.warm_up)
    quiet = regime(args.num_envs, args.seconds, args.rounds, args.warm_up)
    print(f"SplendorVectorEnv({args.num_envs}) vs random, {cores} cores, {args.warm_up:g} s warm-up, "
          f"medians of {args.rounds} rounds; "
          f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    rows = [[label, f"{b[0] / 1e6:.2f}", f"{b[1]:.2f}", f"{q[0] / 1e6:.2f}", f"{q[1]:.2f}"]
            for (label, _env, _p), b, q in zip(SETTINGS, busy, quiet, strict=True)]
    print_markdown(["setting", f"{cores} spinners: M env-steps/s", "against 1 thread",
                    "no spinners: M env-steps/s", "against 1 thread"], rows)


if __name__ == "__main__":
    main()
