"""``SpaceConquestGame``: a friendly Python object over one state row, with JSON orders, save/load
and replay.

>>> g = SpaceConquestGame(seed=4)
>>> mine = g.home_letter(0)
>>> checks = g.step({"moves": [{"from": mine, "to": g.nearest_letter(mine), "ships": 2}]}, None)
>>> checks[0].ok, g.turn, g.star(g.home(0))["ships"]   # 4 - 2 sent + 4 produced
(True, 2, 6)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np

from tabletop_rl.core.game import SeatView, dense_ranks
from tabletop_rl.core.seeding import check_seed, fresh_seed
from tabletop_rl.core.text import quote
from tabletop_rl.games.space_conquest import observe as O
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.actions import (
    MOVE_HELP,
    OrderCheck,
    check_orders,
    describe_orders,
    event_dict,
    move_dict,
    star_index,
)
from tabletop_rl.games.space_conquest.render import render_text

__all__ = ["SpaceConquestGame", "parse_save"]


def parse_save(text: str | bytes) -> Any:
    """The JSON of a save's text; ``ValueError`` in one line for text that is not JSON (or nests too deeply)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("save is not valid JSON: nested too deeply") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"save is not valid JSON: {e.msg} at position {e.pos}") from None

_SAVE_FORMAT = "space_conquest/1"
_Moves = list[tuple[int, int, int]]


def _check_settings(max_turns: Any, loss_model: Any) -> None:
    """``ValueError`` naming a bad turn cap or loss model."""
    if isinstance(max_turns, bool) or not isinstance(max_turns, (int, np.integer)) or not 1 <= max_turns < 2**63:
        raise ValueError(f"max_turns must be a positive integer below 2**63, got {quote(max_turns)}")
    if loss_model not in R.LOSS_MODELS:
        raise ValueError(f"loss_model must be one of {', '.join(R.LOSS_MODELS)}, got {quote(loss_model)}")


