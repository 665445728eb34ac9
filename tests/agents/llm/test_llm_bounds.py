"""Time and size bounds on what a server sends, with the real ``openai`` SDK against the loopback fake server
(tests/helpers/fake_openai_server.py): ``timeout`` is one deadline for a whole request however slowly the server
drips its reply, a reply over the byte limit or compressed is refused unread (a server fault, retried and
counted), and what a game records of a reply (reasoning, rejections, server errors) is cut to its bound."""

from __future__ import annotations

import gzip
import json
import logging
import time

import pytest

from extra_skips import needs

needs("openai")

from fake_openai_server import Answer, FakeOpenAIServer, legal_move_player  # noqa: E402
from tabletop_rl.agents import parse_spec  # noqa: E402
from tabletop_rl.agents.llm.client import (  # noqa: E402
    MAX_REPLY_BYTES,
    ChatClient,
    ChatRequest,
    LLMUnavailableError,
    OpenAIBackend,
    RetrySettings,
)
from tabletop_rl.arena import load_games, run_arena  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402
from test_llm_server_faults import act, llm  # noqa: E402

#: One byte every 0.1 s: a move's ~250-byte reply takes about 25 s to drip, its headers about 15 s more.
DRIP_EVERY_S = 0.1


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def one_try_client(server: FakeOpenAIServer) -> ChatClient:
    return ChatClient(OpenAIBackend(server.base_url, api_key="none"), server.base_url, retry=RetrySettings(retries=0))


def request(timeout_s: float = 5.0) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "go"}], timeout_s=timeout_s)


# --- one deadline per request -----------------------------------------------------------------------
@pytest.mark.parametrize("head_at_once", [False, True], ids=["headers-dripped", "body-dripped"])
def test_a_dripping_server_is_given_up_at_the_deadline(server, head_at_once):
    server.push(Answer.dripping(Answer.move(1), DRIP_EVERY_S, head_at_once=head_at_once))
    start = time.monotonic()
    with pytest.raises(LLMUnavailableError, match="last: request timed out"):
        one_try_client(server).complete(request(timeout_s=1.0))
    assert time.monotonic() - start < 10  # the 1 s deadline, with a generous margin (the drip lasts 25-40 s)


def test_a_request_given_up_at_its_deadline_is_a_retried_timeout(server):
    server.push(Answer.dripping(Answer.move(5), DRIP_EVERY_S, head_at_once=True), Answer.move(2))
    p = llm(server, timeout=1.0)
    start = time.monotonic()
    assert act(p, SplendorGame(2, seed=1)) == 2
    assert time.monotonic() - start < 10
    assert (p.moves[0].network_retries, p.moves[0].attempts, p.moves[0].parse_failures) == (1, 1, 0)


# --- bytes read --------------------------------------------------------------------------------------
def test_a_reply_over_the_limit_is_refused_without_reading_it_whole(server):
    server.push(Answer.huge_move(64 * MAX_REPLY_BYTES))
    with pytest.raises(LLMUnavailableError, match=f"last: the reply is over {MAX_REPLY_BYTES} bytes"):
        one_try_client(server).complete(request())
    # The client hung up after the limit: the server got rid of no more than its socket buffers took besides.
    assert server.bytes_sent < 32 * MAX_REPLY_BYTES


def test_a_reply_under_the_limit_is_read():
    assert MAX_REPLY_BYTES >= 1_000_000  # room for any reply a max_tokens of tens of thousands gives
    with FakeOpenAIServer() as server:
        server.push(Answer.huge_move(MAX_REPLY_BYTES // 2))
        reply = one_try_client(server).complete(request())
    assert len(reply.text) > MAX_REPLY_BYTES // 2


def test_a_huge_reply_is_a_retried_server_fault(server):
    server.push(Answer.huge_move(4_000_000), Answer.move(2))
    p = llm(server)
    assert act(p, SplendorGame(2, seed=1)) == 2
    assert (p.moves[0].network_retries, p.moves[0].attempts, p.moves[0].reasoning) == (1, 1, "scripted")


def test_replies_are_asked_uncompressed_and_a_compressed_one_is_refused(server):
    # 20 MB of reasoning in 20 kB of gzip: a body that would unpack to any size
    bomb = gzip.compress(json.dumps(Answer.move(1, reasoning="x" * 20_000_000).body).encode())
    server.push(Answer(headers={"Content-Encoding": "gzip"}, raw=bomb))
    with pytest.raises(LLMUnavailableError, match=r"last: the reply is compressed \(gzip\) though none was asked"):
        one_try_client(server).complete(request())
    assert server.requests[0]["headers"]["accept-encoding"] == "identity"


# --- what is recorded ----------------------------------------------------------------------------------
def test_a_server_error_message_is_cut_in_the_error_and_the_log(server, caplog):
    server.push(Answer.error(503, "busy " * 100_000))
    with caplog.at_level(logging.WARNING, logger="tabletop_rl.agents.llm.client"):
        with pytest.raises(LLMUnavailableError) as err:
            one_try_client(server).complete(request())
    assert "HTTP 503: busy busy" in str(err.value) and len(str(err.value)) < 1000
    assert len(caplog.records) == 1 and len(caplog.records[0].getMessage()) < 1000


def test_arena_records_and_logs_keep_the_reasoning_within_the_schema(tmp_path):
    def babbler(request: dict) -> Answer:
        move = legal_move_player()(request)
        reply = json.loads(move.body["choices"][0]["message"]["content"])
        return Answer.move(reply["action"], reasoning="why " * 50_000)  # 200 kB, under the byte limit

    with FakeOpenAIServer(babbler) as server:
        spec = parse_spec(f"llm:model=fake,base_url={server.base_url},backoff=0.001,reasoning_chars=300",
                          "splendor").text
        run_arena(players=[spec, "random"], games=1, jobs=1, out=tmp_path, progress=False, max_plies=20)
    [record] = load_games(tmp_path)
    reasonings = [note["reasoning"] for note in record["llm_notes"] if note is not None and note["reasoning"]]
    assert reasonings and all(r.startswith("why why") and len(r) < 300 + 100 for r in reasonings)
    assert sum(path.stat().st_size for path in tmp_path.rglob("*") if path.is_file()) < 1_000_000
