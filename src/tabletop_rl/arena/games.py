"""Game adapters: the few operations the arena, terminal play and replays need from a game.

The arena never touches a game's own API directly, so a new game plugs in by adding an adapter here
and a line in ``GAMES``. Every game is played through one step protocol: the seats in
``pending_players`` answer (each from its own ``observation``, ``seat_mask`` and ``info``), each answer
becomes a ``move_record`` (what ``games.jsonl`` keeps), and ``step_joint`` plays the records of one step
together. A turn-based game has one pending seat and gets the protocol from ``TurnBased``; a game of
simultaneous moves (``simultaneous = True``, Space Conquest) writes it itself.

>>> adapter = get_adapter("splendor")
>>> game = adapter.new_game(seed=7, num_players=2)
>>> adapter.pending_players(game), adapter.move_name(0)
([0], 'take:white,blue,green')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np


class GameAdapter(Protocol):
    """What the arena, ``play`` and ``replay`` need from every game; ``game`` is the game's own object
    (e.g. ``SplendorGame``)."""

    name: str
    player_counts: tuple[int, ...]
    default_max_plies: int | None
    game_options: tuple[str, ...]  # keyword options of the constructor (``get_adapter(game, options)``)
    simultaneous: bool

    def new_game(self, seed: int, num_players: int, max_plies: int | None = None) -> Any: ...
    def pending_players(self, game: Any) -> list[int]: ...
    def seat_mask(self, game: Any, seat: int) -> np.ndarray: ...
    def observation(self, game: Any, seat: int) -> np.ndarray: ...
    def info(self, game: Any, seat: int) -> dict[str, Any]: ...
    def move_record(self, game: Any, seat: int, action: Any) -> Any: ...
    def step_joint(self, game: Any, moves: dict[int, Any]) -> None: ...
    def describe_move(self, move: Any) -> str: ...
    def is_over(self, game: Any) -> bool: ...
    def is_truncated(self, game: Any) -> bool: ...
    def scores(self, game: Any) -> list[int]: ...
    def winners(self, game: Any) -> list[int]: ...
    def ranks(self, game: Any) -> list[int]: ...
    def to_json(self, game: Any) -> str: ...
    def from_json(self, text: str | dict) -> Any: ...
    def render(self, game: Any, viewer: int | None = None, color: bool = False) -> str: ...
    def rules_help(self) -> str: ...


class TurnBasedAdapter(GameAdapter, Protocol):
    """A game where one seat acts at a time (what ``tabletop play`` needs besides the step protocol)."""

    def current_player(self, game: Any) -> int: ...
    def legal_mask(self, game: Any) -> np.ndarray: ...
    def step(self, game: Any, action: int | str) -> None: ...
    def move_name(self, action: int) -> str: ...
    def move_id(self, name: str) -> int: ...
    def explain_illegal(self, game: Any, action: int) -> str: ...


class TurnBased:
    """The step protocol of a turn-based game, from its ``current_player``, ``legal_mask``, ``step``
    and move names: one seat pends, its move is recorded by name and stepped by name."""

    simultaneous = False

    def pending_players(self, game: Any) -> list[int]:
        return [self.current_player(game)]

    def seat_mask(self, game: Any, seat: int) -> np.ndarray:
        return self.legal_mask(game)

    def move_record(self, game: Any, seat: int, action: Any) -> str:
        return self.move_name(action)

    def step_joint(self, game: Any, moves: dict[int, Any]) -> None:
        (move,) = moves.values()
        self.step(game, move)

    def describe_move(self, move: str) -> str:
        return move


def step_entry(adapter: GameAdapter, per_seat: dict[int, Any], num_seats: int) -> Any:
    """What one step adds to a game record's per-step lists (``moves``, ``llm_notes``): the mover's entry
    in a turn-based game; in a simultaneous one a list with each seat's entry (None: not asked).

    >>> step_entry(get_adapter("splendor"), {1: "pass"}, 2), step_entry(get_adapter("space-conquest"), {1: 3}, 2)
    ('pass', [None, 3])
    """
    if adapter.simultaneous:
        return [per_seat.get(s) for s in range(num_seats)]
    (entry,) = per_seat.values()
    return entry


def entry_moves(adapter: GameAdapter, game: Any, entry: Any) -> dict[int, Any]:
    """A recorded step's moves by seat (``step_entry`` read back), for ``step_joint``."""
    if adapter.simultaneous:
        return {s: move for s, move in enumerate(entry) if s in adapter.pending_players(game)}
    return {adapter.pending_players(game)[0]: entry}


