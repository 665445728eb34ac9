"""Training throughput of PPO self-play: learner steps per second including the PPO updates, and the
share of the time spent stepping the games. Prints a table; never part of the test suite.

    python benchmarks/bench_training.py --steps 300000

Runs ``tabletop train splendor`` settings (evaluation and checkpoints pushed past the end, so only
rollouts and updates are timed) for each opponent mix given.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from tabletop_rl.train.splendor_ppo import TrainConfig, train


def measure(steps: int, mix: str, net: str, seed: int) -> tuple[float, float]:
    """(learner steps/s, share of time in the env) of one short training run."""
    with tempfile.TemporaryDirectory() as out:
        cfg = TrainConfig(steps=steps, out=out, mix=mix, net=net, seed=seed, eval_every=10 * steps,
                          checkpoint_every=10 * steps, progress=False)
        train(cfg)
        timing = json.loads((Path(out) / "timing.json").read_text())
    return timing["steps"] / timing["seconds"], timing["env_seconds"] / timing["seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300_000, help="learner steps per measurement")
    ap.add_argument("--mixes", default="greedy=1;random=0.1,greedy=0.5,self=0.4",
                    help="semicolon-separated opponent mixes (see tabletop train --mix)")
    ap.add_argument("--net", default="256,256", help="hidden layers (the default of tabletop train)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for mix in args.mixes.split(";"):
        rate, share = measure(args.steps, mix, args.net, args.seed)
        rows.append((mix, f"{rate:,.0f}", f"{share:.0%}"))
    width = max(len(r[0]) for r in rows + [("opponent mix",)])
    print(f"{'opponent mix':<{width}}  {'steps/s (incl. PPO updates)':>28}  env share")
    print(f"{'-' * width}  {'-' * 28}  ---------")
    for mix, rate, share in rows:
        print(f"{mix:<{width}}  {rate:>28}  {share:>9}")


if __name__ == "__main__":
    main()
