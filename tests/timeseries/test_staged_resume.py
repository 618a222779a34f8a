"""Staged fits of NsDiff and D3U survive ``kill -9`` in their second stage: ``resume=True`` ends at the weights
of the uninterrupted run bit for bit (issue 32). Also: the NsDiff ``parts="staged"`` + ``checkpoint_dir`` fit
that raised ``CheckpointError`` at stage 2, and D3U's deprecated budget name."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from scigen.timeseries import D3U, NsDiff, NsDiffConfig
from scigen.timeseries.data import synthetic_nonstationary

D3U_TINY = dict(context_length=16, horizon=5, f_d_model=8, f_n_heads=2, f_e_layers=1, f_d_ff=16, d_model=8, n_heads=2,
                t_embed_dim=16, n_samples=8, steps=5)
CASES = {
    # system, config, fit keywords, the second stage's folder
    "nsdiff": ("NsDiff", {"preset": "tiny"}, {"parts": "staged"}, "joint"),
    "d3u": ("D3U", {"config": D3U_TINY}, {}, "residual"),
}
STEPS = 10

CHILD = r"""
import json, sys, time
import torch
torch.set_num_threads(int(sys.argv[3]))
from lightning.pytorch.callbacks import Callback
from scigen.timeseries import D3U, NsDiff, NsDiffConfig
from scigen.timeseries.data import synthetic_nonstationary

class Slow(Callback):  # gives the parent time to kill the run between two steps of the second stage
    def on_train_batch_end(self, *a):
        time.sleep(0.4)

case = json.loads(sys.argv[1])
df = synthetic_nonstationary(300, 2, seed=0)
cls = {"NsDiff": NsDiff, "D3U": D3U}[case["system"]]
cfg = NsDiffConfig.preset(case["preset"]) if "preset" in case else case["config"]
train = {"checkpoint_every": 1, "progress": False, "logger": None}
model = cls(cfg, train=train) if "preset" in case else cls(**cfg, train=train)
model.fit(df, max_steps=case["steps"], checkpoint_dir=sys.argv[2], callbacks=[Slow()], **case["fit"])
print("FINISHED")
"""


def _model(name: str, **train):
    system, cfg, _, _ = CASES[name]
    train = {"checkpoint_every": 1, "progress": False, "logger": None, **train}
    if system == "NsDiff":
        return NsDiff(NsDiffConfig.preset(cfg["preset"]), train=train)
    return D3U(**cfg["config"], train=train)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kill_9_in_the_second_stage_then_resume_gives_the_uninterrupted_weights(name, tmp_path):
    system, cfg, fit_kw, second = CASES[name]
    df = synthetic_nonstationary(300, 2, seed=0)
    full = _model(name).fit(df, max_steps=STEPS, **fit_kw)

    ck = tmp_path / "ck"
    case = json.dumps({"system": system, **cfg, "fit": fit_kw, "steps": STEPS})
    proc = subprocess.Popen([sys.executable, "-c", CHILD, case, str(ck), str(torch.get_num_threads())],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None and not (ck / second / "last.ckpt").exists():
        time.sleep(0.01)
    alive = proc.poll() is None
    os.kill(proc.pid, signal.SIGKILL)
    out, err = proc.communicate()
    assert alive, (out.decode()[-500:], err.decode()[-2000:])  # killed, not finished or crashed
    assert proc.returncode == -signal.SIGKILL
    first = next(p.name for p in ck.iterdir() if p.is_dir() and p.name != second)
    assert (ck / first / "stage.json").exists()  # the first stage had finished ...
    assert (ck / second / "last.ckpt").exists() and not (ck / second / "stage.json").exists()  # ... the second not
    step = torch.load(ck / second / "last.ckpt", weights_only=True)["global_step"]
    assert 0 < step < full.metadata["stage_steps"][second]  # killed inside the second stage

    resumed = _model(name, resume=True).fit(df, max_steps=STEPS, checkpoint_dir=str(ck), **fit_kw)
    assert resumed.history.stages == full.history.stages
    assert resumed.history.losses == full.history.losses
    own, ref = resumed.network.state_dict(), full.network.state_dict()
    assert own.keys() == ref.keys()
    for k, v in ref.items():
        assert torch.equal(own[k], v), k
    assert json.loads((ck / second / "stage.json").read_text())["steps"] == full.metadata["stage_steps"][second]


def test_nsdiff_staged_fit_with_a_checkpoint_folder(tmp_path):
    """Issue 32: ``fit(max_steps=4, parts="staged", checkpoint_dir=d)`` raised CheckpointError at stage 2 (both
    stages checkpointed into ``d``). Now each stage has its folder, and the split is 1 + 3 steps."""
    df = synthetic_nonstationary(300, 2, seed=0)
    m = NsDiff(NsDiffConfig.preset("tiny")).fit(df, max_steps=4, parts="staged", checkpoint_dir=str(tmp_path),
                                                progress=False, logger=None)
    assert m.history.stages == [("f", 0, 1), ("joint", 1, 4)] and m.metadata["stage_steps"] == {"f": 1, "joint": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f", "joint", "stages.json"]
    assert all((tmp_path / s / "last.ckpt").exists() for s in ("f", "joint"))


def test_d3u_forecaster_share_is_deprecated_for_stage_shares():
    with pytest.warns(DeprecationWarning, match=r"D3UConfig.forecaster_share is deprecated; use "
                                                r"stage_shares=\{'forecaster': 0.3\}"):
        cfg = D3U.Config(forecaster_share=0.3)
    assert cfg.stage_shares == {"forecaster": 0.3}
    with pytest.warns(DeprecationWarning, match=r"stage_shares\['forecaster'\]"):
        assert cfg.forecaster_share == 0.3
    with pytest.warns(DeprecationWarning, match="NsDiffConfig.stage_shares"):
        from scigen.timeseries.nsdiff.training import STAGE_SHARES
    assert STAGE_SHARES == NsDiffConfig().stage_shares == {"f": 0.2}
