"""LLM players in the arena and ``tabletop llm-match``, against the loopback server: accounting in the
records and the summary, clean-game (headline) ratings, forfeits scored as losses with their reason, the
benchmark presets (settings in every record and the summary, hidden legal moves), void matches re-run (never
scored), refused requests stopping the run, and game logs that show each move's reasoning."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extra_skips import needs

needs("openai")

import tabletop_rl  # noqa: E402
from fake_openai_server import Answer, FakeOpenAIServer, legal_move_player  # noqa: E402
from tabletop_rl.agents import parse_spec  # noqa: E402
from tabletop_rl.agents.llm.client import FatalLLMError  # noqa: E402
from tabletop_rl.arena import load_games, run_arena  # noqa: E402
from tabletop_rl.arena.llm import format_llm_table  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402
from tabletop_rl.ui.terminal import replay_terminal  # noqa: E402


def spec(server: FakeOpenAIServer, model: str = "fake", **options) -> str:
    """An llm spec on the loopback server with tiny backoffs, normalised as the arena names it."""
    extra = "".join(f",{k}={v}" for k, v in {"backoff": 0.001, **options}.items())
    return parse_spec(f"llm:model={model},base_url={server.base_url}{extra}", "splendor").text


def test_arena_records_and_summarizes_llm_accounting(tmp_path):
    with FakeOpenAIServer(legal_move_player(1)) as server:
        llm = spec(server)
        summary = run_arena(players=[llm, "random"], games=2, jobs=2, out=tmp_path, progress=False, max_plies=60)
        records = load_games(tmp_path)
        assert len(records) == 2
        for record in records:
            seat = record["seats"].index(llm)
            assert record["llm"][1 - seat] is None and record["llm"][seat]["moves"] == record["decisions"][seat]
            assert len(record["llm_notes"]) == len(record["moves"])
            mover_notes = [n for n in record["llm_notes"] if n is not None]
            assert len(mover_notes) == record["decisions"][seat]
            assert all(n["reasoning"] == "a random legal move" for n in mover_notes if n["source"] == "llm")
        acc = summary["llm"][llm]
        assert acc["games"] == 2 and acc["attempts"] == len(server.requests)
        assert summary["clean_games"] == 2 and summary["void"] == 0
        assert set(summary["ratings_clean"]["values"]) == {llm, "random"}


def test_the_summary_table_gives_the_tokens_of_a_decision_cached_ones_included():
    acc = {"games": 1, "clean_games": 1, "moves": 4, "attempts": 2, "prompt_tokens": 4000, "completion_tokens": 400,
           "cached_tokens": 3000, "latency_s": 1.0, "settings": None}
    header, row = format_llm_table({"llm:model=m": acc}).splitlines()

    def cell(name: str) -> str:  # the columns are right-aligned under their names
        return row[:header.index(name) + len(name)].split()[-1]

    assert (cell("tok in/move"), cell("cached/move"), cell("tok out/move")) == ("1000", "750", "100")


def test_a_forfeit_is_a_loss_with_its_reason_and_the_game_stays_clean(tmp_path):
    with FakeOpenAIServer(lambda request: Answer.reply("no idea")) as server:
        llm = spec(server, max_retries=0, fallback="forfeit")
        summary = run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False)
    for record in load_games(tmp_path):
        seat = record["seats"].index(llm)
        assert record["forfeit"] == seat and record["ranks"][seat] == 1 and record["winners"] == [1 - seat]
        assert record["error"] is None and record["llm"][seat]["forfeit_moves"] == 1
        assert record["forfeit_reason"].startswith("no usable reply in 1 attempt(s), last error: no JSON object")
    assert summary["policies"][llm]["wins"] == 0 and summary["policies"]["random"]["wins"] == 2
    # the model's own loss: counted in the headline ratings, as benchmarks count it
    assert summary["clean_games"] == 2 and summary["llm"][llm]["clean_games"] == 2
    assert summary["headline_ratings"] == "ratings_clean" and summary["ratings_clean"]["values"][llm]["rating"] < 0


def test_a_forfeit_counts_its_decision_and_time_and_keeps_its_rejected_replies(tmp_path):
    with FakeOpenAIServer(lambda request: Answer.reply("no idea")) as server:
        llm = spec(server, max_retries=1, fallback="forfeit")
        run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False)
    for record in load_games(tmp_path):
        seat = record["seats"].index(llm)
        note = record["forfeit_note"]
        assert (note["source"], note["attempts"], note["fallback_reason"]) == ("forfeit", 2, record["forfeit_reason"])
        assert [(r["kind"], r["reply"]) for r in note["rejected"]] == [("parse", "no idea")] * 2
        assert record["decisions"] == [1, seat]  # seat 1 forfeits at its first decision, after seat 0's move
        assert record["time_s"][seat] >= note["time_s"] > 0 and record["llm"][seat]["time_s"] == note["time_s"]


def test_fallback_games_are_left_out_of_the_headline_ratings(tmp_path):
    with FakeOpenAIServer(lambda request: Answer.reply("no idea")) as server:
        llm = spec(server, max_retries=0)  # today's default: a random move instead
        summary = run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False, max_plies=20)
    records = load_games(tmp_path)
    assert all("forfeit" not in r and r["llm_settings"][r["seats"].index(llm)] ==
               {"preset": None, "fallback": "random", "legal_list": True, "max_retries": 0, "model": "fake",
                "temperature": 0.2, "max_tokens": 1000, "reasoning_chars": 600, "mode": "auto", "timeout": 600.0,
                "concurrency": 1, "server_defaults": "local"} for r in records)
    assert summary["clean_games"] == 0 and summary["ratings_clean"]["values"] == {}
    assert set(summary["ratings"]["values"]) == {llm, "random"}


def _answers_in_brackets_then_gives_up(request):
    """A model that never says a legal move: the benchmark preset must end its game."""
    return Answer.reply("I would play [take:white,blue,green]")


def test_the_benchmark_preset_forfeits_after_its_retries_and_records_its_settings(tmp_path):
    with FakeOpenAIServer(_answers_in_brackets_then_gives_up) as server:
        llm = spec(server, preset="benchmark")
        summary = run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False)
        requests = [r["body"] for r in server.requests]
    settings = {"preset": "benchmark", "fallback": "forfeit", "legal_list": False, "max_retries": 3, "model": "fake",
                "temperature": 0.2, "max_tokens": 1000, "reasoning_chars": 600, "mode": "auto", "timeout": 600.0,
                "concurrency": 1, "server_defaults": "local"}
    for record in load_games(tmp_path):
        seat = record["seats"].index(llm)
        assert record["forfeit"] == seat and record["ranks"][seat] == 1
        assert record["llm_settings"] == [settings if s == seat else None for s in range(2)]
        assert record["forfeit_reason"].startswith("no usable reply in 4 attempt(s)")
    assert len(requests) == 2 * 4  # one decision per game: the first reply and 3 re-prompts
    assert summary["llm"][llm]["settings"] == settings and summary["llm"][llm]["forfeit_moves"] == 2
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["llm"][llm]["settings"] == settings and on_disk["clean_note"].startswith("clean game:")
    assert on_disk["headline_ratings"] == "ratings_clean" and on_disk["clean_games"] == 2
    # hidden legal moves: no numbered list in the prompt, and the schema does not enumerate the ids
    user = requests[0]["messages"][1]["content"]
    assert "legal moves" not in user.lower() and "0: take:" not in user
    action = requests[0]["response_format"]["json_schema"]["schema"]["properties"]["action"]
    assert "enum" not in action


def test_the_textarena_preset_lists_the_legal_moves_and_forfeits_after_one_retry(tmp_path):
    with FakeOpenAIServer(_answers_in_brackets_then_gives_up) as server:
        llm = spec(server, preset="textarena")
        run_arena(players=[llm, "random"], games=1, jobs=1, out=tmp_path, progress=False)
        requests = [r["body"] for r in server.requests]
    (record,) = load_games(tmp_path)
    assert len(requests) == 2 and record["forfeit"] == record["seats"].index(llm)
    assert "0: take:" in requests[0]["messages"][1]["content"]
    assert "enum" in requests[0]["response_format"]["json_schema"]["schema"]["properties"]["action"]


def test_a_void_match_is_re_run_and_never_scored(tmp_path):
    with FakeOpenAIServer(legal_move_player(2)) as server:
        server.push(Answer.error(503, "down"))  # the first game's first call fails for good (no net retries)
        llm = spec(server, net_retries=0)
        summary = run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False, max_plies=40)
    records = load_games(tmp_path)
    assert [r.get("void_reruns") for r in records] == [1, None]
    assert summary["games"] == 2 and summary["void"] == 0 and summary["crashed"] == 0


def test_a_match_that_stays_void_is_left_for_resume(tmp_path):
    with FakeOpenAIServer(lambda request: Answer.error(503, "down")) as server:
        llm = spec(server, net_retries=0)
        summary = run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False)
        assert load_games(tmp_path) == [] and summary["void"] == 2 and summary["games"] == 0
        server.responder = legal_move_player(3)
        resumed = run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False, resume=True,
                            max_plies=None)
    assert len(load_games(tmp_path)) == 2 and resumed["games"] == 2 and resumed["void"] == 0


def test_a_refused_request_stops_the_run(tmp_path):
    with FakeOpenAIServer(lambda request: Answer.error(401, "invalid key")) as server:
        with pytest.raises(FatalLLMError, match="invalid key"):
            run_arena(players=[spec(server), "random"], games=2, jobs=2, out=tmp_path, progress=False)


def test_llm_match_writes_results_and_readable_logs(tmp_path, capsys):
    with FakeOpenAIServer(legal_move_player(4)) as server:
        status = main(["llm-match", "splendor", "--p0", spec(server, "model-a"), "--p1", spec(server, "model-b"),
                       "--games", "2", "--jobs", "2", "--out", str(tmp_path)])
    assert status == 0
    printed = capsys.readouterr().out
    assert "LLM policy" in printed and "clean games" in printed
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["games"] == 2 and len(summary["llm"]) == 2
    logs = sorted((tmp_path / "logs").iterdir())
    assert [p.name for p in logs] == ["game-0000.txt", "game-0001.txt"]
    text = logs[0].read_text()
    record = next(r for r in load_games(tmp_path) if r["index"] == 0)
    assert text.count("reasoning: a random legal move") == sum(
        1 for n in record["llm_notes"] if n is not None and n["source"] == "llm")
    assert "accounting" in text and f"played {record['moves'][0]}" in text


def _first_ask_unusable(request):
    """A model whose first reply to each decision is unusable; asked again, it names a legal move."""
    if len(request["messages"]) == 2:
        return Answer.reply("I am thinking\nabout gems")
    return legal_move_player(8)(request)


def test_the_game_logs_show_fallbacks_and_rejected_replies_with_their_text_reason_and_time(tmp_path, capsys):
    with FakeOpenAIServer(_first_ask_unusable) as server:
        retried, falls_back = spec(server, "a", max_retries=1), spec(server, "b", max_retries=0)
        assert main(["llm-match", "splendor", "--p0", retried, "--p1", falls_back, "--games", "1",
                     "--out", str(tmp_path)]) == 0
    (record,) = load_games(tmp_path)
    log = (tmp_path / "logs" / "game-0000.txt").read_text()
    retried_notes = [n for n in record["llm_notes"][0::2] if n["source"] == "llm"]
    assert retried_notes and all(n["rejected"] == [{"kind": "parse", "reason": NO_JSON, "reply": "I am thinking\n"
                                                     "about gems"}] for n in retried_notes)
    assert log.count(f"    rejected (parse): {NO_JSON}\n      | I am thinking\n      | about gems\n") == \
        sum(len(n["rejected"]) for n in record["llm_notes"])
    assert log.count(f"    fallback: no usable reply in 1 attempt(s), last error: {NO_JSON}\n") == \
        sum(n["source"] == "fallback" for n in record["llm_notes"]) > 0
    note = record["llm_notes"][0]
    assert f"{note['time_s']:.2f} s (calls {note['latency_s']:.2f} s)]" in log


NO_JSON = "no JSON object and no 'FINAL ANSWER:' line found in the reply"


def test_a_forfeit_is_told_at_the_end_of_its_replay_and_log_with_the_rejected_replies(tmp_path, capsys):
    with FakeOpenAIServer(lambda request: Answer.reply("no idea")) as server:
        llm = spec(server, max_retries=1, fallback="forfeit")
        assert main(["llm-match", "splendor", "--p0", "random", "--p1", llm, "--games", "1",
                     "--out", str(tmp_path)]) == 0
    (record,) = load_games(tmp_path)
    reason = f"no usable reply in 2 attempt(s), last error: {NO_JSON}"
    ending = (f"P1 ({llm}) forfeits: {reason}\n"
              f"    [forfeit; 2 call(s), 200+40 tokens, {record['forfeit_note']['time_s']:.2f} s (calls ")
    log = (tmp_path / "logs" / "game-0000.txt").read_text()
    assert ending in log and log.count("      | no idea\n") == 2 and "Game over: P1 forfeited; P0 wins" in log
    as_p0 = io.StringIO()
    replay_terminal(tmp_path, 0, stdout=as_p0, interactive=False, seat=0)  # the other seat: the fact, not the why
    assert "P1 (" + llm + ") forfeits\n" in as_p0.getvalue() and "no idea" not in as_p0.getvalue()
    assert "Game over: P1 forfeited; P0 wins" in as_p0.getvalue()


def test_llm_match_refused_request_is_a_one_line_error(tmp_path, capsys):
    with FakeOpenAIServer(lambda request: Answer.error(404, "model nope not found")) as server:
        status = main(["llm-match", "splendor", "--p0", spec(server, "nope"), "--p1", "random",
                       "--out", str(tmp_path)])
    assert status == 1
    assert "model nope not found" in capsys.readouterr().err


def _lines(path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_one_ctrl_c_stops_llm_match_at_once_keeps_its_games_and_prints_the_command_that_resumes_it(tmp_path):
    """The games in flight wait on a slow server; one SIGINT to the process group (a terminal's Ctrl-C) must end
    the run without waiting for them, keep the finished games and name the command that plays the rest."""
    out = tmp_path / "run"
    src = Path(tabletop_rl.__file__).resolve().parents[1]  # this checkout's code, whatever is installed
    with FakeOpenAIServer(legal_move_player(5)) as server:
        command = [sys.executable, "-m", "tabletop_rl.cli", "llm-match", "splendor", "--p0", spec(server),
                   "--p1", "random", "--games", "6", "--jobs", "2", "--out", str(out)]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1"}, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while _lines(out / "games.jsonl") < 1 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            slow = legal_move_player(6)
            server.responder = lambda request: dataclasses.replace(slow(request), delay_s=5.0)  # games in flight stall
            asked = len(server.requests)
            while len(server.requests) == asked and proc.poll() is None:
                time.sleep(0.02)
            os.killpg(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=20)  # the stalled games would take minutes to finish
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        assert proc.returncode == 130, err
        assert err.strip().splitlines()[-1].endswith(
            f"Continue with: tabletop llm-match splendor --out {out} --resume")
        assert 1 <= len(load_games(out)) < 6 and "Traceback" not in err
        server.responder = legal_move_player(7)
        assert main(["llm-match", "splendor", "--out", str(out), "--resume"]) == 0  # the printed command
    assert sorted(r["index"] for r in load_games(out)) == list(range(6))
