"""The episode core shared by every env: argument checks, reward modes, seeding and the start of an episode.

Written once here and used by the AEC env (``envs.aec``), the Gymnasium env (``envs.gym``), Space Conquest's
parallel env and Splendor's vector env, so they check, seed and start games alike.

>>> check_choice("dense", "reward", ("win", "score"))
Traceback (most recent call last):
ValueError: reward must be one of 'win', 'score', got 'dense'
>>> reward_mode("sparse")
'win'
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from tabletop_rl.core.game import TurnBased
from tabletop_rl.core.seeding import check_seed, fresh_seed
from tabletop_rl.core.text import quote, use_color
from tabletop_rl.games import check_options, turn_based_class

__all__ = [
    "Episodes", "GAME_DEFAULT", "MASK_DTYPE", "check_choice", "check_num_players", "check_seat", "check_viewer",
    "load_position", "next_seed", "position_option", "render_text", "reward_mode", "start_episode"
]

#: The envs' mask type (PettingZoo's and Gymnasium's convention), as an instance: ``np.empty`` takes it faster
#: than the type, and the fused steps allocate a mask with it every step.
MASK_DTYPE = np.dtype(np.int8)
#: Older names of the two reward modes, still accepted: Splendor's sparse/dense, Klaverjas's points.
_REWARD_ALIASES = {"sparse": "win", "dense": "score", "points": "score"}
#: A new episode without a seed draws its seed below this from the previous game's own stream.
_NEXT_SEED_BOUND = 1 << 62


def check_choice(value: Any, name: str, choices: tuple) -> None:
    """``ValueError`` naming ``name`` and its choices unless ``value`` is one of them."""
    if not isinstance(value, (str, int, type(None))) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {quote(value)}")


def reward_mode(reward: Any, modes: tuple[str, ...] = ("win", "score")) -> str:
    """The canonical reward mode of ``reward`` (an older name is translated), checked against ``modes``."""
    mode = _REWARD_ALIASES.get(reward, reward) if isinstance(reward, str) else reward
    check_choice(mode, "reward", tuple(modes) + tuple(k for k, v in _REWARD_ALIASES.items() if v in modes))
    return str(mode)


def check_seat(seat: Any, num_seats: int, name: str = "seat", other: str | None = None) -> None:
    """``ValueError`` unless ``seat`` is a seat index (or the ``other`` value allowed besides, e.g. "random")."""
    if other is not None and seat == other:
        return
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < num_seats:
        allowed = f"{other!r} or " if other is not None else ""
        raise ValueError(f"{name} must be {allowed}a seat 0..{num_seats - 1}, got {quote(seat)}")


def check_viewer(viewer: Any, num_seats: int) -> None:
    """``ValueError`` unless ``viewer`` is None (a spectator) or a seat."""
    if viewer is not None and (isinstance(viewer, bool) or not isinstance(viewer, (int, np.integer))
                               or not 0 <= viewer < num_seats):
        raise ValueError(f"render_viewer must be None or a seat 0..{num_seats - 1}, got {quote(viewer)}")


def check_num_players(game_class: Any, num_players: Any) -> None:
    """``ValueError`` unless ``num_players`` is one of the game's player counts.

    >>> from tabletop_rl.games import game_class
    >>> check_num_players(game_class("splendor"), 5)
    Traceback (most recent call last):
    ValueError: num_players must be 2, 3 or 4 for splendor, got 5
    """
    counts = [str(n) for n in game_class.player_counts]
    if isinstance(num_players, bool) or num_players not in game_class.player_counts:
        allowed = counts[0] if len(counts) == 1 else f"{', '.join(counts[:-1])} or {counts[-1]}"
        raise ValueError(f"num_players must be {allowed} for {game_class.name}, got {quote(num_players)}")


def next_seed(seed: Any, previous: Any) -> int:
    """The game seed of a new episode: ``seed`` itself when given (``reset(seed=s)`` deals the game of seed
    ``s``), else one drawn from the previous game's own random stream (as the vector env's autoreset does),
    or from fresh entropy before any game.

    >>> next_seed(7, None)
    7
    """
    if seed is not None:
        return check_seed(seed)
    return fresh_seed() if previous is None else previous.random_below(_NEXT_SEED_BOUND)


def position_option(options: Any) -> Any:
    """The ``position`` of ``reset(options=...)`` (None without one). Other keys are ignored with a warning
    (PettingZoo's api_test passes unknown options); anything but a dict or None is refused."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict such as {{'position': ...}} or None, got {quote(options)}")
    unknown = sorted(map(str, set(options) - {"position"}))
    if unknown:
        warnings.warn(f"ignoring unknown reset option(s) {unknown}; the only option is 'position'", stacklevel=3)
    return options.get("position")


def load_position(game_class: Any, position: Any, num_players: int, seed: int) -> Any:
    """A game of class ``game_class`` from a JSON position (dict or text) for an env of ``num_players``; ``seed``
    seeds its random stream. ``ValueError`` for a wrong player count or a finished position."""
    game = game_class.from_json(position)
    if game.num_players != num_players:
        raise ValueError(f"position has {game.num_players} players but the env was made for {num_players}")
    if game.is_over:
        raise ValueError("position is already finished; an episode must start from a position still in play")
    game.reseed(seed)
    return game


#: ``max_plies`` left out: the game's own default cap (None means no cap at all).
GAME_DEFAULT: Any = "game default"


@dataclass(frozen=True)
class Episodes:
    """How an env over a turn-based game deals its episodes: the game's class, player count, ply cap and
    options, checked once when the env is made (``of``), then ``deal`` per reset."""

    game_class: type[TurnBased]
    num_players: int
    max_plies: int | None
    options: dict[str, Any]
    num_seats: int

    @classmethod
    def of(cls, game: str, num_players: Any, max_plies: Any, options: Mapping[str, Any]) -> Episodes:
        """``ValueError`` naming the first bad argument: the game, its options, the player count, the ply cap."""
        game_class = turn_based_class(game)
        checked = check_options(game, options)
        check_num_players(game_class, num_players)
        cap = game_class.default_max_plies if max_plies is GAME_DEFAULT else max_plies
        probe = game_class.new(0, num_players, cap, **checked)  # checks the ply cap as the game does
        return cls(game_class, num_players, cap, checked, probe.num_seats)

    def deal(self, seed: Any, previous: Any, reset_options: Any) -> Any:
        """The game an episode starts with: ``reset_options["position"]`` if given, else a fresh deal; its seed
        is ``seed`` or one drawn from ``previous`` (``next_seed``)."""
        game_seed = next_seed(seed, previous)
        position = position_option(reset_options)
        if position is not None:
            return load_position(self.game_class, position, self.num_players, game_seed)
        return self.game_class.new(game_seed, self.num_players, self.max_plies, **self.options)


def start_episode(env: AECEnv) -> None:
    """Every agent back in play with zero rewards, no termination or truncation, and empty infos."""
    env.agents = env.possible_agents[:]
    env.rewards = dict.fromkeys(env.agents, 0.0)
    env._cumulative_rewards = dict.fromkeys(env.agents, 0.0)
    env.terminations = dict.fromkeys(env.agents, False)
    env.truncations = dict.fromkeys(env.agents, False)
    env.infos = {agent: {} for agent in env.agents}


def render_text(game: Any, mode: str | None, viewer: int | None) -> str | np.ndarray | None:
    """Draw ``game`` for ``viewer`` in ``mode``: ``ansi`` text, ``human`` (printed), ``rgb_array``."""
    if mode is None:
        warnings.warn("render() called without a render_mode; pass render_mode=... to the env", stacklevel=3)
        return None
    if mode == "rgb_array":
        image: np.ndarray = game.render_rgb(viewer)
        return image
    if mode == "human":  # printed: colours only on a terminal
        print(game.render(viewer, color=use_color(sys.stdout)))
        return None
    text: str = game.render(viewer, color=use_color())  # ansi: the text itself, coloured unless NO_COLOR
    return text
