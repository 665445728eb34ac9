"""Gymnasium single-agent envs for the turn-based games: one learning seat, the other seats played by an
opponent policy. One env class (``TabletopGymEnv``) over the game contract serves every game;
``SplendorGymEnv`` and ``KlaverjasGymEnv`` name the game for you.

``gymnasium.make("tabletop_rl/Splendor-v0")`` and ``gymnasium.make("tabletop_rl/Klaverjas-v0")`` work after
``import tabletop_rl``; ``gymnasium.make_vec("tabletop_rl/Splendor-v0", n)`` gives the native
``SplendorVectorEnv``.

>>> import gymnasium as gym, tabletop_rl
>>> env = gym.make("tabletop_rl/Splendor-v0", opponent="random", num_players=2, seat=0)
>>> obs, info = env.reset(seed=3)
>>> obs.dtype, info["action_mask"].dtype, env.unwrapped.action_masks().dtype
(dtype('float32'), dtype('int8'), dtype('bool'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding

import tabletop_rl.agents as agents
from tabletop_rl.core.game import IllegalActionError
from tabletop_rl.core.text import as_index, quote
from tabletop_rl.envs.episode import (
    GAME_DEFAULT,
    MASK_DTYPE,
    Episodes,
    check_choice,
    check_seat,
    render_text,
    reward_mode,
)
from tabletop_rl.games import entries, entry
from tabletop_rl.games.splendor.rules import DEFAULT_MAX_PLIES

__all__ = ["ENV_ID", "KlaverjasGymEnv", "SplendorGymEnv", "TabletopGymEnv", "register_envs"]

_ILLEGAL_MODES = ("raise", "penalize")
_ILLEGAL_PENALTY = -1.0
#: Splendor's id: ``gymnasium.make(ENV_ID)`` gives ``SplendorGymEnv``.
ENV_ID = cast(str, entry("splendor").env_id)

#: An opponent: ``(observation float32[...], action_mask bool[...], info) -> action id``.
_OpponentFn = Callable[[np.ndarray, np.ndarray, dict], int]


def register_envs() -> None:
    """Register with gymnasium the env of each game whose record names one (``GameEntry.env_id``, ``gym_env``);
    safe to call twice. ``gym.make_vec`` of Splendor-v0 gives the native ``SplendorVectorEnv`` (its record's
    ``gym_vector_env``) unless another mode is asked for.

    >>> register_envs(); ENV_ID in gym.registry
    True
    """
    for record in entries():
        if record.env_id is not None and record.gym_env is not None and record.env_id not in gym.registry:
            gym.register(id=record.env_id, entry_point=record.gym_env, vector_entry_point=record.gym_vector_env)


def _opponent_act(opponent: Any) -> _OpponentFn:
    if hasattr(opponent, "act"):
        act: _OpponentFn = opponent.act
        return act
    if callable(opponent):
        return opponent
    raise ValueError(f"opponent must be a policy spec string, a policy with .act or a callable "
                     f"(observation, action_mask, info) -> int, got {quote(opponent)}")


class TabletopGymEnv(gym.Env):
    """One seat of a turn-based game: each ``step`` plays the learner's move and then the other seats' moves
    (sub-steps included) until the learner is to act again or the game ends.

    ``opponent``: ``"random"`` (uniform legal moves from the game's own random stream, inside the game's core
    where it has a fast path), any other policy spec of the game (one policy per seat), a policy object with
    ``act(observation, action_mask, info)``, or such a callable. ``seat``: ``"random"`` (drawn per episode from
    the game's own stream) or a fixed seat. ``illegal="penalize"`` (the default, so Gymnasium's and SB3's
    ``check_env`` pass as they step unmasked random actions): reward -1 and the episode terminates, with
    ``info["illegal_action"]``; ``"raise"``: ``IllegalActionError``, env unchanged; either way an id outside the
    action space (or a value that is no integer nor move name) is a one-line ``ValueError``. ``reward``: ``"win"`` or
    ``"score"`` (as for the AEC env), from the learner's side. Rendering shows the learner's view. The last
    step's ``info`` carries the game's ``scores`` and ``winners``.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 2}

    def __init__(self, game: str, opponent: str | _OpponentFn | Any = "random", num_players: int = 2,
                 seat: str | int = "random", max_plies: int | None = GAME_DEFAULT, illegal: str = "penalize",
                 reward: str = "win", render_mode: str | None = None, **options: Any) -> None:
        self._episodes = Episodes.of(game, num_players, max_plies, options)
        self.game_class, self.max_plies = self._episodes.game_class, self._episodes.max_plies
        self.metadata = {**self.metadata, "render_modes": list(self.game_class.render_modes)}
        check_choice(render_mode, "render_mode", (None, *self.game_class.render_modes))
        check_choice(illegal, "illegal", _ILLEGAL_MODES)
        check_seat(seat, self._episodes.num_seats, other="random")
        self.num_players, self.num_seats, self.seat_option = num_players, self._episodes.num_seats, seat
        self.illegal, self.reward_mode, self.render_mode = illegal, reward_mode(reward, self.game_class.reward_modes), \
            render_mode
        self._scale = self.game_class.score_scale if self.reward_mode == "score" else None
        self.observation_space = self.game_class.observation_space(num_players)
        self.action_space = gym.spaces.Discrete(self.game_class.num_actions)
        self._random_opponent = isinstance(opponent, str) and opponent == "random"
        self._policies = self._make_policies(game, opponent)
        self.game: Any = None
        self.seat = 0
        self._done = True

    # Gymnasium's reset(seed=s) makes np_random from s at once: 8 us, a fifth of a game against random. Here it is
    # made from s when first read (the policy opponents' seeds, a caller, the env checker), the same generator.
    _rng: np.random.Generator | None = None
    _pending_seed: int | None = None

    @property
    def _np_random(self) -> np.random.Generator | None:
        if self._pending_seed is not None:
            self._rng, self._np_random_seed = seeding.np_random(self._pending_seed)
            self._pending_seed = None
        return self._rng

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        self._rng, self._pending_seed = value, None

    def _make_policies(self, game: str, opponent: Any) -> list[Any]:
        if self._random_opponent:
            return []
        if isinstance(opponent, str):
            return [agents.make_policy(opponent, game=game) for _ in range(self.num_seats)]
        _opponent_act(opponent)
        return [opponent] * self.num_seats

    # --- gymnasium API ----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a game (or load ``options["position"]``) and play the opponents up to the learner's turn."""
        self._done = True  # until this reset has succeeded
        self.game = self._episodes.deal(seed, self.game, options)  # checks the seed
        if seed is not None:  # np_random is made from it when first read (_np_random)
            self._np_random_seed = self._pending_seed = int(seed)
        # the seat comes first from the game's own stream, as in the vector env, so both deal alike
        self.seat = self.game.random_below(self.num_seats) if self.seat_option == "random" else int(self.seat_option)
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
        return self.game.observe(self.seat), {"action_mask": self.game.seat_mask(self.seat, MASK_DTYPE)}

    def step(self, action: int | str) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's move (id, numpy integer or name), then the opponents' moves."""
        if self._done:
            raise RuntimeError("the episode is over (or never began): call reset() before step()")
        if not isinstance(action, str):  # an id outside the space is the caller's mistake, never a move to penalize
            as_index(action, "action id", self.game_class.num_actions)
        game, seat, scale = self.game, self.seat, self._scale
        if scale is not None:
            player = game.player_of(seat)
            before = game.scores[player]
        seen = game.step_vs_random_observe(action, seat, MASK_DTYPE) if self._random_opponent \
            else self._step_learner(action)
        if seen is None:
            return self._illegal(action)
        reward = 0.0 if scale is None else (game.scores[player] - before) / scale
        info: dict[str, Any] = {"action_mask": seen[1]}
        terminated = truncated = False
        if game.is_over:
            truncated = game.is_truncated
            terminated = not truncated
            reward += game.end_rewards(self.reward_mode)[seat]
            info.update(scores=game.scores, winners=game.winners)
            self._done = True
        if self.render_mode == "human":
            self.render()
        return seen[0], reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal moves now, as ``bool`` (what sb3-contrib's MaskablePPO asks for)."""
        mask: np.ndarray = self.game.seat_mask(self.seat)
        return mask

    def render(self) -> Any:  # str (ansi) or an RGB array; gymnasium's own annotation differs between versions
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        return render_text(self.game, self.render_mode, self.seat)

    # --- internals ----------------------------------------------------------------------------
    def _step_learner(self, action: int | str) -> tuple[np.ndarray, np.ndarray] | None:
        """The learner's move then the opponents' (policies), and the learner's observation and mask; None,
        with nothing played, when the move is illegal."""
        try:
            self.game.step(action)
        except IllegalActionError:
            return None
        self._play_opponents()
        return self.game.observe(self.seat), self.game.seat_mask(self.seat, MASK_DTYPE)

    def _illegal(self, action: int | str) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.illegal == "raise":
            self.game.step(action)  # raises the game's own IllegalActionError, with the reason
        self._done = True
        return (self.game.observe(self.seat), _ILLEGAL_PENALTY, True, False,
                {"action_mask": self.game.seat_mask(self.seat, MASK_DTYPE), "illegal_action": action})

    def _play_opponents(self) -> None:
        """The other seats play until the learner is to act or the game ends (the loop every game shares)."""
        game = self.game
        if self._random_opponent:
            game.play_random_until(self.seat)
            return
        while not game.is_over and game.current_player != self.seat:
            seat = game.current_player
            act = _opponent_act(self._policies[seat])
            choice = act(game.observe(seat), game.seat_mask(seat), game.policy_info(seat))
            try:
                game.step(choice)
            except ValueError as e:
                reason = e.reason if isinstance(e, IllegalActionError) else str(e)
                raise IllegalActionError(f"the opponent chose an illegal move: {reason}", game=game.name,
                                         seat=seat) from None


