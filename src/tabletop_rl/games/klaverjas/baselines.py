"""Klaverjas policies: the rule-based ``heuristic`` and the determinised ``search``, registered for the
arena (``random`` comes from the shared registry).

Policies get ``info={"state": row, "player": seat}`` (``info["game"]`` may be the env, whose
``state_row`` is used). They read only what ``seat`` may see: its own hand and the public record;
``search`` solves determinised copies (``determinize.py``), never the true deal.

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
>>> from tabletop_rl.agents import make_policy
>>> s = R.position({0: ["AS"], 1: ["7S"], 2: ["9H"], 3: ["8S", "10S"]}, "H", leader=0, table=["AS", "7S", "9H"])
>>> R.card_name(make_policy("heuristic", game="klaverjas").act(None, _mask(s), {"state": s, "player": 3}))
'8S'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tabletop_rl.agents.base import BasePolicy, Option, register_policy
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.determinize import determinize
from tabletop_rl.games.klaverjas.solver import INF, card_values, deal_value, new_table

BID_THRESHOLD = 45
KRAAK_THRESHOLD = 50
REKRAAK_THRESHOLD = 75
OBJECTIVES = ("score", "points")


def _mask(state: np.ndarray) -> np.ndarray:
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    R.legal_mask(state, mask)
    return mask


def state_and_seat(info: Mapping[str, Any], policy: str) -> tuple[np.ndarray, int]:
    """``info``'s state row and seat, checked: the seat must be the one to act."""
    state = info.get("state")
    if state is None and info.get("game") is not None:
        state = getattr(info["game"], "state_row", info["game"])
    seat = info.get("player")
    if state is None or seat is None:
        raise ValueError(f"{policy} needs info={{'state': klaverjas state row, 'player': seat}}")
    if int(state[R.CURRENT]) != seat:
        raise ValueError(f"{policy}: info['player'] is {seat} but player {int(state[R.CURRENT])} is to act")
    return state, int(seat)


# --- trump choice ---------------------------------------------------------------------------------
def suit_strength(hand: int, suit: int) -> int:
    """Trump points held in ``suit`` plus 10 per card of it.

    >>> suit_strength(R.hand_of([R.card_id("JH"), R.card_id("9H")]), R.suit_id("H"))
    54
    """
    cards = [c for c in R.cards_of(hand) if c >> 3 == suit]
    return sum(int(R.TRUMP_POINTS[c & 7]) for c in cards) + 10 * len(cards)


def bid_action(state: np.ndarray, mask: np.ndarray) -> int:
    """The heuristic's trump-choice or kraken action (``mask`` is the legal mask of the seat to act)."""
    hand = int(state[R.HAND + state[R.CURRENT]])
    if int(state[R.PHASE]) == R.DOUBLING:
        strength = suit_strength(hand, int(state[R.TRUMP]))
        if mask[R.KRAAK]:
            return R.KRAAK if strength >= KRAAK_THRESHOLD else R.PASS
        return R.REKRAAK if strength >= REKRAAK_THRESHOLD else R.PASS
    if mask[R.ACCEPT]:
        strong = suit_strength(hand, int(state[R.PROPOSED])) >= BID_THRESHOLD
        return R.ACCEPT if strong or not mask[R.PASS] else R.PASS
    suit = max(range(4), key=lambda s: suit_strength(hand, s))
    if mask[R.PASS] and suit_strength(hand, suit) < BID_THRESHOLD:
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


def deciding_before_play(state: np.ndarray) -> bool:
    """Whether the seat to act chooses trump or (kraken) doubles rather than plays a card."""
    return int(state[R.PHASE]) in (R.BIDDING, R.DOUBLING)


class HeuristicPolicy(BasePolicy):
    """The rule-based baseline of the module docstring; deterministic (``seed`` unused)."""

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        state, _ = state_and_seat(info, "heuristic")
        if deciding_before_play(state):
            return bid_action(state, mask)
        scores = heuristic_scores(state, [int(a) for a in np.flatnonzero(mask[:R.NUM_CARDS])])
        return max(scores, key=lambda c: scores[c][0])


# --- determinised search ----------------------------------------------------------------------------
def pimc_card_samples(state: np.ndarray, seat: int, samples: int, rng: np.random.Generator, table: np.ndarray,
                      counter: np.ndarray | None = None) -> np.ndarray:
    """Perfect-information Monte Carlo from ``seat``'s view: ``float[samples, 32]``, for each of ``samples``
    deals of the unseen cards consistent with what the seat has seen (``determinize``), the exact value
    (``solver.card_values``: the rest of the deal's points for the seat's team minus the other's) of each
    legal card, NaN for the others. ``table``: a ``solver.new_table()`` to reuse across calls.

    >>> s = R.new_state(seed=2); R.apply_action(s, R.NAME_TRUMP + 1)
    >>> values = pimc_card_samples(s, 0, 2, np.random.default_rng(0), new_table(12))
    >>> values.shape, np.flatnonzero(~np.isnan(values[0])).tolist() == R.cards_of(int(s[R.HAND]))
    ((2, 32), True)
    """
    out = np.empty(R.NUM_CARDS, np.int64)
    counter = np.zeros(1, np.int64) if counter is None else counter
    values = np.empty((samples, R.NUM_CARDS), np.float64)
    for i in range(samples):
        card_values(determinize(state, seat, rng), out, table, counter)
        values[i] = np.where(out > -INF, out, np.nan)
    return values


