"""SBGD's extra CLI verb: ``scigen graphs sbgd generate`` (samples of a chosen size, e.g. larger
than the training graphs: SBGD's size generalisation)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def add_commands(cls, app) -> None:
    """Register the extra verbs of ``cls`` (the SBGD system class) on the system's typer ``app``."""
    import typer

    from scigen.core.cli.errors import cli_errors, fail
    from scigen.core.threads import torch_threads

    @app.command("generate")
    def generate(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
                 out: Path = typer.Option(..., "--out", help="Output file (edge list) or new folder *.graphml."),
                 n_nodes: int = typer.Option(..., "--n-nodes", help="Nodes per generated graph."),
                 n_samples: int = typer.Option(10, "--n-samples", "--n", min=1),
                 steps: Optional[int] = typer.Option(None, "--steps", help="Sampler steps (default: the run's config)."),  # noqa: UP045
                 seed: int = typer.Option(0, "--seed"),
                 overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
                 threads: int = typer.Option(1, "--threads", min=1, help="torch threads (as scigen demo).")) -> None:
        """Generate --n-samples graphs of --n-nodes nodes each from a trained run."""
        with cli_errors(), torch_threads(threads):
            if out.is_dir() or (out.exists() and not overwrite):
                fail(f"--out {out} already exists; pass --overwrite to replace a file, or choose a new path")
            model = cls.load(run)
            graphs = model.sample(n_samples, seed=seed, n_nodes=n_nodes, steps=steps)
            path = model.write_samples(graphs, out)
        typer.echo(f"wrote {len(graphs)} graphs of {n_nodes} nodes to {path}")
