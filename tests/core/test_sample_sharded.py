"""Sampling keyed by sample index (issue 33.3): a sample does not depend on how many are drawn with it, nor on how
many processes draw them."""

from __future__ import annotations

import textwrap

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.system.sharded import sample_in_shards
from scigen.core.toy.system import ToyConfig, ToySystem


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    model = ToySystem(ToyConfig.preset("tiny"))
    model.fit(model.default_data(quick=True), max_steps=3, progress=False)
    path = tmp_path_factory.mktemp("toy") / "model"
    model.save(path)
    return model, path


def test_the_first_k_of_n_samples_are_the_k_samples(toy):
    model, _ = toy
    eight = model.sample(8, seed=4)
    torch.testing.assert_close(model.sample(3, seed=4), eight[:3], rtol=0, atol=1e-6)
    assert not torch.allclose(model.sample(3, seed=5), eight[:3])
    assert torch.isfinite(eight).all() and eight.shape == (8, 2)


def test_shards_are_gathered_in_key_order_in_one_process():
    out = sample_in_shards(lambda keys: keys[:, None].float() * 2, 5)
    torch.testing.assert_close(out, torch.arange(5)[:, None].float() * 2)
    with pytest.raises(InvalidInputError, match="devices must be a positive int"):
        sample_in_shards(lambda keys: keys, 3, devices=0)


SCRIPT = textwrap.dedent(
    """
    import os, sys
    import torch
    from scigen.core.toy.system import ToySystem

    if __name__ == "__main__":
        model = ToySystem.load(sys.argv[1])
        x = model.sample(7, seed=4, devices=2)
        rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.save(x, os.path.join(sys.argv[2], f"rank{rank}.pt"))
    """
)


# slow (on demand): passes here, but in one CI run a rank aborted at interpreter exit after writing its result
# ("terminate called without an active exception", gloo teardown); under investigation
@pytest.mark.slow
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_samples_of_one(toy, tmp_path, run_script):
    model, path = toy
    (tmp_path / "run.py").write_text(SCRIPT)
    run_script(tmp_path / "run.py", path, tmp_path, cwd=tmp_path)
    one = model.sample(7, seed=4)
    for r in (0, 1):  # 7 samples over 2 ranks: keys 0-3 and 4-7 (key 7 drawn and dropped), every rank gets all
        torch.testing.assert_close(torch.load(tmp_path / f"rank{r}.pt"), one, rtol=0, atol=1e-6)
