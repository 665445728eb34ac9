"""Determinisation: deal the cards a seat cannot see to the other seats, consistently with
everything that seat has seen — card counts, voids revealed by failing to follow, and the trump
limits the follow rules imply (docs/klaverjas.md §9).

Only the seat's own hand and the public record (tricks, leaders, trump, rules) are read, so two
positions that differ only in how the hidden cards are split give the same samples.

>>> from tabletop_rl.games.klaverjas import rules as R
>>> s = R.new_state(seed=4); R.apply_action(s, R.NAME_TRUMP + 2)
>>> d = determinize(s, seat=0, rng=np.random.default_rng(1))
>>> int(d[R.HAND]) == int(s[R.HAND]), sorted(R.cards_of(int(d[R.HAND:R.HAND + 4].sum()))) == list(range(32))
(True, True)
"""

from __future__ import annotations

import numpy as np

from tabletop_rl.games.klaverjas import rules as R

__all__ = ["determinize", "excluded_by_play", "hidden_constraints"]

_TRIES = 200


def excluded_by_play(before: list[int], card: int, trump: int, regime: int) -> int:
    """Cards a player cannot still hold after playing ``card`` onto ``before`` (the trick so far) under the
    follow ``regime`` (``rules.FOLLOW_*``).

    >>> excluded_by_play([R.card_id("AC")], R.card_id("7S"), trump=2, regime=R.FOLLOW_ROTTERDAM) == \\
    ...     R.hand_of([*range(0, 8), *range(16, 24)])      # void in clubs, and no trump (Rotterdam)
    True
    """
    if not before:
        return 0
    led = before[0] >> 3
    n = len(before)
    trumps = 0xFF << (8 * trump)
    best = max((int(R.TRUMP_STRENGTH[c & 7]) for c in before if c >> 3 == trump), default=0)
    higher = R.hand_of([8 * trump + r for r in range(8) if R.TRUMP_STRENGTH[r] > best])
    played_trump = card >> 3 == trump
    undertrump = played_trump and R.TRUMP_STRENGTH[card & 7] < best
    excluded = 0 if card >> 3 == led else 0xFF << (8 * led)
    if led == trump:
        return excluded | (higher if undertrump else 0)
    if card >> 3 == led:
        return excluded
    if regime == R.FOLLOW_ROTTERDAM:  # void in a plain suit: must trump, and overtrump when able
        return excluded | (higher if undertrump else 0) | (0 if played_trump else trumps)
    cards = np.array(before + [0] * (4 - n), np.int64)
    partner_winning = n >= 2 and R.winning_position(cards, n, trump) == n - 2
    if undertrump and (partner_winning or regime == R.FOLLOW_AMSTERDAM):
        return excluded | higher | (R.ALL_CARDS & ~trumps)  # allowed only when holding nothing but lower trumps
    if played_trump or partner_winning:  # free, or trumped: only a forced undertrump shows no higher trump
        return excluded | (higher if undertrump else 0)
    if regime == R.FOLLOW_AMSTERDAM_FORCED:  # a discard against an opponent: no trump at all
        return excluded | trumps
    return excluded | (higher if best else trumps)


def hidden_constraints(state: np.ndarray, seat: int) -> tuple[list[int], list[int]]:
    """For each seat, the unseen cards it may hold and how many it holds (``seat`` itself: none).

    >>> from tabletop_rl.games.klaverjas import rules as R
    >>> s = R.new_state(seed=4); R.apply_action(s, R.NAME_TRUMP)
    >>> allowed, counts = hidden_constraints(s, 0); counts
    [0, 8, 8, 8]
    """
    unknown = R.ALL_CARDS & ~int(state[R.HAND + seat])
    trump, regime = int(state[R.TRUMP]), int(R.follow_regime(state))
    counts = [8] * 4
    allowed = [0] * 4
    excluded = [0] * 4
    for t in range(int(state[R.TRICK_NO]) + 1):
        leader = int(state[R.LEADER + t])
        cards = [int(c) for c in state[R.TRICK + 4 * t:R.TRICK + 4 * t + 4] if c >= 0]
        for k, card in enumerate(cards):
            player = (leader + k) % 4
            unknown &= ~(1 << card)
            counts[player] -= 1
            if trump >= 0:
                excluded[player] |= excluded_by_play(cards[:k], card, trump, regime)
    for s in range(4):
        allowed[s] = 0 if s == seat else unknown & ~excluded[s]
    counts[seat] = 0
    return allowed, counts


def _sample_hands(allowed: list[int], counts: list[int], rng: np.random.Generator) -> list[int]:
    """Hands (card sets) dealing every unseen card to a seat that may hold it, ``counts[s]`` each;
    ``ValueError`` when no such deal is found (the record contradicts itself)."""
    cards = R.cards_of(int(np.bitwise_or.reduce(np.array(allowed, np.int64))))
    if sum(counts) != len(cards):
        raise ValueError(f"{len(cards)} unseen cards cannot fill hands of sizes {counts}")
    holders = {c: [s for s in range(4) if (allowed[s] >> c) & 1] for c in cards}
    for _ in range(_TRIES):
        hands, room = [0] * 4, list(counts)
        order = sorted(cards, key=lambda c: (len(holders[c]), rng.random()))  # most constrained first
        for card in order:
            options = [s for s in holders[card] if room[s] > 0]
            if not options:
                break
            weights = np.array([room[s] for s in options], np.float64)
            seat = options[int(rng.choice(len(options), p=weights / weights.sum()))]
            hands[seat] |= 1 << card
            room[seat] -= 1
        else:
            return hands
    raise ValueError("no deal of the unseen cards is consistent with the tricks played (voids / trump limits)")


def determinize(state: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``state`` with the other seats' hands re-dealt as ``seat`` could believe them."""
    allowed, counts = hidden_constraints(state, seat)
    hands = _sample_hands(allowed, counts, rng)
    copy = state.copy()
    for s in range(4):
        if s != seat:
            copy[R.HAND + s] = hands[s]
    return copy
