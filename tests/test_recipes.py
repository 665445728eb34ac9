"""docs/recipes.md has a recipe for each door: Tianshou and TorchRL train a network, TorchRL and PettingZoo load
every game (its blocks run in tests/test_docs.py, which skips one whose extra is missing, naming it)."""

from __future__ import annotations

from doc_blocks import ROOT, TRAINS, blocks

BLOCKS = [block.code for block in blocks("python", pages=[ROOT / "docs" / "recipes.md"])]


def test_the_page_has_a_recipe_per_door():
    assert len(BLOCKS) == 4
    assert [bool(TRAINS.search(block)) for block in BLOCKS] == [True, True, False, False]
    assert [any(f"import {name}" in block or f"from {name}" in block for block in BLOCKS)
            for name in ("tianshou", "torchrl", "pettingzoo")] == [True, True, True]
