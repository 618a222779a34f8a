"""SBGD's extra CLI verb: ``scigen graphs sbgd generate`` (samples of a chosen size, e.g. larger
than the training graphs: SBGD's size generalisation)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def add_commands(cls, app) -> None:
    """Register the extra verbs of ``cls`` (the SBGD system class) on the system's typer ``app``."""
    import typer

    from scigen.core.cli.verbs import extra_verb, n_samples_option

    @extra_verb(app, "generate", out="Output file (edge list) or new folder *.graphml.",
                deprecated_flags={"--n": "n_samples"})
    def generate(run: Path, out: Path, overwrite: bool,
                 n_nodes: int = typer.Option(..., "--n-nodes", help="Nodes per generated graph."),
                 n_samples: int = n_samples_option(10, "Graphs to generate."),
                 steps: Optional[int] = typer.Option(None, "--steps", help="Sampler steps (default: the run's config)."),  # noqa: UP045
                 seed: int = typer.Option(0, "--seed")) -> None:
        """Generate --n-samples graphs of --n-nodes nodes each from a trained run."""
        model = cls.load(run)
        graphs = model.sample(n_samples, seed=seed, n_nodes=n_nodes, steps=steps)
        path = model.write_samples(graphs, out)
        typer.echo(f"wrote {len(graphs)} graphs of {n_nodes} nodes to {path}")
