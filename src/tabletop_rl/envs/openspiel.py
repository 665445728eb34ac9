"""Splendor as an OpenSpiel game (needs the ``[openspiel]`` extra): ``pyspiel.load_game("tabletop_splendor")``.

Importing this module registers the game, as OpenSpiel's own Python games register when imported (``import
tabletop_rl`` alone loads no framework). Parameters: ``players`` (2-4, default 2) and ``max_plies`` (default 1000).

Every card that comes into view is an explicit chance node, so OpenSpiel's chance-aware algorithms see the
true odds and no state holds a deck order: the deal (the nobles, then the twelve market cards) and each card
drawn later, through the engine's hook ``SplendorGame.put_on_top`` ("the next card of level L is X"). A card
drawn blind into a reserve is a chance outcome that only the reserving seat sees. So the hidden information of
a state is the other seats' blind reserves, and ``resample_from_infostate`` (what ``ISMCTSBot`` calls) re-deals
them with ``SplendorGame.seat_view``. docs/openspiel_textarena.md says which algorithms are sound here.

An action that cannot be played now (not an integer, an id out of range, an illegal move, at a chance node an
outcome that ``chance_outcomes()`` does not offer) raises a one-line ``ValueError`` (``IllegalActionError`` for
an illegal move or an outcome not offered) and leaves the state as it was, history and strings included.

>>> import pyspiel                                                      # doctest: +SKIP
>>> import tabletop_rl.envs.openspiel                                   # doctest: +SKIP
>>> game = pyspiel.load_game("tabletop_splendor", {"players": 3})        # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from tabletop_rl.core.game import IllegalActionError
from tabletop_rl.core.text import as_index, quote
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import ACTION_NAMES, NUM_ACTIONS, move_name
from tabletop_rl.games.splendor.game import SplendorGame, check_max_plies
from tabletop_rl.games.splendor.observe import observation_size

__all__ = ["GAME_NAME", "SplendorObserver", "SplendorSpielGame", "SplendorSpielState"]

GAME_NAME = "tabletop_splendor"
#: Chance outcomes: a card is its id (0-89), a noble is ``NOBLE_OUTCOME + id``.
NOBLE_OUTCOME = R.NUM_CARDS
_NUM_OUTCOMES = NOBLE_OUTCOME + R.NUM_NOBLES
_DEAL_CARDS = R.SLOTS_PER_LEVEL * 3
#: Cards a game can draw after the deal: each one is a chance node beyond the plies.
_MAX_DRAWS = R.NUM_CARDS - _DEAL_CARDS


def _draw_levels() -> tuple[int, ...]:
    """Per action id, the level (1-3) whose deck the move may draw from, 0 for none: read from the move names
    (``buy:2.1`` and ``reserve:2.1`` refill slot 2.1, ``reserve_deck:2`` takes the top card)."""
    levels = []
    for name in ACTION_NAMES:
        family, _, arg = name.partition(":")
        levels.append(int(arg[0]) if family in ("buy", "reserve", "reserve_deck") else 0)
    return tuple(levels)


_DRAWS_FROM = _draw_levels()
_RESERVE_DECK = frozenset(a for a, name in enumerate(ACTION_NAMES) if name.startswith("reserve_deck:"))
_BUY_RESERVED = frozenset(a for a, name in enumerate(ACTION_NAMES) if name.startswith("buy_reserved:"))

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Splendor (tabletop_rl)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=R.MAX_PLAYERS,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "max_plies": R.DEFAULT_MAX_PLIES},
)


class SplendorSpielGame(pyspiel.Game):
    """The game: 72 player actions (the action table, docs/splendor.md), 100 chance outcomes (90 cards, 10
    nobles), zero-sum end returns (winners share +1, losers share -1; 0 each after the ply cap)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_GAME_TYPE.parameter_specification, **(params or {})}
        players = params["players"]
        if isinstance(players, bool) or players not in (2, 3, 4):
            raise ValueError(f"players must be 2, 3 or 4, got {quote(players)}")
        self.max_plies = check_max_plies(params["max_plies"])
        info = pyspiel.GameInfo(num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=_NUM_OUTCOMES,
                                num_players=players, min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                                max_game_length=self.max_plies + players + 1 + _DEAL_CARDS + _MAX_DRAWS)
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> SplendorSpielState:
        return SplendorSpielState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> SplendorObserver:
        return SplendorObserver(self.num_players(), iig_obs_type, params)


