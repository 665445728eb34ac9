"""LLM players in the arena and ``tabletop llm-match``, against the loopback server: accounting in the
records and the summary, clean-game ratings, forfeits scored as losses, void matches re-run (never
scored), refused requests stopping the run, and game logs that show each move's reasoning."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")

from fake_openai_server import Answer, FakeOpenAIServer, legal_move_player  # noqa: E402
from tabletop_rl.agents import parse_spec  # noqa: E402
from tabletop_rl.agents.llm.client import FatalLLMError  # noqa: E402
from tabletop_rl.arena import load_games, run_arena  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402


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


def test_a_forfeit_is_a_loss_and_the_game_is_not_clean(tmp_path):
    with FakeOpenAIServer(lambda request: Answer.reply("no idea")) as server:
        llm = spec(server, max_retries=0, fallback="forfeit")
        summary = run_arena(players=[llm, "random"], games=2, jobs=1, out=tmp_path, progress=False)
    for record in load_games(tmp_path):
        seat = record["seats"].index(llm)
        assert record["forfeit"] == seat and record["ranks"][seat] == 1 and record["winners"] == [1 - seat]
        assert record["error"] is None and record["llm"][seat]["forfeit_moves"] == 1
    assert summary["policies"][llm]["wins"] == 0 and summary["policies"]["random"]["wins"] == 2
    assert summary["clean_games"] == 0 and summary["llm"][llm]["clean_games"] == 0


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


def test_llm_match_refused_request_is_a_one_line_error(tmp_path, capsys):
    with FakeOpenAIServer(lambda request: Answer.error(404, "model nope not found")) as server:
        status = main(["llm-match", "splendor", "--p0", spec(server, "nope"), "--p1", "random",
                       "--out", str(tmp_path)])
    assert status == 1
    assert "model nope not found" in capsys.readouterr().err
