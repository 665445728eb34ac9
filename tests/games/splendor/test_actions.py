"""The fixed action table: 72 names in the order of the issue's table, ids <-> names, kinds."""

from itertools import combinations

import numpy as np
import pytest

from tabletop_rl.games.splendor.actions import ACTION_NAMES, NUM_ACTIONS, kind, move_id, move_name

COLOURS = ["white", "blue", "green", "red", "black"]
SLOTS = [f"{level}.{slot}" for level in (1, 2, 3) for slot in range(4)]

# Written out from the issue's table, family by family, independently of actions.py.
EXPECTED = (
    [f"take:{','.join(t)}" for t in combinations(COLOURS, 3)]
    + [f"take:{','.join(t)}" for t in combinations(COLOURS, 2)]
    + [f"take:{c}" for c in COLOURS]
    + [f"take2:{c}" for c in COLOURS]
    + [f"reserve:{s}" for s in SLOTS]
    + [f"reserve_deck:{lv}" for lv in (1, 2, 3)]
    + [f"buy:{s}" for s in SLOTS]
    + [f"buy_reserved:{i}" for i in range(3)]
    + [f"noble:{i}" for i in range(5)]
    + [f"return:{c}" for c in COLOURS + ["gold"]]
    + ["pass"]
)

FAMILIES = [
    (range(0, 10), "take3"), (range(10, 20), "take2_diff"), (range(20, 25), "take1"),
    (range(25, 30), "take2_same"), (range(30, 42), "reserve"), (range(42, 45), "reserve_deck"),
    (range(45, 57), "buy"), (range(57, 60), "buy_reserved"), (range(60, 65), "noble"),
    (range(65, 71), "return"), (range(71, 72), "pass"),
]


def test_table_has_72_names_in_the_issue_order():
    assert NUM_ACTIONS == 72
    assert list(ACTION_NAMES) == EXPECTED


@pytest.mark.parametrize(("action", "name"), [
    (0, "take:white,blue,green"), (9, "take:green,red,black"), (10, "take:white,blue"),
    (19, "take:red,black"), (20, "take:white"), (28, "take2:red"), (41, "reserve:3.3"),
    (42, "reserve_deck:1"), (45, "buy:1.0"), (56, "buy:3.3"), (59, "buy_reserved:2"),
    (64, "noble:4"), (70, "return:gold"), (71, "pass"),
])
def test_landmark_ids(action, name):
    assert move_name(action) == name
    assert move_id(name) == action


def test_id_name_round_trip_for_every_action():
    for a in range(NUM_ACTIONS):
        assert move_id(move_name(a)) == a


def test_numpy_integer_ids_are_accepted():
    assert move_name(np.int64(71)) == "pass"
    assert move_name(np.int16(25)) == "take2:white"


def test_names_ignore_case_and_spaces():
    assert move_id(" Take:White, Blue, Green ") == 0


@pytest.mark.parametrize("bad", [-1, 72, 1000])
def test_out_of_range_ids_raise(bad):
    with pytest.raises(ValueError, match=str(bad)):
        move_name(bad)


@pytest.mark.parametrize("bad", ["take:gold", "take2:gold", "buy:4.0", "reserve:1.4", "noble:5", "", "hold"])
def test_unknown_names_raise(bad):
    with pytest.raises(ValueError, match="unknown action name"):
        move_id(bad)


def test_kind_of_every_family():
    for ids, label in FAMILIES:
        assert {kind(a) for a in ids} == {label}


@pytest.mark.parametrize("bad", [-1, 72])
def test_kind_out_of_range_raises(bad):
    with pytest.raises(ValueError, match="out of range"):
        kind(bad)
