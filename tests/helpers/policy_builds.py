"""Counting policy builds: every policy the registry builds comes from the factory ``registry._resolve`` hands
``make_policy``, so wrapping that lookup counts each build, by the canonical spec the policy is named with."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import tabletop_rl.agents.registry as agents_registry


def count_builds(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """From now until the test ends, how many times each spec is built (by its canonical name)."""
    builds: Counter[str] = Counter()
    resolve = agents_registry._resolve

    def counting(entry: agents_registry.PolicyEntry, game: str) -> Any:
        factory = resolve(entry, game)

        def build(name: str, seed: int | None, **options: Any) -> Any:
            builds[name] += 1
            return factory(name=name, seed=seed, **options)

        return build

    monkeypatch.setattr(agents_registry, "_resolve", counting)
    return builds
