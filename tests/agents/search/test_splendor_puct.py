"""PUCT guided by a network (``agents/search/splendor_puct.py``, the ``az`` policy): the network inside
numba agrees with numpy, the search plays only legal moves, never reads hidden cards, and refuses a network
made for another player count; ``az:PATH`` loads a checkpoint of the PPO loop.

Budgets are simulation counts, never time, so every decision is reproducible.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from extra_skips import needs
from positions import hidden_variant, random_game
from tabletop_rl.agents import make_policy
from tabletop_rl.agents.search.splendor_puct import (
    PUCTPolicy,
    _tanh,
    mlp_forward,
    net_from_layers,
    net_from_state_dict,
    random_net,
    renamed_policy,
)
from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.games.splendor.observe import COLOUR_PERMUTATIONS, observe, permute_colours


def numpy_forward(x: np.ndarray, weights: tuple, biases: tuple) -> np.ndarray:
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(zip(weights, biases)):
        h = h @ w + b
        if i < len(weights) - 1:
            h = np.tanh(h)
    return h


def decide(policy: PUCTPolicy, g: SplendorGame) -> int:
    return policy.act(None, g.legal_mask(), g.policy_info(g.current_player))


def test_the_network_in_numba_is_the_network_in_numpy():
    net = random_net(hidden=(32, 16), seed=3)
    for seed in range(5):
        x = observe(random_game(2, seed, plies=10).state, 0)
        for weights, biases in ((net.policy_weights, net.policy_biases), (net.value_weights, net.value_biases)):
            np.testing.assert_allclose(mlp_forward(x, weights, biases), numpy_forward(x, weights, biases),
                                       rtol=1e-4, atol=1e-5)


@njit(fastmath=True)
def _tanh_all(x, out):
    for i in range(x.shape[0]):
        out[i] = _tanh(x[i])


def test_the_networks_tanh_is_within_its_documented_bound():
    """The rational tanh of ``mlp_forward`` (compiled as the network compiles it) against numpy's, in float64."""
    x = np.concatenate([np.linspace(-12, 12, 400_001), np.geomspace(1e-30, 1, 2001), -np.geomspace(1e-30, 1, 2001),
                        [np.inf, -np.inf, 0.0]]).astype(np.float32)
    out = np.empty_like(x)
    _tanh_all(x, out)
    error = np.abs(out.astype(np.float64) - np.tanh(x.astype(np.float64)))
    assert error.max() <= 3.1e-7, (error.max(), x[error.argmax()])
    assert np.all(np.sign(out) == np.sign(x))  # odd, and zero at zero


@pytest.mark.parametrize("num_players", [2, 3])
def test_search_plays_whole_games_of_legal_moves(num_players):
    policy = PUCTPolicy(random_net(hidden=(16,), num_players=num_players, seed=1), simulations=40, seed=2)
    g = SplendorGame(num_players, seed=5)
    while not g.is_over:
        mask = g.legal_mask()
        action = decide(policy, g)
        assert mask[action], (g.move_name(action), g.ply)
        g.step(action)


def test_every_simulation_is_counted_once_at_the_root():
    policy = PUCTPolicy(random_net(hidden=(16,), seed=0), simulations=150, seed=0)
    decide(policy, SplendorGame(2, seed=9))
    # the first simulation scores the root itself; each later one enters one root move
    assert policy.root_visits().sum() == 149 and policy.tree.used[0] <= 150


@pytest.mark.parametrize("blend", [{}, {"mix": 0.5, "rollout_depth": 3}])
def test_the_policy_network_scores_only_the_nodes_a_simulation_goes_on_through(blend):
    # the value network scores a new leaf; its priors wait for a second simulation through it, which most
    # leaves never get: so a node holds priors exactly when it is the root or was visited more than once
    policy = PUCTPolicy(random_net(hidden=(16,), seed=2), simulations=300, seed=4, **blend)
    for seed in (3, 8):
        decide(policy, random_game(2, seed, plies=10))
        _, visits, _, prior, node_value = (a[:policy.tree.used[0]] for a in policy.tree.arrays)
        scored = node_value >= 0  # a finished game is scored by its result, never by the network
        has_priors = prior[:, 0] >= 0
        assert has_priors[0] and scored[0]
        assert np.array_equal(has_priors[1:][scored[1:]], visits[1:][scored[1:]] >= 2)
        assert 0 < has_priors.sum() < scored.sum() / 2


