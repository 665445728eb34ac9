"""The best-card HTTP service (``tabletop serve klaverjas``; extra ``[serve]``: fastapi, uvicorn, httpx, pyyaml).

``POST /v1/best-card`` answers which card to play from a trick in progress; ``GET /healthz``; the
OpenAPI spec at ``/docs``. Status codes: 200; 400 malformed or inconsistent input (FastAPI's own
validation errors included: this service answers them with 400, not FastAPI's default 422), the
message names the field; 413 a body over 64 KB; 422 a well-formed request whose position admits no
legal card for the player (not the player's turn, wrong hand size, a hand contradicting a void the
history shows, history that breaks the rules); 503 a model is required (``allowFallback: false``)
and neither the local model nor the external API answered.

Scoring order: the local model (``model.txt``) when loaded, else the external scoring API when
configured, else the deterministic heuristic (reason ``"fallback"``). Whatever a responder says,
``bestCard`` is one of ``legalCards``. ``scoringMode``: ``simple`` ranks by the responder's score;
``winTrick`` ranks cards that take over the trick in progress first; ``points`` adds the card's
immediate point swing (points it brings to the trick, + if our side would then hold it, - if not).

Rule knobs in a request: ``rules`` and ``amsterdamUndertrump`` (legality), ``stukMode`` and
``quartetValues`` (the roem the history scored); ``forced`` undertrumping with Rotterdam rules is a 400.
Kraken and the match format scale or sum deal results but do not change which card is best, so a
request does not carry them.

Configuration: a YAML file (``--config``) with the keys of ``ServiceConfig``, overridden by the
environment variables ``KLAVERJAS_MODEL_PATH``, ``KLAVERJAS_API_URL``, ``KLAVERJAS_API_KEY``,
``KLAVERJAS_API_TIMEOUT_S``. Each request logs one JSON line (request id, sanitised inputs, legal
cards, choice, scores, responder, milliseconds); the API key is never logged.

This module is the ``[serve]`` extra's entry point: it imports fastapi, pydantic, httpx, uvicorn and pyyaml
at its top, and no other module of the package imports it (``tabletop serve klaverjas`` loads it by name).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx
import numpy as np
import uvicorn
import yaml
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from tabletop_rl.games.klaverjas import model as M
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.baselines import heuristic_scores
from tabletop_rl.games.klaverjas.determinize import excluded_by_play

__all__ = ["BestCardRequest", "BestCardResponse", "Candidate", "ErrorResponse", "HistoryTrick", "ModelInfo",
           "ServiceConfig", "TablePlay", "create_app", "position_from_request", "serve_main"]

_MAX_BODY_BYTES = 64 * 1024
_CARD_PATTERN = r"^(7|8|9|10|J|Q|K|A)[CDHS]$"
_log = logging.getLogger("tabletop_rl.ui.klaverjas_service")


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
        """Settings from the YAML file ``path`` (optional), then the environment; ``ValueError`` on bad keys."""
        values: dict[str, Any] = {}
        if path:
            data = yaml.safe_load(Path(path).read_text()) or {}
            data = data.get("klaverjas_service", data) if isinstance(data, dict) else data
            if not isinstance(data, dict):
                raise ValueError(f"config {path}: expected a mapping of settings")
            unknown = set(data) - {f.name for f in fields(cls)}
            if unknown:
                raise ValueError(f"config {path}: unknown setting(s) {sorted(unknown)}")
            values.update(data)
        env: Mapping[str, str] = os.environ if environ is None else environ
        for name in ("model_path", "api_url", "api_key", "api_timeout_s"):
            key = f"KLAVERJAS_{name.upper()}"
            if key in env:
                values[name] = env[key]
        config = cls(**values)
        config.api_timeout_s = float(config.api_timeout_s)
        config.port = int(config.port)
        return config


# --- request / response schema -----------------------------------------------------------------
_Card = Annotated[str, Field(pattern=_CARD_PATTERN)]
_Seat = Annotated[int, Field(ge=0, le=3)]


class TablePlay(BaseModel):
    model_config = ConfigDict(extra="forbid")
    player: _Seat
    card: _Card


class HistoryTrick(BaseModel):
    model_config = ConfigDict(extra="forbid")
    leader: _Seat
    plays: list[str | TablePlay] = Field(min_length=4, max_length=4)
    winner: int | None = Field(default=None, ge=0, le=3)
    points: int | None = None


class BestCardRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hand: list[str] = Field(min_length=1, max_length=8)
    table: list[TablePlay] = Field(default_factory=list)
    history: list[HistoryTrick] = Field(default_factory=list, max_length=7)
    trump: str = Field(pattern=r"^[CDHS]$")
    playerPosition: _Seat
    leaderPosition: int | None = Field(default=None, ge=0, le=3)
    partnerPosition: int | None = Field(default=None, ge=0, le=3)
    makerPosition: int | None = Field(default=None, ge=0, le=3,
                                      description="seat that chose trump (default: leader of the first trick)")
    scoringMode: Literal["simple", "points", "winTrick"] = "simple"
    topK: int = Field(default=3, ge=1, le=8)
    requestId: str | None = Field(default=None, max_length=200)
    rules: Literal["rotterdam", "amsterdam"] = "rotterdam"
    amsterdamUndertrump: Literal["forbidden_unless_only_trumps", "forced"] = Field(
        default="forbidden_unless_only_trumps", description="Amsterdam house rule: undertrump an opponent's "
                                                            "trump you cannot beat (forced) or discard")
    stukMode: Literal["same_trick", "declared_from_hand"] = Field(
        default="same_trick", description="how the history's stuk (K+Q of trump) scored")
    quartetValues: Literal["standard", "low_100", "all_100"] = Field(
        default="standard", description="quartet roem preset for the history")
    allowFallback: bool = True


class Candidate(BaseModel):
    card: str
    score: float
    legal: bool
    reason: str


class ModelInfo(BaseModel):
    name: str
    version: str


class BestCardResponse(BaseModel):
    bestCard: str
    candidates: list[Candidate]
    legalCards: list[str]
    model: ModelInfo
    requestId: str | None


class ErrorResponse(BaseModel):
    detail: str


class _RequestError(Exception):
    """A request the service refuses: ``status`` 400/422/503 and a message naming the field."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# --- position from a request ---------------------------------------------------------------------
