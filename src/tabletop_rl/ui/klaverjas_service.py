"""The best-card HTTP service (``tabletop serve klaverjas``; extra ``[serve]``: fastapi, uvicorn, httpx, pyyaml).

``POST /v1/best-card`` answers which card to play from a trick in progress; ``GET /healthz``; the OpenAPI
schema at ``/openapi.json`` (with request and response examples) and a page at ``/docs`` that documents the
endpoints and works offline (no Swagger UI from a CDN). Status codes: 200; 400 malformed input (bad JSON,
with its line and column; FastAPI's own validation errors are answered with 400, not its default 422), the
message names the field; 413 a body over 64 KB (refused on its Content-Length unread, a chunked body read
no further than the limit); 422 a well-formed request whose position admits no legal card for the player
(not the player's turn, a hand size the history contradicts, a hand contradicting a void the history
shows, history that breaks the rules); 503 a model is required (``allowFallback: false``) and neither the
local model nor the external API answered. Every error is ``{"detail": "<field>: <one line>"}``.

A request (``history`` may be left out: the hand size then says which trick it is; ``leaderPosition``
may be left out when ``table[0]`` names its player; cards and trump in either case)::

    curl -s localhost:8000/v1/best-card -H 'content-type: application/json' -d '{"hand": ["JH", "9H",
      "AC", "10C", "KS", "7D", "8D"], "table": [{"player": 2, "card": "AH"}, {"player": 3, "card": "7H"}],
      "history": [{"leader": 0, "plays": ["7S", "8S", "AS", "9S"]}], "trump": "H", "playerPosition": 0}'
    {"bestCard": "JH", "candidates": [{"card": "JH", "score": 0.62, "legal": true, "reason": "local model"},
      ...], "legalCards": ["JH", "9H"], "model": {"name": "klaverjas-mlp", ...}, "requestId": null}

Scoring order: the local model (``model.txt``) when loaded, else the external scoring API when
configured, else the deterministic heuristic (reason ``"fallback"``). Whatever a responder says,
``bestCard`` is one of ``legalCards``. ``scoringMode``: ``simple`` ranks by the responder's score;
``winTrick`` ranks cards that take over the trick in progress first; ``points`` adds the card's
immediate point swing (points it brings to the trick, + if our side would then hold it, - if not).

Rule knobs in a request: ``rules`` and ``amsterdamUndertrump`` (legality), ``stukMode`` and
``quartetValues`` (the roem the history scored); ``forced`` undertrumping with Rotterdam rules is a 400.
Kraken and the match format scale or sum deal results but do not change which card is best, so a
request does not carry them.

Configuration: a YAML (or JSON) file (``--config``, at most 64 KB) with the keys of ``ServiceConfig``,
overridden by the environment variables ``KLAVERJAS_MODEL_PATH``, ``KLAVERJAS_API_URL``, ``KLAVERJAS_API_KEY``,
``KLAVERJAS_API_TIMEOUT_S``; a value the service cannot use stops it at startup in one line naming the file or
variable and the setting. At startup the service compiles its kernels by answering example positions
(logged as ``warm_up``), then prints its URL. Each request, answered or refused, logs one JSON line
(request id, sanitised inputs with long strings cut, the choice or the refusal, milliseconds); the API key
is never logged.

This module is the HTTP face: the schema (the request's shape), the app and its routes, the settings and the
logs. What a request means (the position, its checks against the rules, the scoring and ranking) is
``ui/klaverjas_best_card.py``, which imports no web framework. This module is the ``[serve]`` extra's entry
point: it imports fastapi, pydantic, httpx, uvicorn and pyyaml at its top, and no other module of the package
imports it (``tabletop serve klaverjas`` loads it by name).
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import math
import os
import re
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import httpx
import numpy as np
import uvicorn
import yaml
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag
from pydantic.json_schema import JsonDict, JsonValue
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException

from tabletop_rl.core.text import quote
from tabletop_rl.games.klaverjas import model as M
from tabletop_rl.ui.body_limit import BodyLimit, Scope, Send, declared_length, no_body
from tabletop_rl.ui.klaverjas_best_card import (
    AmsterdamUndertrump,
    BestCard,
    Play,
    QuartetValues,
    Query,
    RequestError,
    RuleSet,
    ScoringMode,
    StukMode,
    Trick,
    position,
)

__all__ = ["BestCardRequest", "BestCardResponse", "Candidate", "ErrorResponse", "HistoryTrick", "ModelInfo",
           "ServiceConfig", "TablePlay", "create_app", "position_from_request", "serve_main"]

_MAX_BODY_BYTES = 64 * 1024
_BEST_CARD_PATH = "/v1/best-card"
# The schema admits either case (the validators below upper-case first), for cards and trump alike.
_CARD_PATTERN = r"^(7|8|9|10|[JQKAjqka])[CDHScdhs]$"
_SUIT_PATTERN = r"^[CDHScdhs]$"
_LOG_TEXT = 120  # longest string a log line or an error message repeats from a request
_log = logging.getLogger("tabletop_rl.ui.klaverjas_service")


#: The largest settings file read: a handful of keys, so anything longer is not one.
_MAX_CONFIG_BYTES = 64 * 1024
#: The settings the environment overrides: ``KLAVERJAS_<NAME>``.
_ENV_SETTINGS = ("model_path", "api_url", "api_key", "api_timeout_s")


def _shown(value: Any) -> str:
    """A setting's value for an error message: a scalar quoted and cut short, anything else by its type only (a
    YAML alias can make a list whose text is gigabytes)."""
    scalar = value is None or isinstance(value, (str, int, float))
    return quote(value, 40) if scalar else f"a {'list' if isinstance(value, list) else type(value).__name__}"


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a text, not {_shown(value)}")
    return value


def _seconds(value: Any) -> float:
    """A positive, finite number of seconds, or its text."""
    try:
        seconds = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError, OverflowError):
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise ValueError(f"must be a number of seconds above 0, not {_shown(value)}")
    return seconds


def _port(value: Any) -> int:
    """A port to listen on, 0..65535 (0: any free port), or its digits as text."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,5}", value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        raise ValueError(f"must be a whole number in 0..65535 (0: any free port), not {_shown(value)}")
    return value


