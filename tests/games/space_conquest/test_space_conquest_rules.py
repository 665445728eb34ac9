"""Rules of Space Conquest: the conformance vectors of docs/space_conquest.md §13, phases, orders validation,
map generation, save/load and replay."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop_rl.agents.llm.space_conquest_tools import PlayerTools
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.actions import check_orders
from tabletop_rl.games.space_conquest.baselines import plan_orders
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.observe import player_view

GOLDEN = 0x9E3779B97F4A7C15  # splitmix64 adds this to its word on every draw
NO_ORDERS = np.zeros((2, R.MAX_ORDERS, 3), np.int64)
NO_COUNTS = np.zeros(2, np.int64)


def draws_between(before: int, after: int) -> int:
    """How many random draws the game made: the generator word moves by GOLDEN per draw."""
    return ((after - before) % 2**64) * pow(GOLDEN, -1, 2**64) % 2**64


def rng_word(state: np.ndarray) -> int:
    return int(state[R.RNG:R.RNG + 1].view(np.uint64)[0])


def set_star(state: np.ndarray, s: int, *, owner: int | None = None, ships: int | None = None,
             ru: int | None = None) -> None:
    b = R.star_at(s)
    if owner is not None:
        state[b + R.S_OWNER] = owner
    if ships is not None:
        state[b + R.S_SHIPS] = ships
    if ru is not None:
        state[b + R.S_RU] = ru


def npc_star(game: SpaceConquestGame) -> int:
    return next(s for s in range(R.NUM_STARS) if game.star(s)["home_of"] is None)


def word_rolling(state: np.ndarray, roll: int) -> int:
    """A generator word whose next d6 roll is ``roll`` (the core rolls ``random_below(6) + 1``)."""
    scratch = state.copy()
    for word in range(1000):
        scratch[R.RNG] = word
        if R.random_below(scratch, 6) + 1 == roll:
            return word
    raise AssertionError("no word found")


# --- 13: combat -----------------------------------------------------------------------------
@pytest.mark.parametrize("a, b, expected", [(5, 3, (3, 0)), (4, 4, (0, 0)), (2, 3, (0, 2)), (3, 5, (0, 3)),
                                            (4, 3, (2, 0)), (7, 0, (7, 0))])
def test_fight_vectors(a, b, expected):
    assert R.fight(a, b) == expected


def resolve(game: SpaceConquestGame, s: int, arrived: tuple[int, int]) -> dict:
    R.resolve_star(game.state, game.log, s, np.array(arrived, np.int64))
    return game.star(s)


def test_simultaneous_arrival_at_npc_star_leaves_it_npc_with_nothing():
    game = SpaceConquestGame(seed=1)
    s = npc_star(game)
    set_star(game.state, s, ships=2, ru=2)
    star = resolve(game, s, (3, 4))
    assert (star["owner"], star["ships"]) == (None, 0)


def test_one_player_beats_npc_garrison_and_takes_the_star():
    game = SpaceConquestGame(seed=1)
    s = npc_star(game)
    set_star(game.state, s, ships=3, ru=3)
    assert (resolve(game, s, (5, 0))["owner"], game.star(s)["ships"]) == (0, 3)


def test_a_failed_attack_leaves_the_npc_survivors():
    game = SpaceConquestGame(seed=1)
    s = npc_star(game)
    set_star(game.state, s, ships=3, ru=3)
    assert (resolve(game, s, (0, 2))["owner"], game.star(s)["ships"]) == (None, 2)


def test_pvp_tie_at_npc_star_leaves_garrison_untouched():
    game = SpaceConquestGame(seed=1)
    s = npc_star(game)
    set_star(game.state, s, ships=3, ru=3)
    assert (resolve(game, s, (4, 4))["owner"], game.star(s)["ships"]) == (None, 3)


def test_attack_on_owned_star_counts_reinforcements_and_a_tie_unowns_it():
    game = SpaceConquestGame(seed=1)
    s = npc_star(game)
    set_star(game.state, s, owner=0, ships=2)
    assert (resolve(game, s, (3, 5))["owner"], game.star(s)["ships"]) == (None, 0)  # 5 vs 2 + 3
    set_star(game.state, s, owner=0, ships=2)
    assert (resolve(game, s, (0, 5))["owner"], game.star(s)["ships"]) == (1, 4)


def test_landing_on_an_empty_unowned_star_takes_it_without_a_fight():
    game = SpaceConquestGame(seed=1)
    s = npc_star(game)
    set_star(game.state, s, ships=0)
    assert (resolve(game, s, (0, 2))["owner"], game.star(s)["ships"]) == (1, 2)


def test_combat_reveals_the_result_only_to_those_who_fought():
    game = SpaceConquestGame(seed=1)
    s = npc_star(game)
    set_star(game.state, s, ships=1, ru=1)
    resolve(game, s, (4, 0))
    seen = [game.state[R.know_at(p, s) + R.K_OWNER] for p in range(2)]
    assert seen == [0, R.UNKNOWN]


# --- 13: rebellions and production ---------------------------------------------------------------
def rebellion_game(roll: int) -> tuple[SpaceConquestGame, int]:
    game = SpaceConquestGame(seed=2)
    s = npc_star(game)
    set_star(game.state, s, owner=0, ships=2, ru=3)
    game.state[R.RNG] = word_rolling(game.state, roll)
    R.advance(game.state, game.log, NO_ORDERS, NO_COUNTS)
    return game, s


def test_rebellion_roll_4_reverts_the_star_with_no_production():
    game, s = rebellion_game(4)
    assert (game.star(s)["owner"], game.star(s)["ships"]) == (None, 2)  # 3 rebels - ceil(2 / 2)
    assert [e["kind"] for e in game.events() if e["star"] == R.LETTERS[s]] == ["rebellion"]
    assert game.tally(0)["rebellions"] == 1


def test_rebellion_roll_3_does_nothing_and_the_star_produces():
    game, s = rebellion_game(3)
    assert (game.star(s)["owner"], game.star(s)["ships"]) == (0, 5)


def test_home_with_no_ships_never_rolls_and_still_produces():
    game = SpaceConquestGame(seed=5)
    home = game.home(0)
    set_star(game.state, home, ships=0)
    before = rng_word(game.state)
    R.advance(game.state, game.log, NO_ORDERS, NO_COUNTS)
    assert draws_between(before, rng_word(game.state)) == 0
    assert game.star(home)["ships"] == 4


def test_ships_ordered_out_do_not_count_against_rebellion():
    game = SpaceConquestGame(seed=2)
    s = npc_star(game)
    set_star(game.state, s, owner=0, ships=3, ru=3)
    game.state[R.RNG] = word_rolling(game.state, 6)
    target = game.home(1)
    game.step({"moves": [{"from": R.LETTERS[s], "to": R.LETTERS[target], "ships": 2}]}, None)
    assert game.star(s)["owner"] is None  # 1 ship left < RU 3, and the roll was 6


# --- 13: hyperspace ----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 3, 4])
def test_a_fleet_rolls_once_per_turn_of_travel_and_arrives_after_distance_turns(seed):
    game = SpaceConquestGame(seed=seed)
    home = game.home(0)
    far = max(range(R.NUM_STARS), key=lambda s: (game.distance(home, s), -s))
    d = game.distance(home, far)
    orders = {"moves": [{"from": R.LETTERS[home], "to": R.LETTERS[far], "ships": 4}]}
    rolls, arrived_turn = 0, None
    while arrived_turn is None:
        before = rng_word(game.state)
        game.step(orders, None)
        orders = None
        rolls += draws_between(before, rng_word(game.state))
        kinds = {e["kind"] for e in game.events() if e.get("player") == 0}
        assert "lost" not in kinds  # these seeds keep the fleet (2 % a turn)
        if "arrive" in kinds:
            arrived_turn = game.turn
    assert (arrived_turn, rolls) == (1 + d, d)


def neighbour(game: SpaceConquestGame, s: int) -> int | None:
    return next((t for t in range(R.NUM_STARS) if t != s and game.distance(s, t) == 1), None)


def test_a_distance_1_fleet_arrives_next_turn_after_exactly_one_roll():
    game = next(g for g in map(SpaceConquestGame, range(100)) if neighbour(g, g.home(0)) is not None)
    home, near = game.home(0), neighbour(game, game.home(0))
    before = rng_word(game.state)
    game.step({"moves": [{"from": R.LETTERS[home], "to": R.LETTERS[near], "ships": 4}]}, None)
    assert draws_between(before, rng_word(game.state)) == 1 and game.turn == 2
    assert [e["kind"] for e in game.events() if e.get("player") == 0 and e["kind"] in ("arrive", "lost")] == ["arrive"]


def word_losing(state: np.ndarray) -> int:
    """A generator word whose next draw is below the 2 % loss chance."""
    scratch = state.copy()
    for word in range(100_000):
        scratch[R.RNG] = word
        if R.random_unit(scratch) < R.FLAT_LOSS:
            return word
    raise AssertionError("no word found")


def test_a_fleet_that_rolls_a_loss_vanishes_whole_and_only_its_owner_hears_of_it():
    game = SpaceConquestGame(seed=4)
    home, far = game.home(0), game.home(1)
    game.state[R.RNG] = word_losing(game.state)  # no rebellion rolls at the start: the fleet's roll comes first
    game.step({"moves": [{"from": R.LETTERS[home], "to": R.LETTERS[far], "ships": 3}]}, None)
    assert game.fleets() == [] and game.tally(0) == {"lost_ships": 3, "lost_fleets": 1, "rebellions": 0,
                                                     "captures": 0}
    lost = [e for e in game.events() if e["kind"] == "lost"]
    assert lost == [{"kind": "lost", "turn": 2, "star": R.LETTERS[far], "player": 0, "from": R.LETTERS[home],
                     "to": R.LETTERS[far], "ships": 3, "distance": game.distance(home, far)}]
    assert game.total_ships(0) == 4 - 3 + 4
    assert lost[0] in player_view(game, 0)["events"]
    assert [e["kind"] for e in player_view(game, 1)["events"]] == ["production"]


def test_loss_chance_models():
    assert R.loss_chance(R.FLAT, 8) == pytest.approx(0.02)
    per_turn = R.loss_chance(R.NLOGN, 4)
    assert 1 - (1 - per_turn) ** 4 == pytest.approx(0.16)


# --- orders --------------------------------------------------------------------------------------
def test_over_committed_star_rejects_every_order_of_that_player():
    game = SpaceConquestGame(seed=3)
    home, other = game.home_letter(0), game.nearest_letter(game.home_letter(0))
    set_star(game.state, game.home(0), ships=5)
    check = check_orders(game.state, 0, {"moves": [{"from": home, "to": other, "ships": 3},
                                                   {"from": home, "to": other, "ships": 3}]})
    assert check.rejected_all and check.accepted == []
    assert "over-committed" in check.errors[-1]["message"]


def over_asking_orders(game: SpaceConquestGame) -> tuple[dict, int]:
    """Seat 0 owns a second star of 3 ships; a good move from it, then one move asking 9 of the home's 4."""
    home, second = game.home(0), npc_star(game)
    set_star(game.state, second, owner=0, ships=3)
    target = next(s for s in range(R.NUM_STARS) if s not in (home, second))
    moves = [{"from": R.LETTERS[second], "to": R.LETTERS[target], "ships": 1},
             {"from": R.LETTERS[home], "to": R.LETTERS[target], "ships": 9}]
    return {"moves": moves}, home


