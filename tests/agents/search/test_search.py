"""Search policies (expectiminimax, MCTS): legality, determinism, hidden information, tactics, specs.

Budgets here are node/simulation counts, never time, so every decision is reproducible.
"""

from __future__ import annotations

import numpy as np
import pytest

from positions import game, hidden_variant, position, random_game
from tabletop_rl.agents import make_policy, parse_spec
from tabletop_rl.agents.search.splendor import ExpectiminimaxPolicy, MCTSPolicy, place_drawn, unseen_pool
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame

SEARCH_SPECS = ("expectiminimax:depth=3,budget_ms=0,nodes=1500", "mcts:simulations=120,rollout_depth=2")


def decide(spec: str, g: SplendorGame, seed: int = 0) -> int:
    p = g.current_player
    return make_policy(spec, game="splendor", seed=seed).act(None, g.legal_mask(), g.policy_info(p))


# --- hidden information ------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SEARCH_SPECS)
def test_hidden_cards_do_not_change_the_decision(spec):
    rng = np.random.default_rng(7)
    changed_reserves = 0
    for seed in range(6):
        g = random_game(2, seed, plies=12 + 3 * seed, blind_rate=0.5)
        if g.is_over:
            continue
        variant, swapped = hidden_variant(g, rng)
        assert not np.array_equal(variant.state, g.state)  # the hidden cards really differ
        changed_reserves += swapped
        assert decide(spec, variant, seed) == decide(spec, g, seed)
    assert changed_reserves >= 2  # some positions had an opponent's blind reserve swapped


def test_the_chance_pool_is_what_the_searcher_cannot_see():
    g = game(position(2, reserved={1: [(45, True), 50], 0: [(41, True)]}, decks={2: [44, 43]}))
    pool = np.zeros(R.NUM_CARDS, R.STATE_DTYPE)
    k = unseen_pool(g.state, 0, 1, pool)
    level2_deck = [int(c) for c in g.state[R.DECK + 40 + int(g.state[R.DECK_DRAWN + 1]):R.DECK + 70]]
    assert len(level2_deck) == 30 - 4 - 3  # market and three reserves out
    assert pool[:k].tolist() == sorted(level2_deck + [45])  # seat 1's blind reserve, not seat 0's own
    assert 41 not in pool[:k].tolist() and 50 not in pool[:k].tolist()


def test_placing_a_drawn_card_keeps_one_consistent_deal():
    """Seat 0 reserves market slot 2.1; the chance outcome "seat 1's blind card 45 came up" swaps it in."""
    g = game(position(2, reserved={1: [(45, True)]}))
    g.step("reserve:2.1")
    state = g.state.copy()
    drawn = int(state[R.MARKET + 4])
    place_drawn(state, R.MARKET + 4, 45, 0)
    assert state[R.MARKET + 4] == 45 and state[R.player_base(1) + R.P_RESERVED] == drawn
    place_drawn(state, R.MARKET + 4, 69, 0)  # a deck card: it and 45 change places
    assert state[R.MARKET + 4] == 69 and 45 in state[R.DECK + 40:R.DECK + 70]
    assert sorted(level2_cards(state)) == sorted(level2_cards(g.state)) == list(range(40, 70))


def level2_cards(state: np.ndarray) -> list[int]:
    """Every level-2 card id in the row: deck, market and reserves."""
    places = np.concatenate([state[R.DECK + 40:R.DECK + 70], state[R.MARKET + 4:R.MARKET + 8]]
                            + [state[R.player_base(q) + R.P_RESERVED:R.player_base(q) + R.P_RESERVED + 3]
                               for q in range(2)])
    return [int(c) for c in places if 40 <= c < 70]


# --- legality, determinism, tactics ---------------------------------------------------------------------
@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("spec", ["expectiminimax:depth=2,budget_ms=0,nodes=400",
                                  "mcts:simulations=30,rollout_depth=2",
                                  "mcts:simulations=30,rollout=random,rollout_depth=3"])
