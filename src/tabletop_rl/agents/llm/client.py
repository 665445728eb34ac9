"""A game-agnostic chat client for OpenAI-compatible servers: one request in, one reply out, with
our own retry loop, a per-server concurrency limit and an optional on-disk response cache.

The seam between this module and HTTP is ``OpenAIBackend.complete``, the only place the ``openai``
SDK is called (with the SDK's own retries off), over HTTP that bounds each request (``transport.py``):
its ``timeout_s`` is one deadline for the whole request, and at most ``MAX_REPLY_BYTES`` are read.
Anything with a ``complete(request) -> ChatReply`` method that raises ``TransientLLMError`` /
``FatalLLMError`` can stand in for it, which is how the policy logic is tested without a network.

>>> class Echo:
...     def complete(self, request):
...         return ChatReply(text=request.messages[-1]["content"], finish_reason="stop")
>>> client = ChatClient(Echo(), "http://127.0.0.1:1/v1")
>>> client.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}])).text
'hi'
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from tabletop_rl.core.extras import missing_extra
from tabletop_rl.core.files import replace_file

__all__ = ["API_KEY_ENV", "DEFAULT_BASE_URL", "KEY_ENV_VARS", "MAX_REPLY_BYTES", "PROVIDER_KEY_HOSTS", "ChatBackend",
           "ChatClient", "ChatReply", "ChatRequest", "FatalLLMError", "LLMConnectionError", "LLMError",
           "LLMTimeoutError", "LLMUnavailableError", "OpenAIBackend", "ResponseCache", "RetrySettings", "ToolCall",
           "TransientLLMError", "Usage", "clip", "find_api_key", "is_loopback", "key_env_vars", "retry_after_seconds",
           "share_server_slots", "status_error"]

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
#: Set by ``tabletop llm-match --api-key``; looked at before the providers' variables. Like ``api_key=`` and
#: ``api_key_env=NAME`` it is the user's own choice, so its key goes to whatever server ``base_url`` names.
API_KEY_ENV = "TABLETOP_LLM_API_KEY"
#: A provider's variable, and the hosts its key may be sent to (each host or a subdomain of it): a key
#: exported for OpenRouter never goes to a local test server or to anyone else.
PROVIDER_KEY_HOSTS: dict[str, tuple[str, ...]] = {"OPENROUTER_API_KEY": ("openrouter.ai",),
                                                  "OPENAI_API_KEY": ("api.openai.com",)}
#: Where the API key is looked for, in order, when none is given (the providers' only for their own hosts).
KEY_ENV_VARS = (API_KEY_ENV, *PROVIDER_KEY_HOSTS)
#: Statuses worth asking again: timeout, conflict, rate limit (5xx are added in ``_is_transient_status``).
_TRANSIENT_STATUSES = frozenset({408, 409, 429})
#: A ``Retry-After`` longer than this is not waited out: the server is treated as unavailable.
_MAX_RETRY_AFTER_S = 300.0
#: Words by which a refusal (HTTP 400/422, or llama-cpp-python's 500 in ``status_error``) names the reply format asked
#: for: the request's ``response_format`` and its fields.
_FORMAT_WORDS = ("response_format", "json_schema", "json schema", "structured", "schema", "json_object")
#: Bytes read for one request at most (status line and headers included): far more than any reply a model
#: gives under ``max_tokens``; a larger one is refused unread past this.
MAX_REPLY_BYTES = 1 << 20
#: Characters of a body that is not JSON shown in the error (a proxy's error page says what went wrong).
_BODY_PREVIEW_CHARS = 120
#: Characters of a server's error message kept in an error (and so in logs and records).
_MESSAGE_CHARS = 500
#: The most tokens one reply's usage may count: far past any context window; a larger count is no count.
_MOST_TOKENS = 10**9
#: Says on stderr (Python's last-resort handler, when the application configures no logging) which server
#: failed and why, after a request's first failed attempt.
_log = logging.getLogger(__name__)


# --- requests and replies --------------------------------------------------------------------
@dataclass(frozen=True)
class ChatRequest:
    """One chat completion request (what is sent, and what the response cache is keyed by)."""

    model: str
    messages: list[dict[str, Any]]
    temperature: float = 0.2
    max_tokens: int = 1000
    response_format: dict[str, Any] | None = None
    timeout_s: float = 60.0  # for the whole request: connect, send and the whole reply
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    #: OpenAI function-calling schemas (``{"type": "function", "function": {...}}``) and the choice among them.
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None

    def cache_key(self, base_url: str) -> str:
        """sha256 of everything that shapes the reply (server, model, messages, sampling, format).

        >>> r = ChatRequest(model="m", messages=[{"role": "user", "content": "x"}])
        >>> r.cache_key("u") == replace(r, timeout_s=5.0).cache_key("u") != r.cache_key("v")
        True
        """
        shape = {"base_url": base_url, "model": self.model, "messages": self.messages,
                 "temperature": self.temperature, "max_tokens": self.max_tokens,
                 "response_format": self.response_format, "extra_body": dict(self.extra_body)}
        if self.tools is not None or self.tool_choice is not None:  # absent otherwise: older keys stay valid
            shape.update(tools=self.tools, tool_choice=self.tool_choice)
        text = json.dumps(shape, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Usage:
    """Tokens as the server reports them; ``cost`` only when it reports one (OpenRouter's ``usage.cost``)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True)
class ToolCall:
    """One function call the assistant asks for; ``arguments`` is the model's JSON text, unchecked."""

    id: str
    name: str
    arguments: str

    def as_message_part(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ChatReply:
    """The assistant's text and what it took: ``finish_reason`` ``"length"`` means cut off at ``max_tokens``.

    ``tool_calls`` are the function calls asked for (empty without ``tools``); ``latency_s`` is the time
    of the successful call; ``network_retries`` the failed calls before it; ``cached`` is True when it
    came from the response cache (no call made).
    """

    text: str
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    network_retries: int = 0
    cached: bool = False
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def assistant_message(self) -> dict[str, Any]:
        """The reply as the assistant message to append to the conversation (with its tool calls).

        >>> ChatReply("", tool_calls=(ToolCall("c1", "get_map", "{}"),)).assistant_message()["tool_calls"][0]["id"]
        'c1'
        """
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [call.as_message_part() for call in self.tool_calls]
        return message


# --- errors ------------------------------------------------------------------------------------
class LLMError(RuntimeError):
    """Base of the client's errors; messages never contain the API key."""


class TransientLLMError(LLMError):
    """A failure worth retrying (timeout, connection, 408/409/429/5xx, an error inside an HTTP 200)."""

    def __init__(self, message: str, status: int | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


class LLMTimeoutError(TransientLLMError):
    """A request not answered ``timeout_s`` seconds after it started (the server may still be computing it)."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"request timed out after {timeout_s:g} s")
        self.timeout_s = timeout_s


class LLMConnectionError(TransientLLMError):
    """No connection could be made (refused, unknown host, ...); ``reason`` says why, e.g. ``connection refused``."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"connection error: {reason}")
        self.reason = reason


class FatalLLMError(LLMError):
    """A request the server refuses for good (400/401/402/403/404/422 ...): retrying cannot help,
    so the match stops with this message."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def rejects_format(self) -> bool:
        """True when the refusal looks like the server not supporting the requested ``response_format``."""
        text = str(self).lower()
        return self.status in (400, 422, 500) and any(word in text for word in _FORMAT_WORDS)


class LLMUnavailableError(LLMError):
    """The server kept failing after every retry: an infrastructure failure (the arena voids the match)."""


def _is_transient_status(status: int) -> bool:
    """True for statuses worth retrying.

    >>> [_is_transient_status(s) for s in (429, 503, 400, 404)]
    [True, True, False, False]
    """
    return status in _TRANSIENT_STATUSES or status >= 500


def status_error(status: int, message: str, retry_after_s: float | None = None) -> LLMError:
    """The error for an HTTP status (or an error code inside an HTTP 200 body)."""
    text = f"HTTP {status}: {clip(message, _MESSAGE_CHARS)}"
    # llama.cpp's server answers an unsupported response_format with a 500 carrying a validation error:
    # a refusal of the request (which mode=auto steps down from), not a failure worth retrying.
    refused_format = "validation error" in message.lower() and "response_format" in message
    if _is_transient_status(status) and not refused_format:
        return TransientLLMError(text, status, retry_after_s)
    return FatalLLMError(text, status)


def clip(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a marker saying how many more there were: what records and
    logs keep of text a model or a server wrote.

    >>> clip("abcdef", 3), clip("abc", 3)
    ('abc [cut: 3 more characters]', 'abc')
    """
    return text if len(text) <= limit else f"{text[:limit]} [cut: {len(text) - limit} more characters]"


def _redact(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` replaced by ``***`` (an API key must never reach a log or a file).

    >>> _redact("bad key sk-123 given", "sk-123")
    'bad key *** given'
    """
    return text.replace(secret, "***") if secret else text


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asks us to wait: ``retry-after-ms``, or ``retry-after`` as seconds or an HTTP date.

    >>> retry_after_seconds({"retry-after": "2"}), retry_after_seconds({"retry-after-ms": "150"})
    (2.0, 0.15)
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000)
    text = lowered.get("retry-after")
    if text is None:
        return None
    seconds = _number(text)
    if seconds is None:
        try:
            seconds = email.utils.parsedate_to_datetime(text).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return max(0.0, seconds)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


# --- the SDK seam --------------------------------------------------------------------------------
class ChatBackend(Protocol):
    """Sends one request. Raises ``TransientLLMError`` or ``FatalLLMError``; never retries itself."""

    def complete(self, request: ChatRequest) -> ChatReply:
        ...


class OpenAIBackend:
    """The ``openai`` SDK against ``base_url`` (``max_retries=0``: retrying is ``ChatClient``'s job), over HTTP that
    gives each request one deadline and reads at most ``MAX_REPLY_BYTES`` (``transport.bounded_http_client``).

    ``OpenAIBackend("http://127.0.0.1:8080/v1", api_key="none").complete(request)``
    """

    def __init__(self, base_url: str, api_key: str, default_headers: Mapping[str, str] | None = None) -> None:
        try:
            import openai
        except ModuleNotFoundError:
            raise ValueError(missing_extra("openai", "an LLM player", "llm")) from None
        from tabletop_rl.agents.llm import transport  # needs httpx, which comes with openai

        self._openai = openai
        self._transport = transport
        self._secret = api_key
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0,
                                     default_headers=dict(default_headers or {}),
                                     http_client=transport.bounded_http_client(base_url))

    def complete(self, request: ChatRequest) -> ChatReply:
        kwargs: dict[str, Any] = {"model": request.model, "messages": request.messages,
                                  "temperature": request.temperature, "max_tokens": request.max_tokens,
                                  "timeout": request.timeout_s}
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        if request.extra_headers:
            kwargs["extra_headers"] = dict(request.extra_headers)
        if request.extra_body:
            kwargs["extra_body"] = dict(request.extra_body)
        if request.tools is not None:
            kwargs["tools"] = request.tools
        if request.tool_choice is not None:
            kwargs["tool_choice"] = request.tool_choice
        start = time.perf_counter()
        try:
            with self._transport.request_budget(request.timeout_s, MAX_REPLY_BYTES):
                response = self._client.chat.completions.create(**kwargs)
        except self._openai.APIError as e:
            raise self._translate(e, request.timeout_s) from None
        except json.JSONDecodeError as e:  # HTTP 200 under a JSON content type, but the body is not JSON
            raise _not_json(e.doc, self._secret) from None
        return _reply_of(response, time.perf_counter() - start, self._secret)

    def _translate(self, e: Exception, timeout_s: float) -> LLMError:
        openai = self._openai
        if isinstance(e, openai.APITimeoutError):
            return LLMTimeoutError(timeout_s)
        refused = next((c for c in _causes(e) if isinstance(c, self._transport.RefusedReplyError)), None)
        if refused is not None:  # a server fault, like a body that is not JSON
            return TransientLLMError(str(refused))
        if isinstance(e, openai.APIStatusError):
            message = _redact(_error_text(e.body) or str(e), self._secret)
            return status_error(e.status_code, message, retry_after_seconds(e.response.headers))
        return LLMConnectionError(_redact(_connection_reason(e), self._secret))


def _connection_reason(error: BaseException) -> str:
    """Why a connection failed, from the innermost OS error under the SDK's ``Connection error.``

    >>> outer = ConnectionError("Connection error.")
    >>> outer.__cause__ = ConnectionRefusedError(111, "Connection refused")
    >>> _connection_reason(outer)
    'connection refused'
    """
    seen = list(_causes(error))
    for cause in seen:
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror[0].lower() + cause.strerror[1:]
    text = str(seen[-1]) or str(error)
    return clip(text, _MESSAGE_CHARS) or type(seen[-1]).__name__


def _causes(error: BaseException) -> Iterator[BaseException]:
    """``error`` and the exceptions under it (its cause, or else its context), outermost first."""
    seen: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and cause not in seen:
        yield cause
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__


def _not_json(body: str, secret: str | None) -> TransientLLMError:
    """A server fault, retried like a 5xx: an HTTP 200 whose body is not JSON (a proxy's error page, a reply
    cut off mid-stream).

    >>> str(_not_json("<html>502 Bad Gateway</html>", None))
    "HTTP 200 with a body that is not JSON: '<html>502 Bad Gateway</html>'"
    """
    text = " ".join(body.split())
    preview = text[:_BODY_PREVIEW_CHARS] + ("..." if len(text) > _BODY_PREVIEW_CHARS else "")
    return TransientLLMError(_redact(f"HTTP 200 with a body that is not JSON: {preview!r}", secret))


def _error_text(body: object) -> str:
    """The human part of an error body (``{"error": {"message": ...}}`` or ``{"message": ...}``)."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return ""


def _reply_of(response: Any, latency_s: float, secret: str | None) -> ChatReply:
    """A ``ChatReply`` from the SDK's response; an error carried in an HTTP 200 body is raised."""
    if isinstance(response, str):  # the SDK hands over the text of a body sent under a content type not JSON
        raise _not_json(response, secret)
    extra = getattr(response, "model_extra", None) or {}
    choices = getattr(response, "choices", None)
    error = extra.get("error")
    if error is not None or not choices:
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and 400 <= code < 600 else 502
        message = _error_text({"error": error}) or "the reply has no choices"
        raise status_error(status, _redact(f"error inside an HTTP 200 reply: {message}", secret))
    choice = choices[0]
    if choice.finish_reason == "error":
        raise TransientLLMError("the server reported finish_reason 'error'")
    text = choice.message.content if choice.message is not None else None
    return ChatReply(text=text or "", finish_reason=choice.finish_reason,
                     usage=_usage_of(getattr(response, "usage", None), extra.get("timings")), latency_s=latency_s,
                     tool_calls=_tool_calls_of(choice.message))


def _tool_calls_of(message: Any) -> tuple[ToolCall, ...]:
    """The message's function calls (calls of other kinds, which we never offer, are left out)."""
    calls = getattr(message, "tool_calls", None) or ()
    return tuple(ToolCall(call.id, call.function.name, call.function.arguments or "")
                 for call in calls if getattr(call, "function", None) is not None)


def _usage_of(usage: Any, timings: Any) -> Usage:
    """The reply's ``usage``, each count checked (``_count``). The prompt's tokens served from the server's cache are
    OpenAI's ``usage.prompt_tokens_details.cached_tokens``, else llama.cpp's ``timings.cache_n`` (its server before
    it reported the former), and never more than the prompt's tokens."""
    if usage is None:
        return Usage()
    completion_details = getattr(usage, "completion_tokens_details", None)
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    if cached is None and isinstance(timings, dict):
        cached = timings.get("cache_n")
    prompt = _count(getattr(usage, "prompt_tokens", None))
    cost = (getattr(usage, "model_extra", None) or {}).get("cost")
    return Usage(prompt_tokens=prompt, completion_tokens=_count(getattr(usage, "completion_tokens", None)),
                 reasoning_tokens=_count(getattr(completion_details, "reasoning_tokens", None)),
                 cached_tokens=_count(cached, prompt),
                 cost=float(cost) if isinstance(cost, (int, float)) else None)


def _count(value: Any, most: int = _MOST_TOKENS) -> int:
    """A count of tokens as a server reported it: a whole number in 0..``most``, else 0 (what a server sends is
    untrusted, and a record sums these).

    >>> _count(512), _count(-1), _count("512"), _count(True), _count(512, most=100)
    (512, 0, 0, 0, 0)
    """
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most else 0


# --- response cache ----------------------------------------------------------------------------
class ResponseCache:
    """Replies on disk, one JSON file per request hash, so a re-run makes no calls and gets the same replies.

    >>> import tempfile
    >>> cache = ResponseCache(tempfile.mkdtemp())
    >>> cache.put("ab12", ChatReply("hello", "stop")); cache.get("ab12").text, cache.get("ff00")
    ('hello', None)
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatReply | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"response cache entry {path} is unreadable ({e}); delete it") from None
        return ChatReply(text=data["text"], finish_reason=data["finish_reason"], usage=Usage(**data["usage"]),
                         latency_s=data["latency_s"], cached=True,
                         tool_calls=tuple(ToolCall(**call) for call in data.get("tool_calls", ())))

    def put(self, key: str, reply: ChatReply) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"text": reply.text, "finish_reason": reply.finish_reason, "usage": asdict(reply.usage),
                "latency_s": reply.latency_s, "tool_calls": [asdict(call) for call in reply.tool_calls]}
        text = json.dumps(data)
        replace_file(path, lambda temp: temp.write_text(text))  # a concurrent reader never sees half a file


# --- per-server concurrency -------------------------------------------------------------------------
_SERVER_SLOTS: dict[str, threading.BoundedSemaphore] = {}
_SERVER_SLOTS_LOCK = threading.Lock()
#: The servers whose first timeout in this process was explained (what the server may still be doing, what to change).
_TIMEOUTS_EXPLAINED: set[str] = set()
_TIMEOUTS_EXPLAINED_LOCK = threading.Lock()


def _server_slots(base_url: str, limit: int) -> threading.BoundedSemaphore:
    """The semaphore shared by every client of ``base_url`` in this process (the first limit asked wins).

    >>> _server_slots("http://demo/v1", 4) is _server_slots("http://demo/v1", 8)
    True
    """
    if limit < 1:
        raise ValueError(f"concurrency must be at least 1, got {limit}")
    with _SERVER_SLOTS_LOCK:
        return _SERVER_SLOTS.setdefault(base_url.rstrip("/"), threading.BoundedSemaphore(limit))


def share_server_slots(base_url: str, slots: threading.BoundedSemaphore) -> None:
    """Make every client of ``base_url`` in this process take its requests' slots from ``slots`` (e.g. one
    backed by a limit shared across machines, ``arena/ray_backend.py``); call it before the first client."""
    with _SERVER_SLOTS_LOCK:
        _SERVER_SLOTS[base_url.rstrip("/")] = slots


# --- the retrying client --------------------------------------------------------------------------
@dataclass(frozen=True)
class RetrySettings:
    """Exponential backoff with jitter: wait ``backoff_s * 2**k`` (at most ``max_backoff_s``) times a
    random factor in [0.5, 1], and never less than a server's ``Retry-After``."""

    retries: int = 6
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0

    def delay(self, retry: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based).

        >>> RetrySettings(backoff_s=1.0).delay(3, 20.0, random.Random(0))
        20.0
        """
        wait = min(self.max_backoff_s, self.backoff_s * 2 ** retry) * rng.uniform(0.5, 1.0)
        return max(wait, retry_after_s or 0.0)


class ChatClient:
    """Sends requests through a backend with retries, the server's concurrency limit and the cache.

    A request that timed out is sent again like any other transient failure, except to a local (loopback) server:
    there it is sent once more at most, and a second timeout is ``LLMUnavailableError``, since such a server often
    computes one reply at a time and keeps computing the one given up, so every copy sent waits behind the ones
    before it. ``sleep`` is injectable so tests can see the waits without waiting them.
    """

    def __init__(self, backend: ChatBackend, base_url: str, *, retry: RetrySettings = RetrySettings(),
                 concurrency: int = 8, cache: ResponseCache | None = None,
                 sleep: Callable[[float], None] = time.sleep, seed: int | None = None) -> None:
        self.backend = backend
        self.base_url = base_url
        self.retry = retry
        self.cache = cache
        self._slots = _server_slots(base_url, concurrency)
        self.local = is_loopback(base_url)
        self._sleep = sleep
        self._rng = random.Random(seed)

    def complete(self, request: ChatRequest) -> ChatReply:
        """The reply, from the cache or the server. ``FatalLLMError`` at once for a refused request;
        ``LLMUnavailableError`` once the retries are spent."""
        key = request.cache_key(self.base_url) if self.cache is not None else ""
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        reply = self._with_retries(request)
        if self.cache is not None:
            self.cache.put(key, reply)
        return reply

    def _with_retries(self, request: ChatRequest) -> ChatReply:
        retries = self.retry.retries
        timeouts = 0
        for retry in range(retries + 1):
            try:
                with self._slots:
                    reply = self.backend.complete(request)
                return replace(reply, network_retries=retry)
            except TransientLLMError as e:
                error = e
            timed_out = isinstance(error, LLMTimeoutError)
            timeouts += timed_out
            waits_too_long = error.retry_after_s is not None and error.retry_after_s > _MAX_RETRY_AFTER_S
            if retry == 0 or (timed_out and timeouts == 1):
                self._say_first_failure(error, "not retried" if retry == retries or waits_too_long
                                        else f"retry {retry + 1}/{retries}")
            if retry == retries:
                break
            if self.local and timeouts == 2:
                raise LLMUnavailableError(
                    f"{self.base_url}: {timeouts} attempts timed out, last: {error}; not sent again to a local server, "
                    "which may still be computing the replies given up (raise timeout=, lower concurrency= or "
                    "max_tokens=)")
            if waits_too_long:
                raise LLMUnavailableError(f"{self.base_url}: {error} (asks to retry after "
                                          f"{error.retry_after_s:.0f} s)")
            self._sleep(self.retry.delay(retry, error.retry_after_s, self._rng))
        raise LLMUnavailableError(f"{self.base_url}: {retries + 1} attempts failed, last: {error}")

    def _say_first_failure(self, error: TransientLLMError, what_next: str) -> None:
        """One warning per request, after its first failed attempt (and after its first timeout): the server and the
        reason, so a server that is down or misconfigured shows at once instead of after every retry is spent. The
        first timeout of a server in the process also says that the server may still be computing the reply given
        up, and what to change."""
        if isinstance(error, LLMConnectionError):
            _log.warning("cannot connect to %s: %s (%s)", self.base_url, error.reason, what_next)
            return
        if isinstance(error, LLMTimeoutError):
            what_next = self._after_timeout(what_next)
        _log.warning("%s failed: %s (%s)", self.base_url, error, what_next)

    def _after_timeout(self, what_next: str) -> str:
        """What happens after a timeout, and the first time per server, why it may recur and what to change."""
        if self.local and what_next.startswith("retry"):
            what_next = "sent once more, not again after another timeout"
        server = self.base_url.rstrip("/")
        with _TIMEOUTS_EXPLAINED_LOCK:
            explained = server in _TIMEOUTS_EXPLAINED
            _TIMEOUTS_EXPLAINED.add(server)
        if explained:
            return what_next
        if self.local:
            return (f"{what_next}: a local server may still be computing the reply given up, and what is sent next "
                    "waits behind it; raise timeout=, lower concurrency= or max_tokens=")
        return (f"{what_next}: the server may still be computing the reply given up; if it is slow rather than "
                "down, raise timeout=, lower concurrency= or max_tokens=")


def is_loopback(base_url: str) -> bool:
    """True for a server on this machine's loopback (``localhost``, ``::1``, ``127.x``): a local server, which gets
    a placeholder key, the local defaults of ``timeout`` and ``concurrency``, and few re-sends after a timeout.

    >>> is_loopback("http://127.0.0.1:8080/v1"), is_loopback("https://openrouter.ai/api/v1")
    (True, False)
    """
    host = urllib.parse.urlparse(base_url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def key_env_vars(base_url: str) -> tuple[str, ...]:
    """The variables whose key may be sent to ``base_url``, in the order they are looked at:
    ``TABLETOP_LLM_API_KEY`` for any server, a provider's variable only for that provider's hosts.

    >>> key_env_vars("https://openrouter.ai/api/v1"), key_env_vars("http://127.0.0.1:8080/v1")
    (('TABLETOP_LLM_API_KEY', 'OPENROUTER_API_KEY'), ('TABLETOP_LLM_API_KEY',))
    """
    host = (urllib.parse.urlparse(base_url).hostname or "").rstrip(".")
    return (API_KEY_ENV,) + tuple(name for name, hosts in PROVIDER_KEY_HOSTS.items()
                                  if any(host == h or host.endswith("." + h) for h in hosts))


def find_api_key(explicit: str | None = None, env_var: str = "", base_url: str = DEFAULT_BASE_URL) -> str | None:
    """The key for ``base_url``: the one given, else the first set of ``env_var`` (when named) and
    ``key_env_vars(base_url)`` (so ``OPENROUTER_API_KEY`` only for openrouter.ai, ``OPENAI_API_KEY`` only
    for api.openai.com).

    >>> find_api_key("sk-given")
    'sk-given'
    """
    if explicit:
        return explicit
    for name in ((env_var,) if env_var else ()) + key_env_vars(base_url):
        if os.environ.get(name):
            return os.environ[name]
    return None