@pytest.mark.parametrize("blend", [{}, {"mix": 0.5, "rollout_depth": 3}])
def test_hidden_cards_do_not_change_the_decision(blend):
    rng = np.random.default_rng(11)
    swapped_any = 0
    for seed in range(6):
        g = random_game(2, seed, plies=12 + 3 * seed, blind_rate=0.5)
        if g.is_over:
            continue
        variant, swapped = hidden_variant(g, rng)
        assert not np.array_equal(variant.state, g.state)
        swapped_any += swapped
        net = random_net(hidden=(16,), seed=seed)
        a, b = (PUCTPolicy(net, simulations=80, seed=seed, **blend) for _ in range(2))
        assert decide(a, g) == decide(b, variant)
        assert np.array_equal(a.root_visits(), b.root_visits())
    assert swapped_any >= 2


def test_the_network_alone_plays_its_most_probable_legal_move():
    net = random_net(hidden=(16,), seed=4)
    g = random_game(2, 3, plies=7)
    logits = numpy_forward(observe(g.state, g.current_player), net.policy_weights, net.policy_biases)
    expected = int(np.argmax(np.where(g.legal_mask(), logits, -np.inf)))
    assert decide(PUCTPolicy(net, simulations=0), g) == expected


def test_over_every_colour_renaming_a_renamed_position_gets_the_renamed_policy():
    net = random_net(hidden=(32,), seed=6)
    every = np.arange(len(COLOUR_PERMUTATIONS))
    plain_differs = 0
    for seed in range(3):
        g = random_game(2, seed, plies=9)
        obs, mask = observe(g.state, g.current_player), g.legal_mask()
        policy = renamed_policy(net, obs, mask, every)
        assert policy.sum() == pytest.approx(1.0) and not policy[~mask].any()
        for index in (1, 37, 119):
            got_obs, got_mask, expected = permute_colours(obs[None], mask[None], policy[None], [index])
            np.testing.assert_allclose(renamed_policy(net, got_obs[0], got_mask[0], every), expected[0], atol=1e-6)
            plain = renamed_policy(net, obs, mask, np.array([0]))
            renamed_plain = renamed_policy(net, got_obs[0], got_mask[0], np.array([0]))
            plain_differs += not np.allclose(permute_colours(obs[None], mask[None], plain[None], [index])[2][0],
                                             renamed_plain, atol=1e-6)
    assert plain_differs == 9  # the network alone, not averaged, tells the colours apart


def test_the_network_alone_over_renamings_plays_the_averaged_policys_most_probable_move():
    net = random_net(hidden=(16,), seed=4)
    for seed in range(4):
        g = random_game(2, seed, plies=7)
        obs, mask = observe(g.state, g.current_player), g.legal_mask()
        one = np.where(mask, numpy_forward(obs, net.policy_weights, net.policy_biases), -np.inf)
        softmax = np.exp(one - np.logaddexp.reduce(one))
        np.testing.assert_allclose(renamed_policy(net, obs, mask, np.array([0])), softmax, atol=1e-5)
        expected = int(np.argmax(renamed_policy(net, obs, mask, np.arange(120))))
        assert decide(PUCTPolicy(net, simulations=0, renamings=120), g) == expected
    policy = make_policy("az:default,simulations=0,renamings=5", "splendor")
    assert policy.renamings.tolist() == [0, 30, 60, 89, 119]


