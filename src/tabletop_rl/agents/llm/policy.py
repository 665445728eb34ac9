"""``llm``: a chat model as a player, for any game that has a prompt module (``tabletop_rl.agents.llm.<game>``).

Each decision sends a fixed system prompt (the rules, the reply format) and a user message with the
position from the player's seat; the reply is JSON ``{"reasoning": str, "action": ...}``. A reply that
cannot be parsed or names an illegal move is re-prompted with the exact error and the previous reply,
up to ``max_retries`` times; then the ``fallback`` moves (``random``, ``greedy``, or ``forfeit``, which
raises ``ForfeitError`` so the game is scored as a loss). A ``preset`` (``LLM_PRESETS``) fixes the settings
that decide how a game is scored and what the model is shown, so results compare with other LLM game
benchmarks; ``policy.settings`` states them for the records. Every move is accounted in ``policy.moves``
(``policy.accounting`` sums them): attempts, parse failures, illegal and truncated replies, tokens,
cost, latency. Network faults are retried by ``ChatClient``; ``FatalLLMError`` (a refused request)
stops the match and ``LLMUnavailableError`` (retries spent) makes it void.

>>> from tabletop_rl import SplendorGame
>>> class Scripted:                      # any backend: complete(request) -> ChatReply
...     def complete(self, request):
...         return ChatReply('{"reasoning": "gems first", "action": "take:white,blue,green"}', "stop")
>>> game = SplendorGame(2, seed=1)
>>> p = LLMPolicy(backend=Scripted())
>>> p.act(None, game.legal_mask(), game.policy_info(0))
0
>>> p.accounting["attempts"], p.moves[0].reasoning
(1, 'gems first')
"""

from __future__ import annotations

import importlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from tabletop_rl.agents.llm.client import (
    DEFAULT_BASE_URL,
    ChatBackend,
    ChatClient,
    ChatReply,
    ChatRequest,
    FatalLLMError,
    LLMError,
    LLMUnavailableError,
    OpenAIBackend,
    ResponseCache,
    RetrySettings,
    clip,
    find_api_key,
    is_loopback,
    key_env_vars,
)
from tabletop_rl.agents.registry import Option, make_policy
from tabletop_rl.core.game import view_game_and_seat
from tabletop_rl.core.policy import BasePolicy, Policy
from tabletop_rl.core.text import quote
from tabletop_rl.games import GAMES
from tabletop_rl.games import entry as game_entry

__all__ = ["FINAL_ANSWER", "LLM_OPTIONS", "LLM_PRESETS", "LLM_RANGES", "REASONING_CHARS", "REJECTED_KEPT",
           "REPLY_CHARS", "SERVER_DEFAULTS", "ChatReply", "FatalLLMError", "ForfeitError", "GamePrompt", "LLMError",
           "LLMPolicy", "LLMUnavailableError", "MoveRecord", "PlannedMove", "ReplyError", "chat_client", "check_ranges",
           "forget_server_modes", "parse_reply", "preset_settings", "server_defaults", "server_mode",
           "summarize_moves"]

