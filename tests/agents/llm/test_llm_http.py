"""The real ``openai`` SDK against a loopback OpenAI-compatible server (tests/helpers/fake_openai_server.py):
rate limits with Retry-After, server errors, timeouts, errors inside HTTP 200, truncated replies,
refused requests, key redaction, the per-server concurrency limit, and a full game against random."""

from __future__ import annotations

import json
import threading

import pytest

from extra_skips import needs

needs("openai")

from fake_openai_server import Answer, FakeOpenAIServer, legal_move_player  # noqa: E402
from tabletop_rl.agents import make_policy  # noqa: E402
from tabletop_rl.agents.llm.client import (  # noqa: E402
    ChatClient,
    ChatRequest,
    FatalLLMError,
    LLMUnavailableError,
    OpenAIBackend,
    RetrySettings,
)
from tabletop_rl.agents.llm.policy import LLMPolicy  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402

SECRET = "sk-test-0123456789-SECRET"


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def llm(server: FakeOpenAIServer, sleeps: list[float] | None = None, **options) -> LLMPolicy:
    """A policy on the loopback server with tiny backoffs; ``sleeps`` collects the waits instead of waiting."""
    options = {"backoff": 0.001, "timeout": 5.0, **options}
    spec = "llm:model=fake-model,base_url=" + server.base_url + "".join(f",{k}={v}" for k, v in options.items())
    p = make_policy(spec, game="splendor", seed=0)
    if sleeps is not None:
        p.client._sleep = sleeps.append
    return p


def act(p, game: SplendorGame) -> int:
    return p.act(None, game.legal_mask(), game.policy_info(game.current_player))


def test_rate_limit_waits_for_retry_after_then_succeeds(server):
    server.push(Answer.error(429, "rate limited", {"Retry-After": "7"}), Answer.move(0))
    sleeps: list[float] = []
    p = llm(server, sleeps)
    assert act(p, SplendorGame(2, seed=1)) == 0
    assert sleeps == [7.0] and len(server.requests) == 2
    assert p.moves[0].network_retries == 1 and p.moves[0].attempts == 1


def test_server_errors_and_errors_inside_http_200_are_retried(server):
    server.push(Answer.error(500, "boom"), Answer.error(503, "busy"), Answer.error_in_200(502, "provider down"),
                Answer.move(1))
    p = llm(server)
    assert act(p, SplendorGame(2, seed=1)) == 1
    assert len(server.requests) == 4 and p.accounting["network_retries"] == 3


def test_a_slow_server_times_out_and_is_retried(server):
    server.push(Answer.move(5, delay_s=1.0), Answer.move(2))
    p = llm(server, timeout=0.2)
    assert act(p, SplendorGame(2, seed=1)) == 2
    assert p.moves[0].network_retries == 1


def test_a_server_that_keeps_failing_is_unavailable(server):
    server.push(*(Answer.error(503, "down") for _ in range(3)))
    with pytest.raises(LLMUnavailableError, match="3 attempts failed, last: HTTP 503: down"):
        act(llm(server, net_retries=2), SplendorGame(2, seed=1))
    assert len(server.requests) == 3  # the SDK itself retried nothing


@pytest.mark.parametrize("answer", [Answer.error(401, "invalid key"), Answer.error(402, "insufficient credits"),
                                    Answer.error(404, "no such model"), Answer.error_in_200(403, "forbidden")])
def test_refused_requests_are_not_retried_and_stop_with_the_reason(server, answer):
    server.push(answer)
    with pytest.raises(FatalLLMError, match=answer.body["error"]["message"]):
        act(llm(server), SplendorGame(2, seed=1))
    assert len(server.requests) == 1


def test_the_api_key_is_sent_but_never_shown(server, monkeypatch):
    monkeypatch.setenv("MY_SERVER_KEY", SECRET)  # a provider's variable would not go to a loopback server
    server.push(Answer.move(0), Answer.error(401, f"Incorrect API key provided: {SECRET}"))
    p = llm(server, api_key_env="MY_SERVER_KEY")
    game = SplendorGame(2, seed=1)
    game.step(act(p, game))
    game.step(game.legal_actions()[0])
    with pytest.raises(FatalLLMError) as err:
        act(p, game)
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    visible = json.dumps([str(err.value), p.name, p.accounting, [m.as_dict() for m in p.moves]])
    assert "Incorrect API key provided: ***" in visible and SECRET not in visible


def test_a_truncated_reply_is_counted_and_re_prompted(server):
    server.push(Answer.reply('{"reasoning": "Let me think about every card in', finish_reason="length"),
                Answer.move(3))
    p = llm(server)
    assert act(p, SplendorGame(2, seed=1)) == 3
    assert (p.moves[0].truncated, p.moves[0].parse_failures, p.moves[0].attempts) == (1, 0, 2)
    retry = server.requests[1]["body"]["messages"]
    assert retry[-2]["role"] == "assistant" and "cut off at the token limit" in retry[-1]["content"]


