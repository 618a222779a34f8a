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

    from scigen.core.cli.verbs import extra_verb

    @extra_verb(app, "predict", out="CSV of predicted properties.")
    def predict(run: Path, out: Path, overwrite: bool,
                data: Path = typer.Option(..., "--data", help=".xyz or .sdf molecules.")) -> None:
        """Predict properties of the molecules in --data (physical units) into a CSV."""
        model = cls.load(run)
        ms = cls.read_data(data)
        path = write_predictions(model.predict(ms), out)
        typer.echo(f"wrote {len(ms)} predictions to {path}")
