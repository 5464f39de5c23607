"""The report as a user sees it: Debian's Chromium (``make test`` installs it with apt) driven
by Playwright (the test extra), no browser downloaded.  Skipped only where no Chromium is
installed; every request the page makes is routed here and any that is not to the file itself
(``file:``) or inline (``data:``) is refused and reported."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()),
    None,
)
#: As root, headless Chromium needs --no-sandbox; the others keep it off the network.
ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class Opened:
    """A page opened from a report file, with what it said and asked for."""

    page: object
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL it asked for
    refused: list[str] = field(default_factory=list)  # those not file: or data:


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium installed (Debian: apt install chromium; make test does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def open_report(browser):
    """Open a report file in a fresh page; returns an :class:`Opened` once its script ran."""
    contexts = []

    def open_(path: Path, width: int = 1400, height: int = 1000) -> Opened:
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)
        page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: opened.errors.append(str(e)))

        page.on("request", lambda r: opened.requests.append(r.url))

        def route(r):
            url = r.request.url
            if url.startswith(("file:", "data:")):
                r.continue_()
            else:
                opened.refused.append(url)
                r.abort()

        page.route("**/*", route)
        page.goto(Path(path).resolve().as_uri())
        page.wait_for_selector("body[data-fx-ready]", state="attached")
        return opened

    yield open_
    for c in contexts:
        c.close()
