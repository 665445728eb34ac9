"""The play table's menu: the built-in policies are offered when the registry says they load here, without building
them (loading az's network is the first game's); what the operator allows is built once to check it."""

from __future__ import annotations

import pytest

from policy_builds import count_builds
from tabletop_rl.ui.web.menu import PolicyMenu, default_policies


def test_the_built_in_menu_is_chosen_without_building_a_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    builds = count_builds(monkeypatch)
    menu = PolicyMenu.build()
    assert menu.offered("splendor") and "az:default" in " ".join(menu.offered("splendor"))
    assert set(menu.policies) == set(default_policies())
    assert not builds, f"built to list the menu: {dict(builds)}"


def test_a_built_in_policy_that_cannot_load_here_is_not_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    import tabletop_rl.ui.web.menu as menu_module

    monkeypatch.setattr(menu_module, "why_unavailable",
                        lambda spec, game: "needs torch" if spec.startswith("az") else None)
    offered = PolicyMenu.build().offered("splendor")
    assert offered and not any(spec.startswith("az") for spec in offered)


def test_an_allowed_spec_is_built_once_to_check_it(monkeypatch: pytest.MonkeyPatch) -> None:
    builds = count_builds(monkeypatch)
    menu = PolicyMenu.build(("splendor:greedy:points=2",))
    assert menu.offered("splendor")[-1] == "greedy:points=2.0"
    assert builds == {"greedy:points=2.0": 1}