class SplendorSpielState(pyspiel.State):
    """A state: the deal in progress, then a ``SplendorGame`` and, while a drawn card is being decided, the
    player move that draws it. ``_log`` is the public record the information state strings are made from."""

    def __init__(self, game: SplendorSpielGame) -> None:
        super().__init__(game)
        self._max_plies = game.max_plies
        self._deal: list[int] = []  # chance outcomes of the deal so far
        self._game: SplendorGame | None = None
        self._pending = -1  # a player's move waiting for the card it draws
        self._log: list[str] = []
        self._hidden_at: list[int] = []  # history positions of the cards drawn blind into a reserve

    @property
    def splendor(self) -> SplendorGame | None:
        """The ``SplendorGame`` under this state (None during the deal), hidden cards and all, as OpenSpiel's
        own states are: for tests and inspection, never for a policy."""
        return self._game

    # --- the flow --------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._game is None or self._pending >= 0:
            return int(pyspiel.PlayerId.CHANCE)
        if self._game.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return self._game.current_player

    def _legal_actions(self, player: int) -> list[int]:
        assert self._game is not None  # OpenSpiel asks only at a player's node
        return self._game.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        outcomes = self._deal_outcomes() if self._game is None else self._game.deck(_DRAWS_FROM[self._pending])
        return [(o, 1.0 / len(outcomes)) for o in outcomes]

    def _deal_outcomes(self) -> list[int]:
        nobles = self.num_players() + 1
        if len(self._deal) < nobles:
            return [NOBLE_OUTCOME + i for i in range(R.NUM_NOBLES) if NOBLE_OUTCOME + i not in self._deal]
        lv = (len(self._deal) - nobles) // R.SLOTS_PER_LEVEL
        first = R.LEVEL_START[lv]
        return [c for c in range(first, first + R.LEVEL_SIZE[lv]) if c not in self._deal]

    def apply_action(self, action: Any) -> None:
        """OpenSpiel's ``apply_action``, refusing an action before pybind11 converts it: its own error for a
        non-integer spans lines and prints the whole state, and -1 fails a check in OpenSpiel's C++ core."""
        action = as_index(action)
        self._require_playable(action)
        super().apply_action(action)

    def _apply_action(self, action: int) -> None:
        self._require_playable(action)  # C++ callers (its algorithms and tests) come here directly
        if self._game is None:
            self._deal_one(action)
        elif self._pending >= 0:
            self._reveal(self._game, action)
        else:
            self._play(self._game, action)

    def _require_playable(self, action: int) -> None:
        """``IllegalActionError`` unless ``action`` can be played now (``ValueError`` for an id out of range): a
        chance outcome offered, else a legal move. It runs before anything changes, and OpenSpiel records the
        action only once ``_apply_action`` returns, so a refused action leaves the state as it was."""
        game = self._game
        if game is None or self._pending >= 0:
            outcomes = self.chance_outcomes()
            if action not in {o for o, _ in outcomes}:
                raise IllegalActionError(f"{quote(action)} is not among the {len(outcomes)} outcomes of this chance "
                                         f"node (chance_outcomes())", game=SplendorGame.name)
        elif game.is_over:
            raise IllegalActionError("the game is over", game=game.name)
        elif not 0 <= action < NUM_ACTIONS or not game.legal_mask()[action]:
            # explain_illegal raises the game's ValueError for an id out of range
            raise IllegalActionError(game.explain_illegal(action), game=game.name, seat=game.current_player)

    def _deal_one(self, outcome: int) -> None:
        self._deal.append(outcome)
        self._log.append(f"deal {self._outcome_text(outcome)}")
        if len(self._deal) == self.num_players() + 1 + _DEAL_CARDS:
            self._game = _dealt_game(self.num_players(), self._deal, self._max_plies)

    def _play(self, game: SplendorGame, action: int) -> None:
        seat = game.current_player
        # A reserve bought from the hand is made public by the purchase: the record names the card.
        bought = f" card {game.player(seat)['reserved'][action - min(_BUY_RESERVED)][0]}" \
            if action in _BUY_RESERVED else ""
        self._log.append(f"seat {seat}: {ACTION_NAMES[action]}{bought}")
        level = _DRAWS_FROM[action]
        if level and game.deck_sizes[level - 1]:
            self._pending = action
        else:
            game.step(action)

    def _reveal(self, game: SplendorGame, card: int) -> None:
        action, self._pending = self._pending, -1
        level = _DRAWS_FROM[action]
        if action in _RESERVE_DECK:
            self._hidden_at.append(len(self.history()))  # OpenSpiel records the outcome once this returns
            self._log.append(f"seat {game.current_player} draws a level-{level} card into the reserve")
        else:
            self._log.append(f"draw {card}")
        game.put_on_top(level, card)
        game.step(action)

    # --- the result --------------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._game is not None and self._game.is_over

    def returns(self) -> list[float]:
        return [0.0] * self.num_players() if self._game is None else self._game.end_rewards()

    # --- text ----------------------------------------------------------------------------------------
    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return self._outcome_text(as_index(action, "chance outcome", _NUM_OUTCOMES))
        return move_name(action)  # ValueError for an id out of range, which a list index would read from the end

    @staticmethod
    def _outcome_text(outcome: int) -> str:
        return f"noble {outcome - NOBLE_OUTCOME}" if outcome >= NOBLE_OUTCOME else f"card {outcome}"

    def seat_text(self, seat: int, perfect_recall: bool) -> str:
        """What ``seat`` knows: with ``perfect_recall`` the public record of the game and the seat's own
        reserve (its blind draws are the only private facts), else the board as the seat sees it."""
        if perfect_recall:
            own = [] if self._game is None else [c for c, _ in self._game.player(seat)["reserved"]]
            return "\n".join(self._log) + f"\nseat {seat} reserve: {own}"
        if self._game is None:
            return f"dealing: {len(self._deal)} of {self.num_players() + 1 + _DEAL_CARDS} cards and nobles down"
        return self._game.render(viewer=seat)

    def seat_observation(self, seat: int) -> np.ndarray:
        """Our observation of ``seat`` (docs/observations.md); zeros during the deal, when nobody acts."""
        if self._game is None:
            return np.zeros(observation_size(self.num_players()), np.float32)
        return self._game.observe(seat)

    def __str__(self) -> str:
        if self._game is None:
            return self.seat_text(0, perfect_recall=True)
        pending = f"\n(drawing a card for {ACTION_NAMES[self._pending]})" if self._pending >= 0 else ""
        return self._game.render() + pending

    # --- hidden information ----------------------------------------------------------------------------
    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> SplendorSpielState:
        """A state ``player_id`` cannot tell from this one, drawn with ``probability_sampler`` (a callable
        giving a float in [0, 1), e.g. ``pyspiel.UniformProbabilitySampler(0., 1.)``): ``resampled`` with a
        seed from it. ``ISMCTSBot`` calls this itself."""
        return self.resampled(player_id, int(probability_sampler() * 2.0 ** 62))

    def resampled(self, seat: int, seed: int) -> SplendorSpielState:
        """The other seats' blind reserves re-dealt by ``SplendorGame.seat_view(seat, seed)``, as a state
        whose history has those draws changed and is replayed, so the history stays true to the state."""
        if self._game is None:
            return self.clone()
        view = self._game.seat_view(seat, seed)
        swap = {old: new for q in range(self.num_players()) if q != seat
                for (old, blind), (new, _) in zip(self._game.player(q)["reserved"], view.player(q)["reserved"])
                if blind}
        history = self.history()
        for at in self._hidden_at:
            history[at] = swap.get(history[at], history[at])  # a blind reserve since bought stays as drawn
        state = self.get_game().new_initial_state()
        for action in history:
            state.apply_action(action)
        return state