def _card(text: str, field_name: str) -> int:
    try:
        return R.card_id(text)
    except ValueError as e:
        raise _RequestError(400, f"{field_name}: {e}") from None


def _check_places(req: BestCardRequest) -> tuple[list[int], list[list[int]], list[int]]:
    """Card ids of the hand, history tricks and table; 400 for a card in two places."""
    seen: dict[int, str] = {}

    def place(text: str, where: str) -> int:
        card = _card(text, where)
        if card in seen:
            raise _RequestError(400, f"{where}: card {text} already appears in {seen[card]}")
        seen[card] = where
        return card

    hand = [place(c, f"hand[{i}]") for i, c in enumerate(req.hand)]
    history = []
    for i, trick in enumerate(req.history):
        cards = []
        for k, play in enumerate(trick.plays):
            text = play if isinstance(play, str) else play.card
            if not isinstance(play, str) and play.player != (trick.leader + k) % 4:
                raise _RequestError(400, f"history[{i}].plays[{k}].player: expected seat {(trick.leader + k) % 4} "
                                         f"(clockwise from leader {trick.leader})")
            cards.append(place(text, f"history[{i}].plays[{k}]"))
        history.append(cards)
    table = [place(p.card, f"table[{k}]") for k, p in enumerate(req.table)]
    return hand, history, table


def _check_seats(req: BestCardRequest) -> int:
    """The leader of the trick in progress; 400 for seat inconsistencies."""
    if len(req.table) > 3:
        raise _RequestError(400, f"table: at most 3 cards can lie on the table, got {len(req.table)}")
    if req.partnerPosition is not None and req.partnerPosition != (req.playerPosition + 2) % 4:
        raise _RequestError(400, f"partnerPosition: the partner sits opposite seat {req.playerPosition}, "
                                 f"at {(req.playerPosition + 2) % 4}")
    if req.table and req.leaderPosition is None:
        raise _RequestError(400, "leaderPosition: required when the table is not empty")
    leader = req.playerPosition if req.leaderPosition is None else req.leaderPosition
    for k, play in enumerate(req.table):
        if play.player != (leader + k) % 4:
            raise _RequestError(400, f"table[{k}].player: expected seat {(leader + k) % 4} "
                                     f"(clockwise from leaderPosition {leader})")
    return leader


