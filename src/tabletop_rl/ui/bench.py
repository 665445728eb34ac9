"""Throughput measurements of the Splendor core and environments, shared by ``tabletop bench splendor``
and the scripts in ``benchmarks/``. Each function returns numbers; ``print_table`` prints them.

>>> rows = [("batched random play (2p, 1 thread)", f"{batched(2000, 2, False, 1)[0] / 1e6:.1f} M steps/s")]
>>> print_table(("measure", "value"), rows)  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np
from numba import njit

from tabletop_rl.core.kernels import pick_legal
from tabletop_rl.envs.aec import TabletopAEC, splendor_env
from tabletop_rl.envs.gym import SplendorGymEnv
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame

__all__ = ["aec_steps_per_second", "batched", "busy_note", "compile_times", "gym_steps_per_second", "main",
           "print_markdown", "print_table", "python_api", "random_legal_actions", "steps_per_second",
           "vector_steps_per_second"]

_FIRST_STEP = (
    "import time; t=time.perf_counter(); from tabletop_rl import SplendorGame; "
    "g=SplendorGame(2, seed=1); g.step(g.legal_actions()[0]); g.legal_mask(); "
    "print(time.perf_counter()-t)"
)


def _subprocess_seconds(env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", _FIRST_STEP], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def compile_times() -> tuple[float, float]:
    """(cold: first step with an empty numba cache, warm: first step with the cache filled)."""
    cache = tempfile.mkdtemp(prefix="tabletop-numba-")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    try:
        cold = _subprocess_seconds(env)
        warm = min(_subprocess_seconds(env) for _ in range(3))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return cold, warm


def steps_per_second(run: Callable[[], int], seconds: float) -> float:
    """Steps/s of calling ``run`` (which returns the steps it made) until ``seconds`` have passed.

    The first call is made before the clock starts: it loads the compiled kernels (seconds with a cold
    numba cache), which would otherwise swamp a short measurement.

    >>> steps_per_second(lambda: 10, 0.01) > 1000
    True
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    run()
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        steps += run()
    return steps / (time.perf_counter() - t0)


def _picks() -> list[int]:
    """Cheap pre-drawn random numbers: a pick is ``picks[step & 0xFFFF] % len(legal)``."""
    return np.random.default_rng(0).integers(0, 1 << 30, 1 << 16).tolist()


def python_api(seconds: float) -> float:
    """Steps/s of one game at a time through ``SplendorGame``: ``legal_mask`` and ``step`` each move."""
    picks, seeds = _picks(), itertools.count()

    def game() -> int:
        g, steps = SplendorGame(2, seed=next(seeds)), 0
        while not g.is_over:
            legal = g.legal_mask().nonzero()[0]
            g.step(int(legal[picks[steps & 0xFFFF] % len(legal)]))
            steps += 1
        return steps

    return steps_per_second(game, seconds)


def batched(games: int, players: int, parallel: bool, repeats: int) -> tuple[float, float, float]:
    """(steps/s, games/s, mean plies per game) of random legal play to the end, best of ``repeats``."""

    cards, nobles = R.tables()
    states = R.new_states(games)
    steps = np.zeros(games, np.int64)
    seeds = np.arange(games, dtype=np.int64)
    R.reset_batch(states[:2], seeds[:2], players, 1000, parallel)
    R.play_random_batch(states[:2], cards, nobles, steps[:2], parallel)  # compile / load
    times = []
    for _ in range(repeats):
        R.reset_batch(states, seeds, players, 1000, parallel)
        t0 = time.perf_counter()
        R.play_random_batch(states, cards, nobles, steps, parallel)
        times.append(time.perf_counter() - t0)
    best = min(times)
    total = int(steps.sum())
    return total / best, games / best, total / games


def aec_steps_per_second(env, seconds: float) -> float:
    """Steps/s of whole games of random legal play through an AEC env (``env.step`` per agent turn)."""
    picks, seeds = _picks(), itertools.count()

    def episode() -> int:
        env.reset(seed=next(seeds))
        steps = 0
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[picks[steps & 0xFFFF] % len(legal)])
            env.step(action)
            steps += 1
        return steps

    return steps_per_second(episode, seconds)


