"""Skips for the tests of an optional extra: the reason names the extra and the command that installs it.

``needs("torch")`` imports torch, or skips the test (or, at module level, the file) with ``needs the [train]
extra: pip install torch==2.13.0 --index-url ... && pip install -e ".[train]"``.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from tabletop_rl.core.extras import install_hint

#: The top-level module -> the extra that brings it (pyproject.toml's optional dependencies).
EXTRA_OF = {"torch": "train", "stable_baselines3": "train", "sb3_contrib": "train", "tensorboard": "train",
            "openai": "llm", "llama_cpp": "llm-local", "httpx": "serve", "uvicorn": "serve", "pydantic": "serve",
            "yaml": "serve", "fastapi": "web", "selenium": "web", "ray": "ray", "pyspiel": "openspiel",
            "open_spiel": "openspiel", "textarena": "textarena", "tianshou": "tianshou", "torchrl": "torchrl",
            "tensordict": "torchrl", "moviepy": "dev", "pygame": "dev"}


def needs(module: str, extra: str = "") -> ModuleType:
    """``module``, imported; the calling test (or file) is skipped, naming its extra, where it is not installed.

    ``extra`` names it where a module comes with more than one (httpx: [serve] and [web]).
    """
    extra = extra or EXTRA_OF[module.partition(".")[0]]
    return pytest.importorskip(module, reason=f"needs the [{extra}] extra: {install_hint(extra)}")
