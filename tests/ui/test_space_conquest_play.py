"""Terminal play driven through standard input."""

import io
import json

import pytest

from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.game import SpaceConquestGame
from tabletop_rl.games.space_conquest.render import render_map, summary
from tabletop_rl.ui.space_conquest_play import parse_move, play_main


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


def test_the_turn_summary_reports_stars_fleets_combats_rebellions_production_and_order_errors():
    game = SpaceConquestGame(seed=2)
    home = game.home(0)
    far = max(range(R.NUM_STARS), key=lambda s: game.distance(home, s))
    game.step({"moves": [{"from": R.LETTERS[home], "to": R.LETTERS[far], "ships": 2},
                         {"from": "Z", "to": "A", "ships": 1}]}, None)
    npc = [s for s in range(R.NUM_STARS) if game.star(s)["home_of"] is None]
    R.log_event(game.log, R.EV_REBELLION, 2, 0, npc[0], 1, 3, 2, 0, 0)
    R.log_event(game.log, R.EV_COMBAT, 2, R.NOBODY, npc[1], 5, -1, 2, 0, 4)
    R.log_event(game.log, R.EV_COMBAT, 2, R.NOBODY, npc[2], -1, 6, 1, 1, 5)  # the enemy's fight, unseen
    text = summary(game, 0)
    h, x, a, b, c = R.LETTERS[home], R.LETTERS[far], *(R.LETTERS[s] for s in npc[:3])
    assert text.startswith(f"Turn 2/100 - player 1\nYour stars: {h}(RU 4, 6 ships, home)\n")
    assert f"Fleets in flight: 2 {h}->{x} ({game.distance(home, far) - 1} left)" in text
    assert f"  {h} produced 4" in text and "  order error in move 2: unknown star 'Z'" in text
    assert f"  rebellion at {a}: 3 rebels beat your 1; NPC now, 2 ships" in text
    assert f"  combat at {b}: you 5, NPC garrison 2 -> held by you with 4" in text and f"at {c}" not in text


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
    lines = ["help", "fly to the moon", f"send many from {home} to {near}", f"send 9 from {home} to {near}",
             f"send 2 from {home} to {near}", f"send 3 from {home} to {near}", "orders", "done", "quit"]
    status, out = run(["--mode", "hvl", "--opponent", "heuristic", "--seed", "5"], lines)
    assert status == 0
    assert "Commands:\n  move 3 ships from A to B" in out and "save FILE     quit" in out  # help
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
