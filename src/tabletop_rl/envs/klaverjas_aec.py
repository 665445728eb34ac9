"""PettingZoo AEC environment for Klaverjas: ``klaverjas_env()`` (wrapped) and ``raw_env`` (raises).

Agents ``player_0 .. player_3`` sit N E S W; ``player_0``/``player_2`` are one team. An episode is a
match of ``deals`` deals or to a ``target`` score (bidding, with kraken the doubling, then 8 tricks
each). Each observation is ``{"observation": float32[OBS_SIZE], "action_mask": int8[40]}`` from the
observer's seat, with the other seats numbered relative to it (1 = left, 2 = partner, 3 = right); the
layout is ``OBS_PARTS``. Actions 0..31 play a card (``rules.card_name``), 32..35 name trump C D H S,
36 passes (no trump, not this suit, no (re)double), 37 accepts the proposed suit, 38 kraak (a defender
doubles), 39 rekraak (a maker redoubles). Only the seat to act has a non-zero mask.

>>> env = klaverjas_env()
>>> env.reset(seed=1)
>>> obs, reward, terminated, truncated, info = env.last()
>>> obs["observation"].shape, int(obs["action_mask"].sum()), env.agent_selection
((338,), 4, 'player_0')
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tabletop_rl.core.game import IllegalActionError
from tabletop_rl.envs.episode import start_episode
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.observe import OBS_SIZE, end_rewards, observe
from tabletop_rl.games.klaverjas.render import render_text

RENDER_MODES = ("ansi", "human")
REWARD_MODES = ("win", "points")


def klaverjas_env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """The AEC env in PettingZoo's classic wrappers: an illegal move ends the match with -1 for the mover.

    ``options``: see ``raw_env`` (``reward``, ``render_viewer`` and the match options of
    ``rules.options_row``: ``deals`` or ``target``, ``rules``, ``trump_selection``, ``all_pass``, ``first_lead``,
    ``pit_for_defenders``, ``kraken``, ``quartet_values``, ``stuk_mode``, ``amsterdam_undertrump_vs_opponent``).

    >>> klaverjas_env(rules="amsterdam").possible_agents
    ['player_0', 'player_1', 'player_2', 'player_3']
    """
    env = raw_env(render_mode=render_mode, **options)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


class raw_env(AECEnv):
    """Four-seat Klaverjas as a PettingZoo ``AECEnv`` that raises ``IllegalActionError`` on illegal moves.

    ``reward``: ``"win"`` (+-1 by match score) or ``"points"`` (see ``end_rewards``); handed out when the
    match ends. ``render_viewer``: the seat whose hand ``render`` shows (``None``: no hand shown).
    ``options``: the match options of ``rules.options_row`` (checked here, a ``ValueError`` naming a bad one).
    """

    metadata = {"name": "klaverjas_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, render_mode: str | None = None, reward: str = "win", render_viewer: int | None = None,
                 **options: Any) -> None:
        super().__init__()
        self._options = options
        R.options_row(**options)  # checks the options
        R.option_index(render_mode, "render_mode", (None, *RENDER_MODES))
        R.option_index(reward, "reward", REWARD_MODES)
        if render_viewer is not None and render_viewer not in range(4):
            raise ValueError(f"render_viewer must be None or a seat 0..3, got {render_viewer!r}")
        self.render_mode, self.render_viewer, self.reward_mode = render_mode, render_viewer, reward
        self.possible_agents = [f"player_{p}" for p in range(4)]
        self._seat = {agent: p for p, agent in enumerate(self.possible_agents)}
        obs_space = spaces.Dict({"observation": spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32),
                                 "action_mask": spaces.Box(0, 1, (R.NUM_ACTIONS,), np.int8)})
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {agent: spaces.Discrete(R.NUM_ACTIONS) for agent in self.possible_agents}
        self.state_row: np.ndarray | None = None
        self._mask = np.zeros(R.NUM_ACTIONS, np.bool_)

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new match; ``seed`` None draws one from the previous match's RNG (or fresh entropy)."""
        if options:
            warnings.warn(f"ignoring reset options {sorted(options)}; the env takes its options at construction",
                          stacklevel=2)
        if seed is None:
            seed = (int(R.random_below(self.state_row, 1 << 62)) if self.state_row is not None
                    else int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(2)))
        self.state_row = R.new_state(seed=seed, **self._options)
        R.legal_mask(self.state_row, self._mask)
        start_episode(self)
        self.agent_selection = self.possible_agents[int(self.state_row[R.CURRENT])]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Fresh arrays: ``agent``'s observation and its legal moves (all zeros unless it is to act)."""
        if agent not in self._seat:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        seat = self._seat[agent]
        to_act = seat == int(self.state_row[R.CURRENT]) and self.state_row[R.PHASE] != R.OVER
        mask = self._mask.astype(np.int8) if to_act else np.zeros(R.NUM_ACTIONS, np.int8)
        return {"observation": observe(self.state_row, seat), "action_mask": mask}

    def step(self, action: int) -> None:
        """Play ``action`` for ``agent_selection`` (``None`` once it is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if not R.checked_step(self.state_row, int(action), self._mask):
            raise IllegalActionError(f"{agent}: action {action} is not legal now "
                                     f"(legal: {np.flatnonzero(self._mask).tolist()})")
        self._clear_rewards()
        if self.state_row[R.PHASE] == R.OVER:
            for agent_name, reward in zip(self.possible_agents, end_rewards(self.state_row, self.reward_mode)):
                self.rewards[agent_name] = reward
                self.terminations[agent_name] = True
            self._accumulate_rewards()
        self.agent_selection = self.possible_agents[int(self.state_row[R.CURRENT])]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """``ansi``: the text of ``render_text``; ``human``: printed."""
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass render_mode=... to the env", stacklevel=2)
            return None
        if self.state_row is None:
            raise RuntimeError("call reset() before render()")
        text = render_text(self.state_row, self.render_viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""