def policy_game(game: str) -> str:
    """The policy registry's name of an arena game: ``policy_game("space-conquest") == "space_conquest"``."""
    return game.replace("-", "_")


class SplendorAdapter(TurnBased):
    """Splendor through ``SplendorGame``; modules are imported on first use so listing games stays cheap."""

    name = "splendor"
    player_counts = (2, 3, 4)
    game_options: tuple[str, ...] = ()  # the ply cap is the arena's own max_plies

    @property
    def default_max_plies(self) -> int:
        from tabletop_rl.games.splendor.rules import DEFAULT_MAX_PLIES
        return DEFAULT_MAX_PLIES

    def new_game(self, seed: int, num_players: int, max_plies: int | None = None) -> Any:
        from tabletop_rl.games.splendor.game import SplendorGame
        return SplendorGame(num_players, seed=seed, max_plies=max_plies)

    def current_player(self, game: Any) -> int:
        return game.current_player

    def legal_mask(self, game: Any) -> np.ndarray:
        return game.legal_mask()

    def observation(self, game: Any, seat: int) -> np.ndarray:
        from tabletop_rl.games.splendor.observe import observe
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
        from tabletop_rl.games.splendor.actions import action_name
        return action_name(action)

    def move_id(self, name: str) -> int:
        from tabletop_rl.games.splendor.actions import action_id
        return action_id(name)

    def explain_illegal(self, game: Any, action: int) -> str:
        return game.explain_illegal(action)

    def to_json(self, game: Any) -> str:
        return game.to_json()

    def from_json(self, text: str | dict) -> Any:
        from tabletop_rl.games.splendor.game import SplendorGame
        return SplendorGame.from_json(text)

    def render(self, game: Any, viewer: int | None = None, color: bool = False) -> str:
        from tabletop_rl.games.splendor.render import render_ansi
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


