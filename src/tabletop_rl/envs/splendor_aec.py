"""PettingZoo AEC environment for Splendor: ``splendor_env()`` (wrapped) and ``raw_env`` (raises on errors).

Agents are ``player_0 .. player_{n-1}``; each observation is ``{"observation": float32[...],
"action_mask": int8[72]}`` from the observer's own seat (docs/observations.md). Sub-steps (returning
tokens, choosing a noble) are further steps of the same agent.

>>> env = splendor_env(num_players=2)
>>> env.reset(seed=1)
>>> obs, reward, terminated, truncated, info = env.last()
>>> obs["action_mask"].dtype, obs["observation"].shape, env.agent_selection
(dtype('int8'), (312,), 'player_0')
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tabletop_rl.envs.episode import start_episode
from tabletop_rl.games.splendor import picture, render
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import NUM_ACTIONS, to_action_id
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame
from tabletop_rl.games.splendor.observe import encode_into, observation_box, observation_size

RENDER_MODES = ("ansi", "human", "rgb_array")
REWARD_MODES = ("sparse", "dense")
DENSE_POINT_SCALE = 15.0  # dense shaping: own points gained / 15 (the winning threshold)
_NEXT_SEED_BOUND = 1 << 62  # same bound the vector env uses when it deals its next game


def splendor_env(num_players: int = 2, render_mode: str | None = None,
                 max_plies: int | None = R.DEFAULT_MAX_PLIES, **options: Any) -> AECEnv:
    """The AEC env in PettingZoo's classic wrappers: an illegal move ends the game with -1 for the mover.

    ``options``: ``reward="sparse"|"dense"``, ``render_viewer=None|seat`` (see ``raw_env``).

    >>> splendor_env(3).possible_agents
    ['player_0', 'player_1', 'player_2']
    """
    env = raw_env(num_players=num_players, render_mode=render_mode, max_plies=max_plies, **options)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def end_rewards(game: SplendorGame) -> list[float]:
    """Zero-sum end rewards per seat: winners share +1, losers share -1; all 0 when everyone won,
    while playing, and after a truncation.

    >>> g = SplendorGame(3, seed=0); end_rewards(g)
    [0.0, 0.0, 0.0]
    """
    return [float(R.end_reward(game.state, p)) for p in range(game.num_players)]


def check_choice(value: Any, name: str, choices: tuple) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def check_env_arguments(num_players: int, max_plies: int | None, render_mode: str | None,
                        reward: str) -> None:
    """``ValueError`` naming the first bad constructor argument shared by the Splendor envs."""
    SplendorGame(num_players, seed=0, max_plies=max_plies)  # checks num_players and max_plies
    check_choice(render_mode, "render_mode", (None, *RENDER_MODES))
    check_choice(reward, "reward", REWARD_MODES)


def load_position(position: dict | str, num_players: int, seed: int) -> SplendorGame:
    """A game from a JSON position (dict or text) for an env of ``num_players``; ``seed`` seeds its
    playout RNG. ``ValueError`` for a wrong player count or a finished position."""
    game = SplendorGame.from_json(position)
    if game.num_players != num_players:
        raise ValueError(f"position has {game.num_players} players but the env was made for {num_players}")
    if game.is_over:
        raise ValueError("position is already finished; an episode must start from a position still in play")
    R.seed_rng(game.state, seed)
    return game


def next_seed(seed: int | None, previous: SplendorGame | None) -> int:
    """The game seed of a new episode: ``seed`` itself when given (``reset(seed=s)`` deals
    ``SplendorGame(seed=s)``), else one drawn from the previous game's playout RNG (as the vector
    env's autoreset does), or from fresh entropy before any game.

    >>> next_seed(7, None)
    7
    """
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        return int(seed) & ((1 << 63) - 1)  # as SplendorGame folds large seeds
    if previous is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(2))
    return int(R.random_below(previous.state, _NEXT_SEED_BOUND))


def new_game(num_players: int, max_plies: int | None, seed: int | None, previous: SplendorGame | None,
             options: dict | None) -> SplendorGame:
    """The game an episode starts with: from ``options["position"]`` if given, else freshly dealt.

    Other option keys are ignored with a warning (PettingZoo's api_test passes unknown options).
    """
    game_seed = next_seed(seed, previous)
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict such as {{'position': ...}} or None, got {options!r}")
    unknown = sorted(set(options) - {"position"})
    if unknown:
        warnings.warn(f"ignoring unknown reset option(s) {unknown}; the only option is 'position'",
                      stacklevel=3)
    if options.get("position") is not None:
        return load_position(options["position"], num_players, game_seed)
    return SplendorGame(num_players, seed=game_seed, max_plies=max_plies)


def render_game(game: SplendorGame, mode: str | None, viewer: int | None) -> str | np.ndarray | None:
    """Draw ``game`` for ``viewer`` (``None``: a spectator, who sees no hidden card) in ``mode``."""
    if mode is None:
        warnings.warn("render() called without a render_mode; pass render_mode=... to the env", stacklevel=3)
        return None
    if mode == "rgb_array":
        return picture.render_rgb(game, viewer)
    text = render.render_ansi(game, viewer)
    if mode == "human":
        print(text)
        return None
    return text


def _check_viewer(viewer: int | None, num_players: int) -> None:
    if viewer is not None and (isinstance(viewer, bool) or viewer not in range(num_players)):
        raise ValueError(f"render_viewer must be None or a seat 0..{num_players - 1}, got {viewer!r}")


class raw_env(AECEnv):
    """Splendor for 2-4 players as a PettingZoo ``AECEnv`` that raises on misuse.

    ``step`` with an illegal action raises ``IllegalActionError`` and leaves the env untouched.
    ``reward="sparse"``: only the zero-sum end reward (``end_rewards``); ``reward="dense"`` adds, on
    every step, the acting player's points gained in that step / 15. ``render_viewer``: ``None`` renders
    a spectator's view (no hidden card), a seat index renders what that seat sees.
    ``reset(seed, options={"position": <JSON position>})`` starts from a position (its own ``max_plies``).
    """

    metadata = {"name": "splendor_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, num_players: int = 2, render_mode: str | None = None,
                 max_plies: int | None = R.DEFAULT_MAX_PLIES, reward: str = "sparse",
                 render_viewer: int | None = None) -> None:
        super().__init__()
        check_env_arguments(num_players, max_plies, render_mode, reward)
        _check_viewer(render_viewer, num_players)
        self.num_players = num_players
        self.render_mode = render_mode
        self.render_viewer = render_viewer
        self.max_plies = max_plies
        self.reward_mode = reward
        self._dense = reward == "dense"
        self.possible_agents = [f"player_{p}" for p in range(num_players)]
        self._seat = {agent: p for p, agent in enumerate(self.possible_agents)}
        self.observation_spaces = {
            agent: spaces.Dict({"observation": observation_box(num_players),
                                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self._obs_size = observation_size(num_players)
        self._cards, self._nobles = R.tables()
        self.game: SplendorGame | None = None

    # --- spaces ---------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # --- episode --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a game (``seed`` None: see ``next_seed``) or load ``options["position"]``."""
        self.game = new_game(self.num_players, self.max_plies, seed, self.game, options)
        self._state, self._mask = self.game.state, self.game._mask  # the game keeps its mask current
        start_episode(self)
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Fresh arrays: ``agent``'s observation and its legal moves (all zeros unless it is to act)."""
        try:
            seat = self._seat[agent]
        except KeyError:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}") from None
        obs = np.empty(self._obs_size, np.float32)
        encode_into(self._state, seat, self._cards, self._nobles, obs)
        if seat == self._state[R.CURRENT]:
            mask = self._mask.astype(np.int8)  # all zeros once the game is over
        else:
            mask = np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | str) -> None:
        """Play ``action`` (id, numpy integer or name) for ``agent_selection``; ``None`` once it is done."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = action if type(action) is int else to_action_id(action)
        state = self._state
        points = R.PLAYERS + self._seat[agent] * R.P_SIZE + R.P_POINTS
        before = int(state[points]) if self._dense else 0
        if not R.checked_step(state, a, self._cards, self._nobles, self._mask):
            raise IllegalActionError(f"{agent}: {self.game.explain_illegal(a)}")
        if self._dense:
            self._shape_reward(agent, (int(state[points]) - before) / DENSE_POINT_SCALE)
        if state[R.STATUS] != R.PLAYING:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[state[R.CURRENT]]
        if self.render_mode == "human":
            self.render()

    def _shape_reward(self, agent: str, gained: float) -> None:
        self._clear_rewards()
        self._cumulative_rewards[agent] = 0.0
        self.rewards[agent] = gained
        self._accumulate_rewards()

    def _finish(self) -> None:
        """Hand out end rewards and mark every agent terminated (rules) or truncated (ply cap)."""
        truncated = self.game.is_truncated
        for agent, reward in zip(self.possible_agents, end_rewards(self.game), strict=True):
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
        return render_game(self.game, self.render_mode, self.render_viewer)

    def close(self) -> None:
        """Nothing to release: rendering holds no window or file."""

    def __str__(self) -> str:
        return self.metadata["name"]
