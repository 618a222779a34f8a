"""Molecule metrics against molsets' own functions (extracted from the installed wheel, since
``import moses`` fails on current RDKit / pandas), FCD properties, and the published G2PT numbers on
the authors' own samples (skipped when ../shared/data is absent)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from scigen.graphs.metrics.molecules import fcd, novelty, uniqueness, validity

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "g2pt_samples"
GEN = ["CCO", "OCC", "c1ccccc1", "C1CC", "CC(=O)O", None, "CCN", "c1ccncc1", "CCO", "XYZ", "CC(C)O"]
TRAIN = ["CCO", "c1ccncc1", "CCCC"]


def _molsets_functions() -> dict:
    """fraction_valid / fraction_unique / novelty from molsets' sources, executed without importing moses."""
    spec = importlib.util.find_spec("moses")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("molsets is not installed")
    root = Path(spec.submodule_search_locations[0])
    from multiprocessing import Pool

    import numpy as np
    from rdkit import Chem

    ns = {"Chem": Chem, "Pool": Pool, "np": np, "warnings": __import__("warnings")}
    wanted = {root / "utils.py": {"mapper", "get_mol"}, root / "metrics" / "utils.py": {"canonic_smiles"},
              root / "metrics" / "metrics.py": {"fraction_valid", "fraction_unique", "novelty", "remove_invalid"}}
    for path, names in wanted.items():
        tree = ast.parse(path.read_text())
        body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
        exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), ns)  # noqa: S102
    return ns


def test_matches_molsets_metric_functions():
    ns = _molsets_functions()
    gen = [s if s is not None else "" for s in GEN]
    assert validity(GEN) == pytest.approx(ns["fraction_valid"](gen))
    valid = ns["remove_invalid"](gen)
    assert uniqueness(GEN) == pytest.approx(ns["fraction_unique"](valid, check_validity=False))
    train_canon = [ns["canonic_smiles"](s) for s in TRAIN]
    assert novelty(GEN, TRAIN) == pytest.approx(ns["novelty"](valid, train_canon))
    # by hand: 8 of 11 valid; 6 distinct canonical SMILES among the 8 (CCO three times); 4 of 6 not in TRAIN
    assert validity(GEN) == pytest.approx(8 / 11)
    assert uniqueness(GEN) == pytest.approx(6 / 8)
    assert novelty(GEN, TRAIN) == pytest.approx(4 / 6)


@pytest.mark.slow  # ChemNet on CPU: ~10 s alone, minutes on a loaded machine
def test_fcd_zero_on_itself_and_positive_otherwise():
    a = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCCCC", "c1ccncc1", "OCCO", "CC(C)C"]
    b = ["C1CCCCC1", "CCOC(=O)C", "c1ccc2ccccc2c1", "NCCN", "CCCl", "FC(F)F", "CC#N", "O=C=O"]
    assert fcd(a, a) == pytest.approx(0.0, abs=1e-3)
    assert fcd(a, b) > 1.0


def test_fcd_reference_arguments():
    from scigen.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="exactly one of ref"):
        fcd(["CCO", "CCN"])
    with pytest.raises(InvalidInputError, match="ref_stats"):
        fcd(["CCO", "CCN"], ref_stats={"mu": 0})


def _authors_samples() -> list[str | None]:
    if not DATA.is_dir():
        pytest.skip("../shared/data is absent")
    lines = [s.strip() for s in (DATA / "moses-base-deg.smiles.txt").read_text().splitlines() if s.strip()]
    return [None if s == "None" else s for s in lines]  # the file writes None for failed samples


@pytest.mark.slow  # RDKit on 24,730 SMILES: ~10-30 s
def test_authors_samples_validity_matches_paper():
    gen = _authors_samples()
    # all 24,730 lines, decoding failures included: the paper reports 96.4 % valid (G2PT-base, MOSES)
    assert validity(gen) == pytest.approx(0.964, abs=0.002)


@pytest.mark.slow  # ChemNet on ~25k molecules: ~5 min on one core
def test_authors_samples_reproduce_published_fcd():
    from fcd_torch import FCD
    from rdkit import Chem

    from scigen.graphs.data import moses_fcd_stats

    gen = _authors_samples()
    stats = moses_fcd_stats("test")
    assert stats["mu"].shape == (512,) and stats["sigma"].shape == (512, 512)
    np.testing.assert_allclose(stats["sigma"], stats["sigma"].T)  # a covariance matrix
    # ours == fcd-torch called directly with MOSES' test statistics (its FCD/Test), on a subset
    head = [s for s in gen[:1000] if s]
    canon = [Chem.MolToSmiles(m) for m in map(Chem.MolFromSmiles, head) if m is not None]
    assert fcd(head, ref_stats=stats) == pytest.approx(FCD(n_jobs=1)(gen=canon, pref=stats), rel=1e-6)
    # all samples (MOSES protocol). Paper Table 3 reports FCD 0.97 without naming the split: against
    # the scaffold test split these released samples give 0.997, against the random test split 0.454
    # (benchmarks/graphs/results/fcd_authors.md, identical with fcd-torch called directly)
    assert fcd(gen, ref_stats=moses_fcd_stats("test_scaffolds")) == pytest.approx(0.97, abs=0.05)
