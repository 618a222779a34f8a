"""Peak resident set size of a child process: the memory test of data larger than memory.

:func:`child_peak_rss` runs ``code`` in a fresh Python (one torch thread, this environment) and returns
its ``ru_maxrss`` in MiB, read by the child itself after ``code`` ran (Linux reports KiB). The data are
written by the parent beforehand, so only reading and training count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_TAIL = """
import resource as _r, json as _j
print("RSS_JSON " + _j.dumps({"peak_mib": _r.getrusage(_r.RUSAGE_SELF).ru_maxrss / 1024.0, "result": globals().get("RESULT")}))
"""


def child_peak_rss(code: str, *, timeout: float = 300.0) -> tuple[float, object]:
    """``(peak RSS in MiB, the child's RESULT variable)`` of running ``code`` in a subprocess."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    src = "import torch\ntorch.set_num_threads(1)\n" + textwrap.dedent(code) + _TAIL
    proc = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RSS_JSON ")][-1]
    out = json.loads(line[len("RSS_JSON "):])
    return float(out["peak_mib"]), out["result"]
