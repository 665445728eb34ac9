"""Terminal play and replays through the real entry point (``python -m tabletop_rl.cli``), fed by standard
input: the moves a person types, what the move list and the board tell them, how a stopped replay ends,
what a spectator sees, and plain text wherever the output is not a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tabletop_rl.arena import load_games
from tabletop_rl.games.klaverjas import rules as KR
from tabletop_rl.ui.terminal import replay_frames

COMMAND = [sys.executable, "-m", "tabletop_rl.cli"]
RUNS = Path(__file__).resolve().parents[1] / "data" / "runs_0_1"
PLAIN = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}  # colour decided by the stream alone


def tabletop(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> str:
    """Run the command with ``stdin`` piped in and stdout piped out; its stdout (exit status 0 asserted)."""
    result = subprocess.run([*COMMAND, *args], input=stdin, capture_output=True, text=True, timeout=120,
                            env=PLAIN if env is None else env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def play(tmp_path: Path, *answers: str) -> str:
    """Splendor against random from seed 3 (P0 to move: market level 1 is #2 #33 #30 #6), then quit."""
    return tabletop("play", "splendor", "--vs", "random", "--seed", "3", "--save", str(tmp_path / "save.json"),
                    stdin="\n".join([*answers, "quit"]) + "\n")


def on_a_terminal(args: list[str], answers: str, env: dict[str, str], tty_out: bool) -> str:
    """Run the command with stdin a terminal (a pty) and stdout either that terminal or a pipe; its output."""
    controller, terminal = pty.openpty()
    child = subprocess.Popen([*COMMAND, *args], stdin=terminal, stdout=terminal if tty_out else subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    os.close(terminal)
    chunks: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(controller, chunks))  # drains the echo (and the output)
    reader.start()
    os.write(controller, answers.encode())
    out, err = child.communicate(timeout=120)
    reader.join(60)
    os.close(controller)
    assert child.returncode == 0, err.decode()
    return b"".join(chunks).decode() if tty_out else out.decode()


def _read_all(fd: int, chunks: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed its end
            return
        if not data:
            return
        chunks.append(data)


# --- item 18: typing Splendor moves -------------------------------------------------------------------
@pytest.mark.parametrize("typed, played", [
    ("take:red,green,blue", "take:blue,green,red"),
    ("take:w,B,g", "take:white,blue,green"),
    ("TAKE2:k", "take2:black"),
])
def test_a_take_in_any_colour_order_or_in_the_boards_letters_is_played(tmp_path, typed, played):
    out = play(tmp_path, typed)
    assert "unknown" not in out and f"P0 (you) plays {played}" in out


@pytest.mark.parametrize("typed, says", [
    ("take:red,red,blue", "a colour is named twice (two of one colour is take2:<colour>)"),
    ("take:w,u,k", "'u' is not a colour (colours: white blue green red black, or the board's letters w b g r k)"),
    ("buy:2.4", "slot 0-3 as the board labels the market"),
])
def test_a_bad_name_says_what_the_move_looks_like(tmp_path, typed, says):
    assert says in play(tmp_path, typed)


def test_the_move_list_shows_each_card_and_the_board_labels_slots_as_the_moves_do(tmp_path):
    out = play(tmp_path)
    lines = out.splitlines()
    row = next(k for k, line in enumerate(lines) if line.startswith("Level 1"))
    board = " ".join(lines[row:row + 2])  # the level's four cards take two lines, to fit 80 columns
    assert "1.0 [#2 W 0p | b1 g2 r1 k1]" in board and "1.3 [#6 W 0p | w3 b1 k1]" in board
    assert re.search(r"\d+ reserve:1\.0 \[#2 W 0p \| b1 g2 r1 k1\]", out)
    assert re.search(r"\d+ reserve:3\.2 \[#88 K 4p \| g3 r6 k3\]", out)
    assert re.search(r"Nobles   0 \[N9 3p \| g3 r3 k3\]  1 \[N4 ", out)


def test_an_opponents_move_names_its_card(tmp_path):
    out = play(tmp_path, "take:r,g,b")
    assert "P1 (random) plays reserve:2.1 [#46 B 1p | b2 g2 r3]" in out


def test_an_illegal_move_is_explained_to_you(tmp_path):
    out = play(tmp_path, "buy:3.0")
    assert "buy:3.0: card 78 costs 14 more than your tokens and bonuses cover, and you hold 0 gold" in out
    assert "player 0" not in out


# --- item 23: replays and colour -----------------------------------------------------------------------
def test_quitting_a_replay_midway_says_where_it_stopped_not_how_the_game_ended():
    plies = len(min(load_games(RUNS / "splendor"), key=lambda r: r["index"])["moves"])
    out = on_a_terminal(["replay", str(RUNS / "splendor")], "n\nn\nq\n", PLAIN, tty_out=False)
    assert f"stopped at ply 2 of {plies}" in out and "Game over" not in out
    finished = on_a_terminal(["replay", str(RUNS / "splendor")], f"{plies}\nq\n", PLAIN, tty_out=False)
    assert "Game over" in finished and "stopped" not in finished


def one_move_past_the_end(game: str) -> dict:
    """The first recorded game of ``game`` with its last move played once more, after the game's end."""
    record = json.loads((RUNS / game / "games.jsonl").read_text().splitlines()[0])
    return {**record, "moves": [*record["moves"], record["moves"][-1]], "plies": record["plies"] + 1}


@pytest.mark.parametrize("folder, game", [("splendor", "splendor"), ("klaverjas", "klaverjas"),
                                          ("space-conquest", "space_conquest")])  # a record of the old spelling
def test_a_replay_of_a_move_after_the_games_end_is_one_line_naming_the_record(tmp_path, folder, game):
    record = one_move_past_the_end(folder)
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(record) + "\n")
    result = subprocess.run([*COMMAND, "replay", str(path)], capture_output=True, text=True, timeout=120, env=PLAIN)
    assert result.returncode == 2 and "Traceback" not in result.stderr and result.stderr.count("\n") == 1, \
        result.stderr
    assert f"{path}:1: game 0, move {record['plies']} (" in result.stderr, result.stderr
    assert f"does not replay: {game}: the game is over" in result.stderr, result.stderr
    with pytest.raises(ValueError, match=f"^game 0, move {record['plies']} .* the game is over$"):
        replay_frames({**record, "game": game})  # what the web viewer rebuilds a loaded game with

def _hands_shown(frame: str) -> dict[str, list[str]]:
    """Seat name -> the cards a Klaverjas frame lists for it (a hidden hand reads "8 cards" and is left out)."""
    hands = (re.match(r"^[* ][NESW] (player_\d): (.*)$", line) for line in frame.splitlines())
    return {m[1]: m[2].split() for m in hands if m and not m[2].endswith(" cards")}


def test_the_klaverjas_spectator_replay_shows_all_four_hands_and_a_seats_only_its_own():
    start = tabletop("replay", str(RUNS / "klaverjas")).split("--- ply 1/")[0]
    hands = _hands_shown(start)
    assert sorted(hands) == ["player_0", "player_1", "player_2", "player_3"]
    cards = [card for hand in hands.values() for card in hand]
    assert len(cards) == len(set(cards)) == 32 and {KR.card_name(c) for c in range(32)} == set(cards)
    seat = tabletop("replay", str(RUNS / "klaverjas"), "--seat", "1")
    assert sorted(_hands_shown(seat.split("--- ply 1/")[0])) == ["player_1"]


@pytest.mark.parametrize("args", [
    ["replay", str(RUNS / "splendor")],
    ["replay", str(RUNS / "splendor"), "--seat", "1"],
    ["replay", str(RUNS / "klaverjas")],
    ["replay", str(RUNS / "klaverjas"), "--seat", "0"],
])
def test_a_piped_replay_is_plain_text(args):
    assert "\x1b[" not in tabletop(*args)


@pytest.mark.parametrize("kind", ["named pipe", "folder"])
def test_a_save_target_that_is_not_a_regular_file_is_refused_before_play(tmp_path, kind):
    target = tmp_path / "target"
    os.mkfifo(target) if kind == "named pipe" else target.mkdir()
    result = subprocess.run([*COMMAND, "play", "splendor", "--vs", "random", "--save", str(target)],
                            input="quit\n", capture_output=True, text=True, timeout=120, env=PLAIN)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"tabletop play: error: cannot save to {target}: it is a {kind}, not a regular file\n"
    assert (target.is_fifo() if kind == "named pipe" else target.is_dir()) and os.listdir(tmp_path) == ["target"]


def test_piped_play_is_plain_text(tmp_path):
    out = play(tmp_path, "board", "take:r,g,b", "1")
    assert "Legal moves" in out and "\x1b[" not in out


#: An ANSI colour: any SGR code but a bare reset, which numba's colorama writes to a terminal at exit.
COLOUR = re.compile(r"\x1b\[(?!0?m)[0-9;]*m")


def test_on_a_terminal_colour_follows_no_color(tmp_path):
    args, answers = ["play", "splendor", "--vs", "random", "--seed", "3", "--save", str(tmp_path / "s.json")], "quit\n"
    assert COLOUR.search(on_a_terminal(args, answers, PLAIN, tty_out=True))
    assert not COLOUR.search(on_a_terminal(args, answers, {**PLAIN, "NO_COLOR": "1"}, tty_out=True))
    assert COLOUR.search(on_a_terminal(args, answers, {**PLAIN, "NO_COLOR": ""}, tty_out=True))  # no-color.org
    replay = on_a_terminal(["replay", str(RUNS / "splendor")], "q\n", {**PLAIN, "NO_COLOR": "1"}, tty_out=True)
    assert "--- ply 0/" in replay and not COLOUR.search(replay)


def test_the_default_save_files_are_ignored_by_git():
    """Play and the web page save into the folder they run in by default; in a checkout that must not leave
    files for git to pick up."""
    from fnmatch import fnmatch

    from tabletop_rl.cli import _WEB_SAVES
    from tabletop_rl.ui import space_conquest_play, terminal

    root = Path(__file__).resolve().parents[2]
    patterns = [line.strip().rstrip("/") for line in (root / ".gitignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    defaults = [str(terminal._DEFAULT_SAVE), str(space_conquest_play._DEFAULT_SAVE), "space-conquest-save-2.json",
                str(_WEB_SAVES)]
    assert [name for name in defaults if not any(fnmatch(name, p) for p in patterns)] == []


def _listed(out: str) -> list[list[tuple[int, str]]]:
    """Each 'Legal moves' list of a play transcript: (number, move name) in the order shown."""
    lists = []
    for block in out.split("Legal moves:\n")[1:]:
        rows = block.split("your move>")[0]
        lists.append([(int(k), name) for k, name in re.findall(r"(\d+) ((?:take2?|reserve|buy|noble|return|pass)\S*)",
                                                                rows)])
    return lists


def test_moves_keep_their_numbers_from_turn_to_turn_and_buys_come_before_reserves(tmp_path):
    lists = _listed(play(tmp_path, "take:w,b,k", "take:w,b,k", "take:w,b,k"))  # then P0 can buy from level 1
    first, second = lists[0], lists[3]
    names = [name for _, name in second]
    assert any(name.startswith("buy:") for name in names)
    assert max(k for k, name in enumerate(names) if name.startswith("buy")) < \
        min(k for k, name in enumerate(names) if name.startswith("reserve"))
    numbers = dict(first)
    assert [(k, name) for k, name in second if name in numbers.values()] == \
        [(k, name) for k, name in second if numbers.get(k) == name]
    assert {name for _, name in second} & set(numbers.values())  # the two lists share moves to compare