def gym_steps_per_second(seconds: float, env: Any = None) -> float:
    """Steps/s of a Gymnasium env (default: Splendor's against ``random``), random legal learner moves."""
    env = SplendorGymEnv(opponent="random") if env is None else env
    picks, seeds = _picks(), itertools.count()

    def episode() -> int:
        _obs, info = env.reset(seed=next(seeds))
        steps, done = 0, False
        while not done:
            legal = info["action_mask"].nonzero()[0]
            _obs, _r, terminated, truncated, info = env.step(int(legal[picks[steps & 0xFFFF] % len(legal)]))
            steps, done = steps + 1, terminated or truncated
        return steps

    return steps_per_second(episode, seconds)


@njit(cache=True)
def random_legal_actions(masks, draws, actions):
    """``actions[i]`` = the legal move of ``masks[i]`` picked by ``draws[i]`` (uniform over the legal moves), on
    the calling thread, so that every setting of the vector env's threads pays the same for its moves."""
    for i in range(masks.shape[0]):
        actions[i] = pick_legal(masks[i], draws[i] % masks[i].sum())


def vector_steps_per_second(num_envs: int, opponent: str, seconds: float, copy: bool = True,
                            parallel: bool | str = "auto", warm_up: float = 0.0) -> float:
    """Env-steps/s of ``SplendorVectorEnv`` with random legal learner moves; drawing them (in numba, about
    50 µs a batch of 1024) is counted in the time, as any policy's decision would be. ``warm_up`` seconds of
    steps come first, untimed (``parallel="auto"`` settles on a side in its first few thousand steps)."""
    env = SplendorVectorEnv(num_envs=num_envs, opponent=opponent, copy=copy, parallel=parallel)
    _obs, info = env.reset(seed=0)
    draws = np.random.default_rng(0).integers(0, 1 << 30, (64, num_envs))
    actions = np.zeros(num_envs, np.int64)
    batches = itertools.count()

    def batch() -> int:
        nonlocal info
        random_legal_actions(info["action_mask"], draws[next(batches) % 64], actions)
        _obs, _r, _t, _u, info = env.step(actions)
        return num_envs

    if warm_up > 0:
        steps_per_second(batch, warm_up)
    return steps_per_second(batch, seconds)


def print_markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """``rows`` under ``header`` as a markdown table, the form docs/benchmarks.md keeps them in."""
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def print_table(header: tuple[str, str], rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows + [header])
    print(f"{header[0]:<{width}}  {header[1]}")
    print(f"{'-' * width}  {'-' * 24}")
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


def _positive(kind: type) -> Callable[[str], Any]:
    """An argparse type: a number of ``kind`` above zero, else argparse's one-line usage error."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    return parse


def main(argv: list[str] | None = None) -> None:
    """``tabletop bench splendor``: a quick throughput table of the core and every env interface."""
    ap = argparse.ArgumentParser(prog="tabletop bench splendor",
                                 description="A quick throughput table of the core and every env interface.")
    ap.add_argument("--seconds", type=_positive(float), default=2.0,
                    help="duration of each timed loop (each loop is warmed up first, untimed)")
    ap.add_argument("--games", type=_positive(int), default=10000, help="games in the batched core measurement")
    ap.add_argument("--num-envs", type=_positive(int), default=1024, help="games in the vector env")
    args = ap.parse_args(argv)
    rows = [("Python API step + legal_mask (2p)", f"{python_api(args.seconds):,.0f} steps/s")]
    for parallel in (False, True):
        label = f"{numba.get_num_threads()} threads" if parallel else "1 thread"
        sps, gps, _ = batched(args.games, 2, parallel, 1)
        rows.append((f"core batched random play (2p, {label})", f"{sps:,.0f} steps/s, {gps:,.0f} games/s"))
    rows += [
        ("splendor_env() (AEC, wrapped)", f"{aec_steps_per_second(splendor_env(), args.seconds):,.0f} steps/s"),
        ("TabletopAEC (unwrapped AEC)",
         f"{aec_steps_per_second(TabletopAEC('splendor'), args.seconds):,.0f} steps/s"),
        ("Gymnasium env vs random", f"{gym_steps_per_second(args.seconds):,.0f} steps/s"),
        (f"SplendorVectorEnv({args.num_envs}) vs random",
         f"{vector_steps_per_second(args.num_envs, 'random', args.seconds):,.0f} env-steps/s"),
    ]
    print_table(("measure", "value"), rows)
    note = busy_note()
    if note:
        print(f"\n{note}")


def busy_note() -> str | None:
    """A line saying that other work lowers the figures, when the 1-minute load average is above the core count.

    >>> busy_note() is None or "load average" in busy_note()
    True
    """
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load <= cores:
        return None
    return f"load average {load:.1f} on {cores} cores: other work on them lowers these figures"
