"""The ``tabletop`` commands of README.md and docs/*.md cannot rot: each one in a ```bash block (or a fence with no
language) parses with the command's own parser, the cheap ones run, and no two pages write the same run folder
(so one page's commands never resume another's run); docs/klaverjas.md's sample answers are the service's answers
to its requests. The conventions: docs/architecture.md, "Testing the docs"."""

from __future__ import annotations

import importlib
import json
import re
import shlex
import subprocess
import sys

import pytest

from doc_blocks import ROOT, blocks, commands
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
    parser = cli._build_parser()
    delegated = cli._delegated().get((argv[0], cli._game_name(argv[1])) if len(argv) >= 2 else ("", ""))
    if delegated is not None:  # the game parses its own arguments, with its module's _build_parser
        module = importlib.import_module(delegated.partition(":")[0])
        if not hasattr(module, "_build_parser"):
            pytest.skip(f"{block}: tabletop {' '.join(argv[:2])} builds its parser as it runs")
        parser, argv = module._build_parser(), argv[2:]
    try:
        parser.parse_args(argv)
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


def test_the_klaverjas_service_answers_the_pages_requests_as_shown():
    pytest.importorskip("fastapi", reason="needs pip install -e \".[serve]\"")
    pytest.importorskip("httpx", reason="needs pip install -e \".[serve]\"")
    from fastapi.testclient import TestClient

    from tabletop_rl.ui.klaverjas_service import create_app

    page = [ROOT / "docs" / "klaverjas.md"]
    words = [word for block in blocks("bash", pages=page) if "curl " in block.code for word in shlex.split(block.code)]
    requests = [json.loads(data) for flag, data in zip(words, words[1:]) if flag == "-d"]
    shown = next(block.code for block in blocks("text", pages=page) if block.code.startswith('{"bestCard"'))
    answers, at, decoder = [], 0, json.JSONDecoder()
    while shown[at:].strip():
        answer, at = decoder.raw_decode(shown, len(shown) - len(shown[at:].lstrip()))
        answers.append(answer)
    assert len(requests) == len(answers) == 2
    client = TestClient(create_app())
    assert [client.post("/v1/best-card", json=request).json() for request in requests] == answers
