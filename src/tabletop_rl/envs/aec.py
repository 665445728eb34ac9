"""PettingZoo AEC envs for the turn-based games: one env class (``TabletopAEC``) over the game contract.

``splendor_env()`` and ``klaverjas_env()`` are that env in PettingZoo's classic wrappers (an illegal move ends
the game with -1 for the mover; subclasses of PettingZoo's that read the base env's per-step fields directly,
docs/observations.md); ``TabletopAEC`` itself raises ``IllegalActionError`` and changes nothing. Both raise a
one-line ``ValueError``, changing nothing, for a value that is no action id (negative, out of range, not an integer).
Agents are ``player_0 .. player_{n-1}``, one per seat; each observation is ``{"observation": float32[...],
"action_mask": int8[num_actions]}`` from the observer's own seat, all-zero masks for seats not to act.
Sub-steps (Splendor's token returns and noble choice, Klaverjas's bidding) are further steps of the agent
to act. Rewards (``reward=``): ``"win"``, the zero-sum end reward of each seat; ``"score"``, the game's
score (Splendor: prestige points gained / 15 on every step, then the end reward; Klaverjas: the match-score
difference / (162 x deals) at the end). The older names ``sparse``, ``dense`` and ``points`` still work.

>>> env = splendor_env(num_players=2)
>>> env.reset(seed=1)
>>> obs, reward, terminated, truncated, info = env.last()
>>> obs["action_mask"].dtype, obs["observation"].shape, env.agent_selection
(dtype('int8'), (312,), 'player_0')
>>> klaverjas_env().possible_agents
['player_0', 'player_1', 'player_2', 'player_3']
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tabletop_rl.core.text import as_index, quote
from tabletop_rl.envs.episode import (
    GAME_DEFAULT,
    MASK_DTYPE,
    Episodes,
    check_choice,
    check_viewer,
    render_text,
    reward_mode,
    start_episode,
)
from tabletop_rl.games.splendor.rules import DEFAULT_MAX_PLIES

__all__ = ["TabletopAEC", "klaverjas_env", "splendor_env"]



class _Actions(spaces.Discrete):
    """``Discrete(n)`` that answers an in-range ``int`` at once: PettingZoo's ``AssertOutOfBoundsWrapper`` asks on
    every step, and Gymnasium's ``contains`` converts it to a numpy integer first (a tenth of a wrapped step).
    Every other value gets Gymnasium's answer."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._stop = int(n)  # a Python int: comparing with the numpy ``n`` each step costs more than the rest

    def contains(self, x: Any) -> bool:
        if type(x) is int and 0 <= x < self._stop:
            return True
        return super().contains(x)


