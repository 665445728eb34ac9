"""The ParallelEnv, its AEC view, the RL action space and the fog of war."""

import json
import warnings

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

from extra_skips import needs
from tabletop_rl.envs.space_conquest_parallel import space_conquest_aec_env, space_conquest_env
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.baselines import plan_orders, policy_orders
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.observe import SHARE_MASK, decode_action, encode, fog_copy, player_view


def test_parallel_api_and_seed_tests():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(space_conquest_env(), num_cycles=300)
        parallel_seed_test(space_conquest_env)


def test_aec_view_passes_the_aec_api_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(space_conquest_aec_env(), num_cycles=100)


def stay_action() -> np.ndarray:
    return np.concatenate([np.arange(R.NUM_STARS), np.zeros(R.NUM_STARS, np.int64)])


def test_rl_action_sends_the_chosen_share_of_ships():
    game = SpaceConquestGame(seed=3)
    home = game.home(0)
    game.state[R.star_at(home) + R.S_SHIPS] = 7
    for share, sent in [(0, 2), (1, 4), (2, 6), (3, 7)]:
        action = stay_action()
        action[home] = (home + 1) % R.NUM_STARS
        action[R.NUM_STARS + home] = share
        orders = np.zeros((2, R.MAX_ORDERS, 3), np.int64)
        counts = np.zeros(2, np.int64)
        decode_action(game.state, 0, action, orders, counts)
        assert counts[0] == 1 and tuple(orders[0, 0]) == (home, (home + 1) % R.NUM_STARS, sent)
    enemy_home = game.home(1)
    action = stay_action()
    action[enemy_home] = home  # not my star: means stay
    decode_action(game.state, 0, action, orders, counts)
    assert counts[0] == 0


def test_mask_allows_moves_only_from_own_stars_with_ships():
    game = SpaceConquestGame(seed=3)
    home = game.home(0)
    _, mask = encode(game.state, 0)
    dest = mask[:SHARE_MASK].reshape(R.NUM_STARS, R.NUM_STARS)
    assert dest[home].all() and dest.sum() == R.NUM_STARS + R.NUM_STARS - 1
    game.state[R.star_at(home) + R.S_SHIPS] = 0
    _, mask = encode(game.state, 0)
    assert mask[:SHARE_MASK].sum() == R.NUM_STARS and mask[SHARE_MASK:].sum() == R.NUM_STARS


def test_json_orders_through_the_env_and_errors_in_the_next_infos():
    env = space_conquest_env()
    env.reset(seed=5)
    home = env.game.home_letter(0)
    good = {"from": home, "to": env.game.nearest_letter(home), "ships": 2}
    _, _, _, _, infos = env.step({"player_0": json.dumps({"moves": [good, {"from": "X", "to": "A", "ships": 1}]}),
                                  "player_1": stay_action()})
    assert [e["index"] for e in infos["player_0"]["errors"]] == [1] and infos["player_1"]["errors"] == []
    assert env.game.history[-1][0] == [(env.game.home(0), R.LETTERS.index(good["to"]), 2)]
    with pytest.raises(ValueError, match="MultiDiscrete"):
        env.step({"player_0": [1, 2, 3]})
    with pytest.raises(ValueError, match="unknown agent"):
        env.step({"player_9": None})


def test_episode_ends_with_zero_sum_rewards_and_no_agents():
    env = space_conquest_env(max_turns=300)
    env.reset(seed=2)
    rewards = {}
    while env.agents:
        actions = {a: plan_orders(player_view(env.game, p)) if p == 0 else stay_action()
                   for p, a in enumerate(env.agents)}
        _, rewards, terms, truncs, infos = env.step(actions)
    assert rewards == {"player_0": 1.0, "player_1": -1.0} and all(terms.values()) and not any(truncs.values())
    assert infos["player_0"]["result"]["end"] == "capture"
    with pytest.raises(ValueError, match="reset"):
        env.step({})


