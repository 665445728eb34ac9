"""The ``tabletop`` command through its real entry point: help, errors, a killed and resumed arena,
terminal play driven through standard input, and replays."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tabletop_rl
from extra_skips import needs
from policy_builds import count_builds
from tabletop_rl import games
from tabletop_rl.arena import load_games
from tabletop_rl.cli import main, split_specs
from tabletop_rl.core.extras import install_hint
from tabletop_rl.games.splendor.game import SplendorGame
from tabletop_rl.ui.terminal import replay_terminal

COMMAND = [shutil.which("tabletop")] if shutil.which("tabletop") else [sys.executable, "-m", "tabletop_rl.cli"]
ENV = {**os.environ, "NO_COLOR": "1"}


def tabletop(*args: str, stdin: str = "", cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], input=stdin, capture_output=True, text=True, cwd=cwd, env=ENV,
                          timeout=timeout)


def test_no_arguments_prints_help():
    result = tabletop()
    assert result.returncode == 0
    for command in ("arena", "play", "replay", "bench", "train"):
        assert command in result.stdout


@pytest.mark.parametrize("command", [["arena"], ["play"], ["replay"], ["bench"], ["train"]])
def test_every_command_has_help(command):
    result = tabletop(*command, "--help")
    assert result.returncode == 0 and "usage: tabletop " + command[0] in result.stdout


@pytest.mark.parametrize("args,message", [
    (["arena", "splendor", "--players", "random,random"], "listed twice"),
    (["arena", "splendor", "--players", "random,greedy", "--num-players", "5"], "not 5"),
    (["arena", "splendor", "--resume"], "--resume needs --out"),
    (["play", "splendor", "--vs", "greedy", "--seat", "2"], "--seat must be in 0..1"),
    (["play", "splendor", "--vs", "greedy,random"], "--vs names 2 policies for 1 opponent seats"),
    (["replay", "missing.jsonl"], "no such file"),
    (["arena", "space-conquest", "--players", "heuristic,random", "--num-players", "3"],
     "space_conquest is played by 2 players, not 3"),
    (["arena", "space-conquest", "--players", "heuristic,greedy"], "bad policy spec 'greedy' for space_conquest"),
    (["arena", "klaverjas", "--options", "foo=1"], "klaverjas has no game option 'foo' (it has deals, rules"),
    (["arena", "splendor", "--options", "deals=2"], "splendor has no game option 'deals' (it has none)"),
    (["arena", "klaverjas", "--options", "rules=bogus"], "rules must be one of 'rotterdam', 'amsterdam'"),
    (["arena", "klaverjas", "--options", "rules"], "game option 'rules' is not key=value"),
    (["arena", "klaverjas", "--options", "deals=2,deals=3"], "game option 'deals' is given twice"),
    (["arena", "space-conquest", "--options", "loss_model=cubic"], "loss_model must be one of flat, nlogn"),
    (["llm-match", "splendor", "--p1", "random"], "--p0 and --p1 are required (with --resume they may come from"),
    (["llm-match", "splendor", "--resume", "--out", "nowhere"], "nothing to resume in nowhere: it has no config.json"),
    (["train", "splendor", "--steps", "0"], "--steps must be positive"),
    (["train", "splendor", "--mix", "greedy=1,strong=1"], "unknown opponent 'strong'"),
    (["train", "splendor", "--eval-opponents", "random,nobody"], "unknown policy 'nobody'"),
])
def test_bad_arguments_give_one_line_and_status_2(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith(f"tabletop {args[0]}: error:")


def test_a_bad_policy_spec_through_the_entry_point_is_one_line_without_traceback():
    result = tabletop("arena", "splendor", "--players", "random,nobody")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1
    assert "bad policy spec 'nobody'" in lines[0] and "Known policies: random" in lines[0]


def test_argparse_errors_exit_2():
    result = tabletop("arena", "splendor", "--games", "many")
    assert result.returncode == 2 and "invalid int value: 'many'" in result.stderr


def test_split_specs_keeps_options_with_their_policy():
    assert split_specs("mcts:simulations=50,c=1.2, random ,llm:model=a/b,base_url=http://h:1/v1") == \
        ["mcts:simulations=50,c=1.2", "random", "llm:model=a/b,base_url=http://h:1/v1"]


# --- arena: a real run killed mid-way, then resumed ------------------------------------------------------
def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_killed_arena_resumes_to_exactly_the_requested_games(tmp_path):
    out, games = tmp_path / "run", 120
    args = ["arena", "splendor", "--players", "random,greedy", "--games", str(games), "--seed", "9",
            "--jobs", "2", "--out", str(out)]
    proc = subprocess.Popen([*COMMAND, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _lines(out / "games.jsonl") < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its workers, as a crash or a kill -9 would
    finally:
        proc.wait(timeout=30)
    killed_at = _lines(out / "games.jsonl")
    assert 3 <= killed_at < games, "the run must be stopped part-way"
    with open(out / "games.jsonl", "a") as fh:  # a line cut short, as a kill during a write leaves it
        fh.write('{"index": 119, "game": "spl')

    result = tabletop("arena", "splendor", "--out", str(out), "--resume", timeout=300)
    assert result.returncode == 0, result.stderr
    assert "torn last line" in result.stderr and f"resuming: {killed_at} done" in result.stderr
    records = load_games(out)
    indices = [r["index"] for r in records]
    assert len(indices) == games and sorted(indices) == list(range(games))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games"] == games and summary["pairings"][0]["games"] == games
    assert "random vs greedy" in result.stdout

    again = tabletop("arena", "splendor", "--out", str(out), "--resume", "--games", "10")
    assert again.returncode == 2 and "games was 120, now 10" in again.stderr


# --- terminal play through stdin -----------------------------------------------------------------------
def test_play_through_stdin_help_bad_input_moves_quit_and_load(tmp_path):
    save = tmp_path / "save.json"
    answers = ["help", "fly away", "999", "buy:3.0", "take:white,blue,green", "", "1", "quit"]
    result = tabletop("play", "splendor", "--vs", "random", "--seed", "5", "--save", str(save),
                      stdin="\n".join(answers) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "You are P0; P1 is random" in out and "Legal moves:" in out and "Bank" in out
    assert "quit   save and stop" in out and "take:white,blue,green" in out           # help
    assert "unknown action name 'fly away'" in out                                        # not a move
    assert "there is no move 999" in out                                                  # number out of range
    assert "buy:3.0: card" in out and "try again" in out                                  # legal name, illegal now
    assert out.count("P1 (random) plays") == 2 and f"Game saved to {save}" in out
    saved = json.loads(save.read_text())
    position = SplendorGame.from_json(saved["position"])
    assert position.ply == 4 and position.current_player == 0
    assert sum(position.player(0)["tokens"].values()) == 6

    resumed = tabletop("play", "splendor", "--load", str(save), "--save", str(save), stdin="quit\n")
    assert resumed.returncode == 0 and "Splendor  ply 4" in resumed.stdout
    clash = tabletop("play", "splendor", "--load", str(save), "--vs", "greedy")
    assert clash.returncode == 2 and "drop --vs" in clash.stderr


def test_play_ends_cleanly_at_end_of_input(tmp_path):
    result = tabletop("play", "splendor", "--seed", "2", "--save", str(tmp_path / "s.json"), stdin="help\n")
    assert result.returncode == 0 and "Game saved" in result.stdout and (tmp_path / "s.json").exists()


def test_play_a_whole_three_player_game_from_the_second_seat(tmp_path):
    every_number = "".join(f"{action}\n" for action in range(72))  # the list's numbers are the action ids
    result = tabletop("play", "splendor", "--vs", "random", "--players", "3", "--seat", "1", "--seed", "8",
                      "--save", str(tmp_path / "s.json"), stdin=every_number * 60)
    assert result.returncode == 0, result.stderr
    assert "You are P1; P0 is random, P2 is random" in result.stdout
    assert "Game over:" in result.stdout and not (tmp_path / "s.json").exists()


# --- replay --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("replay") / "run"
    result = tabletop("arena", "splendor", "--players", "random,greedy", "--games", "2", "--jobs", "1",
                      "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out / "games.jsonl"


def test_replay_prints_every_position_when_input_is_not_a_terminal(recorded):
    record = next(r for r in load_games(recorded) if r["index"] == 1)
    result = tabletop("replay", str(recorded), "--game", "1")
    assert result.returncode == 0, result.stderr
    plies = record["plies"]
    assert result.stdout.count("--- ply ") == plies + 1
    assert f"--- ply 1/{plies}: P0 (greedy) played {record['moves'][0]}" in result.stdout
    scores = ", ".join(f"P{s} {v}" for s, v in enumerate(record["scores"]))
    assert f"Points: {scores}" in result.stdout


def test_replay_steps_forward_back_and_jumps(recorded):
    out = io.StringIO()
    replay_terminal(recorded, 0, stdin=io.StringIO("n\n\np\n7\n100000\nzzz\nq\n"), stdout=out, interactive=True)
    shown = re.findall(r"--- ply (\d+)/", out.getvalue())  # prompts have no newline: no echo from a StringIO
    assert shown == ["0", "1", "2", "1", "7"]
    assert "is outside 0-" in out.getvalue() and "unknown command 'zzz'" in out.getvalue()


def test_replay_into_a_pipe_closed_early_stops_quietly(recorded):
    whole = io.StringIO()
    replay_terminal(recorded, 1, stdout=whole, interactive=False)
    assert len(whole.getvalue()) > 65536 + 4096, "more than a pipe holds, so the reader leaves first"
    proc = subprocess.Popen([*COMMAND, "replay", str(recorded), "--game", "1"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, bufsize=0)
    assert os.read(proc.stdout.fileno(), 7) == b"game 1:"
    proc.stdout.close()  # as `| head -c 7` does
    assert proc.wait(timeout=60) == 141 and proc.stderr.read() == b""


def test_replay_of_a_missing_game_is_a_one_line_error(recorded):
    result = tabletop("replay", str(recorded), "--game", "57")
    assert result.returncode == 2 and "has no game 57 (games 0..1)" in result.stderr


def test_bench_prints_a_throughput_table():
    result = tabletop("bench", "splendor", "--seconds", "0.2", "--games", "200", "--num-envs", "16", timeout=300)
    assert result.returncode == 0, result.stderr
    rows = ("Python API", "core batched random play", "TabletopAEC (unwrapped AEC)", "Gymnasium env",
            "SplendorVectorEnv(16)")
    for row in rows:
        assert re.search(re.escape(row) + r".*\d[\d,]* (env-)?steps/s", result.stdout), row


@pytest.mark.parametrize("command", [["serve", "klaverjas"], ["train", "klaverjas-model"], ["play", "space-conquest"]])
def test_games_with_their_own_options_have_help_and_are_listed(command):
    assert " ".join(command) in " ".join(tabletop().stdout.split())  # help text wraps
    result = tabletop(*command, "--help")
    assert result.returncode == 0 and "usage: tabletop " + " ".join(command) in result.stdout


def test_play_space_conquest_is_handed_its_own_arguments():
    result = tabletop("play", "space-conquest", "--mode", "sideways")
    assert result.returncode == 2 and "--mode" in result.stderr


def test_splendor_default_tournament_has_the_strongest_agent_even_without_torch(monkeypatch, capsys):
    from tabletop_rl.cli import _default_players

    for name in ("torch", "sb3_contrib", "stable_baselines3"):  # as in the base install: import raises
        monkeypatch.setitem(sys.modules, name, None)
    baselines = ["random", "greedy", "expectiminimax:depth=3,budget_ms=0,nodes=20000", "mcts:simulations=200"]
    assert _default_players("splendor") == [*baselines, "az:default,simulations=200"]
    assert capsys.readouterr().err == ""


def test_a_default_player_that_cannot_be_built_is_named_with_the_reason_and_the_fix(monkeypatch, capsys):
    from tabletop_rl import cli
    from tabletop_rl.agents.splendor import default_az_model_path

    monkeypatch.setitem(sys.modules, "torch", None)  # a .pt network needs torch, unimportable here
    checkpoint = f"az:{default_az_model_path()}"
    registry = games.Registry()  # splendor alone, with this line-up
    registry.register(dataclasses.replace(games.entry("splendor"), players=("random", checkpoint, "greedy")))
    monkeypatch.setattr(games, "REGISTRY", registry)
    assert cli._default_players("splendor") == ["random", "greedy"]
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{checkpoint} is left out of the default line-up: "), lines
    assert "[train]" in lines[0] and "pip install" in lines[0]


def test_the_default_lineup_is_chosen_without_building_a_policy(monkeypatch, capsys):
    """Choosing the lineup asks the registry whether each policy can load; building them (loading az's network)
    is the run's, once."""
    from tabletop_rl.cli import _default_players

    builds = count_builds(monkeypatch)
    assert len(_default_players("splendor")) == 5 and capsys.readouterr().err == ""
    assert not builds, f"built to choose the lineup: {dict(builds)}"


def test_a_default_arena_builds_each_policy_once(tmp_path, monkeypatch):
    builds = count_builds(monkeypatch)
    assert main(["arena", "space-conquest", "--games", "2", "--jobs", "1", "--out", str(tmp_path / "run")]) == 0
    assert len(load_games(tmp_path / "run")) == 2
    assert builds["heuristic"] == 1, f"heuristic built {builds['heuristic']} times"


def test_klaverjas_default_tournament_and_no_terminal_play(tmp_path, monkeypatch, capsys):
    from tabletop_rl.cli import _default_players

    assert _default_players("klaverjas") == ["random", "heuristic", "search:samples=4"]
    with pytest.raises(SystemExit):  # a team of two seats would show a person their partner's hand
        main(["play", "klaverjas"])
    assert "invalid choice: 'klaverjas'" in capsys.readouterr().err


def test_space_conquest_arena_in_worker_processes_then_replays_as_a_spectator_and_as_each_seat(tmp_path):
    from tabletop_rl.cli import _default_players

    assert _default_players("space_conquest") == ["random", "heuristic"]
    out = tmp_path / "run"
    result = tabletop("arena", "space-conquest", "--players", "heuristic,random", "--games", "4", "--jobs", "2",
                      "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "heuristic vs random" in result.stdout
    files = {p.name for p in out.iterdir()}
    assert {"games.jsonl", "summary.json", "winrate.png", "ratings.png", "config.json"} <= files
    records = {r["index"]: r for r in load_games(out)}
    assert sorted(records) == [0, 1, 2, 3] and records[2]["seed"] == records[3]["seed"]
    assert records[2]["seats"] == ["heuristic", "random"] and records[3]["seats"] == ["random", "heuristic"]
    record = records[3]
    turns = record["plies"]
    spectator = tabletop("replay", str(out / "games.jsonl"), "--game", "3")
    assert spectator.returncode == 0, spectator.stderr
    assert spectator.stdout.count("--- after turn ") == turns and spectator.stdout.count("(spectator)") == turns + 1
    assert "--- after turn 1/" in spectator.stdout and "P0 (random) played" in spectator.stdout
    # the replay's counter and the board's agree: before turn 1 the board awaits turn 1's orders, after turn k k+1's
    assert f"--- before turn 1/{turns}: start\nTurn 1/100 (spectator)" in spectator.stdout
    assert f"--- after turn 1/{turns}: " in spectator.stdout.split("Turn 2/100 (spectator)")[0]
    winner = record["winners"][0]
    assert f"Game over: P{winner} wins. Points: P0 {record['scores'][0]}, P1 {record['scores'][1]}" in spectator.stdout
    for seat in (0, 1):
        seen = tabletop("replay", str(out), "--game", "3", "--seat", str(seat))
        assert seen.returncode == 0 and f"as P{seat} saw it" in seen.stdout
        assert seen.stdout.count(f"- P{seat}\n") == turns + 1 and "(spectator)" not in seen.stdout
        assert f"P{1 - seat} ({record['seats'][1 - seat]}) played" not in seen.stdout
    bad = tabletop("replay", str(out), "--game", "3", "--seat", "2")
    assert bad.returncode == 2 and "--seat must be in 0..1" in bad.stderr


# --- without the [train] extra ---------------------------------------------------------------------------
#: Runs Python with torch, stable-baselines3 and sb3_contrib hidden, as on a machine without the [train] extra.
_HIDE_TRAIN = (
    "import sys, runpy\n"
    "class _Hide:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in ('torch', 'sb3_contrib', 'stable_baselines3'):\n"
    "            raise ModuleNotFoundError(f\"No module named '{name}'\", name=name)\n"
    "sys.meta_path.insert(0, _Hide())\n"
    "target = sys.argv[1]; sys.argv = sys.argv[1:]\n"
    "if target == 'tabletop':\n"
    "    from tabletop_rl.cli import main; sys.exit(main(sys.argv[1:]))\n"
    "runpy.run_path(target, run_name='__main__')\n"
)


@pytest.mark.parametrize("args", [
    ["tabletop", "train", "splendor", "--steps", "64"],
    [str(Path(__file__).resolve().parents[1] / "examples" / "ppo_selfplay.py"), "--steps", "64"],
])
def test_training_without_the_train_extra_names_it_in_one_line(tmp_path, args):
    result = subprocess.run([sys.executable, "-c", _HIDE_TRAIN, *args], capture_output=True, text=True,
                            cwd=tmp_path, env=ENV, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "[train]" in lines[0] and 'pip install -e ".[train]"' in lines[0]
    assert install_hint("train") in lines[0]


def test_serve_help_shows_the_service_help():
    result = tabletop("serve", "--help")
    assert result.returncode == 0 and "invalid choice" not in result.stderr
    assert "klaverjas" in result.stdout


def test_play_help_lists_every_playable_game():
    result = tabletop("play", "--help")
    assert result.returncode == 0 and re.search(r"\{[^}]*space-conquest[^}]*\}", result.stdout), result.stdout
    assert re.search(r"\{[^}]*splendor[^}]*\}", result.stdout)


@pytest.mark.parametrize("command", [["llm-match", "splendor", "--p0", "random", "--p1", "greedy"],
                                     ["arena", "splendor", "--players", "random,greedy"]])
@pytest.mark.parametrize("games", ["0", "-3"])
def test_non_positive_games_is_refused_in_one_line(tmp_path, command, games):
    result = tabletop(*command, "--games", games, "--out", str(tmp_path / "run"), cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "--games must be positive" in lines[0], result.stderr
    assert not (tmp_path / "run" / "games.jsonl").exists()


def test_train_steps_round_up_to_whole_rollouts_and_the_progress_line_says_so(tmp_path):
    needs("sb3_contrib")
    result = tabletop("train", "splendor", "--steps", "20", "--num-envs", "2", "--n-steps", "16", "--batch-size", "32",
                      "--eval-games", "2", "--eval-every", "1000000", "--checkpoint-every", "1000000",
                      "--out", str(tmp_path / "run"), cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    shown = re.findall(r"steps ([\d,]+)/([\d,]+) \[", result.stderr)
    assert shown and all(target == "32" for _, target in shown), result.stderr  # 20 rounded up to 2 x 16
    assert shown[-1][0] == "32" and "--steps 20 rounded up to 32" in result.stderr
    assert "rounded up to whole rollouts" in tabletop("train", "--help").stdout


# --- the arena: warm-up, labels, intervals ----------------------------------------------------------------
@pytest.mark.slow  # a cold numba compile in a subprocess: 15-25 s on 2 cores
def test_a_cold_first_run_says_it_compiles_and_keeps_compiling_out_of_the_timings(tmp_path):
    env = {**ENV, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}  # a first run: numba's cache is empty
    args = ["arena", "splendor", "--players", "random,greedy", "--games", "2", "--jobs", "2"]
    cold = subprocess.run([*COMMAND, *args, "--out", str(tmp_path / "cold")], capture_output=True, text=True,
                          env=env, timeout=600)
    assert cold.returncode == 0, cold.stderr
    assert "compiling kernels (first run only" in cold.stderr and "compiled in " in cold.stderr
    summary = json.loads((tmp_path / "cold" / "summary.json").read_text())
    assert summary["policies"]["greedy"]["time_per_move_ms"] < 10, "compile time is not a move's time"
    assert "n/a (too few games)" in cold.stdout, "2 games give no meaningful rating interval"
    warm = subprocess.run([*COMMAND, *args, "--out", str(tmp_path / "warm")], capture_output=True, text=True,
                          env=env, timeout=300)
    assert warm.returncode == 0 and "compil" not in warm.stderr, warm.stderr


def test_a_policy_that_cannot_play_the_player_count_is_refused_before_the_first_game(tmp_path):
    needs("sb3_contrib")  # ppo:default, a two-player model
    out = tmp_path / "run"
    result = tabletop("arena", "splendor", "--players", "ppo:default,random,greedy", "--num-players", "3",
                      "--games", "3", "--out", str(out))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("tabletop arena: error: policy 'ppo:default' cannot play splendor with 3 players: ")
    assert "expects" in lines[0] and not out.exists()


#: Runs ``tabletop`` with a policy ``crash_second`` that plays its first move of a game and raises on the second.
_CRASH_SECOND = (
    "import sys\n"
    "import numpy as np\n"
    "from tabletop_rl.agents import BasePolicy, register_policy\n"
    "class CrashSecond(BasePolicy):\n"
    "    def decide(self, observation, mask, info):\n"
    "        if self.stats.decisions >= 1:\n"
    "            raise RuntimeError('deliberate failure')\n"
    "        return int(np.flatnonzero(mask)[0])\n"
    "register_policy('splendor', 'crash_second', CrashSecond)\n"
    "from tabletop_rl.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_a_run_where_every_game_crashed_exits_non_zero_with_the_first_crash_and_lists_only_written_files(tmp_path):
    out = tmp_path / "run"
    result = subprocess.run([sys.executable, "-c", _CRASH_SECOND, "arena", "splendor", "--players",
                             "crash_second,random", "--games", "2", "--jobs", "1", "--out", str(out)],
                            capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("tabletop arena: error: every game crashed (2 of 2); the first: game 0: seat ")
    assert "crash_second" in last and "RuntimeError: deliberate failure" in last
    listed = re.search(r"results in \S+: (.*)", result.stdout).group(1).replace(",", " ").split()
    assert "games.jsonl" in listed and "ratings.png" not in listed
    assert all((out / name).exists() for name in listed)


def test_llm_specs_that_differ_only_by_temperature_are_told_apart_in_the_table(tmp_path):
    needs("openai")
    from fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        cold = f"llm:model=fake,base_url={server.base_url},backoff=0.001"
        hot = cold + ",temperature=0.7"
        result = tabletop("arena", "splendor", "--players", f"{cold},{hot},random", "--games", "2", "--jobs", "2",
                          "--out", str(tmp_path / "run"), timeout=300)
    assert result.returncode == 0, result.stderr
    assert "llm vs llm:temperature=0.7" in result.stdout and "~" not in result.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert sorted(summary["labels"].values()) == ["llm", "llm:temperature=0.7", "random"]
    spec = next(spec for spec, label in summary["labels"].items() if label == "llm:temperature=0.7")
    assert "temperature=0.7" in spec and "base_url=" in spec, "summary.json keeps the full spec"
    rows = [line for line in result.stdout.splitlines()
            if line.startswith("llm:temperature=0.7 ") and " vs " not in line]
    assert rows and rows[0].rstrip().endswith(spec), "the full spec beside the label in the policies' table"


def test_a_bad_spec_error_leads_with_the_problem():
    result = tabletop("arena", "splendor", "--players", "random,greedy:depth=3")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1
    assert lines[0].startswith("tabletop arena: error: greedy has no option 'depth' (bad policy spec "), lines[0]


def test_an_arena_with_its_players_named_builds_no_default_lineup(tmp_path, monkeypatch, capsys):
    """Choosing the default lineup reads its models' files and may leave some out with a note: a run that names
    its players, or resumes a run that named them, must do neither."""
    def refuse(game: str) -> list[str]:
        raise AssertionError(f"the default lineup of {game} was built")

    monkeypatch.setattr("tabletop_rl.cli._default_players", refuse)
    out = tmp_path / "run"
    assert main(["arena", "splendor", "--players", "random,greedy", "--games", "2", "--out", str(out)]) == 0
    assert main(["arena", "splendor", "--out", str(out), "--resume"]) == 0  # its players come from its config
    assert len(load_games(out)) == 2 and "random vs greedy" in capsys.readouterr().out


def test_an_interrupted_arena_prints_the_command_that_resumes_it(tmp_path, monkeypatch, capsys):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("tabletop_rl.cli.run_arena", interrupt)
    out = tmp_path / "run"
    assert main(["arena", "splendor", "--players", "random,greedy", "--games", "2", "--out", str(out)]) == 130
    assert capsys.readouterr().err.strip().endswith(f"Continue with: tabletop arena splendor --out {out} --resume")


def test_one_ctrl_c_ends_an_arena_at_once_without_waiting_for_the_games_its_workers_play(tmp_path):
    """A terminal's Ctrl-C reaches the worker processes too (they ignore it); the run must end them, not wait for their
    games (minutes each at this budget) at exit."""
    out = tmp_path / "run"
    src = Path(tabletop_rl.__file__).resolve().parents[1]  # this checkout's code, whatever is installed
    proc = subprocess.Popen([sys.executable, "-m", "tabletop_rl.cli", "arena", "splendor", "--players",
                             "random,mcts:simulations=50000", "--games", "4", "--jobs", "2", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**ENV, "PYTHONPATH": str(src)}, start_new_session=True)
    try:
        for line in proc.stderr:
            if line.startswith("games 0/4"):  # the warm-up is over and the workers are starting
                break
        time.sleep(5)  # the workers are in their games
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130
    assert err.strip().endswith(f"Continue with: tabletop arena splendor --out {out} --resume")


def _help_walk() -> list[list[str]]:
    """Every command line whose --help shows a parser: the top level, each command, each command's games."""
    from tabletop_rl.cli import _build_parser, _cli_name, _delegated

    commands = next(a for a in _build_parser()._actions if a.choices and "arena" in a.choices).choices
    walk: list[list[str]] = [[]]
    for name, parser in commands.items():
        games = next((a.choices for a in parser._actions if a.dest == "game"), None) or []
        walk += [[name]] + [[name, game] for game in games]
    delegated = [[command, _cli_name(subject)] for command, subject in _delegated()]
    return walk + [command for command in delegated if command not in walk]


@pytest.mark.parametrize("command", _help_walk(), ids=lambda c: " ".join(c) or "tabletop")
def test_help_is_plain_text_and_every_option_says_what_it_does(command, capsys, monkeypatch):
    shown: list = []
    print_help = __import__("argparse").ArgumentParser.print_help
    monkeypatch.setattr("argparse.ArgumentParser.print_help",
                        lambda self, file=None: (shown.append(self), print_help(self, file)))
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and "(default )" not in out and "(default: )" not in out
    assert re.search(r"^positional arguments:(\n  .*)*\n  options ", out, re.M) is None  # options as a positional
    undocumented = [a.option_strings[0] for a in shown[-1]._actions if a.option_strings and not a.help]
    assert undocumented == []


@pytest.mark.parametrize("args,suggestion", [
    (["arenna", "splendor"], "did you mean 'arena'?"),
    (["arena", "splendr"], "did you mean 'splendor'?"),
    (["arena", "splendor", "--players", "greedyy,random"], "did you mean 'greedy'?"),
])
def test_a_mistyped_name_gets_a_suggestion(args, suggestion, capsys):
    try:
        status = main(args)
    except SystemExit as e:
        status = e.code
    assert status == 2 and suggestion in capsys.readouterr().err