def test_usage_cost_and_token_details_are_read(server):
    usage = {"prompt_tokens": 900, "completion_tokens": 80, "total_tokens": 980, "cost": 0.00042,
             "completion_tokens_details": {"reasoning_tokens": 30}, "prompt_tokens_details": {"cached_tokens": 512}}
    server.push(Answer.reply(json.dumps({"reasoning": "r", "action": 0}), usage=usage))
    p = llm(server)
    act(p, SplendorGame(2, seed=1))
    record = p.moves[0]
    assert (record.prompt_tokens, record.completion_tokens, record.reasoning_tokens, record.cached_tokens) == \
        (900, 80, 30, 512)
    assert record.cost == pytest.approx(0.00042) and record.latency_s > 0


@pytest.mark.parametrize("usage, timings, cached", [
    ({}, {"cache_n": 700, "prompt_n": 200}, 700),  # llama.cpp before prompt_tokens_details
    ({"prompt_tokens_details": {"cached_tokens": 512}}, {"cache_n": 700}, 512),  # the OpenAI field comes first
    ({}, {"cache_n": -3}, 0), ({}, {"cache_n": "700"}, 0), ({}, {"cache_n": True}, 0), ({}, {"cache_n": 901}, 0),
    ({"prompt_tokens_details": {"cached_tokens": 10**12}}, None, 0), ({}, ["cache_n"], 0),
])
def test_a_servers_prompt_cache_hits_are_read_where_it_reports_them_and_checked(server, usage, timings, cached):
    answer = Answer.reply(json.dumps({"reasoning": "r", "action": 0}),
                          usage={"prompt_tokens": 900, "completion_tokens": 80, "total_tokens": 980, **usage})
    if timings is not None:
        answer.body["timings"] = timings
    server.push(answer)
    p = llm(server)
    act(p, SplendorGame(2, seed=1))
    assert (p.moves[0].prompt_tokens, p.moves[0].cached_tokens) == (900, cached)


@pytest.mark.parametrize("bad", [-1, 10**13, 2.5, [900]])
def test_token_counts_that_are_no_count_are_read_as_zero(server, bad):
    server.push(Answer.reply(json.dumps({"reasoning": "r", "action": 0}),
                             usage={"prompt_tokens": bad, "completion_tokens": bad, "total_tokens": 1}))
    p = llm(server)
    act(p, SplendorGame(2, seed=1))
    assert (p.moves[0].prompt_tokens, p.moves[0].completion_tokens) == (0, 0)


def test_a_server_without_json_schema_gets_the_schema_in_json_mode(server):
    server.push(Answer.error(400, "response_format type 'json_schema' is not supported"),
                Answer.reply('{"reasoning": "ok", "action": 4}'))
    p = llm(server)
    assert act(p, SplendorGame(2, seed=1)) == 4
    first, second = (r["body"]["response_format"] for r in server.requests)
    assert second == {"type": "json_object", "schema": first["json_schema"]["schema"]}
    assert p.moves[0].mode == "json_object_schema"


def test_requests_carry_the_settings_and_the_schema(server):
    server.push(Answer.move(0))
    p = llm(server, temperature=0.7, max_tokens=321)
    p.extra_body = {"provider": {"sort": "price"}}
    game = SplendorGame(2, seed=1)
    act(p, game)
    body = server.requests[0]["body"]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("fake-model", 0.7, 321)
    assert body["provider"] == {"sort": "price"}
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["action"]["enum"] == game.legal_actions()


def test_concurrent_games_respect_the_per_server_limit():
    with FakeOpenAIServer(lambda request: Answer.move(0, delay_s=0.05)) as server:
        backend = OpenAIBackend(server.base_url, api_key="none")
        client = ChatClient(backend, server.base_url, concurrency=2, retry=RetrySettings(retries=0))
        request = ChatRequest(model="m", messages=[{"role": "user", "content": "go"}])
        threads = [threading.Thread(target=client.complete, args=(request,)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(server.requests) == 6 and server.max_in_flight == 2


def test_requests_go_through_the_proxy_the_environment_names(server, monkeypatch):
    for name in ("NO_PROXY", "ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.base_url.removesuffix("/v1"))  # the fake server as a forward proxy
    server.push(Answer.move(1))
    base_url = "http://llm.invalid/v1"  # a name that never resolves: only the proxy can reach it
    client = ChatClient(OpenAIBackend(base_url, api_key="none"), base_url, retry=RetrySettings(retries=0))
    assert client.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "go"}])).text
    assert server.requests[0]["headers"]["host"] == "llm.invalid"


def test_a_full_game_against_random_through_the_sdk():
    with FakeOpenAIServer(legal_move_player(seed=7)) as server:
        p = llm(server)
        opponent = make_policy("random", game="splendor", seed=3)
        game = SplendorGame(2, seed=5)
        decisions = 0
        while not game.is_over:
            if game.current_player == 0:
                decisions += 1
                game.step(act(p, game))
            else:
                game.step(act(opponent, game))
        totals = p.accounting
        assert totals["moves"] == decisions and totals["llm_moves"] + totals["forced_moves"] == decisions
        assert totals["attempts"] == len(server.requests) == totals["llm_moves"]
        assert totals["clean"] and totals["parse_failures"] == totals["illegal_replies"] == 0
        assert not game.is_truncated and game.winners
