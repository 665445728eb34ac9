"""Gymnasium single-agent Splendor: one learning seat, the other seats played by a fixed opponent.

>>> import gymnasium as gym, tabletop_rl
>>> env = gym.make("tabletop_rl/Splendor-v0", opponent="random", num_players=2, seat=0)
>>> obs, info = env.reset(seed=3)
>>> obs.dtype, info["action_mask"].dtype, env.unwrapped.action_masks().dtype
(dtype('float32'), dtype('int8'), dtype('bool'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from numba import njit

import tabletop_rl.agents as agents  # the module, so make_policy is looked up when an opponent is made
from tabletop_rl.envs.splendor_aec import (
    DENSE_POINT_SCALE,
    RENDER_MODES,
    check_choice,
    check_env_arguments,
    end_rewards,
    new_game,
    observation_box,
    render_game,
)
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import NUM_ACTIONS, to_action_id
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame
from tabletop_rl.games.splendor.observe import encode_into, observation_size

ENV_ID = "tabletop_rl/Splendor-v0"
ILLEGAL_MODES = ("raise", "penalize")
ILLEGAL_PENALTY = -1.0

#: An opponent: ``(observation float32[...], action_mask bool[72], info) -> action id``.
OpponentFn = Callable[[np.ndarray, np.ndarray, dict], int]


@njit(cache=True)
def play_random_until(state, seat, cards, nobles, mask):
    """Uniformly random moves (from the game's playout RNG) for every seat but ``seat`` until
    ``seat`` is to act or the game ends; ``mask`` is left as the legal mask of the player to act."""
    while state[R.STATUS] == R.PLAYING and state[R.CURRENT] != seat:
        R.random_step(state, cards, nobles, mask)
    R.legal_mask(state, cards, nobles, mask)


@njit(cache=True)
def step_vs_random(state, action, seat, cards, nobles, mask):
    """The learner's ``action`` then random opponents, in one call; False (nothing applied) if illegal."""
    if not R.checked_step(state, action, cards, nobles, mask):
        return False
    play_random_until(state, seat, cards, nobles, mask)
    return True


def register_envs() -> None:
    """Register ``"tabletop_rl/Splendor-v0"`` with gymnasium (safe to call twice); ``gym.make_vec`` of it
    gives the native ``SplendorVectorEnv`` (its vector entry point) unless another mode is asked for.

    >>> register_envs(); ENV_ID in gym.registry
    True
    """
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point=f"{__name__}:SplendorGymEnv",
                     vector_entry_point=f"{__package__}.splendor_vector:SplendorVectorEnv")


def _policy_from_spec(spec: str) -> Any:
    return agents.make_policy(spec, game="splendor")


def _opponent_act(opponent: Any) -> OpponentFn:
    if hasattr(opponent, "act"):
        return opponent.act
    if callable(opponent):
        return opponent
    raise ValueError(f"opponent must be a policy spec string, a policy with .act or a callable "
                     f"(observation, action_mask, info) -> int, got {opponent!r}")


