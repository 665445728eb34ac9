"""``tabletop web``: the browser viewer of arena runs and the table where a person plays policies (extra ``[web]``:
fastapi, uvicorn).

The page is plain HTML, CSS and JavaScript served from this package (``static/``); every view is computed
here (``views``, ``play``), so what a seat may not see never leaves the server for that seat. Endpoints
(docs/web.md): ``GET /api/info``, ``/api/games``, ``/api/games/{index}``,
``/api/games/{index}/plies/{ply}?viewer=V``, ``/api/summary``; ``GET /api/play/saves``, ``POST /api/play``,
``POST /api/play/saves/{id}/resume``, ``GET /api/play/{id}``, ``POST /api/play/{id}/move``. ``V`` is
``spectator`` or a player number. Bad input is answered 400 (404 for an unknown game, step or saved game)
with ``{"error": "<one line>"}``, and nothing is changed.

A request picks its opponents from the desk's menu (``menu.PolicyMenu``) and sets nothing else. Every request must
name this server in ``Host`` (and in ``Origin`` when it sends one): the address it came in on, or ``localhost``
on a loopback address, with the port; else 403, so a page of another site whose name was rebound to this
machine's address reaches nothing. A body over ``MAX_BODY_BYTES`` is refused with 413, read no further.

This module is the ``[web]`` extra's entry point: it imports fastapi and uvicorn at its top, and no other
module imports it (``tabletop web`` loads it by name).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from tabletop_rl.games import GAMES, game_class
from tabletop_rl.ui.body_limit import ASGIApp, BodyLimit, Receive, Scope, Send, no_body
from tabletop_rl.ui.web.menu import MAX_SPEC_CHARS, PolicyMenu
from tabletop_rl.ui.web.play import PlayDesk
from tabletop_rl.ui.web.views import RunView

__all__ = ["DEFAULT_PORT", "DEFAULT_SAVES", "MAX_BODY_BYTES", "NewGame", "PlayMove", "check_host", "create_app",
           "same_server", "serve"]

DEFAULT_PORT = 8765
#: Where games played in the browser are saved unless ``--saves`` says otherwise (under the current folder).
DEFAULT_SAVES = Path("tabletop-saves")
#: The largest request body read (a request of the page is at most a few kilobytes).
MAX_BODY_BYTES = 64 * 1024
_STATIC = {"app.js": "text/javascript", "style.css": "text/css"}
#: How much of a refused Host or Origin an error repeats.
_SHOWN_CHARS = 80


class NewGame(BaseModel):
    """``POST /api/play``: a new game against policies of the menu (``GET /api/info`` lists them)."""

    game: str = "splendor"
    vs: list[Annotated[str, Field(max_length=MAX_SPEC_CHARS)]] = Field(
        default_factory=lambda: ["random"], min_length=1, max_length=3
    )
    seat: int = 0
    num_players: int = 2
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    name: str | None = None


class PlayMove(BaseModel):
    """``POST /api/play/{id}/move``: the person's move, by name (``take:white,blue,green``, ``buy:1.2``, ``10H``)."""

    move: str = Field(max_length=16_000)  # a turn of Space Conquest orders: hundreds of them fit


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _viewer(viewer: str) -> int | None:
    """``spectator`` -> None, a player's number -> that number; ``ValueError`` for anything else."""
    if viewer == "spectator":
        return None
    if not viewer.isdigit():
        raise ValueError(f"viewer must be 'spectator' or a player number, got {viewer[:20]!r}")
    return int(viewer)


def _static(name: str) -> str:
    return (files("tabletop_rl.ui.web") / "static" / name).read_text(encoding="utf-8")


def _host_and_port(netloc: str) -> tuple[str, int] | None:
    """``host[:port]`` as (host lower-cased, without an IPv6 address's brackets; port, 80 when none), None when it
    is no such thing."""
    if not netloc or any(c in netloc for c in "@/?#\\ "):
        return None
    try:
        parts = urlsplit(f"//{netloc}")
        return parts.hostname or "", parts.port or 80
    except ValueError:  # a port that is no number
        return None


