"""Hostile spec strings for every registered policy of every game: each is refused with a one-line
``ValueError`` that names the option (or the file) and quotes the input cut, in bounded time and memory."""

from __future__ import annotations

import io
import os
import zipfile

import pytest

from extra_skips import needs
from tabletop_rl import SplendorGame
from tabletop_rl.agents import known_games, known_policies, make_policy, ppo, registry
from tabletop_rl.agents.search import splendor as search
from tabletop_rl.games.klaverjas import model as klaverjas_model

#: The part of a message about the problem (before the registry's fixed listing of the known policies) is
#: at most this long, whatever the spec's size.
PROBLEM_CHARS = 300


def refusal(spec: str, game: str) -> str:
    """The one-line message ``make_policy`` refuses ``spec`` with, its problem part checked for length."""
    with pytest.raises(ValueError) as err:
        make_policy(spec, game=game, seed=0)
    message = str(err.value)
    assert "\n" not in message, message
    problem = message.split(". Known policies: ")[0]
    assert len(problem) <= PROBLEM_CHARS, problem
    return message


def numeric_options():
    """(game, policy, option) for every int and float option a registered policy takes."""
    for game in known_games():
        for name, entry in known_policies(game).items():
            for option in entry.options:
                if option.type in (int, float) and option.name != entry.positional:
                    yield game, name, option


def spec_with(game: str, policy: str, option: str, value: str) -> str:
    entry = known_policies(game)[policy]
    head = f"{policy}:default," if entry.positional else f"{policy}:"
    return f"{head}{option}={value}"


@pytest.mark.parametrize("game, policy, option", [pytest.param(g, p, o, id=f"{g}-{p}-{o.name}")
                                                  for g, p, o in numeric_options()])
def test_a_numeric_option_refuses_what_is_not_a_finite_number(game, policy, option):
    values = ["nan", "inf", "-inf", "1e400", "-1e400", "true", "9" * 5000]
    if option.type is int:
        values.append("1.5")
    for value in values:
        message = refusal(spec_with(game, policy, option.name, value), game)
        assert f"bad value for {option.name}" in message


@pytest.mark.parametrize("game, spec, option", [
    ("splendor", "greedy:points=1e7", "points"),
    ("splendor", "greedy:win=-1e9", "win"),
    ("splendor", "expectiminimax:depth=48", "depth"),
    ("splendor", "expectiminimax:budget_ms=-1", "budget_ms"),
    ("splendor", "expectiminimax:budget_ms=1e9", "budget_ms"),
    ("splendor", "expectiminimax:nodes=-1", "nodes"),
    ("splendor", "expectiminimax:nodes=100000000000", "nodes"),
    ("splendor", "expectiminimax:budget_ms=0,depth=20", "depth"),
    ("splendor", "expectiminimax:chance=0", "chance"),
    ("splendor", "expectiminimax:chance=1000000000", "chance"),
    ("splendor", "mcts:simulations=100000000", "simulations"),
    ("splendor", "mcts:simulations=-5", "simulations"),
    ("splendor", "mcts:budget_ms=1e200", "budget_ms"),
    ("splendor", "mcts:c=-1", "c"),
    ("splendor", "mcts:c=1e300", "c"),
    ("splendor", "mcts:rollout_depth=1000000000", "rollout_depth"),
    ("splendor", "mcts:epsilon=2", "epsilon"),
    ("splendor", "az:default,simulations=100000000", "simulations"),
    ("splendor", "az:default,simulations=-1", "simulations"),
    ("splendor", "az:default,budget_ms=1e200", "budget_ms"),
    ("splendor", "az:default,c=1e300", "c"),
    ("splendor", "az:default,mix=2", "mix"),
    ("splendor", "az:default,rollout_depth=1000000000", "rollout_depth"),
    ("splendor", "llm:max_tokens=-5", "max_tokens"),
    ("klaverjas", "search:samples=0", "samples"),
    ("klaverjas", "search:samples=1000000000", "samples"),
    ("space_conquest", "heuristic:ru_weight=1e300", "ru_weight"),
    ("space_conquest", "heuristic:distance_weight=-1e300", "distance_weight"),
    ("space_conquest", "heuristic:threat_weight=1e7", "threat_weight"),
    ("space_conquest", "heuristic:margin=-1", "margin"),
    ("space_conquest", "heuristic:margin=1000000000", "margin"),
    ("space_conquest", "llm:max_tool_calls=0", "max_tool_calls"),
])
def test_an_option_out_of_its_range_is_refused_naming_it(game, spec, option):
    if spec.startswith("az:default"):
        needs("torch")  # the shipped network loads before the options are read
    assert option in refusal(spec, game)


