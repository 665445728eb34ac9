"""Policies: spec strings and the registry, random and greedy play, greedy's hidden-information discipline."""

from __future__ import annotations

import numpy as np
import pytest

from positions import game, position
from tabletop_rl.agents import (
    BasePolicy,
    Option,
    Policy,
    RandomPolicy,
    known_games,
    known_policies,
    make_policy,
    parse_spec,
    register_policy,
    registry,
)
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.actions import kind
from tabletop_rl.games.splendor.baselines import (
    DEFAULT_GREEDY_WEIGHTS,
    GREEDY_WEIGHT_NAMES,
    OPPONENT,
    POINTS,
    GreedyPolicy,
    action_values,
    evaluate,
    greedy_action,
)
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import observe

CARDS, NOBLES = R.tables()


def decide(policy: Policy, g: SplendorGame) -> int:
    p = g.current_player
    return policy.act(observe(g.state, p), g.legal_mask(), g.policy_info(p))


def play(specs: list[str], seed: int) -> SplendorGame:
    """One game, seat ``i`` played by ``specs[i]``; returns the finished game."""
    g = SplendorGame(len(specs), seed=seed)
    policies = [make_policy(s, game="splendor", seed=seed + i) for i, s in enumerate(specs)]
    while not g.is_over:
        g.step(decide(policies[g.current_player], g))
    return g


def random_positions(num_players: int, games: int, every: int = 3):
    """Positions along games of random play (all phases), every ``every`` plies."""
    rng = np.random.default_rng(num_players)
    for seed in range(games):
        g = SplendorGame(num_players, seed=seed)
        while not g.is_over:
            if g.ply % every == 0:
                yield g
            g.step(int(rng.choice(g.legal_actions())))


@pytest.fixture
def scratch_registry(monkeypatch):
    """A private game in the registry, removed after the test."""
    monkeypatch.setitem(registry._REGISTRY, "testgame", {})
    return "testgame"


# --- spec strings ------------------------------------------------------------------------------
def test_options_are_typed_and_defaulted():
    spec = parse_spec("expectiminimax:depth=5", "splendor")
    assert spec.options == {"depth": 5, "budget_ms": 100.0, "nodes": 0, "chance": 3}
    assert parse_spec("expectiminimax", "splendor").options["depth"] == 20
    assert type(spec.options["depth"]) is int and type(spec.options["budget_ms"]) is float
    assert parse_spec("mcts", "splendor").options == {"simulations": 2000, "budget_ms": None, "c": 0.7,
                                                      "rollout": "greedy", "rollout_depth": 4, "epsilon": 0.1}
    assert parse_spec("greedy:opponent=0.25", "splendor").options["opponent"] == 0.25


def test_spec_text_is_normalised_in_declared_order():
    spec = parse_spec(" Expectiminimax : budget_ms = 50 , depth=2 ", "splendor")
    assert spec.text == "expectiminimax:depth=2,budget_ms=50.0"
    assert parse_spec("greedy", "splendor").text == "greedy"


def test_bool_str_and_positional_options(scratch_registry):
    register_policy(scratch_registry, "loader", RandomPolicy,
                    (Option("path", str), Option("strict", bool, True)), positional="path")
    spec = parse_spec("loader:runs/a.zip,strict=no", scratch_registry)
    assert spec.options == {"path": "runs/a.zip", "strict": False}
    assert spec.text == "loader:runs/a.zip,strict=false"
    with pytest.raises(ValueError, match=r"loader needs PATH"):
        parse_spec("loader:strict=yes", scratch_registry)
    with pytest.raises(ValueError, match=r"strict='maybe' is not a bool"):
        parse_spec("loader:x.zip,strict=maybe", scratch_registry)


@pytest.mark.parametrize("spec, problem", [
    ("minimax", "unknown policy 'minimax'"),
    ("greedy:depth=3", "greedy has no option 'depth'"),
    ("expectiminimax:depth=three", "depth='three' is not int"),
    ("mcts:simulations=1.5", "simulations='1.5' is not int"),
    ("greedy:points=lots", "points='lots' is not float"),
    ("mcts:simulations", "option 'simulations' is not key=value"),
    ("mcts:simulations=5,simulations=6", "option 'simulations' is given twice"),
    ("", "non-empty string"),
])
def test_bad_spec_is_one_line_listing_known_policies(spec, problem):
    with pytest.raises(ValueError) as err:
        make_policy(spec, game="splendor")
    message = str(err.value)
    assert problem in message and "\n" not in message
    for usage in ("random", "greedy[:points=1.0,", "expectiminimax[:depth=20,budget_ms=100.0,nodes=0,chance=3]",
                  "mcts[:simulations=2000,budget_ms=None,", "ppo:PATH", "llm"):
        assert usage in message


def test_unknown_game_names_the_known_games():
    with pytest.raises(ValueError, match=r"unknown game 'chess'; known games: .*splendor"):
        make_policy("random", game="chess")


