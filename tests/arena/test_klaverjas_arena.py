"""The arena plays Klaverjas: teams as the two players, teams swapped on each deal seed, seat views only."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tabletop_rl.arena import load_games, run_arena
from tabletop_rl.cli import main
from tabletop_rl.core.game import IllegalActionError
from tabletop_rl.games import check_options
from tabletop_rl.games.klaverjas import rules as R
from tabletop_rl.games.klaverjas.game import KlaverjasGame
from tabletop_rl.ui.terminal import replay_frames


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], dict]:
    out = tmp_path_factory.mktemp("arena")
    summary = run_arena("klaverjas", ["heuristic", "random"], games=4, seed=3, jobs=1, out=out, progress=False)
    return sorted(load_games(out), key=lambda r: r["index"]), summary


def test_each_deal_seed_is_played_with_the_teams_swapped(run: tuple[list[dict], dict]) -> None:
    records, _ = run
    assert [r["index"] for r in records] == [0, 1, 2, 3]
    for first, second in (records[0:2], records[2:4]):
        assert first["seed"] == second["seed"]
        assert first["seats"] == second["seats"][::-1]
    assert records[0]["seed"] != records[2]["seed"]
    assert all(r["error"] is None and not r["truncated"] for r in records)


def test_records_score_the_match_by_team(run: tuple[list[dict], dict]) -> None:
    records, _ = run
    for r in records:
        ns, ew = r["scores"]
        assert ns + ew >= R.DEAL_TOTAL  # 162 card points (or the nat's 162) plus any roem
        expected = [0, 1] if ns == ew else [0] if ns > ew else [1]
        assert r["winners"] == expected
        assert r["ranks"] == [0 if t in expected else 1 for t in range(2)]
        # bidding and 8 tricks of 4 cards, one decision each, split between the two teams
        assert r["plies"] == sum(r["decisions"]) and r["plies"] >= 33


def test_recorded_moves_rebuild_the_match(run: tuple[list[dict], dict]) -> None:
    records, _ = run
    for r in records:
        frames = replay_frames(r)
        assert frames[-1].is_over and frames[-1].scores == r["scores"]
        assert len(frames) == r["plies"] + 1


def test_summary_rates_the_two_teams(run: tuple[list[dict], dict]) -> None:
    _, summary = run
    pairing = summary["pairings"][0]
    assert (pairing["a"], pairing["b"], pairing["games"]) == ("heuristic", "random", 4)
    assert 0.0 <= pairing["win_rate"] <= 1.0
    assert summary["ratings"]["method"] == "Bradley-Terry"
    assert summary["ratings"]["values"]["random"]["rating"] == 0.0


def test_a_policy_sees_only_the_acting_seat_hand() -> None:
    game = KlaverjasGame.new(seed=11, num_players=2)
    rng = np.random.default_rng(0)
    while not game.is_over:
        seat = int(game.state[R.CURRENT])
        assert game.pending_seats() == [seat] and game.player_of(seat) == seat % 2
        info = game.policy_info(seat)
        view = info["game"].state
        assert (info["seat"], info["player"]) == (seat, seat % 2) and info["game"] is not game
        assert [int(view[R.HAND + s]) for s in range(4)] == [int(game.state[R.HAND + seat]) if s == seat else 0
                                                             for s in range(4)]
        assert not view[R.RNG:R.RNG + 2].any()
        public = np.ones(R.STATE_SIZE, bool)
        public[R.HAND:R.HAND + 4] = public[R.RNG:R.RNG + 2] = False
        assert np.array_equal(view[public], game.state[public])
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))


def test_equal_match_scores_share_the_win() -> None:
    game = KlaverjasGame.new(seed=1, num_players=2)
    game.state[R.MATCH_SCORE:R.MATCH_SCORE + 2] = 81
    game.state[R.PHASE] = R.OVER
    assert game.winners == [0, 1] and game.ranks == [0, 0]


def test_move_names_round_trip_and_bad_ones_are_named() -> None:
    names = [KlaverjasGame.move_name(a) for a in range(R.NUM_ACTIONS)]
    assert [KlaverjasGame.move_id(n) for n in names] == list(range(R.NUM_ACTIONS))
    assert names[32:] == ["trump:C", "trump:D", "trump:H", "trump:S", "pass", "accept", "kraak", "rekraak"]
    with pytest.raises(ValueError, match="unknown klaverjas move 'XY'"):
        KlaverjasGame.move_id("XY")


def test_match_options_reach_the_games_and_bad_ones_are_named() -> None:
    game = KlaverjasGame.new(seed=4, num_players=2, kraken=True, target=600, rules="amsterdam")
    assert (int(game.state[R.KRAKEN]), int(game.state[R.TARGET]), int(game.state[R.RULE_SET])) == (1, 600, R.AMSTERDAM)
    game.step("trump:S")
    assert [game.move_name(int(a)) for a in np.flatnonzero(game.legal_mask())] == ["pass", "kraak"]
    with pytest.raises(ValueError, match="quartet_values"):
        check_options("klaverjas", {"quartet_values": "plenty"})


def test_an_illegal_move_is_refused_and_leaves_the_game() -> None:
    game = KlaverjasGame.new(seed=2, num_players=2)
    before = game.state.copy()
    with pytest.raises(IllegalActionError, match="klaverjas, seat 0: pass is not legal now") as err:
        game.step("pass")  # forced forehand: seat 0 must name trump
    assert (err.value.game, err.value.seat) == ("klaverjas", 0)
    assert np.array_equal(game.state, before)
    assert KlaverjasGame.from_json(json.loads(game.to_json())) == game


def test_cli_arena_klaverjas(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["arena", "klaverjas", "--players", "heuristic,random", "--games", "2", "--jobs", "1",
                 "--out", str(out)]) == 0
    assert len(load_games(out)) == 2
    assert "heuristic vs random" in capsys.readouterr().out


def test_the_adapters_game_options_are_the_match_options_of_the_core() -> None:
    import inspect

    assert KlaverjasGame.option_names == tuple(inspect.signature(R.options_row).parameters)


def test_cli_game_options_reach_every_game_resume_and_replay(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["arena", "klaverjas", "--players", "heuristic,random", "--games", "2", "--jobs", "1", "--out", str(out)]
    assert main([*args, "--options", "rules=amsterdam,deals=2,kraken=true"]) == 0
    records = load_games(out)
    assert [r["options"] for r in records] == [{"rules": "amsterdam", "deals": 2, "kraken": True}] * 2
    assert all(r["moves"][0].startswith("trump:") and r["moves"][1] in ("kraak", "pass") for r in records)
    for record in records:
        frames = replay_frames(record)
        first, last = frames[0].state, frames[-1].state
        assert (int(first[R.RULE_SET]), int(first[R.KRAKEN]), int(last[R.DEAL_NO])) == (R.AMSTERDAM, 1, 2)
        assert frames[-1].scores == record["scores"]
    assert main([*args[:-2], "--out", str(out), "--resume", "--games", "4"]) == 2  # other arguments: refused
    assert "games was 2, now 4" in capsys.readouterr().err
    assert main(["arena", "klaverjas", "--out", str(out), "--resume"]) == 0  # options come from the run's config
