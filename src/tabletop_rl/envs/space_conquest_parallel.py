"""PettingZoo ``ParallelEnv`` for Space Conquest (simultaneous orders), and its AEC view.

Agents ``player_0`` and ``player_1`` act together each step (= one turn). An action is either the
RL ``MultiDiscrete`` vector of observe.py or JSON orders ``{"moves": [...]}`` (dict or text); bad JSON
moves are skipped and reported in the next step's ``infos[agent]["errors"]``. Observations are
``{"observation": float32[OBS_SIZE], "action_mask": int8[MASK_SIZE]}`` under fog of war: the mask is
the per-dimension masks concatenated (sb3-contrib MaskablePPO's form); the action space's ``sample``
takes it as it is, or gymnasium's tuple of per-dimension masks. Rewards are 0
until the end, then +1 / -1 (0 each for a draw); the end (a home taken, or the turn cap scored by RU
then ships) is a termination.

>>> env = space_conquest_env()
>>> obs, infos = env.reset(seed=1)
>>> actions = {a: env.action_space(a).sample() for a in env.agents}
>>> obs, rewards, terms, truncs, infos = env.step(actions)
>>> infos["player_0"]["turn"], sorted(obs["player_1"])
(2, ['action_mask', 'observation'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from numba import njit
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from tabletop_rl.core.text import quote
from tabletop_rl.envs.episode import check_choice, check_viewer, next_seed
from tabletop_rl.games.space_conquest import observe as O
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.actions import OrderCheck
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.render import render_text

__all__ = ["space_conquest_aec_env", "space_conquest_env"]

_RENDER_MODES = ("ansi", "human")
_AGENTS = ("player_0", "player_1")


def space_conquest_env(**kwargs: Any) -> ParallelEnv:
    """The parallel env (``max_turns``, ``loss_model``, ``render_mode``, ``render_viewer``: see ``_raw_env``)."""
    return _raw_env(**kwargs)


def space_conquest_aec_env(**kwargs: Any) -> AECEnv:
    """The same game as a PettingZoo AEC env (players act in turn; the turn resolves after the last), wrapped as
    PettingZoo's ``parallel_to_aec`` wraps it."""
    return OrderEnforcingWrapper(_AECView(_raw_env(**kwargs)))


@njit(cache=True)
def _step_core(state, log, orders, counts, action0, action1, use0, use1, obs, masks):
    """One env step inside numba: decode RL actions (``use*``; else ``orders`` already holds JSON
    moves), play the turn, and encode both observations."""
    if use0:
        O.decode_action(state, 0, action0, orders, counts)
    if use1:
        O.decode_action(state, 1, action1, orders, counts)
    R.advance(state, log, orders, counts)
    for p in range(R.NUM_PLAYERS):
        O.encode_into(state, p, obs[p], masks[p])


