"""Random legal play through every Splendor interface, and Klaverjas's, with PettingZoo's connect_four_v3 as the
yardstick.

    python benchmarks/bench_envs.py --seconds 3

Each AEC env runs the same loop (``last`` -> random legal action -> ``step``); the Gymnasium env plays
against the in-numba random opponent; the vector env counts learner steps (env-steps) with
observations and masks written every step.
"""

from __future__ import annotations

import argparse

import numba

from tabletop_rl.ui.bench import aec_steps_per_second, gym_steps_per_second, print_table, vector_steps_per_second


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    ap.add_argument("--num-envs", type=int, default=1024, help="games in the vector env")
    args = ap.parse_args()

    from pettingzoo.classic import connect_four_v3

    from tabletop_rl.envs.aec import TabletopAEC, klaverjas_env, splendor_env
    from tabletop_rl.envs.gym import KlaverjasGymEnv

    rows = [
        ("PettingZoo connect_four_v3 (AEC, wrapped)", aec_steps_per_second(connect_four_v3.env(), args.seconds)),
        ("Splendor splendor_env() (AEC, wrapped)", aec_steps_per_second(splendor_env(), args.seconds)),
        ("Splendor TabletopAEC (unwrapped AEC)", aec_steps_per_second(TabletopAEC("splendor"), args.seconds)),
        ("Splendor Gymnasium env vs random", gym_steps_per_second(args.seconds)),
        ("Klaverjas klaverjas_env() (AEC, wrapped)", aec_steps_per_second(klaverjas_env(), args.seconds)),
        ("Klaverjas TabletopAEC (unwrapped AEC)", aec_steps_per_second(TabletopAEC("klaverjas"), args.seconds)),
        ("Klaverjas Gymnasium env vs random",
         gym_steps_per_second(args.seconds, KlaverjasGymEnv(opponent="random"))),
    ]
    threads = numba.get_num_threads()
    for opponent in ("random", "greedy"):
        for n in sorted({1, threads}):
            numba.set_num_threads(n)
            for copy in (True, False):
                label = "" if copy else ", copy=False"
                rows.append((f"SplendorVectorEnv({args.num_envs}{label}) vs {opponent}, {n} thread(s)",
                             vector_steps_per_second(args.num_envs, opponent, args.seconds, copy)))
    numba.set_num_threads(threads)
    print_table(("interface", "steps/s"), [(k, f"{v:>12,.0f}") for k, v in rows])


if __name__ == "__main__":
    main()