class KlaverjasAdapter(TurnBased):
    """Klaverjas as a two-"player" game of partnerships: arena player 0 is the N-S team (table seats 0
    and 2), player 1 the E-W team (seats 1 and 3); one policy plays both seats of its team.

    A game is a match of ``deals`` deals (the state row of ``klaverjas.rules``); the result is by match
    score, equal scores shared. ``current_player`` is the team to act; ``observation`` and ``info``
    are those of the team's seat that is to act, and ``info["state"]`` is that seat's view: the other
    hands and the dealing RNG are blanked, so no policy can read a hidden card.

    >>> adapter = KlaverjasAdapter()
    >>> game = adapter.new_game(seed=3, num_players=2)
    >>> adapter.current_player(game), adapter.move_name(32), adapter.move_id("10H")
    (0, 'trump:C', 19)
    """

    name = "klaverjas"
    player_counts = (2,)
    default_max_plies = None  # every deal ends after 8 tricks
    game_options = ("deals", "rules", "trump_selection", "all_pass", "first_lead", "pit_for_defenders", "kraken",
                    "target", "quartet_values", "stuk_mode", "amsterdam_undertrump_vs_opponent")  # options_row's

    def __init__(self, deals: int = 1, **options: Any) -> None:
        """``options``: further match options of ``klaverjas.rules.options_row`` (rules, kraken, target, ...)."""
        from tabletop_rl.games.klaverjas.rules import options_row
        self.deals, self.options = deals, options
        options_row(deals=deals, **options)  # checks them

    def new_game(self, seed: int, num_players: int, max_plies: int | None = None) -> np.ndarray:
        from tabletop_rl.games.klaverjas.rules import new_state
        return new_state(seed=seed, deals=self.deals, **self.options)

    def current_player(self, game: np.ndarray) -> int:
        from tabletop_rl.games.klaverjas import rules as R
        return int(game[R.CURRENT]) % 2

    def legal_mask(self, game: np.ndarray) -> np.ndarray:
        from tabletop_rl.games.klaverjas import rules as R
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        R.legal_mask(game, mask)
        return mask

    def observation(self, game: np.ndarray, seat: int) -> np.ndarray:
        from tabletop_rl.envs.klaverjas_aec import observe
        return observe(game, self._acting_seat(game, seat))

    def info(self, game: np.ndarray, seat: int) -> dict[str, Any]:
        from tabletop_rl.games.klaverjas import rules as R
        acting = self._acting_seat(game, seat)
        return {"state": R.seat_view(game, acting), "player": acting}

    def step(self, game: np.ndarray, action: int | str) -> None:
        from tabletop_rl.games.klaverjas import rules as R
        action = self.move_id(action) if isinstance(action, str) else int(action)
        if not R.checked_step(game, action, self.legal_mask(game)):
            raise ValueError(self.explain_illegal(game, action))

    def is_over(self, game: np.ndarray) -> bool:
        from tabletop_rl.games.klaverjas import rules as R
        return int(game[R.PHASE]) == R.OVER

    def is_truncated(self, game: np.ndarray) -> bool:
        return False

    def scores(self, game: np.ndarray) -> list[int]:
        """Match score per team (N-S, E-W)."""
        from tabletop_rl.games.klaverjas import rules as R
        return [int(game[R.MATCH_SCORE]), int(game[R.MATCH_SCORE + 1])]

    def winners(self, game: np.ndarray) -> list[int]:
        """The team(s) with the higher match score once the match is over; both on a tie."""
        if not self.is_over(game):
            return []
        return [t for t, place in enumerate(self.ranks(game)) if place == 0]

    def ranks(self, game: np.ndarray) -> list[int]:
        return dense_ranks([-s for s in self.scores(game)])

    def move_name(self, action: int) -> str:
        from tabletop_rl.games.klaverjas import rules as R
        if action < R.NUM_CARDS:
            return R.card_name(action)
        if action < R.PASS:
            return f"trump:{R.SUITS[action - R.NAME_TRUMP]}"
        return {R.PASS: "pass", R.ACCEPT: "accept", R.KRAAK: "kraak", R.REKRAAK: "rekraak"}[action]

    def move_id(self, name: str) -> int:
        from tabletop_rl.games.klaverjas import rules as R
        text = name.strip()
        words = {"pass": R.PASS, "accept": R.ACCEPT, "kraak": R.KRAAK, "rekraak": R.REKRAAK}
        if text.lower() in words:
            return words[text.lower()]
        if text.lower().startswith("trump:"):
            return R.NAME_TRUMP + R.suit_id(text[6:].upper())
        try:
            return R.card_id(text)
        except ValueError:
            raise ValueError(f"unknown klaverjas move {name!r}; moves are cards (10H, JS), trump:C|D|H|S, "
                             "pass, accept, kraak, rekraak") from None

    def explain_illegal(self, game: np.ndarray, action: int) -> str:
        legal = [self.move_name(int(a)) for a in np.flatnonzero(self.legal_mask(game))]
        return (f"{self.move_name(action)} is not legal for seat {self._acting_seat(game, 0)} now "
                f"(legal: {', '.join(legal) or 'none, the match is over'})")

    def to_json(self, game: np.ndarray) -> str:
        import json
        return json.dumps({"game": self.name, "state": [int(v) for v in game]})

    def from_json(self, text: str | dict) -> np.ndarray:
        import json

        from tabletop_rl.games.klaverjas import rules as R
        data = json.loads(text) if isinstance(text, str) else text
        row = data.get("state") if isinstance(data, dict) else None
        if not isinstance(row, list) or len(row) != R.STATE_SIZE:
            raise ValueError(f"klaverjas position: 'state' must be a list of {R.STATE_SIZE} integers")
        return np.array(row, R.STATE_DTYPE)

    def render(self, game: np.ndarray, viewer: int | None = None, color: bool = False) -> str:
        """The table as text; ``viewer`` (a team) sees the hand of its seat to act, else its first seat's."""
        from tabletop_rl.envs.klaverjas_aec import render_text
        return render_text(game, None if viewer is None else self._acting_seat(game, viewer))

    def rules_help(self) -> str:
        return KLAVERJAS_MOVE_HELP

    @staticmethod
    def _acting_seat(game: np.ndarray, team: int) -> int:
        """The table seat of ``team`` to act now, or the team's first seat when the other team is to act."""
        from tabletop_rl.games.klaverjas import rules as R
        current = int(game[R.CURRENT])
        return current if current % 2 == team else team


KLAVERJAS_MOVE_HELP = """\
Move names: a card as rank+suit (7 8 9 10 J Q K A, suits C D H S): 10H, JS, AC.
Trump choice: trump:C / trump:D / trump:H / trump:S, pass, accept (the proposed suit).
Kraken (when on): kraak (a defender doubles the deal), rekraak (a maker redoubles), pass.
Seats N E S W are 0 1 2 3; N-S (0+2) is team 0, E-W (1+3) team 1."""


