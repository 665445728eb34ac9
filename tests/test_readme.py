"""README.md's install section names the tested CPU torch before the [train] extra (its ```python blocks run in
tests/test_docs.py, with every other page's)."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_install_section_names_the_tested_cpu_torch_before_the_train_extra():
    text = README.read_text()
    section = text[text.index("## Install options"):]
    section = section[:section.index("\n## ", 1)]
    assert "torch==2.13.0" in section and ".[train]" in section
    assert section.index("torch==2.13.0") < section.index(".[train]")
    assert "CPU" in section
