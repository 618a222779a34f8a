"""Peak RSS against dataset size (1x, 4x, 16x) for the on-disk loaders of weather, molecules and graphs.

Per domain, each size is written to disk by this process (streaming writers: ``write_field_blocks``,
``write_molecules``, ``write_graph_store``), then a fresh child process trains 3 steps (tiny preset) and
reports its own ``ru_maxrss``. Baseline in the same run: the same data loaded into memory in the child (the
field read with ``read_field``, the molecules / graphs unpickled as lists) at 1x and 4x. Reported: peak RSS
(MiB), its growth over 1x, and the data size on disk.

    python benchmarks/core/bench_rss_streaming_b.py            # about 3-4 minutes on 2 busy cores
    python benchmarks/core/bench_rss_streaming_b.py --quick    # 1x and 4x only, no baseline
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pickle
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("_rss", ROOT / "tests" / "_rss.py")
_rss = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rss)
_mol_spec = importlib.util.spec_from_file_location("_mols", ROOT / "tests" / "molecules" / "test_store.py")
_graph_spec = importlib.util.spec_from_file_location("_graphs", ROOT / "tests" / "graphs" / "test_store.py")

BASE = {"weather": 1000, "molecules": 1000, "graphs": 400}  # frames (32 x 32), molecules, graphs (30 nodes, 45 edges)


def _size(p: Path) -> float:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 2**20


def _weather(tmp: Path, n: int, memory: bool):
    import pandas as pd

    from scigen.weather.data import make_field, write_field_blocks

    rng = np.random.default_rng(0)
    t = pd.date_range("2024-06-01", periods=n, freq="5min")
    path = write_field_blocks((make_field(rng.gamma(0.3, 2.0, (min(500, n - i), 32, 32)), t[i:i + 500])
                               for i in range(0, n, 500)), tmp / f"w{n}.zarr", time_chunk=25)
    src = f"read_field({str(path)!r})" if memory else repr(str(path))
    code = f"""
from scigen.weather import Nowcast, NowcastConfig
from scigen.weather.data import read_field
Nowcast(NowcastConfig.preset("tiny")).fit({src}, max_steps=3, batch_size=4, progress=False)
"""
    return path, code


def _molecules(tmp: Path, n: int, memory: bool):
    from scigen.molecules import write_molecules

    mods = importlib.util.module_from_spec(_mol_spec)
    _mol_spec.loader.exec_module(mods)
    path = write_molecules(tmp / f"m{n}", mods.molecules(n), properties=("lumo",))
    src = repr(str(path))
    if memory:
        with open(tmp / f"m{n}.pkl", "wb") as fh:
            pickle.dump(list(mods.molecules(n)), fh)
        src = f"pickle.load(open({str(tmp / f'm{n}.pkl')!r}, 'rb'))"
    code = f"""
import pickle
from scigen.molecules import UniGEM
from scigen.molecules.unigem.config import UniGEMConfig
UniGEM(UniGEMConfig.preset("tiny").model_copy(update={{"properties": ("lumo",)}})).fit({src}, max_steps=3,
    batch_size=8, progress=False)
"""
    return path, code


def _graphs(tmp: Path, n: int, memory: bool):
    from scigen.graphs.data import write_graph_store

    mods = importlib.util.module_from_spec(_graph_spec)
    _graph_spec.loader.exec_module(mods)
    path = write_graph_store(tmp / f"g{n}", mods.graphs(n, nodes=(30, 30), edges=45))
    src = repr(str(path))
    if memory:
        with open(tmp / f"g{n}.pkl", "wb") as fh:
            pickle.dump(list(mods.graphs(n, nodes=(30, 30), edges=45)), fh)
        src = f"pickle.load(open({str(tmp / f'g{n}.pkl')!r}, 'rb'))"
    code = f"""
import pickle
from scigen.graphs.g2pt.system import G2PT
G2PT(G2PT.Config.preset("tiny")).fit({src}, max_steps=3, batch_size=4, progress=False)
"""
    return path, code


DOMAINS = {"weather (Nowcast, zarr windows)": ("weather", _weather),
           "molecules (UniGEM, MoleculeStore)": ("molecules", _molecules),
           "graphs (G2PT, GraphStore)": ("graphs", _graphs)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "core" / "results" / "rss_streaming_b"))
    args = ap.parse_args()
    scales = (1, 4) if args.quick else (1, 4, 16)
    rows = []
    t0 = time.time()
    for label, (key, make) in DOMAINS.items():
        for memory in ((False,) if args.quick else (False, True)):
            for s in scales if not memory else (1, 4):
                tmp = Path(tempfile.mkdtemp(prefix="rssb-"))
                try:
                    n = BASE[key] * s
                    path, code = make(tmp, n, memory)
                    peak, _ = _rss.child_peak_rss(code, timeout=600)
                    rows.append({"domain": label, "loader": "in memory (baseline)" if memory else "on disk",
                                 "scale": s, "items": n, "disk_mib": round(_size(path), 1), "peak_mib": round(peak, 1)})
                    print(rows[-1], flush=True)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
    for r in rows:
        one = next(q for q in rows if q["domain"] == r["domain"] and q["loader"] == r["loader"] and q["scale"] == 1)
        r["growth_mib"] = round(r["peak_mib"] - one["peak_mib"], 1)
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    lines = ["# Peak RSS vs dataset size: on-disk loaders (weather, molecules, graphs)", "",
             f"Command: `python benchmarks/core/bench_rss_streaming_b.py{' --quick' if args.quick else ''}`; "
             f"{platform.machine()}, {platform.python_version()}, {round(time.time() - t0)} s. Each row: a fresh "
             "process trains 3 steps (tiny preset) and reports its own `ru_maxrss`; the data were written to disk "
             "beforehand. Baseline: the same data held in memory (read_field / unpickled lists), in the same run.",
             "", "| domain | loader | scale | items | on disk (MiB) | peak RSS (MiB) | growth over 1x (MiB) |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['domain']} | {r['loader']} | {r['scale']}x | {r['items']:,} | {r['disk_mib']} | {r['peak_mib']} | "
              f"{r['growth_mib']} |" for r in rows]
    lines += ["", "Items: radar frames (32 x 32), molecules (6-28 atoms), graphs (30 nodes, 45 edges). What still grows "
              "on disk: molecules keep the property table (8 bytes per molecule) and the novelty SMILES of the first "
              "20,000 molecules; graphs and frames keep per-item offsets on disk only.", ""]
    out.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