class SpaceConquestAdapter:
    """Space Conquest: both seats order at once, so a step is a whole turn. Each seat's policy gets its
    own fog-of-war observation and mask and ``info={"game": fog_copy, "player": seat}`` (the game as
    that seat knows it). A seat's move is recorded as JSON orders (an RL action is decoded first), and
    the turn's record ``[orders of P0, orders of P1]`` replays it exactly, bad orders and their errors
    included. ``max_plies`` is the turn cap, which the rules score (RU owned, then ships), so no game
    is truncated; ``scores`` are the RU each seat owns at the end; a draw ranks both seats first and
    has no winners.

    >>> adapter = SpaceConquestAdapter()
    >>> game = adapter.new_game(seed=3, num_players=2, max_plies=5)
    >>> adapter.pending_players(game), adapter.describe_move({"moves": [{"from": "A", "to": "C", "ships": 2}]})
    ([0, 1], 'A->C 2')
    """

    name = "space-conquest"
    player_counts = (2,)
    simultaneous = True
    game_options = ("loss_model",)  # the turn cap is the arena's max_plies

    def __init__(self, loss_model: str = "flat") -> None:
        from tabletop_rl.games.space_conquest.game import check_settings
        check_settings(self.default_max_plies, loss_model)
        self.loss_model = loss_model

    @property
    def default_max_plies(self) -> int:
        from tabletop_rl.games.space_conquest.rules import DEFAULT_MAX_TURNS
        return DEFAULT_MAX_TURNS

    def new_game(self, seed: int, num_players: int, max_plies: int | None = None) -> Any:
        from tabletop_rl.games.space_conquest.game import SpaceConquestGame
        return SpaceConquestGame(seed, self.default_max_plies if max_plies is None else max_plies, self.loss_model)

    def pending_players(self, game: Any) -> list[int]:
        return [] if game.is_over else [0, 1]

    def seat_mask(self, game: Any, seat: int) -> np.ndarray:
        from tabletop_rl.games.space_conquest.observe import encode
        return encode(game.state, seat)[1]

    def observation(self, game: Any, seat: int) -> np.ndarray:
        from tabletop_rl.games.space_conquest.observe import encode
        return encode(game.state, seat)[0]

    def info(self, game: Any, seat: int) -> dict[str, Any]:
        from tabletop_rl.games.space_conquest.baselines import policy_info
        return policy_info(game, seat)

    def move_record(self, game: Any, seat: int, action: Any) -> Any:
        from tabletop_rl.games.space_conquest.baselines import as_orders
        return as_orders(game, seat, action)

    def step_joint(self, game: Any, moves: dict[int, Any]) -> None:
        game.step(moves.get(0), moves.get(1))

    def describe_move(self, move: Any) -> str:
        from tabletop_rl.games.space_conquest.actions import describe_orders
        return describe_orders(move)

    def is_over(self, game: Any) -> bool:
        return game.is_over

    def is_truncated(self, game: Any) -> bool:
        return False

    def scores(self, game: Any) -> list[int]:
        return [game.owned_ru(p) for p in range(2)]

    def winners(self, game: Any) -> list[int]:
        return [] if game.winner is None else [game.winner]

    def ranks(self, game: Any) -> list[int]:
        return [0, 0] if game.winner is None else [int(p != game.winner) for p in range(2)]

    def to_json(self, game: Any) -> str:
        return game.to_json()

    def from_json(self, text: str | dict) -> Any:
        from tabletop_rl.games.space_conquest.game import SpaceConquestGame
        return SpaceConquestGame.from_json(text)

    def render(self, game: Any, viewer: int | None = None, color: bool = False) -> str:
        from tabletop_rl.ui.space_conquest_play import render_text
        return render_text(game, viewer)

    def rules_help(self) -> str:
        from tabletop_rl.ui.space_conquest_play import HELP
        return HELP


GAMES: dict[str, Callable[[], GameAdapter]] = {"splendor": SplendorAdapter, "klaverjas": KlaverjasAdapter,
                                               "space-conquest": SpaceConquestAdapter}


def get_adapter(game: str, options: Mapping[str, Any] | None = None) -> GameAdapter:
    """The adapter for ``game`` with its game ``options`` (the adapter's ``game_options``, e.g. klaverjas
    ``{"rules": "amsterdam", "deals": 16}``); ``ValueError`` naming the known games or the bad option.

    >>> get_adapter("klaverjas", {"deals": 4}).deals
    4
    >>> get_adapter("splendor", {"deals": 4})
    Traceback (most recent call last):
    ValueError: splendor has no game option 'deals' (it has none)
    """
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; the arena knows: {', '.join(sorted(GAMES))}")
    adapter = GAMES[game]
    options = dict(options or {})
    for key in options:
        if key not in adapter.game_options:
            known = ", ".join(adapter.game_options) or "none"
            raise ValueError(f"{game} has no game option {key!r} (it has {known})")
    return adapter(**options)