def position_from_request(req: BestCardRequest) -> np.ndarray:
    """The state row of the player's view (other hands empty); 400/422 ``_RequestError`` otherwise."""
    hand, history, table = _check_places(req)
    leader = _check_seats(req)
    trump = R.suit_id(req.trump)
    if (leader + len(table)) % 4 != req.playerPosition:
        raise _RequestError(422, f"no legal card: seat {(leader + len(table)) % 4} is to act, "
                                 f"not playerPosition {req.playerPosition}")
    if len(hand) != 8 - len(history):
        raise _RequestError(422, f"no legal card: after {len(history)} tricks the hand must hold "
                                 f"{8 - len(history)} cards, got {len(hand)}")
    state = _rules_state(req)
    first_leader = req.history[0].leader if req.history else leader
    state[R.TRUMP], state[R.PHASE] = trump, R.PLAYING
    state[R.MAKER] = first_leader if req.makerPosition is None else req.makerPosition
    state[R.HAND:R.HAND + 4] = 0
    state[R.HAND + req.playerPosition] = R.hand_of(hand)
    _replay_history(state, req, history)
    t = len(history)
    if req.history and leader != int(state[R.WINNER + t - 1]):
        raise _RequestError(422, f"no legal card: leaderPosition {leader} did not win the last trick "
                                 f"(seat {int(state[R.WINNER + t - 1])} did)")
    state[R.LEADER + t] = leader
    state[R.TRICK + 4 * t:R.TRICK + 4 * t + len(table)] = table
    state[R.TRICK_NO], state[R.IN_TRICK], state[R.CURRENT] = t, len(table), req.playerPosition
    _declared_stuk(state)
    _check_voids(state, req.playerPosition)
    return state


def _rules_state(req: BestCardRequest) -> np.ndarray:
    """A row with the request's rule knobs; 400 naming the field for a combination the rules refuse."""
    try:
        return R.new_state(rules=req.rules, stuk_mode=req.stukMode, quartet_values=req.quartetValues,
                           amsterdam_undertrump_vs_opponent=req.amsterdamUndertrump)
    except ValueError as e:
        raise _RequestError(400, f"amsterdamUndertrump: {e}") from None


def _declared_stuk(state: np.ndarray) -> None:
    """``stukMode: declared_from_hand``: 20 roem to the team of a seat that played both K and Q of trump."""
    trump = int(state[R.TRUMP])
    seats = {R.player_of(state, 8 * trump + rank) for rank in (R.KING, R.QUEEN)}
    if int(state[R.STUK_MODE]) == R.STUK_DECLARED and len(seats) == 1 and -1 not in seats:
        team = R.team_of(seats.pop())
        state[R.ROEM + team] += R.STUK_ROEM
        state[R.DECLARED_STUK] = team


def _replay_history(state: np.ndarray, req: BestCardRequest, history: list[list[int]]) -> None:
    """Fill the finished tricks; 422 when leaders, winners or points contradict the rules."""
    trump = int(state[R.TRUMP])
    for i, (trick, cards) in enumerate(zip(req.history, history)):
        if i and trick.leader != int(state[R.WINNER + i - 1]):
            raise _RequestError(422, f"no legal card: history[{i}].leader is {trick.leader} but seat "
                                     f"{int(state[R.WINNER + i - 1])} won the trick before")
        row = np.array(cards, np.int64)
        winner = (trick.leader + R.winning_position(row, 4, trump)) % 4
        points = int(R.trick_points(row, trump))
        if trick.winner is not None and trick.winner != winner:
            raise _RequestError(422, f"no legal card: history[{i}].winner is {trick.winner}, the rules say {winner}")
        if trick.points is not None and trick.points not in (points, points + R.LAST_TRICK_BONUS * (i == 7)):
            raise _RequestError(422, f"no legal card: history[{i}].points is {trick.points}, the cards make {points}")
        state[R.TRICK + 4 * i:R.TRICK + 4 * i + 4] = cards
        state[R.LEADER + i], state[R.WINNER + i] = trick.leader, winner
        state[R.TRICK_ROEM + i] = R.trick_roem(row, trump, state[R.QUARTETS:R.QUARTETS + 8],
                                               state[R.STUK_MODE] == R.STUK_SAME_TRICK)
        state[R.CARD_POINTS + R.team_of(winner)] += points
        state[R.ROEM + R.team_of(winner)] += state[R.TRICK_ROEM + i]


