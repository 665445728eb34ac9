"""``NimGame``: the ``Game`` contract over a row of ``rules``, the step protocol inherited from ``TurnBased`` (and
with it ``move_id`` and ``explain_illegal``, which Nim does not write)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from gymnasium import spaces

from tabletop_rl.core.game import IllegalActionError, SeatView, TurnBased, as_index, dense_ranks, quote
from tabletop_rl.core.seeding import check_seed

from . import rules as R

__all__ = ["NimGame"]

_LETTERS = "abc"


class NimGame(TurnBased):
    """A match of Nim between seats 0 and 1; seat 0 moves first. Nothing is hidden but the random stream."""

    __slots__ = ("state",)
    name = "nim"
    player_counts = (2,)
    option_names = ()
    default_max_plies = None  # every move takes a counter: a match ends within 21 moves
    num_actions = R.NUM_ACTIONS
    reward_modes = ("win",)

    def __init__(self, state: np.ndarray) -> None:
        self.state = state

    @classmethod
    def new(cls, seed: int, num_players: int = 2, max_plies: int | None = None, **options: Any) -> NimGame:
        if num_players != 2 or options:
            raise ValueError(f"nim is played by 2 players with no options, got {num_players} and {sorted(options)}")
        return cls(R.new_state(check_seed(seed)))

    @staticmethod
    def rules_help() -> str:
        return "A move is a heap and a count: b3 takes 3 counters from heap b. Whoever takes the last counter wins."

    # --- what the game provides to TurnBased --------------------------------------------------
    @property
    def num_players(self) -> int:
        return 2

    @property
    def current_player(self) -> int:
        return int(self.state[R.CURRENT])

    @property
    def heaps(self) -> list[int]:
        return R.heaps(self.state)

    @property
    def is_over(self) -> bool:
        return R.is_over(self.state)

    @property
    def is_truncated(self) -> bool:
        return False

    def legal_mask(self) -> np.ndarray:
        return R.legal_mask(self.state)

    def move_name(self, action: int) -> str:
        heap, take = divmod(as_index(action, "nim action", stop=R.NUM_ACTIONS), R.MAX_HEAP)
        return f"{_LETTERS[heap]}{take + 1}"

    def step(self, action: int | str) -> None:
        a = self.move_id(action) if isinstance(action, str) else as_index(action)
        if not 0 <= a < R.NUM_ACTIONS or not self.legal_mask()[a]:
            raise IllegalActionError(self.explain_illegal(a), game=self.name, seat=self.current_player)
        R.step(self.state, a)

    def random_below(self, n: int) -> int:
        return R.random_below(self.state, n)

    def reseed(self, seed: int) -> None:
        self.state[R.RNG] = check_seed(seed)

    # --- what a seat sees: everything but the random stream ---------------------------------------
    @staticmethod
    def observation_space(num_players: int = 2) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (R.HEAPS + 1,), np.float32)

    def observe(self, seat: int) -> np.ndarray:
        """The heaps as fractions of a full one, then 1 when ``seat`` is to move."""
        return np.array([*(n / R.MAX_HEAP for n in self.heaps), seat == self.current_player], np.float32)

    def policy_info(self, seat: int) -> SeatView:
        seat = as_index(seat, "seat", stop=2)
        return SeatView(seat, seat, self._with_stream(0))

    def seat_view(self, seat: int, seed: int) -> NimGame:
        return self._with_stream(check_seed(seed))

    def _with_stream(self, rng: int) -> NimGame:
        state = self.state.copy()
        state[R.RNG] = rng
        return NimGame(state)

    def render(self, viewer: int | None = None, color: bool = False) -> str:
        rows = [f"{_LETTERS[h]}: {'o' * n:<{R.MAX_HEAP}} {n}" for h, n in enumerate(self.heaps)]
        status = f"P{R.winner(self.state)} took the last counter" if self.is_over else f"P{self.current_player} to move"
        return "\n".join([*rows, status])

    # --- the result -----------------------------------------------------------------------------
    @property
    def scores(self) -> list[int]:
        """1 for the seat that took the last counter, once the game is over."""
        return [int(self.is_over and p == R.winner(self.state)) for p in range(2)]

    @property
    def ranks(self) -> list[int]:
        return dense_ranks([-s for s in self.scores])

    @property
    def winners(self) -> list[int]:
        return [p for p, s in enumerate(self.scores) if s]

    def end_rewards(self, mode: str = "win") -> list[float]:
        return [float(2 * s - 1) if self.is_over else 0.0 for s in self.scores]

    # --- JSON -----------------------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"game": self.name, "state": self.state.tolist()})

    @classmethod
    def from_json(cls, text: str | dict) -> NimGame:
        try:
            data = json.loads(text) if isinstance(text, str) else text
            row = np.array(data["state"], np.uint64)
        except (ValueError, TypeError, KeyError, OverflowError):
            raise ValueError(f"a nim position is {{'state': [{R.SIZE} counts]}}, got {quote(text)}") from None
        if row.shape != (R.SIZE,) or max(R.heaps(row)) > R.MAX_HEAP or row[R.CURRENT] > 1:
            raise ValueError(f"nim position: 'state' must hold {R.HEAPS} heaps of 0..{R.MAX_HEAP}, a seat and a stream")
        return cls(row)
