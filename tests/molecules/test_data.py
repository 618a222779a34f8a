"""QM9 loading (split, units), MoleculeSet, ragged batching and zero-CoM noise."""

import numpy as np
import pytest
import torch

from scigen.molecules.data import (
    EDM_SPLIT_SIZES,
    HARTREE_TO_EV,
    MoleculeSet,
    com_norm,
    edm_split,
    load_qm9,
    ptr_from_counts,
    remove_mean,
    to_padded,
    to_ragged,
    zero_com_noise,
)


def test_edm_split_sizes_disjoint_and_seeded():
    s = edm_split(130_831)
    assert {k: len(v) for k, v in s.items()} == EDM_SPLIT_SIZES == {"train": 100_000, "valid": 17_748, "test": 13_083}
    allidx = np.concatenate(list(s.values()))
    assert np.array_equal(np.sort(allidx), np.arange(130_831))
    # EDM: np.random.seed(0); np.random.permutation(N) (legacy global stream)
    np.random.seed(0)
    ref = np.random.permutation(130_831)
    assert np.array_equal(s["train"], ref[:100_000]) and np.array_equal(s["test"], ref[-13_083:])


def test_qm9_subset_units_and_geometry():
    ms = load_qm9("all", limit=3)
    assert ms.names == ["gdb_1", "gdb_2", "gdb_3"] and ms.smiles[0] == "C"
    # methane: HOMO -0.3877 Ha, LUMO 0.1171 Ha, gap 0.5048 Ha (QM9 record 1); alpha 13.21 Bohr^3
    assert ms.properties["homo"][0] == pytest.approx(-0.3877 * HARTREE_TO_EV)
    assert ms.properties["gap"][0] == pytest.approx(0.5048 * 27.2114)
    assert ms.properties["alpha"][0] == pytest.approx(13.21)
    z, pos = ms.atomic_numbers[0], ms.positions[0]
    assert z.tolist() == [6, 1, 1, 1, 1]
    ch = np.linalg.norm(pos[1:] - pos[0], axis=1)
    np.testing.assert_allclose(ch, 1.0919, atol=2e-3)  # DFT C-H bond of methane


def test_bad_property_and_split():
    with pytest.raises(ValueError, match="not in QM9"):
        load_qm9("all", limit=2, properties=["bandgap"])
    with pytest.raises(ValueError, match="split"):
        load_qm9("training")


def test_molecule_set_items_and_errors():
    ms = MoleculeSet([[6, 1, 1, 1, 1], [8, 1, 1]], [np.random.default_rng(0).normal(size=(5, 3)) + 3,
                                                   np.zeros((3, 3))], {"gap": [1.0, 2.0]})
    it = ms[0]
    assert it["pos"].shape == (5, 3) and it["mask"].tolist() == [True] * 5
    assert float(it["pos"].sum(0).abs().max()) < 1e-5  # centred
    assert ms[1]["mask"].tolist() == [True, True, True, False, False]
    with pytest.raises(ValueError, match="unknown element"):
        MoleculeSet([[6, 16]], [np.zeros((2, 3))])
    with pytest.raises(ValueError, match="NaN"):
        MoleculeSet([[6]], [[[np.nan, 0, 0]]])
    with pytest.raises(ValueError, match="max_atoms"):
        MoleculeSet([[6, 1, 1]], [np.zeros((3, 3))], max_atoms=2)


def test_ragged_padded_round_trip():
    counts = torch.tensor([3, 1, 4])
    ptr = ptr_from_counts(counts)
    rows = torch.arange(8 * 3, dtype=torch.float32).reshape(8, 3)
    pad, mask = to_padded(rows, ptr)
    assert pad.shape == (3, 4, 3) and mask.sum(1).tolist() == [3, 1, 4]
    back, ptr2 = to_ragged(pad, mask)
    assert torch.equal(back, rows) and torch.equal(ptr2, ptr)
    with pytest.raises(ValueError, match="leading"):
        to_ragged(pad, torch.tensor([[False, True, True, True]] * 3))


def test_zero_com_noise_is_projected_gaussian():
    # per molecule of n atoms and per axis, P eps has covariance I - 11^T/n (closed form)
    g = torch.Generator().manual_seed(0)
    n, reps = 4, 4000
    ptr = ptr_from_counts(torch.full((reps,), n))
    eps = zero_com_noise(ptr, generator=g)
    assert float(com_norm(eps, ptr).max()) < 1e-5
    x = eps.reshape(reps, n, 3)[:, :, 0]
    cov = (x.T @ x) / reps
    np.testing.assert_allclose(cov.numpy(), np.eye(n) - 1.0 / n, atol=0.07)
    x0 = torch.randn(10, 3, generator=g)
    p2 = ptr_from_counts(torch.tensor([6, 4]))
    c = remove_mean(x0, p2)
    np.testing.assert_allclose(c[:6].mean(0).numpy(), 0, atol=1e-6)
    np.testing.assert_allclose((x0[6:] - c[6:]).numpy(), x0[6:].mean(0, keepdim=True).expand(4, 3).numpy(), atol=1e-6)