def _check_voids(state: np.ndarray, seat: int) -> None:
    """422 when the player's own hand contradicts what the player's earlier plays showed."""
    trump, regime = int(state[R.TRUMP]), int(R.follow_regime(state))
    hand = int(state[R.HAND + seat])
    for t in range(int(state[R.TRICK_NO])):
        cards = [int(c) for c in state[R.TRICK + 4 * t:R.TRICK + 4 * t + 4]]
        k = (seat - int(state[R.LEADER + t])) % 4
        if hand & excluded_by_play(cards[:k], cards[k], trump, regime):
            raise _RequestError(422, f"no legal card: history[{t}] shows seat {seat} could not hold "
                                     f"what its hand now holds (an illegal play or a wrong hand)")


# --- responders ----------------------------------------------------------------------------------
class _ExternalScorer:
    """Adapter for an external scoring API: ``POST {base_url}/score`` with the request and the legal cards,
    bearer ``api_key``; the answer ``{"scores": {"JH": 0.9, ...}, "model": {"name", "version"}}``."""

    def __init__(self, base_url: str, api_key: str = "", timeout_s: float = 1.0) -> None:
        self.base_url, self.timeout_s = base_url.rstrip("/"), timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=timeout_s, headers=headers)

    def scores(self, body: dict, legal: list[str]) -> tuple[dict[str, float], dict]:
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


def _immediate_swing(state: np.ndarray, card: int) -> tuple[bool, float]:
    """Whether ``card`` would take over the trick in progress, and the point swing for our side."""
    trump, seat = int(state[R.TRUMP]), int(state[R.CURRENT])
    table = np.zeros(4, np.int64)
    n = R.current_trick(state, table)
    points = float(sum(R.card_points(int(c), trump) for c in table[:n]) + R.card_points(card, trump))
    if n == 0:
        return True, 0.0
    table[n] = card
    holder = (int(state[R.LEADER + int(state[R.TRICK_NO])]) + R.winning_position(table, n + 1, trump)) % 4
    takes = holder == seat
    return takes, points if R.team_of(holder) == R.team_of(seat) else -points


def _model_info(model: M.MLP) -> dict[str, Any]:
    return {"name": "klaverjas-mlp", "version": model.meta.get("created", "unknown")}


class _BestCardService:
    """Chooses a card for a request: validation, responders in order, re-ranking, logging."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        path = M.packaged_model_path() if config.model_path == "packaged" else (config.model_path or None)
        self.model = M.load(path) if path else None
        self.model_info = _model_info(self.model) if self.model is not None else None
        self.external = (_ExternalScorer(config.api_url, config.api_key, config.api_timeout_s) if config.api_url
                         else None)

    def choose(self, req: BestCardRequest) -> dict:
        """The response body for a validated request (``_RequestError`` for 400/422/503)."""
        start = time.perf_counter()
        state = position_from_request(req)
        mask = np.zeros(R.NUM_ACTIONS, np.bool_)
        if R.legal_mask(state, mask) == 0:
            raise _RequestError(422, "no legal card in this position")
        legal = [int(c) for c in np.flatnonzero(mask)]
        scores, reasons, info = self._score(req, state, legal)
        ranked = self._rank(req.scoringMode, state, legal, scores)
        hand = R.cards_of(int(state[R.HAND + req.playerPosition]))
        candidates = [{"card": R.card_name(c), "score": round(float(ranked.get(c, scores.get(c, 0.0))), 4),
                       "legal": c in ranked, "reason": reasons.get(c, "not legal")}
                      for c in sorted(hand, key=lambda c: (c not in ranked, -ranked.get(c, 0.0), c))]
        best = max(ranked, key=lambda c: (ranked[c], -c))
        body = {"bestCard": R.card_name(best), "candidates": candidates[:req.topK],
                "legalCards": [R.card_name(c) for c in legal], "model": info, "requestId": req.requestId}
        _log.info(json.dumps({"event": "best_card", "requestId": req.requestId, "input": _sanitised(req),
                              "legalCards": body["legalCards"], "bestCard": body["bestCard"],
                              "scores": {k["card"]: k["score"] for k in candidates}, "model": info["name"],
                              "ms": round((time.perf_counter() - start) * 1000, 2)}))
        return body

    def _score(self, req: BestCardRequest, state: np.ndarray,
               legal: list[int]) -> tuple[dict[int, float], dict[int, str], dict[str, Any]]:
        """Scores and reasons by card id, and the responder's name and version."""
        if self.model is not None:
            scores = self.model.card_scores(state, legal)
            return scores, dict.fromkeys(legal, "local model"), _model_info(self.model)
        if self.external is not None:
            try:
                by_name, info = self.external.scores(req.model_dump(), [R.card_name(c) for c in legal])
                return ({c: by_name.get(R.card_name(c), float("-inf")) for c in legal},
                        dict.fromkeys(legal, "external model"), info)
            except RuntimeError as e:
                _log.warning(json.dumps({"event": "external_failed", "requestId": req.requestId, "error": str(e)}))
        if not req.allowFallback:
            raise _RequestError(503, "allowFallback: a model is required but none is available "
                                     "(no local model loaded and the external API did not answer)")
        heuristic = heuristic_scores(state, legal)
        return ({c: s for c, (s, _) in heuristic.items()}, dict.fromkeys(legal, "fallback"),
                {"name": "heuristic", "version": "1"})

    @staticmethod
    def _rank(mode: str, state: np.ndarray, legal: list[int], scores: dict[int, float]) -> dict[int, float]:
        """Scores of the legal cards after the ``scoringMode`` re-ranking (non-finite scores count as lowest)."""
        finite = {c: (s if np.isfinite(s) else -1e9) for c, s in scores.items() if c in legal}
        if mode == "simple":
            return finite
        swing = {c: _immediate_swing(state, c) for c in legal}
        if mode == "winTrick":
            return {c: finite[c] + (1e6 if swing[c][0] else 0.0) for c in legal}
        return {c: swing[c][1] + finite[c] / 1000 for c in legal}


