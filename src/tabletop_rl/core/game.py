"""The game contract: what every game gives the envs, the arena, terminal play, replays and the LLM harness.

A game is one object per match (``SplendorGame``, ``KlaverjasGame``, ``SpaceConquestGame``), made by the
class method ``new(seed, num_players, max_plies, **options)`` and restored by ``from_json``. Nothing above
the ``games`` layer reaches into a game's own module: it speaks ``Game`` only, so a new game plugs in by
filling ``games/<name>/`` with the same files as its neighbours and a record naming its class (``games.registry``).

Seats and players. A *seat* acts (it gets an observation, a mask and a turn); a *player* is scored and is
controlled by one policy. In Splendor and Space Conquest they are the same; in Klaverjas four seats form
two players (the partnerships N-S and E-W), so ``player_of(seat)`` is ``seat % 2``. ``scores``,
``winners`` and ``ranks`` are per player.

Steps. Every game is played through one protocol: the seats in ``pending_seats()`` answer (each from
its own ``observe(seat)``, ``seat_mask(seat)`` and ``policy_info(seat)``), each answer becomes a
``move_record`` (what a results file keeps), and ``step_joint`` plays the records of one step together.
A turn-based game has at most one pending seat and gets the protocol from ``TurnBased``; a game of
simultaneous moves (``simultaneous = True``) writes it itself.

>>> from tabletop_rl.games import game_class
>>> game = game_class("splendor").new(seed=7, num_players=2)
>>> game.pending_seats(), game.move_name(0), isinstance(game, Game)
([0], 'take:white,blue,green', True)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from tabletop_rl.core.text import as_index, quote

__all__ = ["FUSED_MASK_TYPES", "Game", "IllegalActionError", "SeatView", "TurnBased", "dense_ranks",
           "entry_moves", "policy_answer", "step_entry", "view_game_and_seat"]

#: The mask types a game's fused steps write (bool, int8), by every name numpy takes for them, to their dtype: a
#: lookup, not a conversion, on every step. Any other type takes the contract's default steps.
FUSED_MASK_TYPES = {bool: np.dtype(np.bool_), np.bool_: np.dtype(np.bool_), np.dtype(np.bool_): np.dtype(np.bool_),
                    np.int8: np.dtype(np.int8), np.dtype(np.int8): np.dtype(np.int8)}


class IllegalActionError(ValueError):
    """The one error for a move the rules do not allow now, in every game; the game is left unchanged.

    ``game`` (a name) and ``seat`` say where, ``reason`` says why; the message joins the three.

    >>> e = IllegalActionError("take2:red needs 4 red tokens in the bank", game="splendor", seat=1)
    >>> str(e), e.seat
    ('splendor, seat 1: take2:red needs 4 red tokens in the bank', 1)
    """

    def __init__(self, reason: str, *, game: str | None = None, seat: int | None = None) -> None:
        self.reason, self.game, self.seat = reason, game, seat
        where = ", ".join(part for part in (game, None if seat is None else f"seat {seat}") if part)
        super().__init__(f"{where}: {reason}" if where else reason)


_VIEW_KEYS = ("seat", "player", "game")


@dataclass(frozen=True, eq=False)
class SeatView(Mapping[str, Any]):
    """What a policy is handed besides its observation and mask (``Game.policy_info``), the same in every game:
    ``seat`` (the one to answer), ``player`` (the one scored for it: the partnership in Klaverjas) and ``game``,
    an information-set copy of the match as that seat knows it.

    The copy holds nothing the seat cannot see: hidden cards are replaced by stand-ins that depend only on what
    the seat knows (Splendor: the unseen cards in order of id; Klaverjas: the other hands empty; Space Conquest:
    the fog copy), and the seed and random stream are cleared. So two matches that differ only in what the
    seat cannot see give equal views, and nothing a policy does to its view reaches the match: a policy never
    holds the live game. A search policy re-deals the hidden parts itself (``game.seat_view(seat, seed)``).

    It reads as a mapping too (``info["game"]``, ``info.get("player")``), with exactly these three keys.

    >>> from tabletop_rl.games import game_class
    >>> live = game_class("splendor").new(seed=7, num_players=2)
    >>> view = live.policy_info(0)
    >>> view.seat, view["player"], view.game is live, sorted(view)
    (0, 0, False, ['game', 'player', 'seat'])
    """

    seat: int
    player: int
    game: Any

    def __getitem__(self, key: str) -> Any:
        if key not in _VIEW_KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_VIEW_KEYS)

    def __len__(self) -> int:
        return len(_VIEW_KEYS)


def view_game_and_seat(info: Mapping[str, Any], policy: str) -> tuple[Any, int]:
    """The game and seat of a policy's ``info``: a ``SeatView``, or a mapping with its keys (where ``seat`` is
    missing, ``player`` names the seat, as in a hand-built ``{"game": ..., "player": ...}``); ``ValueError``
    naming ``policy`` when either is missing.

    >>> view_game_and_seat({"game": "g", "player": 1}, "greedy")
    ('g', 1)
    """
    game, seat = info.get("game"), info.get("seat", info.get("player"))
    if game is None or seat is None:
        raise ValueError(f"{policy} needs info=game.policy_info(seat), the seat's view, got keys {sorted(info)}")
    return game, as_index(seat, "the view's seat")


@runtime_checkable
class Game(Protocol):
    """One match of a game, as everything above the games layer sees it (module docstring)."""

    __slots__ = ()  # a game that inherits the contract (through ``TurnBased``) keeps its own slots, and no dict

    name: ClassVar[str]                     # its one name (its record's, the results files'), e.g. "space_conquest"
    player_counts: ClassVar[tuple[int, ...]]
    option_names: ClassVar[tuple[str, ...]]  # keyword options of ``new`` besides the ply cap
    default_max_plies: ClassVar[int | None]
    simultaneous: ClassVar[bool]

    @classmethod
    def new(cls, seed: int, num_players: int, max_plies: int | None = None, **options: Any) -> Game:
        """A freshly dealt match; ``ValueError`` naming a bad value of an option the game has, ``TypeError`` (as for
        any Python call) for an option it does not have; ``games.check_options`` names both in one ``ValueError``,
        as the envs, the arena and the CLI do before they call this."""
        ...

    @classmethod
    def from_json(cls, text: str | dict) -> Game:
        """The match ``to_json`` wrote; ``ValueError`` (one line, naming the field) for anything else."""
        ...

    @staticmethod
    def rules_help() -> str:
        """How moves are written, for a person at the terminal."""
        ...

    @property
    def num_seats(self) -> int: ...
    @property
    def num_players(self) -> int: ...
    def player_of(self, seat: int) -> int: ...

    def pending_seats(self) -> list[int]:
        """The seats that answer in the next step: one in a turn-based game, none once it is over."""
        ...

    def seat_mask(self, seat: int) -> np.ndarray:
        """``bool`` mask of ``seat``'s legal answers (all False when it is not pending)."""
        ...

    def observe(self, seat: int) -> np.ndarray:
        """``seat``'s observation vector: what it may see, nothing hidden from it."""
        ...

    def policy_info(self, seat: int) -> SeatView:
        """What a policy gets besides observation and mask: ``seat``'s view (``SeatView``), a copy holding only
        what that seat knows, equal for two matches that differ only in what it cannot see."""
        ...

    def seat_view(self, seat: int, seed: int) -> Game:
        """A copy for search: what ``seat`` cannot see re-dealt from ``seed`` consistently with what it knows
        (a game that cannot re-deal gives its information-set copy)."""
        ...

    def move_record(self, seat: int, action: Any) -> Any:
        """``seat``'s answer as it is recorded and replayed (a move name, orders as JSON data)."""
        ...

    def step_joint(self, moves: dict[int, Any]) -> None:
        """Play the records of one step; ``IllegalActionError`` leaves the game as it was."""
        ...

    def describe_move(self, move: Any) -> str: ...
    def to_json(self) -> str: ...

    @property
    def is_over(self) -> bool: ...
    @property
    def is_truncated(self) -> bool: ...
    @property
    def scores(self) -> list[int]: ...
    @property
    def winners(self) -> list[int]: ...
    @property
    def ranks(self) -> list[int]: ...

    def render(self, viewer: int | None = None, color: bool = False) -> str:
        """The match as text for player ``viewer``, who sees only what that player may know; ``None`` is a
        spectator, who plays no part: each game says what a spectator sees (its docs page)."""
        ...


