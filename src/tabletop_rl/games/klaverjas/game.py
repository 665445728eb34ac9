"""``KlaverjasGame``: one match over a state row of the numba core, as the ``Game`` contract
(``tabletop_rl.core.game``) that the envs, the arena and replays use.

Four seats (N E S W = 0 1 2 3) form two players, the partnerships N-S (seats 0 and 2) and E-W (1 and 3):
``player_of(seat) == seat % 2``; one policy plays both seats of its player, and scores, winners and ranks
are per partnership (by match score). A policy's ``info`` is ``game.policy_info(seat)``, a ``SeatView`` whose
game is a copy with the other hands and the dealing RNG blanked, so no policy can read a hidden card.

>>> game = KlaverjasGame.new(seed=3, num_players=2)
>>> game.pending_seats(), game.num_seats, game.move_name(32), game.move_id("10H")
([0], 4, 'trump:C', 19)
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from gymnasium import spaces

from tabletop_rl.core.game import FUSED_MASK_TYPES, IllegalActionError, SeatView, TurnBased, dense_ranks
from tabletop_rl.core.text import as_index, quote
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.actions import MOVE_HELP, move_id, move_name
from tabletop_rl.games.klaverjas.determinize import determinize
from tabletop_rl.games.klaverjas.notation import state_from_json
from tabletop_rl.games.klaverjas.observe import OBS_SIZE, end_rewards, observe, step_observe, step_vs_random_observe
from tabletop_rl.games.klaverjas.render import render_text, viewer_seat

__all__ = ["KlaverjasGame"]

def _fused_mask(dtype: Any) -> np.dtype | None:
    """The mask type a fused step writes for ``dtype`` (bool or int8), or None: the contract's default then."""
    try:
        return FUSED_MASK_TYPES.get(dtype)
    except TypeError:  # unhashable: not a mask type the fused steps know
        return None


