"""Random legal play through the PettingZoo AEC env: the standard agent_iter loop, nothing else.

    python examples/random_rollout.py --players 3 --games 5 --seed 1
    python examples/random_rollout.py --games 1 --render      # print the board after every move
"""

import argparse

import numpy as np

from tabletop_rl.envs.splendor_aec import splendor_env

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="seats at the table")
parser.add_argument("--games", type=int, default=3, help="games to play")
parser.add_argument("--seed", type=int, default=0, help="seed of the first game (then seed+1, ...)")
parser.add_argument("--render", action="store_true", help="print the board after every move")
args = parser.parse_args()

env = splendor_env(num_players=args.players, render_mode="human" if args.render else None)
rng = np.random.default_rng(args.seed)

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
    state = env.unwrapped.game
    ending = "truncated at the ply cap" if state.is_truncated else f"winners {state.winners}"
    print(f"game {game}: {moves} moves, scores {state.scores}, {ending}, returns {returns}")

env.close()
