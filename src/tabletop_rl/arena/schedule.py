"""Which games a tournament plays: tables of policies, seat rotation, and the seed of every deal.

Every table (a pair of policies for two players; every choice of ``num_players`` policies otherwise)
plays ``games`` games. Games come in *deals* of ``num_players`` games: one seed, the table's lineup
rotated one seat per game, so every policy sits in every seat on the same cards (for two players:
each seed is played once with the seats swapped). Deal ``k`` uses the same seed at every table, and
the games are numbered deal by deal, so an interrupted run has played the tables evenly.

>>> [(m.index, m.deal, m.seats) for m in schedule(["a", "b"], games=4, seed=0)]
[(0, 0, ('a', 'b')), (1, 0, ('b', 'a')), (2, 1, ('a', 'b')), (3, 1, ('b', 'a'))]
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = ["Match", "check_players", "derive_seed", "schedule"]


@dataclass(frozen=True)
class Match:
    """One scheduled game: its number in the run, its deal number and seed, and who sits where."""

    index: int
    deal: int
    seed: int
    seats: tuple[str, ...]


def derive_seed(*keys: int) -> int:
    """A 63-bit seed mixed from integer keys (e.g. run seed and deal number), stable across platforms.

    >>> derive_seed(0, 1) == derive_seed(0, 1) != derive_seed(1, 0)
    True
    """
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _tables(players: list[str], num_players: int) -> list[tuple[str, ...]]:
    """The lineups that meet: every ``num_players``-subset of ``players``, in list order.

    >>> _tables(["a", "b", "c"], 2)
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    return list(combinations(players, num_players))


def _rotate(lineup: tuple[str, ...], shift: int) -> tuple[str, ...]:
    """The lineup moved ``shift`` seats: ``_rotate(("a", "b", "c"), 1) == ("b", "c", "a")``."""
    shift %= len(lineup)
    return lineup[shift:] + lineup[:shift]


def schedule(players: list[str], games: int, seed: int, num_players: int = 2) -> list[Match]:
    """All games of a run, by index; ``games`` per table (use a multiple of ``num_players`` for
    balanced seats). ``ValueError`` when the table cannot be filled."""
    check_players(players, num_players)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer (games per table), got {games!r}")
    lineups = _tables(players, num_players)
    order = sorted((i // num_players, t, i % num_players) for t in range(len(lineups)) for i in range(games))
    return [Match(index, deal, derive_seed(seed, deal), _rotate(lineups[t], shift))
            for index, (deal, t, shift) in enumerate(order)]


def check_players(players: list[str], num_players: int) -> None:
    """At least ``num_players`` different policies, so each seat at a table is a different one."""
    if len(set(players)) != len(players):
        dup = next(p for p in players if players.count(p) > 1)
        raise ValueError(f"policy {dup!r} is listed twice; list each policy once")
    if len(players) < max(2, num_players):
        raise ValueError(f"{num_players}-player games need at least {max(2, num_players)} different policies, "
                         f"got {len(players)}: {', '.join(players) or 'none'}")