def deal_score_difference(state: np.ndarray, team: int, rest: np.ndarray) -> np.ndarray:
    """The deal score of ``team`` minus the other team's when the rest of the deal adds ``rest`` (point
    differences for ``team``) to the points so far: the point difference while the makers make it, else
    nat: the defenders' 162 plus the roem so far (roem still to come and pit are not counted). NaN stays.

    >>> s = R.position({0: ["AS"], 1: ["7S"], 2: ["9H"], 3: ["8S"]}, "H", leader=0, maker=0)
    >>> deal_score_difference(s, 0, np.array([21.0, -21.0, np.nan])).tolist()
    [21.0, -162.0, nan]
    """
    so_far = [int(state[R.CARD_POINTS + t] + state[R.ROEM + t]) for t in range(2)]
    d = so_far[team] - so_far[1 - team] + rest
    nat = R.DEAL_TOTAL + int(state[R.ROEM] + state[R.ROEM + 1])
    if R.team_of(int(state[R.MAKER])) == team:
        scored = np.where(d > 0, d, -nat)
    else:
        scored = np.where(d < 0, d, nat)
    return np.where(np.isnan(rest), np.nan, scored)


def card_means(state: np.ndarray, seat: int, values: np.ndarray, objective: str) -> dict[int, float]:
    """Mean over the samples of each legal card's value (``pimc_card_samples``) for ``objective``:
    ``points`` (point difference) or ``score`` (``deal_score_difference``: nat counts)."""
    if objective == "score":
        values = deal_score_difference(state, R.team_of(seat), values)
    legal = np.flatnonzero(~np.isnan(values[0]))
    return dict(zip(legal.tolist(), values[:, legal].mean(axis=0).tolist()))


class SearchPolicy(BasePolicy):
    """Perfect-information Monte Carlo (``pimc_card_samples``) with ``samples`` deals per decision: the card
    with the best mean value for ``objective`` (``score``: the deal score, nat included, the default;
    ``points``: the point difference). Trump choice as ``heuristic``. Kraken: the same samples, each deal
    solved from its first lead (``solver.deal_value``), give the mean deal-score margin of the makers; a
    defender doubles when it is below zero, a maker redoubles when it is above. ``stats.nodes``: solver nodes."""

    def __init__(self, name: str = "search", seed: int | None = None, samples: int = 12,
                 objective: str = "score") -> None:
        super().__init__(name, seed)
        if samples < 1:
            raise ValueError(f"samples must be at least 1, got {samples}")
        self.samples = samples
        self.objective = OBJECTIVES[R.option_index(objective, "objective", OBJECTIVES)]
        self._table = new_table()

    def card_means(self, state: np.ndarray, seat: int) -> dict[int, float]:
        """Mean value (for ``objective``, the seat's team) of each legal card over the samples."""
        counter = np.zeros(1, np.int64)
        values = pimc_card_samples(state, seat, self.samples, self.rng, self._table, counter)
        self.add_nodes(int(counter[0]))
        return card_means(state, seat, values, self.objective)

    def makers_margin(self, state: np.ndarray, seat: int) -> float:
        """Mean over the samples of the makers' deal score minus the defenders' (``deal_score_difference``),
        each sampled deal solved from its first lead; ``state`` is in the doubling phase."""
        counter = np.zeros(1, np.int64)
        makers = R.team_of(int(state[R.MAKER]))
        rest = np.empty(self.samples)
        for i in range(self.samples):
            deal = determinize(state, seat, self.rng)
            R.open_play(deal)
            rest[i] = (1 if makers == 0 else -1) * deal_value(deal, self._table, counter)
        self.add_nodes(int(counter[0]))
        return float(deal_score_difference(state, makers, rest).mean())

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        state, seat = state_and_seat(info, "search")
        if int(state[R.PHASE]) == R.DOUBLING:
            margin = self.makers_margin(state, seat)
            if mask[R.KRAAK]:
                return R.KRAAK if margin < 0 else R.PASS
            return R.REKRAAK if margin > 0 else R.PASS
        if int(state[R.PHASE]) == R.BIDDING:
            return bid_action(state, mask)
        means = self.card_means(state, seat)
        return max(means, key=lambda c: (means[c], -c))


class ModelPolicy(BasePolicy):
    """The distilled MLP (``model.py``): the legal card it scores highest; ``path`` ``packaged`` = the shipped
    model.txt. Trump choice and kraken as ``heuristic``."""

    def __init__(self, name: str = "model", seed: int | None = None, path: str = "packaged") -> None:
        super().__init__(name, seed)
        from tabletop_rl.games.klaverjas import model as M

        resolved = M.packaged_model_path() if path == "packaged" else path
        if resolved is None:
            raise ValueError("model: no packaged model.txt; pass model:path=FILE")
        self.model = M.load(resolved)

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        state, _ = state_and_seat(info, "model")
        if deciding_before_play(state):
            return bid_action(state, mask)
        scores = self.model.card_scores(state, [int(a) for a in np.flatnonzero(mask[:R.NUM_CARDS])])
        return max(scores, key=lambda c: (scores[c], -c))


register_policy("klaverjas", "heuristic", HeuristicPolicy)
register_policy("klaverjas", "model", ModelPolicy, (Option("path", str, "packaged"),))
register_policy("klaverjas", "search", SearchPolicy, (Option("samples", int, 12), Option("objective", str, "score")))
