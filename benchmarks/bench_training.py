"""Training throughput of PPO self-play: learner steps per second including the PPO updates, and where the
time goes, for the CleanRL-style loop (``tabletop train splendor``) and SB3's MaskablePPO (``--algo sb3``)
on the same settings. Prints a table; never part of the test suite.

    python benchmarks/bench_training.py --steps 200000

Runs ``tabletop train splendor`` settings (evaluation and checkpoints pushed past the end, so only
rollouts and updates are timed) for each trainer, opponent mix and torch thread count given. "env" is the
time inside ``SplendorVectorEnv.step`` (the ``self`` opponents' forward passes included), "update" the PPO
updates (SB3's: the gaps between its rollouts), "policy" the learner's forward passes in the rollouts.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from tabletop_rl.train import splendor_cleanrl_ppo, splendor_ppo
from tabletop_rl.ui.bench import print_markdown


def measure(trainer: str, steps: int, mix: str, net: str, threads: int, seed: int) -> dict[str, float]:
    """Throughput and time shares of one short training run."""
    with tempfile.TemporaryDirectory() as out:
        settings = dict(steps=steps, out=out, mix=mix, net=net, seed=seed, threads=threads, eval_every=10 * steps,
                        checkpoint_every=10 * steps, progress=False)
        if trainer == "sb3":
            splendor_ppo.train(splendor_ppo.TrainConfig(**settings))
        else:
            splendor_cleanrl_ppo.train(splendor_cleanrl_ppo.Args(**settings, bf16=trainer == "ppo-bf16"))
        timing = json.loads((Path(out) / "timing.json").read_text())
    seconds = timing["seconds"]
    return {"rate": timing["steps"] / seconds, "env": timing["env_seconds"] / seconds,
            "update": timing["update_seconds"] / seconds,
            "policy": timing.get("policy_seconds", float("nan")) / seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=200_000, help="learner steps per measurement")
    ap.add_argument("--mixes", default="greedy=1;random=0.1,greedy=0.5,self=0.4",
                    help="semicolon-separated opponent mixes (see tabletop train --mix)")
    ap.add_argument("--trainers", default="ppo,sb3", help="ppo (the CleanRL-style loop), sb3 (MaskablePPO), "
                                                         "ppo-bf16 (the loop with --bf16)")
    ap.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    ap.add_argument("--net", default="256,256", help="hidden layers (the default of tabletop train)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for mix in args.mixes.split(";"):
        for threads in (int(t) for t in args.threads.split(",")):
            for trainer in args.trainers.split(","):
                r = measure(trainer, args.steps, mix, args.net, threads, args.seed)
                policy = "-" if r["policy"] != r["policy"] else f"{r['policy']:.0%}"
                rows.append((trainer, str(threads), mix, f"{r['rate']:,.0f}", f"{r['env']:.0%}", policy,
                             f"{r['update']:.0%}"))
                print(" | ".join(rows[-1]), flush=True)
    head = ("trainer", "threads", "opponent mix", "steps/s (incl. updates)", "env", "policy", "update")
    print()
    print_markdown(head, rows)


if __name__ == "__main__":
    main()