def _dealt_game(num_players: int, deal: list[int], max_plies: int) -> SplendorGame:
    """The game the deal's outcomes make: the nobles, then four cards per level; the decks hold the rest in
    an order nothing reads, since a chance node decides each card before it is drawn."""
    position = SplendorGame(num_players, seed=0, max_plies=max_plies).to_dict()
    nobles, cards = deal[:num_players + 1], deal[num_players + 1:]
    position["nobles"] = [n - NOBLE_OUTCOME for n in nobles]
    for lv in range(3):
        market = cards[lv * R.SLOTS_PER_LEVEL:(lv + 1) * R.SLOTS_PER_LEVEL]
        first = R.LEVEL_START[lv]
        position["market"][str(lv + 1)] = market
        position["decks"][str(lv + 1)] = [c for c in range(first, first + R.LEVEL_SIZE[lv]) if c not in market]
    return SplendorGame.from_json(position)


class SplendorObserver:
    """OpenSpiel's observer (``make_py_observer``): the tensor is our observation vector of the seat, the
    string is the seat's board (or, for perfect recall, its information state string)."""

    def __init__(self, num_players: int, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> None:
        if params:
            raise ValueError(f"the Splendor observer takes no parameters, got {quote(params)}")
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.tensor = np.zeros(observation_size(num_players), np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: SplendorSpielState, player: int) -> None:
        self.tensor[:] = state.seat_observation(player)

    def string_from(self, state: SplendorSpielState, player: int) -> str:
        return state.seat_text(player, self.perfect_recall)


pyspiel.register_game(_GAME_TYPE, SplendorSpielGame)
