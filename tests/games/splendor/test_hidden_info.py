"""Hidden information never reaches an observation: positions that differ only in what a player
cannot see (deck order, an opponent's blind-reserved card) look byte-identical to that player,
while the owner of the blind reserve does see the difference (so these tests can fail)."""

from __future__ import annotations

import numpy as np
import pytest

from positions import LEVEL_CARDS, position
from tabletop_rl.envs.aec import TabletopAEC
from tabletop_rl.envs.gym import SplendorGymEnv
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import observe

RESERVE_DECK = range(42, 45)


def _two_level1_cards_that_look_different() -> tuple[int, int]:
    cards, _ = R.tables()
    x = LEVEL_CARDS[1][0]
    y = next(c for c in LEVEL_CARDS[1] if not np.array_equal(cards[c], cards[x]))
    return x, y


def _positions_differing_in_hidden_cards(num_players: int) -> tuple[dict, dict, dict]:
    """A: player 1 blind-reserved x, y tops the level-1 deck. B: x and y swapped.
    C: A with every deck in reverse order."""
    x, y = _two_level1_cards_that_look_different()
    a = position(num_players, reserved={1: [(x, True)]}, decks={1: [y]}, tokens={1: {"gold": 1}})
    b = position(num_players, reserved={1: [(y, True)]}, decks={1: [x]}, tokens={1: {"gold": 1}})
    c = position(num_players, reserved={1: [(x, True)]}, decks={1: [y]}, tokens={1: {"gold": 1}})
    c["decks"] = {level: deck[::-1] for level, deck in c["decks"].items()}
    return a, b, c


def _aec_views(pos: dict) -> dict[str, bytes]:
    env = TabletopAEC("splendor", pos["num_players"])
    env.reset(options={"position": pos})
    return {agent: env.observe(agent)["observation"].tobytes() for agent in env.agents}


@pytest.mark.parametrize("n", [2, 3, 4])
def test_aec_observations_hide_blind_reserves_and_deck_order(n):
    a, b, c = (_aec_views(pos) for pos in _positions_differing_in_hidden_cards(n))
    for agent in a:
        if agent == "player_1":
            assert a[agent] != b[agent], "the owner must see which card they reserved"
        else:
            assert a[agent] == b[agent], f"{agent} can tell which card player_1 reserved blind"
        assert a[agent] == c[agent], f"{agent} can tell the deck order"


def test_gym_observation_hides_an_opponents_blind_reserve():
    views = []
    for pos in _positions_differing_in_hidden_cards(2):
        env = SplendorGymEnv(seat=0)
        obs, _ = env.reset(seed=0, options={"position": pos})
        views.append(obs.tobytes())
    assert views[0] == views[1] == views[2]


def _random_game_with_blind_reserves(seed: int, num_players: int, plies: int) -> SplendorGame:
    """A random game in which blind reserves are frequent (so there is hidden information to leak)."""
    rng = np.random.default_rng(seed)
    game = SplendorGame(num_players, seed=seed)
    for _ in range(plies):
        legal = game.legal_actions()
        if not legal:
            break
        blind = [a for a in legal if a in RESERVE_DECK]
        game.step(int(rng.choice(blind if blind and rng.random() < 0.4 else legal)))
    return game


def test_re_dealing_what_a_player_cannot_see_never_changes_their_observation():
    owner_saw_a_change = 0
    for seed in range(40):
        n = 2 + seed % 3
        game = _random_game_with_blind_reserves(seed, n, plies=10 + seed)
        for viewer in range(n):
            other = game.seat_view(viewer, seed=1000 + seed)
            assert observe(other.state, viewer).tobytes() == observe(game.state, viewer).tobytes(), \
                f"seed {seed}: seat {viewer} sees hidden cards"
            owner_saw_a_change += sum(
                observe(other.state, q).tobytes() != observe(game.state, q).tobytes()
                for q in range(n) if q != viewer)
    assert owner_saw_a_change > 0, "no re-deal ever changed a blind reserve: the test proves nothing"


@pytest.mark.parametrize("num_players", [2, 3])
def test_a_policy_view_is_the_same_for_positions_that_differ_in_hidden_cards(num_players):
    games = [SplendorGame.from_json(p) for p in _positions_differing_in_hidden_cards(num_players)]
    for seat in (0, num_players - 1) if num_players > 2 else (0,):
        views = [g.policy_info(seat) for g in games]
        assert all(v == views[0] and v.game.to_json() == views[0].game.to_json() for v in views)
    owner = [g.policy_info(1).game.player(1)["reserved"] for g in games[:2]]
    assert owner[0] != owner[1]  # the owner of the blind reserve sees which card it is


def test_a_policy_reading_the_deck_from_its_view_sees_no_deck_order():
    game = SplendorGame(2, seed=5)
    view = game.policy_info(0).game
    for level in (1, 2, 3):
        assert view.deck(level) == sorted(game.deck(level)) != game.deck(level)
    assert not view.state[R.RNG:R.RNG + 4].any()


def test_a_policy_that_plays_on_its_view_leaves_the_game_as_it_was():
    game = SplendorGame(2, seed=5)
    before = game.to_json()
    view = game.policy_info(0).game
    view.step(int(np.flatnonzero(view.legal_mask())[0]))
    view.state[:] = 0
    assert game.to_json() == before and game.current_player == 0
