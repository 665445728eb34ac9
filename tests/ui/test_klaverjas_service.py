"""The best-card service through real HTTP on loopback: the issue's example, every error code, oversized
bodies, the external-API adapter, and the fallback path when the model file is absent and the API is down."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from extra_skips import needs

httpx = needs("httpx")
uvicorn = needs("uvicorn")

from tabletop_rl.ui import klaverjas_service  # noqa: E402
from tabletop_rl.ui.klaverjas_best_card import Play, Trick, position  # noqa: E402
from tabletop_rl.ui.klaverjas_service import (  # noqa: E402
    BestCardRequest,
    ServiceConfig,
    create_app,
    position_from_request,
    serve_main,
)

EXAMPLE = {"hand": ["JH", "9H", "AC", "10C", "KS", "7D", "8D"],
           "table": [{"player": 2, "card": "AH"}, {"player": 3, "card": "7H"}],
           "history": [{"leader": 0, "plays": ["7S", "8S", "AS", "9S"], "winner": 2, "points": 11}],
           "trump": "H", "playerPosition": 0, "leaderPosition": 2, "partnerPosition": 2,
           "scoringMode": "simple", "topK": 3, "requestId": "abc-123", "rules": "rotterdam", "allowFallback": True}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """uvicorn in a thread on a free loopback port."""

    def __init__(self, config: ServiceConfig) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=self.port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> httpx.Client:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            assert time.time() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=10)
        return self.client

    def __exit__(self, *exc) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(10)


def request(**changes) -> dict:
    body = json.loads(json.dumps(EXAMPLE))
    body.update(changes)
    return body


@pytest.fixture(scope="module")
def client():
    with Server(ServiceConfig(model_path="")) as c:
        yield c


def test_the_issue_example_is_answered_with_a_legal_card(client):
    reply = client.post("/v1/best-card", json=request())
    assert reply.status_code == 200, reply.text
    body = reply.json()
    # trump lead (AH) by the partner: N must still beat the ace, with JH or 9H
    assert set(body["legalCards"]) == {"JH", "9H"}
    assert body["bestCard"] in body["legalCards"]
    assert body["requestId"] == "abc-123" and body["model"]["name"] == "heuristic"
    assert len(body["candidates"]) == 3 and all(c["reason"] for c in body["candidates"])
    assert [c["legal"] for c in body["candidates"]] == [True, True, False]
    assert body["candidates"][0]["card"] == body["bestCard"]


def test_a_request_reaches_the_domain_as_written():
    req = BestCardRequest.model_validate({**EXAMPLE, "hand": [card.lower() for card in EXAMPLE["hand"]],
                                          "table": [{"player": 2, "card": "ah"}, "7h"]})
    query = req.query()
    assert query.hand == EXAMPLE["hand"] and query.table == [Play(2, "AH"), "7H"]
    assert query.history == [Trick(0, ["7S", "8S", "AS", "9S"], winner=2, points=11)]
    assert (query.leaderPosition, query.partnerPosition, query.requestId) == (2, 2, "abc-123")
    assert (position_from_request(req) == position(query)).all()


def test_healthz_and_openapi_document_the_400_mapping(client):
    assert client.get("/healthz").json()["status"] == "ok"
    spec = client.get("/openapi.json").json()
    responses = spec["paths"]["/v1/best-card"]["post"]["responses"]
    assert {"400", "413", "422", "503"} <= set(responses)
    assert "mapped to 400" in responses["400"]["description"]
    assert client.get("/docs").status_code == 200


@pytest.mark.parametrize("changes, field", [
    ({"hand": []}, "hand"),
    ({"hand": ["JH", "JH", "AC", "10C", "KS", "7D", "8D"]}, "hand[1]"),
    ({"hand": ["JH", "9H", "AC", "10C", "KS", "7D", "AS"]}, "history[0].plays[2]"),
    ({"table": [{"player": 2, "card": "AH"}, {"player": 3, "card": "7H"}, {"player": 0, "card": "8H"},
                {"player": 1, "card": "QH"}]}, "table"),
    ({"trump": "X"}, "trump"),
    ({"hand": ["JH", "9H", "AC", "10C", "KS", "7D", "1D"]}, "hand[6]"),
    ({"playerPosition": 4}, "playerPosition"),
    ({"partnerPosition": 1}, "partnerPosition"),
    ({"table": [{"player": 3, "card": "AH"}, {"player": 2, "card": "7H"}]}, "table[0].player"),
    ({"leaderPosition": None, "table": ["AH", "7H"]}, "leaderPosition"),
    ({"topK": "three"}, "topK"),
    ({"history": [{"leader": 0, "plays": ["7S", "8S", "AS"]}]}, "history[0].plays"),
])
def test_bad_input_is_400_naming_the_field(client, changes, field):
    reply = client.post("/v1/best-card", json=request(**changes))
    assert reply.status_code == 400, reply.text
    assert reply.json()["detail"].startswith(field)


def test_unparseable_json_is_400(client):
    reply = client.post("/v1/best-card", content=b"{not json", headers={"content-type": "application/json"})
    assert reply.status_code == 400


def test_body_over_64_kb_is_413(client):
    body = request(requestId="x" * 100)
    body["padding"] = "y" * (65 * 1024)
    assert client.post("/v1/best-card", json=body).status_code == 413
    just_under = request(requestId="x" * 100)
    assert len(json.dumps(just_under)) < 64 * 1024
    assert client.post("/v1/best-card", json=just_under).status_code == 200


@pytest.mark.parametrize("changes, words", [
    ({"playerPosition": 1, "partnerPosition": 3}, "is to act"),
    ({"hand": ["JH", "9H", "AC", "10C", "KS", "7D"]}, "must hold"),
    ({"history": [{"leader": 0, "plays": ["7S", "8S", "AS", "9S"], "winner": 0}]}, "winner"),
    ({"leaderPosition": 3, "table": [{"player": 3, "card": "QH"}]}, "did not win"),
    ({"hand": ["JH", "9H", "AC", "10C", "KS", "7D", "QD"], "leaderPosition": 1,
      "history": [{"leader": 3, "plays": ["7S", "8D", "AS", "9S"]}],
      "table": [{"player": 1, "card": "AH"}, {"player": 2, "card": "7H"}, {"player": 3, "card": "8H"}]},
     "could not hold"),
])
def test_a_position_without_a_legal_card_is_422(client, changes, words):
    reply = client.post("/v1/best-card", json=request(**changes))
    assert reply.status_code == 422, reply.text
    assert words in reply.json()["detail"]


@pytest.mark.parametrize("field", ["stukMode", "quartetValues", "amsterdamUndertrump"])
def test_unknown_knob_values_are_400(client, field):
    reply = client.post("/v1/best-card", json=request(**{field: "sometimes"}))
    assert reply.status_code == 400 and reply.json()["detail"].startswith(field)


def test_model_required_without_fallback_is_503(client):
    reply = client.post("/v1/best-card", json=request(allowFallback=False))
    assert reply.status_code == 503 and "allowFallback" in reply.json()["detail"]


class _FakeScorer(BaseHTTPRequestHandler):
    """An external scoring API that prefers the alphabetically last card it is offered, illegal ones too."""

    def do_POST(self):  # noqa: N802 (http.server naming)
        request_body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        assert self.headers["authorization"] == "Bearer secret"
        scores = {card: float(i) for i, card in enumerate(sorted(request_body["hand"]))}
        data = json.dumps({"scores": scores, "model": {"name": "fake", "version": "9"}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_external_api_is_used_and_its_choice_masked_to_legal_cards():
    api = HTTPServer(("127.0.0.1", 0), _FakeScorer)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    try:
        config = ServiceConfig(model_path="", api_url=f"http://127.0.0.1:{api.server_port}", api_key="secret")
        with Server(config) as c:
            body = c.post("/v1/best-card", json=request()).json()
        assert body["model"] == {"name": "fake", "version": "9"}
        assert body["bestCard"] == "JH"  # KS scores highest but is not legal; of JH/9H, JH sorts later
    finally:
        api.shutdown()


def test_fallback_when_model_file_absent_and_external_api_down(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    config = ServiceConfig(model_path="", api_url=dead, api_timeout_s=0.5)
    with Server(config) as c:
        reply = c.post("/v1/best-card", json=request())
        assert reply.status_code == 200
        body = reply.json()
        assert body["model"]["name"] == "heuristic" and body["candidates"][0]["reason"] == "fallback"
        assert c.post("/v1/best-card", json=request(allowFallback=False)).status_code == 503


def test_config_from_yaml_and_environment(tmp_path):
    path = tmp_path / "service.yaml"
    path.write_text("klaverjas_service:\n  api_url: http://example.invalid\n  api_timeout_s: 2.5\n")
    config = ServiceConfig.load(str(path), environ={"KLAVERJAS_API_KEY": "k", "KLAVERJAS_MODEL_PATH": ""})
    assert (config.api_url, config.api_timeout_s, config.api_key, config.model_path) == \
        ("http://example.invalid", 2.5, "k", "")
    path.write_text("colour: blue\n")
    with pytest.raises(ValueError, match="unknown setting"):
        ServiceConfig.load(str(path), environ={})



LONG_LABEL = "a" * 64 + ".example"
#: Command lines (a config file's text for {config}) the service refuses before it starts, and what the error says.
REFUSED = {
    "port over 65535": (["--port", "99999"], None, "argument --port: must be a whole number in 0..65535"),
    "negative port": (["--port", "-1"], None, "argument --port: must be a whole number in 0..65535"),
    "host label of 64": (["--host", LONG_LABEL], None, "argument --host: must be a host name or IP address"),
    "host of 300": (["--host", "a." * 150], None, "argument --host: must be a host name or IP address"),
    "empty host label": (["--host", "a..b"], None, "argument --host: must be a host name or IP address"),
    "YAML nested 5000 deep": (["--config", "{config}"], "[" * 5000 + "]" * 5000, "nested too deeply"),
    "JSON nested 5000 deep": (["--config", "{config}"], '{"a": ' * 5000 + "1" + "}" * 5000, "nested too deeply"),
    "not YAML": (["--config", "{config}"], "port: [\n",
                 "not YAML: expected the node content, but found '<stream end>' at line 2 column 1"),
    "port in the config": (["--config", "{config}"], "port: 99999\n", ": port must be a whole number in 0..65535"),
    "host in the config": (["--config", "{config}"], f"host: {LONG_LABEL}\n", ": host must be a host name"),
    "timeout not a number": (["--config", "{config}"], "api_timeout_s: .nan\n", ": api_timeout_s must be a number"),
    "a setting of text as a list": (["--config", "{config}"], "api_url: [1, 2]\n",
                                    ": api_url must be a text, not a list"),
    "a setting named by a number": (["--config", "{config}"], "1: 2\n", "unknown setting(s) 1"),
    "a config over 64 KB": (["--config", "{config}"], "# " + "x" * 70_000 + "\n", "over the 65536-byte limit"),
    "a model that is not there": (["--config", "{config}"], "model_path: /nonexistent/model.txt\n",
                                  "klaverjas model '/nonexistent/model.txt' does not exist"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_bad_argument_or_config_is_one_line_before_the_service_starts(tmp_path, monkeypatch, capsys, name):
    monkeypatch.setattr(klaverjas_service._Server, "run", lambda self: pytest.fail("the service started"))
    argv, text, error = REFUSED[name]
    config = tmp_path / "service.yaml"
    if text is not None:
        config.write_text(text)
    with pytest.raises(SystemExit) as exit:
        serve_main([arg.format(config=config) for arg in argv])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("tabletop serve klaverjas: error: ")
    assert error in err.strip().splitlines()[-1], err


def test_a_config_that_is_no_file_and_a_bad_environment_value_are_named(tmp_path):
    with pytest.raises(ValueError, match=f"^config {tmp_path}: not a regular file$"):
        ServiceConfig.load(str(tmp_path))
    with pytest.raises(ValueError, match="^config .*: no such file$"):
        ServiceConfig.load(str(tmp_path / "missing.yaml"))
    with pytest.raises(ValueError, match="^KLAVERJAS_API_TIMEOUT_S must be a number of seconds above 0, not 'soon'$"):
        ServiceConfig.load(None, environ={"KLAVERJAS_API_TIMEOUT_S": "soon"})
    assert ServiceConfig.load(None, environ={"KLAVERJAS_API_TIMEOUT_S": "2.5"}).api_timeout_s == 2.5

def test_local_model_answers_first_and_stays_within_legal_cards(tmp_path):
    from tabletop_rl.games.klaverjas import model as M

    path = tmp_path / "model.txt"
    M.save(M.MLP.initialised([M.FEATURES, 16, 1], seed=3), path)
    with Server(ServiceConfig(model_path=str(path))) as c:
        assert c.get("/healthz").json()["model"]["name"] == "klaverjas-mlp"
        body = c.post("/v1/best-card", json=request(allowFallback=False)).json()
    assert body["model"]["name"] == "klaverjas-mlp" and body["bestCard"] in {"JH", "9H"}
    assert body["candidates"][0]["reason"] == "local model"
    assert abs(sum(c["score"] for c in body["candidates"] if c["legal"]) - 1) < 1e-3
