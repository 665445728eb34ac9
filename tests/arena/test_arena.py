"""The arena: schedule and seat rotation, statistics, the results file and resume, crash recording."""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import tabletop_rl.agents.registry as agents_registry
from extra_skips import needs
from fake_openai_server import Answer, FakeOpenAIServer
from tabletop_rl.agents import BasePolicy, Option, PolicyEntry, known_policies, parse_spec
from tabletop_rl.arena import load_games, play_match, run_arena, schedule, summarize
from tabletop_rl.arena.ratings import bradley_terry, openskill_ratings, win_matrix
from tabletop_rl.arena.results import GAMES_FILE, append_game, open_games, prepare_run
from tabletop_rl.core.stats import Z95, wilson_interval
from tabletop_rl.games import game_class
from tabletop_rl.games.space_conquest import rules as R
from tabletop_rl.games.space_conquest.baselines import plan_orders
from tabletop_rl.games.space_conquest.observe import encode, fog_copy
from tabletop_rl.ui.terminal import replay_frames, replay_terminal, result_line


# --- schedule -----------------------------------------------------------------------------------------
def test_two_player_schedule_swaps_seats_on_shared_seeds():
    players = ["a", "b", "c"]
    matches = schedule(players, games=6, seed=11)
    assert [m.index for m in matches] == list(range(18))
    by_deal: dict[int, list] = {}
    for m in matches:
        by_deal.setdefault(m.deal, []).append(m)
    assert sorted(by_deal) == [0, 1, 2]
    for deal, games in by_deal.items():
        assert len({m.seed for m in games}) == 1, "one seed per deal, at every table"
        lineups = Counter(m.seats for m in games)
        for a, b in (("a", "b"), ("a", "c"), ("b", "c")):
            assert lineups[(a, b)] == 1 and lineups[(b, a)] == 1, f"deal {deal}: {a} and {b} swap seats"
    assert len({m.seed for m in matches}) == 3
    pairs = Counter(frozenset(m.seats) for m in matches)
    assert set(pairs.values()) == {6}
    assert matches[:6] == [m for m in matches if m.deal == 0], "numbered deal by deal"


def test_schedule_depends_on_the_seed_only_through_the_deal_seeds():
    one, other = schedule(["a", "b"], 4, seed=1), schedule(["a", "b"], 4, seed=2)
    assert [m.seats for m in one] == [m.seats for m in other]
    assert {m.seed for m in one}.isdisjoint({m.seed for m in other})
    assert one == schedule(["a", "b"], 4, seed=1)


@pytest.mark.parametrize("players,num_players", [(["a", "b", "c"], 3), (["a", "b", "c", "d"], 3),
                                                 (["a", "b", "c", "d"], 4)])
def test_all_seats_tables_rotate_every_policy_through_every_seat(players, num_players):
    matches = schedule(players, games=2 * num_players, seed=0, num_players=num_players)
    tables = Counter(frozenset(m.seats) for m in matches)
    assert len(tables) == math.comb(len(players), num_players)
    assert set(tables.values()) == {2 * num_players}
    for table in tables:
        for deal in (0, 1):
            games = [m for m in matches if frozenset(m.seats) == table and m.deal == deal]
            for seat in range(num_players):
                assert sorted(m.seats[seat] for m in games) == sorted(table)


@pytest.mark.parametrize("players,num_players,message", [
    (["a", "a", "b"], 2, "listed twice"), (["a"], 2, "at least 2"), (["a", "b"], 3, "at least 3"),
])
def test_schedule_refuses_tables_it_cannot_fill(players, num_players, message):
    with pytest.raises(ValueError, match=message):
        schedule(players, 2, 0, num_players)


def test_schedule_refuses_a_bad_game_count():
    with pytest.raises(ValueError, match="games must be a positive integer"):
        schedule(["a", "b"], 0, 0)


