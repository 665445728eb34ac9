"""CI (``.ci/run``) fails on a lint or type finding: in the pass with every extra installed, where every import
resolves, it runs ruff and mypy before the suite, and the ``[dev]`` extra installs both."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_the_pass_with_every_extra_runs_ruff_and_mypy_before_the_suite():
    script = (ROOT / ".ci" / "run").read_text()
    assert script.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in script  # a failing step fails CI
    lines = [line.strip() for line in script.splitlines()]
    every_extra = next(i for i, line in enumerate(lines) if re.match(r'python3 -m pip install .*-e "\.\[dev,', line))
    ruff = lines.index("python3 -m ruff check src tests benchmarks")
    mypy = lines.index("python3 -m mypy src")
    suite = next(i for i, line in enumerate(lines) if line.startswith("run_pytest python3 -m pytest"))
    assert every_extra < ruff < suite and every_extra < mypy < suite


def test_the_dev_extra_installs_ruff_and_mypy():
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    assert {re.match(r"[\w-]+", requirement)[0] for requirement in dev} >= {"ruff", "mypy"}
