"""``tabletop web`` through its HTTP API (FastAPI's TestClient): the games of a recorded run, every position as a
spectator and as each player saw it (the terminal replay's view, hidden cards never in a seat's JSON), the run's
summary as summary.json has it, and play against a policy: a legal move applied, an illegal one explained with
nothing changed, every move saved and the game resumed; bad input answered in one line."""

from __future__ import annotations

import importlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from extra_skips import needs

needs("fastapi")
needs("httpx", "web")

from fastapi.testclient import TestClient  # noqa: E402

from llm_records import FALLBACK_NOTE, forfeit_record  # noqa: E402
from tabletop_rl.arena import load_games, run_arena  # noqa: E402
from tabletop_rl.cli import main  # noqa: E402
from tabletop_rl.games.splendor.game import SplendorGame  # noqa: E402
from tabletop_rl.ui.terminal import load_table, play_terminal, replay_frames, replay_terminal  # noqa: E402
from tabletop_rl.ui.web.app import check_host, create_app  # noqa: E402
from tabletop_rl.ui.web.play import PlayDesk  # noqa: E402
from tabletop_rl.ui.web.views import RunView  # noqa: E402

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs_0_1"


def client(run: Path | None, saves: Path) -> TestClient:
    """The page as a browser on this machine asks for it (the server answers its own address only)."""
    return TestClient(create_app(None if run is None else RunView.open(run), PlayDesk(saves)),
                      base_url="http://127.0.0.1:8765")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small Splendor run of fast policies (random reserves blind from the decks now and then)."""
    out = tmp_path_factory.mktemp("web") / "run"
    run_arena("splendor", ["random", "greedy"], games=4, seed=1, jobs=1, out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def api(run: Path, tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    return client(run, tmp_path_factory.mktemp("saves"))


def card_ids(data: Any) -> set[int]:
    """The ids of every Splendor card drawn face up anywhere in a JSON answer (a card has a ``bonus``)."""
    if isinstance(data, dict):
        found = {data["id"]} if "bonus" in data and "id" in data else set()
        return found.union(*(card_ids(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(card_ids(v) for v in data))
    return set()


def mentions_card(text: str, card: int) -> bool:
    """Whether a text board or move name shows card ``card`` (``#41``)."""
    return re.search(rf"#{card}\b", text) is not None


# --- the recorded run ---------------------------------------------------------------------------------
def test_the_games_of_a_run_are_listed_with_seats_result_and_length(api: TestClient, run: Path) -> None:
    rows = api.get("/api/games").json()
    records = sorted(load_games(run), key=lambda r: r["index"])
    assert [row["index"] for row in rows] == [r["index"] for r in records]
    for row, record in zip(rows, records):
        assert row["seats"] == row["labels"] == record["seats"]
        assert row["plies"] == record["plies"] and row["scores"] == record["scores"]
        winner = record["winners"][0]
        assert row["result"] == f"P{winner} wins"


@pytest.mark.parametrize("viewer", ["spectator", "0", "1"])
def test_every_position_is_the_terminal_replays_view(api: TestClient, run: Path, viewer: str) -> None:
    record = sorted(load_games(run), key=lambda r: r["index"])[0]
    frames = replay_frames(record)
    seat = None if viewer == "spectator" else int(viewer)
    game = api.get("/api/games/0").json()
    assert game["last"] == record["plies"] and game["seats"] == record["seats"]
    for ply, frame in enumerate(frames):
        view = api.get(f"/api/games/0/plies/{ply}?viewer={viewer}").json()
        assert view["ply"] == view["board"]["ply"] == len(view["moves"]) == ply
        assert [step[0]["move"].split()[0] for step in view["moves"]] == record["moves"][:ply]
        assert view["text"] == frame.render(viewer=seat)
        assert view["over"] == (ply == len(frames) - 1)
    assert view["result"].startswith("Game over:")


def blind_reserve_record() -> tuple[dict[str, Any], int]:
    """A game record in which P0 reserved blind from the level 1 deck at its first move, and the card it got; the
    game stops at its ply cap of 3, as the record says."""
    game = SplendorGame.new(seed=5, num_players=2, max_plies=3)
    moves = ["reserve_deck:1", "take:white,blue,green", "take:white,blue,green"]
    for move in moves:
        game.step(move)
    ((card, blind),) = game.player(0)["reserved"]
    assert blind
    record = {
        "index": 0,
        "game": "splendor",
        "num_players": 2,
        "max_plies": 3,
        "seed": 5,
        "seats": ["random", "greedy"],
        "moves": moves,
        "plies": len(moves),
        "scores": [0, 0],
        "winners": [],
        "ranks": [0, 0],
        "truncated": True,
        "error": None,
        "error_seat": None,
        "decisions": [2, 1],
        "time_s": [0.0, 0.0],
        "nodes": [0, 0],
        "llm_notes": [
            {
                "source": "llm",
                "reasoning": "a card from the deck",
                "attempts": 2,
                "parse_failures": 0,
                "illegal_replies": 1,
                "truncated": 0,
                "errors": ["take2:red is not legal"],
                "prompt_tokens": 900,
                "completion_tokens": 40,
                "cost": None,
                "latency_s": 1.5,
            },
            None,
            None,
        ],
    }
    return record, card


def test_a_players_view_never_holds_an_opponents_blind_reserve(tmp_path: Path) -> None:
    record, card = blind_reserve_record()
    (tmp_path / "games.jsonl").write_text(json.dumps(record) + "\n")
    api = client(tmp_path, tmp_path / "saves")
    for viewer in ("1", "spectator"):
        for ply in range(1, 4):
            answer = api.get(f"/api/games/0/plies/{ply}?viewer={viewer}")
            assert card not in card_ids(answer.json()) and not mentions_card(answer.text, card)
            reserved = answer.json()["board"]["players"][0]["reserved"]
            assert reserved == [{"level": 1, "hidden": True}]
    own = api.get("/api/games/0/plies/1?viewer=0").json()
    assert card in card_ids(own["board"]["players"][0]["reserved"]) and mentions_card(own["text"], card)


def test_a_moves_llm_reasoning_retries_illegal_replies_tokens_and_latency_are_shown(tmp_path: Path) -> None:
    record, _ = blind_reserve_record()
    (tmp_path / "games.jsonl").write_text(json.dumps(record) + "\n")
    moves = client(tmp_path, tmp_path / "saves").get("/api/games/0/plies/3").json()["moves"]
    (first,) = moves[0]
    assert first["move"] == "reserve_deck:1" and first["policy"] == "random"
    assert first["note"] == record["llm_notes"][0]
    assert [m["note"] for step in moves[1:] for m in step] == [None, None]


def test_a_seat_sees_only_its_own_llm_notes_in_the_page_and_the_terminal_replay(tmp_path: Path) -> None:
    """A model's reasoning may name its blind reserve: the opponent's view shows its moves, not its notes."""
    record, _ = blind_reserve_record()
    (tmp_path / "games.jsonl").write_text(json.dumps(record) + "\n")
    api = client(tmp_path, tmp_path / "saves")
    notes = {viewer: api.get(f"/api/games/0/plies/1?viewer={viewer}").json()["moves"][0][0]["note"]
             for viewer in ("spectator", "0", "1")}
    assert notes == {"spectator": record["llm_notes"][0], "0": record["llm_notes"][0], "1": None}
    as_p1, as_p0 = io.StringIO(), io.StringIO()
    replay_terminal(tmp_path, 0, stdout=as_p1, interactive=False, seat=1)
    replay_terminal(tmp_path, 0, stdout=as_p0, interactive=False, seat=0)
    assert "a card from the deck" not in as_p1.getvalue() and "reasoning: a card from the deck" in as_p0.getvalue()


def test_a_forfeit_is_shown_at_the_games_end_with_its_reason_and_rejected_replies(tmp_path: Path) -> None:
    record = forfeit_record()
    (tmp_path / "games.jsonl").write_text(json.dumps(record) + "\n")
    api = client(tmp_path, tmp_path / "saves")
    assert api.get("/api/games").json()[0]["result"] == "P0 wins: P1 forfeited"
    assert api.get("/api/games/0/plies/0").json()["forfeit"] is None  # not yet: the end is not shown
    end = api.get("/api/games/0/plies/1").json()
    assert end["forfeit"] == {"player": 1, "policy": "llm:model=b", "reason": record["forfeit_reason"],
                              "note": record["forfeit_note"]}
    assert end["moves"][0][0]["note"] == FALLBACK_NOTE  # the fallback move, its rejected replies and time
    assert api.get("/api/games/0/plies/1?viewer=1").json()["forfeit"] == end["forfeit"]
    assert api.get("/api/games/0/plies/1?viewer=0").json()["forfeit"] == {
        "player": 1, "policy": "llm:model=b", "reason": None, "note": None}


def test_klaverjas_and_space_conquest_views_keep_what_a_seat_cannot_see(tmp_path: Path) -> None:
    klaverjas = client(RUNS / "klaverjas", tmp_path)
    hands = klaverjas.get("/api/games/0/plies/3?viewer=1").json()["board"]["hands"]
    assert [hand["cards"] is None for hand in hands].count(False) == 1
    assert all(hand["cards"] for hand in klaverjas.get("/api/games/0/plies/3").json()["board"]["hands"])
    space = client(RUNS / "space-conquest", tmp_path)
    fog = space.get("/api/games/0/plies/2?viewer=0").json()
    assert sum(star["ru"] is None for star in fog["board"]["stars"]) > 0
    assert all(star["ru"] is not None for star in space.get("/api/games/0/plies/2").json()["board"]["stars"])
    record = load_games(RUNS / "space-conquest")[0]
    assert fog["text"] == replay_frames(record)[2].render(viewer=0)
    orders = space.get("/api/games/0/plies/5?viewer=0").json()["moves"]
    assert all(m["seat"] == 0 for step in orders for m in step)


def test_the_summary_is_summary_json(api: TestClient, run: Path) -> None:
    assert api.get("/api/summary").json() == json.loads((run / "summary.json").read_text())


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/games/99", 404, "has no game 99 (games 0..3)"),
        ("/api/games/0/plies/5000", 404, "game 0 has steps 0.."),
        ("/api/games/0/plies/-1", 404, "game 0 has steps 0.."),
        ("/api/games/0/plies/1?viewer=2", 400, "viewer must be the spectator or a player in 0..1, got 2"),
        ("/api/games/0/plies/1?viewer=me", 400, "viewer must be 'spectator' or a player number"),
        ("/api/games/zero", 400, "index: Input should be a valid integer"),
        ("/api/play/nobody", 404, "no saved game named 'nobody'"),
        ("/static/../../etc/passwd", 404, ""),
    ],
)
def test_bad_requests_are_one_line_errors(api: TestClient, path: str, status: int, error: str) -> None:
    answer = api.get(path)
    assert answer.status_code == status
    assert error in answer.json()["error"] and "\n" not in answer.json()["error"]


