"""The games: one package each, with the same files (rules, game, actions, observe, render, baselines), and the
registry of their records (``GameEntry``, ``games/registry.py``).

Each game package defines its record as ``ENTRY``; the lines below register them, one per game. The records
name each game's class and everything above this layer by import strings, so listing the games loads none of
them: ``game_class`` imports a class on first use.

>>> names()
['klaverjas', 'space_conquest', 'splendor']
>>> game_class("klaverjas").player_counts
(2,)
>>> game_class("chess")
Traceback (most recent call last):
ValueError: unknown game 'chess'; the games are: klaverjas, space_conquest, splendor
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tabletop_rl.core.game import Game, TurnBased
from tabletop_rl.games import klaverjas, space_conquest, splendor
from tabletop_rl.games.registry import GameEntry, Registry, read_game_name, resolve

__all__ = ["GAMES", "REGISTRY", "GameEntry", "check_options", "entries", "entry", "game_class", "names",
           "read_game_name", "register_game", "turn_based_class"]

#: The registered games. A test that registers a game of its own replaces this with ``REGISTRY.copy()``; every
#: function here reads it when called.
REGISTRY = Registry()


def register_game(record: GameEntry) -> None:
    """Add a game: from then on every command, env, menu and check of the package knows it
    (docs/architecture.md, "How to add a game")."""
    REGISTRY.register(record)


register_game(splendor.ENTRY)
register_game(klaverjas.ENTRY)
register_game(space_conquest.ENTRY)


def names() -> list[str]:
    """The registered games' names, sorted."""
    return REGISTRY.names()


def entries() -> list[GameEntry]:
    """The registered games' records, sorted by name."""
    return REGISTRY.entries()


def entry(name: str) -> GameEntry:
    """The record of game ``name``; ``ValueError`` naming the games."""
    return REGISTRY.entry(name)


class _GameClasses(Mapping[str, str]):
    """``GAMES``: game name -> ``module:Class`` of its ``Game``, read from the registry when asked."""

    def __getitem__(self, name: str) -> str:
        if name not in REGISTRY.names():
            raise KeyError(name)
        return REGISTRY.entry(name).game_class

    def __iter__(self) -> Iterator[str]:
        return iter(REGISTRY.names())

    def __len__(self) -> int:
        return len(REGISTRY.names())


#: game name -> ``"module:Class"`` of its ``Game``: a view of the registry.
GAMES: Mapping[str, str] = _GameClasses()


def game_class(name: str) -> type[Game]:
    """The ``Game`` class of ``name``; ``ValueError`` naming the known games."""
    cls: type[Game] = resolve(entry(name).game_class)
    return cls


def turn_based_class(name: str) -> type[TurnBased]:
    """The ``Game`` class of a turn-based game (what the AEC and Gymnasium envs take); ``ValueError`` for a
    game of simultaneous moves, ``TypeError`` for a turn-based class that does not inherit ``TurnBased`` (the envs
    step through what it declares).

    >>> turn_based_class("space_conquest")
    Traceback (most recent call last):
    ValueError: space_conquest is played with simultaneous moves: use its parallel env
    """
    cls = game_class(name)
    if cls.simultaneous:
        raise ValueError(f"{name} is played with simultaneous moves: use its parallel env")
    if not issubclass(cls, TurnBased):
        raise TypeError(f"{name}'s class {cls.__name__} must inherit TurnBased (core.game) to be played in an env")
    return cls


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