def test_a_single_move_asking_more_ships_than_its_star_holds_rejects_the_whole_set():
    """§9 (the spec's §5.6): any star ordered to send more than it holds, one move alone included."""
    game = SpaceConquestGame(seed=3)
    orders, home = over_asking_orders(game)
    check = check_orders(game.state, 0, orders)
    assert check.rejected_all and check.accepted == []
    assert [e["index"] for e in check.errors] == [None]
    message = check.errors[0]["message"]
    assert f"{R.LETTERS[home]} has 4 ships, cannot send 9" in message and "over-committed" in message
    assert "all orders rejected this turn" in message


def test_an_over_asking_set_is_rejected_in_play_and_the_other_seat_still_moves():
    game = SpaceConquestGame(seed=3)
    orders, _ = over_asking_orders(game)
    theirs = {"moves": [{"from": game.home_letter(1), "to": game.nearest_letter(game.home_letter(1)), "ships": 2}]}
    game.step(orders, theirs)
    assert game.history[0][0] == [] and len(game.history[0][1]) == 1
    assert "cannot send 9" in game.errors[0][0]["message"] and game.errors[1] == []


def test_the_llm_tools_reject_an_over_asking_set_whole():
    game = SpaceConquestGame(seed=3)
    orders, _ = over_asking_orders(game)
    tools = PlayerTools(game, 0)
    for tool in ("propose_orders", "submit_orders"):
        result = tools.call(tool, {"orders": orders})
        assert result["rejected_all"] and result["accepted"] == [] and not result["ok"]


