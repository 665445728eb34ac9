"""Terminal play driven through standard input."""

import io
import json

import pytest

from tabletop_rl.space_conquest.game import SpaceConquestGame
from tabletop_rl.space_conquest.play import parse_move, play_main, render_map


def run(argv, lines):
    out = io.StringIO()
    status = play_main(argv, stdin=io.StringIO("".join(line + "\n" for line in lines)), stdout=out)
    return status, out.getvalue()


def test_map_shows_known_ru_and_unknown_stars():
    game = SpaceConquestGame(seed=5)
    text = render_map(game, 0)
    home = game.home_letter(0)
    assert f"4{home}*" in text and text.count("?") == 15
    assert f"4{game.home_letter(1)}1" in render_map(game, None)


@pytest.mark.parametrize("text, move", [
    ("move 3 ships from a to b", {"from": "A", "to": "B", "ships": 3}),
    ("send 5 from D to F", {"from": "D", "to": "F", "ships": 5}),
    ("attack C with 10 from A", {"from": "A", "to": "C", "ships": 10}),
    ("move 1 ship from Altair to Deneb", {"from": "A", "to": "D", "ships": 1}),
])
def test_natural_commands(text, move):
    assert parse_move(text) == move


def test_bad_commands_are_re_asked_with_the_reason_and_orders_play():
    game = SpaceConquestGame(seed=5)
    home, near = game.home_letter(0), game.nearest_letter(game.home_letter(0))
    lines = ["fly to the moon", f"send many from {home} to {near}", f"send 9 from {home} to {near}",
             f"send 2 from {home} to {near}", f"send 3 from {home} to {near}", "orders", "done", "quit"]
    status, out = run(["--mode", "hvl", "--opponent", "heuristic", "--seed", "5"], lines)
    assert status == 0
    assert "! unknown command 'fly to the moon'" in out
    assert "'many' is not a number of ships" in out
    assert f"{home} has 4 ships, cannot send 9" in out
    assert "over-committed" in out  # 2 + 3 > 4: the second move is refused, the first kept
    assert f"  2 from {home} to {near}" in out
    assert "Turn 2/100" in out and f"fleet of 2 from {home}" in out
    assert out.rstrip().endswith("bye")


def test_hvh_hands_over_before_every_view():
    status, out = run(["--mode", "hvh", "--seed", "3"], ["", "done", "", "done", "", "quit"])
    marks = [out.index(s) for s in ("Hand over to player 1", "player 1>", "Hand over to player 2", "player 2>",
                                    "Turn 2/100 - player 1")]
    assert marks == sorted(marks) and status == 0
    first_view = out[marks[0]:marks[2]]
    assert "- player 2" not in first_view and "player 2>" not in first_view


def test_save_command_writes_a_loadable_game(tmp_path):
    path = tmp_path / "g.json"
    _, out = run(["--mode", "hvl", "--opponent", "heuristic", "--seed", "2"], ["done", f"save {path}", "quit"])
    assert f"saved to {path}" in out
    game = SpaceConquestGame.from_json(path.read_text())
    assert game.turn == 2 and json.loads(path.read_text())["seed"] == 2
    status, out = run(["--mode", "hvl", "--opponent", "heuristic", "--load", str(path)], ["quit"])
    assert "Turn 2/100" in out


def test_lvl_plays_to_the_end_and_bad_arguments_are_one_line_errors(capsys):
    status, out = run(["--mode", "lvl", "--players", "heuristic,random", "--seed", "1"], [])
    assert status == 0 and "Game over after turn" in out
    assert run(["--mode", "lvl", "--players", "heuristic"], [])[0] == 2
    assert "two specs" in capsys.readouterr().err
