"""The run folder's doors: every record is checked when a run is resumed or read, its moves replayed to what it
says of its game, one run holds a run folder at a time, and a config or a disk that fails is one line naming the
file, with the finished games kept."""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from tabletop_rl.arena import load_games, run_arena
from tabletop_rl.arena.results import GAMES_FILE
from tabletop_rl.cli import main

COMMAND = [shutil.which("tabletop")] if shutil.which("tabletop") else [sys.executable, "-m", "tabletop_rl.cli"]
ENV = {**os.environ, "NO_COLOR": "1"}
RUN = {"game": "splendor", "players": ["random", "greedy"], "games": 6, "seed": 3, "jobs": 1, "progress": False}


def tabletop(*args: str, timeout: float = 120, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, env=ENV, timeout=timeout, **popen)


def one_line_error(stderr: str, *names: str, after_progress: bool = False) -> str:
    """The stderr of a refused command: one line, no traceback, naming each of ``names``; with
    ``after_progress`` the error is the last line, after the run's own progress lines."""
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr and (len(lines) == 1 or after_progress and lines), stderr
    if after_progress:
        assert all(line.startswith(("arena ", "games ")) for line in lines[:-1]), stderr
        lines = lines[-1:]
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


def finished_run(out: Path) -> list[str]:
    """A finished run of 6 games in ``out``; its lines, in file order."""
    run_arena(out=out, **RUN)
    return (out / GAMES_FILE).read_text().splitlines(keepends=True)


# --- 1. every record is checked on resume -----------------------------------------------------------------
BAD_RECORDS = {
    "only an index": (lambda r: {"index": 3}, 'lacks "game"'),
    "no error key": (lambda r: {k: v for k, v in r.items() if k != "error"}, 'lacks "error"'),
    "index as text": (lambda r: {**r, "index": str(r["index"])}, '"index" must be'),
    "seats not a list": (lambda r: {**r, "seats": "random"}, '"seats" must be'),
    "moves not a list": (lambda r: {**r, "moves": 5}, '"moves" must be'),
    "scores of text": (lambda r: {**r, "scores": ["a", "b"]}, '"scores" must be'),
    "scores too short": (lambda r: {**r, "scores": r["scores"][:1]}, '"scores" must be'),
    "error a number": (lambda r: {**r, "error": 1}, '"error" must be'),
}


@pytest.mark.parametrize("name", list(BAD_RECORDS))
def test_a_line_that_is_no_game_record_stops_the_resume_naming_file_and_line(tmp_path, name):
    lines = finished_run(tmp_path)
    spoil, reason = BAD_RECORDS[name]
    bad = json.dumps(spoil(json.loads(lines[3]))) + "\n"
    (tmp_path / GAMES_FILE).write_text(lines[0] + lines[1] + bad + lines[2])  # game 3 on line 3, then game 2
    before = (tmp_path / GAMES_FILE).read_bytes()
    with pytest.raises(ValueError, match=f"{GAMES_FILE}:3: not a game record: .*{reason}") as caught:
        run_arena(out=tmp_path, resume=True, **RUN)
    assert str(tmp_path) in str(caught.value) and "\n" not in str(caught.value)
    assert (tmp_path / GAMES_FILE).read_bytes() == before, "a refused file is left as it was"


def test_a_record_that_is_no_game_record_is_one_line_at_the_command_line(tmp_path, capsys):
    lines = finished_run(tmp_path)
    (tmp_path / GAMES_FILE).write_text(lines[0] + '{"index": 1}\n' + lines[2])
    assert main(["arena", "splendor", "--out", str(tmp_path), "--resume"]) == 2
    one_line_error(capsys.readouterr().err, f"{tmp_path / GAMES_FILE}:2: not a game record")


def test_a_record_of_another_run_is_refused(tmp_path):
    lines = finished_run(tmp_path)
    stranger = {**json.loads(lines[1]), "seed": json.loads(lines[1])["seed"] + 1}
    (tmp_path / GAMES_FILE).write_text(lines[0] + json.dumps(stranger) + "\n" + lines[2])
    with pytest.raises(ValueError, match=f"{GAMES_FILE}:2: game 1 is not this run's game 1"):
        run_arena(out=tmp_path, resume=True, **RUN)