def test_search_plays_only_legal_moves(spec, num_players):
    """Each policy plays out a game against itself from positions of random play, all phases included."""
    phases = set()
    for seed in range(2):
        g = random_game(num_players, seed, plies=20 + 10 * seed)
        policy = make_policy(spec, game="splendor", seed=seed)
        for _ in range(12 * num_players):
            if g.is_over:
                break
            phases.add(g.phase)
            action = policy.act(None, g.legal_mask(), g.policy_info(g.current_player))
            assert g.legal_mask()[action]
            g.step(action)
        assert policy.stats.nodes > policy.stats.decisions  # it searched more than one node per move


@pytest.mark.parametrize("spec", SEARCH_SPECS)
def test_a_fixed_seed_gives_the_same_moves(spec):
    g = random_game(3, 4, plies=15)
    moves = [decide(spec, g, seed=11) for _ in range(2)]
    assert moves[0] == moves[1]
    assert g.ply == 15  # deciding left the game alone


def test_search_finds_the_winning_buy_at_the_end_of_the_round():
    """Seat 1 (last to act in the round) holds 13 points; a buy that reaches 15 ends the game in its favour."""
    pos = position(2, current_player=1, bought={1: [71, 72, 73], 0: [0, 1]}, tokens={1: {"white": 4}},
                   market={3: [76, 74, 75, 77]})
    g = game(pos)
    winning = []
    for a in g.legal_actions():
        after = g.clone()
        after.step(a)
        if after.is_over and after.winners == [1]:
            winning.append(a)
    assert winning and len(winning) < len(g.legal_actions())
    for spec in SEARCH_SPECS:
        assert decide(spec, g) in winning, spec


def test_expectiminimax_deepens_within_its_node_budget():
    g = random_game(2, 3, plies=10)
    shallow = ExpectiminimaxPolicy(depth=1, budget_ms=0)
    deep = ExpectiminimaxPolicy(depth=6, budget_ms=0, nodes=3000)
    for policy in (shallow, deep):
        policy.act(None, g.legal_mask(), g.policy_info(g.current_player))
    assert shallow.depth_reached == 1 and deep.depth_reached >= 2
    assert deep.stats.nodes <= 3000 and deep.stats.nodes > shallow.stats.nodes


def test_mcts_runs_its_simulations_and_respects_a_time_budget():
    g = random_game(2, 5, plies=10)
    info = g.policy_info(g.current_player)
    counted = MCTSPolicy(simulations=77, rollout_depth=1)
    counted.act(None, g.legal_mask(), info)
    assert counted.iterations == 77 and 1 < counted.stats.last_nodes <= 78
    timed = MCTSPolicy(budget_ms=40, rollout_depth=1)
    timed.act(None, g.legal_mask(), info)
    assert timed.iterations > 0 and timed.stats.last_time_s < 0.5


# --- specs ---------------------------------------------------------------------------------------------
def test_search_options_parse_with_types_and_defaults():
    emm = parse_spec("expectiminimax:nodes=5000,chance=2", "splendor").options
    assert emm == {"depth": 20, "budget_ms": 100.0, "nodes": 5000, "chance": 2}
    mcts = parse_spec("mcts:budget_ms=1000,rollout=random,c=1.2", "splendor").options
    assert mcts == {"simulations": 2000, "budget_ms": 1000.0, "c": 1.2, "rollout": "random",
                    "rollout_depth": 4, "epsilon": 0.1}
    policy = make_policy("mcts:rollout_depth=6,epsilon=0.3", game="splendor")
    assert (policy.rollout_depth, policy.epsilon, policy.budget_ms) == (6, 0.3, None)


@pytest.mark.parametrize("spec, problem", [
    ("expectiminimax:depth=0", "depth must be in 1.."),
    ("expectiminimax:budget_ms=-1", "budget_ms must be >= 0"),
    ("expectiminimax:chance=0", "chance must be >= 1"),
    ("mcts:rollout=smart", "rollout must be 'greedy' or 'random'"),
    ("mcts:simulations=0", "simulations must be >= 1"),
    ("mcts:budget_ms=0", "budget_ms must be > 0"),
    ("mcts:epsilon=2", r"epsilon must be in \[0, 1\]"),
    ("mcts:depth=3", "mcts has no option 'depth'"),
])
def test_bad_search_options_are_one_line_errors(spec, problem):
    with pytest.raises(ValueError, match=problem) as err:
        make_policy(spec, game="splendor")
    assert "\n" not in str(err.value)
