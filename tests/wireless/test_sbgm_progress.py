"""CSGMM's EM honours ``fit(progress=...)`` (it was accepted and silently ignored, issue 37): a bar over the EM
iterations on a terminal with ``progress=True`` / ``None``, none with ``progress=False``."""

from __future__ import annotations

import sys

SCRIPT = r"""
import sys
from scigen.wireless import SBGM
data = SBGM.default_data()
for flag in (False, True):
    print(f"=== progress={flag}", flush=True)
    SBGM(SBGM.Config.preset("tiny", em_tol=0.0)).fit(data, max_steps=40, progress=flag)
print("=== done", flush=True)
"""


def test_em_draws_its_bar_only_when_asked(run_under_a_terminal):
    code, text = run_under_a_terminal([sys.executable, "-c", SCRIPT], timeout=300)
    assert code == 0, text[-2000:]
    off, on = text.split("=== progress=False")[1].split("=== progress=True")
    assert "CSGMM EM" not in off
    assert "CSGMM EM" in on.split("=== done")[0]
