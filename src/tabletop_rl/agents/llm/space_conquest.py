"""``llm`` for Space Conquest: a chat model that plays through function calls (``tools.py``).

Each turn starts a fresh conversation (a fixed system prompt, then the turn number and home star);
the model calls tools, which read only its own fog-of-war view and its private memory (kept across
turns), and ends the turn with ``submit_orders``. Orders with any error are refused and the model
may fix them; the turn ends at the first error-free submission. When the per-turn tool-call budget
is spent, or ``max_retries`` replies in a row called no tool, the ``fallback`` orders are played
(``heuristic`` or ``pass``) and the turn is recorded as a fallback. Every turn is accounted in
``policy.moves`` (``policy.accounting`` sums them) like the Splendor LLM player's moves, plus
``tool_calls``. Network faults are retried by ``ChatClient``; ``FatalLLMError`` stops the game.

>>> from tabletop_rl.agents.llm.client import ChatReply, ToolCall
>>> from tabletop_rl.games.space_conquest.game import SpaceConquestGame
>>> class Passer:                         # any backend: complete(request) -> ChatReply
...     def complete(self, request):
...         call = ToolCall("c1", "submit_orders", '{"orders": {"moves": []}}')
...         return ChatReply("", "tool_calls", tool_calls=(call,))
>>> p = ToolLLMPolicy(backend=Passer())
>>> p.act(None, None, SpaceConquestGame(seed=1).policy_info(0)), p.accounting["tool_calls"]
({'moves': []}, 1)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from tabletop_rl.agents.llm.client import (
    DEFAULT_BASE_URL,
    ChatBackend,
    ChatReply,
    ChatRequest,
    FatalLLMError,
    ToolCall,
    clip,
)
from tabletop_rl.agents.llm.policy import (
    LLM_OPTIONS,
    REASONING_CHARS,
    MoveRecord,
    ReplyError,
    chat_client,
    check_ranges,
    server_defaults,
    summarize_moves,
)
from tabletop_rl.agents.llm.space_conquest_tools import MAX_TOOL_CALLS, MEMORY_TABLES, TOOL_SCHEMAS, PlayerTools
from tabletop_rl.agents.registry import Option
from tabletop_rl.core.game import view_game_and_seat
from tabletop_rl.core.text import quote
from tabletop_rl.games.space_conquest import observe as O
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.baselines import SpaceConquestPolicy, plan_orders
from tabletop_rl.games.space_conquest.game import SpaceConquestGame

__all__ = ["NUDGE", "SPACE_CONQUEST_LLM_OPTIONS", "ToolLLMPolicy", "system_prompt"]

_FALLBACKS = ("heuristic", "pass")
#: Defaults of its own: the fallback here is ``heuristic`` or ``pass``, and no preset applies (the presets
#: forfeit, which a game of simultaneous orders has no way to score yet).
_OWN_DEFAULTS = {"fallback": "heuristic", "max_retries": 2}
#: The tool-using LLM player's spec options: the Splendor ``llm`` options that apply to it and the per-turn
#: tool-call budget.
SPACE_CONQUEST_LLM_OPTIONS = tuple(
    replace(o, default=_OWN_DEFAULTS[o.name]) if o.name in _OWN_DEFAULTS else o
    for o in LLM_OPTIONS if o.name not in ("legal_list", "reasoning_chars", "mode", "preset")) + (
    Option("max_tool_calls", int, MAX_TOOL_CALLS),)
_MODE = "tools"  # the record's ``mode``: replies come as function calls, not as a response format
_LOSS_RULES = {
    "flat": "a fleet in flight is lost whole with a 2% chance each turn",
    "nlogn": "a fleet in flight may be lost whole, the more likely the longer its journey (estimate_route tells)",
}
_SYSTEM_PROMPT = """You command one of two empires in Space Conquest, a game of simultaneous orders and fog of war.
The map is a 12x10 grid of 16 stars named A-P; travel takes one turn per parsec (Chebyshev distance), and
{loss}. Each star you own produces its RU in ships every turn;
a garrison smaller than its star's RU may rebel. In a fight the larger force wins and loses half the smaller
force (rounded up). You win by taking the enemy's home star (RU {home_ru}); after the last turn, the most RU wins.
You see your own stars and fleets live, and other stars only as they were when you last saw them.

