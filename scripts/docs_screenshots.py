"""Look at the built site in a real browser: headless Chromium (Debian's chromium + chromium-driver, through
selenium) opens the landing page, one tutorial, one API page and the gallery over a local HTTP server,
asserts that each page rendered (its title is present, every <img> loaded with naturalWidth > 0) and that
the browser console logged no error (SEVERE entries), and saves a screenshot of each under
docs/_build/screenshots/.

    python scripts/docs_screenshots.py [docs/_build/html]
"""

from __future__ import annotations

import functools
import http.server
import shutil
import sys
import threading
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

PAGES = [  # (path in the site, expected title text, screenshot name)
    ("index.html", "scigen", "landing"),
    ("tutorials/nowcast.html", "Nowcast", "tutorial-nowcast"),
    ("api/generated/scigen.core.samplers.sample.html", "scigen.core.samplers.sample", "api-samplers-sample"),
    ("gallery.html", "Gallery", "gallery"),
]


def find(*names: str) -> str:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    for path in ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromedriver"):
        if any(n in path for n in names) and Path(path).exists():
            return path
    raise SystemExit(f"none of {names} found: apt-get install -y chromium chromium-driver")


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def main(root: Path) -> int:
    root = root.resolve()
    out = root.parent / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    server, port = serve(root)
    options = webdriver.ChromeOptions()
    options.binary_location = find("chromium", "chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1000", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(find("chromedriver")), options=options)
    failures = []
    try:
        for path, title, name in PAGES:
            driver.get(f"http://127.0.0.1:{port}/{path}")
            WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
            WebDriverWait(driver, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, "article h1")))
            h1 = driver.find_element(By.CSS_SELECTOR, "article h1").text
            images = driver.execute_script(
                "return Array.from(document.images).map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth])")
            bad = [src for src, complete, width in images if not complete or not width]
            errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
            shot = out / f"{name}.png"
            # the whole page, not just the first screen
            height = driver.execute_script("return Math.min(document.body.scrollHeight, 6000)")
            driver.set_window_size(1400, max(1000, height))
            driver.save_screenshot(str(shot))
            driver.set_window_size(1400, 1000)
            status = "ok" if title in h1 and not bad and not errors else "FAIL"
            print(f"[screenshots] {status} {path}: title {h1!r}, {len(images)} images ({len(bad)} not loaded), "
                  f"{len(errors)} console errors -> {shot.relative_to(root.parent.parent.parent)}")
            if title not in h1:
                failures.append(f"{path}: title {h1!r} does not contain {title!r}")
            failures += [f"{path}: image not loaded: {src}" for src in bad]
            failures += [f"{path}: console error: {msg}" for msg in errors]
            if name == "gallery" and len(images) < 10:
                failures.append(f"{path}: only {len(images)} images (every demo figure expected)")
            if name.startswith("tutorial") and not images:
                failures.append(f"{path}: no figure (the executed tutorial draws one)")
    finally:
        driver.quit()
        server.shutdown()
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/_build/html")))