class KlaverjasGame(TurnBased):
    """A Klaverjas match of ``deals`` deals (or to a ``target``) under the match options of
    ``rules.options_row`` (rules, trump_selection, kraken, ...)."""

    __slots__ = ("state",)
    name = "klaverjas"
    player_counts = (2,)
    default_max_plies = None  # every deal ends after 8 tricks
    option_names = ("deals", "rules", "trump_selection", "all_pass", "first_lead", "pit_for_defenders", "kraken",
                    "target", "quartet_values", "stuk_mode", "amsterdam_undertrump_vs_opponent")
    num_actions = R.NUM_ACTIONS
    move_name = staticmethod(move_name)
    move_id = staticmethod(move_id)

    def __init__(self, state: np.ndarray) -> None:
        self.state = state

    @classmethod
    def new(cls, seed: int, num_players: int = 2, max_plies: int | None = None, **options: Any) -> KlaverjasGame:
        """A freshly dealt match; ``ValueError`` naming a bad option (``max_plies`` is not used)."""
        if num_players != 2:
            raise ValueError(f"klaverjas is played by 2 players (partnerships), got {quote(num_players)}")
        return cls(R.new_state(seed=seed, **options))

    @staticmethod
    def rules_help() -> str:
        return MOVE_HELP

    # --- seats and players -----------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return 2

    @property
    def num_seats(self) -> int:
        return 4

    def player_of(self, seat: int) -> int:
        return seat % 2

    @property
    def current_player(self) -> int:
        """The seat to act."""
        return int(self.state[R.CURRENT])

    # --- moves -------------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        R.legal_mask(self.state, mask)
        return mask

    def step(self, action: int | str) -> None:
        """Play ``action`` (id or name) for the seat to act; ``IllegalActionError`` leaves the match as it was."""
        a = self._action(action)
        if not R.checked_step(self.state, a, self.legal_mask()):
            raise self._illegal(a)

    def _action(self, action: int | str) -> int:
        """``action`` as an id in range; ``IllegalActionError`` (out of range) or ``ValueError`` (not an action)."""
        a = self.move_id(action) if isinstance(action, str) else as_index(action)
        if not 0 <= a < R.NUM_ACTIONS:
            raise self._illegal(a)
        return a

    def _illegal(self, action: int) -> IllegalActionError:
        return IllegalActionError(self.explain_illegal(action), game=self.name, seat=self.current_player)

    # the fused steps (one compiled call for the move and what the envs read after it), for bool and int8 masks;
    # any other mask type takes the contract's default
    def step_observe(self, action: int | str, dtype: Any = np.bool_) -> tuple[np.ndarray, np.ndarray]:
        mask_dtype = _fused_mask(dtype)
        if mask_dtype is None:
            return super().step_observe(action, dtype)
        a = self._action(action)
        obs, seat_mask = np.empty(OBS_SIZE, np.float32), np.empty(R.NUM_ACTIONS, mask_dtype)
        if not step_observe(self.state, a, obs, seat_mask):
            raise self._illegal(a)
        return obs, seat_mask

    def step_vs_random_observe(self, action: int | str, seat: int, dtype: Any = np.bool_
                               ) -> tuple[np.ndarray, np.ndarray] | None:
        mask_dtype = _fused_mask(dtype)
        if mask_dtype is None:
            return super().step_vs_random_observe(action, seat, dtype)
        try:
            a = self._action(action)
        except IllegalActionError:
            return None
        obs, seat_mask = np.empty(OBS_SIZE, np.float32), np.empty(R.NUM_ACTIONS, mask_dtype)
        return (obs, seat_mask) if step_vs_random_observe(self.state, a, int(seat), obs, seat_mask) else None

    def play_random_until(self, seat: int) -> None:
        R.play_random_until(self.state, int(seat), np.empty(R.NUM_ACTIONS, np.bool_))

    # --- what a seat sees --------------------------------------------------------------------
    @staticmethod
    def observation_space(num_players: int = 2) -> spaces.Box:
        return spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32)

    def observe(self, seat: int) -> np.ndarray:
        return observe(self.state, seat)

    def policy_info(self, seat: int) -> SeatView:
        """``seat``'s view (``SeatView``): a copy holding its own hand and the public record, the other hands
        empty and the dealing random stream cleared (``rules.seat_view``); ``player`` is its partnership."""
        seat = as_index(seat, "seat", stop=4)
        return SeatView(seat, seat % 2, KlaverjasGame(R.seat_view(self.state, seat)))

    def seat_view(self, seat: int, seed: int) -> KlaverjasGame:
        """The other hands re-dealt from ``seed`` consistently with what ``seat`` has seen."""
        return KlaverjasGame(determinize(self.state, seat, np.random.default_rng(seed)))

    def render(self, viewer: int | None = None, color: bool = False) -> str:
        """The table as text; player ``viewer`` (a partnership) sees the hand of its seat to act, else of its
        first seat; a spectator (``None``) sees all four hands."""
        return render_text(self.state, None if viewer is None else viewer_seat(self.state, viewer))

    # --- result ------------------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return int(self.state[R.PHASE]) == R.OVER

    @property
    def is_truncated(self) -> bool:
        return False

    @property
    def scores(self) -> list[int]:
        """Match score per partnership (N-S, E-W)."""
        return [int(self.state[R.MATCH_SCORE]), int(self.state[R.MATCH_SCORE + 1])]

    @property
    def ranks(self) -> list[int]:
        return dense_ranks([-s for s in self.scores])

    @property
    def winners(self) -> list[int]:
        """The partnership(s) with the higher match score once the match is over; both on a tie."""
        return [t for t, place in enumerate(self.ranks) if place == 0] if self.is_over else []

    # --- rewards and the random stream (what the envs need) ---------------------------------------
    def end_rewards(self, mode: str = "win") -> list[float]:
        """Per seat, zero-sum, once the match is over: ``win``: +1 for the partnership with the higher match
        score, -1 for the other, 0 on a tie; ``score``: (own - other match score) / (162 x deals played)."""
        return end_rewards(self.state, mode)

    def random_below(self, n: int) -> int:
        return int(R.random_below(self.state, n))

    def reseed(self, seed: int) -> None:
        """Seed the match's random stream (later deals, random opponents, the next episode's seed)."""
        R.seed_rng(self.state, seed)

    # --- JSON --------------------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"game": self.name, "state": [int(v) for v in self.state]})

    @classmethod
    def from_json(cls, text: str | dict) -> KlaverjasGame:
        """The match ``to_json`` wrote; ``ValueError`` naming the field for anything else, a row the rules could
        not reach included (``notation.check_state``)."""
        return cls(state_from_json(text))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KlaverjasGame) and np.array_equal(self.state, other.state)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        status = 'over' if self.is_over else f'seat {self.current_player} to act'
        return f"KlaverjasGame(scores {self.scores}, {status})"
