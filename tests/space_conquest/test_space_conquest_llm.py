"""The tool-using Space Conquest LLM player, with the real ``openai`` SDK against the loopback fake
server (tests/fake_openai_server.py): the tool loop, refused and malformed calls, the budget and the
fallback, accounting, the response cache, and that no tool result carries hidden information."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openai")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # fake_openai_server lives in tests/

from fake_openai_server import Answer, FakeOpenAIServer  # noqa: E402
from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.llm_client import FatalLLMError  # noqa: E402
from tabletop_rl.space_conquest import rules as R  # noqa: E402
from tabletop_rl.space_conquest.game import SpaceConquestGame  # noqa: E402
from tabletop_rl.space_conquest.llm_player import NUDGE, ToolLLMPolicy  # noqa: E402
from tabletop_rl.space_conquest.observe import player_view  # noqa: E402
from tabletop_rl.space_conquest.play import make_seats  # noqa: E402
from tabletop_rl.space_conquest.policies import plan_orders, play_match  # noqa: E402
from tabletop_rl.space_conquest.tools import tool_names  # noqa: E402

PASS = {"orders": {"moves": []}}


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=lambda request: Answer.error(500, "the script ran out")) as s:
        yield s


def llm(server: FakeOpenAIServer, **options) -> ToolLLMPolicy:
    options = {"model": "fake-model", "base_url": server.base_url, "backoff": 0.001, "timeout": 5.0,
               "net_retries": 1, **options}
    return make_policy("llm:" + ",".join(f"{k}={v}" for k, v in options.items()), game="space_conquest", seed=0)


def act(p: ToolLLMPolicy, game: SpaceConquestGame, seat: int = 0):
    return p.act(None, None, {"game": game, "player": seat})


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "tool"]


def test_the_model_looks_proposes_fixes_and_submits(server):
    game = SpaceConquestGame(seed=2)
    home = game.home_letter(0)
    good = {"moves": [{"from": home, "to": game.nearest_letter(home), "ships": 2}]}
    server.push(Answer.calls(("get_observation", {}), text="first, a look"),
                Answer.calls(("propose_orders", {"orders": {"moves": [{"from": home, "to": home, "ships": 1}]}})),
                Answer.calls(("propose_orders", {"orders": good})),
                Answer.calls(("submit_orders", {"orders": good})))
    p = llm(server)
    assert act(p, game) == good
    first, last = server.requests[0]["body"], server.requests[-1]["body"]
    assert [t["function"]["name"] for t in first["tools"]] == tool_names() and first["tool_choice"] == "auto"
    observation, bad_check, good_check = (json.loads(r) for r in tool_results(server.requests[-1]))
    assert observation == json.loads(json.dumps(player_view(game, 0)))
    assert not bad_check["ok"] and "origin and destination" in bad_check["errors"][0]["message"]
    assert good_check["ok"] and good_check["accepted"] == good["moves"]
    echoed = [m for m in last["messages"] if m["role"] == "assistant"][0]
    assert echoed["tool_calls"][0]["id"] == "call_0" and echoed["content"] == "first, a look"
    record = p.moves[0]
    assert (record.source, record.attempts, record.tool_calls, record.ply) == ("llm", 4, 4, 1)
    assert record.prompt_tokens == 400
    assert record.parse_failures == record.illegal_replies == 0 and record.latency_s > 0
    assert p.accounting["clean"] and p.accounting["tool_calls"] == 4


def test_a_submission_with_errors_is_refused_and_can_be_fixed(server):
    game = SpaceConquestGame(seed=2)
    home = game.home_letter(0)
    too_many = {"orders": {"moves": [{"from": home, "to": game.nearest_letter(home), "ships": 99}]}}
    server.push(Answer.calls(("submit_orders", too_many)), Answer.calls(("submit_orders", PASS)))
    p = llm(server)
    assert act(p, game) == {"moves": []}
    refused = json.loads(tool_results(server.requests[-1])[0])
    assert refused["submitted"] is False and "cannot send 99" in refused["errors"][0]["message"]
    assert p.moves[0].illegal_replies == 1 and p.moves[0].source == "llm"


def test_a_malformed_argument_gets_an_error_result_and_the_model_recovers(server):
    game = SpaceConquestGame(seed=2)
    server.push(Answer.calls(("query_star", '{"star": "A"')), Answer.calls(("query_star", {"star": "A"})),
                Answer.calls(("submit_orders", PASS)))
    p = llm(server)
    assert act(p, game) == {"moves": []}
    broken, fixed = (json.loads(r) for r in tool_results(server.requests[-1]))
    assert "not valid JSON" in broken["error"] and fixed["letter"] == "A"
    assert (p.moves[0].parse_failures, p.moves[0].source, p.moves[0].tool_calls) == (1, "llm", 3)


def test_a_spent_budget_falls_back_to_the_heuristic_and_is_recorded(server):
    game = SpaceConquestGame(seed=2)
    server.responder = lambda request: Answer.calls(("get_ascii_map", {}))
    p = llm(server, max_tool_calls=3)
    assert act(p, game) == plan_orders(player_view(game, 0))
    record = p.moves[0]
    assert (record.source, record.attempts, record.tool_calls) == ("fallback", 3, 3)
    assert "budget spent" in record.errors[-1]
    assert p.accounting["fallback_moves"] == 1 and not p.accounting["clean"]


def test_replies_without_tool_calls_are_nudged_then_the_player_passes(server):
    server.responder = lambda request: Answer.reply("I would rather chat.")
    p = llm(server, max_retries=1, fallback="pass")
    assert act(p, SpaceConquestGame(seed=2)) == {"moves": []}
    assert (p.moves[0].attempts, p.moves[0].parse_failures, p.moves[0].source) == (2, 2, "fallback")
    assert server.requests[1]["body"]["messages"][-1] == {"role": "user", "content": NUDGE}


def test_network_errors_are_retried_and_refusals_stop_the_game(server):
    server.push(Answer.error(503, "busy"), Answer.calls(("submit_orders", PASS)))
    p = llm(server)
    act(p, SpaceConquestGame(seed=2))
    assert p.moves[0].network_retries == 1 and len(server.requests) == 2
    server.push(Answer.error(401, "bad key"))
    with pytest.raises(FatalLLMError, match="stopped: HTTP 401: bad key"):
        act(p, SpaceConquestGame(seed=2))


def test_tool_results_never_carry_what_the_player_has_not_seen(server):
    game = SpaceConquestGame(seed=3)
    enemy_home = game.home_letter(1)
    game.step(None, {"moves": [{"from": enemy_home, "to": game.nearest_letter(enemy_home), "ships": 3}]})
    hidden = game.clone()  # the enemy's garrison and an enemy fleet differ, unseen by player 0
    hidden.state[R.star_at(hidden.home(1)) + R.S_SHIPS] = 77
    n = int(hidden.state[R.NUM_FLEETS])
    hidden.state[R.fleet_at(n):R.fleet_at(n + 1)] = (1, hidden.home(1), hidden.home(0), 9, 3, 4, 1)
    hidden.state[R.NUM_FLEETS] = n + 1
    assert not np.array_equal(hidden.state, game.state)
    script = [("get_observation", {}), ("get_ascii_map", {}), ("query_star", {"star": enemy_home}),
              ("estimate_route", {"from": game.home_letter(0), "to": enemy_home}),
              ("memory_upsert", {"table": "sighting", "key": enemy_home, "note": "their home?"}),
              ("memory_query", {"table": "sighting"}),
              ("propose_orders", {"orders": {"moves": [{"from": enemy_home, "to": "A", "ships": 80}]}})]
    conversations = []
    for g in (game, hidden):
        server.requests.clear()
        server.push(*(Answer.calls(call) for call in script), Answer.calls(("submit_orders", PASS)))
        act(llm(server), g)
        conversations.append([r["body"] for r in server.requests])
    assert conversations[0] == conversations[1]
    assert json.loads(tool_results(server.requests[-1])[0]) == json.loads(json.dumps(player_view(game, 0)))


def test_cached_tool_calls_replay_without_requests(server, tmp_path):
    server.push(Answer.calls(("get_ascii_map", {})), Answer.calls(("submit_orders", PASS)))
    first = llm(server, cache=tmp_path)
    act(first, SpaceConquestGame(seed=2))
    again = llm(server, cache=tmp_path)
    assert act(again, SpaceConquestGame(seed=2)) == {"moves": []} and len(server.requests) == 2
    assert again.accounting["cache_hits"] == 2 and again.accounting["tool_calls"] == 2


def observe_then_submit_the_heuristic(request: dict) -> Answer:
    """A scripted model that sees only its tool results: look, then submit the heuristic's orders for that view."""
    last = request["messages"][-1]
    if last["role"] == "tool":
        return Answer.calls(("submit_orders", {"orders": plan_orders(json.loads(last["content"]))}))
    return Answer.calls(("get_observation", {}))


def test_a_whole_game_against_the_heuristic(server):
    server.responder = observe_then_submit_the_heuristic
    p = llm(server)
    result = play_match(p, make_policy("heuristic", game="space_conquest"), seed=5, max_turns=6)
    assert p.accounting["moves"] == result["turn"] == len(p.moves) and p.accounting["clean"]
    assert p.accounting["tool_calls"] == 2 * result["turn"]
    p.reset(0)
    assert p.moves == [] and p.accounting["moves"] == 0


def test_llm_is_registered_for_space_conquest_and_is_the_hvl_default(monkeypatch):
    monkeypatch.setenv("TABLETOP_LLM_API_KEY", "sk-test")
    seats = make_seats(argparse.Namespace(mode="hvl", opponent="llm", seat=2))
    assert isinstance(seats[0], ToolLLMPolicy) and seats[1] == "human"
    with pytest.raises(ValueError, match="fallback='random' is not one of heuristic, pass"):
        make_policy("llm:fallback=random", game="space_conquest")