def _sanitised(req: BestCardRequest) -> dict:
    """Request fields worth logging: the position, not free text beyond the request id."""
    return {"hand": req.hand, "table": [p.card for p in req.table], "tricks": len(req.history),
            "trump": req.trump, "playerPosition": req.playerPosition, "rules": req.rules,
            "amsterdamUndertrump": req.amsterdamUndertrump, "stukMode": req.stukMode,
            "quartetValues": req.quartetValues, "scoringMode": req.scoringMode}


# --- the app -------------------------------------------------------------------------------------
def _field_message(errors: Sequence[Any]) -> str:
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return f"{where}: {first.get('msg', 'invalid')}"


def create_app(config: ServiceConfig | None = None):
    """The FastAPI application (``uvicorn.run(create_app(), ...)``)."""
    service = _BestCardService(config or ServiceConfig())
    app = FastAPI(title="Klaverjas best-card service", version="1",
                  description=__doc__.split("\n\n", 1)[1])
    errors = {400: "Malformed or inconsistent input; FastAPI's schema validation errors are mapped to 400 "
                   "(not 422). `detail` names the field.",
              413: "Request body over 64 KB.", 422: "Well-formed, but the position admits no legal card.",
              503: "A model is required (allowFallback false) and none answered."}

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > _MAX_BODY_BYTES:
            return JSONResponse({"detail": f"body: larger than {_MAX_BODY_BYTES} bytes"}, status_code=413)
        if request.method == "POST":
            body = await request.body()
            if len(body) > _MAX_BODY_BYTES:
                return JSONResponse({"detail": f"body: larger than {_MAX_BODY_BYTES} bytes"}, status_code=413)
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def validation_as_400(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _field_message(exc.errors())}, status_code=400)

    @app.exception_handler(_RequestError)
    async def refused(request: Request, exc: _RequestError):
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    def best_card(req: BestCardRequest) -> dict:
        return service.choose(req)

    documented: dict[int | str, dict[str, Any]] = {code: {"model": ErrorResponse, "description": text}
                                                   for code, text in errors.items()}
    app.post("/v1/best-card", response_model=BestCardResponse, responses=documented)(best_card)

    @app.get("/healthz")
    def healthz() -> dict:
        return {"status": "ok", "model": service.model_info, "external": service.external is not None}

    return app


def serve_main(argv: list[str] | None = None) -> int:
    """``tabletop serve klaverjas [--config FILE] [--host H] [--port P]``: run the service with uvicorn."""
    parser = argparse.ArgumentParser(prog="tabletop serve klaverjas", description=serve_main.__doc__)
    parser.add_argument("--config", help="YAML settings file (keys of ServiceConfig)")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    args = parser.parse_args(argv)
    try:
        config = ServiceConfig.load(args.config)
    except (OSError, ValueError, TypeError) as e:
        parser.error(str(e))
    config.host = args.host or config.host
    config.port = args.port or config.port
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    uvicorn.run(create_app(config), host=config.host, port=config.port, log_level="warning")
    return 0