def test_a_policy_needs_a_factory(scratch_registry):
    with pytest.raises(ValueError, match=r"policy 'later' needs a factory"):
        register_policy(scratch_registry, "later", None)
    assert "later" not in known_policies(scratch_registry)


def test_lazy_factory_is_imported_on_first_use(scratch_registry):
    register_policy(scratch_registry, "ghost", "tabletop_rl.no_such_module:Ghost", (Option("depth", int, 3),))
    register_policy(scratch_registry, "lazy", "tabletop_rl.agents.random_policy:RandomPolicy")
    assert scratch_registry in known_games()
    with pytest.raises(ValueError, match=r"bad policy spec.*is not int"):
        make_policy("ghost:depth=x", scratch_registry)  # options parse before the import is tried
    with pytest.raises(ValueError, match=r"'ghost' is not available for testgame .*tabletop_rl.no_such_module"):
        make_policy("ghost:depth=2", scratch_registry)
    policy = make_policy("lazy", scratch_registry, seed=1)
    assert isinstance(policy, RandomPolicy) and policy.name == "lazy"


def test_made_policies_carry_their_spec_and_options():
    policy = make_policy("greedy:opponent=0.2,win=50", game="splendor")
    assert isinstance(policy, GreedyPolicy) and isinstance(policy, Policy)
    assert policy.name == "greedy:opponent=0.2,win=50.0"
    expected = DEFAULT_GREEDY_WEIGHTS.copy()
    expected[GREEDY_WEIGHT_NAMES.index("opponent")] = 0.2
    expected[GREEDY_WEIGHT_NAMES.index("win")] = 50.0
    np.testing.assert_array_equal(policy.weights, expected)


def test_registering_a_bad_name_or_positional_is_refused(scratch_registry):
    with pytest.raises(ValueError, match="lower-case identifier"):
        register_policy(scratch_registry, "Bad:Name", RandomPolicy)
    with pytest.raises(ValueError, match="positional option 'path'"):
        register_policy(scratch_registry, "loader", RandomPolicy, (), positional="path")


# --- the protocol: masks and statistics ------------------------------------------------------------
def test_random_is_uniform_over_the_mask_and_reproducible():
    mask = np.zeros(72, bool)
    mask[[3, 40, 71]] = True
    policy = make_policy("random", game="splendor", seed=5)
    picks = [policy.act(None, mask) for _ in range(300)]
    assert set(picks) == {3, 40, 71}
    assert min(picks.count(a) for a in (3, 40, 71)) > 60
    policy.reset(5)
    assert [policy.act(None, mask) for _ in range(300)] == picks


def test_stats_count_decisions_and_reset_clears_them():
    g = SplendorGame(2, seed=4)
    policy = make_policy("greedy", game="splendor")
    decide(policy, g)
    assert policy.stats.decisions == 1 and policy.stats.last_time_s > 0
    assert policy.stats.nodes == len(g.legal_actions())  # one evaluated position per legal action
    decide(policy, g)
    assert policy.stats.decisions == 2 and policy.stats.nodes == 2 * len(g.legal_actions())
    policy.reset(0)
    assert policy.stats.as_dict() == {"decisions": 0, "total_time_s": 0.0, "mean_time_s": 0.0, "nodes": 0}


@pytest.mark.parametrize("mask, problem", [(np.zeros(72, bool), "allows no action"),
                                           (np.ones((2, 72), bool), "must be 1-D")])
def test_a_bad_mask_is_refused(mask, problem):
    with pytest.raises(ValueError, match=problem):
        make_policy("random", game="splendor", seed=0).act(None, mask)


def test_a_policy_choosing_outside_the_mask_is_caught():
    class Stubborn(BasePolicy):
        def decide(self, observation, mask, info):
            return 0

    with pytest.raises(RuntimeError, match=r"'stubborn' chose action 0"):
        Stubborn("stubborn").act(None, np.array([False, True]))


def test_greedy_needs_the_game_and_the_seat_to_act():
    g = SplendorGame(2, seed=0)
    policy = make_policy("greedy", game="splendor")
    with pytest.raises(ValueError, match=r"greedy needs info="):
        policy.act(None, g.legal_mask(), {})
    with pytest.raises(ValueError, match=r"greedy: the view's seat is 1 but seat 0 is to act"):
        policy.act(None, g.legal_mask(), g.policy_info(1))


# --- legal play --------------------------------------------------------------------------------
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_random_and_greedy_choose_only_legal_moves(num_players):
    policies = [make_policy("random", game="splendor", seed=0), make_policy("greedy", game="splendor")]
    phases = set()
    for g in random_positions(num_players, games=4):
        mask = g.legal_mask()
        phases.add(g.phase)
        for policy in policies:
            assert mask[decide(policy, g)]
    assert {"main", "return"} <= phases