#: The line a plain-text reply ends with when the server gives no JSON mode: ``FINAL ANSWER: 12``.
FINAL_ANSWER = "FINAL ANSWER:"
#: Reply formats, most constrained first (``_response_format``): the JSON schema of the reply as OpenAI spells it
#: (OpenAI, OpenRouter, vLLM, Ollama 0.5+, llama.cpp's llama-server), the same schema in JSON mode as llama.cpp spells
#: it (llama-cpp-python's server, llama-server), JSON mode without a schema, plain text. ``mode=auto`` starts at the
#: one the server last took (``server_mode``) and steps down when the server refuses a ``response_format``: through
#: the two that constrain the reply before the two that do not.
_MODES = ("json_schema", "json_object_schema", "json_object", "text")
_FALLBACKS = ("random", "greedy", "forfeit")
#: The default ``maxLength`` of ``reasoning`` in the reply schema, and what a move record keeps of it.
REASONING_CHARS = 600
#: Characters kept of each rejection's reason in a move record (the message may quote the model's reply).
_ERROR_CHARS = 300
#: Characters kept of each rejected reply's text in a move record, and how many rejected replies it keeps (the last).
REPLY_CHARS = 2000
REJECTED_KEPT = 8
#: The settings without a preset: a failed reply falls back to a random move, and the legal moves are listed.
_NO_PRESET: dict[str, Any] = {"fallback": "random", "legal_list": True, "max_retries": 2}
#: Named presets (``preset=NAME``): each fixes the settings that decide how a game is scored and what the
#: model sees, as the harness it is named after does (docs/llm.md, "Comparable numbers"). Both forfeit:
#: benchmarks score a player without a legal move as the loser, never as a random move.
LLM_PRESETS: dict[str, dict[str, Any]] = {
    # Kaggle Game Arena: no list of legal moves, a few "rethink" prompts after an illegal move, then a loss.
    "benchmark": {"fallback": "forfeit", "legal_list": False, "max_retries": 3},
    # TextArena: the legal moves in the observation, one re-prompt (its default error_allowance), then a loss.
    "textarena": {"fallback": "forfeit", "legal_list": True, "max_retries": 1},
}
#: Spec options (``llm:model=...,temperature=0.2``) with their defaults; see docs/llm.md. ``None``: the
#: preset's value, or ``_NO_PRESET``'s without one (``timeout`` and ``concurrency``: from ``SERVER_DEFAULTS``).
LLM_OPTIONS = (
    Option("model", str, "openai/gpt-4o-mini"),
    Option("base_url", str, DEFAULT_BASE_URL),
    Option("temperature", float, 0.2),
    Option("max_tokens", int, 1000),        # completion limit per reply
    Option("preset", str, ""),              # "" | benchmark | textarena: fixes the three options below
    Option("max_retries", int, None),       # re-prompts after an unusable reply, then the fallback (2)
    Option("fallback", str, None),          # random | greedy | forfeit (random)
    Option("legal_list", bool, None),       # list the legal moves, constrain "action" to their ids (true)
    Option("reasoning_chars", int, REASONING_CHARS),  # maxLength of "reasoning" in the JSON schema, and kept
    Option("mode", str, "auto"),            # auto | json_schema | json_object_schema | json_object | text
    Option("timeout", float, None),         # seconds for a whole HTTP request (600 local, 60 remote: SERVER_DEFAULTS)
    Option("net_retries", int, 6),          # retries after timeouts, connection errors, 408/409/429/5xx
    Option("backoff", float, 1.0),          # first backoff in seconds (doubling, with jitter)
    Option("concurrency", int, None),       # requests in flight per base_url, all LLM players (1 local, 8 remote)
    Option("cache", str, ""),               # directory of the on-disk response cache ("" = off)
    Option("api_key_env", str, ""),         # an extra environment variable to read the key from
)
#: The range of each numeric option of an LLM player: ``(low, high, low excluded)``. The upper bounds keep a
#: player's time and memory bounded whatever a spec says (docs/llm.md, "Options").
LLM_RANGES: dict[str, tuple[float, float, bool]] = {
    "temperature": (0, 2, False), "max_tokens": (1, 100_000, False), "max_retries": (0, 10, False),
    "net_retries": (0, 20, False), "reasoning_chars": (1, 10_000, False), "timeout": (0, 3600, True),
    "backoff": (0, 60, True), "concurrency": (1, 64, False), "max_tool_calls": (1, 100, False)}
#: ``timeout`` and ``concurrency`` where a spec leaves them unset, by where ``base_url`` points (``server_defaults``).
#: A local (loopback) server is often one process that computes one reply at a time, slowly (llama.cpp on a CPU):
#: requests sent together wait in its queue, and one given up at a short deadline is still computed while the copy
#: sent again waits behind it. So one request at a time, with time to finish. A remote provider serves many at once.
SERVER_DEFAULTS: dict[str, dict[str, Any]] = {"local": {"timeout": 600.0, "concurrency": 1},
                                              "remote": {"timeout": 60.0, "concurrency": 8}}
