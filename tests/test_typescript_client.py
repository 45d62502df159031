"""The TypeScript client (clients/typescript/), as its users get it.

From its folder: its node tests against a live server of the suite's (a real
Redis and worker), installed with `npm ci` from its lock file; and its types
are the ones openapi-typescript makes of today's openapi.yaml.

As a package: `npm pack` (which builds it), the tarball installed into a new
project, where Node runs the flows an integrator runs (ESM and CommonJS), tsc
holds the types to the contract, and esbuild bundles the main entry for the
browser, with no Node built-in, into a page on another origin that Chromium
opens.  One pack and one install serve the module (module-scoped fixtures)."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import shutil
import subprocess
import tarfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from service.app import create_app
from tests.helpers import served
from workers.webhooks import event_body, message_id, new_secret, signature

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "typescript"
INSTALLED = CLIENT / "test" / "installed"  # what the new project runs and compiles
NPM = shutil.which("npm")
NODE = shutil.which("node")
GENERATE = "openapi-typescript ../../openapi.yaml --default-non-nullable false -o src/schema.ts"
NPM_QUIET = ("--prefer-offline", "--no-audit", "--no-fund")

pytestmark = pytest.mark.skipif(NPM is None or NODE is None,
                                reason="needs Node.js and npm: `make browser` installs them")


def run(args: list[str], cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    """`args` run in `cwd`; a failure fails the test with what it printed."""
    done = subprocess.run(args, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} in {cwd}: {done.returncode}\n{done.stdout[-4000:]}" \
                                 f"\n{done.stderr[-4000:]}"
    return done


@contextmanager
def in_the_client() -> Iterator[Path]:
    """clients/typescript to this test process alone while it installs, packs or tests there:
    each test process that meets this module installs and packs in that one folder, and two
    `npm ci` at once emptied each other's node_modules (ENOTEMPTY, ETXTBSY)."""
    (ROOT / "build").mkdir(exist_ok=True)
    with open(ROOT / "build" / ".typescript-client.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield CLIENT
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def installed() -> Path:
    """clients/typescript with its node_modules: `npm ci` from package-lock.json when they are
    missing or older than the lock file (a dependency added since)."""
    stamp, lock = CLIENT / "node_modules" / ".package-lock.json", CLIENT / "package-lock.json"
    with in_the_client():
        if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
            run([NPM, "ci", *NPM_QUIET], CLIENT, timeout=600)
    return CLIENT


@pytest.fixture(scope="module")
def api(redis_url, celery_worker) -> Iterator[str]:
    """The API on the suite's Redis and worker, for the whole module: its base URL."""
    with served(create_app({"REDIS_URL": redis_url})) as base:
        yield base


@pytest.fixture(scope="module")
def tarball(installed, tmp_path_factory) -> Path:
    """`npm pack` of the client (its prepack script builds dist/) into a folder of its own."""
    out = tmp_path_factory.mktemp("pack")
    with in_the_client():  # its prepack script writes dist/ there
        packed = json.loads(run([NPM, "pack", "--json", "--pack-destination", str(out)], installed).stdout)
    return out / packed[0]["filename"]


@pytest.fixture(scope="module")
def project(tarball, tmp_path_factory) -> Path:
    """A new Node project (`npm init -y`, type module) that installed the tarball, as an integrator's would."""
    home = tmp_path_factory.mktemp("project")
    run([NPM, "init", "-y"], home)
    run([NPM, "pkg", "set", "type=module"], home)
    run([NPM, "install", *NPM_QUIET, str(tarball)], home, timeout=600)
    for name in ("flows.mjs", "flows.cjs", "main.js", "page.js", "index.html", "types.check.ts",
                 "require.check.cts"):
        shutil.copy(INSTALLED / name, home / name)
    return home


def signed_sample() -> dict:
    """A job.succeeded delivery as the service signs one."""
    secret, msg, now = new_secret(), message_id("job:sample"), int(time.time())
    body = event_body("job.succeeded", {"id": "sample", "kind": "pack", "state": "succeeded"})
    return {"secret": secret, "body": body,
            "headers": {"webhook-id": msg, "webhook-timestamp": str(now),
                        "webhook-signature": signature(secret, msg, now, body)}}


def test_the_typescript_client_against_a_live_server(installed, api):
    env = {"RICOCHET_BASE_URL": api, "RICOCHET_WEBHOOK_SAMPLE": json.dumps(signed_sample())}
    with in_the_client():
        done = subprocess.run([NPM, "test"], cwd=installed, env={**os.environ, **env}, capture_output=True,
                              text=True, timeout=600)
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert "# fail 0" in done.stdout and "# pass 10" in done.stdout


def test_the_generated_types_are_todays_openapi(installed, tmp_path):
    """src/schema.ts is what `npm run generate` makes of openapi.yaml now: regenerated and compared."""
    scripts = json.loads((CLIENT / "package.json").read_text())["scripts"]
    assert scripts["generate"] == GENERATE
    out = tmp_path / "schema.ts"
    command = GENERATE.replace("-o src/schema.ts", f"-o {out}").split()
    run([str(installed / "node_modules" / ".bin" / command[0]), *command[1:]], installed)
    assert out.read_text() == (CLIENT / "src" / "schema.ts").read_text(), \
        "clients/typescript/src/schema.ts is stale: run `npm run generate` in clients/typescript"


def test_the_tarball_holds_the_built_package_and_no_more(tarball):
    with tarfile.open(tarball) as packed:
        files = {name.removeprefix("package/") for name in packed.getnames()}
    for built in ("esm/index.js", "esm/index.d.ts", "esm/webhooks.js", "esm/webhooks.d.ts", "cjs/index.js",
                  "cjs/index.d.ts", "cjs/webhooks.js", "cjs/package.json"):
        assert f"dist/{built}" in files, f"dist/{built} is not in the tarball"
    assert not [f for f in files if f.startswith(("node_modules/", "test/", "dist/test/"))], sorted(files)
    assert tarball.stat().st_size < 300_000, tarball.stat().st_size


def test_the_installed_package_runs_the_flows_against_a_live_server(project, api):
    """Installed from the tarball into a new project: the daily, a solve, a verify as a player, the
    player's next puzzle (with its solution: the attempt recorded unrated), a pack waited for, a
    refusal, a webhook verified."""
    env = {"RICOCHET_BASE_URL": api, "RICOCHET_WEBHOOK_SAMPLE": json.dumps(signed_sample()),
           "RICOCHET_PLAYER": "ts-installed"}
    out = json.loads(run([NODE, "flows.mjs"], project, timeout=300, **env).stdout)
    daily = out["daily"]
    limits = out["limits"]  # every /v1 answer says its limits (RateLimit-Policy, RateLimit)
    assert {p["name"] for p in limits["policies"]} >= {left["name"] for left in limits["limits"]} != set(), limits
    assert out["solve"] == {"status": "optimal", "length": daily["optimal_length"],
                            "moves": daily["optimal_length"]}
    assert out["verify"]["solved"] is True and out["verify"]["optimal"] is True
    assert out["verify"]["attempt"] is not None  # the player's attempt was recorded
    nxt = out["next"]
    assert nxt["code"] != daily["code"] and nxt["solution"] == nxt["optimal_length"] >= 1, nxt
    assert nxt["solved"] is True and nxt["optimal"] is True and nxt["attempt"]["rated"] is False, nxt
    assert out["pack"]["count"] == 2 and out["pack"]["indexes"] == [0, 1]
    assert all(6 <= n <= 8 for n in out["pack"]["lengths"]), out["pack"]
    assert out["refusal"] == {"status": 404, "type": "/problems/not-found"}
    assert out["webhook"] == "job.succeeded" and out["tampered"] == "refused"

    cjs = json.loads(run([NODE, "flows.cjs"], project, **env).stdout)
    assert cjs == {"daily": daily["date"], "webhook": "job.succeeded"}


def test_the_types_carry_the_contract(project, installed):
    """tsc on files that use the installed package: `r.error.type` compiles (problem+json errors are
    Problems), and each `@ts-expect-error` line (a stray body key, an unknown path or parameter, a
    problem type the contract lacks) must fail to compile, or tsc reports the unused directive."""
    tsc = str(installed / "node_modules" / ".bin" / "tsc")
    # --skipLibCheck: our declarations were checked as the build emitted them; re-checking lib.dom.d.ts
    # and the rest of node_modules tripled the time for nothing the contract depends on.
    done = subprocess.run([tsc, "--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext",
                           "--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom",
                           "types.check.ts", "require.check.cts"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    expected = (INSTALLED / "types.check.ts").read_text().count("@ts-expect-error ")
    assert expected >= 6  # the check checks something


@pytest.fixture(scope="module")
def bundled(project, installed) -> Path:
    """esbuild bundles the installed package for the browser: the main entry alone (main.js) and the
    page (page.js, which adds the webhooks subpath), into site/ beside index.html."""
    site = project / "site"
    site.mkdir()
    shutil.copy(project / "index.html", site / "index.html")
    esbuild = str(installed / "node_modules" / ".bin" / "esbuild")
    run([esbuild, "main.js", "page.js", "--bundle", "--platform=browser", "--format=esm", "--outdir=site",
         "--entry-names=[name].bundle", "--metafile=meta.json", "--log-level=warning"], project)
    return project


def test_the_main_entry_bundles_for_the_browser_without_node_builtins(bundled):
    meta = json.loads((bundled / "meta.json").read_text())
    inputs = meta["inputs"]
    assert "node_modules/@ricochet/client/dist/esm/index.js" in inputs, sorted(inputs)
    assert any("openapi-fetch" in name for name in inputs), sorted(inputs)
    builtins = [(name, i["path"]) for name, found in inputs.items() for i in found.get("imports", [])
                if i["path"].startswith("node:") or i.get("external")]
    assert builtins == [], builtins
    main = meta["outputs"]["site/main.bundle.js"]
    assert main["imports"] == [], main["imports"]
    for bundle in ("main.bundle.js", "page.bundle.js"):
        text = (bundled / "site" / bundle).read_text()
        assert "node:" not in text and "require(" not in text, bundle


@pytest.fixture(scope="module")
def page_origin(bundled) -> Iterator[str]:
    """A second server, on another port than the API's (so another origin), serving the page and its bundle."""
    handler = functools.partial(Quiet, directory=str(bundled / "site"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def in_the_page(page_origin, api, browser) -> dict:
    """What the page found in Chromium: the daily, the headers CORS let it see, a webhook verified."""
    query = urllib.parse.urlencode({"api": api, "sample": json.dumps(signed_sample())})
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{page_origin}/index.html?{query}")
        page.wait_for_function("window.result !== undefined", timeout=30_000)
        result = page.evaluate("window.result")
    finally:
        page.close()
    assert errors == [], errors
    return result


def test_a_page_on_another_origin_fetches_the_daily_through_the_bundle(in_the_page, api, page_origin):
    assert "error" not in in_the_page, in_the_page.get("error")
    assert in_the_page["origin"] == page_origin != api
    with urllib.request.urlopen(f"{api}/v1/daily", timeout=30) as answer:
        daily = json.load(answer)
    assert in_the_page["daily"] == {"date": daily["date"], "code": daily["code"], "number": daily["number"]}
    assert in_the_page["webhook"] == "job.succeeded"  # the verifier on the page's WebCrypto


def exposed(api: str) -> set[str]:
    """The answer headers the API lets a page on another origin read (Access-Control-Expose-Headers)."""
    request = urllib.request.Request(f"{api}/v1/daily", headers={"Origin": "http://127.0.0.1:9"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        listed = answer.headers.get("Access-Control-Expose-Headers", "")
    return {name.strip().lower() for name in listed.split(",") if name.strip()}


def test_a_page_on_another_origin_reads_the_rate_limits(in_the_page, api):
    """RateLimit and RateLimit-Policy, read cross-origin and parsed by the bundled client."""
    if not {"ratelimit", "ratelimit-policy"} <= exposed(api):
        pytest.xfail("the API does not list RateLimit and RateLimit-Policy in Access-Control-Expose-Headers "
                     f"yet (it lists {sorted(exposed(api))}): the server side of issue 66")
    assert {"ratelimit", "ratelimit-policy"} <= set(in_the_page["seen"]), in_the_page["seen"]
    limits = in_the_page["limits"]
    assert limits["policies"] and limits["limits"], limits
    names = {p["name"] for p in limits["policies"]}
    for left in limits["limits"]:
        assert left["name"] in names, limits
        quota = next(p["quota"] for p in limits["policies"] if p["name"] == left["name"])
        assert 0 <= left["remaining"] <= quota, limits