@pytest.mark.parametrize(("changes", "message"), [
    ({"renamings": 0}, r"^puct renamings must be in \[1, 120\] \(1: the position as it is\), got 0$"),
    ({"renamings": 121}, r"^puct renamings must be in \[1, 120\]"),
    ({"renamings": 120, "simulations": 16}, r"^puct renamings average the network alone's policy: they need "
                                            r"simulations=0 and no budget_ms, got simulations=16, budget_ms=None$"),
    ({"renamings": 2, "budget_ms": 50.0}, r"need simulations=0 and no budget_ms, got simulations=0, budget_ms=50.0$"),
])
def test_bad_renamings_are_refused_in_one_line(changes, message):
    with pytest.raises(ValueError, match=message):
        PUCTPolicy(random_net(hidden=(8,)), **{"simulations": 0, **changes})


def test_a_network_for_another_player_count_is_refused_in_one_line():
    policy = PUCTPolicy(random_net(hidden=(8,), num_players=2), simulations=5)
    g = SplendorGame(3, seed=1)
    with pytest.raises(ValueError, match=r"^puct: the network reads 312 inputs, a 3-player observation has \d+$"):
        decide(policy, g)


def test_layers_that_do_not_chain_are_refused():
    w = np.zeros((312, 8), np.float32)
    with pytest.raises(ValueError, match="layer shapes do not chain"):
        net_from_layers([(w, np.zeros(8)), (np.zeros((9, R.NUM_ACTIONS)), np.zeros(R.NUM_ACTIONS))],
                        [(w, np.zeros(8)), (np.zeros((8, 1)), np.zeros(1))])
    with pytest.raises(ValueError, match="value network ends in 8 outputs, not 1"):
        net_from_layers([(w, np.zeros(8)), (np.zeros((8, R.NUM_ACTIONS)), np.zeros(R.NUM_ACTIONS))],
                        [(w, np.zeros(8))])


def test_a_torch_state_dict_converts_to_the_same_network():
    torch = needs("torch")
    from tabletop_rl.agents.ppo import build_network

    network = build_network(312, [16, 8], R.NUM_ACTIONS)
    net = net_from_state_dict(network.state_dict())
    x = observe(random_game(2, 1, plies=9).state, 1)
    with torch.no_grad():
        logits = network["pi"](torch.as_tensor(x)[None]).numpy()[0]
        value = network["vf"](torch.as_tensor(x)[None]).numpy()[0]
    np.testing.assert_allclose(mlp_forward(x, net.policy_weights, net.policy_biases), logits, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mlp_forward(x, net.value_weights, net.value_biases), value, rtol=1e-4, atol=1e-5)


def test_az_loads_a_checkpoint_of_the_ppo_loop_and_refuses_what_it_cannot_search(tmp_path):
    needs("torch")
    from tabletop_rl.agents.ppo import build_network, save_checkpoint
    from tabletop_rl.games.splendor.observe import OBSERVATION_VERSION

    meta = {"game": "splendor", "num_players": 2, "observation_version": OBSERVATION_VERSION,
            "observation_size": 312}
    path = save_checkpoint(tmp_path / "net.pt", build_network(312, [16], R.NUM_ACTIONS), meta)
    policy = make_policy(f"az:{path},simulations=30", game="splendor", seed=0)
    g = SplendorGame(2, seed=2)
    assert g.legal_mask()[decide(policy, g)]
    zip_model = tmp_path / "model.zip"
    zip_model.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip: not a checkpoint
    with pytest.raises(ValueError, match="not saved by tabletop_rl"):
        make_policy(f"az:{zip_model}", game="splendor")
    three = save_checkpoint(tmp_path / "three.pt", build_network(400, [16], R.NUM_ACTIONS),
                            {**meta, "num_players": 3, "observation_size": 400})
    with pytest.raises(ValueError, match="observation_size"):
        make_policy(f"az:{three}", game="splendor")


