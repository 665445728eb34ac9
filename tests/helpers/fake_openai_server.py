"""A loopback OpenAI-compatible chat server for tests (stdlib ``http.server`` in a thread).

Each request is answered by the next scripted ``Answer`` (``server.push(...)``), or, when the script is
empty, by ``responder(request_json)``. The default responder plays: it picks a move from the
``enum`` of legal ids that ``legal_list=true`` puts in the JSON schema. Requests are kept in
``server.requests`` (body and headers, names lower-cased) for assertions; ``server.authorizations`` lists
the ``Authorization`` header of each (``None`` where a request had none). ``Answer.raw_body(text, content_type)``
sends a body as it is, e.g. an HTML page or half a JSON document under HTTP 200. Faults of size and time:
``Answer.huge_move(n)`` sends a reply with ``n`` bytes of reasoning in pieces (never held whole), and
``Answer.dripping(answer, every_s)`` sends an answer one byte at a time; ``server.bytes_sent`` counts what the
clients took before they hung up.

Like llama-cpp-python's server (``python -m llama_cpp.server``): ``FakeOpenAIServer(one_at_a_time=True)`` computes
one answer at a time (its delay included), to the end even when the client has hung up, while the requests after it
wait (``server.max_in_flight`` counts them too); ``llama_cpp_player()`` answers a ``json_schema`` response format with
that server's HTTP 500, keeps to a ``{"type": "json_object", "schema": ...}`` one, and without a schema writes what a
small model wrote unconstrained (nothing usable).

>>> with FakeOpenAIServer() as server:
...     server.push(Answer.error(503, "busy"))
...     len(server.script)
1
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import random
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Stands in a body for ``Answer.fill`` bytes of ``x``.
FILL = "<fill>"
#: Bytes written at once when a body is sent in pieces.
PIECE_BYTES = 64 * 1024


@dataclass
class Answer:
    """One HTTP answer: status, headers, a JSON body (or ``raw`` text or bytes sent as they are), and a delay before
    it is sent. ``fill`` bytes of ``x`` take the place of ``FILL`` in the body; ``drip_s`` > 0 sends the answer one byte
    every ``drip_s`` seconds: all of it, or from the body on when ``drip_head`` is false."""

    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: str | bytes | None = None
    fill: int = 0
    drip_s: float = 0.0
    drip_head: bool = True

    @classmethod
    def reply(cls, text: str, finish_reason: str = "stop", usage: dict[str, Any] | None = None,
              delay_s: float = 0.0) -> Answer:
        """A chat completion whose message content is ``text``."""
        body = {"id": "cmpl-test", "object": "chat.completion", "created": 0, "model": "fake-model",
                "choices": [{"index": 0, "finish_reason": finish_reason,
                             "message": {"role": "assistant", "content": text}}],
                "usage": usage or {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
        return cls(200, body, delay_s=delay_s)

    @classmethod
    def calls(cls, *calls: tuple[str, Any], text: str | None = None, **kwargs: Any) -> Answer:
        """A chat completion asking for function calls ``(name, arguments)``; arguments that are not
        a string are sent as their JSON (a string goes as it is, malformed or not)."""
        answer = cls.reply("", finish_reason="tool_calls", **kwargs)
        parts = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                 for i, (name, args) in enumerate(calls)]
        answer.body["choices"][0]["message"].update(content=text, tool_calls=parts)
        return answer

    @classmethod
    def move(cls, action: Any, reasoning: str = "scripted", **kwargs: Any) -> Answer:
        return cls.reply(json.dumps({"reasoning": reasoning, "action": action}), **kwargs)

    @classmethod
    def huge_move(cls, reasoning_bytes: int, action: Any = 1) -> Answer:
        """A move whose reasoning is ``reasoning_bytes`` of ``x``, sent in pieces (the server never holds it whole)."""
        return dataclasses.replace(cls.move(action, reasoning=FILL), fill=reasoning_bytes)

    @classmethod
    def dripping(cls, answer: Answer, every_s: float, head_at_once: bool = False) -> Answer:
        """``answer`` sent one byte every ``every_s`` seconds: all of it, or the body only (``head_at_once``); it
        stops when the client hangs up."""
        return dataclasses.replace(answer, drip_s=every_s, drip_head=not head_at_once)

    @classmethod
    def error(cls, status: int, message: str, headers: dict[str, str] | None = None) -> Answer:
        return cls(status, {"error": {"message": message, "type": "test", "code": status}}, headers or {})

    @classmethod
    def raw_body(cls, text: str, content_type: str = "application/json", status: int = 200) -> Answer:
        """``text`` sent as the body as it is, under ``content_type``: a body that is not JSON, e.g. a proxy's
        HTML error page or a reply cut off mid-stream, with HTTP 200."""
        return cls(status, headers={"Content-Type": content_type}, raw=text)

    @classmethod
    def error_in_200(cls, code: int, message: str) -> Answer:
        """An HTTP 200 whose body is an error (as OpenRouter sends when a provider fails mid-request)."""
        return cls(200, {"error": {"message": message, "code": code}})


def legal_ids(action_schema: dict[str, Any]) -> list[int]:
    """The legal move ids a listed ``action`` schema allows: its ``enum``, or its first alternative's where a
    reply may also give, with a move, the tokens to return after it."""
    return action_schema["enum"] if "enum" in action_schema else action_schema["anyOf"][0]["enum"]


def legal_move_player(seed: int = 0) -> Callable[[dict[str, Any]], Answer]:
    """A responder that picks uniformly among the legal ids in the request's JSON schema."""
    rng = random.Random(seed)

    def respond(request: dict[str, Any]) -> Answer:
        schema = request["response_format"]["json_schema"]["schema"]
        return Answer.move(rng.choice(legal_ids(schema["properties"]["action"])), "a random legal move")

    return respond


