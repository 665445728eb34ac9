"""core/seeding.py: one rule for every seed (a non-negative integer, its low 63 bits count), and every door that
takes a seed (the games, Klaverjas's rules, the envs) follows it: ``s + 2**63`` deals the game of ``s``, and
anything else is refused with the same message."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl import KlaverjasGame, SpaceConquestGame, SplendorGame, splendor_env
from tabletop_rl.core.seeding import SEED_MASK, check_seed, fresh_seed
from tabletop_rl.games.klaverjas import rules as KR

REFUSED = [-1, np.int64(-1), True, np.bool_(True), 1.5, "3", None, np.array([3])]


@pytest.mark.parametrize("seed, folded", [(0, 0), (7, 7), (SEED_MASK, SEED_MASK), (2**63, 0), (2**64 + 7, 7),
                                          (np.int8(7), 7), (np.uint64(2**63 + 7), 7)])
def test_a_seed_is_a_non_negative_integer_whose_low_63_bits_count(seed, folded):
    assert check_seed(seed) == folded and type(check_seed(seed)) is int


@pytest.mark.parametrize("seed", REFUSED, ids=repr)
def test_anything_else_is_refused_naming_it(seed):
    with pytest.raises(ValueError, match=r"^seed must be a non-negative integer, got "):
        check_seed(seed)


def test_a_fresh_seed_follows_the_rule():
    seeds = {fresh_seed() for _ in range(20)}
    assert len(seeds) == 20 and all(check_seed(s) == s for s in seeds)


def _splendor_env_row(seed):
    env = splendor_env()
    env.reset(seed=seed)
    return env.unwrapped.game.state


#: each door, as seed -> the row (or rows) of the game it deals
DOORS = {
    "SplendorGame": lambda seed: SplendorGame(seed=seed).state,
    "KlaverjasGame.new": lambda seed: KlaverjasGame.new(seed, num_players=2).state,
    "klaverjas rules.new_state": lambda seed: KR.new_state(seed),
    "SpaceConquestGame": lambda seed: SpaceConquestGame(seed).state,
    "splendor_env reset": _splendor_env_row,
}


@pytest.mark.parametrize("deal", DOORS.values(), ids=DOORS)
def test_every_door_follows_the_rule(deal):
    assert np.array_equal(deal(2**63 + 5), deal(5)) and np.array_equal(deal(np.uint32(5)), deal(5))
    assert not np.array_equal(deal(5), deal(6))
    for seed in (-1, True, 1.5):
        with pytest.raises(ValueError, match=r"^seed must be a non-negative integer, got "):
            deal(seed)
