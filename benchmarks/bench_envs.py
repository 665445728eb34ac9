"""Random legal play through every Splendor interface, with PettingZoo's connect_four_v3 as the yardstick.

    python benchmarks/bench_envs.py --seconds 3

Each AEC env runs the same loop (``last`` -> random legal action -> ``step``); the Gymnasium env plays
against the in-numba random opponent; the vector env counts learner steps (env-steps) with
observations and masks written every step.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np


def aec_steps_per_second(env, seconds: float) -> float:
    picks = np.random.default_rng(0).integers(0, 1 << 30, 1 << 16).tolist()
    steps, seed, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.reset(seed=seed)
        seed += 1
        for agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[picks[steps & 0xFFFF] % len(legal)])
            env.step(action)
            steps += 1
    return steps / (time.perf_counter() - t0)


def gym_steps_per_second(seconds: float) -> float:
    from tabletop_rl.splendor.gym_env import SplendorGymEnv

    env = SplendorGymEnv(opponent="random")
    picks = np.random.default_rng(0).integers(0, 1 << 30, 1 << 16).tolist()
    steps, t0 = 0, time.perf_counter()
    _obs, info = env.reset(seed=0)
    while time.perf_counter() - t0 < seconds:
        legal = info["action_mask"].nonzero()[0]
        _obs, _r, terminated, truncated, info = env.step(int(legal[picks[steps & 0xFFFF] % len(legal)]))
        steps += 1
        if terminated or truncated:
            _obs, info = env.reset()
    return steps / (time.perf_counter() - t0)


def vector_steps_per_second(num_envs: int, opponent: str, seconds: float) -> float:
    from tabletop_rl.splendor.vector import SplendorVectorEnv

    env = SplendorVectorEnv(num_envs=num_envs, opponent=opponent)
    _obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    noise = rng.random((64, num_envs, 72)).astype(np.float32)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        # a random legal action per game: argmax of noise over the legal ids (vectorised, cheap)
        actions = np.where(info["action_mask"], noise[steps % 64], -1.0).argmax(axis=1)
        _obs, _r, _t, _u, info = env.step(actions)
        steps += 1
    return steps * num_envs / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    ap.add_argument("--num-envs", type=int, default=1024, help="games in the vector env")
    args = ap.parse_args()

    from pettingzoo.classic import connect_four_v3

    from tabletop_rl.splendor.env import raw_env, splendor_env

    rows = [
        ("PettingZoo connect_four_v3 (AEC, wrapped)", aec_steps_per_second(connect_four_v3.env(), args.seconds)),
        ("Splendor splendor_env() (AEC, wrapped)", aec_steps_per_second(splendor_env(), args.seconds)),
        ("Splendor raw_env (AEC)", aec_steps_per_second(raw_env(), args.seconds)),
        ("Splendor Gymnasium env vs random", gym_steps_per_second(args.seconds)),
    ]
    threads = numba.get_num_threads()
    for opponent in ("random", "greedy"):
        for n in sorted({1, threads}):
            numba.set_num_threads(n)
            rows.append((f"SplendorVectorEnv({args.num_envs}) vs {opponent}, {n} thread(s)",
                         vector_steps_per_second(args.num_envs, opponent, args.seconds)))
    numba.set_num_threads(threads)
    width = max(len(k) for k, _ in rows)
    print(f"{'interface':<{width}}  steps/s")
    print(f"{'-' * width}  {'-' * 12}")
    for k, v in rows:
        print(f"{k:<{width}}  {v:>12,.0f}")


if __name__ == "__main__":
    main()