@pytest.mark.parametrize("move, reason", [
    ({"from": "Z", "to": "OTHER", "ships": 1}, "unknown star"),
    ({"from": "HOME", "to": "HOME", "ships": 1}, "both"),
    ({"from": "HOME", "to": "OTHER", "ships": 0}, "positive integer"),
    ({"from": "HOME", "to": "OTHER", "ships": 1.5}, "positive integer"),
    ({"from": "HOME", "to": "OTHER", "ships": True}, "positive integer"),
    ({"from": "ENEMY", "to": "OTHER", "ships": 1}, "not yours"),
    ({"to": "OTHER", "ships": 1}, '"from"'),
    ("A to B", "is an object"),
])
def test_a_bad_move_is_skipped_with_its_reason_and_the_rest_execute(move, reason):
    game = SpaceConquestGame(seed=3)
    home = game.home_letter(0)
    names = {"HOME": home, "ENEMY": game.home_letter(1), "OTHER": game.nearest_letter(home)}
    if isinstance(move, dict):
        move = {k: names.get(v, v) if isinstance(v, str) else v for k, v in move.items()}
    good = {"from": home, "to": names["OTHER"], "ships": 1}
    check = check_orders(game.state, 0, {"moves": [move, good]})
    assert [e["index"] for e in check.errors] == [0]
    assert reason in check.errors[0]["message"]
    assert check.accepted == [(game.home(0), R.LETTERS.index(names["OTHER"]), 1)] and not check.rejected_all


