"""Server faults and the API key, with the real ``openai`` SDK against the loopback fake server
(tests/helpers/fake_openai_server.py): a body that is not JSON under HTTP 200 is a server fault (retried,
counted, a void match when it persists, never a crash); a provider's key from the environment goes only to
that provider's host; an unreachable server is named, with the reason, after the first failed attempt."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from extra_skips import needs

needs("openai")

from fake_openai_server import Answer, FakeOpenAIServer, legal_move_player  # noqa: E402
from tabletop_rl.agents import make_policy, parse_spec  # noqa: E402
from tabletop_rl.agents.llm.client import (  # noqa: E402
    ChatClient,
    ChatRequest,
    LLMUnavailableError,
    OpenAIBackend,
    RetrySettings,
    find_api_key,
)
from tabletop_rl.agents.llm.policy import LLMPolicy  # noqa: E402
from tabletop_rl.arena import load_games, run_arena  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402

KEY_VARS = ("TABLETOP_LLM_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "MY_LOCAL_KEY")
OPENROUTER_SECRET = "sk-or-v1-OPENROUTER-SECRET"
OPENAI_SECRET = "sk-proj-OPENAI-SECRET"
#: HTTP 200 bodies that are not a JSON document: a proxy's error page, a reply cut off mid-stream, garbage.
NOT_JSON = [
    Answer.raw_body("<html><body>502 Bad Gateway</body></html>", "text/html"),
    Answer.raw_body('{"id": "cmpl-1", "choices": [{"index": 0, "message": {"role": "assis'),
    Answer.raw_body("upstream connect error or disconnect/reset before headers"),
]
NOT_JSON_IDS = ["html-page", "cut-off-json", "plain-text-as-json"]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def llm(server: FakeOpenAIServer, **options: object) -> LLMPolicy:
    options = {"backoff": 0.001, "timeout": 5.0, **options}
    spec = "llm:model=fake-model,base_url=" + server.base_url + "".join(f",{k}={v}" for k, v in options.items())
    p = make_policy(spec, game="splendor", seed=0)
    assert isinstance(p, LLMPolicy)
    return p


def act(p: LLMPolicy, game: SplendorGame) -> int:
    return p.act(None, game.legal_mask(), game.policy_info(game.current_player))


def arena_spec(server: FakeOpenAIServer, **options: object) -> str:
    extra = "".join(f",{k}={v}" for k, v in {"backoff": 0.001, **options}.items())
    return parse_spec(f"llm:model=fake,base_url={server.base_url}{extra}", "splendor").text


# --- 1. a body that is not JSON under HTTP 200 ------------------------------------------------------
@pytest.mark.parametrize("answer", NOT_JSON, ids=NOT_JSON_IDS)
def test_a_non_json_http_200_is_retried_and_counted(server, answer):
    server.push(answer, answer, Answer.move(1))
    p = llm(server)
    assert act(p, SplendorGame(2, seed=1)) == 1
    assert len(server.requests) == 3
    assert p.moves[0].network_retries == 2 and p.moves[0].attempts == 1 and p.accounting["network_retries"] == 2


@pytest.mark.parametrize("answer", NOT_JSON, ids=NOT_JSON_IDS)
def test_a_non_json_http_200_that_persists_makes_the_server_unavailable(server, answer):
    server.responder = lambda request: answer
    client = ChatClient(OpenAIBackend(server.base_url, api_key="none"), server.base_url,
                        retry=RetrySettings(retries=2, backoff_s=0.001))
    with pytest.raises(LLMUnavailableError, match=r"3 attempts failed, last: HTTP 200 with a body that is not JSON"):
        client.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "go"}]))
    assert len(server.requests) == 3


def test_arena_a_non_json_http_200_that_persists_gives_void_matches_not_crashes(tmp_path):
    with FakeOpenAIServer(lambda request: Answer.raw_body("<html>502 Bad Gateway</html>")) as server:
        llm_spec = arena_spec(server, net_retries=1)
        summary = run_arena(players=[llm_spec, "random"], games=2, jobs=1, out=tmp_path, progress=False)
    assert summary["void"] == 2 and summary["crashed"] == 0 and summary["games"] == 0
    assert load_games(tmp_path) == []  # void matches are not written: --resume plays them again
    # every match was tried 1 + VOID_RERUNS times, each with 1 + net_retries attempts
    assert len(server.requests) == 2 * 3 * 2


def test_arena_a_transient_non_json_http_200_is_retried_and_accounted(tmp_path):
    with FakeOpenAIServer(legal_move_player(5)) as server:
        server.push(Answer.raw_body("<html>502 Bad Gateway</html>"), Answer.raw_body('{"choices": ['))
        llm_spec = arena_spec(server)
        summary = run_arena(players=[llm_spec, "random"], games=2, jobs=1, out=tmp_path, progress=False,
                            max_plies=40)
    records = load_games(tmp_path)
    assert len(records) == 2 and summary["crashed"] == 0 and summary["void"] == 0
    assert all(r["error"] is None and "void_reruns" not in r for r in records)
    retries = [acc["network_retries"] for r in sorted(records, key=lambda r: r["index"]) for acc in r["llm"]
               if acc is not None]
    assert retries == [2, 0]
    assert summary["llm"][llm_spec]["network_retries"] == 2
    assert summary["llm"][llm_spec]["attempts"] == len(server.requests) - 2


# --- 2. which server gets which key -------------------------------------------------------------------
def test_a_provider_key_from_the_environment_is_not_sent_to_another_server(server, no_keys):
    no_keys.setenv("OPENROUTER_API_KEY", OPENROUTER_SECRET)
    no_keys.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    server.push(Answer.move(0))
    act(llm(server), SplendorGame(2, seed=1))
    sent = server.authorizations
    assert len(sent) == 1 and sent[0] is not None
    assert OPENROUTER_SECRET not in sent[0] and OPENAI_SECRET not in sent[0]


def test_the_key_named_by_api_key_env_is_sent_to_the_configured_server(server, no_keys):
    no_keys.setenv("OPENROUTER_API_KEY", OPENROUTER_SECRET)
    no_keys.setenv("MY_LOCAL_KEY", "sk-local-123")
    server.push(Answer.move(0))
    act(llm(server, api_key_env="MY_LOCAL_KEY"), SplendorGame(2, seed=1))
    assert server.authorizations == ["Bearer sk-local-123"]


def test_the_projects_own_variable_and_an_explicit_key_go_to_the_configured_server(server, no_keys):
    no_keys.setenv("OPENROUTER_API_KEY", OPENROUTER_SECRET)
    no_keys.setenv("TABLETOP_LLM_API_KEY", "sk-tabletop-456")
    server.push(Answer.move(0), Answer.move(0))
    act(llm(server), SplendorGame(2, seed=1))
    p = LLMPolicy(model="fake-model", base_url=server.base_url, api_key="sk-given-789", backoff=0.001)
    act(p, SplendorGame(2, seed=1))
    assert server.authorizations == ["Bearer sk-tabletop-456", "Bearer sk-given-789"]


@pytest.mark.parametrize("base_url, expected", [
    ("https://openrouter.ai/api/v1", OPENROUTER_SECRET),
    ("https://OpenRouter.ai/api/v1/", OPENROUTER_SECRET),
    ("https://api.openai.com/v1", OPENAI_SECRET),
    ("http://127.0.0.1:8080/v1", None),
    ("https://llm.example.com/v1", None),
    ("https://openrouter.ai.evil.example/v1", None),
    ("https://api.openai.com.evil.example/v1", None),
    ("https://evil.example/openrouter.ai/api/v1", None),
    ("https://openrouter.ai@evil.example/api/v1", None),
])
def test_each_provider_key_goes_only_to_its_own_host(no_keys, base_url, expected):
    no_keys.setenv("OPENROUTER_API_KEY", OPENROUTER_SECRET)
    no_keys.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    assert find_api_key(base_url=base_url) == expected
    no_keys.setenv("TABLETOP_LLM_API_KEY", "sk-tabletop")
    assert find_api_key(base_url=base_url) == "sk-tabletop"  # the user's explicit choice, for any server
    no_keys.setenv("MY_LOCAL_KEY", "sk-named")
    assert find_api_key(env_var="MY_LOCAL_KEY", base_url=base_url) == "sk-named"
    assert find_api_key("sk-given", "MY_LOCAL_KEY", base_url=base_url) == "sk-given"


def test_a_remote_server_without_a_key_of_its_own_is_a_clear_error(no_keys):
    no_keys.setenv("OPENROUTER_API_KEY", OPENROUTER_SECRET)
    with pytest.raises(ValueError, match=r"^no API key for https://llm\.example\.com/v1: set TABLETOP_LLM_API_KEY "
                                         r"or name the key's variable with api_key_env=NAME"):
        make_policy("llm:base_url=https://llm.example.com/v1", game="splendor")
    with pytest.raises(ValueError, match=r"^no API key for https://api\.openai\.com/v1: set one of MY_LOCAL_KEY, "
                                         r"TABLETOP_LLM_API_KEY, OPENAI_API_KEY \(or api_key_env=NAME\)"):
        make_policy("llm:base_url=https://api.openai.com/v1,api_key_env=MY_LOCAL_KEY", game="splendor")


# --- 3. an unreachable server is named after the first failed attempt -------------------------------------
@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but never listened on: a connection to it is refused (and no one else gets it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def test_an_unreachable_server_is_named_once_per_request_with_the_reason(closed_port, caplog):
    base_url = f"http://127.0.0.1:{closed_port}/v1"
    sleeps: list[float] = []
    client = ChatClient(OpenAIBackend(base_url, api_key="none"), base_url, retry=RetrySettings(retries=6),
                        sleep=sleeps.append)
    with caplog.at_level(logging.WARNING, logger="tabletop_rl.agents.llm.client"):
        with pytest.raises(LLMUnavailableError, match="7 attempts failed, last: connection error"):
            client.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "go"}], timeout_s=2.0))
    assert len(sleeps) == 6
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot connect to {base_url}: connection refused (retry 1/6)"]


def test_a_failing_server_is_named_with_its_status(server, caplog):
    server.push(Answer.error(503, "overloaded"), Answer.raw_body("<html>oops</html>", "text/html"), Answer.move(0))
    with caplog.at_level(logging.WARNING, logger="tabletop_rl.agents.llm.client"):
        act(llm(server, net_retries=3), SplendorGame(2, seed=1))
    assert [r.getMessage() for r in caplog.records] == [f"{server.base_url} failed: HTTP 503: overloaded (retry 1/3)"]


COMMAND = [shutil.which("tabletop")] if shutil.which("tabletop") else [sys.executable, "-m", "tabletop_rl.cli"]


def test_llm_match_against_an_unreachable_server_says_so_on_stderr(closed_port, tmp_path):
    base_url = f"http://127.0.0.1:{closed_port}/v1"
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    result = subprocess.run(
        [*COMMAND, "llm-match", "splendor", "--p0", f"llm:model=x,base_url={base_url},net_retries=1,backoff=0.01,"
         "timeout=2", "--p1", "greedy", "--games", "2", "--jobs", "1", "--out", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=120, env=env)
    message = f"cannot connect to {base_url}: connection refused (retry 1/1)"
    assert message in result.stderr, result.stderr
    # 2 games, each played 1 + VOID_RERUNS times; each time the first request fails once, named once
    assert result.stderr.count(message) == 6
    assert "Traceback" not in result.stderr
    # no game could be played: the command says so and fails, naming how to play the void games again
    assert result.returncode == 1, result.stderr
    assert "no game could be played: 2 void match(es)" in result.stderr and "--resume" in result.stderr
