"""Fixtures for the real-browser test: a private JupyterLab and a headless Chromium page.

Without Chromium (or the playwright client) the test skips locally with the reason and how to fix it; under CI
(``CI`` set) it fails instead, so a broken CI image cannot turn the browser test into a silent skip.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lab_harness import LabServer, start_lab

CHROMIUM = Path(os.environ.get("AGENTMEM_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
DOCS = Path(__file__).resolve().parents[2] / "docs"  # the README's pictures (see readme_picture)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def _missing() -> str | None:
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        return (f"Chromium not found at {CHROMIUM}: run scripts/install_browser.sh (apt-get install chromium), "
                "or point AGENTMEM_CHROMIUM at a Chromium binary")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python client is not installed: run scripts/install_browser.sh (pip install playwright)"
    return None


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    """The Chromium binary; skips (locally) or fails (under CI) when the browser tooling is missing."""
    why = _missing()
    if why:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"CI is set, so the browser test must run, but: {why}", pytrace=False)
        pytest.skip(why)
    return CHROMIUM


@pytest.fixture
def artifacts() -> Path:
    """``test-artifacts/browser/`` (gitignored): screenshots and the JupyterLab log."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def readme_picture(artifacts: Path) -> Callable[[str], Path]:
    """Where a picture the README shows is saved: ``docs/NAME`` when ``AGENTMEM_REFRESH_DOCS=1`` asks for new ones,
    else ``test-artifacts/browser/NAME`` — a plain test run must not rewrite tracked files (every run changed the
    README's PNGs by a few pixels, so a clean checkout was dirty after ``make test``)."""
    refresh = os.environ.get("AGENTMEM_REFRESH_DOCS", "").strip().lower() not in ("", "0", "false", "no")
    folder = DOCS if refresh else artifacts
    folder.mkdir(parents=True, exist_ok=True)
    return lambda name: folder / name


@pytest.fixture
def lab_root(tmp_path: Path) -> Path:
    """The folder JupyterLab serves (the notebook and its ``memory/`` go here)."""
    root = tmp_path / "root"
    root.mkdir()
    return root


@pytest.fixture
def lab(chromium_path: Path, tmp_path: Path, lab_root: Path, artifacts: Path) -> Iterator[LabServer]:
    """A JupyterLab on 127.0.0.1 with private Jupyter folders; always stopped by pid, its log kept as an artifact."""
    server = start_lab(tmp_path / "jupyter", lab_root)
    try:
        yield server
    finally:
        server.stop()
        shutil.copyfile(server.log_path, artifacts / "jupyter-lab.log")


@pytest.fixture
def page(chromium_path: Path, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A headless Chromium page (1400×1000); a failing test leaves ``failure.png`` behind."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium_path), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(30_000)
            yield page
            report = getattr(request.node, "rep_call", None)
            if report is not None and report.failed:
                page.screenshot(path=str(artifacts / "failure.png"), full_page=True)
        finally:
            browser.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    # keep the call-phase report on the item, so the page fixture knows whether to take a failure screenshot
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report
