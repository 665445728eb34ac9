"""The tool layer of the tool-using LLM player: tool functions over one player's view, their JSON
schemas (OpenAI function calling), a per-turn call budget and the player's private memory.

Every tool reads only what its player may know (observe.py's view, the public map geometry, the
player's own memory); only ``submit_orders`` changes anything, and only this player's orders.

>>> from tabletop_rl.games.space_conquest.game import SpaceConquestGame
>>> tools = PlayerTools(SpaceConquestGame(seed=1), player=0)
>>> tools.call("estimate_route", {"from": "A", "to": "B"})["loss_risk"] < 0.2
True
>>> [s["function"]["name"] for s in TOOL_SCHEMAS][:3]
['get_observation', 'get_ascii_map', 'query_star']
"""

from __future__ import annotations

import json
from typing import Any

from tabletop_rl.games.space_conquest import observe as O
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.actions import check_orders, star_index
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.render import render_map

__all__ = ["MAX_TOOL_CALLS", "MEMORY_TABLES", "TOOL_SCHEMAS", "PlayerTools", "tool_names"]

MAX_TOOL_CALLS = 15  # per turn, as the LLM player spec says
MEMORY_TABLES = ("discovery", "battle", "sighting", "threat", "plan")
_ORDERS_SCHEMA = {
    "type": "object",
    "properties": {"moves": {"type": "array", "items": {
        "type": "object", "required": ["from", "to", "ships"],
        "properties": {"from": {"type": "string", "description": "origin star letter (yours)"},
                       "to": {"type": "string", "description": "destination star letter"},
                       "ships": {"type": "integer", "minimum": 1}}}}},
    "required": ["moves"],
}


def _function(name: str, description: str, properties: dict | None = None, required: tuple = ()) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties or {}, "required": list(required)}}}


_STAR = {"type": "string", "description": "star letter A-P (or its name)"}
TOOL_SCHEMAS = [
    _function("get_observation", "Your full view this turn as JSON: stars (known RU, last-seen owner and ships), "
              "your fleets, last turn's events and order errors, rules constants."),
    _function("get_ascii_map", "The 12x10 map as text: 2B = star B with RU 2, ?B = RU unknown; * yours, ! enemy."),
    _function("query_star", "What you know of one star, and its distance from each of your stars.",
              {"star": _STAR}, ("star",)),
    _function("estimate_route", "Distance (turns) between two stars and the risk of losing a fleet on the way "
              "(the whole fleet; 1 - 0.98^distance under the default loss model).", {"from": _STAR, "to": _STAR},
              ("from", "to")),
    _function("propose_orders", "Check orders without submitting them: {ok} or indexed errors.",
              {"orders": _ORDERS_SCHEMA}, ("orders",)),
    _function("submit_orders", "Submit this turn's orders (once per turn); bad moves are skipped and reported.",
              {"orders": _ORDERS_SCHEMA}, ("orders",)),
    _function("memory_query", "Read your private memory: one table, optionally one key.",
              {"table": {"type": "string", "enum": list(MEMORY_TABLES)}, "key": {"type": "string"}}, ("table",)),
    _function("memory_upsert", "Write a note into your private memory (table, key, note); replaces that key.",
              {"table": {"type": "string", "enum": list(MEMORY_TABLES)}, "key": {"type": "string"},
               "note": {"type": "string"}}, ("table", "key", "note")),
]


class _ToolError(ValueError):
    """A tool call that cannot be answered; its message goes back to the model."""


class PlayerTools:
    """The tools of seat ``player`` in ``game``. ``call(name, arguments)`` answers a tool call with a
    JSON-ready result (``{"error": ...}`` for a bad call); ``start_turn()`` resets the call budget."""

    def __init__(self, game: SpaceConquestGame, player: int, max_calls: int = MAX_TOOL_CALLS) -> None:
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, got {player!r}")
        self.game, self.player, self.max_calls = game, player, max_calls
        self.memory: dict[str, dict[str, Any]] = {table: {} for table in MEMORY_TABLES}
        self.start_turn()

    def start_turn(self, game: SpaceConquestGame | None = None) -> None:
        """A new turn (in ``game``, this turn's view, when given): the call budget is full again and
        no orders are submitted yet; the memory stays."""
        self.game = game if game is not None else self.game
        self.calls = 0
        self.submitted: dict[str, Any] | None = None

    def call(self, name: str, arguments: dict | str | None = None) -> Any:
        """Run tool ``name`` with ``arguments`` (a dict or its JSON text)."""
        if self.calls >= self.max_calls:
            return {"error": f"tool call budget spent ({self.max_calls} per turn); submit your orders"}
        self.calls += 1
        tool = getattr(self, f"tool_{name}", None)
        if tool is None:
            return {"error": f"unknown tool {name!r}; tools: {', '.join(tool_names())}"}
        try:
            args = json.loads(arguments) if isinstance(arguments, (str, bytes)) else dict(arguments or {})
            return tool(**args)
        except json.JSONDecodeError as e:
            return {"error": f"arguments are not valid JSON: {e.msg}"}
        except TypeError as e:
            return {"error": f"bad arguments for {name}: {e}"}
        except ValueError as e:
            return {"error": str(e)}

    # --- the tools ---------------------------------------------------------------------------
    def tool_get_observation(self) -> dict[str, Any]:
        return O.player_view(self.game, self.player)

    def tool_get_ascii_map(self) -> str:
        return render_map(self.game, self.player)

    def tool_query_star(self, star: str) -> dict[str, Any]:
        s = star_index(star)
        mine = [t for t in range(R.NUM_STARS) if self.game.state[R.star_at(t) + R.S_OWNER] == self.player]
        return {**O.star_view(self.game, self.player, s),
                "distance_from_your_stars": {R.LETTERS[t]: self.game.distance(t, s) for t in mine}}

    def tool_estimate_route(self, **args: str) -> dict[str, Any]:
        a, b = star_index(args.get("from")), star_index(args.get("to"))
        d = self.game.distance(a, b)
        return {"from": R.LETTERS[a], "to": R.LETTERS[b], "distance": d,
                "loss_risk": round(R.route_risk(int(self.game.state[R.LOSS_MODEL]), d), 4),
                "arrival_turn": self.game.turn + d}

    def tool_propose_orders(self, orders: Any) -> dict[str, Any]:
        return check_orders(self.game.state, self.player, orders).as_dict()

    def tool_submit_orders(self, orders: Any) -> dict[str, Any]:
        if self.submitted is not None:
            raise _ToolError("orders are already submitted for this turn")
        check = check_orders(self.game.state, self.player, orders)
        self.submitted = orders
        return {**check.as_dict(), "submitted": True}

    def tool_memory_query(self, table: str, key: str | None = None) -> Any:
        notes = self.memory[_table(table)]
        if key is None:
            return notes
        return notes.get(key, {"error": f"no note {key!r} in {table}"})

    def tool_memory_upsert(self, table: str, key: str, note: str) -> dict[str, Any]:
        if not isinstance(key, str) or not key or not isinstance(note, str):
            raise _ToolError("key must be a non-empty string and note a string")
        self.memory[_table(table)][key] = {"note": note, "turn": self.game.turn}
        return {"ok": True}


def _table(name: str) -> str:
    if name not in MEMORY_TABLES:
        raise _ToolError(f"unknown memory table {name!r}; tables: {', '.join(MEMORY_TABLES)}")
    return name


def tool_names() -> list[str]:
    return [schema["function"]["name"] for schema in TOOL_SCHEMAS]
