"""Sampling throughput of RLlib on Splendor self-play (``tabletop_rl.envs.rllib``) with 1 and 2 env runners x 1, 4
and 8 envs each, next to the project's own PPO loop (``tabletop train splendor``, self-play). Prints a markdown
table; never part of the test suite. Needs the ``[ray]`` extra; Ray stays on 127.0.0.1.

    python benchmarks/bench_rllib.py --steps 4000

RLlib: env steps (one move of one seat) per second of wall-clock time while every runner samples ``--steps`` with
the masked module (its forward passes included, no update), after a warm-up. The PPO loop: learner steps per
second of its rollouts (games and forward passes, ``env`` + ``policy`` of bench_training.py) and with its updates;
in self-play a learner step also plays the other seats' moves, so it is ``--players`` moves of the game.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # read when ray is imported: stay on 127.0.0.1

import argparse  # noqa: E402
import time  # noqa: E402

import ray  # noqa: E402
from bench_training import measure  # noqa: E402  (the PPO loop timed as bench_training.py times it)

from tabletop_rl.envs.rllib import selfplay_config  # noqa: E402
from tabletop_rl.ui.bench import print_markdown  # noqa: E402


def sampled_env_steps(runner, steps: int) -> int:
    """Run on an env runner: sample ``steps`` env steps (rounded up to whole vector steps); how many it took."""
    return sum(episode.env_steps() for episode in runner.sample(num_timesteps=steps, explore=True))


def rllib_rate(runners: int, envs: int, steps: int, hidden: tuple[int, ...]) -> float:
    """Env steps per second of ``runners`` x ``envs`` sampling in parallel."""
    config = (selfplay_config("splendor", hidden=hidden)
              .env_runners(num_env_runners=runners, num_envs_per_env_runner=envs, num_cpus_per_env_runner=1)
              .learners(num_learners=0))
    algo = config.build_algo()
    try:
        group = algo.env_runner_group
        group.foreach_env_runner(lambda r: sampled_env_steps(r, steps // 4), local_env_runner=False)  # warm-up
        start = time.perf_counter()
        counts = group.foreach_env_runner(lambda r: sampled_env_steps(r, steps), local_env_runner=False)
        return sum(counts) / (time.perf_counter() - start)
    finally:
        algo.stop()


def ppo_rates(steps: int, net: str, seed: int) -> tuple[float, float]:
    """(rollout, with updates) learner steps per second of the PPO loop in pure self-play."""
    run = measure("ppo", steps, "self=1", net, threads=1, seed=seed)
    return run["rate"] / (run["env"] + run["policy"]), run["rate"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=4000, help="env steps each RLlib runner samples per measurement")
    ap.add_argument("--runners", default="1,2", help="comma-separated env runner counts")
    ap.add_argument("--envs", default="1,4,8", help="comma-separated envs per runner")
    ap.add_argument("--ppo-steps", type=int, default=65_536, help="learner steps of the PPO loop's run")
    ap.add_argument("--net", default="256,256", help="hidden layers of both (the default of tabletop train)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    hidden = tuple(int(h) for h in args.net.split(","))
    runner_counts = [int(r) for r in args.runners.split(",")]
    ray.init(num_cpus=max(runner_counts) + 1, _node_ip_address="127.0.0.1", include_dashboard=False,
             log_to_driver=False)
    rows = []
    for runners in runner_counts:
        for envs in (int(e) for e in args.envs.split(",")):
            rate = rllib_rate(runners, envs, args.steps, hidden)
            rows.append(("RLlib PPO, sampling", f"{runners} x {envs}", f"{rate:,.0f} env steps/s"))
            print(" | ".join(rows[-1]), flush=True)
    ray.shutdown()
    ppo_rates(16_384, args.net, args.seed)  # warm-up: the first run pays for torch's and numba's first calls
    rollout, overall = ppo_rates(args.ppo_steps, args.net, args.seed)
    rows.append(("tabletop train (PPO loop), rollouts", "1 process x 256 games", f"{rollout:,.0f} learner steps/s"))
    rows.append(("tabletop train (PPO loop), with updates", "1 process x 256 games", f"{overall:,.0f} learner steps/s"))
    head = ("path", "runners x envs", "throughput")
    print()
    print_markdown(head, rows)


if __name__ == "__main__":
    main()
