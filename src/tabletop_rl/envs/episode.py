"""Bookkeeping shared by the games' PettingZoo AEC envs."""

from __future__ import annotations

from pettingzoo import AECEnv


def start_episode(env: AECEnv) -> None:
    """Every agent back in play with zero rewards, no termination or truncation, and empty infos."""
    env.agents = env.possible_agents[:]
    env.rewards = dict.fromkeys(env.agents, 0.0)
    env._cumulative_rewards = dict.fromkeys(env.agents, 0.0)
    env.terminations = dict.fromkeys(env.agents, False)
    env.truncations = dict.fromkeys(env.agents, False)
    env.infos = {agent: {} for agent in env.agents}
