"""SplendorVectorEnv: many games stepped inside numba, one learning seat per game.

A native ``gymnasium.vector.VectorEnv`` (autoreset in the same step, gymnasium's ``SAME_STEP`` mode).
Each ``step`` applies the learner's actions, then plays the other seats inside numba (``random`` or
``greedy``) or through a batched Python hook, then writes observations and masks into preallocated
arrays. ``to_sb3()`` adapts it to stable-baselines3's ``VecEnv`` for MaskablePPO.

>>> env = SplendorVectorEnv(num_envs=4, opponent="random")
>>> obs, info = env.reset(seed=0)
>>> obs.shape, info["action_mask"].shape
((4, 312), (4, 72))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from numba import njit, prange

from tabletop_rl.core.parallel_choice import ParallelChoice
from tabletop_rl.core.text import quote
from tabletop_rl.envs.episode import check_seat, load_position, reward_mode
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.baselines import DEFAULT_GREEDY_WEIGHTS, greedy_action
from tabletop_rl.games.splendor.game import IllegalActionError, SplendorGame, check_max_plies
from tabletop_rl.games.splendor.observe import encode_into, observation_box, observation_size

__all__ = ["Config", "EXTERNAL", "GREEDY", "Games", "Outputs", "RANDOM", "SplendorVectorEnv", "Tables"]

RANDOM, GREEDY, EXTERNAL = 0, 1, 2
_OPPONENT_KINDS = {"random": RANDOM, "greedy": GREEDY}
_READY, _WAITING = 0, 1

#: An opponent hook: ``(observations[k, obs], masks[k, 72] bool, envs[k]) -> actions[k]``; each
#: observation is from the seat to act in game ``envs[k]``.
_OpponentHook = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@njit(cache=True)
def _episode_seat(state, seat_option):
    """The learner's seat for a new game: ``seat_option`` if >= 0, else drawn from the game's RNG."""
    if seat_option >= 0:
        return seat_option
    return _random_seat(state)


@njit(cache=True)
def _random_seat(state):
    return R.random_below(state, state[R.NUM_PLAYERS_AT])


class Games(NamedTuple):
    """The batch's games: state rows, the learner's seat and opponent kind per game (and the kind queued
    for its next game), and a scratch row per game for the greedy opponent."""

    states: np.ndarray
    seats: np.ndarray
    opponents: np.ndarray
    next_opponents: np.ndarray
    scratch: np.ndarray


class Tables(NamedTuple):
    cards: np.ndarray
    nobles: np.ndarray
    greedy_weights: np.ndarray


class Config(NamedTuple):
    seat_option: int  # the learner's seat, -1: drawn per game
    point_reward: float  # reward per prestige point gained (0 unless reward="score")


class Outputs(NamedTuple):
    """Per-game outputs of a step: ``returns[i] = (reward, outcome)``, ``flags[i] = (terminated, truncated,
    finished_this_step, waiting_for_hook)``, the final observation of a game that ended, the learner's
    observation and mask."""

    returns: np.ndarray
    flags: np.ndarray
    final_obs: np.ndarray
    obs: np.ndarray
    masks: np.ndarray


# The kernels read the named tuples by field number: numba 0.68 drops the writes made through a named
# tuple's attribute (or its unpacking) in a function inlined into a prange loop, while indexing works (the
# external-hook test of tests/envs/test_splendor_vector.py fails when writes go missing).
_STATES, _SEATS, _OPPONENTS, _NEXT_OPPONENTS, _SCRATCH = (Games._fields.index(f) for f in
                                                          ("states", "seats", "opponents", "next_opponents", "scratch"))
_CARDS, _NOBLES, _GREEDY_WEIGHTS = (Tables._fields.index(f) for f in ("cards", "nobles", "greedy_weights"))
_SEAT_OPTION, _POINT_REWARD = (Config._fields.index(f) for f in ("seat_option", "point_reward"))
_RETURNS, _FLAGS, _FINAL_OBS, _OBS, _MASKS = (Outputs._fields.index(f) for f in
                                              ("returns", "flags", "final_obs", "obs", "masks"))
_REWARD, _OUTCOME = 0, 1
_TERMINATED, _TRUNCATED, _FINISHED, _WAITS = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _advance(i, games, tables, mask):
    """Play the other seats of game ``i`` until the learner's turn, the end, or an external opponent."""
    cards, nobles, weights = tables[_CARDS], tables[_NOBLES], tables[_GREEDY_WEIGHTS]
    state = games[_STATES][i]
    seat = games[_SEATS][i]
    kind = games[_OPPONENTS][i]
    if kind == RANDOM:
        while state[R.STATUS] == R.PLAYING and state[R.CURRENT] != seat:
            R.random_step(state, cards, nobles)
    elif kind == GREEDY:
        work = games[_SCRATCH][i]
        while state[R.STATUS] == R.PLAYING and state[R.CURRENT] != seat:
            R.apply_action(state, greedy_action(state, cards, nobles, weights, mask, work), cards, nobles)
    elif state[R.STATUS] == R.PLAYING and state[R.CURRENT] != seat:
        return _WAITING
    return _READY


