"""What a request may make ``tabletop web`` do: pick one of the policies the operator allowed (the built-in menu,
or a spec given with ``--allow``) and nothing else, so no request names a file, a host, an environment variable or
a budget; a saved game naming another policy is not resumed; a request for another ``Host`` or from another
``Origin`` (a page that rebinds its own name to 127.0.0.1) is refused; a body over the limit is refused unread."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from extra_skips import needs

needs("fastapi")
needs("httpx", "web")

from fastapi.testclient import TestClient  # noqa: E402

from fake_openai_server import FakeOpenAIServer  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402
from tabletop_rl.ui.terminal import new_table, save_table  # noqa: E402
from tabletop_rl.ui.web import play  # noqa: E402
from tabletop_rl.ui.web.app import MAX_BODY_BYTES, create_app  # noqa: E402
from tabletop_rl.ui.web.menu import PolicyMenu, default_policies  # noqa: E402
from tabletop_rl.ui.web.play import PlayDesk  # noqa: E402
from web_browser import serving  # noqa: E402

#: The address the test client speaks to, as a browser on this machine would.
BASE = "http://127.0.0.1:8765"
SECRET_ENV = "TABLETOP_WEB_TEST_SECRET"


def client(saves: Path, allow: tuple[str, ...] = ()) -> TestClient:
    """The page of a server started with ``--allow`` each of ``allow`` (none: the built-in policies only)."""
    return TestClient(create_app(None, PlayDesk(saves, PolicyMenu.build(allow))), base_url=BASE)


def one_line(answer: Any, status: int) -> str:
    """The error of a refused answer, checked to be one line with the status expected."""
    assert answer.status_code == status, answer.text
    error: str = answer.json()["error"]
    assert error and "\n" not in error
    return error


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The specs the play table builds; one a request chose itself fails the test instead of being built."""
    specs: list[str] = []
    real = play.make_policy

    def spy(spec: str, game: str, seed: int | None = None) -> Any:
        specs.append(spec)
        if spec.startswith(("model:", "mcts:simulations=3000000", "llm")):
            raise AssertionError(f"the play table built {spec!r}, which a request named")
        return real(spec, game=game, seed=seed)

    monkeypatch.setattr(play, "make_policy", spy)
    return specs


# --- the policies ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("game", "spec"),
    [
        ("klaverjas", "model:path=/dev/zero"),  # read without end: gigabytes, and the request never returned
        ("splendor", "mcts:simulations=3000000"),  # a search tree of most of a gigabyte, kept while the game is open
        ("splendor", "llm:model=m,base_url=http://attacker.example/v1,api_key_env=OPENROUTER_API_KEY"),
        ("splendor", "llm:model=m,api_key_env=HOME"),
    ],
)
def test_a_policy_the_operator_did_not_allow_is_refused_unbuilt(
    tmp_path: Path, built: list[str], game: str, spec: str
) -> None:
    answer = client(tmp_path).post("/api/play", json={"game": game, "vs": [spec], "seat": 1, "seed": 1})
    error = one_line(answer, 400)
    assert f"{spec!r} is not a policy this server offers for {game}" in error
    assert "tabletop web --allow" in error
    assert built == [] and list(tmp_path.iterdir()) == []


def test_a_request_cannot_send_a_key_or_write_a_cache_through_an_llm_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, "s3cret")
    outside = tmp_path / "outside"
    with FakeOpenAIServer() as server:
        spec = f"llm:model=m,base_url={server.base_url},api_key_env={SECRET_ENV},cache={outside},backoff=0.001"
        answer = client(tmp_path / "saves").post(
            "/api/play", json={"game": "splendor", "vs": [spec], "seat": 1, "seed": 1}
        )
        one_line(answer, 400)
        assert server.requests == []
    assert not outside.exists() and not (tmp_path / "saves").exists()


