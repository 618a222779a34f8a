"""GIM's extra CLI verb: ``scigen singlecell gim predict`` (cells for unseen perturbation conditions)."""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register ``predict`` on the system's typer ``app`` (``cls``: the GIM class, lazily loaded)."""
    import typer

    from scigen.core.cli.errors import cli_errors, fail
    from scigen.core.threads import torch_threads

    @app.command("predict")
    def predict(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
                conditions: Path = typer.Option(..., "--conditions",
                                                help="CSV (index = perturbation; dose + feature columns) or .h5ad."),
                out: Path = typer.Option(..., "--out", help="Predicted cells (.h5ad)."),
                n_cells: int = typer.Option(100, "--n-cells", min=1),
                mode: str = typer.Option("map", "--mode", help="map or mixture."),
                seed: int = typer.Option(0, "--seed"),
                overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
                threads: int = typer.Option(1, "--threads", min=1, help="torch threads.")) -> None:
        """Predict cells (and target probabilities, in uns['gim']) for the conditions of --conditions."""
        with cli_errors(), torch_threads(threads):
            if out.exists() and (out.is_dir() or not overwrite):
                fail(f"--out {out} already exists; pass --overwrite to replace a file, or choose a new path")
            if not conditions.is_file():
                fail(f"--conditions {conditions}: no such file")
            if conditions.suffix == ".h5ad":
                from scigen.singlecell.io import read_h5ad_file

                table = read_h5ad_file(conditions)
            else:
                import pandas as pd

                try:
                    table = pd.read_csv(conditions, index_col=0)
                except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
                    fail(f"--conditions {conditions}: not a readable CSV ({exc})")
            model = cls.load(run)
            pred = model.predict(table, n_cells=n_cells, mode=mode, seed=seed)
            path = model.write_samples(pred, out)
        typer.echo(f"wrote {pred.n_obs} predicted cells to {path}")
