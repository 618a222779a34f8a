"""`scigen list` and every `--help` read the registry only: neither torch nor a system class is imported
(the time budget itself is measured in benchmarks/core/bench_cli_startup.py, not here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from scigen.core.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted(m for m in ("torch", "numpy", "rdkit", "pandas", "lightning") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
"""


@pytest.mark.parametrize("args", [["list"], ["--help"], ["placement", "--help"],
                                  ["placement", "diffusion", "--help"], ["molecules", "unigem", "--help"],
                                  ["graphs", "g2pt", "--help"], ["data", "list"],
                                  ["singlecell", "gim", "--help"],
                                  ["graphs", "sbgd", "--help"]])
def test_help_and_list_import_nothing_heavy(args):
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    heavy = out.stdout.strip().splitlines()[-1]
    assert heavy == "HEAVY:", (args, heavy, out.stderr[-500:])
    if args[-1] == "--help" and len(args) == 3:  # a targeted system lists its extra verbs too
        extra = {"diffusion": "place", "unigem": "predict", "g2pt": "finetune", "gim": "generate",
                 "sbgd": "generate"}[args[1]]
        assert extra in out.stdout, out.stdout
