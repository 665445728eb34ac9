"""Klaverjas baselines: the rule-based ``heuristic`` and the distilled ``model`` (registered, with the
determinised ``search`` of ``tabletop_rl.agents.search.klaverjas``, by ``tabletop_rl.agents.klaverjas``).

Policies get the seat's view (``KlaverjasGame.policy_info``, a ``SeatView``), whose game holds only what
the seat may see: its own hand and the public record.

``heuristic`` (deterministic), for trump choice: a suit's strength is its trump points in hand plus
10 per card; name the strongest suit (pass under ``free_with_pass`` / ``proposed_suit`` when it is
below 45, unless forced). Kraken: a defender doubles (kraak) when its own strength in the trump suit
is at least 50 (the jack and two more trumps, say: the makers will struggle); the maker or its partner
redoubles (rekraak) at 75 or more. For play, each legal card gets a score and the highest wins:

- leading: the highest unplayed trump if our team made trump and we hold it (pull trumps), else a
  plain ace, else the cheapest card (fewest points, weakest, plain before trump);
- an opponent holds the trick: the cheapest card that takes it over, else the cheapest card;
- the partner holds the trick: as last to play add the most points ("smear"), else the cheapest card.

>>> from tabletop_rl.games.klaverjas import rules as R
>>> s = R.position({0: ["AS"], 1: ["7S"], 2: ["9H"], 3: ["8S", "10S"]}, "H", leader=0, table=["AS", "7S", "9H"])
>>> from tabletop_rl.games.klaverjas.game import KlaverjasGame
>>> R.card_name(HeuristicPolicy("heuristic").act(None, _mask(s), KlaverjasGame(s).policy_info(3)))
'8S'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tabletop_rl.core.game import view_game_and_seat
from tabletop_rl.core.policy import BasePolicy
from tabletop_rl.games.klaverjas import model as M
from tabletop_rl.games.klaverjas import rules as R

__all__ = ["HeuristicPolicy", "ModelPolicy", "bid_action", "heuristic_scores", "state_and_seat"]

_BID_THRESHOLD = 45
_KRAAK_THRESHOLD = 50
_REKRAAK_THRESHOLD = 75


def _mask(state: np.ndarray) -> np.ndarray:
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    return mask


def state_and_seat(info: Mapping[str, Any], policy: str) -> tuple[np.ndarray, int]:
    """The state row of the view's game and its seat (``core.game.view_game_and_seat``), checked: the seat must
    be the one to act."""
    game, seat = view_game_and_seat(info, policy)
    state = game.state
    if int(state[R.CURRENT]) != seat:
        raise ValueError(f"{policy}: the view's seat is {seat} but seat {int(state[R.CURRENT])} is to act")
    return state, seat


# --- trump choice ---------------------------------------------------------------------------------
def _suit_strength(hand: int, suit: int) -> int:
    """Trump points held in ``suit`` plus 10 per card of it.

    >>> _suit_strength(R.hand_of([R.card_id("JH"), R.card_id("9H")]), R.suit_id("H"))
    54
    """
    cards = [c for c in R.cards_of(hand) if c >> 3 == suit]
    return sum(int(R.TRUMP_POINTS[c & 7]) for c in cards) + 10 * len(cards)


def bid_action(state: np.ndarray, mask: np.ndarray) -> int:
    """The heuristic's trump-choice or kraken action (``mask`` is the legal mask of the seat to act)."""
    hand = int(state[R.HAND + state[R.CURRENT]])
    if int(state[R.PHASE]) == R.DOUBLING:
        strength = _suit_strength(hand, int(state[R.TRUMP]))
        if mask[R.KRAAK]:
            return R.KRAAK if strength >= _KRAAK_THRESHOLD else R.PASS
        return R.REKRAAK if strength >= _REKRAAK_THRESHOLD else R.PASS
    if mask[R.ACCEPT]:
        strong = _suit_strength(hand, int(state[R.PROPOSED])) >= _BID_THRESHOLD
        return R.ACCEPT if strong or not mask[R.PASS] else R.PASS
    suit = max(range(4), key=lambda s: _suit_strength(hand, s))
    if mask[R.PASS] and _suit_strength(hand, suit) < _BID_THRESHOLD:
        return R.PASS
    return R.NAME_TRUMP + suit