class TurnBased(Game):
    """A turn-based ``Game``: the step protocol from the game's ``current_player``, ``legal_mask``, ``step`` and
    move names (one seat pends, its move is recorded by name and stepped by name), and what the AEC and
    Gymnasium envs (``tabletop_rl.envs``) need of it: the action count and observation space, reward modes and
    end rewards, the game's own random stream (for the next episode's seed and for random opponents) and random
    play up to a seat's turn. A game may replace the plain-Python ``play_random_until`` and ``step_vs_random``
    with faster ones of its core.
    """

    __slots__ = ()
    name: ClassVar[str]
    simultaneous: ClassVar[bool] = False
    num_actions: ClassVar[int]
    render_modes: ClassVar[tuple[str, ...]] = ("ansi", "human")
    #: ``"win"``: zero-sum end rewards only; ``"score"``: the game's score as reward (``end_rewards``), and
    #: with ``score_scale`` set, the mover's score gained on each step divided by it as well.
    reward_modes: ClassVar[tuple[str, ...]] = ("win", "score")
    score_scale: ClassVar[float | None] = None

    # what the game itself provides besides the contract
    @staticmethod
    def observation_space(num_players: int) -> Any:
        raise NotImplementedError

    @property
    def current_player(self) -> int:
        """The seat to act."""
        raise NotImplementedError

    def legal_mask(self) -> np.ndarray:
        raise NotImplementedError

    def step(self, action: int | str) -> None:
        raise NotImplementedError

    def move_name(self, action: int) -> str:
        raise NotImplementedError

    def end_rewards(self, mode: str = "win") -> list[float]:
        """Each seat's reward at the end, in reward mode ``mode``."""
        raise NotImplementedError

    def random_below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` from the game's own random stream."""
        raise NotImplementedError

    def reseed(self, seed: int) -> None:
        """Restart the game's own random stream from ``seed`` (an episode started from a saved position)."""
        raise NotImplementedError

    def render_rgb(self, viewer: int | None = None) -> np.ndarray:
        """The board as an RGB image, for a game whose ``render_modes`` list ``rgb_array``."""
        raise NotImplementedError

    # the protocol
    @property
    def num_seats(self) -> int:
        return self.num_players

    def player_of(self, seat: int) -> int:
        return seat

    def pending_seats(self) -> list[int]:
        return [] if self.is_over else [self.current_player]

    def seat_mask(self, seat: int, dtype: Any = np.bool_) -> np.ndarray:
        mask = self.legal_mask().astype(dtype, copy=False)
        return mask if seat == self.current_player else np.zeros_like(mask)

    def move_record(self, seat: int, action: Any) -> str:
        return self.move_name(action)

    def step_joint(self, moves: dict[int, Any]) -> None:
        (move,) = moves.values()
        self.step(move)

    def describe_move(self, move: Any) -> str:
        return str(move)

    # what a person types (terminal play) and why a move is refused; a game may read more forms, or say more
    def move_id(self, name: str, /) -> int:
        """The id of the move named ``name`` (``move_name``'s inverse); ``ValueError`` for text that names none."""
        for action in range(self.num_actions):
            if self.move_name(action) == name:
                return action
        raise ValueError(f"{quote(name)} is no {self.name} move (moves are named like {self.move_name(0)})")

    def explain_illegal(self, action: int) -> str:
        """Why ``action`` cannot be played now, in one line naming the legal moves."""
        legal = [self.move_name(int(a)) for a in np.flatnonzero(self.legal_mask())]
        shown = (self.move_name(action) if 0 <= action < self.num_actions
                 else f"action {quote(action)} (ids are 0..{self.num_actions - 1})")
        return f"{shown} is not legal now (legal: {', '.join(legal) or 'none, the game is over'})"

    # random play, for envs whose opponents are random
    def play_random_until(self, seat: int) -> None:
        """Uniformly random legal moves, from the game's own random stream, for every seat but ``seat``
        until ``seat`` is to act or the game ends."""
        while not self.is_over and self.current_player != seat:
            legal = np.flatnonzero(self.legal_mask())
            self.step(int(legal[self.random_below(len(legal))]))

    def step_vs_random(self, action: int | str, seat: int) -> bool:
        """``action`` for the seat to act, then random moves up to ``seat``'s next turn; False (and nothing
        played) when ``action`` is illegal."""
        try:
            self.step(action)
        except IllegalActionError:
            return False
        self.play_random_until(seat)
        return True

    # a step and what the envs read after it; a game may fuse each into one call of its core
    def step_observe(self, action: int | str, dtype: Any = np.bool_) -> tuple[np.ndarray, np.ndarray]:
        """``step``, then the observation and legal mask (``seat_mask``, as ``dtype``) of the seat to act next."""
        self.step(action)
        seat = self.current_player
        return self.observe(seat), self.seat_mask(seat, dtype)

    def step_vs_random_observe(self, action: int | str, seat: int, dtype: Any = np.bool_
                               ) -> tuple[np.ndarray, np.ndarray] | None:
        """``step_vs_random``, then ``seat``'s observation and legal mask (as ``dtype``); None (nothing played)
        when ``action`` is illegal."""
        if not self.step_vs_random(action, seat):
            return None
        return self.observe(seat), self.seat_mask(seat, dtype)


def dense_ranks(keys: list[Any]) -> list[int]:
    """Place of each key, 0 for the smallest, equal keys sharing a place.

    >>> dense_ranks([(-15, 10), (-12, 8), (-15, 10)])
    [0, 1, 0]
    """
    order = sorted(set(keys))
    return [order.index(k) for k in keys]


def policy_answer(game: Game, seat: int, policy: Any) -> Any:
    """``policy``'s move for ``seat``, decided from what that seat may see (its observation, mask and
    ``policy_info``) and written as the results files keep it (``move_record``), ready for ``step_joint``."""
    return game.move_record(seat, policy.act(game.observe(seat), game.seat_mask(seat), game.policy_info(seat)))


def step_entry(game: Game, per_seat: dict[int, Any]) -> Any:
    """What one step adds to a game record's per-step lists (``moves``, ``llm_notes``): the mover's entry in
    a turn-based game; in a simultaneous one a list with each seat's entry (None: not asked).

    >>> from tabletop_rl.games import game_class
    >>> step_entry(game_class("splendor").new(1, 2), {1: "pass"})
    'pass'
    >>> step_entry(game_class("space_conquest").new(1, 2), {1: 3})
    [None, 3]
    """
    if game.simultaneous:
        return [per_seat.get(s) for s in range(game.num_seats)]
    (entry,) = per_seat.values()
    return entry


def entry_moves(game: Game, entry: Any) -> dict[int, Any]:
    """A recorded step's moves by seat (``step_entry`` read back), for ``step_joint``; ``IllegalActionError``
    for a step after the game's end, or a step of simultaneous moves that is not one entry per seat.

    >>> from tabletop_rl.games import game_class
    >>> entry_moves(game_class("space_conquest").new(1, 2), "pass")
    Traceback (most recent call last):
    tabletop_rl.core.game.IllegalActionError: space_conquest: a turn must list one entry per seat (2), not 'pass'
    """
    pending = game.pending_seats()
    if not pending:
        raise IllegalActionError("the game is over", game=game.name)
    if not game.simultaneous:
        return {pending[0]: entry}
    if not isinstance(entry, list) or len(entry) != game.num_seats:
        raise IllegalActionError(f"a turn must list one entry per seat ({game.num_seats}), not {quote(entry)}",
                                 game=game.name)
    return {s: move for s, move in enumerate(entry) if s in pending}