@njit(cache=True)
def _finish_and_redeal(i, games, tables, seat_option, returns, flags, final_obs):
    """Record game ``i``'s end (once per step) and deal its next game from the game's own RNG, with the
    opponent kind queued for it."""
    state = games[_STATES][i]
    flags[i, _FINISHED] = True
    returns[i, _OUTCOME] = R.end_reward(state, games[_SEATS][i])
    returns[i, _REWARD] += returns[i, _OUTCOME]
    flags[i, _TERMINATED] = state[R.STATUS] == R.OVER
    flags[i, _TRUNCATED] = state[R.STATUS] == R.TRUNCATED
    encode_into(state, games[_SEATS][i], tables[_CARDS], tables[_NOBLES], final_obs[i])
    R.reset_state(state, R.random_below(state, 1 << 62), state[R.NUM_PLAYERS_AT], R.get_wide(state, R.MAX_PLIES_AT))
    games[_SEATS][i] = _episode_seat(state, seat_option)
    games[_OPPONENTS][i] = games[_NEXT_OPPONENTS][i]


@njit(cache=True, inline="always")
def _step_one(i, actions, games, tables, config, outputs):
    """Apply ``actions[i]`` (if >= 0) to game ``i``, play on to its learner's turn (finishing and
    re-dealing an ended game once) and write the learner's view there."""
    cards, nobles = tables[_CARDS], tables[_NOBLES]
    returns, flags = outputs[_RETURNS], outputs[_FLAGS]
    state = games[_STATES][i]
    if actions[i] >= 0:
        points = R.player_base(state[R.CURRENT]) + R.P_POINTS
        before = state[points]
        learner = state[R.CURRENT] == games[_SEATS][i]
        R.apply_action(state, actions[i], cards, nobles)
        if learner:
            returns[i, _REWARD] += (state[points] - before) * config[_POINT_REWARD]
    mask = outputs[_MASKS][i]  # a work buffer for the opponents' moves until the learner's mask is written
    w = _advance(i, games, tables, mask)
    if w == _READY and state[R.STATUS] != R.PLAYING and not flags[i, _FINISHED]:
        _finish_and_redeal(i, games, tables, config[_SEAT_OPTION], returns, flags, outputs[_FINAL_OBS])
        w = _advance(i, games, tables, mask)
    flags[i, _WAITS] = w == _WAITING
    if w == _READY:
        encode_into(state, games[_SEATS][i], cards, nobles, outputs[_OBS][i])
        R.legal_mask(state, cards, nobles, mask)


@njit(cache=True, parallel=True)
def _step_games(index, actions, games, tables, config, outputs, parallel):
    """``_step_one`` for every game in ``index``, on numba's threads (``parallel``) or on this one."""
    if parallel:
        for k in prange(index.shape[0]):
            _step_one(index[k], actions, games, tables, config, outputs)
    else:
        for k in range(index.shape[0]):
            _step_one(index[k], actions, games, tables, config, outputs)


@njit(cache=True, inline="always")
def _view_of_mover(k, states, index, cards, nobles, obs, masks):
    state = states[index[k]]
    encode_into(state, state[R.CURRENT], cards, nobles, obs[k])
    R.legal_mask(state, cards, nobles, masks[k])


