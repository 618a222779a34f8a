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
def test_ddp_two_gloo_processes_match_single_process(tmp_path, loop, compiled):
    script = tmp_path / "ddp_run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path), loop, "1" if compiled else "0"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    limit = 900 if compiled else 150
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the 2-process DDP run did not finish within {limit} s")
    assert proc.returncode == 0, out.decode()[-3000:]

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