def _host(value: Any) -> str:
    """A host name or IP address to listen on, as the resolver takes it: at most 253 characters, each label of a
    name 1-63 (uvicorn's resolver raised a UnicodeError for a longer or empty one)."""
    try:
        if isinstance(value, str) and 0 < len(value) <= 253:
            value.encode("idna")
            return value
    except UnicodeError:
        pass
    raise ValueError(f"must be a host name or IP address (labels of 1-63 characters), not {_shown(value)}")


#: Each setting's check: its value (converted) or a ``ValueError`` saying what it must be.
_SETTINGS: dict[str, Callable[[Any], Any]] = {"model_path": _text, "api_url": _text, "api_key": _text,
                                              "api_timeout_s": _seconds, "host": _host, "port": _port}


@dataclass
class ServiceConfig:
    """Service settings; ``model_path`` ``"packaged"`` means the model shipped in the package, ``""`` none."""

    model_path: str = "packaged"
    api_url: str = ""
    api_key: str = ""
    api_timeout_s: float = 1.0
    host: str = "127.0.0.1"
    port: int = 8000

    @classmethod
    def load(cls, path: str | None = None, environ: Mapping[str, str] | None = None) -> ServiceConfig:
        """Settings from the YAML (or JSON) file ``path`` (optional), then the environment; a one-line
        ``ValueError`` naming the file or the variable, and the setting, for anything the service cannot use.

        >>> ServiceConfig.load(None, environ={"KLAVERJAS_API_TIMEOUT_S": "-1"})
        Traceback (most recent call last):
        ValueError: KLAVERJAS_API_TIMEOUT_S must be a number of seconds above 0, not '-1'
        """
        values: dict[str, Any] = {}
        for name, value in (_read_settings(path) if path else {}).items():
            values[name] = _checked(name, value, f"config {path}: {name}")
        env: Mapping[str, str] = os.environ if environ is None else environ
        for name in _ENV_SETTINGS:
            key = f"KLAVERJAS_{name.upper()}"
            if key in env:
                values[name] = _checked(name, env[key], key)
        return cls(**values)


def _checked(name: str, value: Any, where: str) -> Any:
    """``value`` as setting ``name`` takes it; a ``ValueError`` starting with ``where`` when it cannot."""
    try:
        return _SETTINGS[name](value)
    except ValueError as e:
        raise ValueError(f"{where} {e}") from None


