"""AGDiff's extra CLI verb: ``scigen graphs agdiff score`` (anomaly scores of new graphs, one per line)."""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register the extra verbs of ``cls`` (the AGDiff system class) on the system's typer ``app``."""
    import typer

    from scigen.core.cli.verbs import extra_verb

    @extra_verb(app, "score", out="Text file: one anomaly score per graph, in order.")
    def score(run: Path, out: Path, overwrite: bool,
              data: Path = typer.Option(..., "--data", help="Graphs to score (TU folder, GraphML, edge list).")) -> None:
        """Anomaly scores (1 - P(normal); higher = more anomalous) of the graphs in --data."""
        from scigen.core.files import atomic_write_text

        model = cls.load(run)
        scores = model.score(cls.read_data(data))
        atomic_write_text(out, "".join(f"{s:.8g}\n" for s in scores))
        typer.echo(f"wrote {len(scores)} anomaly scores to {out}")
