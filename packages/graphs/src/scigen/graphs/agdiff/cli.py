"""AGDiff's extra CLI verb: ``scigen graphs agdiff score`` (anomaly scores of new graphs, one per line)."""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register the extra verbs of ``cls`` (the AGDiff system class) on the system's typer ``app``."""
    import typer

    from scigen.core.cli.errors import cli_errors, fail
    from scigen.core.threads import torch_threads

    @app.command("score")
    def score(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
              data: Path = typer.Option(..., "--data", help="Graphs to score (TU folder, GraphML, edge list)."),
              out: Path = typer.Option(..., "--out", help="Text file: one anomaly score per graph, in order."),
              overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
              threads: int = typer.Option(1, "--threads", min=1, help="torch threads (as scigen demo).")) -> None:
        """Anomaly scores (1 - P(normal); higher = more anomalous) of the graphs in --data."""
        from scigen.core.files import atomic_write_text

        with cli_errors(), torch_threads(threads):
            if out.is_dir():
                fail(f"--out {out} is a directory; give a file path")
            if out.exists() and not overwrite:
                fail(f"--out {out} already exists; pass --overwrite to replace it, or choose a new path")
            model = cls.load(run)
            scores = model.score(cls.read_data(data))
            atomic_write_text(out, "".join(f"{s:.8g}\n" for s in scores))
        typer.echo(f"wrote {len(scores)} anomaly scores to {out}")
