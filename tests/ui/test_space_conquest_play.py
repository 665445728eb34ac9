"""Terminal play driven through standard input: in process (``play_main``) and through the real
``python -m tabletop_rl.cli play space-conquest`` command."""

import io
import json
import os
import pty
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tabletop_rl.agents.llm.client import KEY_ENV_VARS
from tabletop_rl.cli import main
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
    assert text.startswith(f"Turn 2/100 - P0\nYour stars: {h}(RU 4, 6 ships, home)\n")
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
             f"send 1 from {home} to {home}", f"send 2 from {home} to {near}", "orders", "done", "quit"]
    status, out = run(["--mode", "hvl", "--opponent", "heuristic", "--seed", "5"], lines)
    assert status == 0
    assert "Commands:\n  move 3 ships from A to B" in out and "save FILE     quit" in out  # help
    assert "! unknown command 'fly to the moon'" in out
    assert "'many' is not a number of ships" in out
    assert f"{home} has 4 ships, cannot send 9" in out and "over-committed" in out
    assert f"! origin and destination are both {home}" in out
    assert f"  2 from {home} to {near}" in out
    assert "Turn 2/100" in out and f"your fleet of 2 from {home}" in out
    assert out.rstrip().endswith("game saved to space-conquest-save.json; go on with: "
                                 "tabletop play space-conquest --load space-conquest-save.json")
    saved = SpaceConquestGame.from_json(open("space-conquest-save.json").read())
    assert saved.turn == 2 and saved.history[0][0] == [(game.home(0), "ABCDEFGHIJKLMNOP".index(near), 2)]


def test_hvh_hands_over_before_every_view():
    status, out = run(["--mode", "hvh", "--seed", "3"], ["", "done", "", "done", "", "quit"])
    marks = [out.index(s) for s in ("Hand over to P0", "P0>", "Hand over to P1", "P1>",
                                    "Turn 2/100 - P0")]
    assert marks == sorted(marks) and status == 0
    first_view = out[marks[0]:marks[2]]
    assert "- P1" not in first_view and "P1>" not in first_view


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


# --- through the real command ----------------------------------------------------------------------------
COMMAND = [sys.executable, "-m", "tabletop_rl.cli", "play", "space-conquest"]