def _read_settings(path: str) -> dict[str, Any]:
    """The settings in the YAML (or JSON) file ``path``, at its top or under ``klaverjas_service``; a one-line
    ``ValueError`` naming the file for one that is not there, no regular file, over ``_MAX_CONFIG_BYTES``, no
    YAML, nested too deeply for the parser, or not a mapping of known settings."""
    file = Path(path)
    if not file.is_file():  # a FIFO would block the read, a device never end it
        raise ValueError(f"config {path}: {'not a regular file' if file.exists() else 'no such file'}")
    try:
        with open(file, "rb") as fh:
            raw = fh.read(_MAX_CONFIG_BYTES + 1)
        if len(raw) > _MAX_CONFIG_BYTES:
            raise ValueError(f"over the {_MAX_CONFIG_BYTES}-byte limit of a settings file")
        data = yaml.safe_load(raw.decode("utf-8"))
    except OSError as e:
        raise ValueError(f"config {path}: cannot read it: {e.strerror or e}") from None
    except RecursionError:
        raise ValueError(f"config {path}: nested too deeply") from None
    except yaml.YAMLError as e:
        raise ValueError(f"config {path}: not YAML: {_yaml_problem(e)}") from None
    except ValueError as e:  # UnicodeDecodeError, or the size above
        raise ValueError(f"config {path}: {e}") from None
    data = data.get("klaverjas_service", data) if isinstance(data, dict) else data
    if not isinstance(data, dict):
        raise ValueError(f"config {path}: expected a mapping of settings")
    unknown = [_cut(key, 40) if isinstance(key, str) else quote(key, 40) for key in data if key not in _SETTINGS]
    if unknown:
        raise ValueError(f"config {path}: unknown setting(s) {', '.join(unknown[:5])}")
    return data


def _yaml_problem(error: yaml.YAMLError) -> str:
    """What a YAML error says, in one line with where it is (its own text spans several lines)."""
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    return f"{getattr(error, 'problem', None) or type(error).__name__}{where}"


# --- request / response schema -----------------------------------------------------------------
def _cut(text: str, width: int = _LOG_TEXT) -> str:
    """``text`` cut to ``width`` characters, saying how long it was, so no request is echoed at length."""
    return text if len(text) <= width else f"{text[:width]}... ({len(text)} chars)"


def _card_text(value: Any) -> Any:
    """A card name upper-cased (``"jh"`` is ``"JH"``); a clear error for text that names no card."""
    if not isinstance(value, str):
        return value  # pydantic's own "Input should be a valid string"
    card = value.strip().upper()
    if not re.fullmatch(r"(7|8|9|10|J|Q|K|A)[CDHS]", card):
        raise PydanticCustomError("card", "bad card {card}: expected rank (7 8 9 10 J Q K A) and suit (C D H S) "
                                          "such as '10H' or 'js'", {"card": repr(_cut(value, 20))})
    return card


def _suit_text(value: Any) -> Any:
    """A trump suit upper-cased, as cards are (``"h"`` is ``"H"``)."""
    return value.strip().upper() if isinstance(value, str) else value


_Card = Annotated[str, Field(pattern=_CARD_PATTERN), BeforeValidator(_card_text)]
_Seat = Annotated[int, Field(ge=0, le=3)]


class TablePlay(BaseModel):
    model_config = ConfigDict(extra="forbid")
    player: _Seat
    card: _Card


def _play_form(value: Any) -> str:
    return "seat" if isinstance(value, dict | TablePlay) else "text"


#: A card played: ``"AH"`` or ``{"player": 2, "card": "AH"}``, in ``table`` and ``history`` alike. The tags pick the
#: form from the value, so an error names the one form the client used (a plain union reports both).
_Play = Annotated[Annotated[_Card, Tag("text")] | Annotated[TablePlay, Tag("seat")], Discriminator(_play_form)]
_UNION_TAGS = {"text", "seat"}  # left out of the field names in error messages


def _play(play: str | TablePlay) -> str | Play:
    return play if isinstance(play, str) else Play(play.player, play.card)


class HistoryTrick(BaseModel):
    model_config = ConfigDict(extra="forbid")
    leader: _Seat
    plays: list[_Play] = Field(min_length=4, max_length=4)
    winner: int | None = Field(default=None, ge=0, le=3)
    points: int | None = None


