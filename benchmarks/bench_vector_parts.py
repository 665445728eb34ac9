"""Where the vector env's time goes: its speed by threads and batch size, a step in parts (the learner's draw,
the compiled kernel, the rest of ``env.step``), and the observation's encoding alone. Prints three tables;
never part of the test suite.

    python benchmarks/bench_vector_parts.py
    python benchmarks/bench_vector_parts.py --seconds 3 --steps 5000

The learner plays uniformly random legal moves (``ui.bench.random_legal_actions``, on numba's threads, as a
policy's batched forward pass would run). The kernel is timed by wrapping the env module's ``_step_games``, the
one compiled call a step makes; "rest" is ``env.step`` less that call. The encoding is ``encode_into`` over the
positions the env's games reached, in one compiled loop, best of five passes.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from numba import njit

import tabletop_rl.envs.splendor_vector as V
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.observe import encode_into
from tabletop_rl.ui.bench import print_markdown, random_legal_actions, vector_steps_per_second


def scaling(seconds: float, threads: list[int]) -> None:
    rows = []
    for opponent in ("random", "greedy"):
        for games in (1024, 4096):
            rates = []
            for n in threads:
                numba.set_num_threads(n)
                rates.append(vector_steps_per_second(games, opponent, seconds))
            rows.append([opponent, str(games)] + [f"{r / 1e6:.2f}" for r in rates]
                        + [f"{rates[-1] / rates[0]:.2f}"])
    print_markdown(["opponent", "games"] + [f"{n} thread(s), M env-steps/s" for n in threads]
                   + [f"{threads[-1]} against {threads[0]}"], rows)


def step_parts(steps: int, threads: list[int], games: int = 1024) -> V.SplendorVectorEnv:
    """Time ``steps`` steps of ``games`` games in parts; return the last env (its games are mid-play)."""
    kernel, inner = [0.0], V._step_games

    def timed(*args):
        t = time.perf_counter()
        inner(*args)
        kernel[0] += time.perf_counter() - t

    rows, env = [], None
    V._step_games = timed
    try:
        for n in threads:
            numba.set_num_threads(n)
            env = V.SplendorVectorEnv(num_envs=games, opponent="random")
            _obs, info = env.reset(seed=0)
            draws = np.random.default_rng(0).integers(0, 1 << 30, (64, games))
            actions = np.zeros(games, np.int64)
            draw = total = 0.0
            for k in range(steps // 10 + steps):  # the first tenth warms up, untimed
                if k == steps // 10:
                    draw = total = kernel[0] = 0.0
                t0 = time.perf_counter()
                random_legal_actions(info["action_mask"], draws[k % 64], actions)
                t1 = time.perf_counter()
                _obs, _r, _t, _u, info = env.step(actions)
                draw, total = draw + t1 - t0, total + time.perf_counter() - t1
            us = 1e6 / steps
            rows.append([str(n), f"{draw * us:.1f}", f"{kernel[0] * us:.1f}", f"{(total - kernel[0]) * us:.1f}",
                         f"{games * steps / (draw + total) / 1e6:.2f}"])
    finally:
        V._step_games = inner
    print_markdown(["threads", "draw (us a step)", "kernel", "rest of env.step", "M env-steps/s"], rows)
    assert env is not None
    return env


@njit(cache=True)
def _encode_all(states, seats, cards, nobles, obs, passes):
    for _ in range(passes):
        for i in range(states.shape[0]):
            encode_into(states[i], seats[i], cards, nobles, obs[i])


def encoding(env: V.SplendorVectorEnv, passes: int = 300) -> None:
    cards, nobles = R.tables()
    obs = np.empty_like(env._obs)
    _encode_all(env.states, env.seats, cards, nobles, obs, 1)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        _encode_all(env.states, env.seats, cards, nobles, obs, passes)
        best = min(best, (time.perf_counter() - t) / (passes * env.num_envs))
    print_markdown(["observation", "floats", "ns a call (best of 5)"],
                   [["encode_into, one thread", str(obs.shape[1]), f"{best * 1e9:.1f}"]])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="length of each speed run")
    ap.add_argument("--steps", type=int, default=3000, help="timed steps of 1024 games for the parts")
    args = ap.parse_args()
    threads = sorted({1, numba.get_num_threads()})
    scaling(args.seconds, threads)
    print()
    env = step_parts(args.steps, threads)
    print()
    encoding(env)


if __name__ == "__main__":
    main()