def test_errors_come_back_next_turn_and_malformed_orders_are_one_clear_error():
    game = SpaceConquestGame(seed=3)
    game.step("not json", {"moves": [{"from": "Q", "to": "A", "ships": 1}]})
    assert "not valid JSON" in game.errors[0][0]["message"]
    assert "unknown star 'Q'" in game.errors[1][0]["message"]
    game.step(None, None)
    assert game.errors == [[], []]


def test_orders_take_ships_from_the_origin_at_once():
    game = SpaceConquestGame(seed=4)
    home = game.home_letter(0)
    game.step({"moves": [{"from": home, "to": game.nearest_letter(home), "ships": 3}]}, None)
    assert game.star(game.home(0))["ships"] == 4 - 3 + 4


# --- map generation ----------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**64 - 1))
def test_map_follows_the_spec_baseline(seed):
    game = SpaceConquestGame(seed=seed)
    stars = [game.star(s) for s in range(R.NUM_STARS)]
    assert len({(s["x"], s["y"]) for s in stars}) == 16
    homes = [game.star(game.home(p)) for p in range(2)]
    assert sorted((h["x"] <= 3 and h["y"] <= 3, h["x"] >= 8 and h["y"] >= 6) for h in homes) == [(False, True),
                                                                                                (True, False)]
    assert 5 <= game.distance(game.home(0), game.home(1)) <= 11
    assert all((h["ru"], h["ships"], h["owner"]) == (4, 4, p) for p, h in enumerate(homes))
    npc = [s for s in stars if s["home_of"] is None]
    for (x0, x1, y0, y1), rus in zip(R.QUADRANTS, R.QUADRANT_RU):
        inside = sorted(s["ru"] for s in npc if x0 <= s["x"] <= x1 and y0 <= s["y"] <= y1)
        assert inside == sorted(int(v) for v in rus if v)
    assert all(s["ships"] == s["ru"] and s["owner"] is None for s in npc)


