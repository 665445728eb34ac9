"""How far Splendor's cards and nobles are symmetric under renaming the five gem colours.

    python benchmarks/colour_symmetry.py [--rows 8]

A renaming (permutation) of the colours maps a card to the card with the renamed bonus and each cost moved to the
renamed colour. It is a symmetry of the game only if every level's cards (and the nobles) map onto themselves: a
renamed position must be one the real cards could deal. For each permutation the table counts the cards (and
nobles) whose image is a real card of the same level with the same points (an exact image; duplicates are
matched as a multiset), and the cards whose image has a real card's level, points, bonus and cost amounts, in
whichever colours (the same shape). Read from the repository's own tables (``rules.tables()``).
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from collections.abc import Sequence

import numpy as np

from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import LETTERS

Permutation = tuple[int, ...]


def cycles(perm: Permutation) -> str:
    """Cycle notation in the board's letters: ``(1, 2, 3, 4, 0)`` (white becomes blue, ...) is ``(w b g r k)``."""
    seen, parts = set(), []
    for start in range(5):
        if start in seen or perm[start] == start:
            continue
        cycle, c = [], start
        while c not in seen:
            seen.add(c)
            cycle.append(LETTERS[c])
            c = perm[c]
        parts.append("(" + " ".join(cycle) + ")")
    return "".join(parts) or "identity"


def image(row: np.ndarray, perm: Permutation) -> tuple[int, ...]:
    """A card row's image under ``perm``: level, renamed bonus, points, and the costs in the renamed colours."""
    cost = [0] * 5
    for c in range(5):
        cost[perm[c]] = int(row[R.CARD_COST + c])
    return int(row[R.CARD_LEVEL]), perm[int(row[R.CARD_BONUS])], int(row[R.CARD_POINTS]), *cost


def shape(card: tuple[int, ...]) -> tuple[int, ...]:
    """Level, bonus, points and the cost amounts in decreasing order: what a renaming of the non-bonus colours
    could not change."""
    return *card[:3], *sorted(card[3:], reverse=True)


def matched(images: Sequence[tuple[int, ...]], real: Counter) -> int:
    """How many of ``images`` are real, each real card matched at most as often as it occurs."""
    return sum((Counter(images) & real).values())


def table(cards: np.ndarray, nobles: np.ndarray) -> list[tuple[Permutation, list[int], int]]:
    """Per permutation: exact images per level and of the nobles, and the cards of the same shape; best first."""
    identity = tuple(range(5))
    levels = [cards[R.LEVEL_START[lv]:R.LEVEL_START[lv] + R.LEVEL_SIZE[lv]] for lv in range(3)]
    real = [Counter(image(row, identity) for row in rows) for rows in levels]
    real_shapes = Counter(shape(image(row, identity)) for row in cards)
    real_nobles = Counter(tuple(map(int, row)) for row in nobles)
    rows = []
    for perm in itertools.permutations(range(5)):
        exact = [matched([image(row, perm) for row in level], found) for level, found in zip(levels, real)]
        renamed = [tuple(int(row[perm.index(c)]) for c in range(5)) for row in nobles]
        exact.append(matched(renamed, real_nobles))
        shapes = matched([shape(image(row, perm)) for row in cards], real_shapes)
        rows.append((perm, exact, shapes))
    rows.sort(key=lambda r: (-sum(r[1]), r[0]))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8, help="permutations shown, best first (all 120: --rows 120)")
    args = parser.parse_args(argv)
    cards, nobles = R.tables()
    rows = table(cards, nobles)
    sizes = [*R.LEVEL_SIZE, R.NUM_NOBLES]
    print("| permutation | level 1 (of 40) | level 2 (of 30) | level 3 (of 20) | nobles (of 10) | all (of 100) "
          "| same shape (of 90) |")
    print("|---|---|---|---|---|---|---|")
    for perm, exact, shapes in rows[:args.rows]:
        print(f"| {cycles(perm)} | " + " | ".join(map(str, exact)) + f" | {sum(exact)} | {shapes} |")
    closed = [cycles(p) for p, exact, _ in rows if exact == sizes]
    others = [sum(exact) for perm, exact, _ in rows if len({(perm[c] - c) % 5 for c in range(5)}) > 1]
    print(f"\npermutations that map every level and the nobles onto themselves: {', '.join(closed)}")
    print(f"the {len(others)} permutations that are not a rotation of w b g r k: exact images of all 100 from "
          f"{min(others)} to {max(others)}, median {int(np.median(others))}")
    mean_cards = np.mean([sum(exact[:3]) for _, exact, _ in rows])
    print(f"a permutation drawn uniformly from all {len(rows)}: on average {mean_cards:.1f} of the {R.NUM_CARDS} "
          f"cards have an exact image")


if __name__ == "__main__":
    main()