@njit(cache=True, parallel=True)
def _views_of_movers(states, index, cards, nobles, obs, masks, parallel):
    """Observations and masks of the games in ``index`` from the seat to act (on numba's threads if
    ``parallel``)."""
    if parallel:
        for k in prange(index.shape[0]):
            _view_of_mover(k, states, index, cards, nobles, obs, masks)
    else:
        for k in range(index.shape[0]):
            _view_of_mover(k, states, index, cards, nobles, obs, masks)


@njit(cache=True)
def _first_illegal(actions, masks):
    """Index of the first action that ``masks`` does not allow (out of range included), or -1."""
    for k in range(actions.shape[0]):
        a = actions[k]
        if a < 0 or a >= R.NUM_ACTIONS or not masks[k, a]:
            return k
    return -1


@njit(cache=True, inline="always")
def _reset_game(i, states, seeds, num_players, max_plies, seats, seat_option):
    R.reset_state(states[i], seeds[i], num_players, max_plies)
    seats[i] = _episode_seat(states[i], seat_option)


@njit(cache=True, parallel=True)
def _reset_games(states, seeds, num_players, max_plies, seats, seat_option, parallel):
    """Deal every game (on numba's threads if ``parallel``)."""
    if parallel:
        for i in prange(states.shape[0]):
            _reset_game(i, states, seeds, num_players, max_plies, seats, seat_option)
    else:
        for i in range(states.shape[0]):
            _reset_game(i, states, seeds, num_players, max_plies, seats, seat_option)


def _kind(opponent: str | _OpponentHook) -> int:
    if callable(opponent):
        return EXTERNAL
    if opponent not in _OPPONENT_KINDS:
        raise ValueError(f"opponent must be 'random', 'greedy' or a callable hook, got {quote(opponent)}")
    return _OPPONENT_KINDS[opponent]