class TabletopAEC(AECEnv):
    """The AEC env of any turn-based game (``game``: ``"splendor"``, ``"klaverjas"``) that raises on misuse.

    ``num_players``: players of the game (Klaverjas: 2 partnerships, 4 seats). ``max_plies``: the ply cap
    (``truncated`` when reached). ``reward``: ``"win"`` or ``"score"`` (module docstring).
    ``render_viewer``: ``None`` renders a spectator's view (the game's docs say what a spectator sees), a seat
    only what that seat may know.
    ``options``: the game's own options (Klaverjas: the match options of ``rules.options_row``).
    ``reset(seed, options={"position": <JSON position>})`` starts from a position.
    """

    def __init__(self, game: str, num_players: int = 2, render_mode: str | None = None,
                 max_plies: int | None = GAME_DEFAULT, reward: str = "win", render_viewer: int | None = None,
                 **options: Any) -> None:
        super().__init__()
        self._episodes = Episodes.of(game, num_players, max_plies, options)
        self.game_class, self.max_plies = self._episodes.game_class, self._episodes.max_plies
        check_choice(render_mode, "render_mode", (None, *self.game_class.render_modes))
        self.reward_mode = reward_mode(reward, self.game_class.reward_modes)
        check_viewer(render_viewer, self._episodes.num_seats)
        self.num_players, self.render_mode, self.render_viewer = num_players, render_mode, render_viewer
        self._scale = self.game_class.score_scale if self.reward_mode == "score" else None
        self.metadata = {"name": f"{game}_v0", "render_modes": list(self.game_class.render_modes),
                         "is_parallelizable": False, "render_fps": 2}
        self.possible_agents = [f"player_{s}" for s in range(self._episodes.num_seats)]
        self._seat = {agent: s for s, agent in enumerate(self.possible_agents)}
        space = spaces.Dict({"observation": self.game_class.observation_space(num_players),
                             "action_mask": spaces.Box(0, 1, (self.game_class.num_actions,), np.int8)})
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces: dict[str, spaces.Discrete] = {
            agent: _Actions(self.game_class.num_actions) for agent in self.possible_agents}
        self.game: Any = None
        self._ready: tuple[int, np.ndarray, np.ndarray] | None = None  # (seat, observation, mask) of step's call

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # --- episode --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a game (``seed`` None: one drawn from the previous game) or load ``options["position"]``."""
        self.game = self._episodes.deal(seed, self.game, options)
        self._ready = None
        start_episode(self)
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Fresh arrays: ``agent``'s observation and its legal moves (all zeros unless it is to act)."""
        try:
            seat = self._seat[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {quote(agent)}; agents are {self.possible_agents}") from None
        ready = self._ready
        if ready is not None and ready[0] == seat:
            self._ready = None  # handed out once, so every call still gets fresh arrays
            return {"observation": ready[1], "action_mask": ready[2]}
        return {"observation": self.game.observe(seat), "action_mask": self.game.seat_mask(seat, MASK_DTYPE)}

    def step(self, action: int | str) -> None:
        """Play ``action`` (id, numpy integer or name) for ``agent_selection``; ``None`` once it is done."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game  # an illegal move raises with the game unchanged, so a view made ready stays right
        if self._scale is not None:
            player = game.player_of(self._seat[agent])
            before = game.scores[player]
            ready = game.step_observe(action, MASK_DTYPE)
            self._clear_rewards()
            self._cumulative_rewards[agent] = 0.0
            self.rewards[agent] = (game.scores[player] - before) / self._scale
            self._accumulate_rewards()
        else:
            ready = game.step_observe(action, MASK_DTYPE)
        # the game wrote the next seat's observation in the same call as the move; last() hands it out
        seat = game.current_player
        self._ready = (seat, *ready)
        if game.is_over:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[seat]
        if self.render_mode == "human":
            self.render()

    def _finish(self) -> None:
        """Hand out end rewards and mark every agent terminated (rules) or truncated (ply cap)."""
        truncated = self.game.is_truncated
        for agent, reward in zip(self.possible_agents, self.game.end_rewards(self.reward_mode), strict=True):
            self.rewards[agent] += reward
            self._cumulative_rewards[agent] += reward
            self.terminations[agent] = not truncated
            self.truncations[agent] = truncated
        self.agent_selection = self.possible_agents[self.game.current_player]

    # --- rendering ------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        """``ansi``: text; ``human``: the text printed; ``rgb_array``: an image, for ``render_viewer``."""
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        return render_text(self.game, self.render_mode, self.render_viewer)

    def close(self) -> None:
        """Nothing to release: rendering holds no window or file."""

    def __str__(self) -> str:
        return str(self.metadata["name"])


def _base_field(name: str) -> property:
    """``name`` read from the base env in one C-level step (``attrgetter``), written to it."""
    def write(self: Any, value: Any) -> None:
        setattr(self.env.unwrapped, name, value)

    return property(attrgetter(f"_base.{name}"), write)


class _BaseFields:
    """The per-step fields read from the base env (``_base``) directly: a mixin for PettingZoo's wrappers.

    The base env holds these fields, and every wrapper reads them each step. A PettingZoo wrapper finds each one by
    asking the wrapper below it (``__getattr__``), level by level: most of a wrapped step's time."""

    agents = _base_field("agents")
    agent_selection = _base_field("agent_selection")
    rewards = _base_field("rewards")
    _cumulative_rewards = _base_field("_cumulative_rewards")
    terminations = _base_field("terminations")
    truncations = _base_field("truncations")
    infos = _base_field("infos")


class _TerminateIllegal(_BaseFields, wrappers.TerminateIllegalWrapper):
    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward)
        self._base = env.unwrapped


class _AssertInBounds(_BaseFields, wrappers.AssertOutOfBoundsWrapper):
    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._base = env.unwrapped

    def step(self, action: Any) -> None:
        """PettingZoo's check, first with a ``ValueError`` naming an action that is no id of the space: PettingZoo
        asserts with no value named, Gymnasium's ``Discrete`` overflows on an int past int64, and the illegal-move
        wrapper below would read ``True`` as a mask. A done agent's ``None`` goes on to PettingZoo's dead step."""
        agent = self.agent_selection
        if action is not None or not (self.terminations[agent] or self.truncations[agent]):
            as_index(action, "action id", self.action_space(agent).n)
        super().step(action)


class _OrderEnforcing(_BaseFields, wrappers.OrderEnforcingWrapper):
    """It refuses the per-step fields before ``reset``, so it learns its base env there: until then a read fails
    over to PettingZoo's ``__getattr__``, which says so."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._base = self.env.unwrapped
        super().reset(seed=seed, options=options)

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's names its env


def _classic(env: AECEnv) -> AECEnv:
    """``env`` in PettingZoo's classic wrappers (subclasses that read the base env's per-step fields directly,
    with the same checks, messages and order): an illegal move ends the game with -1 for the mover."""
    return _OrderEnforcing(_AssertInBounds(_TerminateIllegal(env, -1)))


def splendor_env(num_players: int = 2, render_mode: str | None = None, max_plies: int | None = DEFAULT_MAX_PLIES,
                 **options: Any) -> AECEnv:
    """Splendor for 2-4 players; ``options``: ``reward="win"|"score"``, ``render_viewer=None|seat``.

    >>> splendor_env(3).possible_agents
    ['player_0', 'player_1', 'player_2']
    """
    return _classic(TabletopAEC("splendor", num_players, render_mode, max_plies, **options))


def klaverjas_env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """Four-seat Klaverjas; ``options``: ``reward="win"|"score"``, ``render_viewer``, and the match options
    of ``games.klaverjas.rules.options_row`` (``deals`` or ``target``, ``rules``, ``trump_selection``,
    ``all_pass``, ``first_lead``, ``pit_for_defenders``, ``kraken``, ``quartet_values``, ``stuk_mode``,
    ``amsterdam_undertrump_vs_opponent``).

    >>> klaverjas_env(rules="amsterdam").metadata["name"]
    'klaverjas_v0'
    """
    return _classic(TabletopAEC("klaverjas", 2, render_mode, **options))