# --- statistics -------------------------------------------------------------------------------------
@pytest.mark.parametrize("successes,n", [(95, 100), (5.5, 10), (1, 3), (40, 400)])
def test_wilson_bounds_solve_the_score_equation(successes, n):
    low, high = wilson_interval(successes, n)
    p_hat = successes / n
    assert low < p_hat < high
    for bound in (low, high):  # the Wilson interval is where |p_hat - p| = z * sqrt(p (1 - p) / n)
        assert abs(p_hat - bound) == pytest.approx(Z95 * math.sqrt(bound * (1 - bound) / n), rel=1e-9)


def test_wilson_at_the_edges_stays_in_zero_one():
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(0, 20)[1] > 0
    assert wilson_interval(20, 20)[1] == 1.0 and wilson_interval(20, 20)[0] < 1
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bradley_terry_recovers_the_strengths_that_made_the_results():
    rng = np.random.default_rng(5)
    truth = np.array([0.0, 0.7, 1.5, -0.8])
    rows = []
    for _ in range(1500):
        i, j = rng.choice(4, 2, replace=False)
        p = 1 / (1 + math.exp(truth[j] - truth[i]))
        rows.append((i, j, float(rng.random() < p)))
    fit = bradley_terry(win_matrix(rows, 4), prior_draws=0)
    assert fit.mean() == pytest.approx(0, abs=1e-9)
    np.testing.assert_allclose(fit - fit[0], truth - truth[0], atol=0.2)


def test_bradley_terry_two_policies_is_the_log_odds_and_the_prior_keeps_a_sweep_finite():
    fit = bradley_terry(np.array([[0, 30], [10, 0]]), prior_draws=0)
    assert fit[0] - fit[1] == pytest.approx(math.log(3))
    sweep = bradley_terry(np.array([[0, 40], [0, 0]]))
    assert np.isfinite(sweep).all() and sweep[0] - sweep[1] == pytest.approx(math.log(40.5 / 0.5))


def test_openskill_ranks_the_policy_that_always_finishes_first_highest():
    rotations = [[k % 3, (k + 1) % 3, (k + 2) % 3] for k in range(30)]
    games = [(seats, [2 - p for p in seats]) for seats in rotations]  # policy 2 first, then 1, then 0
    mu, sigma = openskill_ratings(games, 3)
    assert mu[2] > mu[1] > mu[0] and (sigma < 8.3).all()


def _record(index, seats, ranks, scores, error=None, truncated=False):
    return {"index": index, "game": "splendor", "num_players": len(seats), "seats": seats, "ranks": ranks,
            "scores": scores, "plies": 50 + index, "error": error, "error_seat": 0 if error else None,
            "truncated": truncated, "decisions": [10] * len(seats), "nodes": [100] * len(seats),
            "time_s": [0.01 * (k + 1) for k in range(len(seats))]}


def test_summary_counts_draws_half_and_leaves_crashes_out():
    records = [_record(0, ["a", "b"], [0, 1], [15, 8]), _record(1, ["b", "a"], [0, 0], [15, 15]),
               _record(2, ["a", "b"], [1, 0], [12, 16]), _record(3, ["b", "a"], [0, 1], [15, 3]),
               _record(4, ["a", "b"], [0, 0], [7, 4], truncated=True), _record(5, ["a", "b"], None, [0, 0], "boom")]
    summary = summarize(records, {"game": "splendor", "players": ["a", "b"], "num_players": 2})
    pairing = summary["pairings"][0]
    assert (pairing["games"], pairing["score_a"], summary["crashed"], summary["truncated"]) == (5, 2.0, 1, 1)
    assert pairing["win_rate"] == pytest.approx(0.4)
    assert (pairing["ci_low"], pairing["ci_high"]) == pytest.approx(wilson_interval(2.0, 5))
    assert pairing["mean_points_a"] == pytest.approx((15 + 15 + 12 + 3 + 7) / 5)
    assert summary["policies"]["a"]["crashes"] == 1 and summary["policies"]["b"]["crashes"] == 0
    # a sat in seat 0 in games 0, 2, 4 (10 decisions, 10 ms in all) and seat 1 in games 1, 3 (20 ms)
    assert summary["policies"]["a"]["time_per_move_ms"] == pytest.approx((3 * 0.01 + 2 * 0.02) / 50 * 1000)
    assert summary["win_rate_matrix"][1][0] == pytest.approx(0.6)
    ratings = summary["ratings"]
    assert ratings["method"] == "Bradley-Terry" and ratings["anchor"] == "mean"
    assert ratings["values"]["b"]["rating"] > 0 > ratings["values"]["a"]["rating"]