def test_letters_do_not_reveal_homes():
    homes = {SpaceConquestGame(seed=s).home_letter(0) for s in range(60)}
    assert len(homes) > 8


# --- victory and the turn cap ----------------------------------------------------------------------
def test_taking_the_enemy_home_wins_and_both_at_once_is_a_draw():
    game = SpaceConquestGame(seed=6)
    set_star(game.state, game.home(1), owner=0)
    R.check_victory(game.state)
    assert (game.is_over, game.winner, game.end_reason) == (True, 0, "capture")
    game = SpaceConquestGame(seed=6)
    set_star(game.state, game.home(1), owner=0)
    set_star(game.state, game.home(0), owner=1)
    R.check_victory(game.state)
    assert game.is_draw and game.winner is None


def test_turn_cap_scores_ru_then_ships_then_draw():
    game = SpaceConquestGame(seed=7, max_turns=2)
    game.step(None, None)
    game.step(None, None)
    assert (game.is_over, game.end_reason, game.is_draw) == (True, "turn_cap", True)  # mirror positions
    game = SpaceConquestGame(seed=7, max_turns=1)
    set_star(game.state, game.home(1), ships=0)
    game.step(None, None)
    assert game.winner == 0  # equal RU, more ships
    game = SpaceConquestGame(seed=7, max_turns=1)
    set_star(game.state, npc_star(game), owner=1, ships=9)
    game.step(None, None)
    assert game.winner == 1
    with pytest.raises(ValueError, match="game is over"):
        game.step(None, None)


# --- saving, loading, replay -----------------------------------------------------------------------
def play_some(game: SpaceConquestGame, turns: int) -> None:
    for _ in range(turns):
        if game.is_over:
            return
        game.step(plan_orders(player_view(game, 0)), plan_orders(player_view(game, 1)))


def test_save_and_load_round_trip_and_continue_identically():
    game = SpaceConquestGame(seed=8)
    play_some(game, 6)
    loaded = SpaceConquestGame.from_json(game.to_json())
    assert loaded == game and loaded.events() == game.events() and loaded.errors == game.errors
    play_some(game, 5)
    play_some(loaded, 5)
    assert loaded == game