class SpaceConquestGame:
    """One two-player game. ``step(orders_0, orders_1)`` plays a turn from both seats' JSON orders.

    ``seed`` None draws fresh entropy; ``max_turns`` is the turn cap (scored by RU owned, then ships);
    ``loss_model`` ``"flat"`` (2 % per fleet per turn, the default) or ``"nlogn"``.

    As a ``Game`` (``tabletop_rl.core.game``) both seats order at once, so a step is a whole turn. Each
    seat's policy gets its own fog-of-war observation and mask and ``info={"game": fog_copy, "player":
    seat}`` (the game as that seat knows it). A seat's move is recorded as JSON orders (an RL action is
    decoded first), and the turn's record ``[orders of P0, orders of P1]`` replays it exactly, bad orders and
    their errors included. ``max_plies`` of ``new`` is the turn cap, which the rules score (RU owned, then
    ships), so no game is truncated; ``scores`` are the RU each seat owns at the end; a draw ranks both
    seats first and has no winners.
    """

    name = "space_conquest"
    player_counts = (2,)
    option_names = ("loss_model",)  # the turn cap is new's max_plies
    default_max_plies = R.DEFAULT_MAX_TURNS
    simultaneous = True
    num_seats = num_players = R.NUM_PLAYERS

    def __init__(self, seed: int | None = None, max_turns: int = R.DEFAULT_MAX_TURNS,
                 loss_model: str = "flat") -> None:
        _check_settings(max_turns, loss_model)
        self._deal(fresh_seed() if seed is None else check_seed(seed), int(max_turns), loss_model)

    def _deal(self, seed: int, max_turns: int, loss_model: str) -> None:
        """Start the game on the map of ``seed`` as it is, all 64 bits: a save from before seeds were folded to
        63 bits (half of those from a game made without a seed) keeps its map, in its copies and replays too."""
        self.seed = seed
        self.max_turns = max_turns
        self.loss_model = loss_model
        self.state, self.log = R.new_game(self.seed, self.max_turns, R.LOSS_MODELS.index(loss_model))
        self._history: list[tuple[np.ndarray, np.ndarray]] = []  # per turn: the orders that executed, counts
        self.errors: list[list[dict[str, Any]]] = [[], []]  # last turn's order errors, per seat
        self._orders = np.zeros((R.NUM_PLAYERS, R.MAX_ORDERS, 3), np.int64)
        self._counts = np.zeros(R.NUM_PLAYERS, np.int64)

    @classmethod
    def new(cls, seed: int, num_players: int = 2, max_plies: int | None = None,
            loss_model: str = "flat") -> SpaceConquestGame:
        """The contract's constructor: ``max_plies`` is the turn cap (None: the default)."""
        if num_players != R.NUM_PLAYERS:
            raise ValueError(f"space_conquest is played by 2 players, got {quote(num_players)}")
        return cls(seed, R.DEFAULT_MAX_TURNS if max_plies is None else max_plies, loss_model)

    @classmethod
    def _dealt(cls, seed: int, max_turns: int, loss_model: str) -> SpaceConquestGame:
        """The game on the map of ``seed`` as it is (``_deal``), with settings checked already."""
        game = cls.__new__(cls)
        game._deal(seed, max_turns, loss_model)
        return game

    @staticmethod
    def rules_help() -> str:
        return MOVE_HELP

    # --- the contract ------------------------------------------------------------------
    def player_of(self, seat: int) -> int:
        return seat

    def pending_seats(self) -> list[int]:
        return [] if self.is_over else [0, 1]

    def seat_mask(self, seat: int) -> np.ndarray:
        return O.encode(self.state, seat)[1]

    def observe(self, seat: int) -> np.ndarray:
        return O.encode(self.state, seat)[0]

    def policy_info(self, seat: int) -> SeatView:
        return O.policy_info(self, seat)

    def seat_view(self, seat: int, seed: int) -> SpaceConquestGame:
        """The fog copy of ``seat`` (``observe.fog_copy``): what it knows, for reading, not for playing."""
        return O.fog_copy(self, seat)

    def move_record(self, seat: int, action: Any) -> Any:
        return O.as_orders(self, seat, action)

    def step_joint(self, moves: dict[int, Any]) -> None:
        self.step(moves.get(0), moves.get(1))

    @staticmethod
    def describe_move(move: Any) -> str:
        return describe_orders(move)

    @property
    def is_truncated(self) -> bool:
        return False

    def random_below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` from the game's own random stream (the next episode's seed)."""
        return int(R.random_below(self.state, n))

    @property
    def scores(self) -> list[int]:
        return [self.owned_ru(p) for p in range(R.NUM_PLAYERS)]

    @property
    def winners(self) -> list[int]:
        return [] if self.winner is None else [self.winner]

    @property
    def ranks(self) -> list[int]:
        return [0, 0] if self.winner is None else dense_ranks([int(p != self.winner) for p in range(R.NUM_PLAYERS)])

    def render(self, viewer: int | None = None, color: bool = False) -> str:
        """The map and turn report of ``viewer`` (its fog of war), or a spectator's view (None)."""
        return render_text(self, viewer)

    # --- playing ----------------------------------------------------------------------
    def check(self, player: int, orders: Any) -> OrderCheck:
        """Validate ``orders`` for ``player`` without playing them (``None``: no moves)."""
        return check_orders(self.state, player, {"moves": []} if orders is None else orders)

    def step(self, orders_0: Any, orders_1: Any) -> list[OrderCheck]:
        """Play one turn from both seats' orders (JSON form, ``None`` = no moves). Bad moves are
        skipped and reported in ``errors`` for the next turn; returns each seat's ``OrderCheck``."""
        self._require_playing()
        checks = [self.check(0, orders_0), self.check(1, orders_1)]
        self.play_moves([c.accepted for c in checks])
        self.errors = [c.errors for c in checks]
        return checks

    def play_moves(self, moves: list[_Moves]) -> None:
        """Play one turn from already validated moves ``[(origin, destination, ships), ...]`` per seat."""
        self._require_playing()
        self._set_orders(moves)
        self.errors = [[], []]
        R.advance(self.state, self.log, self._orders, self._counts)
        self.record_orders()

    def _set_orders(self, moves: list[_Moves]) -> None:
        for p, seat_moves in enumerate(moves):
            self._counts[p] = len(seat_moves)
            for j, move in enumerate(seat_moves):
                self._orders[p, j] = move

    def record_orders(self) -> None:
        """Keep the orders just played (in ``_orders``/``_counts``) for saving and replay."""
        width = int(self._counts.max())
        self._history.append((self._orders[:, :width].copy(), self._counts.copy()))

    @property
    def history(self) -> list[list[_Moves]]:
        """Per turn played, per seat: the moves that executed, ``(origin, destination, ships)``."""
        return [[[(int(orders[p, j, 0]), int(orders[p, j, 1]), int(orders[p, j, 2])) for j in range(counts[p])]
                 for p in range(R.NUM_PLAYERS)] for orders, counts in self._history]

    def _require_playing(self) -> None:
        if self.is_over:
            raise ValueError("the game is over; start a new one")

    # --- reading ----------------------------------------------------------------------
    @property
    def turn(self) -> int:
        return int(self.state[R.TURN])

    @property
    def is_over(self) -> bool:
        return int(self.state[R.STATUS]) == R.OVER

    @property
    def winner(self) -> int | None:
        """The winning seat, or None while playing or after a draw."""
        w = int(self.state[R.WINNER])
        return w if w in (0, 1) else None

    @property
    def is_draw(self) -> bool:
        return int(self.state[R.WINNER]) == R.DRAW

    @property
    def end_reason(self) -> str | None:
        """``"capture"`` (a home was taken), ``"turn_cap"``, or None while playing."""
        return {R.END_CAPTURE: "capture", R.END_TURN_CAP: "turn_cap"}.get(int(self.state[R.END_REASON]))

    def home(self, player: int) -> int:
        return int(self.state[R.HOMES + player])

    def home_letter(self, player: int) -> str:
        return R.LETTERS[self.home(player)]

    def distance(self, a: int | str, b: int | str) -> int:
        """Chebyshev distance (= turns of travel) between two stars given by index or letter."""
        a, b = (star_index(x) if isinstance(x, str) else int(x) for x in (a, b))
        return int(R.distance(self.state, a, b))

    def nearest_letter(self, letter: str) -> str:
        """The letter of the star nearest to ``letter`` (lowest letter among equals)."""
        s = star_index(letter)
        others = [t for t in range(R.NUM_STARS) if t != s]
        return R.LETTERS[min(others, key=lambda t: (self.distance(s, t), t))]

    def star(self, s: int) -> dict[str, Any]:
        """The true state of star ``s`` (all of it: for referees and tests, not for players)."""
        b = R.star_at(s)
        owner = int(self.state[b + R.S_OWNER])
        return {"letter": R.LETTERS[s], "name": R.STAR_NAMES[s], "x": int(self.state[b + R.S_X]),
                "y": int(self.state[b + R.S_Y]), "ru": int(self.state[b + R.S_RU]),
                "owner": None if owner == R.NOBODY else owner, "ships": int(self.state[b + R.S_SHIPS]),
                "home_of": None if self.state[b + R.S_HOME] < 0 else int(self.state[b + R.S_HOME])}

    def fleets(self) -> list[dict[str, Any]]:
        """Every fleet in hyperspace (true state), in launch order."""
        out = []
        for i in range(int(self.state[R.NUM_FLEETS_AT])):
            f = self.state[R.fleet_at(i):R.fleet_at(i) + R.F_SIZE]
            out.append({"owner": int(f[R.F_OWNER]), **move_dict(f[R.F_ORIGIN], f[R.F_DEST], f[R.F_SHIPS]),
                        "turns_left": int(f[R.F_LEFT]), "distance": int(f[R.F_DIST]),
                        "launched": int(f[R.F_LAUNCHED])})
        return out

    def events(self) -> list[dict[str, Any]]:
        """What happened in the last ``step`` (every event; observe.py filters them per player)."""
        return [event_dict(row) for row in self.log[1:self.log[0, 0] + 1]]

    def tally(self, player: int) -> dict[str, int]:
        """Running totals of ``player``: ships and fleets lost in hyperspace, rebellions, captures."""
        t = self.state[R.TALLY + player * R.T_SIZE:R.TALLY + (player + 1) * R.T_SIZE]
        return {"lost_ships": int(t[R.T_LOST_SHIPS]), "lost_fleets": int(t[R.T_LOST_FLEETS]),
                "rebellions": int(t[R.T_REBELLIONS]), "captures": int(t[R.T_CAPTURES])}

    def owned_ru(self, player: int) -> int:
        return int(R.owned_ru(self.state, player))

    def total_ships(self, player: int) -> int:
        return int(R.total_ships(self.state, player))

    def result(self) -> dict[str, Any]:
        """``{"turn", "over", "winner", "draw", "end", "ru": [..], "ships": [..]}``."""
        return {"turn": self.turn, "over": self.is_over, "winner": self.winner, "draw": self.is_draw,
                "end": self.end_reason, "ru": [self.owned_ru(p) for p in range(2)],
                "ships": [self.total_ships(p) for p in range(2)]}

    # --- copies, saving, replay ----------------------------------------------------------
    def clone(self) -> SpaceConquestGame:
        """An independent copy (a plain copy, not a reload: a reload replays the whole game)."""
        copy = SpaceConquestGame._dealt(self.seed, self.max_turns, self.loss_model)
        copy.state[:], copy.log[:] = self.state, self.log
        copy._history = [(orders.copy(), counts.copy()) for orders, counts in self._history]
        copy.errors = [list(seat) for seat in self.errors]
        return copy

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to go on playing, and to replay the game from its seed."""
        used = R.fleet_at(int(self.state[R.NUM_FLEETS_AT]))
        return {"format": _SAVE_FORMAT, "seed": self.seed, "max_turns": self.max_turns,
                "loss_model": self.loss_model,
                "history": [[[list(move_dict(*m).values()) for m in seat] for seat in turn] for turn in self.history],
                "errors": self.errors, "state": [int(v) for v in self.state[:used]],
                "log": [[int(v) for v in row] for row in self.log[1:self.log[0, 0] + 1]]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text_or_dict: str | dict) -> SpaceConquestGame:
        """Load a saved game; ``ValueError`` naming the first problem in a corrupt save."""
        data = parse_save(text_or_dict) if isinstance(text_or_dict, (str, bytes)) else text_or_dict
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: dict) -> SpaceConquestGame:
        try:
            return cls._from_dict(data)
        except RecursionError:
            raise ValueError("save: nested too deeply") from None

    @classmethod
    def _from_dict(cls, data: dict) -> SpaceConquestGame:
        """Replay the save's seed and history, then require its state and events to be what the replay gives
        (so no edited save loads a game its own moves contradict); order errors are taken as saved."""
        if not isinstance(data, dict) or data.get("format") != _SAVE_FORMAT:
            raise ValueError(f"not a Space Conquest save (expected format {_SAVE_FORMAT!r})")
        missing = {"seed", "max_turns", "loss_model", "history", "errors", "state", "log"} - set(data)
        if missing:
            raise ValueError(f"save is missing {', '.join(sorted(missing))}")
        seed = data["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"save: seed must be an integer from 0 to 2**64 - 1, got {quote(seed)}")
        _check_settings(data["max_turns"], data["loss_model"])
        game = cls._dealt(seed, int(data["max_turns"]), data["loss_model"])
        history = _history_moves(data["history"])
        row, log = _stored_row(data["state"]), _stored_log(data["log"])
        errors = _checked_errors(data["errors"])
        _replay_checked(game, history)
        _require_same(row, game.state, log, game.log)
        game.errors = errors
        return game

    def replay(self) -> Iterator[SpaceConquestGame]:
        """The game again from its seed, one copy per turn (the start first), from ``history``."""
        game = SpaceConquestGame._dealt(self.seed, self.max_turns, self.loss_model)
        yield game.clone()
        for moves in self.history:
            game.play_moves(moves)
            yield game.clone()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SpaceConquestGame) and np.array_equal(self.state, other.state)

    def __repr__(self) -> str:
        return f"SpaceConquestGame(seed={self.seed}, turn={self.turn}, over={self.is_over})"


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_CONTRADICTS = "save does not follow from its seed and moves: "
# Names of the state row's fields for messages, in the order of rules.py's offsets.
_HEADER_FIELDS = {R.TURN: "turn", R.STATUS: "status", R.WINNER: "winner", R.MAX_TURNS_AT: "max_turns",
                  R.NUM_FLEETS_AT: "num_fleets", R.RNG: "rng", R.LOSS_MODEL: "loss_model", R.END_REASON: "end_reason"}
_STAR_FIELDS = ("x", "y", "ru", "owner", "ships", "home")  # S_X .. S_HOME
_KNOW_FIELDS = ("visited", "owner", "ships", "turn")  # K_VISITED .. K_TURN
_TALLY_FIELDS = ("lost_ships", "lost_fleets", "rebellions", "captures")  # T_LOST_SHIPS .. T_CAPTURES
_FLEET_FIELDS = ("owner", "origin", "destination", "ships", "turns_left", "distance", "launched")  # F_OWNER ..
_EVENT_FIELDS = ("kind", "turn", "player", "star", "a", "b", "c", "d", "e")  # E_KIND .. E_E


def _int_list(values: Any, name: str) -> list[int]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"save: {name} must be a list of integers")
    if any(not _INT64_MIN <= v <= _INT64_MAX for v in values):
        raise ValueError(f"save: {name} holds an integer outside the 64-bit range")
    if len(values) > R.STATE_SIZE or (name == "state" and len(values) < R.FLEETS):
        raise ValueError(f"save: {name} has a wrong length ({len(values)})")
    return values


def _stored_row(values: Any) -> np.ndarray:
    """The saved state row, padded with the zeros of the unused fleet slots."""
    row = np.zeros(R.STATE_SIZE, np.int64)
    stored = _int_list(values, "state")
    row[:len(stored)] = stored
    return row


def _stored_log(log: Any) -> list[list[int]]:
    """Last turn's saved events: rows of ``E_SIZE`` integers."""
    if not isinstance(log, list) or len(log) >= R.MAX_EVENTS:
        raise ValueError("save: log must be a list of events")
    rows = [_int_list(row, "log") for row in log]
    for row in rows:
        if len(row) != R.E_SIZE:
            raise ValueError(f"save: impossible event {quote(row)} (an event has {R.E_SIZE} numbers)")
    return rows


def _history_moves(history: Any) -> list[list[_Moves]]:
    """The executed moves of every turn played: per turn two seats' lists of ``[from, to, ships]``."""
    if not isinstance(history, list):
        raise ValueError("save: history must be a list of turns")
    turns = []
    for turn in history:
        try:
            if not isinstance(turn, list) or len(turn) != R.NUM_PLAYERS:
                raise ValueError
            turns.append([[_history_move(move) for move in _orders_of(seat)] for seat in turn])
        except (TypeError, ValueError):
            raise ValueError(f"save: bad history entry {quote(turn)}") from None
    return turns


def _orders_of(seat: Any) -> list[Any]:
    if not isinstance(seat, list) or len(seat) > R.MAX_ORDERS:
        raise ValueError
    return seat


def _history_move(move: Any) -> tuple[int, int, int]:
    if not isinstance(move, list) or len(move) != 3:
        raise ValueError
    origin, dest, ships = move
    if isinstance(ships, bool) or not isinstance(ships, int) or not 1 <= ships <= _INT64_MAX:
        raise ValueError
    return star_index(origin), star_index(dest), ships


def _replay_checked(game: SpaceConquestGame, history: list[list[_Moves]]) -> None:
    """Play ``history`` on the fresh ``game``, checking every turn's moves against the replayed position as
    the rules would (a recorded turn holds only moves that executed), so a bad history is refused here rather
    than launching impossible fleets."""
    for turn, moves in enumerate(history, 1):
        if game.is_over:
            raise ValueError(f"{_CONTRADICTS}the history goes on after the game ended (turn {turn})")
        for p, seat in enumerate(moves):
            check = check_orders(game.state, p, {"moves": [move_dict(*move) for move in seat]})
            if check.errors:
                raise ValueError(f"{_CONTRADICTS}turn {turn}, player {p}: {check.errors[0]['message']}")
        game.play_moves(moves)


def _require_same(row: np.ndarray, replayed: np.ndarray, log: list[list[int]], replayed_log: np.ndarray) -> None:
    """``ValueError`` naming the first field where the saved state or events differ from the replay's."""
    differ = np.flatnonzero(row != replayed)
    if differ.size:
        i = int(differ[0])
        raise ValueError(f"{_CONTRADICTS}{_field_name(i)} is {int(row[i])}, replay gives {int(replayed[i])}")
    events = replayed_log[1:replayed_log[0, 0] + 1].tolist()
    if len(log) != len(events):
        raise ValueError(f"{_CONTRADICTS}the log has {len(log)} events, replay gives {len(events)}")
    for k, (saved, true) in enumerate(zip(log, events, strict=True)):
        for col, (a, b) in enumerate(zip(saved, true, strict=True)):
            if a != b:
                raise ValueError(f"{_CONTRADICTS}log[{k}].{_EVENT_FIELDS[col]} is {a}, replay gives {b}")


def _field_name(i: int) -> str:
    """The state row's position ``i`` as a readable field: ``turn``, ``stars[3].ships``, ``fleets[0].ships``."""
    if i < R.STARS:
        if R.HOMES <= i < R.HOMES + R.NUM_PLAYERS:
            return f"homes[{i - R.HOMES}]"
        return _HEADER_FIELDS.get(i, f"state[{i}]")
    if i < R.KNOW:
        s, k = divmod(i - R.STARS, R.S_SIZE)
        return f"stars[{s}].{_STAR_FIELDS[k]}"
    if i < R.TALLY:
        seat_star, k = divmod(i - R.KNOW, R.K_SIZE)
        p, s = divmod(seat_star, R.NUM_STARS)
        return f"knowledge[{p}][{s}].{_KNOW_FIELDS[k]}"
    if i < R.FLEETS:
        p, k = divmod(i - R.TALLY, R.T_SIZE)
        return f"tally[{p}].{_TALLY_FIELDS[k]}"
    f, k = divmod(i - R.FLEETS, R.F_SIZE)
    return f"fleets[{f}].{_FLEET_FIELDS[k]}"


def _checked_errors(errors: Any) -> list[list[dict[str, Any]]]:
    """Last turn's order errors per seat, each ``{"index": int or None, "message": str}``. They cannot be
    checked against the replay (the history keeps the moves that executed, not the ones skipped)."""
    ok = isinstance(errors, list) and len(errors) == R.NUM_PLAYERS and all(
        isinstance(seat, list) and all(isinstance(e, dict) and set(e) == {"index", "message"}
                                       and isinstance(e["message"], str)
                                       and (e["index"] is None or type(e["index"]) is int) for e in seat)
        for seat in errors)
    if not ok:
        raise ValueError('save: errors must be two lists of {"index", "message"}')
    return errors