# --- results file -------------------------------------------------------------------------------------
def game_record(index: int) -> dict:
    """The least a line of games.jsonl holds (``results.RECORD_KEYS``): a game whose seat 0 crashed before the first
    move, so no moves, no winners and no ranks, as its replay bears out."""
    return {"index": index, "game": "splendor", "num_players": 2, "max_plies": 1000, "seed": 0, "seats": ["a", "b"],
            "moves": [], "plies": 0, "scores": [0, 0], "winners": [], "ranks": None, "truncated": False,
            "error": "seat 0 (a) raised RuntimeError: no move", "error_seat": 0, "decisions": [0, 0],
            "time_s": [0.0, 0.0], "nodes": [0, 0]}


def test_torn_last_line_is_dropped_with_a_warning_and_cut_from_the_file(tmp_path):
    with open_games(tmp_path) as fh:
        for k in range(3):
            append_game(fh, game_record(k))
    with open(tmp_path / GAMES_FILE, "a") as fh:
        fh.write('{"index": 3, "mov')
    with pytest.warns(UserWarning, match="torn last line"):
        assert [r["index"] for r in load_games(tmp_path)] == [0, 1, 2]
    with open_games(tmp_path) as fh:
        append_game(fh, game_record(3))
    assert [r["index"] for r in load_games(tmp_path)] == [0, 1, 2, 3]


def _lines_of(*items: object) -> str:
    return "".join((json.dumps(game_record(item)) if isinstance(item, int) else str(item)) + "\n" for item in items)


@pytest.mark.parametrize("text,message", [(_lines_of(0, 0), "appears twice"),
                                          (_lines_of(0, "not json", 1), "not a game record")])
def test_damaged_results_files_are_refused(tmp_path, text, message):
    (tmp_path / GAMES_FILE).write_text(text)
    with pytest.raises(ValueError, match=message):
        load_games(tmp_path)


def test_prepare_run_guards_new_runs_and_resumes(tmp_path):
    config = {"game": "splendor", "players": ["random", "greedy"], "games": 4, "seed": 0}
    with pytest.raises(ValueError, match="nothing to resume"):
        prepare_run(tmp_path / "run", config, resume=True)
    assert prepare_run(tmp_path / "run", config, resume=False) == []
    with pytest.raises(ValueError, match="already holds a run"):
        prepare_run(tmp_path / "run", config, resume=False)
    with pytest.raises(ValueError, match="games was 4, now 6"):
        prepare_run(tmp_path / "run", {**config, "games": 6}, resume=True)
    assert prepare_run(tmp_path / "run", config, resume=True) == []


# --- playing games --------------------------------------------------------------------------------------
def test_a_game_replays_from_its_seed_and_moves():
    match = schedule(["random", "greedy"], 2, seed=4)[1]
    record = play_match("splendor", match, 2, 1000)
    assert record == {**play_match("splendor", match, 2, 1000), "time_s": record["time_s"],
                      "wall_s": record["wall_s"]}, "same seed, same game"
    assert record["error"] is None and record["seats"] == ["greedy", "random"]
    frames = replay_frames(record)
    final = frames[-1]
    assert final.is_over and final.scores == record["scores"] and final.winners == record["winners"]
    assert record["plies"] == len(record["moves"]) == final.ply
    assert sum(record["decisions"]) == record["plies"] and record["nodes"][0] > 0 and record["nodes"][1] == 0


