"""docs/space_conquest.md's example runs as written and its order is accepted."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "space_conquest.md"


def python_snippets() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def test_the_example_order_is_accepted_and_sends_a_fleet():
    snippet = next(code for code in python_snippets() if "game.step(" in code)
    names: dict = {}
    exec(compile(snippet, str(DOC), "exec"), names)
    game = names["game"]
    assert game.errors == [[], []]  # no move skipped, the set not rejected
    assert game.history[0][0], "the example's move did not execute"
    assert game.fleets() or game.events()
