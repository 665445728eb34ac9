"""The fenced blocks of README.md and docs/*.md, for the tests that run them (tests/test_docs.py,
tests/test_docs_commands.py); the conventions they follow are in docs/architecture.md, "Testing the docs"."""

from __future__ import annotations

import ast
import importlib.util
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A fence, indented or not (a block inside a list item), with its language; the body is dedented.
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$", flags=re.S | re.M)
#: The first line of a ```python block that is not meant to run, and why.
NOT_RUN = re.compile(r"\A# not run: (?P<why>.+)")
#: The optional libraries a block may import, and the extra that installs each.
EXTRAS = {"tianshou": "tianshou", "torchrl": "torchrl", "tensordict": "torchrl", "sb3_contrib": "train",
          "stable_baselines3": "train", "torch": "train", "pyspiel": "openspiel", "open_spiel": "openspiel",
          "textarena": "textarena", "ray": "ray", "openai": "llm"}
#: A block that trains a network takes 15-60 s on 2 cores (most of it importing its framework and compiling).
TRAINS = re.compile(r"run_training\(|optimizer\.step\(\)|algo\.train\(\)")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it starts, its language and its (dedented) text."""

    page: str
    line: int
    lang: str
    code: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(*langs: str, pages: list[Path] = PAGES) -> list[Block]:
    """Every fenced block of ``pages`` in one of ``langs`` ("" for a fence without a language), page by page."""
    found = []
    for page in pages:
        text = page.read_text()
        for m in FENCE.finditer(text):
            if m["lang"] in langs:
                found.append(Block(page.relative_to(ROOT).as_posix(), text.count("\n", 0, m.start()) + 1, m["lang"],
                                   textwrap.dedent(m["body"])))
    return found


def commands(block: Block) -> list[str]:
    """The shell commands of ``block``: comments dropped, continuation lines joined.

    >>> commands(Block("p", 1, "bash", "tabletop arena splendor \\\\\\n    --games 2   # two\\n# a note\\n"))
    ['tabletop arena splendor --games 2']
    """
    bare = re.sub(r"[ \t]+#.*$|^#.*$", "", block.code, flags=re.M)
    joined = re.sub(r"\\\n\s*", "", bare)
    return [" ".join(line.split()) for line in joined.splitlines() if line.strip()]


def missing_extras(code: str) -> list[str]:
    """The extras (``pip install -e ".[extra]"``) whose libraries ``code`` imports and that are not installed."""
    imported = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            imported.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module.partition(".")[0])
    return sorted({EXTRAS[name] for name in imported & set(EXTRAS) if importlib.util.find_spec(name) is None})
