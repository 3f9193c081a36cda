"""Helpers for tests/test_site.py: building the site, serving it locally, finding Chromium.

Kept apart from the tests so that the tests read as a list of claims about the site.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SCREENSHOTS = ROOT / "build" / "screenshots"
PLOT_SCRIPT = DOCS / "scripts" / "plot_measurements.py"

#: Where Debian's packages put them (`apt-get install chromium chromium-driver`); PATH is searched too.
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
CHROMEDRIVER_CANDIDATES = ("/usr/bin/chromedriver", "chromedriver")

#: Flags for a headless Chromium that runs as root in a container and talks to nothing but 127.0.0.1.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)


def build_site(out_dir: Path, config_file: str = "mkdocs.yml", root: Path = ROOT) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the checkout at ``root`` into ``out_dir``; returns the finished process
    (check its returncode). ``config_file`` is mkdocs.yml (the learner's site) or mkdocs-instructor.yml."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", config_file, "--site-dir", str(out_dir)],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )


def _which(candidates: tuple[str, ...]) -> str | None:
    for name in candidates:
        found = shutil.which(name) if not os.path.isabs(name) else (name if os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


def find_chromium() -> tuple[str | None, str | None, str]:
    """(browser path, driver path, reason) — reason says what is missing when either is None."""
    browser, driver = _which(CHROMIUM_CANDIDATES), _which(CHROMEDRIVER_CANDIDATES)
    missing = [what for what, path in (("chromium", browser), ("chromedriver", driver)) if path is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    reason = ""
    if missing:
        reason = (f"{' and '.join(missing)} not installed: apt-get install -y chromium chromium-driver; "
                  "pip install selenium (or pip install -e '.[docs]')")
    return browser, driver, reason


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass

    def do_GET(self):
        body = self.server.replacements.get(self.path.split("?")[0])
        if body is None:
            return super().do_GET()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serve(directory: Path, replacements: dict[str, bytes] | None = None):
    """Serve ``directory`` on 127.0.0.1 (a free port) in a thread; yields the base URL. ``replacements``
    maps a path (``/search/search_index.json``) to the bytes served for it instead of the file's, as long as
    the mapping holds it (the caller may change it while the server runs)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.replacements = {} if replacements is None else replacements
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def start_chromium(browser: str, driver: str, profile_dir: Path):
    """A Selenium WebDriver for headless Chromium with a fresh profile. No Selenium Manager, no network."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile_dir}")
    service = Service(executable_path=driver)
    return webdriver.Chrome(service=service, options=options)


def nav_pages(nav) -> list[str]:
    """Every page path in a MkDocs nav (nested lists of dicts and strings), in order."""
    pages: list[str] = []
    if isinstance(nav, str):
        pages.append(nav)
    elif isinstance(nav, list):
        for item in nav:
            pages.extend(nav_pages(item))
    elif isinstance(nav, dict):
        for value in nav.values():
            pages.extend(nav_pages(value))
    return pages


def load_nav(config_file: str = "mkdocs.yml") -> list:
    """The nav the site has: the config read through MkDocs itself (it understands the `!relative` tag
    and `INHERIT`), then completed by its hooks (docs/scripts/nav_hook.py adds the exercise pages, and
    in the instructor's edition the solution and reference pages)."""
    from mkdocs.config import load_config

    config = load_config(str(ROOT / config_file))
    for hook in config["hooks"].values():
        if hasattr(hook, "on_config"):
            config = hook.on_config(config) or config
    return config["nav"]


def run_plot_script(measurements, out):
    """docs/scripts/plot_measurements.py run in this process on ``measurements`` (None: the committed
    files), drawing into ``out``: the module, with what it drew point by point."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("plot_measurements_under_test", PLOT_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        args = ["--out", str(out)] + (["--measurements", str(measurements)] if measurements else [])
        assert module.main(args) == 0
    finally:
        sys.modules.pop(spec.name, None)
    return module
