"""Diffusion placer sampling keyed by placement index (issue 33.3): placement ``i`` of ``sample(netlist, n, seed=s)``
(its prior and sampler noise, its legaliser jitter and stopping step) depends only on ``(s, i)``, so it is the same
drawn alone, among ``n``, or on either of two processes (``devices=2``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.placement import generate_netlist
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.process import Circuit
from scigen.placement.diffusion.system import DiffusionPlacer
from scigen.placement.legalize import LegalizerConfig, legalize
from scigen.placement.synthetic import SynthConfig

FAST = dict(copies=8, steps=6, inner_steps=2, legalize_steps=150, train={"lr": 2e-3, "ema_decay": None,
                                                                         "progress": False})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.manual_seed(0)
    model = DiffusionPlacer(DiffusionPlacerConfig.preset("tiny", **FAST))
    model.fit(DiffusionPlacer.default_data(n=6, objects=10), max_steps=30)
    path = tmp_path_factory.mktemp("placer") / "model"
    model.save(path)
    return model, path


def _netlist():
    return generate_netlist(321, SynthConfig.for_size(10))


def _positions(placed) -> np.ndarray:
    return np.stack([p.lower_left for p in placed])


def test_the_first_k_of_n_placements_are_the_k_placements(trained):
    """Equal to the bit in practice (each placement's guided chain runs as its own batch of one, the legaliser is
    elementwise per placement); 1e-6 chip units of slack."""
    model, _ = trained
    nl = _netlist()
    five, two = _positions(model.sample(nl, 5, seed=5)), _positions(model.sample(nl, 2, seed=5))
    np.testing.assert_allclose(five[:2], two, rtol=0, atol=1e-6)
    assert not np.allclose(five[0], five[1])  # placements draw from different keys
    assert not np.allclose(_positions(model.sample(nl, 2, seed=6)), two)
    # place(best_of=k) keeps the best of the same k keyed candidates: its choice is one of sample(k)
    best, _ = model.place(nl, best_of=2, seed=5)
    assert any(np.allclose(best.lower_left, p, rtol=0, atol=1e-6) for p in two)
    for bad in (0, True):
        with pytest.raises(InvalidInputError, match="devices must be a positive int"):
            model.sample(nl, 2, devices=bad)


def test_sample_to_writes_the_placements_of_sample(trained, tmp_path):
    """``sample_to`` (chunks of 2, one ``.npy``): placement ``i``'s lower-left corners of every object equal
    ``sample``'s placement ``i``."""
    model, _ = trained
    nl = _netlist()
    from scigen.core.system.shard_writer import load_sharded_samples

    got = load_sharded_samples(model.sample_to(tmp_path / "p", 3, netlist=nl, seed=5, chunk_size=2))
    np.testing.assert_allclose(got["lower_left"], _positions(model.sample(nl, 3, seed=5)), rtol=0, atol=1e-6)
    assert got["lower_left"].shape == (3, nl.num_objects, 2)

def test_keyed_legalisation_does_not_depend_on_the_batch():
    """With keys: placement i's jitter comes from key i and it stops at its own first legal check, so legalising
    rows 0..1 of a batch alone gives the same rows to the bit; without keys the batch stops together."""
    nl = _netlist()
    pot = Circuit(nl).potentials
    x = torch.rand(4, nl.num_objects, 2, generator=torch.Generator().manual_seed(0)) * 1.6 - 0.8
    cfg = LegalizerConfig(steps=400, hpwl_weight=1.0)
    whole, info = legalize(x, pot, cfg, keys=torch.arange(4))
    part, part_info = legalize(x[2:], pot, cfg, keys=torch.arange(2, 4))
    assert torch.equal(whole[2:], part)
    assert info["sample_steps"][2:] == part_info["sample_steps"]
    assert info["steps"] == max(info["sample_steps"]) or info["steps"] == cfg.steps
    with pytest.raises(InvalidInputError, match="keys"):
        legalize(x, pot, cfg, keys=torch.arange(3))
    # the keyed jitter of a placement is its key's, not its row's
    moved, _ = legalize(x[[1]], pot, LegalizerConfig(steps=1, lr=0.0, hpwl_weight=0.0), keys=torch.tensor([3]))
    again, _ = legalize(x[[1]], pot, LegalizerConfig(steps=1, lr=0.0, hpwl_weight=0.0), keys=torch.tensor([2]))
    assert not torch.equal(moved, again)


SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from scigen.placement import generate_netlist
    from scigen.placement.diffusion.system import DiffusionPlacer
    from scigen.placement.synthetic import SynthConfig

    if __name__ == "__main__":
        model = DiffusionPlacer.load(sys.argv[1])
        placed = model.sample(generate_netlist(321, SynthConfig.for_size(10)), 3, seed=5, devices=2)
        np.save(os.path.join(sys.argv[2], f"rank{int(os.environ.get('LOCAL_RANK', 0))}.npy"),
                np.stack([p.lower_left for p in placed]))
    """
)


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_placements_of_one(trained, tmp_path, run_script):
    """Rank 0 draws placements 0, 1 and rank 1 placement 2 (and a dropped 3): the placements of one process, to
    the bit in practice (1e-6 chip units of slack)."""
    model, path = trained
    run_script(tmp_path / "run.py", path, tmp_path, cwd=tmp_path, text=SCRIPT)
    one = _positions(model.sample(_netlist(), 3, seed=5))
    for r in (0, 1):
        np.testing.assert_allclose(np.load(tmp_path / f"rank{r}.npy"), one, rtol=0, atol=1e-6)
