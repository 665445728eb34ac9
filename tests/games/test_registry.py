"""The game records (``tabletop_rl.games.registry``): one per game, the source of every per-game table; listing
the games loads none of them; the names the package root exports from the records load."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tabletop_rl
from tabletop_rl import games
from tabletop_rl.agents import known_games
from tabletop_rl.envs.pettingzoo_registry import pettingzoo_ids
from tabletop_rl.ui.web.menu import default_policies


def test_each_game_has_one_name_everywhere():
    for record in games.entries():
        assert games.game_class(record.name).name == record.name
        assert record.module == f"tabletop_rl.games.{record.name}.game"
        assert record.policies in (None, f"tabletop_rl.agents.{record.name}")
    assert games.names() == ["klaverjas", "space_conquest", "splendor"]
    assert set(known_games()) >= set(games.names())


def test_listing_the_games_imports_no_game_module():
    code = ("import sys; from tabletop_rl.games import entries, names; print(names(), len(entries())); "
            "print(' '.join(m for m in sys.modules if m.startswith('tabletop_rl.games.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    listed, loaded = result.stdout.splitlines()
    assert listed == "['klaverjas', 'space_conquest', 'splendor'] 3"
    # tabletop_rl's root loads Splendor's game for its own names; the other games stay unloaded
    assert "tabletop_rl.games.klaverjas" in loaded.split()  # its package, which holds its record
    assert not [m for m in loaded.split() if m.startswith(("tabletop_rl.games.klaverjas.",
                                                           "tabletop_rl.games.space_conquest."))], loaded


def test_the_lazy_names_of_the_root_load():
    exported = {name for record in games.entries() for name in record.exports}
    assert exported <= set(tabletop_rl.__all__)
    for name in tabletop_rl.__all__:
        assert getattr(tabletop_rl, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = tabletop_rl.nothing


def test_the_derived_tables_follow_the_records(monkeypatch):
    toy = games.GameEntry("toy", "tabletop_rl.games.splendor.game:SplendorGame", players=("random", "greedy"),
                          env_id="tabletop_rl/Toy-v0", pettingzoo_envs={"aec": "tabletop_rl.envs.aec:splendor_env"})
    registry = games.REGISTRY.copy()
    registry.register(toy)
    monkeypatch.setattr(games, "REGISTRY", registry)
    assert "toy" in games.GAMES and games.game_class("toy") is games.game_class("splendor")
    assert default_policies()["toy"] == ("random", "greedy")  # the line-up, where the record names no menu
    assert pettingzoo_ids()[("aec", "tabletop_rl/Toy-v0")] == "tabletop_rl.envs.aec:splendor_env"
    assert "toy" in known_games()
    with pytest.raises(ValueError, match="a game named 'toy' is registered already"):
        registry.register(toy)


@pytest.mark.parametrize("fields, message", [
    ({"name": "space-conquest"}, "a game's name is a lower-case identifier"),
    ({"game_class": "tabletop_rl.games.toy.game.ToyGame"}, "is not 'module:attribute'"),
    ({"board_view": "tabletop_rl.games.toy.render.board_view"}, "is not 'module:attribute'"),
    ({"players": ()}, "the default line-up names no policy"),
])
def test_a_bad_record_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        games.GameEntry(**{"name": "toy", "game_class": "m:C", "players": ("random",), **fields})


def test_the_envs_take_a_turn_based_game_only_through_turn_based(monkeypatch):
    class Plain:  # turn-based, but without the TurnBased declarations the envs step through
        simultaneous = False

    monkeypatch.setattr(games, "game_class", lambda name: Plain)
    with pytest.raises(TypeError, match="toy's class Plain must inherit TurnBased"):
        games.turn_based_class("toy")
