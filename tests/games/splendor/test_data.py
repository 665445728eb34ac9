"""Card and noble data: the shipped CSVs equal the reference, and the table facts of docs/splendor.md §11."""

import csv
from collections import Counter
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from tabletop_rl.games.splendor import rules as R

REFERENCE = Path(__file__).resolve().parents[4] / "shared" / "reference"  # shared/ beside the checkout
SHIPPED = {"cards.csv": "splendor_cards.csv", "nobles.csv": "splendor_nobles.csv"}


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(text.splitlines()))


@pytest.mark.parametrize(("shipped", "reference"), SHIPPED.items())
def test_shipped_data_equals_reference_row_for_row(shipped, reference):
    ref = REFERENCE / reference
    if not ref.is_file():
        pytest.skip(f"reference data {ref} not found (shared/ is not beside this checkout)")
    ours = (resources.files("tabletop_rl") / "data" / shipped).read_text()
    assert _rows(ours) == _rows(ref.read_text())


@pytest.fixture(scope="module")
def cards():
    return R.tables()[0]


@pytest.fixture(scope="module")
def nobles():
    return R.tables()[1]


def test_cards_per_level(cards):
    assert [int(np.sum(cards[:, R.CARD_LEVEL] == lv)) for lv in (1, 2, 3)] == [40, 30, 20]


def test_cards_per_colour_per_level(cards):
    for level, per_colour in ((1, 8), (2, 6), (3, 4)):
        at_level = cards[cards[:, R.CARD_LEVEL] == level]
        counts = np.bincount(at_level[:, R.CARD_BONUS], minlength=5)
        assert counts.tolist() == [per_colour] * 5


def test_points_per_level(cards):
    totals = [int(cards[cards[:, R.CARD_LEVEL] == lv, R.CARD_POINTS].sum()) for lv in (1, 2, 3)]
    assert totals == [5, 55, 80]


def test_point_distribution_per_level(cards):
    def spread(level):
        pts = cards[cards[:, R.CARD_LEVEL] == level, R.CARD_POINTS]
        return dict(Counter(pts.tolist()))
    assert spread(1) == {0: 35, 1: 5}
    assert spread(2) == {1: 10, 2: 15, 3: 5}
    assert spread(3) == {3: 5, 4: 10, 5: 5}


def test_total_cost_ranges(cards):
    for level, (lo, hi) in ((1, (3, 5)), (2, (5, 8)), (3, (7, 14))):
        total = cards[cards[:, R.CARD_LEVEL] == level, R.CARD_COST:].sum(axis=1)
        assert (int(total.min()), int(total.max())) == (lo, hi)


def test_demand_per_colour_is_equal(cards):
    for level, demand in ((1, 33), (2, 41), (3, 43)):
        per_colour = cards[cards[:, R.CARD_LEVEL] == level, R.CARD_COST:].sum(axis=0)
        assert per_colour.tolist() == [demand] * 5


def test_nobles_shapes_and_colour_use(nobles):
    assert nobles.shape == (10, 5)
    shapes = sorted(tuple(sorted(int(x) for x in row if x)) for row in nobles)
    assert shapes == [(3, 3, 3)] * 5 + [(4, 4)] * 5
    assert (nobles > 0).sum(axis=0).tolist() == [5] * 5


def test_every_noble_is_worth_three_points():
    ref = REFERENCE / "splendor_nobles.csv"
    text = ref.read_text() if ref.is_file() else \
        (resources.files("tabletop_rl") / "data" / "nobles.csv").read_text()
    assert {row["points"] for row in csv.DictReader(text.splitlines())} == {"3"}
    assert R.NOBLE_POINTS == 3
