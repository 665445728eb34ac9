"""Batched Splendor: many games stepped together in SplendorVectorEnv, one masked-argmax move per game per step.

    python examples/splendor_vector_rollout.py --num-envs 256 --games-per-env 4 --policy buy-first
    python examples/splendor_vector_rollout.py --policy random --opponent greedy

The learner's moves are chosen for the whole batch at once: scores[num_envs, 72], illegal moves set to
-inf with ``env.action_masks()``, argmax per row. ``random`` scores are uniform noise (so the argmax is a
uniformly random legal move); ``buy-first`` adds 1 to every buy, so it buys a card whenever it can. A
policy network would plug in the same way: its logits replace the scores. The other seats of each game
are played inside the env's step by the built-in ``--opponent`` (random or greedy, in numba).
"""

import argparse
import ast
import dataclasses
import inspect
import time
from dataclasses import dataclass

import numpy as np

from tabletop_rl import SplendorVectorEnv
from tabletop_rl.games.splendor.actions import ACTION_NAMES


@dataclass
class Args:
    num_envs: int = 256
    """games stepped together"""
    games_per_env: int = 4
    """games counted from each env (every env contributes the same number: no bias to short games)"""
    policy: str = "buy-first"
    """the learner's moves: random or buy-first"""
    opponent: str = "random"
    """the built-in opponent playing the other seats: random or greedy"""
    players: int = 2
    """players per game (2, 3 or 4)"""
    seed: int = 0
    """seed of the games (game i is dealt from seed + i) and of the policy's noise"""
    parallel: bool = False
    """step the games on numba's threads: faster on an idle many-core machine, far slower on a busy one"""


def parse_args() -> Args:
    """One ``--flag`` per field of ``Args``, its docstring as the help (what ``tyro.cli(Args)`` would do)."""
    body = ast.parse(inspect.getsource(Args)).body[0].body
    docs = {a.target.id: b.value.value for a, b in zip(body, body[1:])
            if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)}
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        flag, text = "--" + f.name.replace("_", "-"), f"{docs.get(f.name, '')} (default: {f.default})"
        if isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=text)
        else:
            parser.add_argument(flag, type=type(f.default), default=f.default, help=text)
    return Args(**vars(parser.parse_args()))


if __name__ == "__main__":
    args = parse_args()
    if args.policy not in ("random", "buy-first"):
        raise SystemExit(f"--policy must be random or buy-first, got {args.policy!r}")
    env = SplendorVectorEnv(num_envs=args.num_envs, opponent=args.opponent, num_players=args.players,
                            parallel=args.parallel)
    rng = np.random.default_rng(args.seed)
    # A fixed preference per action id (72 of them, names like "buy:2.1", "take:white,blue,green").
    preference = np.array([1.0 if name.startswith("buy") else 0.0 for name in ACTION_NAMES])
    if args.policy == "random":
        preference[:] = 0.0

    obs, info = env.reset(seed=args.seed)
    finished = np.zeros(args.num_envs, np.int64)  # games ended so far, per env
    outcomes = []  # the learner's end reward of each counted game: > 0 won, < 0 lost, 0 draw or truncated
    steps, start, next_report = 0, time.perf_counter(), 1.0
    while finished.min() < args.games_per_env:
        scores = rng.random((args.num_envs, preference.size)) + preference
        scores[~env.action_masks()] = -np.inf  # only legal moves can win the argmax
        actions = scores.argmax(axis=1)
        obs, rewards, terminated, truncated, info = env.step(actions)  # ended games are re-dealt in this step
        steps += 1
        if "outcome" in info:  # only present on a step where some game ended
            ended = info["_outcome"]
            counted = ended & (finished < args.games_per_env)
            outcomes += info["outcome"][counted].tolist()
            finished += ended
        if time.perf_counter() - start > next_report:
            next_report += 1.0
            print(f"  {steps * args.num_envs:,} learner moves, {len(outcomes):,} games done")

    seconds = time.perf_counter() - start
    outcomes = np.array(outcomes)
    print(f"{steps:,} batched steps x {args.num_envs} envs = {steps * args.num_envs:,} learner moves in "
          f"{seconds:.2f} s: {steps * args.num_envs / seconds:,.0f} env-steps/s (opponent moves not counted)")
    print(f"{args.policy} vs {args.opponent} over {len(outcomes)} games: win rate {np.mean(outcomes > 0):.3f}, "
          f"draws {np.mean(outcomes == 0):.3f}, losses {np.mean(outcomes < 0):.3f}")