@pytest.mark.parametrize("game, players", [("splendor", ["random", "greedy"]),
                                           ("space_conquest", ["random", "heuristic"])])
def test_resume_after_losing_lines_replays_exactly_the_missing_games(tmp_path, game, players):
    kwargs = {"game": game, "players": players, "games": 6, "seed": 2, "jobs": 1, "progress": False}
    run_arena(out=tmp_path, **kwargs)
    lines = (tmp_path / GAMES_FILE).read_text().splitlines(keepends=True)
    original = {json.loads(line)["index"]: json.loads(line) for line in lines}
    (tmp_path / GAMES_FILE).write_text("".join(lines[:3]) + lines[3][:20])
    with pytest.warns(UserWarning, match="torn last line"):
        summary = run_arena(out=tmp_path, resume=True, **kwargs)
    records = load_games(tmp_path)
    assert sorted(r["index"] for r in records) == list(range(6)) and summary["games"] == 6
    for r in records:
        assert r["moves"] == original[r["index"]]["moves"]
    assert {"summary.json", "winrate.png", "ratings.png", "config.json"} <= {p.name for p in tmp_path.iterdir()}


class CrashAfter(BasePolicy):
    """Plays the first legal move, then raises on its ``moves``-th decision."""

    def __init__(self, name="crash_after", seed=None, moves=3):
        super().__init__(name, seed)
        self.moves = moves

    def decide(self, observation, mask, info):
        if self.stats.decisions + 1 >= self.moves:
            raise RuntimeError("deliberate failure")
        return int(np.flatnonzero(mask)[0])


class Illegal:
    """Not a BasePolicy: no stats, and it answers with a move the mask forbids."""

    def __init__(self, name="illegal", seed=None):
        self.name = name

    def act(self, observation, action_mask, info=None):
        return int(np.flatnonzero(~np.asarray(action_mask))[0])


@pytest.fixture
def broken_policies(monkeypatch):
    known_policies("splendor")
    registry = agents_registry._REGISTRY["splendor"]
    monkeypatch.setitem(registry, "crash_after", PolicyEntry("crash_after", CrashAfter, (Option("moves", int, 3),)))
    monkeypatch.setitem(registry, "illegal", PolicyEntry("illegal", Illegal))


@pytest.mark.parametrize("spec,error", [("crash_after:moves=2", "RuntimeError: deliberate failure"),
                                        ("illegal", "IllegalActionError")])
def test_a_crashing_policy_is_recorded_and_the_run_goes_on(tmp_path, broken_policies, spec, error):
    summary = run_arena(players=["random", spec], games=4, jobs=1, out=tmp_path, progress=False)
    records = sorted(load_games(tmp_path), key=lambda r: r["index"])
    assert len(records) == 4 and summary["crashed"] == 4
    for r in records:
        seat = r["seats"].index(spec)
        assert r["error_seat"] == seat and f"seat {seat} ({spec}) raised {error}" in r["error"]
        assert r["winners"] == [] and r["ranks"] is None
    assert summary["policies"][spec]["crashes"] == 4 and summary["policies"]["random"]["crashes"] == 0


def test_three_player_arena_rates_with_openskill_anchored_at_random(tmp_path):
    summary = run_arena(players=["random", "greedy", "greedy:opponent=0"], games=3, num_players=3, jobs=1,
                        out=tmp_path, progress=False)
    players = summary["players"]
    records = load_games(tmp_path)
    assert len(records) == 3 and all(sorted(r["seats"]) == sorted(players) for r in records)
    assert [r["seats"][0] for r in sorted(records, key=lambda r: r["index"])] == players
    ratings = summary["ratings"]
    assert ratings["method"] == "OpenSkill" and ratings["values"]["random"]["rating"] == 0.0
    assert summary["pairings"][0]["games"] == 3