# --- card play ------------------------------------------------------------------------------------
def _cheapness(card: int, trump: int) -> float:
    """Higher for cards that cost less to give away: few points, weak, not trump."""
    strength = R.TRUMP_STRENGTH[card & 7] + (8 if card >> 3 == trump else 0)
    return -float(R.card_points(card, trump)) - strength / 20


def _highest_unplayed_trump(state: np.ndarray, trump: int) -> int:
    played = {int(c) for c in state[R.TRICK:R.TRICK + 32] if c >= 0}
    live = [8 * trump + r for r in range(8) if 8 * trump + r not in played]
    return max(live, key=lambda c: R.TRUMP_STRENGTH[c & 7]) if live else -1


def heuristic_scores(state: np.ndarray, legal: list[int]) -> dict[int, tuple[float, str]]:
    """``{card: (score, reason)}`` for the legal cards of the seat to act (higher is better)."""
    seat, trump = int(state[R.CURRENT]), int(state[R.TRUMP])
    table = np.full(4, 0, np.int64)
    n = R.current_trick(state, table)
    if n == 0:
        return {c: _lead_score(state, seat, trump, c) for c in legal}
    led = int(table[0]) >> 3
    winning = R.winning_position(table, n, trump)
    best = R.strength(int(table[winning]), trump, led)
    partner_winning = winning == n - 2
    scores = {}
    for card in legal:
        cheap = _cheapness(card, trump)
        takes = R.strength(card, trump, led) > best
        if partner_winning:
            scores[card] = ((50 + float(R.card_points(card, trump)), "smear points on partner's trick") if n == 3
                            else (cheap, "partner holds the trick: keep it cheap"))
        elif takes:
            scores[card] = (100 + cheap, "take the trick as cheaply as possible")
        else:
            scores[card] = (cheap, "cannot take the trick: discard low")
    return scores


def _lead_score(state: np.ndarray, seat: int, trump: int, card: int) -> tuple[float, str]:
    makers = R.team_of(int(state[R.MAKER])) == R.team_of(seat)
    if makers and card == _highest_unplayed_trump(state, trump):
        return 200.0, "pull trumps with the highest one left"
    if card >> 3 != trump and card & 7 == 7:
        return 150.0 + _cheapness(card, trump), "lead a plain ace"
    return _cheapness(card, trump), "lead the cheapest card"


def _deciding_before_play(state: np.ndarray) -> bool:
    """Whether the seat to act chooses trump or (kraken) doubles rather than plays a card."""
    return int(state[R.PHASE]) in (R.BIDDING, R.DOUBLING)


class HeuristicPolicy(BasePolicy):
    """The rule-based baseline of the module docstring; deterministic (``seed`` unused)."""

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        state, _ = state_and_seat(info, "heuristic")
        if _deciding_before_play(state):
            return bid_action(state, mask)
        scores = heuristic_scores(state, [int(a) for a in np.flatnonzero(mask[:R.NUM_CARDS])])
        return max(scores, key=lambda c: scores[c][0])


class ModelPolicy(BasePolicy):
    """The distilled MLP (``model.py``): the legal card it scores highest; ``path`` ``packaged`` = the shipped
    model.txt. Trump choice and kraken as ``heuristic``."""

    def __init__(self, name: str = "model", seed: int | None = None, path: str = "packaged") -> None:
        super().__init__(name, seed)
        self.model = M.load(M.model_file(path))

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        state, _ = state_and_seat(info, "model")
        if _deciding_before_play(state):
            return bid_action(state, mask)
        scores = self.model.card_scores(state, [int(a) for a in np.flatnonzero(mask[:R.NUM_CARDS])])
        return max(scores, key=lambda c: (scores[c], -c))