def test_render_shows_a_seats_fog_of_war_or_the_spectators_map():
    seat_view = space_conquest_env(render_mode="ansi", render_viewer=1)
    seat_view.reset(seed=3)
    text = seat_view.render()
    enemy_home = seat_view.game.home_letter(0)
    assert "Turn 1/100 - P1" in text and f"?{enemy_home}" in text and text.count("?") == 15
    spectator = space_conquest_env(render_mode="ansi")
    spectator.reset(seed=3)
    assert "(spectator)" in spectator.render() and f"4{enemy_home}0" in spectator.render()


def test_reset_from_a_saved_game():
    game = SpaceConquestGame(seed=4)
    game.step(None, None)
    env = space_conquest_env()
    obs, infos = env.reset(options={"game": game.to_json()})
    assert env.game == game and infos["player_0"]["turn"] == 2
    assert np.array_equal(obs["player_0"]["action_mask"], encode(game.state, 0)[1])


# --- fog of war -------------------------------------------------------------------------------------
def played(seed: int, turns: int) -> SpaceConquestGame:
    game = SpaceConquestGame(seed=seed)
    for _ in range(turns):
        if game.is_over:
            break
        game.step(plan_orders(player_view(game, 0)), plan_orders(player_view(game, 1)))
    return game


def observer_outputs(game: SpaceConquestGame, p: int) -> tuple:
    """Everything ``p`` is given: the RL observation and mask, the JSON view, and the fog copy a policy
    reads (its state row, event log and order errors)."""
    obs, mask = encode(game.state, p)
    copy = fog_copy(game, p)
    return (obs.tobytes(), mask.tobytes(), json.dumps(player_view(game, p), sort_keys=True), copy.state.tobytes(),
            copy.log.tobytes(), json.dumps(copy.errors))


def hide_from(game: SpaceConquestGame, p: int, rng: np.random.Generator) -> None:
    """Change everything ``p`` has not seen: the other seat's fleets, knowledge and totals, the RNG,
    and the owner, ships and (if never visited by ``p``) RU of every star ``p`` does not own."""
    s = game.state
    q = 1 - p
    for i in range(int(s[R.NUM_FLEETS_AT])):
        f = R.fleet_at(i)
        if s[f + R.F_OWNER] == q:
            s[f + R.F_SHIPS] += int(rng.integers(1, 50))
            s[f + R.F_DEST] = int(rng.integers(R.NUM_STARS))
    n = int(s[R.NUM_FLEETS_AT])
    s[R.fleet_at(n):R.fleet_at(n) + R.F_SIZE] = (q, 0, 1, 30, 2, 3, 1)
    s[R.NUM_FLEETS_AT] = n + 1
    other_knowledge = slice(R.know_at(q, 0), R.know_at(q, 0) + R.NUM_STARS * R.K_SIZE)
    s[other_knowledge] = rng.integers(-2, 9, R.NUM_STARS * R.K_SIZE)
    s[R.TALLY + q * R.T_SIZE:R.TALLY + (q + 1) * R.T_SIZE] = rng.integers(0, 9, R.T_SIZE)
    s[R.RNG] = int(rng.integers(1 << 62))
    for star in range(R.NUM_STARS):
        b = R.star_at(star)
        if s[b + R.S_OWNER] == p:
            continue
        s[b + R.S_OWNER] = int(rng.choice([R.NOBODY, q]))
        s[b + R.S_SHIPS] = int(rng.integers(0, 60))
        if not s[R.know_at(p, star) + R.K_VISITED]:
            s[b + R.S_RU] = int(rng.integers(1, 4))
    for row in game.log[1:game.log[0, 0] + 1]:  # events that concern only the other seat
        if row[R.E_KIND] != R.EV_COMBAT and row[R.E_PLAYER] == q:
            row[R.E_A:R.E_E + 1] = rng.integers(0, 16, 5)
    game.errors[q] = [{"index": 0, "message": "a secret"}]
    game.seed += 1