def test_run_arena_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="bad policy spec 'nobody'"):
        run_arena(players=["random", "nobody"], out=tmp_path / "a", progress=False)
    with pytest.raises(ValueError, match="not 5"):
        run_arena(players=["random", "greedy"], num_players=5, out=tmp_path / "b", progress=False)
    with pytest.raises(ValueError, match="jobs must be"):
        run_arena(players=["random", "greedy"], jobs=0, out=tmp_path / "c", progress=False)
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got True"):
        run_arena(players=["random", "greedy"], seed=True, out=tmp_path / "d", progress=False)
    assert not (tmp_path / "a").exists()


def test_the_run_seed_follows_the_seed_rule(tmp_path):
    # any integer type, its low 63 bits: the run of 2**63 + 5 is the run of 5 (core/seeding.py)
    run_arena(players=["random", "greedy"], games=2, seed=np.uint64(2**63 + 5), jobs=1, out=tmp_path, progress=False)
    assert json.loads(Path(tmp_path, "config.json").read_text())["seed"] == 5
    scheduled = schedule(["random", "greedy"], 2, 5)
    assert sorted(r["seed"] for r in load_games(tmp_path)) == sorted(m.seed for m in scheduled)


def test_results_keep_the_canonical_spec_names(tmp_path):
    run_arena(players=[" Random ", "greedy:opponent=0.50"], games=2, jobs=1, out=tmp_path, progress=False)
    config = json.loads(Path(tmp_path, "config.json").read_text())
    assert config["players"] == ["random", "greedy:opponent=0.5"]
    assert {tuple(r["seats"]) for r in load_games(tmp_path)} == {("random", "greedy:opponent=0.5"),
                                                                  ("greedy:opponent=0.5", "random")}


# --- Space Conquest: simultaneous moves -------------------------------------------------------------------
def test_space_conquest_records_each_turn_of_both_seats_and_replays_it():
    match = schedule(["heuristic", "random"], 2, seed=3)[1]
    record = play_match("space_conquest", match, 2, 100)
    assert record == {**play_match("space_conquest", match, 2, 100), "time_s": record["time_s"],
                      "wall_s": record["wall_s"]}, "same seed, same game"
    assert record["seats"] == ["random", "heuristic"] and record["error"] is None and not record["truncated"]
    assert record["plies"] == len(record["moves"]) == record["decisions"][0] == record["decisions"][1]
    assert all(len(turn) == 2 and all(set(orders) == {"moves"} for orders in turn) for turn in record["moves"])
    frames = replay_frames(record)
    final = frames[-1]
    assert final.is_over and len(frames) == record["plies"] + 1
    assert [final.owned_ru(p) for p in range(2)] == record["scores"] == final.scores
    assert record["winners"] == [final.winner] and record["ranks"] == [int(p != final.winner) for p in range(2)]
    for k, turn in enumerate(record["moves"]):  # what each seat ordered is what was played that turn
        for seat, orders in enumerate(turn):
            played = [(R.LETTERS.index(m["from"]), R.LETTERS.index(m["to"]), m["ships"]) for m in orders["moves"]]
            assert frames[k + 1].history[k][seat] == played


def test_space_conquest_policies_get_only_their_own_view():
    game = game_class("space_conquest").new(seed=5, num_players=2)
    attack = {"from": game.home_letter(1), "to": game.home_letter(0), "ships": 3}  # 5 or more turns away
    game.step_joint({0: {"moves": []}, 1: {"moves": [attack]}})
    for seat in (0, 1):
        info = game.policy_info(seat)
        assert info["player"] == seat and np.array_equal(info["game"].state, fog_copy(game, seat).state)
        assert info["game"].home(1 - seat) == -1 and info["game"].seed == 0
        fleets = info["game"].fleets()
        assert all(f["owner"] == seat for f in fleets) and len(fleets) == seat  # only seat 1 launched
        obs, mask = encode(game.state, seat)
        assert np.array_equal(game.observe(seat), obs)
        assert np.array_equal(game.seat_mask(seat), mask)


