"""Facts about the repository layout that the repository tests share."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ("graphs", "molecules", "singlecell", "weather", "wireless", "timeseries", "placement")

#: import name -> folder of its distribution
FOLDERS = {"kernels": ROOT / "kernels", "datasets": ROOT / "datasets", "core": ROOT / "shared"}
FOLDERS.update({d: ROOT / "packages" / d for d in DOMAINS})

#: DESIGN.md section 2: what each distribution may import of ours (besides itself)
ALLOWED = {"kernels": set(), "datasets": set(), "core": {"kernels"}}
ALLOWED.update({d: {"core", "kernels", "datasets"} for d in DOMAINS})

DISTRIBUTION = {"core": "scigen-core", "kernels": "scigen-kernels", "datasets": "scigen-datasets"}
DISTRIBUTION.update({d: f"scigen-{d}" for d in DOMAINS})


def source_files(name: str) -> list[Path]:
    return sorted((FOLDERS[name] / "src" / "scigen" / name).rglob("*.py"))
