"""OpenSpiel and TextArena get Splendor from an explicit import of our module for each (envs/openspiel.py,
envs/textarena.py); ``import tabletop_rl`` loads neither framework, registers nothing with them and adds no
import hook (each case in a fresh interpreter)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import tabletop_rl

#: The package under test, first on the fresh interpreter's path too (not whichever copy is installed).
SRC = str(Path(tabletop_rl.__file__).resolve().parents[1])


def run(code: str) -> str:
    code = f"import sys\nsys.path.insert(0, {SRC!r})\n{code}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_loads_no_framework_and_adds_no_import_hook():
    out = run("import sys\nhooks = list(sys.meta_path)\nimport tabletop_rl\n"
              "print(sorted({'pyspiel', 'textarena'} & set(sys.modules)), sys.meta_path == hooks)")
    assert out == "[] True"


#: framework, our module for it, an expression that is True once Splendor is registered with it
DOORS = [
    pytest.param("pyspiel", "tabletop_rl.envs.openspiel",
                 "'tabletop_splendor' in pyspiel.registered_names()", marks=pytest.mark.openspiel, id="openspiel"),
    pytest.param("textarena", "tabletop_rl.envs.textarena",
                 "'Splendor-v0' in textarena.envs.registration.ENV_REGISTRY", marks=pytest.mark.textarena,
                 id="textarena"),
]


@pytest.mark.parametrize(("framework", "module", "registered"), DOORS)
def test_our_module_registers_splendor_and_import_tabletop_rl_does_not(framework, module, registered):
    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"needs {framework}")
    out = run(f"import tabletop_rl, {framework}\nprint({registered})\nimport {module}\nprint({registered})")
    assert out.split() == ["False", "True"]
