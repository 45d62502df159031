"""What a new player still tripped on (issue 69, "First"), each defect held by a
test in a real browser (Debian's Chromium through Playwright, tests/pages.py):
midnight and the streak (1), a mistyped address in Chromium (2), a shared or
reloaded puzzle's par (3), Train's last hint unrating the attempt (4), the board
in words, the how-to and the first hint (6), and the grade words of published
days (7).  Defect 5 (rooms on a phone) is held by the rooms' tests."""

from __future__ import annotations

import datetime as dt

import pytest

from service.app import create_app
from service.i18n import catalogue
from solver.model.board import real_board
from solver.model.puzzle import Puzzle, moves_to_json
from solver.play import daily
from solver.play.grades import grade_of
from solver.search.solve import solve
from tests.helpers import get_json, served
from tests.pages import Tour, context, one_of, play

PAR = {"en": "in 6 moves", "de": "in 6 Zügen", "ru": "за 6 ходов"}


@pytest.fixture(scope="module")
def base_url(redis_url):
    with served(create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False})) as url:
        yield url


def _fresh(browser, base_url, path: str, lang: str = "en", size: str = "desktop", seen: bool = True):
    ctx = context(browser, lang, size, seen_how_to_play=seen)
    page = ctx.new_page()
    page.goto(base_url + path)
    return ctx, page


# -- 2: Chromium's Accept header gets the page ---------------------------------------

CHROMIUM_ACCEPT = ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,"
                   "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7")


