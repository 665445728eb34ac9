"""Game adapters: the few operations the arena, terminal play and replays need from a game.

The arena never touches a game's own API directly, so a new game (Klaverjas, ...) plugs in by adding
an adapter here and a line in ``GAMES``.

>>> adapter = get_adapter("splendor")
>>> game = adapter.new_game(seed=7, num_players=2)
>>> adapter.current_player(game), adapter.move_name(0)
(0, 'take:white,blue,green')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np


class GameAdapter(Protocol):
    """What the arena needs from one game; ``game`` is the game's own object (e.g. ``SplendorGame``)."""

    name: str
    player_counts: tuple[int, ...]
    default_max_plies: int | None

    def new_game(self, seed: int, num_players: int, max_plies: int | None = None) -> Any: ...
    def current_player(self, game: Any) -> int: ...
    def legal_mask(self, game: Any) -> np.ndarray: ...
    def observation(self, game: Any, seat: int) -> np.ndarray: ...
    def info(self, game: Any, seat: int) -> dict[str, Any]: ...
    def step(self, game: Any, action: int | str) -> None: ...
    def is_over(self, game: Any) -> bool: ...
    def is_truncated(self, game: Any) -> bool: ...
    def scores(self, game: Any) -> list[int]: ...
    def winners(self, game: Any) -> list[int]: ...
    def ranks(self, game: Any) -> list[int]: ...
    def move_name(self, action: int) -> str: ...
    def move_id(self, name: str) -> int: ...
    def explain_illegal(self, game: Any, action: int) -> str: ...
    def to_json(self, game: Any) -> str: ...
    def from_json(self, text: str | dict) -> Any: ...
    def render(self, game: Any, viewer: int | None = None, color: bool = False) -> str: ...
    def rules_help(self) -> str: ...


class SplendorAdapter:
    """Splendor through ``SplendorGame``; modules are imported on first use so listing games stays cheap."""

    name = "splendor"
    player_counts = (2, 3, 4)

    @property
    def default_max_plies(self) -> int:
        from ..splendor.rules import DEFAULT_MAX_PLIES
        return DEFAULT_MAX_PLIES

    def new_game(self, seed: int, num_players: int, max_plies: int | None = None) -> Any:
        from ..splendor import SplendorGame
        return SplendorGame(num_players, seed=seed, max_plies=max_plies)

    def current_player(self, game: Any) -> int:
        return game.current_player

    def legal_mask(self, game: Any) -> np.ndarray:
        return game.legal_mask()

    def observation(self, game: Any, seat: int) -> np.ndarray:
        from ..splendor.observe import observe
        return observe(game.state, seat)

    def info(self, game: Any, seat: int) -> dict[str, Any]:
        # Search policies determinize from the game themselves; they never read its hidden cards.
        return {"game": game, "player": seat}

    def step(self, game: Any, action: int | str) -> None:
        game.step(action)

    def is_over(self, game: Any) -> bool:
        return game.is_over

    def is_truncated(self, game: Any) -> bool:
        return game.is_truncated

    def scores(self, game: Any) -> list[int]:
        return game.scores

    def winners(self, game: Any) -> list[int]:
        return game.winners

    def ranks(self, game: Any) -> list[int]:
        """Finishing places, 0 = first, ties shared: most points, then fewest cards bought (the rules'
        tie-break); a truncated game has no winner, so every seat shares place 0."""
        if game.is_truncated:
            return [0] * game.num_players
        keys = [(-game.scores[p], len(game.player(p)["bought"])) for p in range(game.num_players)]
        return dense_ranks(keys)

    def move_name(self, action: int) -> str:
        from ..splendor.actions import action_name
        return action_name(action)

    def move_id(self, name: str) -> int:
        from ..splendor.actions import action_id
        return action_id(name)

    def explain_illegal(self, game: Any, action: int) -> str:
        return game.explain_illegal(action)

    def to_json(self, game: Any) -> str:
        return game.to_json()

    def from_json(self, text: str | dict) -> Any:
        from ..splendor import SplendorGame
        return SplendorGame.from_json(text)

    def render(self, game: Any, viewer: int | None = None, color: bool = False) -> str:
        from ..splendor.render import render_ansi
        return render_ansi(game, viewer=viewer, color=color)

    def rules_help(self) -> str:
        return SPLENDOR_MOVE_HELP


SPLENDOR_MOVE_HELP = """\
Move names (colours: white blue green red black, gold only to return):
  take:white,blue,green   three different colours     take2:red        two of one colour (bank has 4+)
  take:white,blue         two colours (only 2 left)   take:white       one colour (only 1 left)
  reserve:2.1             reserve market card level 2, slot 1 (slots 0-3)   reserve_deck:3   top of a deck
  buy:1.3                 buy market card level 1, slot 3                   buy_reserved:0   your reserve 0
  return:gold             return a token when holding more than 10          noble:1          choose a noble
  pass                    only when nothing else is legal
Cards read [#id Colour points | cost]; colour letters: w b g r k(black) y(gold)."""


def dense_ranks(keys: list[Any]) -> list[int]:
    """Place of each key, 0 for the smallest, equal keys sharing a place.

    >>> dense_ranks([(-15, 10), (-12, 8), (-15, 10)])
    [0, 1, 0]
    """
    order = sorted(set(keys))
    return [order.index(k) for k in keys]


GAMES: dict[str, Callable[[], GameAdapter]] = {"splendor": SplendorAdapter}


def get_adapter(game: str) -> GameAdapter:
    """The adapter for ``game``; ``ValueError`` naming the known games otherwise."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; the arena knows: {', '.join(sorted(GAMES))}")
    return GAMES[game]()