def test_space_conquest_draw_ranks_both_first_and_has_no_winner():
    game = game_class("space_conquest").new(seed=7, num_players=2, max_plies=2)
    while not game.is_over:  # nobody moves: mirror positions at the turn cap
        game.step_joint({0: None, 1: None})
    assert (game.winners, game.ranks, game.is_truncated) == ([], [0, 0], False)
    assert result_line(game) == "Game over: a draw. Points: P0 4, P1 4"


class Garbage(BasePolicy):
    """Answers a Space Conquest turn with something that is neither orders nor an RL action."""

    def act(self, observation, action_mask, info=None):
        return 7


def test_a_space_conquest_policy_answering_nonsense_is_a_crash_of_its_own_seat(tmp_path, monkeypatch):
    known_policies("space_conquest")
    monkeypatch.setitem(agents_registry._REGISTRY["space_conquest"], "garbage", PolicyEntry("garbage", Garbage))
    summary = run_arena("space_conquest", players=["heuristic", "garbage"], games=2, jobs=1, out=tmp_path,
                        progress=False)
    for r in load_games(tmp_path):
        seat = r["seats"].index("garbage")
        assert r["error_seat"] == seat and r["moves"] == [] and r["ranks"] is None
        assert f"seat {seat} (garbage) raised ValueError: player {seat} answered int ()" in r["error"]
    assert summary["crashed"] == 2 and summary["policies"]["garbage"]["crashes"] == 2


def test_the_tool_using_llm_in_the_arena_is_accounted_per_turn(tmp_path):
    def look_then_submit(request):
        last = request["messages"][-1]
        if last["role"] == "tool":
            return Answer.calls(("submit_orders", {"orders": plan_orders(json.loads(last["content"]))}),
                                text="the heuristic's plan")
        return Answer.calls(("get_observation", {}))

    needs("openai")
    with FakeOpenAIServer(look_then_submit) as server:
        llm = parse_spec(f"llm:model=fake,base_url={server.base_url},net_retries=0", "space_conquest").text
        summary = run_arena("space_conquest", players=[llm, "heuristic"], games=2, jobs=2, out=tmp_path,
                            progress=False, max_plies=4)
    records = sorted(load_games(tmp_path), key=lambda r: r["index"])
    assert len(server.requests) == 2 * sum(r["plies"] for r in records)
    for r in records:
        seat = r["seats"].index(llm)
        assert r["llm"][1 - seat] is None and r["llm"][seat]["clean"]
        assert r["llm"][seat]["tool_calls"] == r["llm"][seat]["attempts"] == 2 * r["plies"]
        assert all(notes[1 - seat] is None and notes[seat]["tool_calls"] == 2 for notes in r["llm_notes"])
    acc = summary["llm"][llm]
    assert acc["games"] == 2 and acc["tool_calls"] == len(server.requests) and summary["clean_games"] == 2
    game = next(r for r in records if r["seats"][1] == llm)
    shown = {}
    for seat in (None, 0, 1):
        out = io.StringIO()
        replay_terminal(tmp_path, game["index"], stdout=out, interactive=False, seat=seat)
        shown[seat] = out.getvalue()
    first = describe(game["moves"][0])
    assert (f"--- after turn 1/{game['plies']}: P0 (heuristic) played {first[0]}; P1 ({llm}) played {first[1]}\n"
            "  P1:\n    [llm; 2 call(s), 2 tool call(s), 200+40 tokens") in shown[None]
    assert "reasoning: the heuristic's plan" in shown[1]
    assert f"--- after turn 1/{game['plies']}: P0 (heuristic) played {first[0]}\n" in shown[0]
    assert f"({llm}) played" not in shown[0] and "reasoning" not in shown[0] and "(spectator)" not in shown[0]


def describe(turn):
    return [game_class("space_conquest").describe_move(orders) for orders in turn]
