"""README.md and docs/*.md cannot rot: every ```python block runs as written, in its own process in a temporary
folder, and prints what it did (the conventions: docs/architecture.md, "Testing the docs")."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import tomllib

import tabletop_rl
from doc_blocks import NOT_RUN, ROOT, TRAINS, blocks, missing_extras

PYTHON = blocks("python")


def test_the_pages_have_python_blocks():
    pages = {block.page for block in PYTHON}
    assert {"README.md", "docs/recipes.md", "docs/agents.md", "docs/splendor.md", "docs/architecture.md"} <= pages
    assert sum(block.page == "README.md" for block in PYTHON) >= 3


def test_a_block_that_does_not_run_says_why():
    reasons = [m for m in (NOT_RUN.match(block.code) for block in PYTHON) if m]
    assert reasons
    assert all(len(m["why"].strip()) >= 10 for m in reasons)


def test_the_names_the_docs_use_bare_import_from_tabletop_rl():
    names = ("TabletopAEC", "space_conquest_aec_env", "observation_layout")
    assert set(names) <= set(tabletop_rl.__all__)
    assert all(callable(getattr(tabletop_rl, name)) for name in names)


@pytest.mark.parametrize("block", [pytest.param(b, marks=pytest.mark.slow) if TRAINS.search(b.code) else b
                                   for b in PYTHON], ids=str)
def test_every_python_block_runs_as_written_and_prints_what_it_did(tmp_path, block):
    reason = NOT_RUN.match(block.code)
    if reason:
        pytest.skip(f"{block}: not run: {reason['why']}")
    missing = missing_extras(block.code)
    if missing:
        pytest.skip(f"{block} needs pip install -e \".[{','.join(missing)}]\"")
    result = subprocess.run([sys.executable, "-c", block.code], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{block}:\n{block.code}\n{result.stderr[-3000:]}"
    assert result.stdout.strip(), f"{block} prints nothing: a block shows what it did"
    if "win rate" in block.code:
        rate = re.search(r"win rate (\d\.\d\d)", result.stdout)
        assert rate and 0.0 <= float(rate[1]) <= 1.0, result.stdout


def test_the_openspiel_extra_installs_what_its_dqn_imports():
    # docs/openspiel_textarena.md says DQN works through rl_environment; open_spiel.python.pytorch.dqn imports `tree`
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(re.match(r"dm-tree\b", requirement) for requirement in extras["openspiel"])
