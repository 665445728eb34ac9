"""Every game passes the contract's public conformance check (``tabletop_rl.agents.conformance``), and the check
catches a game that breaks the contract: one whose view is the live game, or leaks its hidden cards."""

from __future__ import annotations

import pytest

from tabletop_rl.agents.conformance import check_game
from tabletop_rl.core.game import SeatView
from tabletop_rl.games import GAMES, game_class


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_passes_the_conformance_check(name):
    check_game(name, matches=1)


def _patched_policy_info(monkeypatch, name, make_view):
    cls = game_class(name)
    monkeypatch.setattr(cls, "policy_info", lambda self, seat: make_view(self, seat))


def test_the_check_fails_a_game_that_hands_out_the_live_game(monkeypatch):
    _patched_policy_info(monkeypatch, "splendor", lambda game, seat: SeatView(seat, seat, game))
    with pytest.raises(AssertionError, match=r"splendor, seed 0, 2 players, step 0: seat 0's view holds the live game"):
        check_game("splendor", matches=1)


def test_the_check_fails_a_game_whose_view_keeps_the_deck_order(monkeypatch):
    _patched_policy_info(monkeypatch, "splendor", lambda game, seat: SeatView(seat, seat, game.clone()))
    with pytest.raises(AssertionError, match=r"seat 0's view or observation changes with what it cannot see"):
        check_game("splendor", matches=1)