#: What llama-cpp-python's server answers (HTTP 500) to a response format other than text and json_object: the
#: request's validation error, caught by its route's catch-all handler (llama_cpp/server/errors.py).
LLAMA_CPP_FORMAT_ERROR = ("1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', 'response_format', "
                          "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': '{kind}', "
                          "'ctx': {{'expected': \"'text' or 'json_object'\"}}}}\n")


def llama_cpp_player(seed: int = 0, delay_s: float = 0.0) -> Callable[[dict[str, Any]], Answer]:
    """A responder like llama-cpp-python's server with a small model: HTTP 500 for a ``json_schema`` response format;
    a legal id from the schema of ``{"type": "json_object", "schema": ...}`` (the grammar keeps the model to it); JSON
    without an action in JSON mode without a schema, and prose without a final answer line in plain text (what the
    model wrote unconstrained). Each answer takes ``delay_s``."""
    rng = random.Random(seed)

    def respond(request: dict[str, Any]) -> Answer:
        response_format = request.get("response_format") or {"type": "text"}
        kind = response_format.get("type")
        if kind not in ("text", "json_object"):
            return Answer(500, {"error": {"message": LLAMA_CPP_FORMAT_ERROR.format(kind=kind),
                                          "type": "internal_server_error", "param": None, "code": None}})
        schema = response_format.get("schema")
        if schema is not None:
            return Answer.move(rng.choice(legal_ids(schema["properties"]["action"])), "kept to the schema",
                               delay_s=delay_s)
        text = '{"thought": "I like the red gems"}' if kind == "json_object" else "I like the red gems."
        return Answer.reply(text, delay_s=delay_s)

    return respond


class FakeOpenAIServer:
    """``with FakeOpenAIServer() as server: LLMPolicy(base_url=server.base_url, ...)``; ``one_at_a_time``: one answer
    computed at a time, as a llama.cpp server does."""

    def __init__(self, responder: Callable[[dict[str, Any]], Answer] | None = None, *,
                 one_at_a_time: bool = False) -> None:
        self.responder = responder or legal_move_player()
        self.script: collections.deque[Answer] = collections.deque()
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.bytes_sent = 0
        #: Seconds each request waited for the requests before it (``one_at_a_time``), in the order they were computed.
        self.queued_s: list[float] = []
        self._lock = threading.Lock()
        self._computing = threading.Lock() if one_at_a_time else contextlib.nullcontext()
        self._httpd = _Listener(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def authorizations(self) -> list[str | None]:
        """The ``Authorization`` header of each request so far, in order (``None`` where it had none)."""
        return [request["headers"].get("authorization") for request in self.requests]

    def push(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _sent(self, count: int) -> None:
        with self._lock:
            self.bytes_sent += count

    def _answer(self, request: dict[str, Any], headers: dict[str, str]) -> Answer:
        with self._lock:
            self.requests.append({"body": request, "headers": headers})
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            scripted = self.script.popleft() if self.script else None
        try:
            arrived = time.monotonic()
            with self._computing:  # the answer is computed whole, whether or not its client still waits
                self.queued_s.append(time.monotonic() - arrived)
                answer = scripted or self.responder(request)
                time.sleep(answer.delay_s)
            return answer
        finally:
            with self._lock:
                self.in_flight -= 1


class _Listener(ThreadingHTTPServer):
    """Queues up to 128 connections (the standard library's 5 resets the rest when many clients connect at once)."""

    request_queue_size = 128


def _handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            # the path alone, or the whole URL as a client sends it to a forward proxy (a proxy test)
            if urllib.parse.urlsplit(self.path).path.rstrip("/") != "/v1/chat/completions":
                self._send(Answer.error(404, f"no route {self.path}"))
                return
            length = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(length))
            self._send(server._answer(request, {k.lower(): v for k, v in self.headers.items()}))

        def _send(self, answer: Answer) -> None:
            data = answer.raw if answer.raw is not None else json.dumps(answer.body)
            head, _, tail = (data.encode() if isinstance(data, str) else data).partition(FILL.encode())
            pieces = [head, *_filler(answer.fill), tail]
            self.wfile = _Writer(self.wfile, server, answer.drip_s, dripping=answer.drip_s > 0 and answer.drip_head)
            try:
                self.send_response(answer.status)
                for key, value in {"Content-Type": "application/json", **answer.headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(head) + answer.fill + len(tail)))
                self.end_headers()
                self.wfile.dripping = answer.drip_s > 0
                for piece in pieces:
                    self.wfile.write(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a timeout test) or reading (a size test)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


def _filler(count: int) -> Iterator[bytes]:
    """``count`` bytes of ``x`` in pieces of at most ``PIECE_BYTES``."""
    for start in range(0, count, PIECE_BYTES):
        yield b"x" * min(PIECE_BYTES, count - start)


class _Writer:
    """The handler's socket writer, counting the bytes sent, and sending one byte every ``drip_s`` seconds while
    ``dripping``."""

    def __init__(self, raw: Any, server: FakeOpenAIServer, drip_s: float, dripping: bool) -> None:
        self._raw, self._server, self._drip_s, self.dripping = raw, server, drip_s, dripping

    def write(self, data: bytes) -> int:
        step = 1 if self.dripping else max(1, len(data))
        for start in range(0, len(data), step):
            if self.dripping:
                time.sleep(self._drip_s)
            self._raw.write(data[start:start + step])
            self._server._sent(min(step, len(data) - start))
        return len(data)

    def __getattr__(self, name: str) -> Any:  # flush, close, closed: the socket writer's
        return getattr(self._raw, name)
