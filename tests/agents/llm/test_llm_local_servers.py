"""A local server like llama-cpp-python's (``python -m llama_cpp.server``), played by the loopback fake server
(tests/helpers/fake_openai_server.py): it refuses the ``json_schema`` response format with HTTP 500 but keeps a
model to ``{"type": "json_object", "schema": ...}``, and computes one reply at a time, to the end, even for a client
that gave up waiting. With the defaults, ``mode=auto`` keeps the reply constrained (remembering the form per
server), sends one request at a time with time to answer, and a request that timed out is sent once more at most,
after one line that says why it may time out again and what to change."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from extra_skips import needs

needs("openai")

from fake_openai_server import Answer, FakeOpenAIServer, llama_cpp_player  # noqa: E402
from tabletop_rl.agents import make_policy, parse_spec  # noqa: E402
from tabletop_rl.agents.llm.client import LLMUnavailableError  # noqa: E402
from tabletop_rl.agents.llm.policy import LLMPolicy  # noqa: E402
from tabletop_rl.arena import load_games  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402


def llm(server: FakeOpenAIServer, model: str = "small", **options: object) -> LLMPolicy:
    """A player of ``server`` with the defaults, but for ``options``."""
    spec = f"llm:model={model},base_url={server.base_url}" + "".join(f",{k}={v}" for k, v in options.items())
    p = make_policy(spec, game="splendor", seed=0)
    assert isinstance(p, LLMPolicy)
    return p


def act(p: LLMPolicy, game: SplendorGame) -> int:
    return p.act(None, game.legal_mask(), game.policy_info(game.current_player))


def formats(server: FakeOpenAIServer) -> list[str]:
    """Each request's reply format, as the mode that asks for it."""
    def mode(response_format):
        if response_format is None:
            return "text"
        return "json_object_schema" if "schema" in response_format else response_format["type"]
    return [mode(r["body"].get("response_format")) for r in server.requests]


# --- structured output -------------------------------------------------------------------------------------
def test_a_llama_cpp_server_keeps_the_reply_to_the_schema_in_json_mode():
    with FakeOpenAIServer(llama_cpp_player(seed=3), one_at_a_time=True) as server:
        p = llm(server, max_retries=0)
        opponent = make_policy("random", game="splendor", seed=1)
        game = SplendorGame(2, seed=4, max_plies=40)
        while not game.is_over:
            game.step(act(p if game.current_player == 0 else opponent, game))
    totals = p.accounting
    assert formats(server)[0] == "json_schema" and set(formats(server)[1:]) == {"json_object_schema"}
    assert totals["llm_moves"] > 0 and totals["fallback_moves"] == 0
    assert totals["parse_failures"] == totals["illegal_replies"] == 0
    assert totals["modes"] == {"json_object_schema": totals["attempts"]} and p.mode == "json_object_schema"


def test_the_form_a_server_took_is_where_its_later_players_start():
    with FakeOpenAIServer(llama_cpp_player(), one_at_a_time=True) as server:
        act(llm(server), SplendorGame(2, seed=1))
        later = llm(server, temperature=0.5)  # another player of the same model and server: no refusal
        act(later, SplendorGame(2, seed=2))
        assert formats(server) == ["json_schema", "json_object_schema", "json_object_schema"]
        act(llm(server, model="other"), SplendorGame(2, seed=3))  # another model is asked from the top
        assert formats(server)[3:] == ["json_schema", "json_object_schema"]
    assert later.moves[0].mode == "json_object_schema"


def test_players_in_threads_find_the_form_together():
    with FakeOpenAIServer(llama_cpp_player(seed=5, delay_s=0.01), one_at_a_time=True) as server:
        players = [llm(server, concurrency=4) for _ in range(4)]
        threads = [threading.Thread(target=act, args=(p, SplendorGame(2, seed=i))) for i, p in enumerate(players)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    refused = formats(server).count("json_schema")
    assert 1 <= refused <= 4 and formats(server).count("json_object_schema") == 4
    assert all(p.moves[0].mode == "json_object_schema" and p.moves[0].source == "llm" for p in players)


# --- the defaults against a local server ----------------------------------------------------------------
def test_a_local_server_gets_one_request_at_a_time_and_time_to_answer_unless_the_spec_says_otherwise(monkeypatch):
    monkeypatch.setenv("TABLETOP_LLM_API_KEY", "sk-test")  # the remote server's key
    local = make_policy("llm:base_url=http://127.0.0.1:9/v1", game="splendor", seed=0)
    assert (local.timeout, local.concurrency, local.settings["server_defaults"]) == (600.0, 1, "local")
    remote = make_policy("llm:base_url=https://llm.invalid/v1", game="splendor", seed=0)
    assert (remote.timeout, remote.concurrency, remote.settings["server_defaults"]) == (60.0, 8, "remote")
    given = make_policy("llm:base_url=http://127.0.0.1:9/v1,timeout=30,concurrency=4", game="splendor", seed=0)
    assert (given.timeout, given.concurrency, given.settings["server_defaults"]) == (30.0, 4, None)
    tools = make_policy("llm:base_url=http://127.0.0.1:9/v1", game="space_conquest", seed=0)
    assert (tools.timeout, tools.concurrency, tools.settings["server_defaults"]) == (600.0, 1, "local")


def test_llm_match_with_the_defaults_plays_a_one_at_a_time_local_server_one_request_at_a_time(tmp_path, capsys):
    with FakeOpenAIServer(llama_cpp_player(seed=6), one_at_a_time=True) as server:
        specs = [parse_spec(f"llm:model={model},base_url={server.base_url}", "splendor").text for model in "ab"]
        status = main(["llm-match", "splendor", "--p0", specs[0], "--p1", specs[1], "--games", "2",
                       "--out", str(tmp_path)])  # --jobs 4 by default: both games at once
    assert status == 0, capsys.readouterr().err
    assert server.max_in_flight == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    for spec in specs:
        acc = summary["llm"][spec]
        assert acc["modes"] == {"json_object_schema": acc["attempts"]} and acc["fallback_moves"] == 0
        assert acc["settings"]["timeout"] == 600.0 and acc["settings"]["concurrency"] == 1
        assert acc["settings"]["server_defaults"] == "local"
    notes = [n for r in load_games(tmp_path) for n in r["llm_notes"] if n is not None and n["source"] == "llm"]
    assert notes and {n["mode"] for n in notes} == {"json_object_schema"}
    assert 2 <= formats(server).count("json_schema") <= 4  # each model refused once per game at most


def test_a_timeout_on_a_local_server_is_said_at_once_and_sent_again_once_at_most(caplog):
    with FakeOpenAIServer(one_at_a_time=True) as server:
        server.push(Answer.move(0, delay_s=3.0), Answer.move(1, delay_s=3.0))  # each slower than the deadline
        p = llm(server, timeout=0.4, backoff=0.001)  # net_retries=6: a remote server would be asked 7 times
        with caplog.at_level(logging.WARNING, logger="tabletop_rl.agents.llm.client"):
            with pytest.raises(LLMUnavailableError, match="2 attempts timed out, last: request timed out after "
                                                          "0.4 s; not sent again to a local server"):
                act(p, SplendorGame(2, seed=1))
        assert len(server.requests) == 2
        assert server.in_flight == 2  # still computing the reply given up, and the copy sent after it waits
    assert [r.getMessage() for r in caplog.records] == [
        f"{server.base_url} failed: request timed out after 0.4 s (sent once more, not again after another timeout: "
        "a local server may still be computing the reply given up, and what is sent next waits behind it; raise "
        "timeout=, lower concurrency= or max_tokens=)"]