_COUNTERS = ("attempts", "parse_failures", "illegal_replies", "truncated", "network_retries", "cache_hits",
             "prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")
_SOURCES = ("llm", "planned", "forced", "fallback", "forfeit")


class ReplyError(ValueError):
    """An unusable reply: ``kind`` is ``"parse"`` (not understood) or ``"illegal"`` (not a legal move now)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ForfeitError(RuntimeError):
    """Raised by a policy with ``fallback=forfeit`` that got no usable reply: ``seat`` loses the game."""

    def __init__(self, message: str, seat: int) -> None:
        super().__init__(message)
        self.seat = seat


@dataclass(frozen=True)
class PlannedMove:
    """The action to play now, and actions planned for the decisions right after it (token returns)."""

    action: int
    plan: tuple[int, ...] = ()
    #: why the planned actions the reply gave stop short ("" when none was dropped): those left are asked for
    dropped: str = ""


class GamePrompt(Protocol):
    """What a game supplies for LLM play (Splendor's is ``tabletop_rl.agents.llm.splendor.PROMPT``)."""

    game: str           # the registry's game name (for the greedy fallback)
    system_prompt: str  # fixed, byte-identical every turn

    def user_message(self, game: Any, seat: int, legal: Sequence[int], legal_list: bool) -> str:
        ...

    def action_schema(self, game: Any, seat: int, legal: Sequence[int], legal_list: bool) -> dict[str, Any]:
        ...

    def parse_action(self, value: Any, game: Any, seat: int, legal: Sequence[int]) -> PlannedMove:
        ...

    def move_name(self, action: int) -> str:
        ...


# --- replies ----------------------------------------------------------------------------------
_FENCED = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.S)
_MARKER = re.compile(re.escape(FINAL_ANSWER) + r"\s*(.+?)\s*$", re.I | re.M)


def parse_reply(text: str) -> tuple[str, Any]:
    """``(reasoning, action)`` from a reply: a JSON object (bare, fenced or inside prose) with an
    ``action`` field, else the last ``FINAL ANSWER:`` line. ``ReplyError("parse", ...)`` otherwise.

    >>> parse_reply('{"reasoning": "cheap", "action": 45}')
    ('cheap', 45)
    >>> parse_reply("I will buy it.\\nFINAL ANSWER: buy:1.0")
    ('I will buy it.', 'buy:1.0')
    """
    obj = _json_object(text)
    if obj is not None and "action" in obj:
        reasoning = obj.get("reasoning", "")
        return (reasoning if isinstance(reasoning, str) else json.dumps(reasoning)), obj["action"]
    answers = list(_MARKER.finditer(text))
    if answers:
        last = answers[-1]
        return text[:last.start()].strip(), last.group(1)
    if obj is not None:
        raise ReplyError("parse", 'the JSON object has no "action" field')
    raise ReplyError("parse", f"no JSON object and no '{FINAL_ANSWER}' line found in the reply")


def _json_object(text: str) -> dict | None:
    candidates = [text.strip()]
    fenced = _FENCED.search(text)
    if fenced:
        candidates.append(fenced.group(1))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _response_format(mode: str, action_schema: Mapping[str, Any], reasoning_chars: int,
                     strict: bool) -> dict[str, Any] | None:
    """The ``response_format`` for a mode (``_MODES``): the JSON schema of the reply as OpenAI spells it
    (``json_schema``) or as llama.cpp does (``json_object_schema``), JSON mode, or none (plain text).

    >>> _response_format("json_object_schema", {"enum": [0, 3]}, 100, True)["schema"]["properties"]["action"]
    {'enum': [0, 3]}
    >>> _response_format("json_object", {}, 100, True)
    {'type': 'json_object'}
    """
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "text":
        return None
    schema = {"type": "object", "additionalProperties": False, "required": ["reasoning", "action"],
              "properties": {"reasoning": {"type": "string", "maxLength": reasoning_chars},
                             "action": dict(action_schema)}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "move", "strict": strict, "schema": schema}}


