"""The HTTP under the ``openai`` SDK, bounded: a request made inside ``request_budget(timeout_s, max_bytes)`` has
one deadline for all of it (connect, send, the whole reply) and reads at most ``max_bytes``.

httpx's ``timeout`` bounds each socket operation, so a server that drips its reply a byte at a time holds a
request for as long as it likes; here every socket operation waits at most until the request's deadline, and a
reply is refused (``RefusedReplyError``, the connection closed) once more than ``max_bytes`` were read or when it
comes compressed (it could unpack to any size; ``bounded_http_client`` asks for none). The budget is the calling
thread's (a ``ContextVar``), so one client serves the requests of many threads at once, each with its own.

>>> with request_budget(timeout_s=30.0, max_bytes=100):
...     _spend(60)
...     _spend(60)
Traceback (most recent call last):
tabletop_rl.agents.llm.transport.RefusedReplyError: the reply is over 100 bytes (not read further)
"""

from __future__ import annotations

import contextlib
import time
import urllib.request
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

__all__ = ["RefusedReplyError", "bounded_http_client", "request_budget"]


class RefusedReplyError(httpx.TransportError):
    """A reply refused unread past the byte limit, or compressed though we asked for none (an httpx error, so
    the SDK reports it as a failed request, the exception under its own)."""


@dataclass
class _Budget:
    deadline: float  # time.monotonic()
    max_bytes: int
    read: int = 0


_BUDGET: ContextVar[_Budget | None] = ContextVar("tabletop_rl_llm_request_budget", default=None)


@contextlib.contextmanager
def request_budget(timeout_s: float, max_bytes: int) -> Iterator[None]:
    """Bounds the requests this thread makes through a ``bounded_http_client`` until the block ends: ``timeout_s``
    seconds from now for all of them, ``max_bytes`` read (status line and headers included)."""
    token = _BUDGET.set(_Budget(time.monotonic() + timeout_s, max_bytes))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _bounded(timeout: float | None, expired: type[httpcore.TimeoutException]) -> float | None:
    """``timeout`` cut to the time left before the request's deadline; ``expired`` once the deadline has passed."""
    budget = _BUDGET.get()
    if budget is None:
        return timeout
    left = budget.deadline - time.monotonic()
    if left <= 0:
        raise expired("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


def _spend(count: int) -> None:
    """Counts bytes read against the request's limit."""
    budget = _BUDGET.get()
    if budget is None:
        return
    budget.read += count
    if budget.read > budget.max_bytes:
        raise RefusedReplyError(f"the reply is over {budget.max_bytes} bytes (not read further)")


class _BoundedStream(httpcore.NetworkStream):
    """A socket whose every wait ends at the request's deadline and whose reads count against its byte limit."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))
        _spend(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname,
                                                    _bounded(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedNetwork(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _BoundedStream(self._inner.connect_tcp(host, port, _bounded(timeout, httpcore.ConnectTimeout),
                                                      local_address, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


#: httpcore's errors and httpx's for them, the more specific first.
_HTTPX_ERRORS: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout, httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout, httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.TimeoutException: httpx.TimeoutException, httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError, httpcore.WriteError: httpx.WriteError,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError, httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.ProtocolError: httpx.ProtocolError, httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol}


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """httpcore's errors as httpx's, which the SDK reports: a timeout as a timeout, the others as a failed request
    (with the error under it, e.g. the refused connection)."""
    try:
        yield
    except tuple(_HTTPX_ERRORS) as e:
        raise next(ours for theirs, ours in _HTTPX_ERRORS.items() if isinstance(e, theirs))(str(e)) from e


class _Body(httpx.SyncByteStream):
    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._response.iter_stream()

    def close(self) -> None:
        self._response.close()


def _pool(base_url: str) -> httpcore.ConnectionPool:
    """Connections of ``_BoundedStream`` sockets to ``base_url``'s server, through the proxy the environment names
    for it (``HTTPS_PROXY``, ``HTTP_PROXY`` or ``ALL_PROXY``, unless ``NO_PROXY`` exempts it), as the SDK's own
    client would go."""
    url = httpx.URL(base_url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    # No limit on connections: ChatClient's per-server slots limit the requests in flight.
    settings: dict[str, Any] = {"ssl_context": httpx.create_ssl_context(), "max_connections": None,
                                "network_backend": _BoundedNetwork()}
    if not proxy or urllib.request.proxy_bypass(url.host):
        return httpcore.ConnectionPool(**settings)
    proxy_url = httpx.URL(proxy)
    auth = (proxy_url.username, proxy_url.password) if proxy_url.username else None
    if proxy_url.scheme.startswith("socks"):
        return httpcore.SOCKSProxy(proxy_url=str(proxy_url.copy_with(username=None, password=None)),
                                   proxy_auth=auth, **settings)
    return httpcore.HTTPProxy(proxy_url=str(proxy_url.copy_with(username=None, password=None)), proxy_auth=auth,
                              **settings)


class _BoundedTransport(httpx.BaseTransport):
    """httpx over a connection pool of ``_BoundedStream`` sockets."""

    def __init__(self, base_url: str) -> None:
        self._pool = _pool(base_url)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        url = httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                           target=request.url.raw_path)
        with _as_httpx_errors():
            response = self._pool.handle_request(httpcore.Request(request.method, url, headers=request.headers.raw,
                                                                   content=request.stream,
                                                                   extensions=request.extensions))
        encoding = httpx.Headers(response.headers).get("content-encoding", "identity").strip().lower()
        if encoding != "identity":
            response.close()
            raise RefusedReplyError(f"the reply is compressed ({encoding}) though none was asked for")
        return httpx.Response(response.status, headers=response.headers, stream=_Body(response),
                              extensions=response.extensions)

    def close(self) -> None:
        self._pool.close()


def bounded_http_client(base_url: str) -> httpx.Client:
    """An ``httpx.Client`` for the SDK's requests to ``base_url`` (``openai.OpenAI(http_client=...)``) that honour
    ``request_budget`` and ask for replies uncompressed (a compressed one is refused)."""
    return httpx.Client(transport=_BoundedTransport(base_url), follow_redirects=True,
                        headers={"Accept-Encoding": "identity"})
