"""Browser tests: real Chromium, driven by Playwright, against a real server process.

``site_url`` starts ``manage.py runserver`` (tests/browser/settings.py: the embedded
default, pin rate limit raised) once per session on a free loopback
port, with its own temporary ``PINBOARD_VAR_DIR`` (control database, media) and
a 16-shard SQLite topology (``PINBOARD_TOPOLOGY``): the embedded default's 4096
shard files would take about 20 s to create.  Its log goes to
``test-artifacts/browser-server.log``.

``browser`` launches Debian's ``/usr/bin/chromium`` (Playwright never downloads
a browser here).  Without Chromium or the playwright module the tests are
skipped, except under ``CI=true``, where they fail.

``open_page()`` gives a page in a fresh browser context (its own cookies: one
per pinner) that records server errors, failed requests, script errors and
console errors (such as what the Content-Security-Policy blocked);
``shoot(page, "step")`` asserts none happened and that axe-core finds no serious
or critical accessibility violation on the page, then saves a full-page screenshot
as ``test-artifacts/screenshots/NN-step.png``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import unavailable
from toolkit.site_processes import DevServer, manage

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        Page,
        Playwright,
        Request,
        Response,
    )

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT = 30.0
#: axe-core's impacts that fail a page; minor and moderate ones are left to review.
FAILING_IMPACTS = {"serious", "critical"}
#: The picture's width once it has loaded and decoded (0 if it fails, or takes over 10 s):
#: a page's images may still be on their way when its HTML has arrived.
LOADED_WIDTH = """image => Promise.race([
  image.decode().then(() => image.naturalWidth, () => 0),
  new Promise(done => setTimeout(() => done(0), 10000)),
])"""


# -- the site -------------------------------------------------------------------


@pytest.fixture(scope="session")
def site_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the site's server: ``manage(site_env, ...)`` acts on its data."""
    var_dir = tmp_path_factory.mktemp("browser-site")
    topology = var_dir / "topology.json"
    topology.write_text(
        json.dumps(
            {
                "version": 1,
                "shard_count": 16,
                "hosts": {"db1": f"sqlite://{var_dir / 'shards'}"},
                "ranges": [{"range": [0, 15], "master": "db1"}],
                "open": [[0, 15]],
                "lookup_shards": 16,
            }
        )
    )
    # Only our PINBOARD_* settings: no Redis, memcached or broker from the caller's
    # environment, so the server runs on the embedded defaults.
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("PINBOARD_")}
    return {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "tests.browser.settings",
        "PINBOARD_VAR_DIR": str(var_dir),
        "PINBOARD_TOPOLOGY": str(topology),
        "PINBOARD_ALLOWED_HOSTS": "127.0.0.1",
        "PYTHONUNBUFFERED": "1",
    }


@contextlib.contextmanager
def serve(env: dict[str, str], log_name: str) -> Iterator[str]:
    """A pinboard server (``runserver``) on ``env``'s data: its base URL, trailing slash."""
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / log_name
    log.unlink(missing_ok=True)  # this run's output only
    server = DevServer(env, log).start()
    try:
        server.wait_ready(SERVER_START_TIMEOUT)
        yield server.url("/")
    finally:
        server.stop()


@pytest.fixture(scope="session")
def site_url(site_env: dict[str, str]) -> Iterator[str]:
    """The base URL (with a trailing slash) of a private pinboard server."""
    manage(site_env, "migrate", "--verbosity", "0")
    manage(site_env, "shardstore", "init")
    with serve(site_env, "browser-server.log") as url:
        yield url


@pytest.fixture(scope="session")
def operator_password(site_env: dict[str, str], site_url: str) -> str:
    """The staff login ``make run`` prints on a fresh install (``manage.py ensure_operator``)."""
    printed = manage(site_env, "ensure_operator")
    found = re.search(r"password: (\S+)", printed)
    assert found is not None, printed
    return found.group(1)