# --- what each server takes -----------------------------------------------------------------------
#: Per server ``(base_url, model)``, the reply format ``mode=auto`` last found it to take, for the whole process:
#: every auto player of that server starts there, so a refused format is asked for once, not once per player or game.
_SERVER_MODES: dict[tuple[str, str], str] = {}
_SERVER_MODES_LOCK = threading.Lock()
#: Says on stderr (as the client's warnings) when a server refused a reply format and which one comes next.
_log = logging.getLogger(__name__)


def _server_key(base_url: str, model: str) -> tuple[str, str]:
    return base_url.rstrip("/"), model


def server_mode(base_url: str, model: str) -> str:
    """The reply format ``mode=auto`` asks ``model`` at ``base_url`` for: the first of ``_MODES``, or the one this
    process found the server to take after it refused those before it.

    >>> server_mode("http://127.0.0.1:1/v1", "m")
    'json_schema'
    """
    with _SERVER_MODES_LOCK:
        return _SERVER_MODES.get(_server_key(base_url, model), _MODES[0])


def _step_down(base_url: str, model: str, refused: str) -> str | None:
    """The format to ask for after the server refused ``refused`` (``None``: none is left), remembered for the
    server. Only ever further down: players that were refused at once by the same server agree on the next one."""
    key = _server_key(base_url, model)
    with _SERVER_MODES_LOCK:
        known = _MODES.index(_SERVER_MODES.get(key, _MODES[0]))
        after = max(known, _MODES.index(refused) + 1)
        if after >= len(_MODES):
            return None
        _SERVER_MODES[key] = _MODES[after]
    if after > known:
        _log.warning("%s refused reply format %s for model %s; mode=auto asks it for %s from now on", key[0],
                     refused, model, _MODES[after])
    return _MODES[after]


def forget_server_modes() -> None:
    """Forget which reply format each server took (``server_mode``): the next auto player starts at ``json_schema``
    again, e.g. after a server was replaced by another at the same address."""
    with _SERVER_MODES_LOCK:
        _SERVER_MODES.clear()


def server_defaults(base_url: str, timeout: float | None = None,
                    concurrency: int | None = None) -> tuple[float, int, str | None]:
    """``(timeout, concurrency, defaults)``: the given values, the unset (``None``) ones from ``SERVER_DEFAULTS`` for
    where ``base_url`` points, and which defaults applied: ``"local"`` (a loopback server), ``"remote"``, or
    ``None`` when both were given.

    >>> server_defaults("http://127.0.0.1:8080/v1"), server_defaults("https://openrouter.ai/api/v1", timeout=30)
    ((600.0, 1, 'local'), (30, 8, 'remote'))
    """
    kind = "local" if is_loopback(base_url) else "remote"
    defaults = SERVER_DEFAULTS[kind]
    applied = kind if timeout is None or concurrency is None else None
    return (defaults["timeout"] if timeout is None else timeout,
            defaults["concurrency"] if concurrency is None else concurrency, applied)