#: The examples of the OpenAPI schema and the /docs page, also what the service answers at startup to compile its
#: kernels: the second trick with the history given (Rotterdam), and the fifth trick of another deal with the
#: history left out (Amsterdam, lower case), so that both paths and both follow regimes run once.
_EXAMPLES: list[JsonValue] = [
    {"hand": ["JH", "9H", "AC", "10C", "KS", "7D", "8D"],
     "table": [{"player": 2, "card": "AH"}, {"player": 3, "card": "7H"}],
     "history": [{"leader": 0, "plays": ["7S", "8S", "AS", "9S"], "winner": 2, "points": 11}],
     "trump": "H", "playerPosition": 0, "leaderPosition": 2, "scoringMode": "simple", "topK": 3,
     "requestId": "abc-123", "rules": "rotterdam"},
    {"hand": ["jh", "9h", "ac", "10c"], "table": [{"player": 3, "card": "qd"}], "trump": "h", "playerPosition": 0,
     "scoringMode": "points", "rules": "amsterdam"},
]
_RESPONSE_EXAMPLE: JsonDict = {
    "bestCard": "JH", "legalCards": ["JH", "9H"], "model": {"name": "klaverjas-mlp", "version": "2025-01-01T00:00:00Z"},
    "candidates": [{"card": "JH", "score": 0.71, "legal": True, "reason": "local model"},
                   {"card": "9H", "score": 0.29, "legal": True, "reason": "local model"},
                   {"card": "AC", "score": 0.0, "legal": False, "reason": "not legal"}],
    "requestId": "abc-123"}


class BestCardRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": _EXAMPLES})
    hand: list[_Card] = Field(min_length=1, max_length=8)
    table: list[_Play] = Field(default_factory=list, description="cards on the table, in play order")
    history: list[HistoryTrick] | None = Field(
        default=None, max_length=7, description="the finished tricks; left out, the hand size says which trick it "
                                                "is and the cards played before count as unseen")
    trump: Annotated[str, Field(pattern=_SUIT_PATTERN), BeforeValidator(_suit_text)]
    playerPosition: _Seat
    leaderPosition: int | None = Field(default=None, ge=0, le=3,
                                       description="seat that led this trick (default: table[0].player, or "
                                                   "playerPosition when the table is empty)")
    partnerPosition: int | None = Field(default=None, ge=0, le=3)
    makerPosition: int | None = Field(default=None, ge=0, le=3,
                                      description="seat that chose trump (default: the leader of the first trick, "
                                                  "or of this trick when the history is left out)")
    # the knobs' values and defaults are the domain's (Query)
    scoringMode: ScoringMode = Query.scoringMode
    topK: int = Field(default=Query.topK, ge=1, le=8)
    requestId: str | None = Field(default=None, max_length=200)
    rules: RuleSet = Query.rules
    amsterdamUndertrump: AmsterdamUndertrump = Field(
        default=Query.amsterdamUndertrump, description="Amsterdam house rule: undertrump an opponent's trump you "
                                                       "cannot beat (forced) or discard")
    stukMode: StukMode = Field(default=Query.stukMode, description="how the history's stuk (K+Q of trump) scored")
    quartetValues: QuartetValues = Field(default=Query.quartetValues,
                                         description="quartet roem preset for the history")
    allowFallback: bool = Query.allowFallback

    def query(self) -> Query:
        """The request as the domain takes it (``ui/klaverjas_best_card.py``)."""
        history = None if self.history is None else [Trick(t.leader, [_play(p) for p in t.plays], t.winner, t.points)
                                                     for t in self.history]
        return Query(**self.model_dump(exclude={"table", "history"}), table=[_play(p) for p in self.table],
                     history=history)


class Candidate(BaseModel):
    card: str
    score: float
    legal: bool
    reason: str


class ModelInfo(BaseModel):
    name: str
    version: str


class BestCardResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_RESPONSE_EXAMPLE]})
    bestCard: str
    candidates: list[Candidate]
    legalCards: list[str]
    model: ModelInfo
    requestId: str | None


class ErrorResponse(BaseModel):
    detail: str


def position_from_request(req: BestCardRequest) -> np.ndarray:
    """The state row of the player's view (``klaverjas_best_card.position``); ``RequestError`` 400/422."""
    return position(req.query())


