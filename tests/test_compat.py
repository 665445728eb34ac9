"""Files written before the layered redesign still work: arena run folders resume and replay, the games they
recorded (the shipped ``ppo:default`` and Klaverjas ``model`` among the players) play out move for move the
same, and saved terminal games load.

The fixtures in tests/data/runs_0_1/ were written by tabletop_rl 0.1.0 at commit 33715f3 (the last commit
before the redesign): ``tabletop arena <game> --games 2 --jobs 1 --seed 5`` for each game, a Splendor
``tabletop play`` quit after two moves, and a Space Conquest hot-seat game quit after four turns.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from extra_skips import needs
from tabletop_rl.arena import load_games
from tabletop_rl.arena.results import read_config
from tabletop_rl.cli import main
from tabletop_rl.ui.space_conquest_play import play_main
from tabletop_rl.ui.terminal import load_table, new_table, play_terminal, replay_terminal, save_table

DATA = Path(__file__).parent / "data" / "runs_0_1"
GAMES = ("splendor", "klaverjas", "space-conquest")
TIMINGS = ("time_s", "wall_s")


def copy_run(game: str, tmp_path: Path) -> Path:
    out = tmp_path / game
    shutil.copytree(DATA / game, out)
    return out


def records(out: Path) -> list[dict]:
    return sorted(load_games(out), key=lambda r: r["index"])


def without_timings(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMINGS}


@pytest.mark.parametrize("game", GAMES)
def test_an_old_run_resumes_with_nothing_left_to_play(game, tmp_path, capsys):
    if game == "splendor":
        needs("sb3_contrib")  # ppo:default, a player of this run, is loaded before the run finds nothing left
    out = copy_run(game, tmp_path)
    before = (out / "games.jsonl").read_bytes()
    assert main(["arena", game, "--out", str(out), "--resume", "--jobs", "1"]) == 0
    assert (out / "games.jsonl").read_bytes() == before
    assert "resuming" in capsys.readouterr().err


@pytest.mark.parametrize("game", GAMES)
def test_an_interrupted_old_run_finishes_with_the_same_games(game, tmp_path):
    if game == "splendor":
        needs("sb3_contrib")  # ppo:default plays in this run
    out = copy_run(game, tmp_path)
    original = records(out)
    lines = (out / "games.jsonl").read_text().splitlines(keepends=True)
    (out / "games.jsonl").write_text("".join(lines[:-2]))  # the last two games were never played
    assert main(["arena", game, "--out", str(out), "--resume", "--jobs", "1"]) == 0
    replayed = records(out)
    assert [r["index"] for r in replayed] == [r["index"] for r in original]
    assert [without_timings(r) for r in replayed] == [without_timings(r) for r in original]


@pytest.mark.parametrize("game", GAMES)
def test_every_old_game_replays_to_its_recorded_result(game):
    for record in records(DATA / game):
        out = io.StringIO()
        assert replay_terminal(DATA / game, record["index"], stdout=out, interactive=False) == 0
        assert f"game {record['index']}:" in out.getvalue() and "Game over" in out.getvalue()


def test_an_old_splendor_save_loads_and_plays_on(tmp_path):
    save = tmp_path / "save.json"
    shutil.copy(DATA / "splendor-save.json", save)
    out = io.StringIO()
    assert play_terminal(load=save, stdin=io.StringIO("1\nquit\n"), stdout=out, save=save) == 0
    assert "(you) plays" in out.getvalue() and json.loads(save.read_text())["game"] == "splendor"


def test_an_old_space_conquest_save_loads(tmp_path):
    save = tmp_path / "space-conquest-save.json"
    shutil.copy(DATA / "space-conquest-save.json", save)
    played = len(json.loads(save.read_text())["history"])
    out = io.StringIO()
    assert play_main(["--mode", "hvh", "--load", str(save), "--save", str(save)], stdin=io.StringIO("\nquit\n"),
                     stdout=out) == 0
    assert f"Turn {played + 1}/100 - P0" in out.getvalue()


def test_the_old_spelling_space_conquest_is_read_as_the_games_one_name(tmp_path):
    out = copy_run("space-conquest", tmp_path)
    assert json.loads((out / "config.json").read_text())["game"] == "space-conquest"  # as 0.1.0 wrote it
    assert read_config(out)["game"] == "space_conquest"
    assert {record["game"] for record in load_games(out)} == {"space_conquest"}
    save = tmp_path / "web-save.json"  # a game of the browser's play table, saved under the old spelling
    save_table(new_table("space_conquest", ["heuristic"], 2, 0, 7), save)
    save.write_text(save.read_text().replace('"game": "space_conquest"', '"game": "space-conquest"'))
    assert '"space-conquest"' in save.read_text() and load_table(save).game == "space_conquest"
