"""README.md cannot rot: its install section and every ```python snippet, run as written."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def test_the_install_section_names_the_tested_cpu_torch_before_the_train_extra():
    text = README.read_text()
    section = text[text.index("## Install options"):]
    section = section[:section.index("\n## ", 1)]
    assert "torch==2.13.0" in section and ".[train]" in section
    assert section.index("torch==2.13.0") < section.index(".[train]")
    assert "CPU" in section


def test_the_readme_has_python_snippets():
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_every_python_snippet_runs_as_written(tmp_path, index):
    code = SNIPPETS[index]
    if "sb3_contrib" in code and importlib.util.find_spec("sb3_contrib") is None:
        pytest.skip("needs the [train] extra")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"snippet {index}:\n{code}\n{result.stderr}"