# --- responders ----------------------------------------------------------------------------------
class _ExternalScorer:
    """Adapter for an external scoring API: ``POST {base_url}/score`` with the request and the legal cards,
    bearer ``api_key``; the answer ``{"scores": {"JH": 0.9, ...}, "model": {"name", "version"}}``."""

    def __init__(self, base_url: str, api_key: str = "", timeout_s: float = 1.0) -> None:
        self.base_url, self.timeout_s = base_url.rstrip("/"), timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=timeout_s, headers=headers)

    def scores(self, body: dict[str, Any], legal: list[str]) -> tuple[dict[str, float], dict[str, str]]:
        """Scores by card name and the model info; ``RuntimeError`` for any failure (network, status, shape)."""
        try:
            reply = self.client.post(f"{self.base_url}/score", json={**body, "legalCards": legal})
            reply.raise_for_status()
            data = reply.json()
            scores = {str(card): float(value) for card, value in data["scores"].items()}
            model = data.get("model") or {"name": "external", "version": "unknown"}
            return scores, {"name": str(model.get("name")), "version": str(model.get("version"))}
        except (httpx.HTTPError, KeyError, TypeError, ValueError, AttributeError) as e:
            raise RuntimeError(f"external scoring API failed: {type(e).__name__}: {e}") from None


# --- logging -------------------------------------------------------------------------------------
def _sanitised(req: BestCardRequest) -> dict:
    """Request fields worth logging: the position, not free text beyond the request id (cut short)."""
    return {"requestId": None if req.requestId is None else _cut(req.requestId), "hand": req.hand,
            "table": [p if isinstance(p, str) else p.card for p in req.table],
            "tricks": "omitted" if req.history is None else len(req.history),
            "trump": req.trump, "playerPosition": req.playerPosition, "rules": req.rules,
            "amsterdamUndertrump": req.amsterdamUndertrump, "stukMode": req.stukMode,
            "quartetValues": req.quartetValues, "scoringMode": req.scoringMode}


def _brief(value: Any) -> Any:
    """One value of a refused body for the log: itself when its JSON is short, else its JSON text cut short."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):  # too deep or not JSON: its type says enough
        return f"<{type(value).__name__}>"
    if len(text) <= _LOG_TEXT:
        return value
    return _cut(value) if isinstance(value, str) else _cut(text)


def _sanitised_body(body: Any) -> dict[str, Any]:
    """What the log keeps of a body that failed validation: the request's own fields, each cut short, and the
    names of unknown ones; of a body that is no JSON object, its first characters."""
    if not isinstance(body, dict):
        return {"body": _brief(body.decode("utf-8", "replace") if isinstance(body, bytes) else body)}
    known = {key: _brief(value) for key, value in body.items() if key in BestCardRequest.model_fields}
    unknown = [_cut(str(key), 40) for key in body if key not in BestCardRequest.model_fields]
    return {**known, **({"unknownFields": unknown[:5]} if unknown else {})}


def _log_refused(status: int, detail: str, path: str, request: Mapping[str, Any]) -> None:
    """One log line for a refused request, like the line of an answered one; nothing in it is long."""
    _log.info(json.dumps({"event": "refused", "status": status, "path": _cut(path, 60),
                          "requestId": request.get("requestId"), "detail": _cut(detail, 300), "input": request}))


# --- errors --------------------------------------------------------------------------------------
def _where(loc: Sequence[Any]) -> str:
    """A pydantic error location as the field path the service's own messages use: ``history[0].plays[2]``."""
    text = ""
    for part in loc:
        if part == "body" or part in _UNION_TAGS:
            continue
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "body"


def _json_error(doc: Any, error: Mapping[str, Any]) -> str:
    """Where a body stops being JSON, as line and column (FastAPI reports a character offset)."""
    loc = error.get("loc", ())
    pos = loc[-1] if loc and isinstance(loc[-1], int) else 0
    reason = (error.get("ctx") or {}).get("error", "not valid JSON")
    if isinstance(doc, bytes):
        doc = doc.decode("utf-8", "replace")
    if not isinstance(doc, str):
        return f"body: invalid JSON at character {pos + 1}: {reason}"
    line, column = doc.count("\n", 0, pos) + 1, pos - doc.rfind("\n", 0, pos)
    return f"body: invalid JSON at line {line} column {column}: {reason}"


