"""Baselines: registry names, the random policy follows the mask, the heuristic keeps its garrisons
and beats random."""

import numpy as np
import pytest

from tabletop_rl.agents import describe_policies, make_policy
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.baselines import plan_orders, play_match, policy_orders
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


@pytest.mark.parametrize("seed", range(6))
def test_no_baseline_ever_over_commits_a_star(seed):
    """The rule of §9 rejects an over-committed set whole, so a baseline (the RL vector of random, the JSON
    orders of heuristic) must never give one: every set they give passes with no error."""
    game = SpaceConquestGame(seed=seed)
    players = [make_policy("random", game="space_conquest", seed=seed),
               make_policy("heuristic", game="space_conquest")][::1 if seed % 2 else -1]
    while not game.is_over:
        checks = game.step(*(policy_orders(players[p], game, p) for p in range(2)))
        assert all(c.ok and not c.rejected_all for c in checks), [c.errors for c in checks]
