"""Random legal play through the Splendor PettingZoo AEC env: the standard agent_iter loop, nothing else.

    python examples/random_rollout.py --players 3 --games 5 --seed 1
    python examples/random_rollout.py --games 1 --render      # print the board after every move
"""

import argparse
import ast
import dataclasses
import inspect
import time
from dataclasses import dataclass

import numpy as np

from tabletop_rl import splendor_env


@dataclass
class Args:
    players: int = 2
    """seats at the table (2, 3 or 4)"""
    games: int = 3
    """games to play"""
    seed: int = 0
    """seed of the first game (then seed+1, ...) and of the random moves"""
    render: bool = False
    """print the board after every move"""


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
    env = splendor_env(num_players=args.players, render_mode="human" if args.render else None)
    rng = np.random.default_rng(args.seed)
    wins = np.zeros(args.players)  # winners share a win
    total_moves, start = 0, time.perf_counter()

    for game in range(args.games):
        env.reset(seed=args.seed + game)
        moves, returns = 0, dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, info = env.last()
            returns[agent] += reward
            if terminated or truncated:
                action = None  # a finished agent steps with None until it leaves env.agents
            else:
                legal = np.flatnonzero(observation["action_mask"])
                action = int(rng.choice(legal))
                moves += 1
            env.step(action)
        state = env.unwrapped.game  # the SplendorGame behind the env, for the scores
        for seat in state.winners:
            wins[seat] += 1 / len(state.winners)
        total_moves += moves
        ending = "truncated at the ply cap" if state.is_truncated else f"winners {state.winners}"
        print(f"game {game}: {moves} moves, scores {state.scores}, {ending}, returns {returns}")

    env.close()
    seconds = time.perf_counter() - start
    print(f"{args.games} games, {total_moves / args.games:.1f} moves per game, {total_moves / seconds:,.0f} moves/s")
    print("win rate by seat: " + ", ".join(f"player_{p} {w / args.games:.2f}" for p, w in enumerate(wins)))