class _raw_env(ParallelEnv):
    """Space Conquest for two seats. ``max_turns`` (default 100), ``loss_model`` ``"flat"|"nlogn"``,
    ``render_mode`` ``"ansi"|"human"``, ``render_viewer`` None (referee: the whole truth) or a seat."""

    metadata = {"name": "space_conquest_v0", "render_modes": list(_RENDER_MODES), "is_parallelizable": True}

    def __init__(self, max_turns: int = R.DEFAULT_MAX_TURNS, loss_model: str = "flat",
                 render_mode: str | None = None, render_viewer: int | None = None) -> None:
        SpaceConquestGame(seed=0, max_turns=max_turns, loss_model=loss_model)  # checks the settings
        check_choice(render_mode, "render_mode", (None, *_RENDER_MODES))
        check_viewer(render_viewer, R.NUM_PLAYERS)
        self.max_turns, self.loss_model = max_turns, loss_model
        self.render_mode, self.render_viewer = render_mode, render_viewer
        self.possible_agents = list(_AGENTS)
        self.agents: list[str] = []
        mask_box = spaces.Box(0, 1, (O.MASK_SIZE,), np.int8)
        self.observation_spaces = {a: spaces.Dict({"observation": O.observation_box(), "action_mask": mask_box})
                                   for a in _AGENTS}
        self.action_spaces = {a: O.action_space() for a in _AGENTS}  # seeded by the caller, as gymnasium's
        self.game: SpaceConquestGame | None = None

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.MultiDiscrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """A new map from ``seed`` (None: one drawn from the previous game's own stream, as every env does);
        ``options`` may hold ``{"game": SpaceConquestGame or its JSON}`` to start from a saved game."""
        game_seed = next_seed(seed, self.game)
        saved = (options or {}).get("game")
        if saved is not None:
            self.game = saved.clone() if isinstance(saved, SpaceConquestGame) else SpaceConquestGame.from_json(saved)
            if self.game.is_over:
                raise ValueError("the saved game is already over")
        else:
            self.game = SpaceConquestGame(game_seed, self.max_turns, self.loss_model)
        self.agents = self.possible_agents[:]
        self._obs = np.zeros((2, O.OBS_SIZE), np.float32)
        self._masks = np.zeros((2, O.MASK_SIZE), np.int8)
        for p in range(2):
            O.encode_into(self.game.state, p, self._obs[p], self._masks[p])
        return self._observations(), {a: {"turn": self.game.turn, "errors": []} for a in _AGENTS}

    def _observations(self) -> dict[str, dict[str, Any]]:
        return {a: {"observation": self._obs[p].copy(), "action_mask": self._masks[p].copy()}
                for p, a in enumerate(_AGENTS)}

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Play one turn from both agents' actions (a missing agent gives no orders)."""
        game = self.game
        if game is None or not self.agents:
            raise ValueError("step() needs a running episode: call reset() first")
        if not isinstance(actions, Mapping):
            raise ValueError(f"actions must be a mapping of agent to action, got {type(actions).__name__}")
        unknown = [agent for agent in actions if agent not in _AGENTS]
        if unknown:
            raise ValueError(f"unknown agent(s) {quote(unknown)}; agents are {list(_AGENTS)}")
        answers = [_answer(game, p, actions.get(agent)) for p, agent in enumerate(_AGENTS)]  # before any write
        checks = [check for check, _ in answers]
        vectors = [_EMPTY if vector is None else vector for _, vector in answers]
        use = [vector is not None for _, vector in answers]
        for p, check in enumerate(checks):
            game._counts[p] = 0
            for j, move in enumerate(check.accepted if check is not None else ()):
                game._orders[p, j] = move
                game._counts[p] = j + 1
        _step_core(game.state, game.log, game._orders, game._counts, vectors[0], vectors[1], use[0], use[1],
                  self._obs, self._masks)
        game.record_orders()
        game.errors = [c.errors if c else [] for c in checks]
        over = game.is_over
        rewards = dict.fromkeys(_AGENTS, 0.0)
        if over and game.winner is not None:
            rewards[_AGENTS[game.winner]], rewards[_AGENTS[1 - game.winner]] = 1.0, -1.0
        observations = self._observations()
        infos = {a: {"turn": game.turn, "errors": game.errors[p]} for p, a in enumerate(_AGENTS)}
        if over:
            for a in _AGENTS:
                infos[a]["result"] = game.result()
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, dict.fromkeys(_AGENTS, over), dict.fromkeys(_AGENTS, False), infos

    def render(self) -> str | None:
        """The map and turn report of ``render_viewer`` (its fog of war), or the spectator's whole map (None)."""
        if self.render_mode is None or self.game is None:
            return None
        text = render_text(self.game, self.render_viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


_EMPTY = np.zeros(O.ACTION_NVEC.size, np.int64)


def _answer(game: SpaceConquestGame, player: int, action: Any) -> tuple[OrderCheck | None, np.ndarray | None]:
    """``player``'s action checked: JSON orders (None: no moves) as their ``OrderCheck``, else an RL vector
    (``observe.rl_action``, a ``ValueError`` for one that is not)."""
    if action is None or isinstance(action, (Mapping, str, bytes)):
        return game.check(player, action), None
    return None, O.rl_action(player, action)


class _AECView(parallel_to_aec_wrapper):
    """PettingZoo's AEC view of the parallel env, checking each action when it is given: PettingZoo's keeps it
    unchecked until the turn resolves, so a bad one would fail the last agent's step, which cannot mend it."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            _answer(self.env.game, _AGENTS.index(agent), action)
        super().step(action)