class SplendorGymEnv(gym.Env):
    """Splendor from one seat: each ``step`` plays the learner's move and then the other seats' moves
    (sub-steps included) until the learner is to act again or the game ends.

    ``opponent``: ``"random"`` (played inside numba from the game's playout RNG), any other spec for
    ``tabletop_rl.agents.make_policy`` (one policy per seat), a policy object with
    ``act(observation, action_mask, info)``, or such a callable. ``seat``: ``"random"`` (drawn per
    episode from the game's seed) or a fixed index. ``illegal="raise"``: ``IllegalActionError``, env
    unchanged; ``"penalize"``: reward -1 and the episode terminates. ``reward``: as for ``raw_env``,
    from the learner's side. Rendering shows the learner's view.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(self, opponent: str | OpponentFn | Any = "random", num_players: int = 2,
                 seat: str | int = "random", max_plies: int | None = R.DEFAULT_MAX_PLIES,
                 illegal: str = "raise", reward: str = "sparse", render_mode: str | None = None) -> None:
        check_env_arguments(num_players, max_plies, render_mode, reward)
        check_choice(illegal, "illegal", ILLEGAL_MODES)
        if seat != "random" and (isinstance(seat, bool) or seat not in range(num_players)):
            raise ValueError(f"seat must be 'random' or a seat 0..{num_players - 1}, got {seat!r}")
        self.num_players, self.max_plies, self.seat_option = num_players, max_plies, seat
        self.illegal, self.reward_mode, self.render_mode = illegal, reward, render_mode
        self.observation_space = observation_box(num_players)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self._random_opponent = opponent == "random"
        self._policies = self._make_policies(opponent)
        self._cards, self._nobles = R.tables()
        self._obs_size = observation_size(num_players)
        self.game: SplendorGame | None = None
        self.seat = 0
        self._done = True

    def _make_policies(self, opponent: Any) -> list[Any]:
        if self._random_opponent:
            return []
        if isinstance(opponent, str):
            return [_policy_from_spec(opponent) for _ in range(self.num_players)]
        _opponent_act(opponent)
        return [opponent] * self.num_players

    # --- gymnasium API ----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a game (or load ``options["position"]``) and play the opponents up to the learner's turn."""
        super().reset(seed=seed)
        self._done = True  # until this reset has succeeded
        self.game = new_game(self.num_players, self.max_plies, seed, self.game, options)
        self._state, self._mask = self.game.state, self.game._mask  # the game keeps its mask current
        # the seat comes first from the playout RNG, as in the vector env, so both deal alike
        self.seat = int(R.random_below(self._state, self.num_players)) if self.seat_option == "random" \
            else int(self.seat_option)
        for policy in {id(p): p for p in self._policies}.values():
            if hasattr(policy, "reset"):
                policy.reset(int(self.np_random.integers(1 << 62)))
        self._play_opponents()
        if self.game.is_over:
            raise ValueError(f"the game ended before seat {self.seat} could act (position at its end or "
                             f"max_plies too small)")
        self._done = False
        if self.render_mode == "human":
            self.render()
        return self._observation(), {"action_mask": self._mask.astype(np.int8)}

    def step(self, action: int | str) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's move (id, numpy integer or name), then the opponents' moves."""
        if self._done:
            raise RuntimeError("the episode is over (or never began): call reset() before step()")
        a = action if type(action) is int else to_action_id(action)
        state = self._state
        points = R.PLAYERS + self.seat * R.P_SIZE + R.P_POINTS
        before = int(state[points])
        if self._random_opponent:
            legal = step_vs_random(state, a, self.seat, self._cards, self._nobles, self._mask)
        else:
            legal = R.checked_step(state, a, self._cards, self._nobles, self._mask)
            if legal:
                self._play_opponents()
        if not legal:
            return self._illegal(a)
        reward = (int(state[points]) - before) / DENSE_POINT_SCALE if self.reward_mode == "dense" else 0.0
        status = int(state[R.STATUS])
        if status != R.PLAYING:
            reward += end_rewards(self.game)[self.seat]
            self._done = True
        if self.render_mode == "human":
            self.render()
        return (self._observation(), reward, status == R.OVER, status == R.TRUNCATED,
                {"action_mask": self._mask.astype(np.int8)})

    def action_masks(self) -> np.ndarray:
        """``bool[72]``: the learner's legal moves now (what sb3-contrib's MaskablePPO asks for)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        return render_game(self.game, self.render_mode, self.seat)

    # --- internals ----------------------------------------------------------------------------
    def _observation(self, seat: int | None = None) -> np.ndarray:
        obs = np.empty(self._obs_size, np.float32)
        encode_into(self._state, self.seat if seat is None else seat, self._cards, self._nobles, obs)
        return obs

    def _illegal(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.illegal == "raise":
            raise IllegalActionError(self.game.explain_illegal(action))
        self._done = True
        return (self._observation(), ILLEGAL_PENALTY, True, False,
                {"action_mask": self._mask.astype(np.int8), "illegal_action": int(action)})

    def _play_opponents(self) -> None:
        state = self._state
        if self._random_opponent:
            play_random_until(state, self.seat, self._cards, self._nobles, self._mask)
            return
        while state[R.STATUS] == R.PLAYING and state[R.CURRENT] != self.seat:
            self._opponent_move(int(state[R.CURRENT]))

    def _opponent_move(self, p: int) -> None:
        """One move by the policy at seat ``p``; ``info["game"]`` is a copy determinised for ``p``."""
        game = self.game
        info = {"player": p, "game": game.determinize(p, int(self.np_random.integers(1 << 62)))}
        choice = _opponent_act(self._policies[p])(self._observation(p), self._mask.copy(), info)
        try:
            game.step(to_action_id(choice))
        except ValueError as e:
            reason = e.reason if isinstance(e, IllegalActionError) else str(e)
            raise IllegalActionError(f"the opponent chose an illegal move: {reason}", game="splendor", seat=p) from None
