"""The best-card service as a user starts it: ``tabletop serve klaverjas --port 0`` in a subprocess on loopback,
reached through raw sockets and httpx: request bodies over the limit, startup, the docs' requests, optional
history and the request forms. Every wait has a deadline and every loop a bound."""

from __future__ import annotations

import itertools
import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from extra_skips import needs

httpx = needs("httpx")
needs("uvicorn")

_STARTUP_S = 180  # a cold numba cache compiles the kernels for a while on a busy machine
_URL_LINE = re.compile(r"^Klaverjas best-card service on (http://127\.0\.0\.1:(\d+)) \(docs: \1/docs\)$")
_LIMIT = 64 * 1024
EXAMPLE = {"hand": ["JH", "9H", "AC", "10C", "KS", "7D", "8D"],
           "table": [{"player": 2, "card": "AH"}, {"player": 3, "card": "7H"}],
           "history": [{"leader": 0, "plays": ["7S", "8S", "AS", "9S"], "winner": 2, "points": 11}],
           "trump": "H", "playerPosition": 0, "leaderPosition": 2, "requestId": "abc-123"}


@dataclass
class Service:
    process: subprocess.Popen
    url: str
    port: int
    log: Path
    log_at_startup: str  # what the service had logged when it printed its URL

    def events(self, name: str) -> list[dict]:
        lines = [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]
        return [line for line in lines if line.get("event") == name]

    def memory_kb(self, field: str) -> int:
        """``VmRSS``, ``VmHWM`` (the peak) ... of the service process, in kB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {field} in /proc/{self.process.pid}/status")

    def reset_peak(self) -> None:
        """Start VmHWM afresh (Linux: ``5`` into clear_refs), so that it shows the peak of what follows only."""
        try:
            Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")
        except OSError:
            pass  # then the peak since startup stands; the growth measured can only come out smaller


def _first_line(process: subprocess.Popen, deadline: float) -> str:
    """The first line the service prints on stdout, read without blocking past ``deadline``."""
    assert process.stdout is not None
    data = b""
    while b"\n" not in data and time.monotonic() < deadline and len(data) < 4096:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break  # the service exited
            data += chunk
    return data.decode(errors="replace").split("\n", 1)[0] if b"\n" in data else ""


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Iterator[Service]:
    log = tmp_path_factory.mktemp("klaverjas_service") / "service.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KLAVERJAS_")}  # the packaged model
    command = [sys.executable, "-m", "tabletop_rl.cli", "serve", "klaverjas", "--host", "127.0.0.1", "--port", "0"]
    with open(log, "w") as stderr:  # a file, not a pipe: the request log can never fill a pipe and stall it
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, env=env)
    try:
        line = _first_line(process, time.monotonic() + _STARTUP_S)
        match = _URL_LINE.match(line)
        assert match, f"startup line {line!r} does not name the URL; log: {log.read_text()[-2000:]}"
        yield Service(process, match.group(1), int(match.group(2)), log, log.read_text())
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="module")
def client(service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=30) as c:
        yield c


def _status(response: bytes) -> int:
    assert response.startswith(b"HTTP/1.1 "), response[:100]
    return int(response.split(b" ", 2)[1])


def _upload(port: int, head: bytes, body: Iterator[bytes], seconds: float = 20) -> tuple[bytes, int]:
    """Send ``head`` then the ``body`` pieces while reading whatever the server answers; stop when the answer is
    complete, the body is sent and answered, the server hangs up, or ``seconds`` pass. The answer and the body
    bytes sent."""
    deadline = time.monotonic() + seconds
    answer, sent, pending = b"", 0, b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head)
        sock.setblocking(False)
        pieces = iter(body)
        more = True
        while time.monotonic() < deadline:
            if not pending and more:
                pending = next(pieces, b"")
                more = bool(pending)
            readable, writable, _ = select.select([sock], [sock] if pending else [], [], 0.2)
            try:
                if readable:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break  # the server closed the connection
                    answer += chunk
                    if b"\r\n\r\n" in answer and b'"}' in answer:
                        break  # head and the JSON detail arrived
                if writable:
                    n = sock.send(pending)
                    pending, sent = pending[n:], sent + n
            except (BrokenPipeError, ConnectionResetError):
                break  # the server hung up on the rest of the body, as it should
    return answer, sent


def _head(extra: str) -> bytes:
    return (f"POST /v1/best-card HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}\r\n"
            ).encode()


# --- item 4: a body over the limit -----------------------------------------------------------------
def test_a_declared_length_over_the_limit_is_refused_before_any_body_arrives(service):
    answer, sent = _upload(service.port, _head("Content-Length: 300000000\r\n"), iter(()), seconds=10)
    assert _status(answer) == 413 and sent == 0
    assert b"Content-Length 300000000 is over the 65536-byte limit" in answer
    assert b"connection: close" in answer.lower()


def test_a_chunked_body_is_read_no_further_than_the_limit(service, client):
    """64 MB in 256 KB chunks: the service buffered it all before (RSS +200 MB for 96 MB); now it stops at 64 KB,
    answers 413 and hangs up, so most of the upload is never even sent."""
    total, piece = 64 << 20, 256 << 10
    chunk = b"%x\r\n" % piece + b"a" * piece + b"\r\n"
    chunks = itertools.chain(itertools.repeat(chunk, total // piece), [b"0\r\n\r\n"])  # then the last chunk
    service.reset_peak()
    before = service.memory_kb("VmRSS")
    answer, sent = _upload(service.port, _head("Transfer-Encoding: chunked\r\n"), chunks)
    grown_mb = (service.memory_kb("VmHWM") - before) / 1024
    assert _status(answer) == 413
    assert grown_mb < 16, f"the service grew by {grown_mb:.0f} MB for a 64 MB upload"
    assert sent < total // 2, f"{sent} of {total} bytes went out: the service read the body past the limit"
    assert b"over the 65536-byte limit" in answer
    assert client.get("/healthz").status_code == 200  # and it goes on serving


def test_a_chunked_body_under_the_limit_is_answered(service):
    body = json.dumps(EXAMPLE).encode()
    pieces = (b"%x\r\n" % len(part) + part + b"\r\n" for part in (body[:50], body[50:], b""))
    answer, _ = _upload(service.port, _head("Transfer-Encoding: chunked\r\n"), pieces)
    assert _status(answer) == 200 and b'"bestCard"' in answer


# --- item 20: startup, docs, history, forms, errors, logs ----------------------------------------------
def test_startup_warms_up_before_it_prints_the_url(service, client):
    warm = [json.loads(line) for line in service.log_at_startup.splitlines() if '"warm_up"' in line]
    assert warm and warm[0]["examples"] >= 2, service.log_at_startup[-1000:]
    reply = client.post("/v1/best-card", json=EXAMPLE)
    assert reply.status_code == 200 and reply.json()["bestCard"] in {"JH", "9H"}


def test_docs_page_needs_no_network_and_shows_the_examples(client):
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<script" not in page.text and "jsdelivr" not in page.text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text)
    assert "POST /v1/best-card" in page.text and "curl" in page.text and "bestCard" in page.text
    assert "413" in page.text and "/openapi.json" in page.text


def test_openapi_examples_are_requests_the_service_answers(client):
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    examples = schemas["BestCardRequest"]["examples"]
    assert len(examples) >= 2 and any("history" not in e for e in examples)
    assert schemas["BestCardResponse"]["examples"]
    for example in examples:
        reply = client.post("/v1/best-card", json=example)
        assert reply.status_code == 200, (example, reply.text)


def test_history_may_be_left_out_and_the_hand_size_gives_the_trick(client):
    """FR-2: four cards and no history is the fifth trick; the unseen cards may lie in any other hand."""
    body = {"hand": ["JH", "9H", "AC", "10C"], "table": [{"player": 2, "card": "AH"}, {"player": 3, "card": "7H"}],
            "trump": "H", "playerPosition": 0, "leaderPosition": 2, "allowFallback": False}
    reply = client.post("/v1/best-card", json=body)
    assert reply.status_code == 200, reply.text
    assert set(reply.json()["legalCards"]) == {"JH", "9H"}
    last = client.post("/v1/best-card", json={**body, "hand": ["AC"], "table": [], "leaderPosition": 0})
    assert last.status_code == 200 and last.json()["bestCard"] == "AC"
    given = client.post("/v1/best-card", json={**body, "history": []})  # given, it must fit the hand
    assert given.status_code == 422 and "must hold 8 cards, got 4" in given.json()["detail"]


def test_leader_comes_from_the_table_and_the_table_takes_bare_cards(client):
    leaderless = {k: v for k, v in EXAMPLE.items() if k != "leaderPosition"}
    bare = {**EXAMPLE, "table": ["AH", "7H"]}
    answers = [client.post("/v1/best-card", json=body).json() for body in (EXAMPLE, leaderless, bare)]
    assert answers[0] == answers[1] == answers[2]
    refused = client.post("/v1/best-card", json={**leaderless, "table": ["AH", "7H"]})
    assert refused.status_code == 400 and refused.json()["detail"].startswith("leaderPosition: required")


def test_cards_and_trump_in_either_case_are_the_same_request(client):
    def lower(value):
        if isinstance(value, dict):
            return {k: lower(v) if k in ("hand", "table", "history", "plays", "card", "trump") else v
                    for k, v in value.items()}
        if isinstance(value, list):
            return [lower(v) for v in value]
        return value.lower() if isinstance(value, str) else value

    assert lower(EXAMPLE)["trump"] == "h" and lower(EXAMPLE)["table"][0]["card"] == "ah"
    upper, lowered = (client.post("/v1/best-card", json=body) for body in (EXAMPLE, lower(EXAMPLE)))
    assert upper.status_code == lowered.status_code == 200 and upper.json() == lowered.json()


def test_invalid_json_says_where(client):
    reply = client.post("/v1/best-card", content=b'{"hand": ["JH", "9H"],\n  "trump": H}',
                        headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["detail"] == "body: invalid JSON at line 2 column 12: Expecting value"


def test_refused_requests_are_logged_cut_short(service, client):
    long_id = "x" * 20_000
    replies = [client.post("/v1/best-card", json={**EXAMPLE, "requestId": long_id}),
               client.post("/v1/best-card", json={**EXAMPLE, "hand": ["JH", "9H"], "requestId": "r-422"}),
               client.post("/v1/best-card", json={**EXAMPLE, "padding": "y" * 60_000})]
    assert [r.status_code for r in replies] == [400, 422, 400]
    assert _status(_upload(service.port, _head("Content-Length: 99999999\r\n"), iter(()), seconds=10)[0]) == 413
    assert all("\n" not in r.json()["detail"] and len(r.json()["detail"]) < 300 for r in replies)
    refused = service.events("refused")
    assert {line["status"] for line in refused} >= {400, 413, 422}
    assert any(line["requestId"] == "r-422" and line["input"]["hand"] == ["JH", "9H"] for line in refused)
    assert all(len(json.dumps(line)) < 2000 and "x" * 200 not in json.dumps(line) for line in refused)


def _curl_bodies(text: str) -> list[dict]:
    """The JSON bodies of the ``curl ... -d '{...}'`` examples in ``text``."""
    return [json.loads(body.replace("\n", " ")) for body in re.findall(r"-d '(\{.*?\})'", text, re.S)]


def test_the_written_request_examples_are_answered(client):
    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "klaverjas.md").read_text().split("## Best-card service", 1)[1].split("\n## ", 1)[0]
    module = (root / "src" / "tabletop_rl" / "ui" / "klaverjas_service.py").read_text().split('"""')[1]
    bodies = _curl_bodies(docs) + _curl_bodies(module)
    assert len(bodies) >= 3
    for body in bodies:
        reply = client.post("/v1/best-card", json=body)
        assert reply.status_code == 200, (body, reply.text)