def test_az_default_is_the_shipped_self_play_network_and_its_raw_mode_is_ppo_on_the_same_file():
    needs("torch")
    from tabletop_rl.agents.ppo import load_checkpoint
    from tabletop_rl.agents.splendor import default_az_model_path
    from tabletop_rl.games.splendor.observe import OBSERVATION_VERSION

    shipped = load_checkpoint(default_az_model_path())
    assert shipped["meta"]["algo"] == "az" and shipped["meta"]["num_players"] == 2
    assert shipped["meta"]["observation_version"] == OBSERVATION_VERSION and shipped["optimizer"] == {}
    raw = make_policy("az:default,simulations=0", game="splendor")
    ppo = make_policy(f"ppo:{default_az_model_path()}", game="splendor")
    for seed in range(4):
        g = random_game(2, seed, plies=4 + 5 * seed)
        seat = g.current_player
        obs, mask, info = g.observe(seat), g.legal_mask(), g.policy_info(seat)
        assert raw.act(obs, mask, info) == ppo.act(obs, mask, info)
    default = make_policy("az:default", game="splendor")
    assert default.net.policy_weights[0].shape == (312, 256)
    # the default budget: the blend that beats mcts:simulations=1000 in less time a move and the published
    # AlphaZero in a fraction of its time (docs/training.md), stopping once the move is settled
    assert (default.simulations, default.c, default.mix, default.rollout_depth, default.stop_early) == \
        (1400, 0.4, 0.5, 4, True)


# --- self-play's knobs: root noise and the temperature ----------------------------------------------------
def test_root_noise_and_temperature_pick_legal_moves_reproducibly():
    net = random_net(hidden=(16,), seed=6)
    for seed in range(6):
        g = random_game(2, seed, plies=5 + 4 * seed)
        if g.is_over:
            continue
        mask = g.legal_mask()
        moves = []
        for _ in range(2):
            policy = PUCTPolicy(net, simulations=40, seed=seed, noise_alpha=0.3, noise_fraction=0.5, temperature=1.0)
            picks = [decide(policy, g) for _ in range(5)]
            assert all(mask[a] for a in picks)
            assert not policy.root_visits()[~mask].any() and policy.root_visits().sum() == 39
            moves.append((picks, policy.root_visits().tolist()))
        assert moves[0] == moves[1]  # the same seed, the same noise and draws


def test_root_noise_stays_on_the_legal_moves_and_sums_to_one():
    policy = PUCTPolicy(random_net(hidden=(16,), seed=2), simulations=10, seed=3, noise_alpha=0.5)
    g = random_game(2, 4, plies=9)
    decide(policy, g)
    prior = policy.tree.arrays[3][0]
    assert np.isclose(prior.sum(), 1) and not prior[~g.legal_mask()].any()


def test_a_temperature_spreads_the_moves_and_zero_keeps_the_most_visited():
    net = random_net(hidden=(16,), seed=1)
    g = SplendorGame(2, seed=8)
    policy = PUCTPolicy(net, simulations=60, seed=0, temperature=1.0)
    picks = {decide(policy, g) for _ in range(30)}
    assert len(picks) > 1 and all(g.legal_mask()[a] for a in picks)
    greedy = PUCTPolicy(net, simulations=60, seed=0)
    assert decide(greedy, g) == int(np.argmax(greedy.root_visits()))


def test_bad_self_play_knobs_are_refused():
    net = random_net(hidden=(8,))
    for kwargs, message in (({"noise_alpha": -1}, "noise_alpha"), ({"noise_fraction": 1.5}, "noise_fraction"),
                            ({"temperature": -0.1}, "temperature"), ({"mix": 1.5}, r"mix must be in \[0, 1\]"),
                            ({"rollout_depth": -1}, "rollout_depth must be >= 0")):
        with pytest.raises(ValueError, match=message):
            PUCTPolicy(net, **kwargs)


# --- the heuristic blend: mix and rollout_depth ------------------------------------------------------------
def with_value_head(net, bias: float):
    """``net`` with its value head's last bias replaced: the same priors, another value everywhere."""
    biases = (*net.value_biases[:-1], np.full_like(net.value_biases[-1], bias))
    return net._replace(value_biases=biases)


