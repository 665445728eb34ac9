"""ASGI middleware of the package's HTTP servers (the Klaverjas best-card service, ``tabletop web``): a request body
over a limit is refused having read at most the limit.

A declared Content-Length over the limit is refused before any of the body is read; a body of unknown length
(chunked) is read only up to the limit. Starlette's ``request.body()`` would read the whole body first, so a 300 MB
upload grew a server by more than its size before it was refused. The body read (at most the limit) is handed on to
the app as one message. Each server words and logs the refusal itself (``refuse``); nothing here imports a web
framework.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["BodyLimit", "Refuse", "declared_length", "no_body"]

#: The ASGI shapes (as ``starlette.types`` spells them).
Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
#: ``refuse(scope, send, detail)`` answers 413 with the one-line ``detail`` and should close the connection: the rest
#: of the body is never read, so the connection cannot be reused.
Refuse = Callable[[Scope, Send, str], Awaitable[None]]


def declared_length(scope: Scope) -> str:
    """The request's Content-Length header as sent (``""`` when it has none).

    >>> declared_length({"headers": [(b"content-length", b"300")]})
    '300'
    """
    return dict(scope["headers"]).get(b"content-length", b"").decode("latin-1")


class BodyLimit:
    """``app`` behind a limit of ``limit`` bytes on each request's body; ``refuse`` answers a body over it."""

    def __init__(self, app: ASGIApp, limit: int, refuse: Refuse) -> None:
        self.app, self.limit, self.refuse = app, limit, refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = declared_length(scope)
        if declared.isdigit() and int(declared) > self.limit:
            shown = declared if len(declared) <= 20 else f"{declared[:20]}... ({len(declared)} chars)"
            await self.refuse(scope, send, f"body: Content-Length {shown} is over the {self.limit}-byte limit")
            return
        body = await self._read(receive)
        if body is None:
            return  # the client left
        if len(body) > self.limit:
            await self.refuse(scope, send, f"body: over the {self.limit}-byte limit (read no further)")
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The body, or its first ``limit + 1`` bytes when it is longer; ``None`` when the client disconnects."""
        chunks: list[bytes] = []
        size = 0
        while size <= self.limit:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


async def no_body() -> Message:
    """The ``receive`` of a refusal's answer: the request is over."""
    return {"type": "http.disconnect"}


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app the body already read, then whatever the connection says next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
