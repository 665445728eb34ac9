"""The arena on Ray (``run_arena(..., backend="ray")``, ``tabletop arena --backend ray``), on one local Ray
instance bound to 127.0.0.1 shared by the module: the same records as the process pool, a killed driver's run
resumed to exactly the scheduled games, the cluster-wide LLM limit against the loopback server, a worker killed
mid-game costing only that game, and one-line errors for bad input."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from extra_skips import needs

# Read by Ray when it is imported: a local instance then binds to 127.0.0.1 only, and nothing leaves the machine.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = needs("ray")
needs("openai")
pytestmark = pytest.mark.ray

import tabletop_rl.arena as arena  # noqa: E402
from fake_openai_server import Answer, FakeOpenAIServer, legal_move_player  # noqa: E402
from tabletop_rl.agents import parse_spec  # noqa: E402
from tabletop_rl.agents.llm.client import FatalLLMError  # noqa: E402
from tabletop_rl.arena import load_games, run_arena  # noqa: E402
from tabletop_rl.arena.ray_backend import _llm_limits  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402

#: Fields that depend on the machine's speed, not on the game.
TIMINGS = ("time_s", "wall_s")
CPU_PLAYERS = ["greedy", "mcts:simulations=20"]
#: Every wait in this module ends by then.
DEADLINE_S = 60.0


@pytest.fixture(scope="module")
def ray_address():
    context = ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    try:
        assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}, "Ray must bind to loopback"
        yield context.address_info["address"]
    finally:
        ray.shutdown()


def by_index(records):
    return {r["index"]: {k: v for k, v in r.items() if k not in TIMINGS} for r in records}


def cli_command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tabletop_rl.cli", "arena", "splendor", "--players", ",".join(CPU_PLAYERS),
            "--out", str(out), "--backend", "ray", *extra]


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_ray_plays_the_same_games_as_the_process_pool(ray_address, tmp_path):
    args = dict(players=CPU_PLAYERS, games=4, seed=3, max_plies=80, progress=False)
    run_arena(jobs=1, out=tmp_path / "process", **args)
    run_arena(jobs=2, out=tmp_path / "ray", backend="ray", **args)
    assert by_index(load_games(tmp_path / "ray")) == by_index(load_games(tmp_path / "process"))


def test_a_killed_driver_resumes_to_exactly_the_scheduled_games(ray_address, tmp_path):
    out = tmp_path / "run"
    driver = subprocess.Popen(cli_command(out, "--games", "8", "--jobs", "2", "--address", ray_address),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        games = out / "games.jsonl"
        wait_for(lambda: games.exists() and games.read_bytes().count(b"\n") >= 1, "the driver's first game")
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=DEADLINE_S)
    run_arena(players=CPU_PLAYERS, games=8, out=out, resume=True, backend="ray", progress=False)
    indices = [json.loads(line)["index"] for line in (out / "games.jsonl").read_text().splitlines()]
    assert sorted(indices) == list(range(8))


def test_a_refused_llm_request_stops_the_run_and_leaves_it_resumable(ray_address, tmp_path):
    with FakeOpenAIServer(lambda request: Answer.error(401, "invalid key")) as server:
        llm = parse_spec(f"llm:model=fake,base_url={server.base_url}", "splendor").text
        args = dict(players=[llm, "random"], games=4, jobs=4, max_plies=12, out=tmp_path, backend="ray",
                    progress=False)
        with pytest.raises(FatalLLMError, match="invalid key"):
            run_arena(**args)
        server.responder = legal_move_player(6)
        assert run_arena(resume=True, **args)["games"] == 4


def test_the_llm_limit_holds_across_two_workers(ray_address, tmp_path):
    slow = legal_move_player(5)
    with FakeOpenAIServer(lambda request: replace(slow(request), delay_s=0.05)) as server:
        llm = parse_spec(f"llm:model=fake,base_url={server.base_url},concurrency=3,backoff=0.001",
                         "splendor").text
        # 16 games in flight: two LLM worker actors of 8 games, each of which would allow 3 requests alone.
        summary = run_arena(players=[llm, "random"], games=16, jobs=16, max_plies=12, out=tmp_path,
                            backend="ray", progress=False)
    assert summary["games"] == 16
    assert server.max_in_flight == 3


def test_a_local_server_without_a_limit_in_its_spec_gets_the_local_default_across_the_cluster():
    specs = ["llm:model=a,base_url=http://127.0.0.1:8080/v1", "llm:model=b,base_url=https://remote.example/v1",
             "llm:model=c,base_url=https://limited.example/v1,concurrency=3", "random"]
    assert _llm_limits(specs, "splendor") == {"http://127.0.0.1:8080/v1": 1, "https://limited.example/v1": 3}


def test_a_worker_killed_mid_game_costs_only_that_game(ray_address, tmp_path):
    """Ray plays the game of a killed worker again; the run ends with every game once."""
    killed: list[int] = []
    done = threading.Event()

    def kill_one_worker() -> None:
        deadline = time.monotonic() + DEADLINE_S
        while not killed and not done.is_set() and time.monotonic() < deadline:
            killed.extend(_busy_workers()[:1])
            time.sleep(0.02)
        if killed:
            os.kill(killed[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_one_worker, daemon=True)
    killer.start()
    try:
        run_arena(players=["greedy", "mcts:simulations=100"], games=6, jobs=2, out=tmp_path, backend="ray",
                  progress=False)
    finally:
        done.set()
        killer.join(timeout=DEADLINE_S)
    assert killed, "no worker was seen playing a game"
    assert sorted(r["index"] for r in load_games(tmp_path)) == list(range(6))


def _busy_workers() -> list[int]:
    """Pids of Ray workers playing a game now (Ray names a worker's process after the task it runs)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(b"ray::_play_in_worker"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_an_unreachable_address_is_one_line(tmp_path):
    result = subprocess.run(cli_command(tmp_path / "run", "--address", "127.0.0.1:1"), capture_output=True,
                            text=True, timeout=DEADLINE_S)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith(
        "tabletop arena: error: no Ray cluster answers at 127.0.0.1:1")
    assert not (tmp_path / "run").exists()


def test_bad_backend_arguments_are_one_line(ray_address, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["arena", "splendor", "--backend", "dask"])
    assert "invalid choice: 'dask'" in capsys.readouterr().err
    assert main(["arena", "splendor", "--address", ray_address, "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == "tabletop arena: error: --address needs --backend ray"
    with pytest.raises(ValueError, match="^backend must be one of process, ray, got 'dask'$"):
        run_arena(players=CPU_PLAYERS, games=2, out=tmp_path, backend="dask")
    with pytest.raises(ValueError, match="^this process has already joined the Ray cluster at"):
        run_arena(players=CPU_PLAYERS, games=2, out=tmp_path / "x", backend="ray", address="127.0.0.1:1")
    relative_cache = "llm:model=m,base_url=http://127.0.0.1:9/v1,cache=llm-cache"
    with pytest.raises(ValueError, match=r"cache= needs an absolute path"):
        run_arena(players=[relative_cache, "random"], games=2, out=tmp_path / "y", backend="ray")


def test_without_ray_installed_backend_ray_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what an install without the [ray] extra sees
    monkeypatch.delitem(sys.modules, "tabletop_rl.arena.ray_backend", raising=False)
    monkeypatch.delattr(arena, "ray_backend", raising=False)
    with pytest.raises(ValueError, match=r"^backend ray needs Ray, which is not installed: pip install"):
        run_arena(players=CPU_PLAYERS, games=2, out=tmp_path, backend="ray")
