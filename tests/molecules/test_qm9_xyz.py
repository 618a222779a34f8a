"""QM9's original xyz release, written here from qm9pack's copy of the same molecules, read back by
``load_qm9_xyz`` and compared with ``load_qm9`` (qm9pack): same atoms, coordinates and properties."""

from __future__ import annotations

import re
import tarfile

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.molecules.data import QM9_PROPERTIES, load_qm9, load_qm9_xyz

pytest.importorskip("scigen.datasets.bundled")
COLUMNS = {"A": "RotA_GHz", "B": "RotB_GHz", "C": "RotC_GHz", **{k: v[0] for k, v in QM9_PROPERTIES.items()}}
ORDER = ["A", "B", "C", "mu", "alpha", "homo", "lumo", "gap", "r2", "zpve", "U0", "U", "H", "G", "Cv"]


def _numbers(cell: str) -> np.ndarray:
    return np.asarray(re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", cell), dtype=float)  # "0." too


def _mathematica(v: float) -> str:
    return f"{v:.10e}".replace("e", "*^")  # the files' exponent style, e.g. 1.2345*^-6


def _write_release(folder, n=4):
    """The first ``n`` qm9pack molecules as dsgdb9nsd_*.xyz files in the figshare layout (paper, Table 2-3)."""
    from scigen.datasets.bundled import parse_qm9pack_list, qm9pack_table

    t = qm9pack_table(limit=n)
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(n):
        idx = int(t["Index"][r])
        els = parse_qm9pack_list(t["Elements"][r])
        xyz = _numbers(t["XYZ_Ang"][r]).reshape(-1, 3)
        charges = _numbers(t["Mulliken_pop"][r])
        fmt = _mathematica if r == 2 else repr
        lines = [str(len(els)), f"gdb {idx}\t" + "\t".join(repr(float(t[COLUMNS[k]][r])) for k in ORDER) + "\t"]
        lines += ["\t".join([e, *(fmt(float(c)) for c in p), repr(q)]) for e, p, q in zip(els, xyz, charges, strict=True)]
        lines += ["\t".join(str(f) for f in _numbers(t["Harmonic_Freq_cmi"][r])),
                  f"{t['SMILES'][r]}\t{t['SMILES'][r]}", f"{t['InChi'][r]}\t{t['InChi'][r]}"]
        (folder / f"dsgdb9nsd_{idx:06d}.xyz").write_text("\n".join(lines) + "\n")
    return t


def test_xyz_release_matches_qm9pack(tmp_path):
    _write_release(tmp_path / "QM9")
    (tmp_path / "QM9" / "uncharacterized.txt").write_text(
        "List of 3054 molecules which failed the geometry consistency check\n\n   Index  ...\n     2   C1 ...\n")
    props = list(QM9_PROPERTIES)
    ours = load_qm9_xyz(tmp_path / "QM9", properties=props)
    ref = load_qm9("all", limit=4, properties=props, cache=False)
    keep = [0, 2, 3]  # gdb 2 is listed as uncharacterized here
    assert ours.names == [ref.names[i] for i in keep] == ["gdb_1", "gdb_3", "gdb_4"]
    for a, b in zip(ours.atomic_numbers, [ref.atomic_numbers[i] for i in keep], strict=True):
        assert np.array_equal(a, b)
    for a, b in zip(ours.positions, [ref.positions[i] for i in keep], strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    for p in props:
        np.testing.assert_allclose(ours.properties[p], ref.properties[p][keep], rtol=1e-12, err_msg=p)
    assert len(load_qm9_xyz(tmp_path / "QM9", exclude_uncharacterized=False)) == 4
    assert load_qm9_xyz(tmp_path / "QM9", limit=1).names == ["gdb_1"]


def test_through_the_catalog_cache(tmp_path, monkeypatch):
    from scigen.datasets import DataNotAvailableError

    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "cache"))
    with pytest.raises(DataNotAvailableError, match=r"scigen data fetch QM9[\s\S]*dsgdb9nsd\.xyz\.tar\.bz2"):
        load_qm9_xyz()
    _write_release(tmp_path / "src", n=2)
    d = tmp_path / "cache" / "QM9"
    d.mkdir(parents=True)
    with tarfile.open(d / "dsgdb9nsd.xyz.tar.bz2", "w:bz2") as tar:  # the archive holds the files at top level
        for f in sorted((tmp_path / "src").iterdir()):
            tar.add(f, f.name)
    (d / "uncharacterized.txt").write_text("header\n")
    m = load_qm9_xyz()
    assert m.names == ["gdb_1", "gdb_2"] and m.atomic_numbers[1].tolist() == [7, 1, 1, 1]  # methane, ammonia


def test_bad_files_are_named(tmp_path):
    _write_release(tmp_path, n=1)
    f = tmp_path / "dsgdb9nsd_000001.xyz"
    lines = f.read_text().splitlines()
    with pytest.raises(InvalidInputError, match="uncharacterized.txt is missing"):
        load_qm9_xyz(tmp_path)
    f.write_text("\n".join([lines[0], lines[1], "C\t0.1\tx\t0.3\t0.1", *lines[3:]]))
    with pytest.raises(InvalidInputError, match=r"dsgdb9nsd_000001\.xyz:3: expected a number, got 'x'"):
        load_qm9_xyz(tmp_path, exclude_uncharacterized=False)
    f.write_text("\n".join(lines[:4]))
    with pytest.raises(InvalidInputError, match=r"dsgdb9nsd_000001\.xyz: truncated"):
        load_qm9_xyz(tmp_path, exclude_uncharacterized=False)
    f.write_text("\n".join([lines[0], "gdb 1 2 3", *lines[2:]]))
    with pytest.raises(InvalidInputError, match=r":2: expected 'gdb <index>' and 15 properties"):
        load_qm9_xyz(tmp_path, exclude_uncharacterized=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match="no dsgdb9nsd"):
        load_qm9_xyz(tmp_path / "empty")
    with pytest.raises(InvalidInputError, match="properties"):
        load_qm9_xyz(tmp_path, properties=["nope"])