def test_replay_of_a_finished_game_reproduces_every_turn():
    game = SpaceConquestGame(seed=9)
    play_some(game, 200)
    assert game.is_over
    copies = list(game.replay())
    assert len(copies) == game.turn if game.end_reason == "capture" else game.turn + 1
    assert copies[-1] == game and copies[0].turn == 1


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("state"), "missing state"),
    (lambda d: d.update(format="chess"), "not a Space Conquest save"),
    (lambda d: d["state"].__setitem__(R.star_at(0) + R.S_SHIPS, -3), r"stars\[0\]\.ships is -3, replay gives"),
    (lambda d: d["state"].__setitem__(R.star_at(0) + R.S_X, 40), r"stars\[0\]\.x is 40, replay gives"),
    (lambda d: d.update(max_turns=0), "max_turns"),
    (lambda d: d["state"].append("x"), "list of integers"),
    (lambda d: d.update(max_turns=50), "max_turns is 100, replay gives 50"),
    (lambda d: d.update(loss_model="nlogn"), "does not follow from its seed and moves"),
    (lambda d: d.update(seed=2), "does not follow from its seed and moves"),
    (lambda d: d.update(seed=2**64 + 1), "seed must be an integer"),
    (lambda d: d["history"].pop(), "turn is 4, replay gives 3"),
    (lambda d: d["history"][0].append([]), "bad history entry"),
    (lambda d: d["history"][0][0].append(["A", "B", -2]), "bad history entry"),
    (lambda d: d["history"][0][0].append(["A", "Z", 2]), "bad history entry"),
    (lambda d: d.update(errors="none"), "errors must be two lists"),
    (lambda d: d["errors"][1].append({"index": "x", "message": "m"}), "errors must be two lists"),
    (lambda d: d["log"][0].pop(), "impossible event"),
    (lambda d: d["log"][0].__setitem__(R.E_KIND, 9), r"log\[0\]\.kind is 9, replay gives"),
    (lambda d: d.update(log=[[R.EV_COMBAT, 1, 0, 2, 3, -1, -1, 5, 0]]), "the log has 1 events, replay gives"),
])
def test_corrupt_saves_are_one_clear_error(edit, message):
    game = SpaceConquestGame(seed=1)
    play_some(game, 3)
    data = json.loads(game.to_json())
    SpaceConquestGame.from_dict(json.loads(game.to_json()))  # the save as written loads
    edit(data)
    with pytest.raises(ValueError, match=message):
        SpaceConquestGame.from_dict(data)
    with pytest.raises(ValueError, match="not valid JSON"):
        SpaceConquestGame.from_json("{")


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


DEEP = 100_000
A_MOVE = '{"from": "A", "to": "B", "ships": 1}'
#: Orders no reader follows all the way: nested too deeply, too many values, too much text.
PAST_THE_BOUNDS = {
    "deep text": '{"moves": ' + "[" * DEEP + "]" * DEEP + "}",
    "deep moves": {"moves": nested(DEEP)},
    "deep extra key": {"moves": [{"from": "A", "to": "B", "ships": 1, "rationale": nested(DEEP)}]},
    "long list": {"moves": [{"from": "A", "to": "B", "ships": 1}] * DEEP},
    "long list text": '{"moves": [' + ", ".join([A_MOVE] * DEEP) + "]}",
    "long text": " " * 2_000_000 + '{"moves": []}',
}


@pytest.mark.parametrize("name", list(PAST_THE_BOUNDS))
def test_orders_past_the_bounds_are_rejected_whole_in_one_line(name):
    """Neither a RecursionError nor an error per move of a list a hundred thousand long: one error, no move."""
    orders = PAST_THE_BOUNDS[name]
    game = SpaceConquestGame(seed=3)
    (check, _) = game.step(orders, None)
    assert check.rejected_all and check.accepted == [] and len(check.errors) == 1
    message = check.errors[0]["message"]
    assert check.errors[0]["index"] is None and "\n" not in message and len(message) < 200
    assert any(word in message for word in ("deeper", "more than")), message
    assert len(game.describe_move(orders)) < 200
    if isinstance(orders, dict):  # a policy's answer as it is recorded
        with pytest.raises(ValueError, match="player 0's orders (nest deeper|hold more)") as err:
            game.move_record(0, orders)
        assert "\n" not in str(err.value)


def test_orders_within_the_bounds_keep_the_per_move_rules():
    """Forty bad moves with a nested rationale each: every one skipped with its own error, the set not rejected."""
    game = SpaceConquestGame(seed=3)
    home, other = game.home_letter(0), game.nearest_letter(game.home_letter(0))
    move = {"from": home, "to": other, "ships": 0, "rationale": {"why": ["nearest", {"depth": [1, 2]}]}}
    check = check_orders(game.state, 0, {"moves": [move] * 40})
    assert [e["index"] for e in check.errors] == list(range(40)) and not check.rejected_all