def same_server(netloc: str, server: tuple[str, int]) -> bool:
    """Whether ``netloc`` (a ``Host`` header, or an ``Origin``'s host and port) names ``server``, the address and port
    a request came in on: that address, or ``localhost`` where it is a loopback one, with that port. No other name
    matches, so a page whose own name was rebound to this machine's address is told apart.

    >>> same_server("127.0.0.1:8765", ("127.0.0.1", 8765)), same_server("localhost:8765", ("127.0.0.1", 8765))
    (True, True)
    >>> same_server("attacker.example:8765", ("127.0.0.1", 8765)), same_server("127.0.0.1:9999", ("127.0.0.1", 8765))
    (False, False)
    """
    found = _host_and_port(netloc)
    if found is None or found[1] != server[1]:
        return False
    try:
        address = ipaddress.ip_address(server[0])
    except ValueError:
        return False
    address = getattr(address, "ipv4_mapped", None) or address  # a dual-stack socket's IPv4 client
    if found[0] == "localhost":
        return address.is_loopback
    try:
        return ipaddress.ip_address(found[0]) == address
    except ValueError:
        return False


def _origin_netloc(origin: str) -> str | None:
    """The host and port of an ``http://`` origin; None for any other (``null``, ``https://``, a path, no address)."""
    try:
        parts = urlsplit(origin)
    except ValueError:  # an IPv6 address without its closing bracket
        return None
    return parts.netloc if origin.isascii() and parts.scheme == "http" and not parts.path else None


def _foreign(scope: Scope) -> str | None:
    """Why a request is not one for this server (its ``Host`` or ``Origin`` names another), or None."""
    server = scope.get("server") or ("", 0)
    headers = dict(scope["headers"])
    host = headers.get(b"host", b"").decode("latin-1")
    address, port = (f"[{server[0]}]" if ":" in server[0] else server[0]), server[1]
    expected = f"{address}:{port}" + (f" or localhost:{port}" if same_server(f"localhost:{port}", server) else "")
    if not same_server(host, server):
        return f"Host {host[:_SHOWN_CHARS]!r} is not this server ({expected}); a page of another site is not answered"
    origin = headers.get(b"origin")
    if origin is not None:
        text = origin.decode("latin-1")
        netloc = _origin_netloc(text)
        if netloc is None or not same_server(netloc, server):
            return (f"Origin {text[:_SHOWN_CHARS]!r} is not this server (http://{expected}); a page of another site "
                    "is not answered")
    return None


