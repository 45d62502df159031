"""The pages' languages: every catalogue holds every string the pages and their
scripts name, with the same placeholders; the server answers in the language
asked for (?lang=, then the remembered cookie, then Accept-Language)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from service.app import create_app
from service.i18n import CATALOGUES, LANGUAGES

STATIC = Path(__file__).resolve().parents[1] / "service" / "static"


def _load(lang: str) -> dict:
    return json.loads((CATALOGUES / f"{lang}.json").read_text(encoding="utf-8"))


def _placeholders(value) -> set[str]:
    forms = value.values() if isinstance(value, dict) else [value]
    return {tuple(sorted(set(re.findall(r"\{(\w+)\}", f)) | set(re.findall(r"<(\w+)>", f)))) for f in forms}


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_each_catalogue_says_everything_english_says(lang):
    english, theirs = _load("en"), _load(lang)
    assert set(theirs) == set(english)
    for key, value in english.items():
        assert _placeholders(theirs[key]) == _placeholders(value), key
        if isinstance(value, dict):
            assert "other" in theirs[key], key


def test_every_string_the_pages_name_is_in_the_catalogue():
    english = _load("en")
    named = set()
    for page in STATIC.glob("*.html"):
        named |= set(re.findall(r"\{\{([a-z0-9_.]+)\}\}", page.read_text(encoding="utf-8")))
    for script in STATIC.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        named |= set(re.findall(r"\bt\(\"([a-z0-9_.]+)\"", text))
        for prefix in re.findall(r"\bt\(`([a-z0-9_.]+)\.\$\{", text):  # t(`colour.${c}`): the prefix is held
            assert any(k.startswith(prefix + ".") for k in english), prefix
    assert named and named <= set(english), sorted(named - set(english))


@pytest.fixture(scope="module")
def client():
    return create_app({"RATE_LIMITS_ENABLED": False}).test_client()


@pytest.mark.parametrize("path", ["/", "/together", "/r/someroom", "/p/nothing"])
@pytest.mark.parametrize("accept,lang", [("de-DE,de;q=0.9,en;q=0.5", "de"), ("ru", "ru"), ("fr, en;q=0.1", "en"),
                                         ("ja", "en"), ("", "en")])
def test_pages_answer_in_the_readers_language(client, path, accept, lang):
    r = client.get(path, headers={"Accept-Language": accept} if accept else {})
    assert r.status_code == 200
    assert f'<html lang="{lang}">' in r.text and r.headers["Content-Language"] == lang
    assert "Accept-Language" in r.headers["Vary"]
    assert "{{" not in r.text
    strings = json.loads(re.search(r'<script id="strings" type="application/json">(.*?)</script>', r.text).group(1))
    assert strings["lang"] == lang and strings["strings"]["page.daily"] == _load(lang)["page.daily"]


def test_a_choice_on_the_page_is_remembered(client):
    r = client.get("/?lang=ru", headers={"Accept-Language": "de"})
    assert '<html lang="ru">' in r.text and "lang=ru" in r.headers["Set-Cookie"]
    client.set_cookie("lang", "ru")
    assert '<html lang="ru">' in client.get("/together", headers={"Accept-Language": "de"}).text
    client.set_cookie("lang", "xx")  # a cookie of no known language is ignored
    assert '<html lang="de">' in client.get("/together", headers={"Accept-Language": "de"}).text
    assert client.get("/?lang=xx").status_code == 200
