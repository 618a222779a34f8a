"""Issue 22: every pilot has a paper-scale recipe ``benchmarks/<domain>/paper.sh`` (documented in
``benchmarks/PAPER.md``). Cheap checks only — nothing here runs a recipe: each script is executable,
strict (``set -euo pipefail`` before its first command), parses (``bash -n``), and passes only flags
that its benchmark script declares; ``benchmarks/_paper.py`` reads measured values from a result file
in the paper's unit."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from repo_layout import ROOT  # noqa: E402

BENCH = ROOT / "benchmarks"
#: pilot domain -> its benchmark script (the one paper.sh wraps)
PILOTS = {"timeseries": "bench_nsdiff.py", "graphs": "bench_g2pt.py", "molecules": "bench_unigem_vs_edm.py",
          "singlecell": "bench_mmsfm.py", "placement": "bench_placement.py"}


def _commands(text: str) -> list[str]:
    """Non-blank lines that are not comments (the shebang included)."""
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


@pytest.mark.parametrize("domain", sorted(PILOTS))
def test_paper_sh_is_an_executable_strict_bash_script(domain):
    script = BENCH / domain / "paper.sh"
    assert script.is_file(), f"{script} missing"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x)"
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") or text.startswith("#!/bin/bash\n"), f"{script}: not a bash script"
    first = _commands(text)[0]
    assert first == "set -euo pipefail", f"{script}: the first command must be 'set -euo pipefail', got {first!r}"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
@pytest.mark.parametrize("domain", sorted(PILOTS))
def test_paper_sh_parses(domain):
    for script in (BENCH / domain / "paper.sh", BENCH / "_paper.sh"):
        r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert r.returncode == 0, f"bash -n {script}: {r.stderr}"


@pytest.mark.parametrize("domain", sorted(PILOTS))
def test_paper_sh_passes_only_flags_its_benchmark_declares(domain):
    text = (BENCH / domain / "paper.sh").read_text()
    bench = (BENCH / domain / PILOTS[domain]).read_text()
    assert f"benchmarks/{domain}/{PILOTS[domain]}" in text, f"paper.sh does not run {PILOTS[domain]}"
    declared = set(re.findall(r"add_argument\(\s*\"(--[a-z0-9-]+)\"", bench))
    used = {m for ln in _commands(text) for m in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", ln)}
    assert used, "no benchmark flags found in paper.sh"
    assert used <= declared, f"{domain}/paper.sh passes undeclared flags {sorted(used - declared)}"


@pytest.mark.parametrize("domain", sorted(PILOTS))
def test_paper_md_documents_every_recipe(domain):
    doc = (BENCH / "PAPER.md").read_text()
    assert f"benchmarks/{domain}/paper.sh" in doc


def _run_compare(domain: str, result: dict, tmp_path: Path) -> list[dict]:
    path = tmp_path / "res.json"
    path.write_text(json.dumps(result))
    r = subprocess.run([sys.executable, str(BENCH / "_paper.py"), domain, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "res_vs_paper.json").read_text())["rows"]


def test_compare_converts_placement_hpwl_to_the_papers_1e5_unit(tmp_path):
    result = {"rows": [{"circuit": "adaptec1", "method": "diffusion", "hpwl": 9.19e5, "legality": 0.99},
                       {"circuit": "adaptec1", "method": "analytical", "hpwl": 1.0e5, "legality": 1.0},
                       {"circuit": "bigblue1", "method": "diffusion", "hpwl": 2.0e5, "legality": 0.97}]}
    rows = {r["metric"]: r for r in _run_compare("placement", result, tmp_path)}
    assert rows["adaptec1 HPWL x1e5"]["measured"] == pytest.approx(9.19)  # the diffusion row, not the baseline
    assert rows["adaptec1 HPWL x1e5"]["paper"] == pytest.approx(9.19)
    assert rows["adaptec2 HPWL x1e5"]["measured"] is None  # not in the run: never filled in
    assert rows["ISPD2005 mean legality (diffusion)"]["measured"] == pytest.approx(0.98)
    assert not any("refine" in m for m in rows)  # no refined rows in this result: no row for them
    mean = rows["mean HPWL x1e5 over the 2 designs run (diffusion)"]  # the paper's average over the same two designs only
    assert mean["measured"] == pytest.approx((9.19 + 2.0) / 2) and mean["paper"] == pytest.approx((9.19 + 2.64) / 2)


def test_compare_reads_fractions_as_the_papers_percent(tmp_path):
    result = {"results": {"unigem": {"atom_stability": 0.5, "validity": 0.25}, "edm": {}}}
    rows = {r["metric"]: r for r in _run_compare("molecules", result, tmp_path)}
    assert rows["UniGEM atom_stability %"]["measured"] == pytest.approx(50.0)
    assert rows["UniGEM validity %"]["measured"] == pytest.approx(25.0)
    assert rows["EDM atom_stability %"]["measured"] is None
    assert rows["UniGEM atom_stability %"]["paper"] == pytest.approx(99.0)


def test_compare_refuses_a_missing_result_file(tmp_path):
    r = subprocess.run([sys.executable, str(BENCH / "_paper.py"), "graphs", str(tmp_path / "none.json")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "not found" in r.stderr


def test_compare_reports_the_refined_placer_beside_the_same_paper_figure(tmp_path):
    result = {"rows": [{"circuit": "adaptec1", "method": "diffusion", "hpwl": 9.0e5, "legality": 1.0},
                       {"circuit": "adaptec1", "method": "diffusion + refine", "hpwl": 8.0e5, "legality": 1.0}]}
    rows = {r["metric"]: r for r in _run_compare("placement", result, tmp_path)}
    refined = rows["mean HPWL x1e5 over the 1 designs run (diffusion + refine)"]
    assert refined["measured"] == pytest.approx(8.0) and refined["paper"] == pytest.approx(9.19)
    assert rows["adaptec1 HPWL x1e5"]["measured"] == pytest.approx(9.0)  # the per-design row: the paper's sampler