@pytest.mark.parametrize("rollout_depth", [0, 2])
def test_at_mix_one_the_value_head_is_not_read_and_at_zero_it_is(rollout_depth):
    net = random_net(hidden=(16,), seed=5)
    high, low = with_value_head(net, 3.0), with_value_head(net, -3.0)
    differs = 0
    for seed in range(4):
        g = random_game(2, seed, plies=6 + 4 * seed)
        searches = {}
        for mix in (0.0, 1.0):
            for name, variant in (("high", high), ("low", low)):
                policy = PUCTPolicy(variant, simulations=120, seed=seed, mix=mix, rollout_depth=rollout_depth)
                decide(policy, g)
                searches[mix, name] = policy.root_visits()
        assert np.array_equal(searches[1.0, "high"], searches[1.0, "low"])
        differs += not np.array_equal(searches[0.0, "high"], searches[0.0, "low"])
    assert differs >= 2


def test_the_blend_plays_whole_games_of_legal_moves_for_three_players():
    policy = PUCTPolicy(random_net(hidden=(16,), num_players=3, seed=1), simulations=30, seed=2, mix=0.5,
                        rollout_depth=2)
    g = SplendorGame(3, seed=6)
    while not g.is_over:
        action = decide(policy, g)
        assert g.legal_mask()[action], (g.move_name(action), g.ply)
        g.step(action)


def test_az_takes_the_blend_as_spec_options():
    needs("torch")
    policy = make_policy("az:default,simulations=20,mix=0.25,rollout_depth=3", game="splendor", seed=1)
    assert (policy.mix, policy.rollout_depth, policy.simulations) == (0.25, 3, 20)
    with pytest.raises(ValueError, match="mix must be in"):
        make_policy("az:default,mix=2", game="splendor")


def constant_value_net(value: float) -> object:
    """A network whose value for the seat to move is ``value`` everywhere (and whose policy is uniform)."""
    net = random_net(hidden=(8,), seed=0)
    return net._replace(value_weights=tuple(np.zeros_like(w) for w in net.value_weights),
                        value_biases=(*net.value_biases[:-1], np.array([value], np.float32)))


@pytest.mark.parametrize(("leaf", "root"), [(1.0, -1.0), (-1.0, 1.0), (0.5, -0.5), (0.0, 0.0)])
def test_the_root_value_is_the_searchers_mean_over_its_moves(leaf, root):
    """At the deal no one can hold ten tokens, so after a root move the other seat is to move: a network that rates
    every position ``leaf`` for the seat to move, scoring the root and then one root move (two simulations), makes
    the searcher's root value ``-leaf``; with ``leaf`` = 1 first-play urgency sends each of the next simulations to
    a new root move, each worth -1 to the searcher."""
    for simulations in (2, 12) if leaf == 1.0 else (2,):
        policy = PUCTPolicy(constant_value_net(leaf), simulations=simulations, seed=0)
        decide(policy, SplendorGame(2, seed=3))
        assert policy.root_visits().sum() == simulations - 1
        assert policy.root_value() == pytest.approx(root, abs=1e-6)


def test_the_root_value_before_any_search_is_refused():
    with pytest.raises(ValueError, match="no root move was searched"):
        PUCTPolicy(random_net(hidden=(8,)), simulations=8).root_value()


def test_sequential_halving_spends_its_budget_on_the_considered_moves_and_plays_one_of_them():
    """The Gumbel root: the ``considered`` moves with the highest prior logits (plus Gumbel noise in self-play)
    share the simulations by sequential halving; no other root move is entered, the move played is one of them,
    and the policy target (softmax of logits plus the transformed completed values) covers every legal move."""
    g = SplendorGame(2, seed=4)
    mask = g.legal_mask()
    policy = PUCTPolicy(random_net(hidden=(16,), seed=1), simulations=32, seed=0, root="gumbel", considered=4)
    action = decide(policy, g)
    visits = policy.root_visits()
    entered = np.flatnonzero(visits)
    assert len(entered) == 4 and mask[entered].all() and action in entered
    assert visits.sum() <= 31  # one simulation scored the root
    target = policy.policy_target(mask)
    assert np.isclose(target.sum(), 1) and (target[mask] > 0).all() and not target[~mask].any()
    prior = policy.tree.arrays[3][0]
    top4 = np.flatnonzero(mask)[np.argsort(-prior[mask], kind="stable")[:4]]
    assert sorted(entered.tolist()) == sorted(top4.tolist())  # no noise in play: the four most probable


