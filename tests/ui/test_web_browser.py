"""``tabletop web`` in a real browser (Debian's headless Chromium through /usr/bin/chromedriver), served by uvicorn
on 127.0.0.1: step through a recorded game to the end and back, a player's view that never receives an
opponent's blind reserve, and a game against random played by clicking, an illegal click explained."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_records import forfeit_record
from web_browser import RECORD_FETCHES, browser_missing, chromium, rendered_dom, serving

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=f"no browser test: {browser_missing()}")

if browser_missing() is None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait

from tabletop_rl.arena import load_games, run_arena  # noqa: E402
from tabletop_rl.ui.terminal import replay_frames  # noqa: E402

WAIT_S = 15


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "run"
    run_arena("splendor", ["random", "greedy"], games=2, seed=2, jobs=1, out=out, max_plies=40, progress=False)
    return out


@pytest.fixture(scope="module")
def page(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str, Path]]:
    """A browser on the page of the run; the folder where played games are saved."""
    from tabletop_rl.ui.web.app import create_app
    from tabletop_rl.ui.web.play import PlayDesk
    from tabletop_rl.ui.web.views import RunView

    saves = tmp_path_factory.mktemp("saves")
    with serving(create_app(RunView.open(run), PlayDesk(saves))) as url, chromium() as driver:
        yield driver, url, saves


def wait(driver: Any, condition: Any) -> Any:
    """Wait for ``condition``, looking again at an element the page redrew meanwhile."""
    return WebDriverWait(driver, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)).until(condition)


def current_ply(driver: Any) -> int:
    return int(driver.find_element(By.ID, "ply").get_attribute("value"))


def step_to(driver: Any, button: str, target: int, limit: int = 400) -> None:
    """Press ``button`` (next or prev) until the viewer is at ``target``, each press waiting for the board."""
    for _ in range(limit):
        ply = current_ply(driver)
        if ply == target:
            return
        driver.find_element(By.ID, button).click()
        wait(driver, lambda d, ply=ply: current_ply(d) != ply)
    raise AssertionError(f"did not reach ply {target}")


def jump(driver: Any, ply: int) -> None:
    """Type ``ply`` into the step box and wait for the board to show it."""
    box = driver.find_element(By.ID, "ply")
    box.clear()
    box.send_keys(str(ply), Keys.ENTER)
    wait(driver, lambda d: f"ply {ply} " in d.find_element(By.CSS_SELECTOR, "#board .status").text)


def open_game(driver: Any, url: str, index: int) -> None:
    driver.get(url)
    wait(driver, EC.element_to_be_clickable((By.CSS_SELECTOR, f"tr[data-index='{index}']"))).click()
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#board .splendor")))


@pytest.mark.slow  # a click per ply there and back: 10-15 s on 2 cores
def test_step_through_a_game_to_the_end_and_back(page: tuple[Any, str, Path], run: Path) -> None:
    driver, url, _ = page
    record = sorted(load_games(run), key=lambda r: r["index"])[0]
    open_game(driver, url, 0)
    step_to(driver, "next", record["plies"])
    assert "Game over" in driver.find_element(By.ID, "result").text
    current = driver.find_element(By.CSS_SELECTOR, "#move-list li.current")
    assert current.get_attribute("data-ply") == str(record["plies"]) and record["moves"][-1] in current.text
    step_to(driver, "prev", 0)
    assert driver.find_element(By.ID, "result").text == ""
    assert "ply 0" in driver.find_element(By.CSS_SELECTOR, "#board .status").text
    assert [li.get_attribute("data-ply") for li in driver.find_elements(By.CSS_SELECTOR, "#move-list li")] == ["0"]


def blind_reserve(run: Path) -> tuple[int, int, int]:
    """(game, ply, card): a position of the run where P0 holds a card it reserved blind."""
    for record in sorted(load_games(run), key=lambda r: r["index"]):
        for ply, frame in enumerate(replay_frames(record)):
            hidden = [card for card, blind in frame.player(0)["reserved"] if blind]
            if hidden:
                return record["index"], ply, hidden[0]
    raise AssertionError("no blind reserve in the run; choose another seed")


def test_a_seat_view_never_receives_an_opponents_blind_reserve(page: tuple[Any, str, Path], run: Path) -> None:
    driver, url, _ = page
    index, ply, card = blind_reserve(run)
    open_game(driver, url, index)
    jump(driver, ply)
    driver.execute_script(RECORD_FETCHES)
    Select(driver.find_element(By.ID, "viewer-select")).select_by_value("1")
    wait(driver, lambda d: len(d.execute_script("return window.__fetched")) >= 1)
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, ".player[data-seat='0'] .card.back")))
    shown = re.compile(rf'#{card}\b|"id":\s*{card},\s*"level"')
    assert not shown.search(driver.page_source)
    fetched = driver.execute_script("return window.__fetched")
    assert all(not shown.search(body) for body in fetched)
    assert any(json.loads(body).get("ply") == ply for body in fetched)
    Select(driver.find_element(By.ID, "viewer-select")).select_by_value("0")
    wait(driver, lambda d: re.search(rf"#{card}\b", d.find_element(By.ID, "board").text))


def test_a_link_opens_its_game_at_its_move_and_the_address_follows_what_is_shown(page: tuple[Any, str, Path]) -> None:
    driver, url, _ = page
    driver.get(f"{url}/#game=1&move=5&viewer=0")
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#board .status"), "ply 5 "))
    assert driver.find_element(By.ID, "viewer-title").text.startswith("game #1:")
    assert Select(driver.find_element(By.ID, "viewer-select")).first_selected_option.get_attribute("value") == "0"
    assert driver.find_element(By.CSS_SELECTOR, ".player[data-seat='0']").get_attribute("class").endswith(" me")
    driver.find_element(By.ID, "next").click()
    wait(driver, lambda d: d.current_url.endswith("/#game=1&move=6&viewer=0"))
    driver.find_element(By.CSS_SELECTOR, "#move-list li[data-ply='3'] a.link").click()
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#board .status"), "ply 3 "))
    assert driver.current_url.endswith("/#game=1&move=3&viewer=0")


def test_a_link_shows_its_position_with_no_script_fallbacks_rejected_replies_and_the_forfeit(tmp_path: Path) -> None:
    from tabletop_rl.ui.web.app import create_app
    from tabletop_rl.ui.web.play import PlayDesk
    from tabletop_rl.ui.web.views import RunView

    record = forfeit_record()
    (tmp_path / "games.jsonl").write_text(json.dumps(record) + "\n")
    with serving(create_app(RunView.open(tmp_path), PlayDesk(tmp_path / "saves"))) as url:
        dom = rendered_dom(f"{url}/#game=0&move=1")  # Chromium alone, as a screenshot would be taken
    text = re.sub(r"<[^>]+>", " ", dom)
    assert re.search(r'class="status">ply 1 ', dom) and f"P1 forfeits: {record['forfeit_reason']}" in text
    assert "fallback: no usable reply in 2 attempt(s), last error: no JSON object" in text
    assert "rejected (illegal): buy:3.0: card 80 costs 12 more" in text and "hmm\nlet me see" in text
    assert "31.50 s (calls 1.50 s)" in text and "512 cached" in text and "20.00 s (calls 1.50 s)" in text


def test_play_against_random_by_clicking(page: tuple[Any, str, Path]) -> None:
    driver, url, saves = page
    driver.get(url)
    wait(driver, EC.element_to_be_clickable((By.ID, "tab-play"))).click()
    driver.find_element(By.ID, "play-seed").send_keys("3")
    driver.find_element(By.ID, "play-name").send_keys("clicked")
    driver.find_element(By.ID, "play-start").click()
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#play-board .splendor")))
    moves = {where: {button.get_attribute("data-move") for button in driver.find_elements(By.CSS_SELECTOR, where)}
             for where in ("#legal .move", "#play-board .move")}
    legal, offered = moves["#legal .move"], moves["#play-board .move"]
    assert "reserve:3.0" in offered and "buy:3.0" not in offered  # nobody affords a card at first
    assert offered <= legal
    assert "ply 0" in driver.find_element(By.CSS_SELECTOR, "#play-board .status").text
    for colour in ("white", "blue", "green"):
        driver.find_element(By.CSS_SELECTOR, f"#play-board .bank [data-colour='{colour}']").click()
    driver.find_element(By.ID, "take").click()
    wait(driver, EC.text_to_be_present_in_element((By.ID, "play-log"), "P0 (you) played take:white,blue,green"))
    for move in range(2):
        ply = 2 * (move + 1)
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#play-board .status"), f"ply {ply} "))
        driver.find_element(By.CSS_SELECTOR, "#legal .move").click()
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#play-board .status"), "ply 6 "))
    assert json.loads((saves / "clicked.json").read_text())["position"]["ply"] == 6
    assert not driver.find_element(By.ID, "play-explain").is_displayed()


def test_the_opponent_menus_list_exactly_the_policies_offered(page: tuple[Any, str, Path]) -> None:
    from tabletop_rl.ui.web.menu import PolicyMenu

    driver, url, saves = page
    menu = PolicyMenu.build()
    driver.get(url)
    wait(driver, EC.element_to_be_clickable((By.ID, "tab-play"))).click()

    def menus() -> list[list[str]]:
        selects = driver.find_elements(By.CSS_SELECTOR, "#play-vs select")
        return [[option.get_attribute("value") for option in Select(s).options] for s in selects]

    wait(driver, lambda d: menus() == [menu.offered("splendor")])
    Select(driver.find_element(By.ID, "play-players")).select_by_value("3")
    assert menus() == [menu.offered("splendor")] * 2
    Select(driver.find_element(By.ID, "play-game")).select_by_value("klaverjas")
    assert menus() == [menu.offered("klaverjas")]
    Select(driver.find_element(By.ID, "play-game")).select_by_value("splendor")
    Select(driver.find_element(By.CSS_SELECTOR, "#play-vs select")).select_by_value("greedy")
    driver.find_element(By.ID, "play-name").send_keys("menu")
    driver.find_element(By.ID, "play-start").click()
    wait(driver, EC.text_to_be_present_in_element((By.ID, "play-title"), "P1 greedy"))
    assert json.loads((saves / "menu.json").read_text())["players"] == [None, "greedy"]