class SplendorGymEnv(TabletopGymEnv):
    """Splendor from one seat (``TabletopGymEnv`` with the game named).

    ``reward``: ``"win"`` (also ``"sparse"``), or ``"score"`` (also ``"dense"``): prestige points gained / 15
    on every step, then the end reward.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(self, opponent: str | _OpponentFn | Any = "random", num_players: int = 2,
                 seat: str | int = "random", max_plies: int | None = DEFAULT_MAX_PLIES, illegal: str = "penalize",
                 reward: str = "win", render_mode: str | None = None) -> None:
        super().__init__("splendor", opponent, num_players, seat, max_plies, illegal, reward, render_mode)


class KlaverjasGymEnv(TabletopGymEnv):
    """One Klaverjas seat against three opponent seats (its partner included; ``TabletopGymEnv`` with the game
    named); ``options``: the match options of ``games.klaverjas.rules.options_row``.

    >>> env = KlaverjasGymEnv(opponent="heuristic", seat=0)
    >>> obs, info = env.reset(seed=1); obs.shape, int(info["action_mask"].sum()) > 0
    ((338,), True)
    """

    def __init__(self, opponent: str | _OpponentFn | Any = "random", seat: str | int = "random",
                 illegal: str = "penalize", reward: str = "win", render_mode: str | None = None,
                 **options: Any) -> None:
        super().__init__("klaverjas", opponent, 2, seat, None, illegal, reward, render_mode, **options)
