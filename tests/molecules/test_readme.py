"""The molecules README's main example ("## Example") runs: as written (slow, the
tiny preset's 300 steps on 2,000 QM9 molecules, ~1.5 min on one core) and, in the default suite, sized
down (3 steps, 64 molecules, 8 samples) with the same calls and outputs."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

HEADING = "## Example"

#: the README's sizes -> the default suite's (each must occur exactly once in the example)
SHRINK = {
    'load_qm9("train", limit=2000)': 'load_qm9("train", limit=64)',
    'UniGEMConfig.preset("tiny")': 'UniGEMConfig.preset("tiny", train={"max_steps": 3, "progress": False})',
    "model.sample(n_samples=100)": "model.sample(n_samples=8)",
}


def _run(code: str, tmp_path, monkeypatch) -> tuple[dict, str]:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "packages/molecules/README.md", "exec"), scope)  # noqa: S102
    return scope, out.getvalue()


def _check_outputs(scope: dict, printed: str, tmp_path, n: int) -> None:
    from rdkit import Chem

    from scigen.molecules import UniGEM, load_qm9
    from scigen.molecules.unigem.config import DEFAULT_PROPERTIES

    mols = scope["mols"]
    assert len(mols) == n and all(isinstance(m, Chem.Mol) and m.GetNumConformers() == 1 for m in mols)
    assert set(mols[0].GetPropsAsDict()) == set(DEFAULT_PROPERTIES)
    back = list(Chem.SDMolSupplier(str(tmp_path / "samples.sdf"), sanitize=False, removeHs=False))
    assert len(back) == n  # RDKit's own reader gives every sample back, same atoms
    assert [b.GetNumAtoms() for b in back] == [m.GetNumAtoms() for m in mols]
    test = load_qm9("test", limit=10)
    assert "'atom_stability': " in printed and "molecule" in printed
    table = scope["model"].predict(test)
    assert table.shape == (10, len(DEFAULT_PROPERTIES)) and list(table.index) == test.names
    again = UniGEM.load(tmp_path / "run").predict(test)  # the saved run predicts the same
    np.testing.assert_allclose(again.to_numpy(), table.to_numpy(), rtol=1e-6, atol=1e-6)


def test_readme_example_is_found(readme_example):
    code = readme_example("molecules", HEADING)
    compile(code, "packages/molecules/README.md", "exec")
    for old in SHRINK:
        assert code.count(old) == 1, old


def test_readme_example_runs_sized_down(readme_example, tmp_path, monkeypatch):
    code = readme_example("molecules", HEADING)
    for old, new in SHRINK.items():
        code = code.replace(old, new)
    scope, printed = _run(code, tmp_path, monkeypatch)
    _check_outputs(scope, printed, tmp_path, n=8)


@pytest.mark.slow  # the tiny preset as written: 300 steps x 32 on 2,000 molecules (~1.5 min on one core)
def test_readme_example_runs(readme_example, tmp_path, monkeypatch):
    from scigen.molecules import load_qm9

    scope, printed = _run(readme_example("molecules", HEADING), tmp_path, monkeypatch)
    _check_outputs(scope, printed, tmp_path, n=100)
    model, test = scope["model"], load_qm9("test", limit=300)
    pred = model.predict(test)["alpha"].to_numpy()
    mae = np.abs(pred - test.properties["alpha"]).mean()
    baseline = np.abs(model.metadata["prop_mean"][0] - test.properties["alpha"]).mean()
    assert mae < 0.8 * baseline, (mae, baseline)  # README: alpha 2.5 vs 6.4 Bohr^3 after the demo's 300 steps
