"""The ``tabletop`` commands of README.md and docs/*.md cannot rot: each one in a ```bash block (or a fence with no
language) parses with the command's own parser, the cheap ones run, and no two pages write the same run folder
(so one page's commands never resume another's run). The conventions: docs/architecture.md, "Testing the docs"."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from doc_blocks import blocks, commands
from tabletop_rl import cli

SHELL = [(block, command) for block in blocks("bash", "") for command in commands(block)
         if command.startswith("tabletop ")]
#: The documented commands cheap enough for the default suite (seconds each), run in this order in one folder.
CHEAP = ("tabletop arena space-conquest --players heuristic,random --games 200 --out runs/space-conquest",
         "tabletop replay runs/space-conquest/games.jsonl --game 3 --seat 1")


def test_the_pages_have_tabletop_commands():
    assert len(SHELL) >= 30
    assert {"README.md", "docs/arena.md", "docs/training.md", "docs/space_conquest.md"} <= {b.page for b, _ in SHELL}


@pytest.mark.parametrize(("block", "command"), SHELL, ids=[f"{b}:{c[:70]}" for b, c in SHELL])
def test_every_documented_tabletop_command_parses(block, command):
    argv = shlex.split(command)[1:]
    if tuple(argv[:2]) in cli._DELEGATED:
        pytest.skip(f"{block}: tabletop {' '.join(argv[:2])} parses its own arguments (its own tests cover them)")
    try:
        cli._build_parser().parse_args(argv)
    except SystemExit as e:
        raise AssertionError(f"{block}: {command!r} does not parse (exit status {e.code})") from None


def test_the_cheap_commands_are_documented_and_run(tmp_path):
    documented = {command for _, command in SHELL}
    for command in CHEAP:
        assert command in documented, command
        result = subprocess.run([sys.executable, "-m", "tabletop_rl.cli", *shlex.split(command)[1:]], cwd=tmp_path,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{command}:\n{result.stderr[-3000:]}"
        assert result.stdout.strip(), command


def test_no_two_pages_write_the_same_run_folder():
    writers: dict[str, set[str]] = {}
    for block, command in SHELL:
        out = re.search(r"--out (\S+)", command)
        if out and "--resume" not in command:
            writers.setdefault(out[1], set()).add(block.page)
    shared = {folder: sorted(pages) for folder, pages in writers.items() if len(pages) > 1}
    assert not shared, shared
