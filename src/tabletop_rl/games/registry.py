"""The record of one game (``GameEntry``) and the registry of records.

Each game package defines its record as ``ENTRY`` in its ``__init__.py``, and ``tabletop_rl.games`` registers it
with one line. The record names everything above this layer (its policies, its envs, its commands) by dotted
import strings, which the layer that needs one resolves when it first needs it: listing the games imports no
game's rules, policies or envs. Every per-game table of the package (the CLI's default line-ups and commands,
the web menu, the Gymnasium and PettingZoo ids, the policy modules, the top-level names) is read from these
records.

A game has one name, a lower-case Python identifier (``space_conquest``): its registry key, its class's
``name``, its policy registry key and the name of its packages. The command line also takes it with ``-`` for
``_`` (``tabletop play space-conquest``), and files written before the name was one spelling are read with
``read_game_name``.

>>> entry = GameEntry("toy", "toy.game:ToyGame", players=("random", "greedy"))
>>> entry.module, entry.attribute
('toy.game', 'ToyGame')
>>> GameEntry("space-conquest", "x:Y", players=("random",))
Traceback (most recent call last):
ValueError: a game's name is a lower-case identifier (space_conquest, not space-conquest)
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GameEntry", "Registry", "lazy_attribute", "read_game_name", "resolve"]


@dataclass(frozen=True)
class GameEntry:
    """What the package knows of one game; every upper-layer thing named by an import string (``module:attr`` for
    an object, a module's dotted path for a module).

    - ``name``: the game's one name (a lower-case identifier);
    - ``game_class``: ``module:Class`` of its ``core.game.Game``;
    - ``players``: the default line-up of ``tabletop arena <name>`` (the policies this installation cannot build
      are left out when it runs);
    - ``policies``: the module that registers the game's own policies (``agents.register_policy``), imported on
      the first policy lookup for the game; ``None``: only the policies every game has (``random``);
    - ``llm_prompt``: the module that defines the game's LLM ``PROMPT``; ``None``: LLMs do not play it;
    - ``web_policies``: the built-in menu of the browser's play table (``tabletop web``); empty: the line-up;
    - ``env_id``: its id in Gymnasium's and PettingZoo's registries (``tabletop_rl/Splendor-v0``), with
      ``gym_env`` (``module:Class``, and ``gym_vector_env`` for ``gymnasium.make_vec``) and ``pettingzoo_envs``
      (env type, ``"aec"`` or ``"parallel"`` -> ``module:function``);
    - ``board_view``: ``module:function(game, viewer) -> dict``, the board as data that the web page draws (the
      game's ``render.board_view``); ``None``: the page shows the text board alone;
    - ``terminal``: ``tabletop play <name>`` runs it in the package's terminal table (``ui.terminal``);
    - ``commands``: the commands whose arguments the game parses itself, ``(command, subject)`` ->
      ``module:function(argv) -> int``: ``("play", "space_conquest")`` runs ``tabletop play space-conquest ...``;
    - ``exports``: the names ``import tabletop_rl`` gives on first use, name -> the module that defines it.
    """

    name: str
    game_class: str
    players: tuple[str, ...]
    policies: str | None = None
    llm_prompt: str | None = None
    web_policies: tuple[str, ...] = ()
    env_id: str | None = None
    gym_env: str | None = None
    gym_vector_env: str | None = None
    pettingzoo_envs: Mapping[str, str] = field(default_factory=dict)
    board_view: str | None = None
    terminal: bool = False
    commands: Mapping[tuple[str, str], str] = field(default_factory=dict)
    exports: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"a game's name is a lower-case identifier ({self.name.replace('-', '_').lower()}, "
                             f"not {self.name})")
        for path in (self.game_class, self.gym_env, self.gym_vector_env, *self.pettingzoo_envs.values(),
                     self.board_view, *self.commands.values()):
            if path is not None and path.count(":") != 1:
                raise ValueError(f"{self.name}: {path!r} is not 'module:attribute'")
        if not self.players:
            raise ValueError(f"{self.name}: the default line-up names no policy")

    @property
    def module(self) -> str:
        """The module of the game's class."""
        return self.game_class.partition(":")[0]

    @property
    def attribute(self) -> str:
        """The class's name in its module."""
        return self.game_class.partition(":")[2]

    @property
    def menu(self) -> tuple[str, ...]:
        """The web play table's built-in policies: ``web_policies``, else the arena's line-up."""
        return self.web_policies or self.players


class Registry:
    """The registered records, by name (``register`` adds one; a second record of a name is refused)."""

    def __init__(self) -> None:
        self._entries: dict[str, GameEntry] = {}

    def register(self, entry: GameEntry) -> None:
        if entry.name in self._entries:
            raise ValueError(f"a game named {entry.name!r} is registered already")
        self._entries[entry.name] = entry

    def names(self) -> list[str]:
        """The games' names, sorted."""
        return sorted(self._entries)

    def entries(self) -> list[GameEntry]:
        """The records, sorted by name."""
        return [self._entries[name] for name in self.names()]

    def entry(self, name: str) -> GameEntry:
        """The record of ``name``; ``ValueError`` naming the games."""
        if name not in self._entries:
            raise ValueError(f"unknown game {name!r}; the games are: {', '.join(self.names())}")
        return self._entries[name]

    def copy(self) -> Registry:
        """A registry holding the same records (a test registers a game in a copy)."""
        copy = Registry()
        copy._entries.update(self._entries)
        return copy


def read_game_name(value: Any) -> Any:
    """A game's name as read from a file (a results file, a run's config, a save): the old spelling
    ``space-conquest`` of files written before each game had one name is read as ``space_conquest``; any other
    value is left for the reader's own checks.

    >>> read_game_name("space-conquest"), read_game_name("splendor"), read_game_name(3)
    ('space_conquest', 'splendor', 3)
    """
    return value.replace("-", "_") if isinstance(value, str) else value


def resolve(path: str) -> Any:
    """What an import string of a record names (``module:attribute``), its module imported on first use.

    >>> resolve("tabletop_rl.games.registry:GameEntry") is GameEntry
    True
    """
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def lazy_attribute(package: str, modules: Mapping[str, str], name: str) -> Any:
    """What a module's ``__getattr__`` gives for ``name``: the attribute of the module ``modules`` names for it,
    imported on first use (so importing ``package`` loads none of them); ``AttributeError`` for another name."""
    if name in modules:
        return getattr(importlib.import_module(modules[name]), name)
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
