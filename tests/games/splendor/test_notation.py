"""The move text a person types (``actions.move_id``, behind ``SplendorGame.move_id`` and ``step``): every
canonical name, and takes and returns in any colour order and in the board's letters (docs/splendor.md)."""

from __future__ import annotations

from itertools import permutations

import pytest

from tabletop_rl.games import splendor
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import ACTION_NAMES, LETTERS, kind, move_id
from tabletop_rl.games.splendor.game import SplendorGame

_LETTER = dict(zip(R.TOKEN_NAMES, LETTERS))


def test_every_canonical_name_reads_as_its_id():
    assert [move_id(name) for name in ACTION_NAMES] == list(range(R.NUM_ACTIONS))


@pytest.mark.parametrize("action", [a for a in range(R.NUM_ACTIONS) if kind(a) in ("take3", "take2_diff", "take1")])
def test_a_take_reads_in_any_order_as_names_or_letters_in_any_case(action):
    colours = ACTION_NAMES[action].split(":")[1].split(",")
    for order in permutations(colours):
        assert move_id("take:" + ",".join(order)) == action
        assert move_id("TAKE: " + ", ".join(_LETTER[c].upper() for c in order)) == action
        mixed = [c if i % 2 else _LETTER[c] for i, c in enumerate(order)]
        assert move_id("take:" + ",".join(mixed)) == action


@pytest.mark.parametrize("family", ["take2", "return"])
def test_take2_and_return_read_the_boards_letters(family):
    tokens = R.TOKEN_NAMES if family == "return" else R.COLOURS
    for colour in tokens:
        assert move_id(f"{family}:{_LETTER[colour].upper()}") == move_id(f"{family}:{colour}")


@pytest.mark.parametrize("typed, says", [
    ("take:red,red", "a colour is named twice"),
    ("take:w,b,g,r", "name 1 to 3 different colours"),
    ("take:gold", "gold is never taken"),
    ("take:w,y", "gold is never taken"),
    ("take:u,g,r", "'u' is not a colour"),
    ("take2:r,g", "name one colour"),
    ("return:purple", "tokens: white blue green red black gold, or the board's letters w b g r k y"),
    ("buy:1.4", "level 1-3 and slot 0-3 as the board labels the market"),
    ("reserve_deck:0", "reserve_deck:<level>, level 1-3"),
    ("noble:7", "noble:<0-4>"),
    ("fly away", "examples: take:red,green,blue or take:r,g,b"),
])
def test_a_bad_name_says_what_the_move_looks_like(typed, says):
    with pytest.raises(ValueError, match="unknown action name") as err:
        move_id(typed)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_the_game_reads_the_loose_forms_and_keeps_the_canonical_names():
    g = SplendorGame(seed=7)
    assert g.move_id("take:r,g,b") == 6 and g.move_name(6) == "take:blue,green,red"
    g.step("take:k,W,blue")
    assert g.move_record(1, g.move_id("take2:K")) == "take2:black"
    assert g.explain_illegal("TAKE2:b") == "take2:blue needs 4 blue in the bank, there are 3"


def test_the_package_export_and_the_game_read_the_same_forms():
    assert splendor.move_id("take:r,g,b") == SplendorGame.move_id("take:r,g,b") == 6