def _validation_message(exc: RequestValidationError) -> str:
    """The first validation error as one line naming the field."""
    errors = exc.errors()
    first: Mapping[str, Any] = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    body = getattr(exc, "body", None)
    if first.get("type") == "json_invalid":
        return _json_error(body, first)
    if isinstance(body, bytes) and tuple(first.get("loc", ())) == ("body",):  # FastAPI read no JSON
        return "body: expected a JSON object, sent with Content-Type: application/json"
    return f"{_where(first.get('loc', ()))}: {first.get('msg', 'invalid')}"


def _http_error_message(exc: StarletteHTTPException) -> str:
    """FastAPI's own refusals, with the reason FastAPI leaves out when a body cannot be parsed at all."""
    cause = exc.__cause__
    if isinstance(cause, RecursionError):
        return "body: JSON nested too deeply"
    if isinstance(cause, UnicodeDecodeError):
        return f"body: not UTF-8 text (byte {cause.start + 1})"
    return str(exc.detail)


def _json_reply(status: int, detail: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=dict(headers or {}))


async def _refuse_body(scope: Scope, send: Send, detail: str) -> None:
    """413 for a body over the limit (``body_limit.BodyLimit``), logged as every refusal is, closing the connection."""
    declared = declared_length(scope)
    _log_refused(413, detail, scope.get("path", ""), {"contentLength": _cut(declared, 20)} if declared else {})
    await _json_reply(413, detail, {"connection": "close"})(scope, no_body, send)


# --- the /docs page ------------------------------------------------------------------------------
def _docs_page(spec: Mapping[str, Any]) -> str:
    """The /docs page, written from the OpenAPI schema: every endpoint with its status codes, the request
    examples as curl commands and a response example. It loads nothing from the network (FastAPI's Swagger UI
    fetches its scripts from a CDN, so it was blank offline)."""
    esc = html.escape
    parts = [f"<h1>{esc(spec['info']['title'])}</h1>",
             "<p>The full schema: <a href='/openapi.json'>/openapi.json</a>.</p>"]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            parts.append(f"<h2>{method.upper()} {esc(path)}</h2><p>{esc(op.get('summary', ''))}</p>")
            parts.append(f"<p>{esc(op.get('description', ''))}</p>" if op.get("description") else "")
            parts += _examples_html(spec, path, op)
            codes = "".join(f"<li><b>{esc(code)}</b> {esc(reply.get('description', ''))}</li>"
                            for code, reply in op.get("responses", {}).items())
            parts.append(f"<ul>{codes}</ul>")
    parts.append(f"<h2>About</h2><pre>{esc(spec['info'].get('description', ''))}</pre>")
    style = "body{font-family:sans-serif;max-width:60em;margin:auto}pre{background:#f4f4f4;padding:.5em;overflow:auto}"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(spec['info']['title'])}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")


def _examples_html(spec: Mapping[str, Any], path: str, op: Mapping[str, Any]) -> list[str]:
    """The request examples of ``op`` as curl commands, and its 200 response's example."""
    def examples(content: Mapping[str, Any]) -> list[Any]:
        ref = content.get("application/json", {}).get("schema", {}).get("$ref", "")
        return spec.get("components", {}).get("schemas", {}).get(ref.rsplit("/", 1)[-1], {}).get("examples", [])

    out = []
    for example in examples(op.get("requestBody", {}).get("content", {})):
        body = json.dumps(example, indent=1)
        out.append(f"<p>Request:</p><pre>curl -s http://HOST:PORT{html.escape(path)} -H 'content-type: "
                   f"application/json' -d '{html.escape(body)}'</pre>")
    for example in examples(op.get("responses", {}).get("200", {}).get("content", {})):
        out.append(f"<p>Response:</p><pre>{html.escape(json.dumps(example, indent=1))}</pre>")
    return out


# --- the app -------------------------------------------------------------------------------------
def _local_model(model_path: str) -> M.MLP | None:
    """The model of the ``model_path`` setting: ``"packaged"`` the shipped one, ``""`` none."""
    path = M.packaged_model_path() if model_path == "packaged" else (model_path or None)
    return M.load(path) if path else None


