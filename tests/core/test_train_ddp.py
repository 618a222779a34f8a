"""DDP on CPU: two gloo processes (strategy="ddp", accelerator="cpu", devices=2), on fit's Fabric loop and on
Lightning's Trainer.

Lightning re-launches the training script once per extra process, so the run happens in a child
script under a hard timeout (its whole process group is killed if it hangs).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn

from scigen.core.train import fit

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import torch
    from torch import nn
    from scigen.core.train import fit

    def main(out, loop, compiled):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 8), nn.SiLU(), nn.Linear(8, 3))
        data = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
        seen = []

        def loss_fn(m, x):
            seen.append(x.sum().item())
            return ((m(x) - x) ** 2).mean()

        res = fit(net, loss_fn, data, max_steps=6, batch_size=4, lr=1e-2, strategy="ddp", devices=2,
                  accelerator="cpu", progress=False, logger=None, checkpoint_dir=os.path.join(out, "ckpt"), loop=loop,
                  compile=compiled == "1")
        rank = int(os.environ.get("LOCAL_RANK", 0))
        with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
            from torch._dynamo.utils import counters
            json.dump({"params": [p.detach().flatten().tolist() for p in net.parameters()], "seen": seen,
                       "steps": res.steps, "graphs": counters["stats"]["unique_graphs"]}, f)

    if __name__ == "__main__":
        main(sys.argv[1], sys.argv[2], sys.argv[3])
    """
)


def _single_process_reference() -> nn.Module:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.SiLU(), nn.Linear(8, 3))
    data = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
    # DDP averages the two ranks' gradients of equal-size batches = the gradient of their union; the
    # step sampler gives rank r of 2 the block 2k + r, so the union is the batch of size 8 at step k
    fit(net, lambda m, x: ((m(x) - x) ** 2).mean(), data, max_steps=6, batch_size=8, lr=1e-2,
        accelerator="cpu", progress=False, logger=None)
    return net


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
@pytest.mark.parametrize("loop,compiled", [
    ("auto", False), ("trainer", False),  # auto: the Fabric loop
    # compile=True: Fabric compiles the DDP wrapper, the Trainer a step inside it; each process compiles (minutes)
    pytest.param("auto", True, marks=pytest.mark.slow), pytest.param("trainer", True, marks=pytest.mark.slow)])
def test_ddp_two_gloo_processes_match_single_process(tmp_path, loop, compiled, run_script):
    script = tmp_path / "ddp_run.py"
    script.write_text(SCRIPT)
    run_script(script, tmp_path, loop, "1" if compiled else "0", cwd=tmp_path, timeout=900 if compiled else 150)

    r0 = json.loads((tmp_path / "rank0.json").read_text())
    r1 = json.loads((tmp_path / "rank1.json").read_text())
    assert r0["steps"] == r1["steps"] == 6
    assert r0["seen"] != r1["seen"]  # the ranks trained on different shards
    assert (r0["graphs"] > 0 and r1["graphs"] > 0) if compiled else r0["graphs"] == r1["graphs"] == 0
    for a, b in zip(r0["params"], r1["params"], strict=True):
        assert torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-7)  # gradients were all-reduced
    ref = _single_process_reference()
    for a, p in zip(r0["params"], ref.parameters(), strict=True):
        assert torch.allclose(torch.tensor(a), p.detach().flatten(), atol=1e-5)
    ckpt = torch.load(tmp_path / "ckpt" / "last.ckpt", weights_only=True)
    assert ckpt["global_step"] == 6


