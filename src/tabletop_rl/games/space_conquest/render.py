"""A Space Conquest match as text: the map as one seat knows it (its fog of war) with its turn report, or
a spectator's view of everything; ``board_view`` gives the same as JSON-ready data (for ``tabletop web``).

>>> from tabletop_rl.games.space_conquest.game import SpaceConquestGame
>>> render_text(SpaceConquestGame(seed=1), 0).splitlines()[0].split()[:3]
['0', '1', '2']
"""

from __future__ import annotations

from typing import Any

from tabletop_rl.games.space_conquest import observe as O
from tabletop_rl.games.space_conquest import rules as R

#: A SpaceConquestGame: game.py imports this module to draw itself, so the class is not
#: imported here (the layers stay free of circles, even for type checking).
_Game = Any


__all__ = ["board_view", "render_map", "render_text", "summary"]

_MARK = {"you": "*", "enemy": "!", "npc": " ", "unknown": " "}


def render_map(game: _Game, viewer: int | None) -> str:
    """The 12 x 10 map as ``viewer`` knows it (None: the referee, who sees everything, owners as 0/1).
    Each star is ``<RU or ?><letter><mark>``."""
    cells = [["  . " for _ in range(R.WIDTH)] for _ in range(R.HEIGHT)]
    for s in range(R.NUM_STARS):
        if viewer is None:
            star = game.star(s)
            mark = " " if star["owner"] is None else str(star["owner"])
            ru = star["ru"]
        else:
            star = O.star_view(game, viewer, s)
            mark, ru = _MARK[star["owner"]], star["ru"]
        cells[star["y"]][star["x"]] = f" {'?' if ru is None else ru}{R.LETTERS[s]}{mark}"
    lines = ["   " + "".join(f"{x:>4}" for x in range(R.WIDTH))]
    lines += [f"{y:>3}" + "".join(row) for y, row in enumerate(cells)]
    return "\n".join(lines)


def _describe_event(e: dict[str, Any], viewer: int | None) -> str:
    """One line for an event, told to ``viewer`` (None: a spectator, told whose it was)."""
    who = {0: "P0", 1: "P1", None: "NPC"} if viewer is None else {viewer: "you", 1 - viewer: "the enemy", None: "NPC"}
    whose = "your" if viewer is not None else f"{who[e.get('player')]}'s"
    if e["kind"] == "combat":
        forces = ", ".join(f"{who[p]} {n}" for p, n in enumerate(e["forces"]) if n is not None)
        npc = f", NPC garrison {e['npc']}" if e["npc"] else ""
        return f"combat at {e['star']}: {forces}{npc} -> held by {who[e['owner_after']]} with {e['ships_after']}"
    if e["kind"] == "rebellion":
        return (f"rebellion at {e['star']}: {e['rebels']} rebels beat {whose} {e['garrison']}; "
                f"NPC now, {e['ships_after']} ships")
    if e["kind"] == "production":
        return f"{e['star']} produced {e['ships']}"
    fleet = f"{whose} fleet of {e['ships']} from {e['from']}"
    if e["kind"] == "lost":
        return f"{fleet} to {e['to']} was lost in hyperspace"
    if e["kind"] == "arrive":
        return f"{fleet} arrived at {e['to']}"
    return f"{whose} launch of {e['ships']} from {e['from']} to {e['to']} ({e['distance']} turns)"


def summary(game: _Game, viewer: int) -> str:
    """Turn summary for ``viewer``: own stars, fleets, last turn's events and order errors."""
    view = O.player_view(game, viewer)
    own = [f"{s['letter']}(RU {s['ru']}, {s['ships']} ships{', home' if s['is_your_home'] else ''})"
           for s in view["stars"] if s["owner"] == "you"]
    lines = [f"Turn {view['turn']}/{view['max_turns']} - P{viewer}", "Your stars: " + ", ".join(own)]
    fleets = [f"{f['ships']} {f['from']}->{f['to']} ({f['turns_left']} left)" for f in view["fleets"]]
    lines.append("Fleets in flight: " + (", ".join(fleets) if fleets else "none"))
    lines += ["  " + _describe_event(e, viewer) for e in view["events"] if e["kind"] != "launch"]
    lines += [f"  order error{'' if e['index'] is None else ' in move ' + str(e['index'] + 1)}: {e['message']}"
              for e in view["errors"]]
    return "\n".join(lines)


def render_text(game: _Game, viewer: int | None) -> str:
    """The map and turn report of ``viewer`` (its fog of war: what ``tabletop replay --seat`` shows), or
    for a spectator (None): the whole map, each seat's RU, ships and fleets, and last turn's combats,
    rebellions and losses."""
    if viewer is not None:
        return render_map(game, viewer) + "\n" + summary(game, viewer)
    fleets = [sum(1 for f in game.fleets() if f["owner"] == p) for p in range(R.NUM_PLAYERS)]
    totals = ", ".join(f"P{p} RU {game.owned_ru(p)} ships {game.total_ships(p)} fleets {fleets[p]}"
                       for p in range(R.NUM_PLAYERS))
    events = ["  " + _describe_event(e, None) for e in game.events() if e["kind"] in ("combat", "rebellion", "lost")]
    return "\n".join([f"Turn {game.turn}/{game.max_turns} (spectator): {totals}", render_map(game, None), *events])


def board_view(game: _Game, viewer: int | None = None) -> dict[str, Any]:
    """The map ``render_text`` draws for ``viewer``, as JSON-ready data. A seat sees its fog of war
    (``observe.player_view``: stars as it last saw them, owners as ``you``/``enemy``/``npc``/``unknown``, RU
    ``None`` where it never went, only its own fleets, events and order errors); a spectator (``None``) sees
    every star (owners ``p0``/``p1``/``npc``), every fleet and last turn's events, each told as a line.

    >>> from tabletop_rl.games.space_conquest.game import SpaceConquestGame
    >>> view = board_view(SpaceConquestGame(seed=1), 0)
    >>> sum(star["ru"] is None for star in view["stars"]), view["fleets"]
    (15, [])
    """
    if viewer is not None:
        view = O.player_view(game, viewer)
        return {"game": "space_conquest", "viewer": viewer, "turn": view["turn"], "max_turns": view["max_turns"],
                "grid": view["grid"], "over": view["over"], "stars": view["stars"], "fleets": view["fleets"],
                "events": [_describe_event(e, viewer) for e in view["events"] if e["kind"] != "launch"],
                "errors": [e["message"] for e in view["errors"]], "totals": None}
    owner = {None: "npc", 0: "p0", 1: "p1"}
    stars = [{**star, "owner": owner[star["owner"]]} for star in map(game.star, range(R.NUM_STARS))]
    return {"game": "space_conquest", "viewer": None, "turn": game.turn, "max_turns": game.max_turns,
            "grid": [R.WIDTH, R.HEIGHT], "over": game.is_over, "stars": stars, "fleets": game.fleets(),
            "events": [_describe_event(e, None) for e in game.events() if e["kind"] in ("combat", "rebellion", "lost")],
            "errors": [], "totals": [{"ru": game.owned_ru(p), "ships": game.total_ships(p),
                                      "fleets": sum(f["owner"] == p for f in game.fleets())}
                                     for p in range(R.NUM_PLAYERS)]}
