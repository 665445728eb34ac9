"""Whether a policy can load here, asked of the registry without building it (``why_unavailable``): the reason
is the one building it would give, and no network is read to find it."""

from __future__ import annotations

import importlib.util
import sys

import pytest

import tabletop_rl.agents.registry as agents_registry
from policy_builds import count_builds
from tabletop_rl.agents import PolicyEntry, known_policies, why_unavailable
from tabletop_rl.agents.splendor import default_az_model_path, default_ppo_model_path


@pytest.fixture
def builds(monkeypatch):
    counted = count_builds(monkeypatch)
    yield counted
    assert not counted, f"built to answer whether it can load: {dict(counted)}"


@pytest.mark.parametrize("game, spec, reason", [
    ("splendor", "nope", "unknown policy 'nope'"),
    ("splendor", "greedy:depth=3", "greedy has no option 'depth'"),
    ("splendor", "az:/no/such/model.npz", "ppo model '/no/such/model.npz' does not exist"),
    ("splendor", "ppo:/no/such/model.zip", "ppo model '/no/such/model.zip' does not exist"),
    ("splendor", "az:/", "ppo model '/' is not a regular file"),
    ("klaverjas", "model:path=/no/such/model.txt", "klaverjas model '/no/such/model.txt' does not exist"),
])
def test_a_policy_that_cannot_load_is_named_with_the_reason(builds, game, spec, reason):
    found = why_unavailable(spec, game)
    assert found is not None and found.startswith(reason), found


@pytest.mark.parametrize("game, spec", [
    ("splendor", "greedy"), ("splendor", "az:default,simulations=200"), ("splendor", "ppo:default"),
    ("klaverjas", "model"), ("klaverjas", "search:samples=4"), ("space_conquest", "heuristic"),
])
def test_a_policy_that_can_load_has_no_reason(builds, game, spec):
    assert why_unavailable(spec, game) is None


@pytest.mark.parametrize("missing, spec", [
    ("torch", f"az:{default_az_model_path()}"),  # a .pt checkpoint
    ("sb3_contrib", f"ppo:{default_ppo_model_path()}"),  # a MaskablePPO zip
])
def test_a_network_whose_format_needs_a_missing_extra_names_it(builds, monkeypatch, missing, spec):
    # the first module missing is named: torch itself where the [train] extra is not installed at all
    first = missing if importlib.util.find_spec("torch") is not None else "torch"
    monkeypatch.setitem(sys.modules, missing, None)  # as where the [train] extra is not installed: import raises
    found = why_unavailable(spec, "splendor")
    assert found is not None and found.startswith(f"{first} is not installed; "), found
    assert "[train]" in found and "pip install" in found


def test_a_shipped_network_as_arrays_needs_no_torch(builds, monkeypatch):
    for name in ("torch", "sb3_contrib", "stable_baselines3"):
        monkeypatch.setitem(sys.modules, name, None)
    assert why_unavailable("az:default", "splendor") is None and why_unavailable("ppo:default", "splendor") is None


def test_a_policy_whose_module_is_not_installed_is_named(builds, monkeypatch):
    known_policies("splendor")
    monkeypatch.setitem(agents_registry._REGISTRY["splendor"], "elsewhere",
                        PolicyEntry("elsewhere", "no_such_module_of_tabletop:make"))
    assert why_unavailable("elsewhere", "splendor") == \
        "policy 'elsewhere' is not available for splendor (no_such_module_of_tabletop is not installed)"