@pytest.mark.parametrize("seed, turns", [(1, 0), (2, 5), (3, 12), (4, 20)])
def test_changing_what_a_player_has_not_seen_leaves_its_observation_unchanged(seed, turns):
    game = played(seed, turns)
    rng = np.random.default_rng(seed)
    for p in range(2):
        before = observer_outputs(game, p)
        changed = game.clone()
        hide_from(changed, p, rng)
        assert not np.array_equal(changed.state, game.state)
        assert observer_outputs(changed, p) == before
        changed.state[R.star_at(changed.home(p)) + R.S_SHIPS] += 1  # something p does see
        assert observer_outputs(changed, p)[0] != before[0]


@pytest.mark.parametrize("seed, turns", [(1, 0), (3, 12), (4, 20), (5, 40)])
def test_the_fog_copy_reads_like_the_game_for_its_player(seed, turns):
    from tabletop_rl.agents.llm.space_conquest_tools import PlayerTools
    from tabletop_rl.games.space_conquest.render import render_map

    game = played(seed, turns)
    for p in range(2):
        copy = fog_copy(game, p)
        assert player_view(copy, p) == player_view(game, p)
        assert all(np.array_equal(a, b) for a, b in zip(encode(copy.state, p), encode(game.state, p)))
        assert render_map(copy, p) == render_map(game, p)
        for name, args in [("query_star", {"star": game.home_letter(1 - p)}), ("get_ascii_map", {}),
                           ("propose_orders", {"orders": plan_orders(player_view(game, p))})]:
            assert PlayerTools(copy, p).call(name, args) == PlayerTools(game, p).call(name, args)
        assert copy.home(1 - p) == -1 and copy.history == [] and copy.seed == 0


def test_last_seen_ownership_does_not_follow_later_changes():
    game = SpaceConquestGame(seed=6)
    star = next(s for s in range(R.NUM_STARS) if game.star(s)["home_of"] is None)
    game.state[R.star_at(star) + R.S_SHIPS] = 3
    R.resolve_star(game.state, game.log, star, np.array([2, 0]))  # player 0 attacks and fails
    R.resolve_star(game.state, game.log, star, np.array([0, 6]))  # later player 1 takes it, unseen by 0
    view = player_view(game, 0)["stars"][star]
    assert (view["owner"], view["ships"], view["ru"]) == ("npc", 2, game.star(star)["ru"])
    assert player_view(game, 1)["stars"][star]["owner"] == "you"
    unvisited = [v for v in player_view(game, 0)["stars"] if v["owner"] == "unknown"]
    assert len(unvisited) == 14 and all(v["ru"] is None and v["ships"] is None for v in unvisited)


# --- the masked action space with sb3-contrib's MaskablePPO --------------------------------------------
class VersusHeuristic(gymnasium.Env):
    """Seat 0 of the ParallelEnv against the heuristic, in the single-agent form MaskablePPO takes;
    it counts the actions that break the mask."""

    def __init__(self) -> None:
        from tabletop_rl.agents import make_policy

        self.env = space_conquest_env(max_turns=12)
        self.observation_space = self.env.observation_space("player_0")["observation"]
        self.action_space = self.env.action_space("player_0")
        self.opponent = make_policy("heuristic", game="space_conquest")
        self.outside_mask = 0

    def reset(self, seed=None, options=None):
        self.obs, _ = self.env.reset(seed=seed)
        return self.obs["player_0"]["observation"], {}

    def action_masks(self) -> np.ndarray:
        return self.obs["player_0"]["action_mask"].astype(bool)

    def step(self, action):
        chosen = np.concatenate([[0], np.cumsum(self.action_space.nvec)[:-1]]) + action
        self.outside_mask += int((~self.action_masks()[chosen]).sum())
        orders = policy_orders(self.opponent, self.env.game, 1)
        self.obs, rewards, terms, truncs, _ = self.env.step({"player_0": action, "player_1": orders})
        return self.obs["player_0"]["observation"], rewards["player_0"], terms["player_0"], truncs["player_0"], {}


