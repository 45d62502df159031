"""The play page in a real browser (Debian's Chromium through Playwright): the
daily puzzle solved by key presses, a random puzzle's solution shown, and
screenshots at phone and desktop sizes (written to build/screenshots/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.app import create_app
from tests.helpers import get_json, served

SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"
KEYS = {"N": "ArrowUp", "E": "ArrowRight", "S": "ArrowDown", "W": "ArrowLeft"}

@pytest.fixture(scope="module")
def base_url(redis_url):
    with served(create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False})) as url:
        yield url


def _play(page, moves: list[dict]) -> None:
    colours = page.eval_on_selector_all(".robot", "els => els.map(e => e.dataset.colour)")
    for m in moves:
        page.keyboard.press(str(colours.index(m["robot"]) + 1))
        page.keyboard.press(KEYS[m["direction"]])
        page.wait_for_timeout(60)


@pytest.mark.parametrize("size,viewport", [("desktop", {"width": 1280, "height": 900}),
                                           ("phone", {"width": 390, "height": 844})])
def test_daily_puzzle_solved_by_keys(browser, base_url, size, viewport):
    context = browser.new_context(viewport=viewport, has_touch=size == "phone", device_scale_factor=2)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base_url + "/")
    page.wait_for_selector(".robot")
    daily = get_json(base_url + "/v1/daily")
    assert f"#{daily['number']}," in page.text_content("#title")  # the date in the reader's way
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"daily-{size}-start.png"), full_page=True)
    moves = get_json(base_url + daily["solution_url"])["moves"]
    _play(page, moves)
    page.wait_for_function("document.querySelector('#status').textContent.includes('optimal')", timeout=20_000)
    assert page.text_content("#count") == str(len(moves))
    assert f"Solved in {len(moves)} moves" in page.text_content("#status")
    page.screenshot(path=str(SHOTS / f"daily-{size}-solved.png"), full_page=True)
    # Undo and reset come back to the start.
    page.keyboard.press("u")
    assert page.text_content("#count") == str(len(moves) - 1)
    page.keyboard.press("r")
    assert page.text_content("#count") == "0"
    assert not errors
    context.close()


def test_random_puzzle_shows_its_solution_and_blocked_moves_are_explained(browser, base_url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url + "/?length=6")
    page.wait_for_selector(".robot")
    assert page.url.startswith(base_url + "/p/")  # a shareable address
    page.click("#solution")
    page.wait_for_function("document.querySelector('#status').textContent.includes('optimal')", timeout=30_000)
    assert page.text_content("#count") == "6"
    page.screenshot(path=str(SHOTS / "random-solution-desktop.png"))
    page.keyboard.press("r")
    # Moving a robot back the way it can't go: the page says so instead of counting it.
    for _ in range(8):  # up to the wall, then once more
        page.keyboard.press("ArrowUp")
        page.wait_for_timeout(300)
        if "cannot move up" in page.text_content("#status"):
            break
    assert "cannot move up" in page.text_content("#status")
    page.close()


def test_unknown_code_says_what_went_wrong(browser, base_url):
    page = browser.new_page()
    page.goto(base_url + "/p/not-a-code")
    page.wait_for_function("document.querySelector('#goal').textContent.includes('Could not load')")
    page.close()


def test_hint_button_tells_a_level_more_at_each_press(browser, base_url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base_url + "/")
    page.wait_for_selector(".robot")
    daily = get_json(base_url + "/v1/daily")
    moves = get_json(base_url + daily["solution_url"])["moves"]
    robots = list(dict.fromkeys(m["robot"] for m in moves))
    expected = [f"It takes {len(moves)} moves.", f"{len(robots)} robot", "Robots that move: " + ", ".join(robots),
                f"First move: {moves[0]['robot']}"]
    for level, text in enumerate(expected, start=1):
        page.click("#hint")
        page.wait_for_function(f"document.querySelector('#hint-text').textContent.startsWith('Hint {level} of 4')",
                               timeout=20_000)
        assert text in page.text_content("#hint-text")
    assert page.is_disabled("#hint")
    assert page.text_content("#count") == "0"  # a hint moves nothing
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "daily-hint-desktop.png"), full_page=True)
    # Open Graph: the page a chat app fetches names the day's picture.
    assert page.get_attribute('meta[property="og:image"]', "content").endswith(f"/v1/daily/{daily['date']}.png")
    assert not errors
    page.close()


def test_docs_page_is_swagger_ui_over_the_contract_from_this_server_alone(browser, base_url):
    """/docs renders every operation of openapi.yaml with Swagger UI, whose files
    come from the installed package: the page asks nothing of any other host."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    hosts: set[str] = set()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: hosts.add(r.url.split("/")[2]))
    page.goto(base_url + "/docs")
    page.wait_for_selector(".opblock", timeout=30_000)
    paths = page.eval_on_selector_all(".opblock-summary-path", "els => els.map(e => e.dataset.path)")
    assert "/v1/daily/{day}" in paths and "/v1/solve" in paths
    # Try an operation from the page, as a reader would.
    page.click("#operations-service-healthz .opblock-summary")
    page.click("#operations-service-healthz .try-out__btn")
    page.click("#operations-service-healthz .execute")
    page.wait_for_selector("#operations-service-healthz .live-responses-table tbody .response-col_status")
    assert "200" in page.text_content("#operations-service-healthz .live-responses-table tbody .response-col_status")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "docs-desktop.png"))
    assert hosts == {base_url.split("/")[2]} and not errors
    page.close()