# --- accounting -------------------------------------------------------------------------------
@dataclass
class MoveRecord:
    """One decision: how it was made (``source``: llm, planned, forced, fallback, forfeit) and what it cost.

    ``attempts`` counts replies asked for; ``parse_failures``/``illegal_replies``/``truncated`` the unusable
    ones by kind (a reply cut off at ``max_tokens`` is ``truncated``, whatever else is wrong with it).
    ``time_s`` is the decision's wall time: every call, failed or refused ones included, the backoff waits and a
    fallback's move; ``latency_s`` the time of the calls whose replies came. ``rejected`` holds the last
    ``REJECTED_KEPT`` unusable replies, each ``{"kind", "reason", "reply"}``; ``plan_note`` why the token returns
    the played reply gave stop short (they are asked for next); ``fallback_reason`` says why a
    ``fallback`` or ``forfeit`` move was not the model's. ``reasoning``, each reason and each reply are kept cut to a
    bound (``clip``): they are written in every record and log.
    """

    seat: int
    ply: int | None
    action: int = -1
    move: str = ""
    source: str = "llm"
    mode: str | None = None
    attempts: int = 0
    parse_failures: int = 0
    illegal_replies: int = 0
    truncated: int = 0
    network_retries: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    latency_s: float = 0.0
    time_s: float = 0.0
    reasoning: str = ""
    rejected: list[dict[str, str]] = field(default_factory=list)
    fallback_reason: str = ""
    plan_note: str = ""

    def add_reply(self, reply: ChatReply, mode: str) -> None:
        self.attempts += 1
        self.mode = mode
        self.network_retries += reply.network_retries
        self.cache_hits += reply.cached
        self.truncated += reply.truncated
        usage = reply.usage
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.reasoning_tokens += usage.reasoning_tokens
        self.cached_tokens += usage.cached_tokens
        if usage.cost is not None:
            self.cost = (self.cost or 0.0) + usage.cost
        self.latency_s += reply.latency_s

    def reject(self, error: ReplyError, reply: str, truncated: bool) -> None:
        """Count an unusable reply (text ``reply``) and keep it with the reason (``error``)."""
        if not truncated:
            self.parse_failures += error.kind == "parse"
            self.illegal_replies += error.kind == "illegal"
        self.rejected.append({"kind": "truncated" if truncated else error.kind,
                              "reason": clip(str(error), _ERROR_CHARS), "reply": clip(reply, REPLY_CHARS)})
        del self.rejected[:-REJECTED_KEPT]

    @contextmanager
    def timed(self) -> Iterator[None]:
        """Sets ``time_s`` to the wall time of the block, however it ends (a forfeit raises)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.time_s = time.perf_counter() - start

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize_moves(moves: Sequence[MoveRecord]) -> dict[str, Any]:
    """Per-game totals: moves by source, the counters summed, cost (``None`` if never reported),
    latency, replies per mode, and ``clean``: no move was made for the model by a fallback policy. A forfeit
    leaves a game clean: losing it is the model's own result (its replies were unusable), as benchmarks score it.

    >>> summarize_moves([MoveRecord(0, 0, attempts=2, source="fallback")])["fallback_moves"]
    1
    """
    totals: dict[str, Any] = {"moves": len(moves)}
    totals.update({f"{source}_moves": sum(m.source == source for m in moves) for source in _SOURCES})
    totals.update({name: sum(getattr(m, name) for m in moves) for name in _COUNTERS})
    costs = [m.cost for m in moves if m.cost is not None]
    totals["cost"] = sum(costs) if costs else None
    totals["latency_s"] = sum(m.latency_s for m in moves)
    totals["time_s"] = sum(m.time_s for m in moves)
    modes: dict[str, int] = {}
    for m in moves:
        if m.mode is not None:
            modes[m.mode] = modes.get(m.mode, 0) + m.attempts
    totals["modes"] = modes
    totals["clean"] = totals["fallback_moves"] == 0
    return totals


# --- the policy -------------------------------------------------------------------------------
def _prompt_for(game: Any) -> GamePrompt:
    """The ``PROMPT`` of the game's prompt module, which its record names (``GameEntry.llm_prompt``:
    ``tabletop_rl.agents.llm.splendor`` for a ``SplendorGame``)."""
    name = getattr(game, "name", type(game).__name__)
    module = game_entry(name).llm_prompt if name in GAMES else None
    if module is None:
        raise ValueError(f"no LLM prompt for {type(game).__name__} (its game record names no llm_prompt)")
    prompt: GamePrompt = importlib.import_module(module).PROMPT
    return prompt


class LLMPolicy(BasePolicy):
    """A chat model behind an OpenAI-compatible API; options as in ``LLM_OPTIONS`` (docs/llm.md). ``fallback``,
    ``legal_list`` and ``max_retries`` left at ``None`` come from ``preset`` (``preset_settings``).

    Python-only keywords: ``api_key`` (else the environment), ``backend`` (replaces the ``openai`` SDK,
    e.g. a scripted fake), ``prompt`` (a ``GamePrompt``; else found from the game), ``extra_headers`` and
    ``extra_body`` (passed through on every request), ``sleep`` (the backoff wait).
    """

    def __init__(self, name: str = "llm", seed: int | None = None, *, model: str = "openai/gpt-4o-mini",
                 base_url: str = DEFAULT_BASE_URL, temperature: float = 0.2, max_tokens: int = 1000,
                 preset: str = "", max_retries: int | None = None, fallback: str | None = None,
                 legal_list: bool | None = None, reasoning_chars: int = REASONING_CHARS, mode: str = "auto",
                 timeout: float | None = None, net_retries: int = 6, backoff: float = 1.0,
                 concurrency: int | None = None,
                 cache: str = "", api_key_env: str = "", api_key: str | None = None,
                 backend: ChatBackend | None = None, prompt: GamePrompt | None = None,
                 extra_headers: Mapping[str, str] | None = None, extra_body: Mapping[str, Any] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(name, seed)
        fixed = preset_settings(preset, fallback=fallback, legal_list=legal_list, max_retries=max_retries)
        timeout, concurrency, self.defaults_applied = server_defaults(base_url, timeout, concurrency)
        _check_options(fixed["fallback"], mode, max_retries=fixed["max_retries"], max_tokens=max_tokens,
                       reasoning_chars=reasoning_chars, timeout=timeout, net_retries=net_retries, backoff=backoff,
                       temperature=temperature, concurrency=concurrency)
        self.model, self.temperature, self.max_tokens, self.timeout = model, temperature, max_tokens, timeout
        self.concurrency = concurrency
        self.preset = preset
        self.max_retries, self.fallback, self.legal_list = fixed["max_retries"], fixed["fallback"], fixed["legal_list"]
        self.reasoning_chars = reasoning_chars
        self.auto_mode = mode == "auto"
        self.mode = server_mode(base_url, model) if self.auto_mode else mode  # of the last reply, once there is one
        self.extra_headers, self.extra_body = dict(extra_headers or {}), dict(extra_body or {})
        self.client = chat_client(backend, base_url, api_key, api_key_env, net_retries, backoff, concurrency, cache,
                                  sleep, seed)
        self.moves: list[MoveRecord] = []
        self._prompt = prompt
        self._plan: list[int] = []
        self._fallback_policy: Policy | None = None

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: clear the move records and any planned returns (the server's working mode is kept)."""
        super().reset(seed)
        self.moves = []
        self._plan = []

    @property
    def accounting(self) -> dict[str, Any]:
        """Totals over this game's moves (``summarize_moves``)."""
        return summarize_moves(self.moves)

    @property
    def settings(self) -> dict[str, Any]:
        """What decides how comparable this player's results are: the preset (``None`` without one), how a
        failed reply is scored, whether the legal moves are listed, what the model is asked with, and how long and
        how many at once (``server_defaults``: ``"local"`` or ``"remote"``, the defaults that filled an unset
        ``timeout`` or ``concurrency``; ``None`` when the spec gave both)."""
        return {"preset": self.preset or None, "fallback": self.fallback, "legal_list": self.legal_list,
                "max_retries": self.max_retries, "model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "reasoning_chars": self.reasoning_chars,
                "mode": "auto" if self.auto_mode else self.mode, "timeout": self.timeout,
                "concurrency": self.concurrency, "server_defaults": self.defaults_applied}

    @property
    def forfeit_reason(self) -> str | None:
        """Why this game's last decision was forfeited (``None`` when it was not)."""
        last = self.moves[-1] if self.moves else None
        return last.fallback_reason if last is not None and last.source == "forfeit" else None

    def decide(self, observation: Any, mask: np.ndarray, info: Mapping[str, Any]) -> int:
        game, seat = view_game_and_seat(info, self.name)
        record = MoveRecord(seat=int(seat), ply=getattr(game, "ply", None))
        self.moves.append(record)
        with record.timed():
            return self._decide(game, observation, mask, info, record)

    def _decide(self, game: Any, observation: Any, mask: np.ndarray, info: Mapping[str, Any],
                record: MoveRecord) -> int:
        prompt = self._prompt or _prompt_for(game)
        legal = np.flatnonzero(mask).tolist()
        seat = record.seat
        planned = self._plan.pop(0) if self._plan else None
        if planned is not None and planned in legal:
            record.source = "planned"
            return self._done(record, prompt, planned)
        self._plan = []
        if len(legal) == 1:
            record.source = "forced"
            return self._done(record, prompt, legal[0])
        move = self._ask(prompt, game, seat, legal, record)
        if move is None:
            return self._done(record, prompt, self._fall_back(prompt, observation, mask, info, record))
        self._plan = list(move.plan)
        return self._done(record, prompt, move.action)

    def _done(self, record: MoveRecord, prompt: GamePrompt, action: int) -> int:
        record.action, record.move = int(action), prompt.move_name(int(action))
        return int(action)

    def _ask(self, prompt: GamePrompt, game: Any, seat: int, legal: list[int],
             record: MoveRecord) -> PlannedMove | None:
        """Ask, validate, and re-prompt with the error up to ``max_retries`` times; ``None`` if no reply was usable."""
        messages = [{"role": "system", "content": prompt.system_prompt},
                    {"role": "user", "content": prompt.user_message(game, seat, legal, self.legal_list)}]
        schema = prompt.action_schema(game, seat, legal, self.legal_list)
        for _ in range(self.max_retries + 1):
            reply = self._complete(messages, schema)
            record.add_reply(reply, self.mode)
            try:
                reasoning, value = parse_reply(reply.text)
                move = prompt.parse_action(value, game, seat, legal)
            except ReplyError as error:
                record.reject(error, reply.text, reply.truncated)
                messages += [{"role": "assistant", "content": reply.text or "(empty reply)"},
                             {"role": "user", "content": self._retry_message(error, reply)}]
                continue
            record.reasoning = clip(reasoning, self.reasoning_chars)
            record.plan_note = clip(move.dropped, _ERROR_CHARS)
            return move
        return None

    def _retry_message(self, error: ReplyError, reply: ChatReply) -> str:
        cut = (f"Your reply was cut off at the token limit ({self.max_tokens} tokens); keep the reasoning "
               f"under {self.reasoning_chars} characters. ") if reply.truncated else ""
        return (f"{cut}That reply was rejected: {error}. Reply again with one JSON object "
                '{"reasoning": "...", "action": ...} whose action is one of the legal moves.')

    def _complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ChatReply:
        """One reply, in the mode it was asked in (``self.mode`` after). In ``mode=auto`` it is asked in the server's
        known mode (``server_mode``), and a server that refuses that response format is asked in the next one."""
        base_url = self.client.base_url
        mode = server_mode(base_url, self.model) if self.auto_mode else self.mode
        while True:
            request = ChatRequest(
                model=self.model, messages=list(messages), temperature=self.temperature, max_tokens=self.max_tokens,
                response_format=_response_format(mode, schema, self.reasoning_chars, self.legal_list),
                timeout_s=self.timeout, extra_headers=self.extra_headers, extra_body=self.extra_body)
            try:
                reply = self.client.complete(request)
            except FatalLLMError as e:
                after = _step_down(base_url, self.model, mode) if self.auto_mode and e.rejects_format else None
                if after is None:
                    raise FatalLLMError(f"llm player {self.name!r} stopped: {e}", e.status) from None
                mode = after
                continue
            self.mode = mode
            return reply

    def _fall_back(self, prompt: GamePrompt, observation: Any, mask: np.ndarray, info: Mapping[str, Any],
                   record: MoveRecord) -> int:
        record.fallback_reason = (f"no usable reply in {record.attempts} attempt(s), last error: "
                                  f"{record.rejected[-1]['reason']}")
        if self.fallback == "forfeit":
            record.source = "forfeit"
            raise ForfeitError(f"{self.name} (seat {record.seat}) forfeits: {record.fallback_reason}", record.seat)
        record.source = "fallback"
        if self.fallback == "random":
            legal = np.flatnonzero(mask)
            return int(legal[self.rng.integers(legal.size)])
        if self._fallback_policy is None:
            self._fallback_policy = make_policy("greedy", game=prompt.game)
        return self._fallback_policy.act(observation, mask, info)


