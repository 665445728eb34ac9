"""Every message that asks for an extra shows the one install command of ``core.extras``: the [train] extra's
installs torch's CPU build first, and no message anywhere writes its own ``pip install``."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tabletop_rl.agents import ppo
from tabletop_rl.agents.llm.client import OpenAIBackend
from tabletop_rl.core.extras import TORCH_CPU_INSTALL, install_hint

SRC = Path(__file__).resolve().parents[2] / "src" / "tabletop_rl"
EXTRAS = SRC / "core" / "extras.py"


def _strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal of a module, the literal parts of f-strings included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_only_the_extras_module_spells_an_install_command():
    spelled = [f"{path.relative_to(SRC)}:{line}" for path in sorted(SRC.rglob("*.py")) if path != EXTRAS
               for line, text in _strings(path) if "pip install" in text]
    assert spelled == []


def test_the_train_extra_is_installed_with_torch_s_cpu_build_from_a_checkout():
    hint = install_hint("train")
    assert hint.startswith(TORCH_CPU_INSTALL + " && ") and hint.endswith('pip install -e ".[train]"')
    assert "--index-url https://download.pytorch.org/whl/cpu" in TORCH_CPU_INSTALL


def test_a_ppo_policy_without_torch_shows_the_train_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now fails, as where it is not installed
    with pytest.raises(ValueError) as error:
        ppo.build_network(4, [8], 3)
    assert install_hint("train") in str(error.value) and "[train]" in str(error.value)
    assert "\n" not in str(error.value)


def test_an_llm_player_without_openai_shows_the_llm_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ValueError) as error:
        OpenAIBackend("http://127.0.0.1:9/v1", api_key="none")
    assert str(error.value).endswith(install_hint("llm")) and "[llm]" in str(error.value)


def test_the_readme_installs_torch_as_the_messages_say():
    readme = (SRC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert f'{TORCH_CPU_INSTALL}\npip install -e ".[train]"' in readme