def test_without_a_run_the_page_plays_and_says_no_run_is_open(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    assert api.get("/api/games").json() == {
        "error": "no arena run is open; start with: tabletop web RUN_DIR (or a games.jsonl)"
    }
    assert api.get("/api/info").json()["playable"] == ["klaverjas", "space_conquest", "splendor"]
    assert "<title>tabletop web</title>" in api.get("/").text and api.get("/static/app.js").status_code == 200


def test_a_damaged_run_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "games.jsonl").write_text('{"index": 0}\n{"index": 1}\n')
    with pytest.raises(ValueError, match=r"games.jsonl:1: not a game record: lacks \"game\""):
        RunView.open(tmp_path)
    with pytest.raises(ValueError, match="no arena run at"):
        RunView.open(tmp_path / "elsewhere")



def test_a_move_after_the_games_end_is_one_line_naming_the_record(tmp_path: Path) -> None:
    record = json.loads((RUNS / "splendor" / "games.jsonl").read_text().splitlines()[0])
    past = {**record, "moves": [*record["moves"], record["moves"][-1]], "plies": record["plies"] + 1}
    (tmp_path / "games.jsonl").write_text(json.dumps(past) + "\n")
    with pytest.raises(ValueError, match=rf"games.jsonl:1: game 0, move {past['plies']} .* the game is over$"):
        RunView.open(tmp_path)
    unchecked = RunView(tmp_path / "games.jsonl", [past], None)  # a record handed over without loading
    answer = TestClient(create_app(unchecked, PlayDesk(tmp_path / "saves")),
                        base_url="http://127.0.0.1:8765").get("/api/games/0/plies/1")
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"].startswith(f"game 0, move {past['plies']} (") and "\n" not in answer.json()["error"]


# --- play ---------------------------------------------------------------------------------------------
def new_game(api: TestClient, **body: Any) -> dict[str, Any]:
    answer = api.post("/api/play", json={"game": "splendor", "vs": ["random"], "seed": 3, "name": "g", **body})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_legal_move_is_played_and_the_policy_answers(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    view = new_game(api)
    assert view["your_turn"] and view["board"]["ply"] == 0 and view["players"] == ["you", "random"]
    move = view["legal"][0]["move"]
    after = api.post("/api/play/g/move", json={"move": move}).json()
    assert after["board"]["ply"] == 2 and after["your_turn"]
    assert after["log"][1] == f"P0 (you) played {move}" and after["log"][2].startswith("P1 (random) played ")


def test_an_illegal_move_is_explained_and_changes_nothing(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    before = new_game(api)
    saved = (tmp_path / "g.json").read_bytes()
    answer = api.post("/api/play/g/move", json={"move": "buy:3.0"})
    assert answer.status_code == 400
    assert re.fullmatch(  # said to the person playing, as the terminal says it
        r"buy:3\.0: card \d+ costs \d+ more than your tokens and bonuses cover, and you hold 0 gold",
        answer.json()["error"],
    )
    assert api.get("/api/play/g").json() == before and (tmp_path / "g.json").read_bytes() == saved
    for bad, error in (
        (["nonsense"], "unknown action name 'nonsense'"),
        ([None], "move: Input should be a valid string"),
    ):
        answer = api.post("/api/play/g/move", json={"move": bad[0]})
        assert answer.status_code == 400 and error in answer.json()["error"]
    assert api.get("/api/play/g").json() == before


def test_every_move_is_saved_and_the_game_resumes_after_a_restart(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    new_game(api, seat=1, name="long-game")
    for _ in range(3):
        view = api.post(
            "/api/play/long-game/move", json={"move": api.get("/api/play/long-game").json()["legal"][0]["move"]}
        ).json()
    saved = load_table(tmp_path / "long-game.json")
    assert saved.state.ply == view["board"]["ply"] and saved.specs == ["random", None]  # tabletop play --load reads it
    restarted = client(None, tmp_path)
    assert [s["id"] for s in restarted.get("/api/play/saves").json()["saves"]] == ["long-game"]
    resumed = restarted.post("/api/play/saves/long-game/resume").json()
    assert resumed["board"] == view["board"] and resumed["legal"] == view["legal"] and resumed["seat"] == 1
    assert restarted.post("/api/play/long-game/move", json={"move": resumed["legal"][0]["move"]}).status_code == 200


def test_klaverjas_is_played_as_a_partnership_seeing_one_hand(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    view = new_game(api, game="klaverjas", name="k")
    assert [hand["cards"] is None for hand in view["board"]["hands"]].count(False) == 1
    after = api.post("/api/play/k/move", json={"move": view["legal"][0]["move"]})
    assert after.status_code == 200 and after.json()["log"][1].startswith("P0 (you) played ")


def test_space_conquest_orders_are_played_with_the_policys_which_stay_unseen(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    view = new_game(api, game="space_conquest", vs=["heuristic"], name="sc")
    assert view["your_turn"] and view["legal"] == [] and view["board"]["viewer"] == 0
    (home,) = [star for star in view["board"]["stars"] if star["owner"] == "you"]
    orders = {"moves": [{"from": home["letter"], "to": "A" if home["letter"] != "A" else "B", "ships": 2}]}
    after = api.post("/api/play/sc/move", json={"move": json.dumps(orders)}).json()
    assert after["board"]["turn"] == 2 and after["log"][-1] == "P1 (heuristic) gave its orders"
    assert [f["ships"] for f in after["board"]["fleets"]] == [2] and "owner" not in after["board"]["fleets"][0]
    too_many = {"moves": [{"from": home["letter"], "to": orders["moves"][0]["to"], "ships": 999}]}
    refused = api.post("/api/play/sc/move", json={"move": json.dumps(too_many)}).json()
    assert refused["board"]["errors"] == [
        f"{home['letter']} has {home['ships'] - 2 + home['ru']} ships, cannot send "
        "999: over-committed, all orders rejected this turn"
    ]


def test_a_turn_of_several_orders_is_played(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    view = new_game(api, game="space_conquest", vs=["heuristic"], name="sc")
    (home,) = [star for star in view["board"]["stars"] if star["owner"] == "you"]
    targets = [star["letter"] for star in view["board"]["stars"] if star["letter"] != home["letter"]][:3]
    orders = {"moves": [{"from": home["letter"], "to": to, "ships": 1} for to in targets]}
    answer = api.post("/api/play/sc/move", json={"move": json.dumps(orders, separators=(",", ":"))})  # as the page
    assert answer.status_code == 200, answer.text
    fleets = answer.json()["board"]["fleets"]
    assert sorted((fleet["to"], fleet["ships"]) for fleet in fleets) == [(to, 1) for to in sorted(targets)]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"vs": ["nosuchpolicy"]}, "'nosuchpolicy' is not a policy this server offers for splendor"),
        ({"vs": ["mcts:simulations=lots"]}, "mcts"),
        ({"seat": 2}, "--seat must be in 0..1"),
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"name": "../escape"}, "a game's name is 1-64 letters"),
    ],
)
def test_a_bad_new_game_is_refused_in_one_line(tmp_path: Path, body: dict[str, Any], error: str) -> None:
    answer = client(None, tmp_path).post("/api/play", json={"seed": 1, **body})
    assert answer.status_code == 400 and error in answer.json()["error"]
    assert not list(tmp_path.glob("*.json"))


def test_the_terminal_resumes_a_game_of_the_page_but_not_one_of_simultaneous_orders(tmp_path: Path) -> None:
    api = client(None, tmp_path)
    new_game(api, name="cards")
    new_game(api, game="space_conquest", name="orders")
    out = io.StringIO()
    assert (
        play_terminal(load=tmp_path / "cards.json", save=tmp_path / "x.json", stdin=io.StringIO("quit\n"), stdout=out)
        == 0
    )
    assert "You are P0; P1 is random" in out.getvalue() and load_table(tmp_path / "x.json").seed == 3
    with pytest.raises(ValueError, match="is a space_conquest game of tabletop web; resume it there"):
        play_terminal(load=tmp_path / "orders.json")


def test_a_damaged_save_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"format": "tabletop-save/1", "game": "splendor", "seat": 0}')
    answer = client(None, tmp_path).post("/api/play/saves/broken/resume")
    assert answer.status_code == 400 and "is damaged: 'players' must be a list" in answer.json()["error"]


# --- the command --------------------------------------------------------------------------------------
def test_the_command_refuses_a_missing_run_and_a_remote_host(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["web", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.strip().endswith("expected a run folder holding games.jsonl, or such a file")
    assert main(["web", "--host", "0.0.0.0"]) == 2
    assert "add --allow-remote" in capsys.readouterr().err
    check_host("0.0.0.0", allow_remote=True)
    for host in ("127.0.0.1", "::1", "localhost"):
        check_host(host, allow_remote=False)


def test_without_the_extra_the_command_says_which_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    real = importlib.import_module

    def without_fastapi(name: str) -> Any:
        if name == "tabletop_rl.ui.web.app":
            raise ModuleNotFoundError("No module named 'fastapi'", name="fastapi")
        return real(name)

    monkeypatch.setattr(importlib, "import_module", without_fastapi)
    assert main(["web"]) == 1
    assert capsys.readouterr().err == (
        'tabletop web: error: fastapi is not installed; tabletop web needs the [web] extra: pip install -e ".[web]"\n'
    )