def preset_settings(preset: str, **given: Any) -> dict[str, Any]:
    """``fallback``, ``legal_list`` and ``max_retries``: the given ones (``None``: not given) over the preset's.

    A preset's settings are what a record naming it promises, so a given one that differs is an error.

    >>> preset_settings("benchmark", fallback=None, legal_list=None, max_retries=None)["legal_list"]
    False
    >>> preset_settings("", fallback="greedy", legal_list=None, max_retries=None)["fallback"]
    'greedy'
    """
    if preset and preset not in LLM_PRESETS:
        raise ValueError(f"preset={preset!r} is not one of {', '.join(LLM_PRESETS)}")
    base = LLM_PRESETS[preset] if preset else _NO_PRESET
    clashes = [f"{key}={_spec_text(value)}" for key, value in given.items()
               if preset and value is not None and value != base[key]]
    if clashes:
        fixed = ", ".join(f"{key}={_spec_text(value)}" for key, value in base.items())
        raise ValueError(f"preset={preset} sets {fixed}; drop {', '.join(clashes)} or the preset")
    return {key: base[key] if given.get(key) is None else given[key] for key in base}


def _spec_text(value: Any) -> str:
    """A value as a spec writes it (``false``, not ``False``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _check_options(fallback: str, mode: str, **values: float) -> None:
    if fallback not in _FALLBACKS:
        raise ValueError(f"fallback={quote(fallback)} is not one of {', '.join(_FALLBACKS)}")
    if mode not in ("auto",) + _MODES:
        raise ValueError(f"mode={quote(mode)} is not one of auto, {', '.join(_MODES)}")
    check_ranges(**values)


def check_ranges(**values: float) -> None:
    """``ValueError`` naming the first of ``values`` outside its range in ``LLM_RANGES``.

    >>> check_ranges(timeout=30, max_retries=50)
    Traceback (most recent call last):
    ValueError: max_retries must be in 0..10, got 50
    """
    for name, value in values.items():
        low, high, above = LLM_RANGES[name]
        if not (low < value if above else low <= value) or not value <= high:
            shown = f"more than {low:g} and at most {high:g}" if above else f"in {low:g}..{high:g}"
            raise ValueError(f"{name} must be {shown}, got {quote(value)}")


def chat_client(backend: Any, base_url: str, api_key: str | None, api_key_env: str, net_retries: int,
                backoff: float, concurrency: int, cache: str, sleep: Callable[[float], None],
                seed: int | None) -> ChatClient:
    """The ``ChatClient`` an LLM policy talks through: ``backend`` if given (tests), else the openai SDK."""
    if backend is None:
        backend = OpenAIBackend(base_url, _api_key_for(api_key, api_key_env, base_url),
                                default_headers={"X-Title": "tabletop_rl"})
    return ChatClient(backend, base_url, retry=RetrySettings(net_retries, backoff), concurrency=concurrency,
                      cache=ResponseCache(cache) if cache else None, sleep=sleep, seed=seed)


def _api_key_for(explicit: str | None, env_var: str, base_url: str) -> str:
    """The API key for ``base_url`` (``find_api_key``: a provider's variable only for its own host); a
    loopback server without one gets a placeholder (local servers ignore it)."""
    key = find_api_key(explicit, env_var, base_url)
    if key:
        return key
    if is_loopback(base_url):
        return "no-key"
    names = ((env_var,) if env_var else ()) + key_env_vars(base_url)
    if len(names) == 1:
        raise ValueError(f"no API key for {base_url}: set {names[0]} or name the key's variable with "
                         "api_key_env=NAME")
    raise ValueError(f"no API key for {base_url}: set one of {', '.join(names)} (or api_key_env=NAME)")

