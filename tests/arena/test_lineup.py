"""A run's policies flow one way: built once in this process, handed to the games as values, and gone with the
run; a worker builds its own from the specs, each once."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import tabletop_rl.agents.registry as agents_registry
from policy_builds import count_builds
from tabletop_rl.agents import BasePolicy, PolicyEntry, known_policies
from tabletop_rl.arena import run_arena, schedule
from tabletop_rl.arena.lineup import worker_lineup
from tabletop_rl.arena.runner import _play_in_worker

#: Every ``Tracked`` policy not yet collected.
ALIVE: weakref.WeakSet[BasePolicy] = weakref.WeakSet()


class Tracked(BasePolicy):
    """Plays the first legal move; each one built is in ``ALIVE`` until it is collected."""

    def __init__(self, name: str = "tracked", seed: int | None = None) -> None:
        super().__init__(name, seed)
        ALIVE.add(self)

    def decide(self, observation, mask, info):
        return int(np.flatnonzero(mask)[0])


@pytest.fixture
def tracked(monkeypatch):
    known_policies("splendor")
    monkeypatch.setitem(agents_registry._REGISTRY["splendor"], "tracked", PolicyEntry("tracked", Tracked))


def test_a_run_builds_each_policy_once_in_this_process(tmp_path, tracked, monkeypatch):
    builds = count_builds(monkeypatch)
    summary = run_arena(players=["tracked", "greedy"], games=4, jobs=1, out=tmp_path, progress=False, max_plies=10)
    assert summary["games"] == 4
    assert builds["tracked"] == builds["greedy"] == 1, dict(builds)


def test_a_run_keeps_no_policy_alive_after_it_returns(tmp_path, tracked):
    """A long-lived process (a notebook, a training loop that rates each checkpoint) must not hold every network a
    run loaded, nor hand an earlier run's policy to a later one."""
    run_arena(players=["tracked", "random"], games=2, jobs=1, out=tmp_path, progress=False, max_plies=10)
    gc.collect()
    assert not list(ALIVE), "a policy of the finished run is still referenced"


def test_a_worker_builds_each_policy_once_per_thread_and_threads_share_none(tracked, monkeypatch):
    """A worker process is handed specs, never policies: each of its threads (a Ray LLM actor plays games in
    threads) builds its own, once for the run's settings."""
    builds = count_builds(monkeypatch)
    matches = schedule(["tracked", "random"], 2, seed=5)
    played: dict[str, list] = {}

    def work(name: str) -> None:
        played[name] = [_play_in_worker("splendor", match, 2, 10, {}) for match in matches]
        played[name].append(worker_lineup("splendor", 2, 10, {}).policy("tracked"))

    threads = [threading.Thread(target=work, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(record["error"] is None for records in played.values() for record in records[:-1])
    assert builds["tracked"] == 2 and played["a"][-1] is not played["b"][-1], "one build per thread, none shared"
    assert worker_lineup("splendor", 2, 10, {}).policies == {}, "this thread's lineup is its own"
    assert worker_lineup("splendor", 3, 10, {}) is not worker_lineup("splendor", 2, 10, {}), "other settings"