def test_maskable_ppo_trains_on_the_action_space_and_keeps_to_the_mask():
    sb3_contrib = needs("sb3_contrib")
    env = VersusHeuristic()
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    assert model.num_timesteps == 128 and env.outside_mask == 0


@pytest.mark.parametrize(("field", "value", "named"), [
    ("share", 9, r"action\[16\+s\], the share of star ., is 9, outside 0\.\.3"),
    ("share", -1, r"the share of star ., is -1, outside 0\.\.3"),
    ("destination", 16, r"the destination of star ., is 16, outside 0\.\.15"),
    ("destination", -1, r"the destination of star ., is -1, outside 0\.\.15"),
    ("destination", 2**62, r"the destination of star ., is 4611686018427387904, outside 0\.\.15"),
])
def test_an_rl_action_outside_nvec_is_refused_naming_the_field(field, value, named):
    """Not clamped into range (a share of 9 played as 3) nor read as "stay": refused, nothing played."""
    env = space_conquest_env()
    env.reset(seed=5)
    home = env.game.home(0)
    action = stay_action()
    action[home] = (home + 1) % R.NUM_STARS  # a real move from the home star, but for the bad field
    action[home if field == "destination" else R.NUM_STARS + home] = value
    named = named.replace(r"16\+s", str(R.NUM_STARS + home))
    before = env.game.to_json()
    with pytest.raises(ValueError, match=named) as err:
        env.step({"player_0": action, "player_1": stay_action()})
    assert "\n" not in str(err.value) and str(err.value).startswith("player 0")
    assert env.game.to_json() == before
    with pytest.raises(ValueError, match=named):  # the same check where a policy's answer is recorded
        env.game.move_record(0, action)


@pytest.mark.parametrize("action", [np.zeros(32, np.float64), np.ones(32, np.bool_), np.zeros((1, 32), np.int64),
                                    np.zeros(1, np.int64), [0] * 31, [2**70] * 32, [[0] * 32, [0]], 7, 1.5])
def test_an_rl_action_of_another_shape_or_type_is_refused_in_one_line(action):
    env = space_conquest_env()
    env.reset(seed=5)
    before = env.game.to_json()
    with pytest.raises(ValueError, match=r"player 1 answered .*neither JSON orders nor an RL action of 32 integers"
                       ) as err:
        env.step({"player_0": stay_action(), "player_1": action})
    assert "\n" not in str(err.value) and len(str(err.value)) < 300
    assert env.game.to_json() == before


def test_the_aec_view_refuses_a_bad_rl_action_from_the_agent_that_gives_it():
    """Refused at once, so the agent may answer again; stored until the turn resolves, it would fail the other
    agent's step, which could never mend it."""
    env = space_conquest_aec_env()
    env.reset(seed=5)
    bad = stay_action()
    bad[R.NUM_STARS] = 9
    with pytest.raises(ValueError, match="player 0's RL action: action\\[16\\], the share of star A, is 9"):
        env.step(bad)
    assert env.agent_selection == "player_0"
    env.step(stay_action())
    env.step(stay_action())
    assert env.unwrapped.game.turn == 2


def test_the_aec_view_is_wrapped_as_pettingzoos_conversion_wraps_it():
    from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    ours, theirs = space_conquest_aec_env(), parallel_to_aec(space_conquest_env())
    assert type(theirs) is OrderEnforcingWrapper and type(ours) is OrderEnforcingWrapper
    assert isinstance(ours.env, parallel_to_aec_wrapper) and str(ours) == str(theirs)


@pytest.mark.parametrize("actions", [None, [stay_action(), stay_action()], "player_0", 7])
def test_step_refuses_actions_that_are_no_mapping_of_agents_in_one_line(actions):
    env = space_conquest_env()
    env.reset(seed=5)
    before = env.game.to_json()
    with pytest.raises(ValueError, match="actions must be a mapping of agent to action") as err:
        env.step(actions)
    assert "\n" not in str(err.value) and env.game.to_json() == before