class _SameServer:
    """ASGI middleware: 403 for a request whose ``Host`` or ``Origin`` names another server (``_foreign``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        problem = _foreign(scope) if scope["type"] == "http" else None
        if problem is None:
            await self.app(scope, receive, send)
            return
        await _error(403, problem)(scope, no_body, send)


async def _refuse_body(scope: Scope, send: Send, detail: str) -> None:
    """413, closing the connection (the rest of the body is never read)."""
    answer = JSONResponse({"error": detail}, status_code=413, headers={"connection": "close"})
    await answer(scope, no_body, send)


def create_app(run: RunView | None, desk: PlayDesk) -> FastAPI:
    """The application over an opened run (None: play only) and the desk of played games."""
    app = FastAPI(title="tabletop web", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES, refuse=_refuse_body)
    app.add_middleware(_SameServer)  # added last, so it runs first: a foreign request's body is never read
    _add_errors(app)
    _add_pages(app)
    _add_viewer(app, run, desk.menu)
    _add_play(app, desk)
    return app


def _add_errors(app: FastAPI) -> None:
    """Every error as ``{"error": one line}``: 400 bad input, 404 unknown thing, 500 a fault of ours."""

    @app.exception_handler(LookupError)
    async def not_found(request: Request, exc: LookupError) -> JSONResponse:
        return _error(404, str(exc).strip("'\""))

    @app.exception_handler(ValueError)
    async def bad_input(request: Request, exc: ValueError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "malformed request"}
        where = ".".join(str(part) for part in first["loc"] if part != "body")
        return _error(400, f"{where}: {first['msg']}" if where else str(first["msg"]))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def fault(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"{type(exc).__name__}: {exc}")


def _add_pages(app: FastAPI) -> None:
    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return _static("index.html")

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in _STATIC:
            raise LookupError(f"no static file {name[:40]!r}")
        return Response(_static(name), media_type=_STATIC[name])


def _add_viewer(app: FastAPI, run: RunView | None, menu: PolicyMenu) -> None:
    def opened() -> RunView:
        if run is None:
            raise LookupError("no arena run is open; start with: tabletop web RUN_DIR (or a games.jsonl)")
        return run

    @app.get("/api/games")
    def games() -> list[dict[str, Any]]:
        return opened().games()

    @app.get("/api/games/{index}")
    def game(index: int) -> dict[str, Any]:
        return opened().game(index)

    @app.get("/api/games/{index}/plies/{ply}")
    def position(index: int, ply: int, viewer: str = "spectator") -> dict[str, Any]:
        return opened().position(index, ply, _viewer(viewer))

    @app.get("/api/summary")
    def summary() -> dict[str, Any]:
        found = opened().summary
        if found is None:
            raise LookupError(
                f"the run at {opened().source.parent} has no summary.json (tabletop arena writes it at "
                "the end of a run)"
            )
        return found

    @app.get("/api/info")
    def info() -> dict[str, Any]:
        playable = sorted(GAMES)
        return {
            "run": None if run is None else str(run.source),
            "playable": playable,
            "players": {name: list(game_class(name).player_counts) for name in playable},
            "policies": {name: menu.offered(name) for name in playable},
        }


def _add_play(app: FastAPI, desk: PlayDesk) -> None:
    @app.get("/api/play/saves")
    def saves() -> dict[str, Any]:
        return {"folder": str(desk.folder), "saves": desk.saves()}

    @app.post("/api/play")
    def start(new: NewGame) -> dict[str, Any]:
        return desk.start(new.game, new.vs, new.seat, new.num_players, new.seed, new.name)

    @app.post("/api/play/saves/{name}/resume")
    def resume(name: str) -> dict[str, Any]:
        return desk.resume(name)

    @app.get("/api/play/{name}")
    def view(name: str) -> dict[str, Any]:
        return desk.view(name)

    @app.post("/api/play/{name}/move")
    def move(name: str, body: PlayMove) -> dict[str, Any]:
        return desk.move(name, body.move)


def check_host(host: str, allow_remote: bool) -> None:
    """``ValueError`` for an address other than this machine's own (loopback) unless ``allow_remote``: the
    page has no login and writes save files, so it listens beyond this machine only when asked to."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not allow_remote:
        raise ValueError(
            f"--host {host} would let other machines reach the page, which has no login; add "
            "--allow-remote if that is what you want"
        )


class _Server(uvicorn.Server):
    """uvicorn that prints the page's address once it listens (``--port 0`` lets the system pick the port)."""

    def __init__(self, config: uvicorn.Config, what: str) -> None:
        super().__init__(config)
        self.what = what

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        host, port = self.servers[0].sockets[0].getsockname()[:2]
        print(
            f"tabletop web: {self.what} at http://{f'[{host}]' if ':' in host else host}:{port}/ (Ctrl-C stops)",
            flush=True,
        )


def serve(
    source: Path | None,
    saves: Path = DEFAULT_SAVES,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    allow_remote: bool = False,
    allow: Sequence[str] = (),
) -> int:
    """Open ``source`` (a run folder or ``games.jsonl``; None: play only) and serve the page until Ctrl-C, offering
    the built-in policies and the ``allow`` specs (``PolicyMenu.build``). ``ValueError`` in one line for a run that
    cannot be read, a host that is refused (``check_host``) or an ``allow`` spec that does not build."""
    check_host(host, allow_remote)
    menu = PolicyMenu.build(allow)
    run = None if source is None else RunView.open(source)
    what = "play" if run is None else f"{run.source} ({len(run.records)} games) and play"
    app = create_app(run, PlayDesk(saves, menu))
    for game in sorted(menu.policies):
        print(f"tabletop web: {game} against {', '.join(menu.offered(game))}", flush=True)
    _Server(uvicorn.Config(app, host=host, port=port, log_level="warning"), what).run()
    return 0