STOCHASTIC_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import torch
    from scigen.core.losses import denoising_loss
    from scigen.core.paths import LinearPath
    from scigen.core.train import fit

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.f = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.SiLU(), torch.nn.Linear(16, 3))

        def forward(self, x, t):
            return self.f(torch.cat([x, t[:, None]], 1))

    def loss(m, x):  # flow matching: a time and a noise vector drawn per example
        return denoising_loss(m, x, LinearPath(), "velocity")

    def run(out, devices, batch_size, strategy, loop):
        torch.manual_seed(0)
        net = Net()
        data = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
        res = fit(net, loss, data, max_steps=5, batch_size=batch_size, lr=1e-2, strategy=strategy, devices=devices,
                  accelerator="cpu", progress=False, logger=None, rng="per_sample", seed=3, loop=loop)
        rank = int(os.environ.get("LOCAL_RANK", 0))
        with open(os.path.join(out, f"{devices}-rank{rank}.json"), "w") as f:
            json.dump({"params": [p.detach().flatten().tolist() for p in net.parameters()],
                       "losses": res.losses}, f)

    def resume(out, devices, batch_size, strategy, steps, tag):  # a run continued from checkpoint_dir out/ckpt
        torch.manual_seed(0)
        net = Net()
        data = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
        res = fit(net, loss, data, max_steps=steps, batch_size=batch_size, lr=1e-2, strategy=strategy,
                  devices=devices, accelerator="cpu", progress=False, logger=None, rng="per_sample", seed=3,
                  checkpoint_dir=os.path.join(out, "ckpt"), checkpoint_every=1, resume=True)
        rank = int(os.environ.get("LOCAL_RANK", 0))
        with open(os.path.join(out, f"{tag}-rank{rank}.json"), "w") as f:
            json.dump({"params": [p.detach().flatten().tolist() for p in net.parameters()],
                       "losses": res.losses}, f)

    if __name__ == "__main__":
        out, loop = sys.argv[1], sys.argv[2]
        if sys.argv[3] == "2":
            run(out, 2, 4, "ddp", loop)
        elif sys.argv[3] == "1":
            run(out, 1, 8, "auto", loop)
        elif sys.argv[3] == "resume-2-to-1":  # 3 steps on two ranks, then on to 5 in one process
            resume(out, 2, 4, "ddp", 3, "first") if sys.argv[4] == "first" else resume(out, 1, 8, "auto", 5, "then")
    """
)


def _run_script(run_script, tmp_path, script_text, *args):
    script = tmp_path / "run.py"
    script.write_text(script_text)
    run_script(script, tmp_path, *args, cwd=tmp_path)


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
@pytest.mark.parametrize("loop", ["auto", pytest.param("trainer", marks=pytest.mark.slow)])  # CI: one loop
def test_a_stochastic_loss_under_ddp_equals_one_process_on_the_union_batch_with_per_sample_streams(tmp_path, loop,
                                                                                                  run_script):
    """Issue 33.1: with ``rng="per_sample"`` the times and noise of example ``i`` at step ``s`` depend only on
    ``(seed, s, i)``, so two ranks of batch 4 (gradients averaged by DDP) take the steps one process takes on
    their union, batch 8, noise included."""
    _run_script(run_script, tmp_path, STOCHASTIC_SCRIPT, loop, "2")
    _run_script(run_script, tmp_path, STOCHASTIC_SCRIPT, loop, "1")
    r0, r1, one = (json.loads((tmp_path / f).read_text()) for f in ("2-rank0.json", "2-rank1.json", "1-rank0.json"))
    for a, b, c in zip(r0["params"], r1["params"], one["params"], strict=True):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b), rtol=0, atol=1e-7)
        torch.testing.assert_close(torch.tensor(a), torch.tensor(c), rtol=1e-5, atol=1e-6)
    # the recorded loss is the mean over the ranks (each rank's is the mean over its half): the union batch's loss
    torch.testing.assert_close(torch.tensor(r0["losses"]), torch.tensor(r1["losses"]), rtol=0, atol=0)
    torch.testing.assert_close(torch.tensor(r0["losses"]), torch.tensor(one["losses"]), rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_a_checkpoint_written_by_two_ranks_resumes_in_one_process_to_the_uninterrupted_run(tmp_path, run_script):
    """Issue 33.1: checkpoints are written once (rank 0, atomically) and resume on any world size: 3 steps on two
    ranks of batch 4, then steps 4-5 in one process of batch 8 from the last checkpoint, give the weights and the
    losses of one process trained 5 steps on batch 8 (per-sample streams: the same noise whichever rank drew it)."""
    _run_script(run_script, tmp_path, STOCHASTIC_SCRIPT, "auto", "resume-2-to-1", "first")
    assert sorted(p.name for p in (tmp_path / "ckpt").glob("*.ckpt")) == ["last.ckpt"]
    _run_script(run_script, tmp_path, STOCHASTIC_SCRIPT, "auto", "resume-2-to-1", "then")
    _run_script(run_script, tmp_path, STOCHASTIC_SCRIPT, "auto", "1")
    first0, first1 = (json.loads((tmp_path / f).read_text()) for f in ("first-rank0.json", "first-rank1.json"))
    then, one = (json.loads((tmp_path / f).read_text()) for f in ("then-rank0.json", "1-rank0.json"))
    assert first0 == first1 and len(first0["losses"]) == 3
    assert then["losses"][:3] == first0["losses"]  # the resumed history continues the checkpoint's
    torch.testing.assert_close(torch.tensor(then["losses"]), torch.tensor(one["losses"]), rtol=1e-5, atol=1e-6)
    for a, c in zip(then["params"], one["params"], strict=True):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(c), rtol=1e-5, atol=1e-6)


VAL_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import torch
    from scigen.core.train import fit

    def run(out, devices):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.SiLU(), torch.nn.Linear(16, 3))
        data = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
        val = torch.randn(16, 3, generator=torch.Generator().manual_seed(2)) * 3
        rank = int(os.environ.get("LOCAL_RANK", 0))
        if devices == 2:  # each rank validates on its own half: rank 0 rows 0-7, rank 1 rows 8-15
            val = val[8 * rank: 8 * (rank + 1)]
        res = fit(net, lambda m, x: ((m(x) - x) ** 2).mean(), data, val_data=val, val_every=1, early_stopping=2,
                  max_steps=40, batch_size=8 // devices, lr=0.3, strategy="ddp" if devices == 2 else "auto",
                  devices=devices, accelerator="cpu", progress=False, logger=None)
        with open(os.path.join(out, f"val{devices}-rank{rank}.json"), "w") as f:
            json.dump({"val": res.val_losses, "steps": res.steps}, f)

    if __name__ == "__main__":
        run(sys.argv[1], int(sys.argv[2]))
    """
)


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_ranks_with_different_validation_data_agree_on_the_validation_loss_and_on_early_stopping(tmp_path, run_script):
    """Issue 33.1 (the DGMR / neuralforecast bug: a validation loss taken from one rank): each rank holds half of the
    validation rows; the validation loss is reduced over both ranks' batches, so both record the one-process value
    on all the rows, and early stopping ends both ranks at the step where one process stops."""
    _run_script(run_script, tmp_path, VAL_SCRIPT, "2")
    _run_script(run_script, tmp_path, VAL_SCRIPT, "1")
    r0, r1, one = (json.loads((tmp_path / f).read_text()) for f in ("val2-rank0.json", "val2-rank1.json",
                                                                    "val1-rank0.json"))
    assert r0["steps"] == r1["steps"] == one["steps"] < 40  # stopped early, on the same step everywhere
    torch.testing.assert_close(torch.tensor(r0["val"]), torch.tensor(r1["val"]), rtol=0, atol=0)
    torch.testing.assert_close(torch.tensor(r0["val"]), torch.tensor(one["val"]), rtol=1e-5, atol=1e-6)


