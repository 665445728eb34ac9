"""The tool-using Space Conquest LLM player, with the real ``openai`` SDK against the loopback fake
server (tests/helpers/fake_openai_server.py): the tool loop, refused and malformed calls, the budget and the
fallback, accounting, the response cache, and that no tool result carries hidden information."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

from extra_skips import needs

needs("openai")

from fake_openai_server import Answer, FakeOpenAIServer  # noqa: E402
from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.llm.client import FatalLLMError  # noqa: E402
from tabletop_rl.agents.llm.space_conquest import NUDGE, ToolLLMPolicy  # noqa: E402
from tabletop_rl.agents.llm.space_conquest_tools import tool_names  # noqa: E402
from tabletop_rl.games.space_conquest import rules as R  # noqa: E402
from tabletop_rl.games.space_conquest.baselines import plan_orders, play_match  # noqa: E402
from tabletop_rl.games.space_conquest.game import SpaceConquestGame  # noqa: E402
from tabletop_rl.games.space_conquest.observe import player_view  # noqa: E402
from tabletop_rl.ui.space_conquest_play import make_seats, play_main  # noqa: E402

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
    return p.act(None, None, game.policy_info(seat))


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


def test_what_a_turn_records_of_the_replies_is_cut_to_its_bound(server):
    game = SpaceConquestGame(seed=2)
    server.push(Answer.calls(("n" * 100_000, "{not json"), text="t" * 100_000), Answer.calls(("submit_orders", PASS)))
    p = llm(server)
    assert act(p, game) == {"moves": []}
    record = p.moves[0]
    assert record.reasoning.startswith("t" * 600) and record.reasoning[600:].startswith(" [cut:")
    ((rejected),) = record.rejected
    assert len(record.reasoning) < 700 and len(rejected["reason"]) < 500 and len(rejected["reply"]) < 2100
    assert rejected["reply"].startswith("n" * 2000) and rejected["reply"].endswith("more characters]")


def test_a_spent_budget_falls_back_to_the_heuristic_and_is_recorded(server):
    game = SpaceConquestGame(seed=2)
    server.responder = lambda request: Answer.calls(("get_ascii_map", {}))
    p = llm(server, max_tool_calls=3)
    assert act(p, game) == plan_orders(player_view(game, 0))
    record = p.moves[0]
    assert (record.source, record.attempts, record.tool_calls) == ("fallback", 3, 3)
    assert record.fallback_reason == "tool call budget spent (3 per turn) without accepted orders"
    assert p.accounting["fallback_moves"] == 1 and not p.accounting["clean"]


def test_replies_without_tool_calls_are_nudged_then_the_player_passes(server):
    server.responder = lambda request: Answer.reply("I would rather chat.")
    p = llm(server, max_retries=1, fallback="pass")
    assert act(p, SpaceConquestGame(seed=2)) == {"moves": []}
    assert (p.moves[0].attempts, p.moves[0].parse_failures, p.moves[0].source) == (2, 2, "fallback")
    assert p.moves[0].fallback_reason == "no tool called in 2 replies in a row"
    assert [r["reply"] for r in p.moves[0].rejected] == ["I would rather chat."] * 2
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
    n = int(hidden.state[R.NUM_FLEETS_AT])
    hidden.state[R.fleet_at(n):R.fleet_at(n + 1)] = (1, hidden.home(1), hidden.home(0), 9, 3, 4, 1)
    hidden.state[R.NUM_FLEETS_AT] = n + 1
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


def test_the_memory_lasts_the_game_across_each_turns_fresh_view(server):
    def remember_then_pass(request: dict) -> Answer:
        last = request["messages"][-1]
        if last["role"] == "tool":
            return Answer.calls(("submit_orders", PASS))
        turn = int(last["content"].split()[1])
        return Answer.calls(("memory_query", {"table": "plan"}),
                            ("memory_upsert", {"table": "plan", "key": f"t{turn}", "note": "hold"}))

    server.responder = remember_then_pass
    play_match(llm(server), make_policy("heuristic", game="space_conquest"), seed=5, max_turns=3)
    seen = [json.loads(tool_results(r)[0]) for r in server.requests if len(tool_results(r)) == 2]
    assert [sorted(notes) for notes in seen[:3]] == [[], ["t1"], ["t1", "t2"]]


def test_llm_is_registered_for_space_conquest_and_plays_a_hvl_seat(monkeypatch):
    monkeypatch.setenv("TABLETOP_LLM_API_KEY", "sk-test")
    seats = make_seats(argparse.Namespace(mode="hvl", opponent="llm", seat=1))
    assert isinstance(seats[0], ToolLLMPolicy) and seats[1] == "human"
    with pytest.raises(ValueError, match="fallback='random' is not one of heuristic, pass"):
        make_policy("llm:fallback=random", game="space_conquest")


# --- tabletop play space-conquest --mode hvl|lvl through standard input ----------------------------------
COMMAND = [shutil.which("tabletop")] if shutil.which("tabletop") else [sys.executable, "-m", "tabletop_rl.cli"]


def spec(base_url: str, **options) -> str:
    options = {"model": "fake-model", "base_url": base_url, "timeout": 5, "net_retries": 0, **options}
    return "llm:" + ",".join(f"{k}={v}" for k, v in options.items())


def play(argv: list[str], lines: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = play_main(argv, stdin=io.StringIO("".join(line + "\n" for line in lines)), stdout=out)
    return status, out.getvalue()


def test_hvl_through_the_tabletop_command_against_the_scripted_server(server, tmp_path):
    server.responder = observe_then_submit_the_heuristic
    game = SpaceConquestGame(seed=4)
    home, near = game.home_letter(0), game.nearest_letter(game.home_letter(0))
    lines = ["status", f"send 2 from {home} to {near}", "done", "done", "quit"]
    result = subprocess.run([*COMMAND, "play", "space-conquest", "--mode", "hvl", "--opponent", spec(server.base_url),
                             "--seed", "4", "--save", "g.json"], input="\n".join(lines) + "\n", capture_output=True,
                            text=True, cwd=tmp_path, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    assert f"ok: 2 from {home} to {near}" in result.stdout and "Turn 3/100 - P0" in result.stdout
    expected = SpaceConquestGame(seed=4)
    for mine in ({"moves": [{"from": home, "to": near, "ships": 2}]}, None):
        expected.step(mine, plan_orders(player_view(expected, 1)))
    saved = SpaceConquestGame.from_json((tmp_path / "g.json").read_text())
    assert saved == expected and saved.history == expected.history
    assert len(server.requests) == 3 * 2  # asked (look, submit) before each of the person's three turns
    assert all("You are player 2" in r["body"]["messages"][1]["content"] for r in server.requests)


def test_lvl_two_llms_play_to_the_turn_cap(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server.responder = observe_then_submit_the_heuristic
    status, out = play(["--mode", "lvl", "--players", spec(server.base_url), spec(server.base_url, temperature=0.5),
                        "--seed", "2", "--max-turns", "3"], [])
    assert status == 0 and "Game over after turn 3 (turn_cap)" in out and out.count("(spectator)") == 3
    seats = [r["body"]["messages"][1]["content"].split(". ")[1].split(";")[0] for r in server.requests]
    assert len(seats) == 12 and seats.count("You are player 1") == seats.count("You are player 2") == 6


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("mode", ["hvl", "lvl"])
@pytest.mark.parametrize("fault, message", [("dead", "attempts failed, last: connection error"),
                                            ("no model", "stopped: HTTP 404: the model 'nope' does not exist")])
def test_a_dead_server_or_a_missing_model_is_one_line_and_the_game_is_kept(server, tmp_path, monkeypatch, capsys,
                                                                           mode, fault, message):
    monkeypatch.chdir(tmp_path)
    server.push(Answer.calls(("submit_orders", PASS)))  # the LLM's first turn goes well
    server.responder = lambda request: Answer.error(404, "the model 'nope' does not exist")
    url = f"http://127.0.0.1:{closed_port()}/v1" if fault == "dead" else server.base_url
    seats = ["--opponent", spec(url)] if mode == "hvl" else ["--players", spec(url), "heuristic"]
    status, out = play(["--mode", mode, *seats, "--seed", "3", "--save", "kept.json"], ["done"] * 3)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1 and err[0].startswith("tabletop play space-conquest: error:")
    assert message in err[0] and err[0].endswith("game saved to kept.json; go on with: "
                                                 "tabletop play space-conquest --load kept.json")
    kept = SpaceConquestGame.from_json((tmp_path / "kept.json").read_text())
    assert kept.turn == (1 if fault == "dead" else 2) and kept.seed == 3


@pytest.mark.parametrize("spec, problem", [
    ("llm:max_tool_calls=100000,base_url=http://127.0.0.1:9/v1", r"^max_tool_calls must be in 1\.\.100, got 100000$"),
    ("llm:max_retries=1000000,base_url=http://127.0.0.1:9/v1", r"^max_retries must be in 0\.\.10, got 1000000$"),
])
def test_option_values_past_their_bound_are_refused_in_one_line(spec, problem):
    with pytest.raises(ValueError, match=problem):
        make_policy(spec, game="space_conquest")
