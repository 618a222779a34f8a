"""Training state belongs to the ``fit`` call, not the model, and resumes exactly (issue 32, item 5).

MMSFM's marginals, Inverse Flow's time grid and GIM's context statistics reach the loss through the call
(a collate into prepared batches, a closure), so ``training_loss`` runs outside ``fit`` and nothing is
left on the model.

The EM warm-up counter lives in the loss ``fit`` hands to the engine and is saved in every checkpoint
(``loss_state``), so a run killed with SIGKILL after a checkpoint and resumed equals the uninterrupted
run bit for bit. Before, the counter was an attribute of the model that a resume restarted at 0: with
``training="map", em_warmup=0.5`` the warm-up replayed and 11 of 14 saved tensors differed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import torch

from scigen.singlecell.gim.system import GIM

STEPS, EVERY, KILL_AT = 12, 2, 4  # warm-up: the first 6 steps; killed inside it, after the step-4 checkpoint
SETTINGS = {"training": "map", "em_warmup": 0.5}

_TRAIN_UNTIL_KILLED = r"""
import sys, time, warnings
warnings.filterwarnings("ignore")
from lightning.pytorch.callbacks import Callback
from scigen.singlecell.gim.system import GIM

class HangAfterCheckpoint(Callback):  # before step k+1: step k's checkpoint is written by then
    def on_train_batch_start(self, trainer, *args):
        if trainer.global_step == int(sys.argv[2]):
            print("CHECKPOINTED", flush=True)
            time.sleep(600)

GIM(GIM.Config.preset("tiny"), training="map", em_warmup=0.5).fit(
    GIM.default_data(quick=True), max_steps=int(sys.argv[3]), checkpoint_dir=sys.argv[1],
    checkpoint_every=int(sys.argv[4]), progress=False, logger=None, callbacks=[HangAfterCheckpoint()])
"""


def _kill_after_checkpoint(ckpt_dir, at: int) -> None:
    """Train in a subprocess, SIGKILL it once the checkpoint of step ``at`` is written."""
    proc = subprocess.Popen([sys.executable, "-c", _TRAIN_UNTIL_KILLED, str(ckpt_dir), str(at), str(STEPS), str(EVERY)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "CHECKPOINTED", f"the training subprocess ended early (rc {proc.poll()})"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_gim_resume_after_kill_9_equals_the_uninterrupted_run(tmp_path):
    data = GIM.default_data(quick=True)
    kw = dict(max_steps=STEPS, checkpoint_every=EVERY, progress=False, logger=None)
    full = GIM(GIM.Config.preset("tiny"), **SETTINGS).fit(data, checkpoint_dir=str(tmp_path / "full"), **kw)

    _kill_after_checkpoint(tmp_path / "killed", KILL_AT)
    ckpt = torch.load(tmp_path / "killed" / "last.ckpt", weights_only=True)
    assert ckpt["global_step"] == KILL_AT and ckpt["scigen"]["loss_state"] == {"calls": KILL_AT}
    resumed = GIM(GIM.Config.preset("tiny"), **SETTINGS).fit(data, checkpoint_dir=str(tmp_path / "killed"), resume=True,
                                                            **kw)
    assert resumed.history.losses == full.history.losses
    a, b = full.state_tensors(), resumed.state_tensors()
    assert a.keys() == b.keys()
    differ = [k for k in a if not torch.equal(a[k], b[k])]
    assert differ == [], f"{len(differ)} of {len(a)} tensors differ after resume: {differ[:5]}"


def test_fit_leaves_no_training_state_on_the_model():
    """The contexts' statistics and the warm-up counter belong to the fit call's loss, not to the model."""
    model = GIM(GIM.Config.preset("tiny"), **SETTINGS).fit(GIM.default_data(quick=True), max_steps=1, progress=False,
                                                           logger=None)
    stashed = {"_tensors", "_loss_calls", "_max_steps"} & set(vars(model))
    assert not stashed, f"fit left training state on the model: {sorted(stashed)}"


def test_mmsfm_training_loss_runs_outside_fit_on_a_prepared_batch():
    """One cell batch per training time (what fit's collate draws from its index table) is all the loss
    needs; a fit leaves no marginals on the model."""
    from scigen.singlecell.mmsfm.state import index_table
    from scigen.singlecell.mmsfm.system import MMSFM, _MarginalRows

    data = MMSFM.default_data(quick=True)
    model = MMSFM(MMSFM.Config.preset("tiny"))
    model.fit(data, max_steps=1, progress=False, logger=None)
    assert not {"_marginals", "_knot_times"} & set(vars(model))
    md = model.metadata
    cells = [data[data.obs["time"] == t].X for t in md["train_times"]]
    marginals = [model._scale(torch.as_tensor(x, dtype=torch.float64)).float() for x in cells]
    batch = _MarginalRows(marginals)(index_table([len(x) for x in marginals], md["seed"])[:8])
    assert [b.shape for b in batch] == [(8, md["dim"])] * len(md["train_times"])
    loss = model.training_loss(model.network, batch)
    assert loss.ndim == 0 and torch.isfinite(loss)


def test_inverseflow_training_loss_runs_outside_fit():
    from scigen.singlecell.inverseflow.system import InverseFlow

    model = InverseFlow(InverseFlow.Config.preset("tiny"), algorithm="ifm")
    data = InverseFlow.default_data(quick=True)
    model.fit(data, max_steps=1, progress=False, logger=None)
    assert "_times" not in vars(model)
    x = torch.randn(4, model.metadata["channels"])
    loss = model.training_loss(model.network, x)
    assert loss.ndim == 0 and torch.isfinite(loss)