# -- the browser ----------------------------------------------------------------


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if importlib.util.find_spec("playwright") is None:
        unavailable(
            "Playwright",
            "the playwright module is not installed (pip install -r requirements-dev.txt)",
        )
    if not os.access(CHROMIUM, os.X_OK):
        unavailable("Chromium", f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()


# Every image on the page, made eager and awaited (a full-page screenshot does not
# scroll, so lazy images below the fold would stay blank); returns the broken ones.
_LOAD_IMAGES = """async () => {
  const images = [...document.images];
  for (const image of images) image.loading = "eager";
  const loaded = (image) => image.complete ? null : new Promise((done) => {
    image.addEventListener("load", done, { once: true });
    image.addEventListener("error", done, { once: true });
  });
  const timeout = new Promise((done) => setTimeout(done, 5000));
  await Promise.race([Promise.all(images.map(loaded)), timeout]);
  return images.filter((image) => !image.complete || image.naturalWidth === 0)
    .map((image) => "broken image " + image.currentSrc);
}"""


def on_console(message: ConsoleMessage, seen: list[str]) -> None:
    """Console errors are problems: a blocked script, style or image among them."""
    if message.type == "error" and not message.text.startswith("Failed to load resource"):
        seen.append(f"console error: {message.text}")


@pytest.fixture(scope="session")
def problems() -> dict[BrowserContext, list[str]]:
    """What went wrong in each browser context: HTTP errors, failed requests, script errors."""
    return {}


@pytest.fixture
def open_page(
    browser: Browser, site_url: str, problems: dict[BrowserContext, list[str]]
) -> Iterator[Callable[..., Page]]:
    """``open_page()``: a page in a new context (its own cookie jar) on the site;
    ``open_page(360, 740)`` one on a small phone's screen; ``base_url=`` on another server."""
    contexts: list[BrowserContext] = []

    def open_(width: int = 1280, height: int = 800, *, base_url: str = site_url) -> Page:
        context = browser.new_context(
            base_url=base_url, viewport={"width": width, "height": height}, locale="en-US"
        )
        context.set_default_timeout(10_000)
        seen = problems[context] = []

        def on_response(response: Response) -> None:
            # A refused form is a 4xx page, which the test checks; a broken image,
            # stylesheet or script is a problem, and so is any 5xx.
            request = response.request
            if response.status >= 500 or (
                response.status >= 400 and request.resource_type != "document"
            ):
                seen.append(f"HTTP {response.status} {request.method} {response.url}")

        def on_request_failed(request: Request) -> None:
            # Leaving a page aborts its pending requests: that is no failure.
            if request.failure != "net::ERR_ABORTED":
                seen.append(f"failed {request.method} {request.url}: {request.failure}")

        context.on("response", on_response)
        context.on("requestfailed", on_request_failed)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: seen.append(f"script error: {error}"))
        # Chromium reports what the Content-Security-Policy blocked as console errors.
        page.on("console", lambda message: on_console(message, seen))
        return page

    yield open_
    for context in contexts:
        context.close()
        del problems[context]


@pytest.fixture(scope="session")
def screenshot_numbers() -> Iterator[int]:
    """Numbers screenshots in the order they are taken, across the session."""
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)  # no stale pictures from an earlier run
    SCREENSHOTS.mkdir(parents=True)
    return itertools.count(1)


@pytest.fixture
def shoot(
    screenshot_numbers: Iterator[int], problems: dict[BrowserContext, list[str]]
) -> Callable[[Page, str], Path]:
    """``shoot(page, "signup")``: check the page loaded cleanly, then screenshot it whole."""

    def shoot_(page: Page, step: str) -> Path:
        page.wait_for_load_state("load")
        seen = problems[page.context] + page.evaluate(_LOAD_IMAGES) + accessibility(page)
        assert not seen, f"{step}: {page.url} has problems: {seen}"
        # From the top: a full-page screenshot of a scrolled page draws the sticky
        # header where the viewport was.
        page.evaluate("window.scrollTo(0, 0)")
        path = SCREENSHOTS / f"{next(screenshot_numbers):02d}-{step}.png"
        page.screenshot(path=path, full_page=True)
        return path

    return shoot_


def accessibility(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page, one line each."""
    from axe_playwright_python.sync_playwright import Axe  # with playwright (requirements-dev)

    violations = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: {[n['target'] for n in v['nodes']][:3]}"
        for v in violations
        if v["impact"] in FAILING_IMPACTS
    ]
