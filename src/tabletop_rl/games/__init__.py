"""The games: one package each, with the same files (rules, game, actions, observe, render, baselines).

``GAMES`` names each game's class (the ``core.game.Game`` contract); ``game_class`` imports it on first
use, so naming the games loads none of them.

>>> game_class("klaverjas").player_counts
(2,)
>>> game_class("chess")
Traceback (most recent call last):
ValueError: unknown game 'chess'; the games are: klaverjas, space-conquest, splendor
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, cast

from tabletop_rl.core.game import Game, TurnBasedGame

__all__ = ["GAMES", "check_options", "game_class", "policy_game", "turn_based_class"]

#: game name -> "module:class" of its ``Game``
GAMES = {"splendor": "tabletop_rl.games.splendor.game:SplendorGame",
         "klaverjas": "tabletop_rl.games.klaverjas.game:KlaverjasGame",
         "space-conquest": "tabletop_rl.games.space_conquest.game:SpaceConquestGame"}


def game_class(name: str) -> type[Game]:
    """The ``Game`` class of ``name``; ``ValueError`` naming the known games."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; the games are: {', '.join(sorted(GAMES))}")
    module, _, attr = GAMES[name].partition(":")
    cls: type[Game] = getattr(importlib.import_module(module), attr)
    return cls


def turn_based_class(name: str) -> type[TurnBasedGame]:
    """The ``Game`` class of a turn-based game (what the AEC and Gymnasium envs take); ``ValueError`` for a
    game of simultaneous moves.

    >>> turn_based_class("space-conquest")
    Traceback (most recent call last):
    ValueError: space-conquest is played with simultaneous moves: use its parallel env
    """
    cls = game_class(name)
    if cls.simultaneous:
        raise ValueError(f"{name} is played with simultaneous moves: use its parallel env")
    return cast("type[TurnBasedGame]", cls)


def check_options(name: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` as a dict after checking each key is one of the game's ``option_names``.

    >>> check_options("splendor", {"deals": 4})
    Traceback (most recent call last):
    ValueError: splendor has no game option 'deals' (it has none)
    """
    cls = game_class(name)
    options = dict(options or {})
    for key in options:
        if key not in cls.option_names:
            raise ValueError(f"{name} has no game option {key!r} (it has {', '.join(cls.option_names) or 'none'})")
    cls.new(0, cls.player_counts[0], **options)  # checks the values
    return options


def policy_game(name: str) -> str:
    """The policy registry's key of a game: ``policy_game("space-conquest") == "space_conquest"``."""
    return name.replace("-", "_")