def create_app(config: ServiceConfig | None = None) -> FastAPI:
    """The FastAPI application (``uvicorn.run(create_app(), ...)``); building it warms the kernels up."""
    config = config or ServiceConfig()
    external = _ExternalScorer(config.api_url, config.api_key, config.api_timeout_s) if config.api_url else None
    chooser = BestCard(_local_model(config.model_path), external.scores if external is not None else None)
    start = time.perf_counter()
    chooser.warm_up(BestCardRequest.model_validate(example).query() for example in _EXAMPLES)
    _log.info(json.dumps({"event": "warm_up", "examples": len(_EXAMPLES),
                          "ms": round((time.perf_counter() - start) * 1000, 2)}))
    app = FastAPI(title="Klaverjas best-card service", version="1", docs_url=None, redoc_url=None,
                  description=(__doc__ or "").split("\n\n", 1)[1])
    app.add_middleware(BodyLimit, limit=_MAX_BODY_BYTES, refuse=_refuse_body)
    errors = {400: "Malformed or inconsistent input; FastAPI's schema validation errors are mapped to 400 "
                   "(not 422). `detail` names the field; invalid JSON gives its line and column.",
              413: "Request body over 64 KB (refused on its Content-Length, or read no further than the limit).",
              422: "Well-formed, but the position admits no legal card.",
              503: "A model is required (allowFallback false) and none answered."}

    @app.exception_handler(RequestValidationError)
    async def validation_as_400(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail = _validation_message(exc)
        _log_refused(400, detail, request.url.path, _sanitised_body(getattr(exc, "body", None)))
        return _json_reply(400, detail)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = _http_error_message(exc)
        _log_refused(exc.status_code, detail, request.url.path, {})
        return _json_reply(exc.status_code, detail, exc.headers)

    def best_card(req: BestCardRequest) -> Any:
        start = time.perf_counter()
        try:
            body = chooser.choose(req.query())
        except RequestError as e:
            _log_refused(e.status, str(e), _BEST_CARD_PATH, _sanitised(req))
            return _json_reply(e.status, str(e))
        _log.info(json.dumps({"event": "best_card", "requestId": req.requestId, "input": _sanitised(req),
                              "legalCards": body["legalCards"], "bestCard": body["bestCard"],
                              "scores": {k["card"]: k["score"] for k in body["candidates"]},
                              "model": body["model"]["name"], "ms": round((time.perf_counter() - start) * 1000, 2)}))
        return body

    documented: dict[int | str, dict[str, Any]] = {code: {"model": ErrorResponse, "description": text}
                                                   for code, text in errors.items()}
    app.post(_BEST_CARD_PATH, response_model=BestCardResponse, responses=documented,
             summary="The best legal card for the player to act",
             description="Send the player's hand, the cards on the table and (optionally) the finished tricks; "
                         "the answer names the best card, the legal cards and the ranked candidates.")(best_card)

    @app.get("/healthz", summary="Whether the service is up, and its responders")
    def healthz() -> dict:
        return {"status": "ok", "model": chooser.model_info, "external": external is not None}

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> str:
        return _docs_page(app.openapi())

    return app


def _argument(check: Callable[[Any], Any]) -> Callable[[str], Any]:
    """A setting's check as an argparse ``type``, so that its message is argparse's one-line error."""
    def parse(text: str) -> Any:
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return parse


class _Server(uvicorn.Server):
    """uvicorn that prints where the service listens once it does (``--port 0`` lets the system pick the port)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.should_exit or not self.servers or not self.servers[0].sockets:
            return
        host, port = self.servers[0].sockets[0].getsockname()[:2]
        url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
        print(f"Klaverjas best-card service on {url} (docs: {url}/docs)", flush=True)


def serve_main(argv: list[str] | None = None) -> int:
    """``tabletop serve klaverjas [--config FILE] [--host H] [--port P]``: run the service with uvicorn."""
    parser = argparse.ArgumentParser(prog="tabletop serve klaverjas",
                                     description="Run the Klaverjas best-card HTTP service with uvicorn; the URL "
                                                 "(and its /docs page) is printed once it listens.")
    parser.add_argument("--config", help="YAML (or JSON) settings file (keys of ServiceConfig)")
    parser.add_argument("--host", type=_argument(_host), help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=_argument(_port), help="port to listen on (0: any free port; the URL is "
                                                              "printed)")
    args = parser.parse_args(argv)
    try:
        config = ServiceConfig.load(args.config)
        config.host = args.host or config.host
        config.port = config.port if args.port is None else args.port
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        app = create_app(config)  # compiles the kernels before the URL is printed; a model file that fails is named
    except ValueError as e:
        parser.error(str(e))
    _Server(uvicorn.Config(app, host=config.host, port=config.port, log_level="warning")).run()
    return 0