def test_the_gumbel_root_plays_the_finalist_with_the_better_value():
    """With a uniform policy and no noise the moves differ by their values alone: the two finalists of sequential
    halving got the most simulations, and the one played has the higher mean value for the searcher."""
    g = SplendorGame(2, seed=4)
    net = random_net(hidden=(16,), seed=3)
    net = net._replace(policy_weights=tuple(np.zeros_like(w) for w in net.policy_weights),
                       policy_biases=tuple(np.zeros_like(b) for b in net.policy_biases))
    policy = PUCTPolicy(net, simulations=64, seed=0, root="gumbel", considered=8)
    action = decide(policy, g)
    children, visits, value = policy.tree.arrays[:3]
    counts = policy.root_visits()
    finalists = np.flatnonzero(counts == counts.max())
    assert len(finalists) == 2 and action in finalists
    q = {a: value[children[0, a]] / visits[children[0, a]] for a in finalists}
    assert q[action] == max(q.values())


def test_gumbel_noise_draws_other_considered_moves_in_self_play():
    g = SplendorGame(2, seed=4)
    net = random_net(hidden=(16,), seed=1)
    sets = {tuple(np.flatnonzero(_searched(PUCTPolicy(net, simulations=16, seed=s, root="gumbel", considered=3,
                                                      gumbel_noise=True), g))) for s in range(8)}
    assert len(sets) > 1


def _searched(policy: PUCTPolicy, g: SplendorGame) -> np.ndarray:
    decide(policy, g)
    return policy.root_visits()


@pytest.mark.parametrize(("changes", "message"), [
    ({"root": "alphazero"}, "root must be puct or gumbel"),
    ({"root": "gumbel", "considered": 1}, "considered must be at least 2"),
    ({"root": "gumbel", "budget_ms": 50.0}, "gumbel root needs a number of simulations"),
])
def test_bad_root_settings_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        PUCTPolicy(random_net(hidden=(8,)), **{"simulations": 16, **changes})


def test_stopping_early_plays_the_full_searchs_moves_in_fewer_simulations():
    full = make_policy("az:default,simulations=120,stop_early=false", game="splendor", seed=4)
    early = make_policy("az:default,simulations=120", game="splendor", seed=4)
    g = SplendorGame(2, seed=6)
    ran, stopped = [], 0
    while not g.is_over and g.ply < 40:
        action = decide(full, g)
        assert decide(early, g) == action, g.ply  # the same seed: the same simulations up to the stop
        ran.append((full.simulations_run, early.simulations_run))
        stopped += early.simulations_run < full.simulations_run
        g.step(action)
    assert all(f == 120 and e <= 120 for f, e in ran) and stopped >= len(ran) // 2


def test_stopping_early_settles_a_lone_legal_move_without_searching():
    g, rng = SplendorGame(2, seed=1), np.random.default_rng(1)
    while g.legal_mask().sum() > 1:
        g.step(int(rng.choice(np.flatnonzero(g.legal_mask()))))
    early = make_policy("az:default,simulations=50", game="splendor", seed=0)
    assert decide(early, g) == int(np.argmax(g.legal_mask())) and early.simulations_run == 0


def test_stopping_early_is_refused_where_the_move_is_drawn_from_the_visits():
    with pytest.raises(ValueError, match="stop_early plays the most visited move: it needs temperature 0"):
        PUCTPolicy(random_net(hidden=(8,), seed=0), simulations=10, temperature=1.0, stop_early=True)
