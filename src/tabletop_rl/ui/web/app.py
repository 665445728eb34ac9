"""``tabletop web``: the browser viewer of arena runs and the table where a person plays policies (extra ``[web]``:
fastapi, uvicorn).

The page is plain HTML, CSS and JavaScript served from this package (``static/``); every view is computed
here (``views``, ``play``), so what a seat may not see never leaves the server for that seat. Endpoints
(docs/web.md): ``GET /api/info``, ``/api/games``, ``/api/games/{index}``,
``/api/games/{index}/plies/{ply}?viewer=V``, ``/api/summary``; ``GET /api/play/saves``, ``POST /api/play``,
``POST /api/play/saves/{id}/resume``, ``GET /api/play/{id}``, ``POST /api/play/{id}/move``. ``V`` is
``spectator`` or a player number. Bad input is answered 400 (404 for an unknown game, step or saved game)
with ``{"error": "<one line>"}``, and nothing is changed.

A request picks its opponents from the desk's menu (``menu.PolicyMenu``) and sets nothing else.

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

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from tabletop_rl.games import GAMES, game_class
from tabletop_rl.ui.web.menu import PolicyMenu
from tabletop_rl.ui.web.play import PlayDesk
from tabletop_rl.ui.web.views import RunView

__all__ = ["DEFAULT_PORT", "DEFAULT_SAVES", "NewGame", "PlayMove", "check_host", "create_app", "serve"]

DEFAULT_PORT = 8765
#: Where games played in the browser are saved unless ``--saves`` says otherwise (under the current folder).
DEFAULT_SAVES = Path("tabletop-saves")
_STATIC = {"app.js": "text/javascript", "style.css": "text/css"}


class NewGame(BaseModel):
    """``POST /api/play``: a new game against policies of the menu (``GET /api/info`` lists them)."""

    game: str = "splendor"
    vs: list[Annotated[str, Field(max_length=1000)]] = Field(
        default_factory=lambda: ["random"], min_length=1, max_length=3
    )
    seat: int = 0
    num_players: int = 2
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    name: str | None = None


class PlayMove(BaseModel):
    """``POST /api/play/{id}/move``: the person's move, by name (``take:white,blue,green``, ``buy:1.2``, ``10H``)."""

    move: str = Field(max_length=100)


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


def create_app(run: RunView | None, desk: PlayDesk) -> FastAPI:
    """The application over an opened run (None: play only) and the desk of played games."""
    app = FastAPI(title="tabletop web", docs_url=None, redoc_url=None, openapi_url=None)
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