class SplendorVectorEnv(VectorEnv):
    """``num_envs`` Splendor games, one learning seat each; the other seats are played by ``opponent``.

    ``opponent``: ``"random"``, ``"greedy"`` (both inside numba) or a hook
    ``(observations, masks, envs) -> actions`` called once per round of waiting games (batched).
    ``seat``: ``"random"`` (drawn per episode from the game's seed) or a fixed seat index.
    At a game's end ``info["outcome"]`` holds the learner's end reward alone (masked by ``info["_outcome"]``).
    ``reward``: ``"sparse"``, the zero-sum end reward of the learning seat (winners share +1, losers
    share -1), or ``"dense"``, which adds the learner's points gained on each step / 15 (as the AEC env).
    ``copy``: return arrays the env never writes again (default; observations are written straight into a
    new array each step); ``copy=False`` returns the env's own buffers, valid until the next ``step`` (as
    gymnasium's ``SyncVectorEnv(copy=False)``), which saves an allocation and the mask copy per step.
    ``parallel``: ``"auto"`` (default) steps the games on numba's threads (``numba.set_num_threads``) or on
    the calling thread, whichever this machine runs faster now, measured in short trials while it steps
    (``core.parallel_choice``): the threads on cores of their own, one thread where other work shares the
    cores; ``True`` always on the threads; ``False`` every kernel on the calling thread, for a process that
    steps envs from threads of its own or leaves the other cores to a learner.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 256, opponent: str | _OpponentHook = "random", num_players: int = 2,
                 seat: str | int = "random", max_plies: int | None = R.DEFAULT_MAX_PLIES,
                 reward: str = "win", parallel: bool | str = "auto", copy: bool = True) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {quote(num_envs)}")
        SplendorGame(num_players, seed=0)  # checks num_players
        check_max_plies(max_plies, minimum=num_players)  # every seat acts in each game
        check_seat(seat, num_players, other="random")
        self.reward_mode = reward_mode(reward, SplendorGame.reward_modes)
        self._point_reward = 1.0 / SplendorGame.score_scale if self.reward_mode == "score" else 0.0
        self.num_envs = num_envs
        self.num_players = num_players
        self.max_plies = -1 if max_plies is None else max_plies
        self.seat_option = -1 if seat == "random" else int(seat)
        self.hook: _OpponentHook | None = opponent if callable(opponent) else None
        self.opponents = np.full(num_envs, _kind(opponent), np.int64)
        self.next_opponents = self.opponents.copy()
        size = observation_size(num_players)
        self.single_observation_space = observation_box(num_players)
        self.single_action_space = gym.spaces.Discrete(R.NUM_ACTIONS)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._cards, self._nobles = R.tables()
        self.greedy_weights = np.asarray(DEFAULT_GREEDY_WEIGHTS, np.float64)
        self.states = R.new_states(num_envs)
        self.seats = np.zeros(num_envs, np.int64)
        self._obs = np.zeros((num_envs, size), np.float32)
        self._masks = np.zeros((num_envs, R.NUM_ACTIONS), np.bool_)
        self._final_obs = np.zeros((num_envs, size), np.float32)
        self._returns = np.zeros((num_envs, 2), np.float64)
        self._flags = np.zeros((num_envs, 4), np.bool_)
        self._games = Games(self.states, self.seats, self.opponents, self.next_opponents, R.new_states(num_envs))
        self._tables = Tables(self._cards, self._nobles, self.greedy_weights)
        self._config = Config(self.seat_option, self._point_reward)
        self._outputs = Outputs(self._returns, self._flags, self._final_obs, self._obs, self._masks)
        self._all = np.arange(num_envs)
        self._no_actions = np.full(num_envs, -1, np.int64)
        self._threads = ParallelChoice(parallel)
        self.parallel = parallel
        self.copy = copy
        self._started = False

    # --- gymnasium API -----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start every game. ``options={"position": <JSON position>}`` starts all games from a position."""
        super().reset(seed=seed)
        base = int(self.np_random.integers(0, 1 << 62)) if seed is None else int(seed)
        seeds = base + np.arange(self.num_envs, dtype=np.int64)  # game i is SplendorGame(seed=base + i)
        _reset_games(self.states, seeds, self.num_players, self.max_plies, self.seats, self.seat_option,
                     self._threads.parallel)
        if options and "position" in options:
            self._load_position(options["position"], seeds)
        self._begin_step()
        self._advance(self._no_actions)
        self._started = True
        return self._views()

    def step(self, actions):
        """Apply the learners' actions (every one must be legal) and play on to each learner's next turn."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = _checked_actions(actions, self.num_envs)
        bad = _first_illegal(actions, self._masks)
        if bad >= 0:
            raise IllegalActionError(f"env {bad}: {_why_illegal(self.states[bad], int(actions[bad]))}")
        self._begin_step()
        self._advance(actions)
        obs, info = self._views()
        finished = self._flags[:, _FINISHED]
        ended = np.flatnonzero(finished)  # one pass over the column, which the other threads just wrote
        if ended.size:
            final = np.empty(self.num_envs, dtype=object)  # None where no game ended
            final[ended] = list(self._final_obs[ended])  # rows of one new array: one copy, not one per game
            info["final_obs"] = final
            info["_final_obs"] = finished.copy()
            info["outcome"] = self._returns[:, _OUTCOME].copy()  # zeroed each step, set only where a game ended
            info["_outcome"] = finished.copy()
        return (obs, self._returns[:, _REWARD].copy(), self._flags[:, _TERMINATED].copy(),
                self._flags[:, _TRUNCATED].copy(), info)

    def action_masks(self) -> np.ndarray:
        """``bool[num_envs, 72]``: the legal moves of each learner (what MaskablePPO asks for)."""
        return self._masks.copy()

    def set_opponents(self, kinds: np.ndarray, now: bool = False) -> None:
        """Per-game opponent kinds (0 random, 1 greedy, 2 the hook), e.g. for an opponent pool: each
        game takes its new kind when its next game is dealt, or at once with ``now=True``."""
        kinds = np.asarray(kinds, np.int64)
        if kinds.shape != (self.num_envs,) or kinds.min() < 0 or kinds.max() > EXTERNAL:
            raise ValueError(f"kinds must be {self.num_envs} values in 0..2")
        if (kinds == EXTERNAL).any() and self.hook is None:
            raise ValueError("an external opponent needs a hook: set env.hook first")
        self.next_opponents[:] = kinds
        if now:
            self.opponents[:] = kinds

    def to_sb3(self):
        """This env as a stable-baselines3 ``VecEnv`` (needs the ``[train]`` extra)."""
        from tabletop_rl.envs.sb3 import SB3SplendorVecEnv  # the optional extra's entry point: imported on use

        return SB3SplendorVecEnv(self)

    # --- internals ----------------------------------------------------------------------
    def _advance(self, actions: np.ndarray) -> None:
        """Apply ``actions`` (-1: none) and play every game on to its learner's turn; games waiting for
        the hook are decided in batches, one call per round, until none waits."""
        index = self._all
        while True:
            self._threads.run(_step_games, len(index), index, actions, self._games, self._tables, self._config,
                              self._outputs)
            index = np.flatnonzero(self._flags[:, _WAITS])
            if len(index) == 0:
                return
            actions = self._hook_actions(index)

    def _hook_actions(self, index: np.ndarray) -> np.ndarray:
        """The hook's moves for the games in ``index``, checked, as a full-size action array (-1 elsewhere)."""
        obs = np.zeros((len(index), self._obs.shape[1]), np.float32)
        masks = np.zeros((len(index), R.NUM_ACTIONS), np.bool_)
        _views_of_movers(self.states, index, self._cards, self._nobles, obs, masks, self._threads.parallel)
        assert self.hook is not None  # only games of an external opponent wait
        chosen = np.asarray(self.hook(obs, masks, index), np.int64)
        if chosen.shape != (len(index),):
            raise ValueError(f"opponent hook returned shape {chosen.shape}, expected ({len(index)},)")
        bad = _first_illegal(chosen, masks)
        if bad >= 0:
            raise ValueError(f"opponent hook chose illegal action {chosen[bad]} in env {index[bad]}")
        actions = self._no_actions.copy()
        actions[index] = chosen
        return actions

    def _begin_step(self) -> None:
        self._returns[:] = 0.0
        self._flags[:] = False
        if self.copy:
            # Every game's observation is rewritten each step, so writing into a fresh array spares the
            # copy of the env's buffer that returning fresh arrays would otherwise cost.
            self._obs = np.empty_like(self._obs)
            self._outputs = self._outputs._replace(obs=self._obs)

    def _views(self) -> tuple[np.ndarray, dict[str, Any]]:
        if self.copy:
            return self._obs, {"action_mask": self._masks.copy()}
        return self._obs, {"action_mask": self._masks}

    def _load_position(self, position: Any, seeds: np.ndarray) -> None:
        self.states[:] = load_position(SplendorGame, position, self.num_players, 0).state  # checked as the envs do
        for i in range(self.num_envs):
            R.seed_rng(self.states[i], int(seeds[i]))
            self.seats[i] = _episode_seat(self.states[i], self.seat_option)


