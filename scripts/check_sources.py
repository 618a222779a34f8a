"""Fail if any installed scigen-* distribution came from a package index instead of this tree.

tox installs each distribution and its scigen-* dependencies from the working tree; a resolver that
quietly took `scigen-core` from an index would test the wrong code (dagster's "no sibling from PyPI"
guard). Every scigen-* must have a PEP 610 direct_url.json pointing at a local path.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import distributions


def main() -> int:
    bad = []
    seen = []
    for dist in distributions():
        name = (dist.metadata["Name"] or "").lower()
        if not name.startswith("scigen"):
            continue
        seen.append(name)
        raw = dist.read_text("direct_url.json")
        url = json.loads(raw).get("url", "") if raw else ""
        if not url.startswith("file://"):
            bad.append(f"{name} {dist.version} was installed from an index, not from this working tree")
    print("scigen distributions from the working tree:", ", ".join(sorted(seen)) or "none")
    for line in bad:
        print("ERROR:", line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
