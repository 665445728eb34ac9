"""Space Conquest through the PettingZoo ParallelEnv: a built-in policy against another, both seats ordering at once.

    python examples/space_conquest_heuristic_vs_random.py --games 20
    python examples/space_conquest_heuristic_vs_random.py --player random --opponent random --games 50

Policies come from ``tabletop_rl.agents.make_policy(spec, game="space_conquest")`` and answer
``act(observation, action_mask, info)``: ``random`` gives the RL action (a MultiDiscrete vector drawn
inside the mask), ``heuristic`` JSON orders ``{"moves": [...]}``; ``env.step`` takes either. ``info`` is
``env.game.policy_info(seat)``: ``{"game": a fog-of-war copy of the game, "player": seat}``, so a policy
reads only what its seat has seen. Each map is played twice with the seats swapped.
"""

import argparse
import ast
import dataclasses
import inspect
import time
from dataclasses import dataclass

import numpy as np

from tabletop_rl import space_conquest_env
from tabletop_rl.agents import make_policy


@dataclass
class Args:
    player: str = "heuristic"
    """the policy measured (a spec such as heuristic, heuristic:margin=2, random)"""
    opponent: str = "random"
    """the policy it plays against"""
    games: int = 10
    """games to play (each map twice, the seats swapped)"""
    max_turns: int = 100
    """turn cap; the rules score a capped game (RU owned, then ships)"""
    seed: int = 0
    """seed of the first map (then seed+1, ...) and of the policies"""


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
    env = space_conquest_env(max_turns=args.max_turns)
    player = make_policy(args.player, game="space_conquest", seed=args.seed)
    opponent = make_policy(args.opponent, game="space_conquest", seed=args.seed + 1)
    points, turns, start = [], 0, time.perf_counter()  # points: 1 won, 1/2 draw, 0 lost (for `player`)

    for game in range(args.games):
        seat = game % 2  # the measured player's seat: 0, 1, 0, 1, ...
        policies = {env.possible_agents[seat]: player, env.possible_agents[1 - seat]: opponent}
        observations, infos = env.reset(seed=args.seed + game // 2)
        while env.agents:  # one step = one turn, both agents' orders together
            actions = {}
            for p, agent in enumerate(env.possible_agents):
                obs = observations[agent]
                actions[agent] = policies[agent].act(obs["observation"], obs["action_mask"], env.game.policy_info(p))
            observations, rewards, terminations, truncations, infos = env.step(actions)
        me = env.possible_agents[seat]
        points.append((rewards[me] + 1) / 2)  # the end reward is +1 / -1, 0 for a draw
        turns += infos[me]["turn"]
        result = infos[me]["result"]
        print(f"game {game}: {args.player} as {me}, {result['end']} after turn {result['turn']}, "
              f"RU {result['ru']}, ships {result['ships']}, reward {rewards[me]:+.0f}")

    env.close()
    points = np.array(points)
    seconds = time.perf_counter() - start
    print(f"{args.games} games, {turns / args.games:.1f} turns per game, {turns / seconds:.0f} turns/s")
    print(f"{args.player} vs {args.opponent}: win rate {points.mean():.3f} "
          f"(won {np.sum(points == 1)}, drew {np.sum(points == 0.5)}, lost {np.sum(points == 0)})")