def _checked_actions(actions: Any, num_envs: int) -> np.ndarray:
    """``actions`` as ``int64[num_envs]``: integers only (no floats, bools or strings), one per game (a
    ``(num_envs, 1)`` column is taken too); ``ValueError`` for anything else."""
    try:
        arr = np.asarray(actions)
    except (ValueError, TypeError, OverflowError):
        raise ValueError(f"actions must be {num_envs} integer action ids, got {quote(actions)}") from None
    if arr.dtype.kind not in "iu" and arr.size:
        raise ValueError(f"actions must be integer action ids, got {arr.dtype} values {quote(actions)}")
    if arr.shape not in ((num_envs,), (num_envs, 1)):
        raise ValueError(f"expected {num_envs} actions (shape ({num_envs},)), got shape {arr.shape}")
    arr = arr.reshape(-1)
    if arr.dtype == np.int64 and arr.flags.c_contiguous:  # the usual case, used as it is (a strided one would
        return arr  # compile the kernels again for its layout); _first_illegal checks the range, with this message
    outside = np.flatnonzero((arr < 0) | (arr >= R.NUM_ACTIONS))  # before the cast, which could wrap a value
    if outside.size:
        k = int(outside[0])
        raise IllegalActionError(f"env {k}: action {quote(int(arr[k]))} is out of range 0..{R.NUM_ACTIONS - 1}")
    return arr.astype(np.int64)


def _why_illegal(state: np.ndarray, action: int) -> str:
    if not 0 <= action < R.NUM_ACTIONS:
        return f"action {action} is out of range 0..{R.NUM_ACTIONS - 1}"
    return SplendorGame._from_state(state.copy()).explain_illegal(action)