MULTINODE_SCRIPT = STOCHASTIC_SCRIPT.replace(
    'if __name__ == "__main__":',
    textwrap.dedent(
        """
        def run_nodes(out, loop):  # one process of a 2-node job, started by the 'cluster' (the test)
            torch.manual_seed(0)
            net = Net()
            data = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
            fit(net, loss, data, max_steps=5, batch_size=4, lr=1e-2, strategy="ddp", devices=1, num_nodes=2,
                accelerator="cpu", progress=False, logger=None, rng="per_sample", seed=3, loop=loop)
            with open(os.path.join(out, f"node{os.environ['NODE_RANK']}.json"), "w") as f:
                json.dump({"params": [p.detach().flatten().tolist() for p in net.parameters()]}, f)

        if __name__ == "__main__" and sys.argv[3] == "nodes":
            run_nodes(sys.argv[1], sys.argv[2])
        elif __name__ == "__main__":"""
    ),
)
assert "run_nodes(sys.argv" in MULTINODE_SCRIPT


@pytest.mark.slow  # three processes, about a minute: on demand (pytest -m slow)
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_nodes_of_one_device_equal_two_devices_of_one_node(tmp_path, run_script):
    """Issue 33.2: two processes started as two 'nodes' of one device each (Lightning's cluster environment:
    MASTER_ADDR/MASTER_PORT/NODE_RANK/LOCAL_RANK/WORLD_SIZE, as SLURM or torchrun would set them, here on
    localhost) train the same weights as one node with two devices, and as one process on the union batch."""
    import socket

    script = tmp_path / "run.py"
    script.write_text(MULTINODE_SCRIPT)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for node in (0, 1):
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore", "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port), "NODE_RANK": str(node), "LOCAL_RANK": "0", "WORLD_SIZE": "2"}
        procs.append(subprocess.Popen([sys.executable, str(script), str(tmp_path), "auto", "nodes"], cwd=tmp_path,
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True))
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=150)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                os.killpg(q.pid, signal.SIGKILL)
            pytest.fail("the 2-node run did not finish within 150 s")
    for p, out in zip(procs, outs, strict=True):
        assert p.returncode == 0, out.decode()[-3000:]
    _run_script(run_script, tmp_path, STOCHASTIC_SCRIPT, "auto", "1")
    n0, n1, one = (json.loads((tmp_path / f).read_text()) for f in ("node0.json", "node1.json", "1-rank0.json"))
    for a, b, c in zip(n0["params"], n1["params"], one["params"], strict=True):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b), rtol=0, atol=1e-7)
        torch.testing.assert_close(torch.tensor(a), torch.tensor(c), rtol=1e-5, atol=1e-6)


