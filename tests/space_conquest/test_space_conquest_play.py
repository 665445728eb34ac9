"""Terminal play driven through standard input."""

import io
import json

import pytest

from tabletop_rl.space_conquest.game import SpaceConquestGame
from tabletop_rl.space_conquest.play import parse_move, play_main, render_map


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # quit saves to ./space-conquest-save.json


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
    assert "Turn 2/100" in out and f"your fleet of 2 from {home}" in out
    assert out.rstrip().endswith("game saved to space-conquest-save.json; go on with: "
                                 "tabletop play space-conquest --load space-conquest-save.json")
    saved = SpaceConquestGame.from_json(open("space-conquest-save.json").read())
    assert saved.turn == 2 and saved.history[0][0] == [(game.home(0), "ABCDEFGHIJKLMNOP".index(near), 2)]


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


def test_lvl_plays_to_the_end_and_shows_the_spectator_map():
    status, out = run(["--mode", "lvl", "--players", "heuristic", "random", "--seed", "1"], [])
    assert status == 0 and "Game over after turn" in out
    assert "--- Turn 2/100 (spectator): P0 RU 4" in out


@pytest.mark.parametrize("argv, message", [
    (["--mode", "lvl", "--players", "heuristic", "nobody"], "bad policy spec 'nobody'"),
    (["--max-turns", "0", "--opponent", "heuristic"], "max_turns must be a positive integer"),
    (["--seed", "-1", "--opponent", "heuristic"], "seed must be a non-negative integer"),
    (["--load", "missing.json"], "cannot read missing.json"),
    (["--load", "."], "cannot read ."),
    (["--load", "corrupt.json"], "save is not valid JSON"),
    (["--load", "binary.json"], "binary.json is not a saved game"),
])
def test_bad_arguments_and_saves_are_one_line_errors(capsys, argv, message):
    open("corrupt.json", "w").write('{"format": "space_conquest/1", "seed": ')
    open("binary.json", "wb").write(bytes(range(200, 256)))
    assert run(argv, [])[0] == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tabletop play space-conquest: error:") and message in err[0]


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        run(["--mode", "lvl", "--players", "heuristic"], [])
    assert stop.value.code == 2 and "expected 2 arguments" in capsys.readouterr().err
