"""Space Conquest benchmarks: turns per second of random play through the ParallelEnv, and the
heuristic's win rate against random.

    python benchmarks/bench_space_conquest.py [--turns 200000] [--games 200]
"""

from __future__ import annotations

import argparse
import time

from tabletop_rl.agents import make_policy
from tabletop_rl.envs.space_conquest_parallel import space_conquest_env
from tabletop_rl.games.space_conquest.baselines import play_match


def random_turns_per_second(turns: int, seed: int = 0) -> tuple[float, int]:
    """Random play through ``space_conquest_env()``: both seats use the ``random`` policy on the
    observation's action mask. Returns (turns per second, games finished)."""
    env = space_conquest_env()
    policies = {a: make_policy("random", game="space_conquest", seed=seed + i)
                for i, a in enumerate(env.possible_agents)}
    observations, _ = env.reset(seed=seed)
    games = 0
    start = time.perf_counter()
    for _ in range(turns):
        actions = {a: policies[a].act(o["observation"], o["action_mask"]) for a, o in observations.items()}
        observations, *_ = env.step(actions)
        if not env.agents:
            games += 1
            observations, _ = env.reset()
    return turns / (time.perf_counter() - start), games


def heuristic_vs_random(games: int) -> dict[str, int]:
    """Win/draw/loss of ``heuristic`` against ``random`` over ``games`` games, seats alternating."""
    tally = {"win": 0, "draw": 0, "loss": 0}
    for g in range(games):
        heuristic = make_policy("heuristic", game="space_conquest")
        rand = make_policy("random", game="space_conquest", seed=g)
        seat = g % 2
        result = play_match(*((heuristic, rand) if seat == 0 else (rand, heuristic)), seed=g)
        key = "draw" if result["winner"] is None else ("win" if result["winner"] == seat else "loss")
        tally[key] += 1
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200_000)
    parser.add_argument("--games", type=int, default=200)
    args = parser.parse_args()
    random_turns_per_second(2_000)  # compile and warm up
    rate, games = random_turns_per_second(args.turns)
    print(f"random play through the ParallelEnv: {rate:,.0f} turns/s ({args.turns:,} turns, {games} games ended)")
    start = time.perf_counter()
    tally = heuristic_vs_random(args.games)
    print(f"heuristic vs random over {args.games} games: {tally['win']} wins, {tally['draw']} draws, "
          f"{tally['loss']} losses ({tally['win'] / args.games:.1%}) in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
