"""Hostile input to the loaders and step paths gives a short one-line error."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.games.klaverjas.game import KlaverjasGame
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.splendor.game import SplendorGame

HUGE = 10**5000  # past Python's 4,300-digit str() limit


def one_line(err: pytest.ExceptionInfo, limit: int = 300) -> str:
    text = str(err.value)
    assert "\n" not in text and len(text) < limit, text[:500]
    return text


# --- item 6: deeply nested JSON ----------------------------------------------------------------------
@pytest.mark.parametrize("text", ["[" * 1000, '{"a":' * 1000, "[" * 100000], ids=["list", "dict", "long"])
@pytest.mark.parametrize("cls", [SplendorGame, SpaceConquestGame, KlaverjasGame])
def test_deeply_nested_json_is_a_value_error(cls, text):
    with pytest.raises(ValueError) as err:
        cls.from_json(text)
    one_line(err)


def test_deeply_nested_dict_position_is_a_value_error():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    data = SplendorGame.new(1, 2).to_dict()
    data["bank"] = deep
    with pytest.raises(ValueError) as err:
        SplendorGame.from_json(data)
    one_line(err)
    save = SpaceConquestGame.new(1).to_dict()
    save["history"] = [deep]
    with pytest.raises(ValueError) as err:
        SpaceConquestGame.from_dict(save)
    one_line(err)


# --- item 7: integers beyond 64 bits ------------------------------------------------------------------
@pytest.mark.parametrize("action", [2**64 + 5, -(2**64), 2**63, HUGE, -HUGE],
                         ids=["2**64+5", "-2**64", "2**63", "huge", "-huge"])
def test_splendor_step_huge_integer(action):
    game = SplendorGame.new(1, 2)
    before = game.to_json()
    with pytest.raises(ValueError) as err:
        game.step(action)
    assert "action" in one_line(err)
    assert game.to_json() == before


@pytest.mark.parametrize("action", [2**64 + 5, -(2**64), HUGE], ids=["2**64+5", "-2**64", "huge"])
def test_klaverjas_step_huge_integer(action):
    game = KlaverjasGame.new(1)
    before = game.to_json()
    with pytest.raises(ValueError) as err:
        game.step(action)
    assert "action" in one_line(err)
    assert game.to_json() == before


@pytest.mark.parametrize("value", [2**70, -(2**70), HUGE], ids=["2**70", "-2**70", "huge"])
def test_space_conquest_save_huge_integer_names_the_field(value):
    for field in ("state", "log", "history"):
        save = SpaceConquestGame.new(1).to_dict()
        if field == "state":
            save["state"][3] = value
        elif field == "log":
            save["log"] = [[value] * len(save["state"][:1])]
        else:
            save["history"] = [[[["A", "B", value]], []]]
        with pytest.raises(ValueError) as err:
            SpaceConquestGame.from_dict(save)
        assert field in one_line(err)


def test_splendor_position_huge_integer_is_one_line():
    data = SplendorGame.new(1, 2).to_dict()
    for key, value in data.items():
        if isinstance(value, int) and not isinstance(value, bool):
            data[key] = HUGE
            with pytest.raises(ValueError) as err:
                SplendorGame.from_json(data)
            assert key in one_line(err)
            data[key] = value


# --- item 8: non-integer numpy actions ----------------------------------------------------------------
@pytest.mark.parametrize("action", [np.array(3.5), np.float64(3.0), np.array([3]), np.array(True), np.True_, 3.0])
@pytest.mark.parametrize("cls", [SplendorGame, KlaverjasGame])
def test_step_refuses_non_integer_actions(cls, action):
    game = cls.new(1, 2) if cls is SplendorGame else cls.new(1)
    before = game.to_json()
    with pytest.raises(ValueError) as err:
        game.step(action)
    one_line(err)
    assert game.to_json() == before


@pytest.mark.parametrize("cls", [SplendorGame, KlaverjasGame])
def test_step_takes_numpy_integers(cls):
    game = cls.new(1, 2) if cls is SplendorGame else cls.new(1)
    a = game.legal_actions()[0] if cls is SplendorGame else int(np.flatnonzero(game.legal_mask())[0])
    game.step(np.int64(a))
    game2 = cls.new(1, 2) if cls is SplendorGame else cls.new(1)
    game2.step(np.array(a))
    assert game.to_json() == game2.to_json()


# --- item 11: huge move names -------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [SplendorGame, KlaverjasGame])
def test_huge_move_name_is_cut(cls):
    game = cls.new(1, 2) if cls is SplendorGame else cls.new(1)
    with pytest.raises(ValueError) as err:
        game.step("x" * 100_000)
    one_line(err)
    with pytest.raises(ValueError) as err:
        game.explain_illegal("y" * 100_000) if cls is SplendorGame else game.move_id("y" * 100_000)
    one_line(err)
