"""Every policy is built and asked for a move before the first game, so a policy
that cannot play the game is refused at once and compiling is done (and said) before the games start; a
worker's first move is never timed; the time left is measured on games, not on start-up."""

from __future__ import annotations

import io
import threading
import time

import numpy as np
import pytest

import tabletop_rl.agents.registry as agents_registry
from tabletop_rl.agents import BasePolicy, PolicyEntry, known_policies
from tabletop_rl.arena import play_match, run_arena, schedule
from tabletop_rl.core.progress import Progress

#: What a first move costs a policy that compiles on it (as numba does without a cache).
FIRST_MOVE_S = 0.5


class SlowFirst(BasePolicy):
    """Plays the first legal move; the first move this object ever makes takes ``FIRST_MOVE_S`` longer."""

    def __init__(self, name="slow_first", seed=None):
        super().__init__(name, seed)
        self.calls = 0

    def decide(self, observation, mask, info):
        self.calls += 1
        if self.calls == 1:
            time.sleep(FIRST_MOVE_S)
        return int(np.flatnonzero(mask)[0])


class TwoPlayersOnly(BasePolicy):
    """Refuses any game that is not two-player, as a model trained for two players does."""

    def decide(self, observation, mask, info):
        players = info["game"].num_players
        if players != 2:
            raise ValueError(f"{self.name}: observation has {players} players, the model expects 2")
        return int(np.flatnonzero(mask)[0])


@pytest.fixture
def test_policies(monkeypatch):
    known_policies("splendor")
    registry = agents_registry._REGISTRY["splendor"]
    monkeypatch.setitem(registry, "slow_first", PolicyEntry("slow_first", SlowFirst))
    monkeypatch.setitem(registry, "two_only", PolicyEntry("two_only", TwoPlayersOnly))


def test_the_first_move_is_played_before_the_games_and_never_timed(tmp_path, test_policies):
    summary = run_arena(players=["random", "slow_first"], games=2, jobs=1, out=tmp_path, progress=False,
                        max_plies=20)
    policy = summary["policies"]["slow_first"]
    assert policy["decisions"] > 0 and policy["decisions"] * policy["time_per_move_ms"] / 1000 < FIRST_MOVE_S / 4


def test_a_worker_warms_each_policy_before_timing_it(test_policies):
    """A worker (here: a fresh thread, so the policy is built anew) plays a move of its own first."""
    match = schedule(["random", "slow_first"], 2, seed=3)[0]
    records: list[dict] = []
    worker = threading.Thread(target=lambda: records.append(play_match("splendor", match, 2, 20)))
    worker.start()
    worker.join()
    seat = match.seats.index("slow_first")
    assert records[0]["error"] is None and records[0]["decisions"][seat] > 0
    assert records[0]["time_s"][seat] < FIRST_MOVE_S / 4


def test_a_policy_that_cannot_play_this_player_count_is_refused_before_the_first_game(tmp_path, test_policies):
    with pytest.raises(ValueError) as err:
        run_arena(players=["two_only", "random", "greedy"], games=3, num_players=3, jobs=1, out=tmp_path / "x",
                  progress=False)
    message = str(err.value)
    assert message.startswith("policy 'two_only' cannot play splendor with 3 players: ") and "\n" not in message
    assert "the model expects 2" in message
    assert not (tmp_path / "x").exists(), "refused before the run folder is made"
    assert run_arena(players=["two_only", "random"], games=2, jobs=1, out=tmp_path / "y", progress=False,
                     max_plies=10)["crashed"] == 0


def test_a_warm_cache_compiles_nothing_and_says_nothing(tmp_path):
    run_arena(players=["random", "greedy"], games=2, jobs=1, out=tmp_path / "a", progress=False, max_plies=10)
    log = io.StringIO()  # the run above left every kernel in numba's cache
    run_arena(players=["random", "greedy"], games=2, jobs=1, out=tmp_path / "b", log=log, max_plies=10)
    assert not [line for line in log.getvalue().splitlines() if line.startswith(("compiling", "compiled"))]


# --- the time left ---------------------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_time_left_is_measured_after_the_first_games_of_each_worker():
    """Two workers take 30 s to start, then each plays a game in 2 s: 14 games left take about 14 s."""
    clock, out = Clock(), io.StringIO()
    bar = Progress(total=20, stream=out, clock=clock, settle=2)
    finished = [30.0, 30.1] + [30.0 + 2 * k + d for k in range(1, 9) for d in (0.0, 0.1)]
    for when in finished[:2]:
        clock.now = when
        bar.advance()
    assert "left" not in bar.text() and "estimating" in bar.text()
    for when in finished[2:6]:
        clock.now = when
        bar.advance()
    left = bar.text().rpartition("elapsed, ")[2]
    minutes, _, seconds = left.partition(" left")[0].partition(":")
    assert 12 <= 60 * int(minutes) + int(seconds) <= 16, bar.text()
