"""Inverse Flow's extra CLI verb: ``scigen singlecell inverseflow denoise --run RUN --data FILE --out FILE``
(``train``, ``evaluate`` and ``demo`` are the generic verbs)."""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register ``denoise`` on the system's typer ``app`` (``cls`` is a lazy stand-in for the class)."""
    import typer

    from scigen.core.cli.verbs import extra_verb

    @extra_verb(app, "denoise", out="File to write (same format as --data).")
    def denoise(run: Path, out: Path, overwrite: bool,
                data: Path = typer.Option(..., "--data", help="Noisy data: .h5ad, .npy or .nc."),
                layer: str = typer.Option(None, "--layer", help="AnnData layer of the noisy values (default: the trained one)."),
                key_added: str = typer.Option(None, "--key-added", help="Layer/uns key to write (default inverse_flow)."),
                steps: int = typer.Option(None, "--steps", min=1, help="IFM Euler steps (default n_steps - 1).")) -> None:
        """Denoise a data file with a trained run; AnnData gets a new layer with provenance in uns."""
        from scigen.singlecell.inverseflow.files import check_output_suffix

        check_output_suffix(data, out)
        model = cls.load(run)
        obj = model.read_data(data)
        result = model.denoise(obj, layer=layer, key_added=key_added, steps=steps)
        path = model.write_samples(result, out)
        typer.echo(f"denoised {data} -> {path}")