def _get(url: str, accept: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": accept, "Accept-Language": "de"})
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, r.headers["Content-Type"]
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"]


@pytest.mark.parametrize("lang", one_of(["en", "ru"], 1))
def test_defect_2_a_mistyped_address_in_chromium_is_the_translated_page(browser, base_url, lang):
    ctx = context(browser, lang, "phone")
    page = ctx.new_page()
    tour = Tour(page, "newplayer-404", lang, "phone")
    try:
        sent: list[str] = []
        page.on("request", lambda r: sent.append(r.headers.get("accept", "")))
        reply = page.goto(f"{base_url}/nope-{lang}")
        assert reply.status == 404 and reply.headers["content-type"].startswith("text/html")
        assert page.get_attribute("html", "lang") == lang
        assert page.is_visible("main.error-page h1") and page.is_visible('a[href="/"]')
        tour.state("page")  # axe: no serious violation (the JSON had two)
    finally:
        ctx.close()
    # Chromium's header, exactly: the page; clients asking for JSON (or anything) keep problem+json.
    assert _get(f"{base_url}/nope", CHROMIUM_ACCEPT) == (404, "text/html; charset=utf-8")
    for accept in ("application/json", "application/problem+json", "*/*",
                   "application/json, text/html;q=0.9", "application/signed-exchange;v=b3;q=0.7,*/*;q=0.8"):
        assert _get(f"{base_url}/nope", accept) == (404, "application/problem+json"), accept
    assert _get(f"{base_url}/v1/nope", CHROMIUM_ACCEPT) == (404, "application/problem+json")


# -- 1: midnight does not take the streak --------------------------------------------

TURNED = {"en": "a new day's puzzle is ready", "de": "Das Rätsel des neuen Tages ist da",
          "ru": "задача нового дня готова"}
ARCHIVE = {"en": "not in your streak", "de": "nicht in deiner Serie", "ru": "не в серию"}


@pytest.mark.parametrize("lang,size", one_of([("en", "phone"), ("de", "desktop"), ("ru", "phone")]))
def test_defect_1_a_day_begun_at_2358_and_finished_after_midnight_keeps_the_streak(browser, base_url, lang, size):
    """Opened at 23:58 UTC, finished at 00:00:25: the page says the day turned (not
    "Next puzzle in 23:59:40"), and the day counts in the streak (not "A day from
    the archive", streak 0)."""
    touch = size == "phone"
    day = daily.today()
    moves = daily.daily_json(day)["solution"]
    ctx = context(browser, lang, size, seen_how_to_play=True)
    page = ctx.new_page()
    tour = Tour(page, "newplayer-midnight", lang, size)
    try:
        page.clock.install(time=dt.datetime.combine(day, dt.time(23, 58), dt.UTC))
        page.goto(f"{base_url}/?lang={lang}")
        page.wait_for_selector(".robot")
        play(page, moves[:-1], touch)
        page.clock.fast_forward("02:25")  # 00:00:25 the next day
        page.wait_for_function("t => document.querySelector('#countdown').textContent.includes(t)", arg=TURNED[lang])
        assert page.is_visible('#turned a[href="/"]') and page.is_visible("#turned-still")  # still counts
        tour.state("turned")
        play(page, moves[-1:], touch)
        page.wait_for_selector("#result[open]", timeout=20_000)
        note = page.text_content("#result-note")
        assert ARCHIVE[lang] not in note and note
        assert TURNED[lang] in page.text_content("#result-countdown") and page.is_visible("#next")
        tour.state("solved-after-midnight")
        page.click("#result-close")
        assert page.text_content("#stats-figures div:nth-child(4) dd") == "1"  # the streak
        assert tour.errors == []
    finally:
        ctx.close()


def test_defect_1_a_day_opened_after_its_day_is_still_the_archive(browser, base_url):
    """Only a day begun on its day counts after midnight: yesterday's opened today does not."""
    yesterday = daily.today() - dt.timedelta(days=1)
    ctx, page = _fresh(browser, base_url, f"/?day={yesterday.isoformat()}")
    try:
        page.wait_for_selector(".robot")
        play(page, daily.daily_json(yesterday)["solution"], touch=False)
        page.wait_for_selector("#result[open]", timeout=20_000)
        assert ARCHIVE["en"] in page.text_content("#result-note")
        assert "Next puzzle in" in page.text_content("#result-countdown") and page.is_hidden("#turned")
    finally:
        ctx.close()


# -- 3: a shared or reloaded puzzle keeps its par --------------------------------------

@pytest.mark.parametrize("lang,size", one_of([("en", "desktop"), ("ru", "phone")], 1))
def test_defect_3_a_shared_link_and_a_reloaded_random_puzzle_keep_their_par(browser, base_url, lang, size):
    made = get_json(f"{base_url}/v1/puzzles/random?length=6&seed=newplayer-{lang}")
    assert get_json(f"{base_url}/v1/puzzles/{made['code']}")["optimal_length"] == 6
    ctx = context(browser, lang, size, seen_how_to_play=True)
    page = ctx.new_page()
    tour = Tour(page, "newplayer-par", lang, size)
    try:
        page.goto(f"{base_url}/p/{made['code']}?lang={lang}")  # a shared link
        page.wait_for_selector(".robot")
        assert PAR[lang] in page.text_content("#goal-text") and page.text_content("#best") == " / 6"
        tour.state("shared")
        page.goto(f"{base_url}/?length=5&lang={lang}")  # a random puzzle, then a reload
        page.wait_for_selector(".robot", timeout=30_000)
        assert "/p/" in page.url
        page.reload()
        page.wait_for_selector(".robot")
        assert page.text_content("#best") == " / 5"
        assert tour.errors == []
    finally:
        ctx.close()


# -- 4: Train's last hint says it unrates the attempt ----------------------------------

LAST_HINT_ASKED = {"en": "After it this puzzle is not rated", "de": "Danach wird dieses Rätsel nicht gewertet",
                   "ru": "После неё задача идёт без рейтинга"}
UNRATED_BY_HINT = {"en": "the last hint showed the first move", "de": "Der letzte Tipp hat den ersten Zug gezeigt",
                   "ru": "последняя подсказка показала первый ход"}


def _hint(page, touch: bool, number: int | None = None) -> None:
    """The next hint asked for (by its button, or H); waits until hint `number` reads so."""
    if touch:
        page.click("#hint")
    else:
        page.keyboard.press("h")
    if number is not None:
        page.wait_for_function("n => (document.querySelector('#hint-text').textContent.match(/\\d+/) || [])[0]"
                               " === String(n)", arg=number)


@pytest.mark.parametrize("lang,size", one_of([("en", "desktop"), ("de", "phone"), ("ru", "desktop")], 1))
def test_defect_4_trains_last_hint_says_before_and_after_that_it_unrates(browser, base_url, lang, size):
    touch = size == "phone"
    ctx = context(browser, lang, size, seen_how_to_play=True)
    page = ctx.new_page()
    tour = Tour(page, "newplayer-last-hint", lang, size)
    try:
        page.goto(f"{base_url}/?train=1&lang={lang}")
        page.wait_for_selector(".robot", timeout=30_000)
        code = page.get_attribute("#board", "data-code")
        _hint(page, touch, 1)
        _hint(page, touch, 2)
        _hint(page, touch)  # the last: the first move
        page.wait_for_selector("#ask[open]", timeout=5_000)  # asked before the first move is shown
        assert LAST_HINT_ASKED[lang] in page.text_content("#ask")
        tour.state("last-hint-asked")
        page.click("#ask-no")  # kept back: nothing shown, the attempt still rated
        assert page.locator(".arrow.hinted").count() == 0 and UNRATED_BY_HINT[lang] not in page.text_content("#rating")
        _hint(page, touch)
        page.wait_for_selector("#ask[open]", timeout=5_000)
        page.click("#ask-yes")
        page.wait_for_selector(".arrow.hinted")
        assert UNRATED_BY_HINT[lang] in page.text_content("#rating")  # said at once
        tour.state("last-hint-shown")
        play(page, moves_to_json(solve(Puzzle.from_code(code)).moves), touch)
        page.wait_for_selector("#result[open]", timeout=20_000)
        assert UNRATED_BY_HINT[lang] in page.text_content("#result-note")  # and why, on the card
        tour.state("unrated")
        assert tour.errors == []
    finally:
        ctx.close()


# -- 6: the board in words, the how-to, the first hint, the clock -----------------------

def _stops(spec: str) -> dict[int, list[str]]:
    """Each inner wall once, as the right or lower side of a cell, by row (1-based), in English."""
    board = real_board(spec).to_object()
    rows: dict[int, list[str]] = {}
    for x, y, side in board["walls"]:
        x, y, side = (x, y - 1, "S") if side == "N" else (x - 1, y, "E") if side == "W" else (x, y, side)
        if x < 0 or y < 0 or (side == "E" and x >= board["width"] - 1) or (side == "S" and y >= board["height"] - 1):
            continue
        rows.setdefault(y + 1, []).append(f"{'right of' if side == 'E' else 'below'} column {x + 1}")
    return rows


@pytest.mark.parametrize("lang,size", one_of([("en", "desktop"), ("ru", "phone")]))
def test_defect_6_the_board_in_words_names_every_wall(browser, base_url, lang, size):
    found = get_json(f"{base_url}/v1/daily")
    ctx = context(browser, lang, size, seen_how_to_play=True)
    page = ctx.new_page()
    tour = Tour(page, "newplayer-words", lang, size)
    try:
        page.goto(f"{base_url}/?lang={lang}")
        page.wait_for_selector(".robot")
        page.click("#board-words-box summary")
        lines = page.eval_on_selector_all("#board-words li", "els => els.map(e => e.textContent)")
        rows = _stops(found["puzzle"]["board"])
        robots, diagonals = len(found["puzzle"]["robots"]), len(real_board(found["puzzle"]["board"]).diagonals)
        # robots, the target, the edge and the centre, a line a row with walls, a line a diagonal
        assert len(lines) == robots + 1 + 2 + len(rows) + diagonals
        if lang == "en":
            for y, walls in rows.items():
                line = next(s for s in lines if s.startswith(f"Row {y}, walls "))
                assert all(w in line for w in walls) and line.count("column") == len(walls), (y, line)
        page.locator("#board-words-box").scroll_into_view_if_needed()
        tour.state("board-in-words")
        assert tour.errors == []
    finally:
        ctx.close()


def test_defect_6_the_how_to_names_only_what_the_board_has_and_the_clock_waits(browser, base_url):
    # No diagonal on the board, four robots, a chip of a colour as the target.
    plain = Puzzle.from_json({"board": "green-A,yellow-B,red-B,blue-B", "target": {"colour": "red", "symbol": "circle"},
                              "robots": {"red": [0, 0], "green": [15, 0], "blue": [0, 15], "yellow": [15, 15]}})
    assert real_board("green-A,yellow-B,red-B,blue-B").diagonals == ()
    ctx, page = _fresh(browser, base_url, f"/p/{plain.code()}", seen=False)
    try:
        page.wait_for_selector("#how[open] li")
        how = page.text_content("#how")
        assert "diagonal" not in how and "vortex" not in how and "keys 1–4" in how, how
        page.wait_for_timeout(2_500)
        assert page.text_content("#clock") == "0:00"  # the clock waits for the how-to to close
        page.click("#how button")
        page.wait_for_function("document.querySelector('#clock').textContent !== '0:00'", timeout=5_000)
    finally:
        ctx.close()
    # A board with diagonals, the vortex as the target and five robots: the how-to says so.
    p = Puzzle.from_json({"board": "green-D,yellow-D,red-D,blue-D", "target": {"symbol": "vortex"},
                          "robots": {"red": [0, 0], "green": [15, 0], "blue": [0, 15], "yellow": [15, 15],
                                     "black": [5, 10]}})
    ctx, page = _fresh(browser, base_url, f"/p/{p.code()}", lang="de", size="phone", seen=False)
    try:
        page.wait_for_selector("#how[open] li")
        how = page.text_content("#how")
        assert "Schräge" in how and "Wirbel" in how and "Tasten 1–5" in how, how
    finally:
        ctx.close()


@pytest.mark.parametrize("lang,first", one_of([("en", "Hint 1 of 3"), ("de", "Tipp 1 von 3"),
                                               ("ru", "Подсказка 1 из 3")], 1))
def test_defect_6_the_first_hint_is_hint_1(browser, base_url, lang, first):
    ctx, page = _fresh(browser, base_url, f"/?lang={lang}", lang=lang, size="phone")
    try:
        page.wait_for_selector(".robot")
        page.click("#hint")
        page.wait_for_selector("#hint-text:not(:empty)")
        assert page.text_content("#hint-text").startswith(first)
        page.click("#hint")
        page.wait_for_function("document.querySelector('#hint-text').textContent.match(/\\d+/)[0] === '2'")
    finally:
        ctx.close()


# -- 7: published days are shown with today's grade words --------------------------------

@pytest.mark.parametrize("lang,size", one_of([("en", "desktop"), ("ru", "phone")], 1))
def test_defect_7_published_days_read_todays_grade_words(browser, base_url, lang, size):
    """November 2026's days were published graded on the old scale (17 of 28 "extreme");
    they are shown relabelled on the players' scale, their puzzles unchanged."""
    days = [dt.date(2026, 11, d) for d in range(1, 29)]
    words = catalogue(lang)
    ctx = context(browser, lang, size, seen_how_to_play=True)
    page = ctx.new_page()
    tour = Tour(page, "newplayer-grades", lang, size)
    try:
        shown = {d: get_json(f"{base_url}/v1/daily/{d.isoformat()}") for d in days}
        for d, found in shown.items():
            calendar = daily.daily_json(d)
            assert found["code"] == calendar["code"]  # the puzzle stays as it was
            grade = grade_of(calendar["optimal_length"], calendar["difficulty"]["fewest_robots_moved"])
            assert found["difficulty"]["grade"] == grade, d
        assert sum(f["difficulty"]["grade"] == "extreme" for f in shown.values()) == 4  # the 17-20 move Sundays
        page.goto(f"{base_url}/?day=2026-11-05&lang={lang}")  # 11 moves: published "extreme"
        page.wait_for_selector(".robot")
        title = page.text_content("#title")
        assert words["grade.hard"] in title and words["grade.extreme"] not in title, title
        page.click("#archive-box summary")
        page.wait_for_selector('#archive li[data-date="2026-11-05"]')
        for d, found in shown.items():
            item = page.text_content(f'#archive li[data-date="{d.isoformat()}"]')
            assert item.rstrip().split(" · ")[3].startswith(words[f"grade.{found['difficulty']['grade']}"]), item
        page.locator("#archive-box").scroll_into_view_if_needed()
        tour.state("archive-relabelled")
        assert tour.errors == []
    finally:
        ctx.close()
