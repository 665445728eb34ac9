"""The LLM player's tool layer: schemas, each tool, the call budget, memory, and fog of war."""

import json

import numpy as np
import pytest

from tabletop_rl.agents.llm.space_conquest_tools import MEMORY_TABLES, TOOL_SCHEMAS, PlayerTools, tool_names
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.game import SpaceConquestGame


def test_every_schema_names_a_tool_and_lists_its_required_arguments():
    tools = PlayerTools(SpaceConquestGame(seed=1), 0, max_calls=100)
    assert tool_names() == ["get_observation", "get_ascii_map", "query_star", "estimate_route", "propose_orders",
                            "submit_orders", "memory_query", "memory_upsert"]
    for schema in TOOL_SCHEMAS:
        params = schema["function"]["parameters"]
        assert set(params["required"]) <= set(params["properties"])
        if params["required"]:  # leaving out a required argument is reported, not raised
            assert "error" in tools.call(schema["function"]["name"], {})
    json.dumps(TOOL_SCHEMAS)


def test_route_estimate_and_star_query():
    game = SpaceConquestGame(seed=2)
    tools = PlayerTools(game, 0)
    home, far = game.home_letter(0), game.home_letter(1)
    d = game.distance(home, far)
    route = tools.call("estimate_route", json.dumps({"from": home, "to": far}))
    assert route["distance"] == d and route["loss_risk"] == pytest.approx(1 - 0.98 ** d, abs=1e-4)
    star = tools.call("query_star", {"star": far})
    assert star["ru"] is None and star["owner"] == "unknown" and star["distance_from_your_stars"] == {home: d}
    assert "unknown star" in tools.call("query_star", {"star": "Q"})["error"]


def test_route_risk_follows_the_games_loss_model():
    game = SpaceConquestGame(seed=2, loss_model="nlogn")
    a, b = next((a, b) for a in range(R.NUM_STARS) for b in range(R.NUM_STARS) if game.distance(a, b) == 4)
    route = PlayerTools(game, 0).call("estimate_route", {"from": R.LETTERS[a], "to": R.LETTERS[b]})
    assert route["loss_risk"] == pytest.approx(0.16, abs=1e-4)  # docs/space_conquest.md §5: 0.02 * 4 * log2(4)


@pytest.mark.parametrize("model", ["flat", "nlogn"])
def test_the_view_and_the_system_prompt_state_the_games_loss_model(model):
    from tabletop_rl.agents.llm.space_conquest import system_prompt
    from tabletop_rl.games.space_conquest.observe import player_view

    rules = player_view(SpaceConquestGame(seed=2, loss_model=model), 0)["rules"]
    flat = model == "flat"
    assert rules["loss_model"] == model and rules["loss_per_turn"] == (0.02 if flat else None)
    assert len(rules["route_loss"]) == 11
    assert rules["route_loss"][3] == pytest.approx(1 - 0.98 ** 4 if flat else 0.16, abs=1e-4)
    assert ("2% chance each turn" in system_prompt(model)) == flat


def test_propose_validates_and_submit_happens_once():
    game = SpaceConquestGame(seed=2)
    tools = PlayerTools(game, 0)
    home = game.home_letter(0)
    bad = {"moves": [{"from": home, "to": game.nearest_letter(home), "ships": 2}, {"from": "A", "to": "A", "ships": 1}]}
    check = tools.call("propose_orders", {"orders": bad})
    assert not check["ok"] and [e["index"] for e in check["errors"]] == [1] and tools.submitted is None
    assert tools.call("submit_orders", {"orders": bad})["submitted"] and tools.submitted == bad
    assert "already submitted" in tools.call("submit_orders", {"orders": bad})["error"]


def test_call_budget_per_turn_and_unknown_tools():
    tools = PlayerTools(SpaceConquestGame(seed=2), 1, max_calls=3)
    assert "unknown tool" in tools.call("launch_missiles")["error"]
    tools.call("get_ascii_map")
    tools.call("get_observation")
    assert "budget spent" in tools.call("get_observation")["error"]
    tools.start_turn()
    assert isinstance(tools.call("get_ascii_map"), str)


def test_memory_is_per_player_and_per_table():
    game = SpaceConquestGame(seed=2)
    mine, theirs = PlayerTools(game, 0), PlayerTools(game, 1)
    assert mine.call("memory_upsert", {"table": "threat", "key": "C", "note": "enemy 12 ships"}) == {"ok": True}
    assert mine.call("memory_query", {"table": "threat", "key": "C"}) == {"note": "enemy 12 ships", "turn": 1}
    assert theirs.call("memory_query", {"table": "threat"}) == {}
    assert "unknown memory table" in mine.call("memory_query", {"table": "gossip"})["error"]
    assert set(mine.memory) == set(MEMORY_TABLES)


def test_tools_do_not_reveal_what_the_player_has_not_seen():
    game = SpaceConquestGame(seed=3)
    game.step(None, {"moves": [{"from": game.home_letter(1), "to": game.nearest_letter(game.home_letter(1)),
                                "ships": 3}]})
    hidden = game.clone()
    enemy_home = R.star_at(hidden.home(1))
    hidden.state[enemy_home + R.S_SHIPS] = 77
    n = int(hidden.state[R.NUM_FLEETS_AT])  # an enemy fleet player 0 cannot see
    hidden.state[R.fleet_at(n):R.fleet_at(n + 1)] = (1, hidden.home(1), hidden.home(0), 9, 3, 4, 1)
    hidden.state[R.NUM_FLEETS_AT] = n + 1
    hidden.state[R.RNG] += 1
    assert not np.array_equal(hidden.state, game.state)
    queries = [("get_observation", {}), ("get_ascii_map", {}), ("query_star", {"star": game.home_letter(1)}),
               ("propose_orders", {"orders": {"moves": [{"from": game.home_letter(1), "to": "A", "ships": 80}]}})]
    for name, args in queries:
        assert PlayerTools(game, 0).call(name, args) == PlayerTools(hidden, 0).call(name, args), name