CONSOLE_SCRIPT = textwrap.dedent(
    """
    import os, sys
    rank = os.environ.get("LOCAL_RANK", "0")  # unset in the launching process (rank 0), set in the re-launched one
    out = sys.argv[1]
    fd = os.open(os.path.join(out, f"console{rank}.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    import torch
    from torch import nn
    from scigen.core.train import fit

    def main():
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 8), nn.SiLU(), nn.Linear(8, 3))
        data = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
        fit(net, lambda m, x: ((m(x) - x) ** 2).mean(), data, max_steps=5, batch_size=4, lr=1e-2, strategy="ddp",
            devices=2, accelerator="cpu", progress=True, logger="csv", log_dir=os.path.join(out, "logs"))

    if __name__ == "__main__":
        main()
    """
)


@pytest.mark.slow  # two processes: on demand (pytest -m slow); CI runs the first test of this file
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_under_ddp_only_rank_zero_draws_progress_and_writes_logs(tmp_path, run_script):
    """Issue 33.1: with ``progress=True`` and the CSV logger, rank 0 draws the summary and the bar and writes one
    metrics file (one row per step); rank 1's console carries neither, and no second log file appears."""
    run_script(tmp_path / "run.py", tmp_path, cwd=tmp_path, text=CONSOLE_SCRIPT)
    zero, one = ((tmp_path / f"console{r}.txt").read_text() for r in (0, 1))
    assert "training" in zero and "5/5" in zero and "trainable" in zero, zero
    assert "GLOBAL_RANK: 1" in one, one  # the file is rank 1's console
    assert "training" not in one and "trainable" not in one and "train_loss" not in one, one
    logs = sorted(p.relative_to(tmp_path / "logs").as_posix() for p in (tmp_path / "logs").rglob("*") if p.is_file())
    assert [p for p in logs if p.endswith(".csv")] == ["metrics.csv"], logs
    steps = [line.split(",")[2] for line in (tmp_path / "logs" / "metrics.csv").read_text().splitlines()[1:]]
    assert steps == ["0", "1", "2", "3", "4"], steps
