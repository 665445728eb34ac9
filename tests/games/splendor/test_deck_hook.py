"""SplendorGame.deck and put_on_top: the hook a chance node uses to decide the next card of a level."""

from __future__ import annotations

import pytest

from tabletop_rl import SplendorGame


def test_put_on_top_decides_the_next_card_drawn():
    game = SplendorGame(2, seed=4)
    card = game.deck(2)[-1]  # the bottom card of level 2
    game.put_on_top(2, card)
    assert game.deck(2)[0] == card and sorted(game.deck(2)) == sorted(SplendorGame(2, seed=4).deck(2))
    game.step("buy:2.0" if game.legal_mask()[game.move_id("buy:2.0")] else "reserve:2.0")  # both refill 2.0
    assert game.market(2)[0] == card


@pytest.mark.parametrize(("level", "card", "message"), [(1, 85, "card 85 is not in the level 1 deck"),
                                                        (4, 0, "level must be 1, 2 or 3, got 4")])
def test_bad_hook_input_gets_one_line(level, card, message):
    with pytest.raises(ValueError, match=message):
        SplendorGame(2, seed=4).put_on_top(level, card)
