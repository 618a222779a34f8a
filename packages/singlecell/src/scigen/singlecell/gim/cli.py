"""GIM's extra CLI verb: ``scigen singlecell gim generate`` (cells for unseen perturbation conditions).

``predict`` (and its ``--n-cells`` / ``--mode``) is the name before issue 32, kept hidden for one release.
"""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register ``generate`` on the system's typer ``app`` (``cls``: the GIM class, lazily loaded)."""
    import typer

    from scigen.core.cli.verbs import extra_verb, n_samples_option

    @extra_verb(app, "generate", out="Generated cells (.h5ad).", deprecated_names=("predict",),
                deprecated_flags={"--n-cells": "n_samples", "--mode": "intervention"})
    def generate(run: Path, out: Path, overwrite: bool,
                 conditions: Path = typer.Option(..., "--conditions",
                                                 help="CSV (index = perturbation; dose + feature columns) or .h5ad."),
                 n_samples: int = n_samples_option(100, "Cells per condition."),
                 intervention: str = typer.Option("map", "--intervention",
                                                  help="map (the most probable intervention) or mixture (one per cell)."),
                 seed: int = typer.Option(0, "--seed"),
                 devices: int = typer.Option(1, "--devices", min=1,
                                             help="Processes to split the cells over (same result).")) -> None:
        """Generate cells (and target probabilities, in uns['gim']) for the conditions of --conditions."""
        from scigen.core.cli.errors import fail

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
        cells = model.sample(table, n_samples=n_samples, intervention=intervention, seed=seed, devices=devices)
        if devices > 1:
            from lightning.fabric.utilities.rank_zero import rank_zero_only

            if getattr(rank_zero_only, "rank", 0) != 0:  # every rank holds the gathered cells; rank 0 writes
                return
        path = model.write_samples(cells, out)
        typer.echo(f"wrote {cells.n_obs} generated cells to {path}")