def path_id(value: str) -> str:
    return value if len(value) < 40 else f"{value[:20]}...({len(value)} characters)"


@pytest.mark.parametrize("game, spec, shown", [
    ("splendor", "ppo:/dev/zero", "'/dev/zero' is not a regular file"),
    ("splendor", "az:/dev/zero", "'/dev/zero' is not a regular file"),
    ("klaverjas", "model:path=/dev/zero", "'/dev/zero' is not a regular file"),
    ("splendor", "az:" + "a" * 300, "File name too long"),
    ("splendor", "ppo:" + "a" * 300, "File name too long"),
    ("klaverjas", "model:path=" + "a" * 300, "File name too long"),
    ("splendor", "az:/", "'/' is not a regular file"),
], ids=path_id)
def test_a_model_path_that_is_no_model_file_is_refused_before_reading(game, spec, shown):
    assert shown in refusal(spec, game)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "model.pt"
    os.mkfifo(fifo)
    for game, spec in (("splendor", f"az:{fifo}"), ("splendor", f"ppo:{fifo}"), ("klaverjas", f"model:path={fifo}")):
        assert "is not a regular file" in refusal(spec, game)


def test_a_model_file_past_the_size_limit_is_refused(monkeypatch):
    monkeypatch.setattr(ppo, "MAX_MODEL_BYTES", 1000)
    monkeypatch.setattr(klaverjas_model, "MAX_MODEL_BYTES", 1000)
    for game, spec in (("splendor", "az:default"), ("splendor", "ppo:default"), ("klaverjas", "model")):
        assert "more than the 1000 allowed" in refusal(spec, game)


def test_a_model_zip_that_unpacks_past_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(ppo, "MAX_MODEL_BYTES", 100_000)
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(ppo.META_FILE, "{}")
        z.writestr("data", b"\0" * 10_000_000)  # a few kilobytes packed
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(packed.getvalue())
    assert bomb.stat().st_size < 100_000
    for spec in (f"ppo:{bomb}", f"az:{bomb}"):
        assert "unpacks to 10000" in refusal(spec, "splendor")


@pytest.mark.parametrize("game", ["splendor", "klaverjas", "space_conquest"])
def test_huge_and_repeated_specs_are_refused_in_short_lines(game):
    policy = next(name for name, entry in known_policies(game).items() if entry.options and not entry.positional)
    option = known_policies(game)[policy].options[0].name
    cases = {
        "x" * 5000: "unknown policy 'xxxx",
        "x" * 20_000: f"at most {registry.MAX_SPEC_CHARS} characters",
        f"{policy}:" + ",".join(f"{option}=1" for _ in range(10_000)): f"at most {registry.MAX_SPEC_CHARS} characters",
        f"{policy}:" + ",".join(f"{option}=1" for _ in range(500)): f"option '{option}' is given twice",
        f"{policy}:" + ",".join(f"k{i}=1" for i in range(500)): "has no option 'k0'",
        f"{policy}:{option}=" + "7" * (1 << 20): f"at most {registry.MAX_SPEC_CHARS} characters",
        f"{policy}:{'z' * 5000}=1": "has no option 'zzzz",
        f"{policy}:{option}=1,name=a,name=b": "option 'name' is given twice",
    }
    for spec, problem in cases.items():
        assert problem in refusal(spec, game)


def test_a_time_budget_grows_the_mcts_tree_no_further_than_the_simulation_bound(monkeypatch):
    monkeypatch.setattr(search, "MAX_SIMULATIONS", 300)
    policy = make_policy("mcts:simulations=100,budget_ms=100", game="splendor", seed=0)
    g = SplendorGame(2, seed=3)
    action = policy.act(None, g.legal_mask(), g.policy_info(g.current_player))
    assert g.legal_mask()[action]
    assert policy.tree.arrays[0].shape[0] <= 301 and policy.tree.used[0] <= 301
