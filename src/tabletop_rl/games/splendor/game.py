"""SplendorGame: a thin, friendly Python object over one state row of the numba core, and Splendor's
``Game`` (``tabletop_rl.core.game``): what the envs, the arena, replays and the LLM harness use.

>>> g = SplendorGame(num_players=2, seed=7)
>>> g.step("take:white,blue,green"); g.current_player
1
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from tabletop_rl.core.game import FUSED_MASK_TYPES, IllegalActionError, SeatView, TurnBased, dense_ranks
from tabletop_rl.core.kernels import Direct
from tabletop_rl.core.seeding import check_seed, fresh_seed
from tabletop_rl.core.text import as_index, quote
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import MOVE_HELP, NUM_ACTIONS, TYPING_HELP, as_action, kind, move_id, move_name
from tabletop_rl.games.splendor.notation import (
    bought_cards,
    deck_cards,
    market_row,
    player_nobles,
    position_from_json,
    position_to_dict,
    reserved_cards,
    table_nobles,
)
from tabletop_rl.games.splendor.observe import (
    encode_into,
    observation_box,
    observation_size,
    step_observe,
    step_vs_random_observe,
)
from tabletop_rl.games.splendor.picture import render_rgb
from tabletop_rl.games.splendor.render import move_text, render_ansi

__all__ = ["IllegalActionError", "SplendorGame", "check_max_plies"]


def _seed_int(seed: int | None) -> int:
    return fresh_seed() if seed is None else check_seed(seed)


def check_max_plies(max_plies: Any, minimum: int = 1) -> int:
    """The ply cap as the core stores it (-1: none); ``ValueError`` unless it is None or an integer from
    ``minimum`` to the core's largest (the vector env asks for at least one ply per seat, so every seat
    acts in each game: the first round has no sub-steps).

    >>> check_max_plies(None), check_max_plies(300)
    (-1, 300)
    """
    if max_plies is None:
        return -1
    if isinstance(max_plies, bool) or not isinstance(max_plies, (int, np.integer)) \
            or not minimum <= max_plies <= R.MAX_PLY_VALUE:
        least = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
        raise ValueError(f"max_plies must be {least} (at most {R.MAX_PLY_VALUE}) or None, got {quote(max_plies)}")
    return int(max_plies)


# The kernels a game calls on every step, called directly: a game passes them its own arrays, of fixed types, and
# plain ints (seats are made int first, as the entry is resolved for the types of its first call).
_CHECKED_STEP, _ENCODE = Direct(R.checked_step), Direct(encode_into)
_STEP_VS_RANDOM, _PLAY_RANDOM_UNTIL = Direct(R.step_vs_random), Direct(R.play_random_until)
_RESET, _LEGAL_MASK = Direct(R.reset_state), Direct(R.legal_mask)  # a new game: every env reset
_HIDE = Direct(R.hide_state)  # every policy decision
_FLOAT32 = np.dtype(np.float32)
_MASK_DTYPES = tuple(dict.fromkeys(FUSED_MASK_TYPES.values()))  # bool, int8: the one map's dtypes, in order
#: The fused steps (``step_observe``, ``step_vs_random_observe``), one compiled entry per mask type: bool (index 0,
#: as ``legal_mask``) and int8 (index 1, what the envs hand out), each with its mask's dtype (an instance, which
#: ``np.empty`` takes faster than a type), found by type or dtype (a lookup, not a conversion).
_FUSED_BY_INDEX = tuple((dtype, Direct(step_observe), Direct(step_vs_random_observe)) for dtype in _MASK_DTYPES)
_FUSED_INDEX = {key: _MASK_DTYPES.index(dtype) for key, dtype in FUSED_MASK_TYPES.items()}
_FUSED = {key: _FUSED_BY_INDEX[index] for key, index in _FUSED_INDEX.items()}
_empty = np.empty
_NUM_PLAYERS_AT, _CURRENT, _STATUS, _PLAYING = R.NUM_PLAYERS_AT, R.CURRENT, R.STATUS, R.PLAYING


def _bad_dtype(dtype: Any) -> ValueError:
    return ValueError(f"dtype must be bool or int8, got {quote(dtype)}")


def _checked_out(out: Any, obs_size: int) -> tuple[np.ndarray, np.ndarray]:
    """``out`` if it is a pair of writeable, contiguous ``float32[obs_size]`` and ``bool[72]`` or ``int8[72]``
    arrays."""
    ok = isinstance(out, tuple) and len(out) == 2 and all(
        isinstance(x, np.ndarray) and x.dtype in dtypes and x.shape == (size,) and x.flags.c_contiguous
        and x.flags.writeable for x, dtypes, size in zip(out, ((_FLOAT32,), _MASK_DTYPES), (obs_size, NUM_ACTIONS)))
    if not ok:
        parts = out if isinstance(out, tuple) else (out,)
        got = ", ".join(f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray) else type(x).__name__ for x in parts)
        raise ValueError(f"out must be a tuple (observation, mask) of writeable contiguous float32[{obs_size}] and "
                         f"bool[{NUM_ACTIONS}] or int8[{NUM_ACTIONS}] arrays, got ({got})")
    return out


class SplendorGame(TurnBased):
    """One game of Splendor for 2-4 players (``seat 0`` starts).

    ``step`` takes an action id or name; ``legal_mask()`` is a ``bool[72]`` over the action table.
    """

    __slots__ = ("state", "_mask", "_cards", "_nobles", "_obs_size", "_out", "_out_index")
    name = "splendor"
    player_counts = (2, 3, 4)
    option_names: ClassVar[tuple[str, ...]] = ()  # the ply cap is ``new``'s max_plies
    default_max_plies = R.DEFAULT_MAX_PLIES
    num_actions = NUM_ACTIONS
    render_modes = ("ansi", "human", "rgb_array")
    score_scale = 15.0  # reward "score": prestige points gained / 15 (the winning threshold) on each step

    def __init__(self, num_players: int = 2, seed: int | None = None,
                 max_plies: int | None = R.DEFAULT_MAX_PLIES) -> None:
        if isinstance(num_players, bool) or num_players not in (2, 3, 4):
            raise ValueError(f"num_players must be 2, 3 or 4, got {quote(num_players)}")
        state = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)
        _RESET.call(state, _seed_int(seed), int(num_players), check_max_plies(max_plies))
        self._attach(state)

    @classmethod
    def new(cls, seed: int, num_players: int, max_plies: int | None = None, **options: Any) -> SplendorGame:
        """The contract's constructor: ``max_plies=None`` plays without a ply cap. Splendor has no other option:
        ``options`` is taken to keep the contract's signature, and any is refused as ``__init__`` refuses it."""
        return cls(num_players, seed=seed, max_plies=max_plies, **options)

    @classmethod
    def _from_state(cls, state: np.ndarray) -> SplendorGame:
        g = cls.__new__(cls)
        g._attach(state)
        return g

    def _attach(self, state: np.ndarray) -> None:
        # the step kernels are called directly (``Direct``), trusting the row's type: checked once here
        if state.dtype != R.STATE_DTYPE or state.shape != (R.STATE_SIZE,) or not state.flags.c_contiguous \
                or not state.flags.writeable:
            raise ValueError(f"a Splendor state is a writeable, contiguous int16[{R.STATE_SIZE}] row")
        self._cards, self._nobles = R.tables()
        self.state = state
        self._mask = np.zeros(NUM_ACTIONS, np.bool_)
        self._obs_size = observation_size(int(state[R.NUM_PLAYERS_AT]))
        self._out: tuple[np.ndarray, np.ndarray] | None = None  # the last ``out`` pair checked
        self._out_index = 0  # and its kernels' index in _FUSED_BY_INDEX (by its mask's type)
        self._refresh()

    def _refresh(self) -> None:
        _LEGAL_MASK.call(self.state, self._cards, self._nobles, self._mask)

    # --- moves -------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        """``bool[72]``: True where the action is legal for the player to act (all False when over)."""
        return self._mask.copy()

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self._mask).tolist()

    def step(self, action: int | str) -> None:
        """Apply an action (id or name) for the player to act; ``IllegalActionError`` leaves the game as it was."""
        a = action if type(action) is int and 0 <= action < NUM_ACTIONS else as_action(action)
        if not _CHECKED_STEP.call(self.state, a, self._cards, self._nobles, self._mask):
            as_action(a)  # out-of-range ids get their own message
            raise IllegalActionError(self.explain_illegal(a), game=self.name, seat=self.current_player)

    def step_observe(self, action: int | str, dtype: Any = np.bool_, out: tuple[np.ndarray, np.ndarray] | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """``step``, then the observation and legal mask (``dtype`` bool or int8) of the player to act next, in one
        compiled call.

        ``out``: an ``(observation, mask)`` pair (``float32[observation_size]``, ``bool[72]`` or ``int8[72]``,
        which then sets the mask's type) to write them into instead of fresh arrays; it is returned.

        >>> g = SplendorGame(2, seed=1)
        >>> obs, mask = g.step_observe("take:white,blue,green")
        >>> obs.shape, mask.dtype, mask.nonzero()[0].tolist() == g.legal_actions(), g.current_player
        ((312,), dtype('bool'), True, 1)
        """
        a = action if type(action) is int and 0 <= action < NUM_ACTIONS else as_action(action)
        # The fresh-array path is written in line here and in step_vs_random_observe: a shared helper costs
        # 90 ns a step (6% of this method), measured; this runs on every step of the AEC and Gymnasium envs.
        if out is None:
            try:
                mask_dtype, kernel, _ = _FUSED[dtype]
            except (KeyError, TypeError):
                raise _bad_dtype(dtype) from None
            out = (_empty(self._obs_size, _FLOAT32), _empty(NUM_ACTIONS, mask_dtype))
        else:
            kernel = self._checked(out)[1]
        if not kernel.call(self.state, a, self._cards, self._nobles, self._mask, out[0], out[1]):
            raise IllegalActionError(self.explain_illegal(a), game=self.name, seat=self.current_player)
        return out

    def _checked(self, out: Any) -> tuple[np.dtype, Direct, Direct]:
        """The fused kernels for the caller's ``out`` pair, checked here once and remembered (the kernels trust
        their types)."""
        if out is not self._out:
            self._out = _checked_out(out, self._obs_size)
            self._out_index = _FUSED_INDEX[out[1].dtype]  # an index, not the kernels: a game stays picklable
        return _FUSED_BY_INDEX[self._out_index]

    def explain_illegal(self, action: int | str) -> str:
        """Why ``action`` is not legal now, in one line (or that it is legal)."""
        return _explain(self, as_action(action))

    move_name = staticmethod(move_name)  # action id -> name, e.g. 0 -> "take:white,blue,green"
    move_id = staticmethod(move_id)  # name (or a take/return in any order, the board's letters) -> action id

    def describe_move(self, move: Any) -> str:
        """The move's name with the card or noble it names here, e.g. ``buy:1.3 [#6 W 0p | w3 b1 k1]``."""
        return move_text(self, move)

    @staticmethod
    def rules_help() -> str:
        return MOVE_HELP + "\n" + TYPING_HELP

    # --- what a seat sees ----------------------------------------------------------------
    @staticmethod
    def observation_space(num_players: int) -> spaces.Box:
        return observation_box(num_players)

    def observe(self, seat: int) -> np.ndarray:
        """``float32`` observation of ``seat`` (docs/observations.md)."""
        out = np.empty(self._obs_size, _FLOAT32)
        _ENCODE.call(self.state, int(seat), self._cards, self._nobles, out)
        return out

    def seat_mask(self, seat: int, dtype: Any = np.bool_) -> np.ndarray:
        """``seat``'s legal moves, all False unless it is to act (and once the game is over)."""
        if seat == self.state[R.CURRENT]:
            return self._mask.astype(dtype)
        return np.zeros(NUM_ACTIONS, dtype)

    def policy_info(self, seat: int) -> SeatView:
        """``seat``'s view (``SeatView``): a copy whose cards ``seat`` cannot see (deck orders, the other
        players' blind reserves) are the unseen cards in order of id, level by level, and whose playout random
        stream is cleared."""
        seat = as_index(seat, "seat", stop=self.num_players)
        state = self.state.copy()
        _HIDE.call(state, seat)
        return SeatView(seat, seat, SplendorGame._from_state(state))

    def seat_view(self, seat: int, seed: int) -> SplendorGame:
        """A copy for search in which everything ``seat`` cannot see is re-dealt at random from ``seed``.

        Deck orders and other players' blind-reserved cards are shuffled together, level by level
        (a blind reserve's level is public), so the copy is consistent with all ``seat`` knows.
        """
        state = self.state.copy()
        R.determinize_state(state, as_index(seat, "seat", stop=self.num_players), _seed_int(seed))
        return SplendorGame._from_state(state)

    def render(self, viewer: int | None = None, color: bool = False) -> str:
        """The text board as ``viewer`` sees it (``None``: a spectator)."""
        return render_ansi(self, viewer=viewer, color=color)

    def render_rgb(self, viewer: int | None = None) -> np.ndarray:
        """The board drawn as a ``uint8[720, 960, 3]`` image for ``viewer``."""
        return render_rgb(self, viewer)

    # --- rewards and random play (what the envs need) ------------------------------------------
    def end_rewards(self, mode: str = "win") -> list[float]:
        """Zero-sum end rewards per seat, in either reward mode: winners share +1, losers share -1; all 0
        when everyone won, while playing, and after a truncation.

        >>> SplendorGame(3, seed=0).end_rewards()
        [0.0, 0.0, 0.0]
        """
        return [float(R.end_reward(self.state, p)) for p in range(self.num_players)]

    def random_below(self, n: int) -> int:
        return int(R.random_below(self.state, n))

    def reseed(self, seed: int) -> None:
        """Seed the game's playout stream (random opponents, the next episode's seed)."""
        R.seed_rng(self.state, _seed_int(seed))

    def play_random_until(self, seat: int) -> None:
        _PLAY_RANDOM_UNTIL.call(self.state, int(seat), self._cards, self._nobles, self._mask)

    def step_vs_random(self, action: int | str, seat: int) -> bool:
        a = action if type(action) is int and 0 <= action < NUM_ACTIONS else as_action(action)
        return bool(_STEP_VS_RANDOM.call(self.state, a, int(seat), self._cards, self._nobles, self._mask))

    def step_vs_random_observe(self, action: int | str, seat: int, dtype: Any = np.bool_,
                               out: tuple[np.ndarray, np.ndarray] | None = None
                               ) -> tuple[np.ndarray, np.ndarray] | None:
        """``step_vs_random`` and then ``seat``'s observation and legal mask, in one compiled call; None (nothing
        played) when ``action`` is illegal. ``dtype`` and ``out`` as for ``step_observe``."""
        a = action if type(action) is int and 0 <= action < NUM_ACTIONS else as_action(action)
        if out is None:  # in line, as in step_observe (why: there)
            try:
                mask_dtype, _, kernel = _FUSED[dtype]
            except (KeyError, TypeError):
                raise _bad_dtype(dtype) from None
            out = (_empty(self._obs_size, _FLOAT32), _empty(NUM_ACTIONS, mask_dtype))
        else:
            kernel = self._checked(out)[2]
        return out if kernel.call(self.state, a, int(seat), self._cards, self._nobles, self._mask, out[0], out[1]) \
            else None

    # --- state -------------------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return self.state.item(_NUM_PLAYERS_AT)  # item(): half the time of int(state[i]), read every step

    @property
    def current_player(self) -> int:
        return self.state.item(_CURRENT)

    @property
    def phase(self) -> str:
        return R.PHASE_NAMES[int(self.state[R.PHASE])]

    @property
    def ply(self) -> int:
        return int(R.get_wide(self.state, R.PLY))

    @property
    def is_over(self) -> bool:
        """True once the game has ended, by the rules or by the ply cap."""
        return self.state.item(_STATUS) != _PLAYING

    @property
    def is_truncated(self) -> bool:
        return bool(self.state[R.STATUS] == R.TRUNCATED)

    @property
    def winners(self) -> list[int]:
        """Winning seats, ascending; ``[]`` while playing and for a truncated game."""
        out = np.zeros(R.MAX_PLAYERS, np.int8)
        R.winners_into(self.state, out)
        return np.flatnonzero(out).tolist()

    @property
    def ranks(self) -> list[int]:
        """Finishing places, 0 = first, ties shared: most points, then fewest cards bought (the rules'
        tie-break); a truncated game has no winner, so every seat shares place 0."""
        if self.is_truncated:
            return [0] * self.num_players
        return dense_ranks([(-self.scores[p], len(self.player(p)["bought"])) for p in range(self.num_players)])

    @property
    def scores(self) -> list[int]:
        """Prestige points per seat (cards plus nobles)."""
        return [int(self.state[R.player_base(p) + R.P_POINTS]) for p in range(self.num_players)]

    def player(self, p: int) -> dict[str, Any]:
        """A readable summary of seat ``p``: tokens, bonuses, points, bought, reserved, nobles."""
        b = R.player_base(p)
        return {
            "tokens": dict(zip(R.TOKEN_NAMES, self.state[b + R.P_TOKENS: b + R.P_TOKENS + 6].tolist())),
            "bonuses": dict(zip(R.COLOURS, self.state[b + R.P_BONUS: b + R.P_BONUS + 5].tolist())),
            "points": int(self.state[b + R.P_POINTS]),
            "bought": bought_cards(self.state, p),
            "reserved": reserved_cards(self.state, p),
            "nobles": player_nobles(self.state, p),
        }

    @property
    def bank(self) -> dict[str, int]:
        return dict(zip(R.TOKEN_NAMES, self.state[R.BANK: R.BANK + 6].tolist()))

    @property
    def table_nobles(self) -> list[int]:
        return table_nobles(self.state)

    def market(self, level: int) -> list[int | None]:
        """Card ids in the four market slots of ``level`` (1..3), ``None`` for an empty slot."""
        return market_row(self.state, level)

    @property
    def deck_sizes(self) -> list[int]:
        """Cards left in the level 1, 2 and 3 decks."""
        return [R.LEVEL_SIZE[lv] - int(self.state[R.DECK_DRAWN + lv]) for lv in range(3)]

    def deck(self, level: int) -> list[int]:
        """The cards left in the ``level`` (1-3) deck, top first. Hidden from every player: it is for the chance
        nodes that decide each card drawn (``put_on_top``) and for tests, never for a policy."""
        return deck_cards(self.state, _check_level(level))

    def put_on_top(self, level: int, card: int) -> None:
        """Make ``card``, one of the cards left in the ``level`` (1-3) deck, the next one that deck deals.

        The hook for an explicit chance node "the next card of level L is X" (the OpenSpiel game,
        docs/openspiel_textarena.md); ``ValueError`` unless ``card`` is in that deck.
        """
        lv = _check_level(level) - 1
        top = R.DECK + R.LEVEL_START[lv] + int(self.state[R.DECK_DRAWN + lv])
        found = np.flatnonzero(self.state[top: R.DECK + R.LEVEL_START[lv] + R.LEVEL_SIZE[lv]] == card)
        if not found.size:
            raise ValueError(f"card {quote(card)} is not in the level {level} deck")
        at = top + int(found[0])
        self.state[at], self.state[top] = self.state[top], card

    def clone(self) -> SplendorGame:
        return SplendorGame._from_state(self.state.copy())

    # --- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return position_to_dict(self.state)

    def to_json(self) -> str:
        """The position as JSON (docs/splendor.md); ``SplendorGame.from_json(g.to_json())`` round-trips."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text_or_dict: str | dict) -> SplendorGame:
        """Load a position; ``ValueError`` naming the field when it is not a valid position."""
        return cls._from_state(position_from_json(text_or_dict))

    @classmethod
    def from_state(cls, state: np.ndarray) -> SplendorGame:
        """A game from a state row (``game.state``: how a replay buffer keeps positions), checked as ``from_json``
        checks a position; ``ValueError`` when the row is not one. Its random stream is the one ``from_json`` gives.

        >>> g = SplendorGame(2, seed=3)
        >>> g.step(g.legal_actions()[0])
        >>> SplendorGame.from_state(g.state).to_dict() == g.to_dict()
        True
        """
        row = np.asarray(state)
        if row.dtype != R.STATE_DTYPE or row.shape != (R.STATE_SIZE,):
            raise ValueError(f"invalid position: a Splendor state is an int16[{R.STATE_SIZE}] row, got "
                             f"{row.dtype}{list(row.shape)}")
        try:
            position = position_to_dict(row)
        except (IndexError, KeyError, ValueError) as e:  # a row the engine never wrote: its fields point nowhere
            raise ValueError(f"invalid position: the state row cannot be read ({e})") from None
        return cls.from_json(position)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SplendorGame) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        status = "over" if self.is_over else f"player {self.current_player} to act ({self.phase})"
        return f"SplendorGame({self.num_players} players, ply {self.ply}, scores {self.scores}, {status})"


def _check_level(level: Any) -> int:
    if isinstance(level, bool) or level not in (1, 2, 3):
        raise ValueError(f"level must be 1, 2 or 3, got {quote(level)}")
    return int(level)


# --- illegal-move explanations ------------------------------------------------------------
def _explain(g: SplendorGame, a: int) -> str:
    name = move_name(a)
    if g.is_over:
        return f"{name}: the game is over"
    if g._mask[a]:
        return f"{name} is legal"
    phase, p, k = g.phase, g.current_player, kind(a)
    if phase == "return":
        if k != "return":
            return f"{name}: player {p} must first return tokens down to 10 (return:<colour>)"
        return f"{name}: player {p} has no {name.split(':')[1]} token to return"
    if phase == "noble":
        if k != "noble":
            return f"{name}: player {p} must first choose a noble (noble:<index>)"
        return f"{name}: no qualifying noble at that index"
    if k in ("noble", "return"):
        return f"{name}: only allowed in the {k} phase, the phase is main"
    bank = g.bank
    if k in ("take3", "take2_diff", "take1"):
        colours = name.split(":")[1].split(",")
        empty = [c for c in colours if bank[c] == 0]
        stock = sum(1 for c in R.COLOURS if bank[c] > 0)
        if empty:
            return f"{name}: the bank has no {empty[0]} tokens"
        return f"{name}: {stock} colours are in stock, so a take must be of exactly {min(3, stock)} colours"
    if k == "take2_same":
        c = name.split(":")[1]
        return f"{name} needs 4 {c} in the bank, there are {bank[c]}"
    me = g.player(p)
    if k in ("reserve", "reserve_deck") and len(me["reserved"]) >= R.MAX_RESERVED:
        return f"{name}: player {p} already holds 3 reserved cards"
    if k in ("reserve", "buy"):
        lv, s = (int(x) for x in name.split(":")[1].split("."))
        card = g.market(lv)[s]
        if card is None:
            return f"{name}: market slot {lv}.{s} is empty"
        return f"{name}: {_shortfall(g, p, card)}"
    if k == "reserve_deck":
        return f"{name}: the level {name.split(':')[1]} deck is empty"
    if k == "buy_reserved":
        i = int(name.split(":")[1])
        if i >= len(me["reserved"]):
            return f"{name}: player {p} has only {len(me['reserved'])} reserved card(s)"
        return f"{name}: {_shortfall(g, p, me['reserved'][i][0])}"
    return f"{name}: pass is legal only when no other action is"


def _shortfall(g: SplendorGame, p: int, card: int) -> str:
    cards, _ = R.tables()
    me = g.player(p)
    short = sum(max(0, int(cards[card, R.CARD_COST + c]) - me["bonuses"][col] - me["tokens"][col])
                for c, col in enumerate(R.COLOURS))
    return f"card {card} costs {short} more than player {p}'s tokens and bonuses cover, " \
           f"and they hold {me['tokens']['gold']} gold"
