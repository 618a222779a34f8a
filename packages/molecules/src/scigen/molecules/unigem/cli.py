"""The extra CLI verb of UniGEM / EDM: ``scigen molecules unigem predict --run R --data D --out P.csv``."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["add_predict_command", "write_predictions"]


def write_predictions(table, path: str | os.PathLike) -> Path:
    """Write a prediction DataFrame (index: molecule names) as CSV through pandas, atomically (a name
    holding a comma or a quote is quoted, so ``pandas.read_csv(path, index_col=0)`` gives it back)."""
    from scigen.core.files import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp:
        table.to_csv(tmp, float_format="%.6g")
    return path


def add_predict_command(cls, app) -> None:
    """Register ``predict`` on the system's typer app."""
    import typer

    from scigen.core.cli.errors import cli_errors, fail
    from scigen.core.threads import torch_threads

    @app.command("predict")
    def predict(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
                data: Path = typer.Option(..., "--data", help=".xyz or .sdf molecules."),
                out: Path = typer.Option(..., "--out", help="CSV of predicted properties."),
                overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
                threads: int = typer.Option(1, "--threads", help="torch threads.")) -> None:
        """Predict properties of the molecules in --data (physical units) into a CSV."""
        with cli_errors(), torch_threads(threads):
            if out.is_dir():
                fail(f"--out {out} is a directory; give the path of a .csv file")
            if out.exists() and not overwrite:
                fail(f"--out {out} already exists; pass --overwrite to replace it, or choose a new path")
            model = cls.load(run)
            ms = cls.read_data(data)
            path = write_predictions(model.predict(ms), out)
        typer.echo(f"wrote {len(ms)} predictions to {path}")