def offline_env(**extra: str) -> dict[str, str]:
    """The environment without any LLM API key (as on a machine that never set one)."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_ENV_VARS}
    return {**env, **extra}


def cli(args: list[str], lines: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(COMMAND + args, input="".join(line + "\n" for line in lines), capture_output=True,
                          text=True, cwd=cwd, env=offline_env(**env), timeout=600)


def resume_command(stdout: str) -> list[str]:
    """The command the game printed to go on with, as the real command line (``tabletop`` is our CLI)."""
    printed = re.findall(r"go on with: (.+)$", stdout, flags=re.M)[-1]
    words = shlex.split(printed)
    assert words[:3] == ["tabletop", "play", "space-conquest"], printed
    return words[3:]


def orders_of(seed: int) -> tuple[str, str]:
    game = SpaceConquestGame(seed=seed)
    return game.home_letter(0), game.nearest_letter(game.home_letter(0))


def test_hot_seat_hand_over_clears_so_p1_never_sees_p0s_orders(tmp_path):
    home, near = orders_of(3)
    done = cli(["--mode", "hvh", "--seed", "3"], ["", f"send 2 from {home} to {near}", "orders", "done", "", "done",
                                                   "quit"], tmp_path)
    out = done.stdout
    assert done.returncode == 0 and "\x1b[" not in out  # not a terminal: a marker line, no escape codes
    start = out.index("screen cleared for P1")
    second = out[start:out.index("screen cleared for P0", start)]
    assert "Hand over to P1" in second and "P1>" in second
    assert f"2 from {home} to {near}" not in second and home + "->" not in second
    assert f"ok: 2 from {home} to {near}" in out[:start]


def read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return
        if not chunk:
            return
        into.append(chunk)


def test_hot_seat_on_a_terminal_clears_the_screen_and_the_scrollback(tmp_path):
    controller, terminal = pty.openpty()
    child = subprocess.Popen(COMMAND + ["--mode", "hvh", "--seed", "3"], stdin=subprocess.PIPE, stdout=terminal,
                             stderr=terminal, cwd=tmp_path, env=offline_env())
    os.close(terminal)
    chunks: list[bytes] = []
    reader = threading.Thread(target=read_all, args=(controller, chunks))
    reader.start()
    child.communicate(b"\ndone\n\ndone\nquit\n", timeout=600)
    reader.join(60)
    os.close(controller)
    out = b"".join(chunks).decode()
    assert child.returncode == 0
    assert out.count("\x1b[H\x1b[2J\x1b[3J") >= 3 and "screen cleared" not in out


@pytest.mark.slow  # a cold numba compile in a subprocess: 15-25 s on 2 cores
def test_the_first_run_says_it_is_compiling_before_any_silence(tmp_path):
    """A fresh numba cache makes the first run compile (about 10 s): the notice comes before the first view
    and prompt; the next run, with the cache filled, has nothing to say."""
    cache = str(tmp_path / "numba-cache")
    first = cli(["--seed", "3"], ["done", "quit"], tmp_path, NUMBA_CACHE_DIR=cache)
    notice = "compiling kernels (first run only)"
    assert first.returncode == 0 and notice in first.stdout
    assert first.stdout.index(notice) < first.stdout.index("Turn 1/100") < first.stdout.index("P0>")
    again = cli(["--seed", "3"], ["done", "quit"], tmp_path, NUMBA_CACHE_DIR=cache)
    assert again.returncode == 0 and notice not in again.stdout


@pytest.mark.parametrize("args, lines, resumed", [
    (["--mode", "hvh", "--seed", "3"], ["", "done", "", "done", "quit"], ["", "quit"]),
    (["--opponent", "random", "--seat", "1", "--seed", "3"], ["done", "quit"], ["quit"]),
])
def test_the_printed_resume_command_resumes_with_the_same_mode_and_seats(tmp_path, args, lines, resumed):
    first = cli(args, lines, tmp_path)
    assert first.returncode == 0, first.stderr
    again = cli(resume_command(first.stdout), resumed, tmp_path)
    assert again.returncode == 0, again.stderr
    if "hvh" in args:
        assert "Hand over to P0" in again.stdout and "Turn 2/100 - P0" in again.stdout
    else:
        assert "Turn 2/100 - P1" in again.stdout and "P1>" in again.stdout
    saved = json.loads((tmp_path / "space-conquest-save.json").read_text())
    assert saved["play"]["seats"] == (["human", "human"] if "hvh" in args else ["random", "human"])


def test_plain_play_works_offline_against_the_heuristic(tmp_path):
    done = cli([], ["done", "quit"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Turn 2/100 - P0" in done.stdout and "P1: heuristic" in done.stdout


def test_an_llm_mode_without_a_key_is_one_line_naming_what_to_set(tmp_path):
    done = cli(["--opponent", "llm"], ["done"], tmp_path)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1 and "TABLETOP_LLM_API_KEY" in err[0]


def test_a_second_game_does_not_overwrite_the_first_save(tmp_path):
    first = cli(["--seed", "3"], ["done", "quit"], tmp_path)
    kept = (tmp_path / "space-conquest-save.json").read_bytes()
    second = cli(["--seed", "4"], ["quit"], tmp_path)
    assert second.returncode == 0 and (tmp_path / "space-conquest-save.json").read_bytes() == kept
    assert "space-conquest-save.json exists" in second.stdout and "space-conquest-save-2.json" in second.stdout
    assert resume_command(second.stdout) == ["--load", "space-conquest-save-2.json"]
    assert json.loads((tmp_path / "space-conquest-save-2.json").read_text())["seed"] == 4
    resumed = cli(resume_command(first.stdout), ["done", "quit"], tmp_path)  # the first game goes on in its file
    assert "Turn 3/100" in resumed.stdout and json.loads((tmp_path / "space-conquest-save.json").read_text())[
        "seed"] == 3


@pytest.mark.parametrize("second", [3, 9], ids=["together", "alone"])
def test_an_over_committed_star_rejects_the_typed_set_and_the_screen_says_so_truly(tmp_path, second):
    """§9: 2 then 3 (together 5) or 2 then 9 (alone more than 4) ships out of a home of 4 reject the whole set;
    the listed move is shown as rejected and no order stands."""
    home, near = orders_of(5)
    lines = [f"send 2 from {home} to {near}", f"send {second} from {home} to {near}", "orders", "done", "quit"]
    done = cli(["--seed", "5"], lines, tmp_path)
    out = done.stdout
    assert done.returncode == 0
    total = "5 (2 + 3)" if second == 3 else f"{2 + second} (2 + {second})"
    assert f"{home} has 4 ships, cannot send {total}: over-committed" in out
    assert f"rejected: 2 from {home} to {near}" in out and f"rejected: {second} from {home} to {near}" in out
    after = out[out.index(f"rejected: {second} from"):]
    assert "no orders yet" in after and f"  2 from {home} to {near}" not in after
    assert "Turn 2/100" in after and "Fleets in flight: none" in after


def test_options_before_the_game_name_are_refused_with_the_right_order(capsys):
    assert main(["play", "--seed", "3", "space-conquest"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tabletop play space-conquest [options]" in err[0]


def test_load_with_a_seed_is_one_line_and_save_refuses_another_games_file(tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text("keep me")
    status, out = run(["--seed", "3"], [f"save {other}", "quit"])
    assert status == 0 and f"! {other} already exists and holds another game" in out
    assert other.read_text() == "keep me"
    assert run(["--load", "space-conquest-save.json", "--seed", "4"], [])[0] == 2
    assert "drop --seed and --max-turns" in capsys.readouterr().err
