"""Adding a game is one package and one record (docs/architecture.md, "How to add a game"): Nim (``tests/nim/``), a
game the package does not ship, registered in a copy of the registry, works everywhere the docs promise from its
record alone: the conformance check, the arena with its record's line-up, replays (terminal and web), terminal
play, and the PettingZoo and Gymnasium envs under their own checkers."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import nim
from tabletop_rl import games
from tabletop_rl.agents import registry as policy_registry
from tabletop_rl.agents.conformance import check_game
from tabletop_rl.arena.results import load_games
from tabletop_rl.cli import main
from tabletop_rl.envs.aec import TabletopAEC
from tabletop_rl.envs.gym import TabletopGymEnv
from tabletop_rl.ui.web.views import RunView


@pytest.fixture(autouse=True)
def nim_registered(monkeypatch):
    """Nim's record in a copy of the registry, its policies in an entry of the policy registry that leaves with the
    test; both registries are as they were afterwards."""
    registry = games.REGISTRY.copy()
    registry.register(nim.ENTRY)
    monkeypatch.setattr(games, "REGISTRY", registry)
    monkeypatch.setitem(policy_registry._REGISTRY, "nim", {})
    monkeypatch.delitem(sys.modules, "nim.policies", raising=False)  # so its first lookup registers them again


def test_it_passes_the_conformance_check():
    check_game("nim")


def test_the_arena_plays_its_line_up_and_the_games_replay_in_the_terminal_and_the_web(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    assert main(["arena", "nim", "--games", "2", "--jobs", "1", "--out", str(out)]) == 0, capsys.readouterr().err
    records = load_games(out)
    assert len(records) == 2 and {r["game"] for r in records} == {"nim"}
    assert sorted(records[0]["seats"]) == sorted(nim.ENTRY.players)
    assert all(r["error"] is None and len(r["winners"]) == 1 for r in records), records

    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO())  # not a terminal: every position is printed
    assert main(["replay", str(out), "--game", "0"]) == 0
    shown = capsys.readouterr().out
    assert f"ply {len(records[0]['moves'])}/{len(records[0]['moves'])}" in shown
    assert shown.rstrip().endswith("Points: P0 1, P1 0") or shown.rstrip().endswith("Points: P0 0, P1 1"), shown

    last = RunView.open(out).position(0, len(records[0]["moves"]), viewer=None)
    assert last["over"] and last["board"] is None  # no board as data: the page shows the text board
    assert "took the last counter" in last["text"] and last["result"].startswith("Game over: P")


def test_a_person_plays_it_in_the_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # a name that is no move, then a move per heap in turn: each refused answer is explained and the next one read
    monkeypatch.setattr("sys.stdin", io.StringIO("z9\n" + "a1\nb1\nc1\n" * 21))
    assert main(["play", "nim", "--vs", "perfect", "--seed", "0"]) == 0
    said = capsys.readouterr().out
    assert "P1 (perfect) plays" in said and "Game over: P" in said, said
    assert "'z9' is no nim move (moves are named like a1)" in said
    assert "is not legal now (legal: " in said  # a move on an empty heap


def test_the_aec_env_passes_pettingzoos_api_test():
    api_test(TabletopAEC("nim"), num_cycles=100)


@pytest.mark.parametrize("opponent", ["random", "perfect"])
def test_the_gymnasium_env_passes_the_env_checker(opponent):
    env = TabletopGymEnv("nim", opponent=opponent, render_mode="ansi")
    check_env(env, skip_render_check=False)
    observation, info = env.reset(seed=0)
    assert observation.shape == (4,) and info["action_mask"].dtype == np.int8
