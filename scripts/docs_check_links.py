"""Check every internal link of the built site: each ``href`` / ``src`` that is not external must name a
file of the build, and a ``#fragment`` must be an ``id`` of that page. External links (http, mailto, ...)
are not checked: the build is offline.

    python scripts/docs_check_links.py docs/_build/html
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if name in ("href", "src") and value is not None and tag != "base":
                self.links.append((tag, value))


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def main(root: Path) -> int:
    root = root.resolve()
    # the site's pages; _static/ holds the theme's own files (e.g. Jinja templates copied as they are)
    pages = {p: parse(p) for p in root.rglob("*.html") if "_static" not in p.relative_to(root).parts}
    if not pages:
        print(f"no HTML pages under {root}", file=sys.stderr)
        return 2
    broken = []
    checked = 0
    for path, page in pages.items():
        for tag, link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            checked += 1
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or root not in target.parents and target != root:
                broken.append(f"{path.relative_to(root)}: <{tag}> {link} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(root)}: <{tag}> {link} (no id '{parts.fragment}')")
    for line in broken:
        print(line, file=sys.stderr)
    print(f"[docs] internal links: {checked} checked in {len(pages)} pages, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/_build/html")))