def test_daily_share_text_is_copied_and_the_streak_survives_a_reload(browser, base_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base_url + "/")
    page.wait_for_selector(".robot")
    assert "Next puzzle in" in page.text_content("#countdown")
    assert "streak 0 days" in page.text_content("#stats-figures")
    daily = get_json(base_url + "/v1/daily")
    moves = get_json(base_url + daily["solution_url"])["moves"]
    _play(page, moves)
    page.wait_for_selector("#after:not([hidden])", timeout=20_000)
    page.click("#share")
    page.wait_for_function("document.querySelector('#share-status').textContent.includes('Copied')")
    copied = page.evaluate("navigator.clipboard.readText()")
    n = len(moves)
    assert copied.startswith(f"Ricochet Robots daily #{daily['number']} ({daily['date']}): {n}/{n} moves, ★ optimal")
    assert daily["code"] not in copied and not any(c in copied for c in ("red", "green", "blue", "yellow"))
    assert "streak 1 day" in page.text_content("#stats-figures")
    page.reload()
    page.wait_for_selector(".robot")
    assert "Solved 1 · optimal 1 · streak 1 day" in page.text_content("#stats-figures")
    assert page.text_content("#share-text").startswith(copied.split("\n")[0])  # still offered
    page.click("#archive-box summary")
    page.wait_for_selector("#archive li a")
    first = page.get_attribute("#archive li a", "href")
    assert first == f"/?day={daily['date']}"
    page.screenshot(path=str(SHOTS / "daily-stats.png"), full_page=True)
    assert not errors
    context.close()


def test_train_mode_plays_three_puzzles_and_the_rating_moves(browser, base_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base_url + "/?train=1")
    seen = set()
    for _ in range(3):
        page.wait_for_selector(".robot")
        page.wait_for_function("document.querySelector('#rating').textContent.includes('Your rating')")
        code = page.get_attribute("#board", "data-code")
        assert code not in seen
        seen.add(code)
        # /next served it with its solution, so the service knows one (listing every solution
        # may need longer than a request's budget on a loaded machine)
        moves = get_json(f"{base_url}/v1/solve", body={"code": code})["moves"]
        _play(page, moves)
        page.wait_for_function("document.querySelector('#rating').textContent.includes('→')", timeout=20_000)
        assert "(+" in page.text_content("#rating")  # solved optimally: the rating goes up
        page.click("#next")
        page.wait_for_load_state()
    player = page.evaluate("localStorage.getItem('rr-player')")
    me = get_json(f"{base_url}/v1/players/{player}")
    assert me["attempts"] == 3 and me["wins"] == 3 and me["rating"]["value"] > 1500
    assert not errors
    context.close()
