"""What the pages' browser tests share: a tour of a page in one language at one
size, which at each state it reaches takes a screenshot (build/screenshots/),
checks that no id is used twice and, in English and Russian, runs axe-core
(no serious or critical violation, and WCAG 2.2's target size); and playing
moves by touch or by keys."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from service.i18n import catalogue

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "build" / "screenshots"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
LOCALES = {"en": "en-GB", "de": "de-DE", "ru": "ru-RU"}
SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
KEYS = {"N": "ArrowUp", "E": "ArrowRight", "S": "ArrowDown", "W": "ArrowLeft"}
ROBOT_KEYS = {"red": "1", "green": "2", "blue": "3", "yellow": "4", "black": "5"}  # on every page alike
AXED = ("en", "ru")


def tours(turn: int) -> list[tuple[str, str]]:
    """The (language, size) pairs a page's tour plays in: all six where
    RICOCHET_EVERY_TOUR is set (screenshots of every state in every language at
    both sizes, for a review of the pages), else two, a phone and a desktop in two
    languages, `turn` (0, 1 or 2) choosing which: the pages' tours between them
    play all six, and each page plays at least one language other than English,
    where English left on the page shows (a tour costs 10-15 s of a core in Chromium)."""
    every = [(lang, size) for lang in LOCALES for size in SIZES]
    if every_tour():
        return every
    return [every[2 * turn % 6], every[(2 * turn + 3) % 6]]


def one_of(cases: list, turn: int = 0) -> list:
    """Cases of a page check that differ only in language or size: the suite plays
    the `turn`-th (wrapping), RICOCHET_EVERY_TOUR every one.  Each Chromium case costs
    3-15 s of a core, and the suite's other cases play the other languages and sizes."""
    return list(cases) if every_tour() else [cases[turn % len(cases)]]


def every_tour() -> bool:
    """Whether the page tests play every tour they have (RICOCHET_EVERY_TOUR set), not the suite's share."""
    return bool(os.environ.get("RICOCHET_EVERY_TOUR"))


def context(browser, lang: str, size: str, *, seen_how_to_play: bool = False):
    """A fresh browser profile in `lang` at `size` (a phone has touch)."""
    phone = size == "phone"
    # bypass_csp: Playwright's wait_for_function polls with eval, which the pages' CSP refuses;
    # tests/test_security.py loads the pages under their policy and checks no violation.
    ctx = browser.new_context(viewport=SIZES[size], locale=LOCALES[lang], has_touch=phone, is_mobile=phone,
                              bypass_csp=True)
    if seen_how_to_play:
        ctx.add_init_script("localStorage.setItem('rr-how-to-play-v1', '{\"solo\": true, \"table\": true}')")
    return ctx


class Tour:
    """One page's states in one language at one size."""

    def __init__(self, page, name: str, lang: str, size: str) -> None:
        self.page, self.name, self.lang, self.size = page, name, lang, size
        self.errors: list[str] = []
        self.states: list[str] = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        SHOTS.mkdir(parents=True, exist_ok=True)

    def state(self, state: str) -> None:
        """A state the tour reached: shot, ids checked, axe run (en, ru)."""
        page = self.page
        page.wait_for_timeout(150)  # a dialog's or a move's last frame
        page.screenshot(path=str(SHOTS / f"{self.name}-{state}-{self.lang}-{self.size}.png"))
        assert duplicate_ids(page) == [], state
        wide = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert wide <= 0, (state, f"{wide} px wider than the screen")
        if self.lang in AXED:
            found = axe(page)
            assert found == [], (state, found)
        self.states.append(state)

    def goto(self, path: str) -> None:
        base = self.page.url.split("/", 3)[:3]
        self.page.goto("/".join(base) + path if path.startswith("/") else path)


def duplicate_ids(page) -> list[str]:
    return page.evaluate("""() => {
        const seen = new Map();
        for (const el of document.querySelectorAll('[id]')) seen.set(el.id, (seen.get(el.id) || 0) + 1);
        return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
    }""")


def axe(page) -> list[dict]:
    """axe-core's serious and critical violations, target size included."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        # Run as the devtools run it: the page's CSP admits no inline script.
        page.evaluate(AXE.read_text(encoding="utf-8") + "\n;true")
    found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations'],
            rules: {'target-size': {enabled: true}}})).violations
        .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))}))""")
    return [v for v in found if v["impact"] in ("serious", "critical") or v["id"] == "target-size"]


def play(page, moves: list[dict], touch: bool) -> None:
    """Moves made as a person would: by touch, a robot's button then an arrow
    button; by keys, the robot's key then an arrow key."""
    keyboard = page.keyboard if hasattr(page, "keyboard") else page.page.keyboard  # a page, or a frame in one
    if not touch and not hasattr(page, "keyboard"):
        page.click("#count")  # the keys go to the frame
    for m in moves:
        if touch:
            page.tap(f'#robots [data-colour="{m["robot"]}"]')
            page.tap(f'#arrows .arrow-{m["direction"]}')
        else:
            keyboard.press(ROBOT_KEYS[m["robot"]])
            keyboard.press(KEYS[m["direction"]])
        page.wait_for_timeout(40)


def press(page, selector: str, touch: bool) -> None:
    """A button pressed as a person would: tapped on a phone, by Enter on a desktop (focused first)."""
    if touch:
        page.tap(selector)
    else:
        page.focus(selector)
        page.keyboard.press("Enter")


def in_viewport(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    view = page.viewport_size
    return box is not None and box["y"] >= 0 and box["x"] >= 0 and box["y"] + box["height"] <= view["height"] \
        and box["x"] + box["width"] <= view["width"]


def english_left(page, lang: str) -> list[str]:
    """English phrases from the English catalogue (where the page's language says
    otherwise) found in the page's text, its labels or its title."""
    text = page.evaluate("""() => {
        const parts = [document.title, document.body.innerText];
        for (const el of document.querySelectorAll('body [aria-label], body [alt], body [title], body [placeholder]')) {
            for (const a of ['aria-label', 'alt', 'title', 'placeholder']) parts.push(el.getAttribute(a) || '');
        }
        return parts.join('\\n');
    }""")
    for name in ("English", "Deutsch", "Русский"):  # the switcher names each language in itself
        text = text.replace(name, "")
    english, theirs = catalogue("en"), json.dumps(catalogue(lang), ensure_ascii=False)
    found = []
    for value in english.values():
        for form in (value.values() if isinstance(value, dict) else [value]):
            for phrase in re.split(r"\{\w+\}|<[^>]+>", form):
                phrase = phrase.strip(" .,:;()—–-·!?")
                if len(phrase) >= 4 and re.search(r"[A-Za-z]{3}", phrase) and phrase not in theirs \
                        and phrase in text:
                    found.append(phrase)
    return found