Play one turn at a time with the tools: look (get_observation, get_ascii_map, query_star, estimate_route),
check orders with propose_orders, keep notes across turns in your memory ({tables}), and end
the turn by calling submit_orders with {{"moves": [{{"from": "A", "to": "F", "ships": 3}}, ...]}} (an empty list
passes). Orders with any error are refused: fix them and submit again. Your tool calls per turn are limited."""
NUDGE = "Call a tool; end the turn with submit_orders."


def system_prompt(loss_model: str) -> str:
    """The rules summary for a game played under ``loss_model`` ("flat" or "nlogn")."""
    return _SYSTEM_PROMPT.format(loss=_LOSS_RULES[loss_model], home_ru=R.HOME_RU, tables=", ".join(MEMORY_TABLES))


@dataclass
class _TurnRecord(MoveRecord):
    """One turn: ``MoveRecord``'s accounting (``ply`` is the game turn, ``move`` the orders played as
    JSON) plus ``tool_calls``. ``parse_failures`` counts replies without a tool call and calls whose
    arguments are not a JSON object; ``illegal_replies`` counts refused submissions. ``reasoning`` is the
    last text the model wrote beside its calls, cut to ``REASONING_CHARS``."""

    tool_calls: int = 0


class ToolLLMPolicy(SpaceConquestPolicy):
    """A chat model with tools; spec options ``SPACE_CONQUEST_LLM_OPTIONS`` (docs/space_conquest.md).

    Python-only keywords as ``LLMPolicy``'s: ``api_key``, ``backend`` (replaces the ``openai`` SDK),
    ``extra_headers``, ``extra_body``, ``sleep`` (the backoff wait).
    """

    def __init__(self, name: str = "llm", seed: int | None = None, *, model: str = "openai/gpt-4o-mini",
                 base_url: str = DEFAULT_BASE_URL, temperature: float = 0.2, max_tokens: int = 1000,
                 max_retries: int = 2, fallback: str = "heuristic", max_tool_calls: int = MAX_TOOL_CALLS,
                 timeout: float | None = None, net_retries: int = 6, backoff: float = 1.0,
                 concurrency: int | None = None, cache: str = "", api_key_env: str = "", api_key: str | None = None,
                 backend: ChatBackend | None = None, extra_headers: Mapping[str, str] | None = None,
                 extra_body: Mapping[str, Any] | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(name, seed)
        timeout, concurrency, self.defaults_applied = server_defaults(base_url, timeout, concurrency)
        _check_options(fallback, max_retries=max_retries, max_tool_calls=max_tool_calls, max_tokens=max_tokens,
                       timeout=timeout, net_retries=net_retries, backoff=backoff, temperature=temperature,
                       concurrency=concurrency)
        self.model, self.temperature, self.max_tokens, self.timeout = model, temperature, max_tokens, timeout
        self.concurrency = concurrency
        self.max_retries, self.fallback, self.max_tool_calls = max_retries, fallback, max_tool_calls
        self.extra_headers, self.extra_body = dict(extra_headers or {}), dict(extra_body or {})
        self.client = chat_client(backend, base_url, api_key, api_key_env, net_retries, backoff, concurrency, cache,
                                  sleep, seed)
        self.moves: list[_TurnRecord] = []
        self._tools: PlayerTools | None = None

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: clear the turn records and the private memory."""
        super().reset(seed)
        self.moves = []
        self._tools = None

    @property
    def accounting(self) -> dict[str, Any]:
        """Totals over this game's turns (``summarize_moves``) plus ``tool_calls``."""
        return {**summarize_moves(self.moves), "tool_calls": sum(m.tool_calls for m in self.moves)}

    @property
    def settings(self) -> dict[str, Any]:
        """What the records state about this player, as ``LLMPolicy.settings`` (no preset; orders are
        free-form JSON checked by a tool, so ``legal_list`` does not apply)."""
        return {"preset": None, "fallback": self.fallback, "legal_list": None, "max_retries": self.max_retries,
                "model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "max_tool_calls": self.max_tool_calls, "mode": _MODE, "timeout": self.timeout,
                "concurrency": self.concurrency, "server_defaults": self.defaults_applied}

    def decide(self, observation: Any, action_mask: Any, info: Mapping[str, Any]) -> dict[str, Any]:
        game, seat = view_game_and_seat(info, self.name)
        tools = self._tools_for(game, int(seat))
        record = _TurnRecord(seat=int(seat), ply=game.turn, mode=_MODE)
        self.moves.append(record)
        with record.timed():
            orders = self._converse(tools, record)
            if orders is None:
                record.source = "fallback"
                orders = plan_orders(O.player_view(game, seat)) if self.fallback == "heuristic" else {"moves": []}
        record.move = json.dumps(orders["moves"])
        return orders

    def _tools_for(self, game: SpaceConquestGame, seat: int) -> PlayerTools:
        """This seat's tools over this turn's view (each turn brings a fresh ``fog_copy``); the memory
        lasts while the turns go on for the same seat, and a new game (or ``reset``) starts it empty."""
        tools = self._tools
        if tools is None or tools.player != seat or game.turn <= tools.game.turn:
            tools = self._tools = PlayerTools(game, seat, self.max_tool_calls)
        tools.start_turn(game)
        return tools

    def _converse(self, tools: PlayerTools, record: _TurnRecord) -> dict[str, Any] | None:
        """Run the model's tool calls until an accepted submission (its orders) or the limits (``None``)."""
        game = tools.game
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt(game.loss_model)},
            {"role": "user", "content": f"Turn {game.turn} of {game.max_turns}. You are player {tools.player + 1}; "
                                        f"your home star is {game.home_letter(tools.player)}. You have "
                                        f"{tools.max_calls} tool calls this turn."}]
        idle = 0
        while tools.calls < tools.max_calls:
            reply = self._complete(messages)
            record.add_reply(reply, _MODE)
            record.reasoning = clip(reply.text, REASONING_CHARS) if reply.text else record.reasoning
            messages.append(reply.assistant_message())
            if not reply.tool_calls:
                record.reject(ReplyError("parse", "the reply called no tool"), reply.text, reply.truncated)
                idle += 1
                if idle > self.max_retries:
                    record.fallback_reason = f"no tool called in {idle} replies in a row"
                    return None
                messages.append({"role": "user", "content": NUDGE})
                continue
            idle = 0
            for call in reply.tool_calls:
                result = self._run(tools, call, record, reply)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": result if isinstance(result, str) else json.dumps(result)})
                if tools.submitted is not None:
                    return {"moves": result["accepted"]}
        record.fallback_reason = f"tool call budget spent ({tools.max_calls} per turn) without accepted orders"
        return None

    def _run(self, tools: PlayerTools, call: ToolCall, record: _TurnRecord, reply: ChatReply) -> Any:
        """One tool call's result; a submission with errors is withdrawn so the model can submit again."""
        record.tool_calls += 1
        if not _is_json_object(call.arguments):
            record.reject(ReplyError("parse", f"{call.name}: arguments are not a JSON object"),
                          f"{call.name}({call.arguments})", reply.truncated)
        result = tools.call(call.name, call.arguments or "{}")
        if call.name == "submit_orders" and isinstance(result, dict) and result.get("submitted") and not result["ok"]:
            tools.submitted = None
            record.reject(ReplyError("illegal", f"submit_orders refused: {result['errors'][0]['message']}"),
                          f"{call.name}({call.arguments})", reply.truncated)
            result = {**result, "submitted": False,
                      "note": "orders with errors are not submitted; fix them and call submit_orders again"}
        return result

    def _complete(self, messages: list[dict[str, Any]]) -> ChatReply:
        request = ChatRequest(model=self.model, messages=list(messages), temperature=self.temperature,
                              max_tokens=self.max_tokens, timeout_s=self.timeout, extra_headers=self.extra_headers,
                              extra_body=self.extra_body, tools=TOOL_SCHEMAS, tool_choice="auto")
        try:
            return self.client.complete(request)
        except FatalLLMError as e:
            raise FatalLLMError(f"llm player {self.name!r} stopped: {e}", e.status) from None


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text or "{}"), dict)
    except json.JSONDecodeError:
        return False


def _check_options(fallback: str, **values: float) -> None:
    if fallback not in _FALLBACKS:
        raise ValueError(f"fallback={quote(fallback)} is not one of {', '.join(_FALLBACKS)}")
    check_ranges(**values)