def test_only_a_torn_last_line_is_repaired_and_that_game_played_again(tmp_path):
    lines = finished_run(tmp_path)
    (tmp_path / GAMES_FILE).write_text("".join(lines[:5]) + lines[5][:-1])  # game 5 lost its newline
    with pytest.warns(UserWarning, match=f"{GAMES_FILE}:6: ignoring a torn last line"):
        summary = run_arena(out=tmp_path, resume=True, **RUN)
    assert summary["games"] == 6 and sorted(r["index"] for r in load_games(tmp_path)) == list(range(6))



@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished run of 6 games, copied by each test that spoils it."""
    out = tmp_path_factory.mktemp("finished")
    run_arena(out=out, **RUN)
    return out


def _crash(record: dict) -> dict:
    return {**record, "error": "seat 0 (random) raised RuntimeError: boom", "error_seat": 0, "ranks": None}


def _more_seats(record: dict) -> dict:
    return {**record, "seats": [*record["seats"], "random"], "scores": [*record["scores"], 0],
            "ranks": [*record["ranks"], 0], "decisions": [*record["decisions"], 0],
            "time_s": [*record["time_s"], 0.0], "nodes": [*record["nodes"], 0]}


#: An LLM's note on a move, as a record keeps it.
NOTE = {"source": "llm", "reasoning": "cheap", "attempts": 2, "parse_failures": 1, "illegal_replies": 0, "truncated": 0,
        "rejected": [{"kind": "parse", "reason": "no JSON object", "reply": "hmm"}], "fallback_reason": "",
        "prompt_tokens": 900, "completion_tokens": 40, "cached_tokens": 0, "cost": None, "latency_s": 1.5,
        "time_s": 2.5}


def _notes(r: dict, first: dict) -> list:
    return [first] + [None] * (r["plies"] - 1)


#: A record that its own moves contradict, or that holds what no viewer can show, and what the one-line error says.
CONTRADICTIONS = {
    "scores": (lambda r: {**r, "scores": [r["scores"][0] + 1, *r["scores"][1:]]}, '"scores" is .* but its moves give'),
    "winners": (lambda r: {**r, "winners": [s for s in (0, 1) if s not in r["winners"]]}, '"winners" is'),
    "ranks": (lambda r: {**r, "ranks": [1 - rank for rank in r["ranks"]]}, '"ranks" is'),
    "plies": (lambda r: {**r, "plies": r["plies"] + 1}, '"plies" is'),
    "truncated": (lambda r: {**r, "truncated": not r["truncated"]}, '"truncated" is'),
    "decisions": (lambda r: {**r, "decisions": [r["decisions"][0] + 1, r["decisions"][1]]}, '"decisions" is'),
    "winners of a crash": (_crash, '"winners" is .* but its moves give \\[\\]'),
    "seats": (_more_seats, '"seats" name 3 policies for 2 players'),
    "llm_notes": (lambda r: {**r, "llm_notes": [None]}, '"llm_notes" must hold one entry per move'),
    "an llm note without its fields": (lambda r: {**r, "llm_notes": [{"source": "llm"}] + [None] * (r["plies"] - 1)},
                                       '"llm_notes" entry 0 lacks "attempts"'),
    "a rejected reply without its texts": (
        lambda r: {**r, "llm_notes": _notes(r, {**NOTE, "rejected": [{"kind": "parse", "reason": "no JSON"}]})},
        '"llm_notes" entry 0 "rejected" must be a list of objects with the texts "kind", "reason" and "reply"'),
    "a decision time that is no number": (lambda r: {**r, "llm_notes": _notes(r, {**NOTE, "time_s": "2 s"})},
                                          '"llm_notes" entry 0 "time_s" must be a number'),
    "a forfeit note without its fields": (lambda r: {**r, "forfeit_note": {"source": "forfeit"}},
                                          '"forfeit_note" lacks "attempts"'),
    "a forfeit reason that is no text": (lambda r: {**r, "forfeit_reason": ["x"]},
                                         '"forfeit_reason" must be a text or null'),
    "moves cut short": (lambda r: {**r, "moves": r["moves"][:-1], "plies": r["plies"] - 1},
                        '"moves" stop before the game\'s end'),
    "a move after the end": (lambda r: {**r, "moves": [*r["moves"], r["moves"][-1]], "plies": r["plies"] + 1},
                             "move .* does not replay: splendor: the game is over"),
    "a move the rules refuse": (lambda r: {**r, "moves": ["take2:nothing", *r["moves"][1:]]},
                                r"move 1 \('take2:nothing'\) does not replay"),
}


@pytest.mark.parametrize("name", list(CONTRADICTIONS))
def test_a_record_its_moves_contradict_is_refused_naming_line_game_and_field(finished, tmp_path, name):
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    lines = (out / GAMES_FILE).read_text().splitlines(keepends=True)
    spoil, reason = CONTRADICTIONS[name]
    bad = json.dumps(spoil(json.loads(lines[2]))) + "\n"
    (out / GAMES_FILE).write_text("".join([*lines[:2], bad, *lines[3:]]))
    before = (out / GAMES_FILE).read_bytes()
    pattern = f"{GAMES_FILE}:3: game 2(,|:) .*{reason}"
    with pytest.raises(ValueError, match=pattern) as caught:
        load_games(out)
    assert "\n" not in str(caught.value)
    resumed = f"{GAMES_FILE}:3: game 2 is not this run's game 2" if name == "seats" else pattern  # the schedule's seats
    with pytest.raises(ValueError, match=resumed):
        run_arena(out=out, resume=True, **RUN)
    assert (out / GAMES_FILE).read_bytes() == before, "a refused file is left as it was, every good game in it"



def test_an_option_too_large_for_the_game_is_one_line_naming_the_record(tmp_path):
    recorded = Path(__file__).resolve().parents[1] / "data" / "runs_0_1" / "klaverjas" / GAMES_FILE
    record = {**json.loads(recorded.read_text().splitlines()[0]), "options": {"deals": 2**70}}
    (tmp_path / GAMES_FILE).write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=f"{GAMES_FILE}:1: game 0: deals must be an integer 1..10000, got {2**70}$"):
        load_games(tmp_path)

def test_a_contradicted_record_is_one_line_at_the_replay_command(finished, tmp_path, capsys):
    lines = (finished / GAMES_FILE).read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    (tmp_path / GAMES_FILE).write_text(lines[0] + json.dumps({**record, "plies": 1}) + "\n")
    assert main(["replay", str(tmp_path), "--game", "0"]) == 2
    one_line_error(capsys.readouterr().err, f"{tmp_path / GAMES_FILE}:2: game 1: \"plies\" is 1 but its moves give")


def test_a_line_nested_too_deeply_for_the_parser_is_no_game_record(finished, tmp_path):
    lines = (finished / GAMES_FILE).read_text().splitlines(keepends=True)
    (tmp_path / GAMES_FILE).write_text(lines[0] + "[" * 100_000 + "\n" + lines[1])
    with pytest.raises(ValueError, match=f"{GAMES_FILE}:2: not a game record: not JSON"):
        load_games(tmp_path)


def test_a_results_file_that_is_no_regular_file_is_refused_not_read_forever(tmp_path):
    fifo = tmp_path / GAMES_FILE
    os.mkfifo(fifo)  # a read would wait for a writer that never comes
    result = tabletop("replay", str(fifo), timeout=60)
    assert result.returncode == 2
    one_line_error(result.stderr, f"{fifo}: not a regular file")

# --- 2. one run per run folder at a time --------------------------------------------------------------------
def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_second_run_on_a_busy_run_folder_is_refused_naming_the_holder(tmp_path):
    out, games = tmp_path / "run", 60
    args = ["arena", "splendor", "--players", "random,greedy", "--games", str(games), "--seed", "1", "--jobs", "1",
            "--out", str(out)]
    first = subprocess.Popen([*COMMAND, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                             start_new_session=True)
    tries: list[subprocess.Popen] = []
    try:
        deadline = time.monotonic() + 60
        while _lines(out / GAMES_FILE) < 1 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.killpg(first.pid, signal.SIGSTOP)  # paused part-way, as a slow run would be: it still holds the folder
        assert first.poll() is None and 1 <= _lines(out / GAMES_FILE) < games, "the first run must be under way"
        tries = [subprocess.Popen([*COMMAND, *more], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
                 for more in (["arena", "splendor", "--out", str(out), "--resume"], args)]  # a resume, a new run
        second, again = (subprocess.CompletedProcess(p.args, p.wait(timeout=60), *p.communicate()) for p in tries)
        os.killpg(first.pid, signal.SIGCONT)
        _, first_err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)  # the run and anything it started
        for process in [first, *tries]:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
    for refused in (second, again):
        assert refused.returncode != 0, refused.stderr
        holder = f"run folder {out} is in use by pid {first.pid} on {socket.gethostname()} since "
        one_line_error(refused.stderr, holder)
    assert first.returncode == 0, first_err
    indices = [r["index"] for r in load_games(out)]
    assert sorted(indices) == list(range(games)), "the first run wrote each scheduled game once"
    resumed = tabletop("arena", "splendor", "--out", str(out), "--resume", timeout=60)
    assert resumed.returncode == 0 and f"resuming: {games} done" in resumed.stderr, "the lock goes with its run"


# --- 3. a config or a disk that fails is one line naming the file ------------------------------------------
@pytest.mark.parametrize("content, reason", [("[1, 2]\n", "not a JSON object"),
                                             ('{"game": "splendor", \n', "not JSON"),
                                             ('{"players": 5}\n', '"players"'),
                                             (None, "Is a directory")])
def test_a_bad_config_is_one_line_naming_it(tmp_path, content, reason):
    config = tmp_path / "config.json"
    if content is None:
        config.mkdir()
    else:
        config.write_text(content)
    result = tabletop("arena", "splendor", "--out", str(tmp_path), "--resume")
    assert result.returncode != 0
    one_line_error(result.stderr, str(config), reason)


def _at_most(limit: int):
    """A child whose files cannot grow past ``limit`` bytes: writes beyond fail with EFBIG, as on a full disk."""
    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return cap


@pytest.mark.parametrize("limit, file", [(60, "config.json"), (5000, GAMES_FILE)])
def test_a_write_that_fails_is_one_line_naming_the_file_and_keeps_every_finished_game(tmp_path, limit, file):
    out = tmp_path / "run"
    args = ["arena", "splendor", "--players", "random,greedy", "--games", "6", "--seed", "2", "--jobs", "1",
            "--out", str(out)]
    # the kernels compiled and cached first (numba writes its cache files on a first run): the cap falls on the
    # run's own files, which are what this is about
    assert tabletop(*args[:-1], str(tmp_path / "warm")).returncode == 0
    failed = tabletop(*args, preexec_fn=_at_most(limit))
    assert failed.returncode != 0
    one_line_error(failed.stderr, str(out / file), "File too large", after_progress=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no torn line was left behind
        kept = load_games(out)
    if file == GAMES_FILE:
        assert kept and all(line.endswith("\n") for line in (out / GAMES_FILE).read_text().splitlines(True))
        finished = tabletop("arena", "splendor", "--out", str(out), "--resume")
        assert finished.returncode == 0 and f"resuming: {len(kept)} done" in finished.stderr
    else:
        assert not (out / "config.json").exists(), "no half-written config is left to block the next run"
        finished = tabletop(*args)
        assert finished.returncode == 0, finished.stderr
    assert sorted(r["index"] for r in load_games(out)) == list(range(6))


def test_a_full_disk_while_appending_is_one_line_and_keeps_the_games_before(tmp_path, monkeypatch):
    real_fsync, synced = os.fsync, []

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(GAMES_FILE):
            synced.append(fd)
            if len(synced) == 3:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    message = re.escape(f"cannot write {tmp_path / GAMES_FILE}: No space left on device")
    with pytest.raises(OSError, match=message) as caught:
        run_arena(out=tmp_path, **RUN)
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value), "the command line's one line"
    assert caught.value.errno == errno.ENOSPC
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert len(load_games(tmp_path)) == 2, "the two games made durable are kept, the third is cut off"
    assert run_arena(out=tmp_path, resume=True, **RUN)["games"] == 6
