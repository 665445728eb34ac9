"""Baselines: registry names, the random policy follows the mask, the heuristic keeps its garrisons
and beats random."""

import numpy as np
import pytest

from tabletop_rl.agents import describe_policies, make_policy
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.baselines import plan_orders, play_match
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.observe import encode, player_view


def test_policies_are_registered_for_the_game():
    text = describe_policies("space_conquest")
    assert "heuristic[:ru_weight=3.0" in text and "random" in text
    with pytest.raises(ValueError, match="no option"):
        make_policy("heuristic:depth=2", game="space_conquest")


def test_random_policy_stays_inside_the_mask_and_is_seeded():
    game = SpaceConquestGame(seed=4)
    obs, mask = encode(game.state, 0)
    actions = [make_policy("random", game="space_conquest", seed=9).act(obs, mask) for _ in range(2)]
    assert np.array_equal(*actions)
    starts = np.concatenate([[0], np.cumsum([16] * 16 + [4] * 16)])
    assert all(mask[starts[d] + v] for d, v in enumerate(actions[0]))


def test_heuristic_never_orders_a_star_below_its_ru():
    game = SpaceConquestGame(seed=11)
    for _ in range(40):
        if game.is_over:
            break
        orders = [plan_orders(player_view(game, p)) for p in range(2)]
        for seat in orders:
            sent = {}
            for move in seat["moves"]:
                sent[move["from"]] = sent.get(move["from"], 0) + move["ships"]
            for letter, ships in sent.items():
                star = game.star(R.LETTERS.index(letter))
                if star["home_of"] is None:
                    assert star["ships"] - ships >= star["ru"]
        checks = game.step(*orders)
        assert all(c.ok for c in checks)


def test_heuristic_beats_random_in_at_least_90_percent_of_200_games():
    wins = 0
    for g in range(200):
        heuristic = make_policy("heuristic", game="space_conquest")
        rand = make_policy("random", game="space_conquest", seed=g)
        seat = g % 2
        result = play_match(*((heuristic, rand) if seat == 0 else (rand, heuristic)), seed=1000 + g)
        wins += result["winner"] == seat
    assert wins >= 180