def test_greedy_plays_the_sub_steps():
    returning = game(position(2, tokens={0: {"red": 4, "blue": 4, "green": 2, "gold": 1}}, phase="return"))
    # 4 white, 4 blue and 4 green bonuses meet nobles 0 (white+blue) and 2 (blue+green) at once
    bought = [c for colour in (0, 1, 2) for c in np.flatnonzero(CARDS[:40, R.CARD_BONUS] == colour)[:4].tolist()]
    choosing = game(position(2, bought={0: bought}, nobles=[0, 2, 5], phase="noble"))
    policy = make_policy("greedy", game="splendor")
    returned = decide(policy, returning)
    assert kind(returned) == "return" and returned != R.RETURN_TOKEN + R.GOLD  # gold is worth keeping
    assert kind(decide(policy, choosing)) == "noble"


def test_greedy_is_deterministic_and_leaves_the_state_alone():
    for g in random_positions(3, games=2, every=7):
        before = g.state.copy()
        first = decide(make_policy("greedy", game="splendor"), g)
        assert decide(make_policy("greedy", game="splendor"), g) == first
        np.testing.assert_array_equal(g.state, before)


# --- hidden information ------------------------------------------------------------------------
def test_greedy_does_not_see_deck_order_or_blind_reserves():
    """Re-dealing every card the mover cannot see changes no action value, hence no decision."""
    weights = DEFAULT_GREEDY_WEIGHTS
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    scratch = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)
    values, other = np.empty(R.NUM_ACTIONS), np.empty(R.NUM_ACTIONS)
    redealt = hidden_reserves = 0
    for num_players in (2, 4):
        for g in random_positions(num_players, games=3, every=2):
            me = g.current_player
            action_values(g.state, CARDS, NOBLES, weights, mask, scratch, values)
            for seed in range(3):
                copy = g.seat_view(me, seed)
                redealt += not np.array_equal(copy.state, g.state)
                action_values(copy.state, CARDS, NOBLES, weights, mask, scratch, other)
                np.testing.assert_array_equal(values, other)
                greedy = make_policy("greedy", game="splendor")
                assert decide(greedy, copy) == decide(make_policy("greedy", game="splendor"), g)
            hidden_reserves += any(blind for q in range(num_players) if q != me
                                   for _, blind in g.player(q)["reserved"])
    assert redealt > 100 and hidden_reserves > 10  # the hidden cards really did change


def test_a_drawn_card_is_scored_as_unknown():
    """Two decks differing only in the card under the market: reserving or buying from that level,
    and reserving blind, are scored the same."""
    cheap_top = game(position(2, tokens={0: {"red": 2, "blue": 2}}, decks={1: [5]}))
    rich_top = game(position(2, tokens={0: {"red": 2, "blue": 2}}, decks={1: [39]}))
    assert cheap_top.state.tobytes() != rich_top.state.tobytes()
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    scratch = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)
    values = [np.empty(R.NUM_ACTIONS) for _ in range(2)]
    for g, out in zip((cheap_top, rich_top), values):
        action_values(g.state, CARDS, NOBLES, DEFAULT_GREEDY_WEIGHTS, mask, scratch, out)
    np.testing.assert_array_equal(values[0], values[1])


# --- the evaluation ------------------------------------------------------------------------------
def test_a_point_moves_the_evaluation_by_the_documented_weights():
    g = SplendorGame(2, seed=9)
    before = [evaluate(g.state, seat, CARDS, NOBLES, DEFAULT_GREEDY_WEIGHTS) for seat in (0, 1)]
    g.state[R.player_base(0) + R.P_POINTS] += 1  # seat 0 gains a point
    after = [evaluate(g.state, seat, CARDS, NOBLES, DEFAULT_GREEDY_WEIGHTS) for seat in (0, 1)]
    assert after[0] - before[0] == pytest.approx(DEFAULT_GREEDY_WEIGHTS[POINTS])
    assert after[1] - before[1] == pytest.approx(-DEFAULT_GREEDY_WEIGHTS[OPPONENT] * DEFAULT_GREEDY_WEIGHTS[POINTS])


def test_greedy_action_matches_the_best_action_value():
    mask = np.zeros(R.NUM_ACTIONS, np.bool_)
    scratch = np.zeros(R.STATE_SIZE, R.STATE_DTYPE)
    values = np.empty(R.NUM_ACTIONS)
    for g in random_positions(2, games=2, every=5):
        chosen = greedy_action(g.state, CARDS, NOBLES, DEFAULT_GREEDY_WEIGHTS, mask, scratch)
        action_values(g.state, CARDS, NOBLES, DEFAULT_GREEDY_WEIGHTS, mask, scratch, values)
        assert chosen == int(np.argmax(values))  # argmax: the lowest id among equal values


def test_greedy_beats_random():
    def greedy_won(i: int) -> bool:
        seat = i % 2  # seats swapped every game
        specs = ["greedy", "random"] if seat == 0 else ["random", "greedy"]
        return seat in play(specs, seed=100 + i).winners

    games = 40
    assert sum(greedy_won(i) for i in range(games)) >= 0.85 * games