def test_the_menu_offers_the_built_in_policies_and_what_the_operator_allows(tmp_path: Path) -> None:
    api = client(tmp_path, allow=("greedy:points=2,name=greedy2", "klaverjas:search:samples=2"))
    offered = api.get("/api/info").json()["policies"]
    available = PolicyMenu.build().offered
    assert offered["splendor"] == [*available("splendor"), "greedy:points=2.0,name=greedy2"]
    assert offered["klaverjas"] == [*available("klaverjas"), "search:samples=2"]
    assert offered["space_conquest"] == available("space_conquest") == list(default_policies()["space_conquest"])
    for game, specs in offered.items():
        for spec in specs:
            assert api.post("/api/play", json={"game": game, "vs": [spec], "seed": 2}).status_code == 200, spec


def test_an_llm_the_operator_allows_is_picked_by_its_spec_and_uses_the_operators_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs("openai")
    monkeypatch.setenv(SECRET_ENV, "operator-key")
    with FakeOpenAIServer() as server:
        allowed = f"llm:model=m,base_url={server.base_url},backoff=0.001,api_key_env={SECRET_ENV}"
        api = client(tmp_path, allow=(f"splendor:{allowed}",))
        (spec,) = [s for s in api.get("/api/info").json()["policies"]["splendor"] if s.startswith("llm")]
        view = api.post("/api/play", json={"game": "splendor", "vs": [spec], "seat": 1, "seed": 1}).json()
        assert view["players"] == [spec, "you"] and view["your_turn"]
        assert server.authorizations == ["Bearer operator-key"]
    assert "llm" not in " ".join(api.get("/api/info").json()["policies"]["space_conquest"])


@pytest.mark.parametrize(
    ("allow", "error", "reason"),
    [
        ("mcts:simulations=lots", "--allow 'mcts:simulations=lots': ", "simulations"),  # the registry's reason
        ("klaverjas:mcts", "--allow 'klaverjas:mcts': ", "mcts"),
        ("nosuchpolicy", "--allow 'nosuchpolicy': no game has a policy 'nosuchpolicy'", ""),
        ("chess:random", "--allow 'chess:random': no game has a policy 'chess'", ""),
    ],
)
def test_a_spec_the_operator_allows_is_checked_before_the_page_listens(
    tmp_path: Path, capsys: pytest.CaptureFixture, allow: str, error: str, reason: str
) -> None:
    assert main(["web", "--saves", str(tmp_path), "--port", "0", "--allow", allow]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tabletop web: error: {error}") and err.count("\n") == 1
    assert reason in err.removeprefix(f"tabletop web: error: {error}")
    assert list(tmp_path.iterdir()) == []


def test_a_saved_game_naming_a_policy_not_offered_is_not_resumed(tmp_path: Path, built: list[str]) -> None:
    save_table(new_table("splendor", ["mcts:simulations=3000000"], 2, 1, 3), tmp_path / "deep.json")
    api = client(tmp_path)
    for answer in (api.post("/api/play/saves/deep/resume"), api.get("/api/play/deep")):
        error = one_line(answer, 400)
        assert error.startswith("saved game 'deep': 'mcts:simulations=3000000' is not a policy this server offers")
    assert built == []


def test_a_saved_game_of_an_offered_policy_resumes_in_any_spelling_of_its_spec(tmp_path: Path) -> None:
    save_table(new_table("splendor", ["expectiminimax:nodes=20000,depth=3,budget_ms=0"], 2, 1, 3), tmp_path / "e.json")
    view = client(tmp_path).post("/api/play/saves/e/resume").json()
    assert view["players"] == ["expectiminimax:depth=3,budget_ms=0.0,nodes=20000", "you"]


# --- Host, Origin and the body ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "attacker.example"},  # a page of attacker.example whose name now points at 127.0.0.1
        {"Host": "attacker.example:8765"},
        {"Host": "127.0.0.1:9999"},
        {"Origin": "http://attacker.example"},
        {"Origin": "http://127.0.0.1:9999"},
        {"Origin": "null"},
        {"Origin": "http://[::1"},  # no address at all
        {"Host": "[::1"},
    ],
)
def test_a_request_for_another_host_or_from_another_origin_is_refused(
    tmp_path: Path, built: list[str], headers: dict[str, str]
) -> None:
    api = client(tmp_path)
    for answer in (
        api.get("/", headers=headers),
        api.get("/api/info", headers=headers),
        api.post("/api/play", json={"seed": 1}, headers=headers),
    ):
        error = one_line(answer, 403)
        assert "is not this server" in error
    assert built == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "headers",
    [{}, {"Host": "localhost:8765"}, {"Origin": BASE}, {"Host": "localhost:8765", "Origin": "http://localhost:8765"}],
)
def test_the_page_of_this_server_is_answered(tmp_path: Path, headers: dict[str, str]) -> None:
    api = client(tmp_path)
    assert api.get("/api/info", headers=headers).status_code == 200
    assert api.post("/api/play", json={"seed": 1, "name": "g"}, headers=headers).status_code == 200


