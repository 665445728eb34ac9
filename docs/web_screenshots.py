"""Screenshots of ``tabletop web`` for docs/web.md: the viewer on a recorded Splendor game and the play table.

    python docs/web_screenshots.py            # writes docs/images/web_viewer.png and docs/images/web_play.png

Needs the [web] extra and Debian's chromium and chromium-driver (docs/web.md); it plays a short arena run of
its own in a temporary folder, so the pictures do not depend on what is on this machine.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from tabletop_rl.arena import run_arena
from tabletop_rl.ui.web.app import create_app
from tabletop_rl.ui.web.play import PlayDesk
from tabletop_rl.ui.web.views import RunView

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))
from web_browser import browser_missing, chromium, serving  # noqa: E402

IMAGES = Path(__file__).resolve().parent / "images"


def _wait_for(driver, css: str) -> None:
    WebDriverWait(driver, 20).until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))


def main() -> int:
    missing = browser_missing()
    if missing:
        print(f"cannot take screenshots: {missing}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        run_arena(
            "splendor",
            ["greedy", "mcts:simulations=50"],
            games=2,
            seed=4,
            jobs=1,
            out=Path(tmp) / "run",
            progress=False,
        )
        app = create_app(RunView.open(Path(tmp) / "run"), PlayDesk(Path(tmp) / "saves"))
        with serving(app) as url, chromium(1400, 1050) as driver:
            driver.get(f"{url}/#game=0&move=40")  # the viewer's address of that position: no clicks needed
            WebDriverWait(driver, 20).until(
                EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#board .status"), "ply 40 "))
            driver.save_screenshot(str(IMAGES / "web_viewer.png"))
            driver.find_element(By.ID, "tab-play").click()
            Select(driver.find_element(By.CSS_SELECTOR, "#play-vs select")).select_by_value("greedy")
            driver.find_element(By.ID, "play-seed").send_keys("11")
            driver.find_element(By.ID, "play-start").click()
            _wait_for(driver, "#play-board .splendor")
            for colour in ("white", "blue", "green"):
                driver.find_element(By.CSS_SELECTOR, f"#play-board .bank [data-colour='{colour}']").click()
            time.sleep(0.5)
            driver.save_screenshot(str(IMAGES / "web_play.png"))
    print(f"wrote {IMAGES / 'web_viewer.png'} and {IMAGES / 'web_play.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