def raw_request(url: str, head: str, body: bytes = b"") -> tuple[int, dict[str, Any]]:
    """Send ``head`` (request line and headers) and ``body`` to the server at ``url``; its status and JSON."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as connection:
        connection.sendall(head.encode("latin-1") + b"\r\n" + body)
        response = http.client.HTTPResponse(connection)
        response.begin()
        return response.status, json.loads(response.read())


def test_a_real_server_refuses_a_rebound_host_and_an_undeclared_huge_body(tmp_path: Path) -> None:
    with serving(create_app(None, PlayDesk(tmp_path, PolicyMenu.build()))) as url:
        netloc = url.removeprefix("http://")
        status, data = raw_request(url, "GET /api/info HTTP/1.1\r\nHost: attacker.example\r\n")
        assert status == 403 and "'attacker.example' is not this server" in data["error"]
        status, data = raw_request(url, f"GET /api/info HTTP/1.1\r\nHost: {netloc}\r\n")
        assert status == 200 and "policies" in data
        huge = f"POST /api/play HTTP/1.1\r\nHost: {netloc}\r\nContent-Type: application/json\r\n"
        status, data = raw_request(url, huge + "Content-Length: 300000000\r\n")  # no byte of the body is sent
        assert status == 413
        assert data["error"] == f"body: Content-Length 300000000 is over the {MAX_BODY_BYTES}-byte limit"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "send",
    [
        lambda api, body: api.post("/api/play", content=body, headers={"content-type": "application/json"}),
        lambda api, body: api.post("/api/play", content=iter([body[:1000], body[1000:]])),  # chunked: no length
    ],
)
def test_a_body_over_the_limit_is_refused_in_one_line(
    tmp_path: Path, send: Callable[[TestClient, bytes], Any]
) -> None:
    body = json.dumps({"game": "splendor", "name": "x" * MAX_BODY_BYTES}).encode()
    error = one_line(send(client(tmp_path), body), 413)
    assert error.startswith("body: ") and f"over the {MAX_BODY_BYTES}-byte limit" in error
    assert list(tmp_path.iterdir()) == []


# --- memory ----------------------------------------------------------------------------------------
def test_at_most_eight_games_stay_open_and_a_dropped_one_reopens_from_its_save(tmp_path: Path) -> None:
    """A Klaverjas search holds a 48 MB table for as long as its game is open: 8 open games, not 32, bound that."""
    api = client(tmp_path)
    views = [
        api.post("/api/play", json={"game": "klaverjas", "vs": ["search:samples=4"], "seed": n, "name": f"k{n}"}).json()
        for n in range(9)
    ]
    first = api.get("/api/play/k0").json()
    assert first["log"] == [f"resumed from {tmp_path / 'k0.json'}"]  # dropped from memory, read back from its file
    assert first["board"] == views[0]["board"] and first["legal"] == views[0]["legal"]
    assert api.get("/api/play/k8").json()["log"] == views[8]["log"]  # still open
