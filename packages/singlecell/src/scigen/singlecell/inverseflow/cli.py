"""Inverse Flow's extra CLI verb: ``scigen singlecell inverseflow denoise --run RUN --data FILE --out FILE``
(``train``, ``evaluate`` and ``demo`` are the generic verbs)."""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register ``denoise`` on the system's typer ``app`` (``cls`` is a lazy stand-in for the class)."""
    import typer

    from scigen.core.cli.errors import cli_errors
    from scigen.core.threads import torch_threads

    @app.command("denoise")
    def denoise(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
                data: Path = typer.Option(..., "--data", help="Noisy data: .h5ad, .npy or .nc."),
                out: Path = typer.Option(..., "--out", help="File to write (same format as --data)."),
                layer: str = typer.Option(None, "--layer", help="AnnData layer of the noisy values (default: the trained one)."),
                key_added: str = typer.Option(None, "--key-added", help="Layer/uns key to write (default inverse_flow)."),
                steps: int = typer.Option(None, "--steps", min=1, help="IFM Euler steps (default n_steps - 1)."),
                overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
                threads: int = typer.Option(1, "--threads", min=1, help="torch threads (as scigen demo).")) -> None:
        """Denoise a data file with a trained run; AnnData gets a new layer with provenance in uns."""
        from scigen.core.errors import InvalidInputError
        from scigen.singlecell.inverseflow.files import check_output_suffix

        with cli_errors(), torch_threads(threads):
            check_output_suffix(data, out)
            if out.exists() and not overwrite:
                raise InvalidInputError(f"--out {out} exists; pass --overwrite to replace it")
            model = cls.load(run)
            obj = model.read_data(data)
            result = model.denoise(obj, layer=layer, key_added=key_added, steps=steps)
            path = model.write_samples(result, out)
        typer.echo(f"denoised {data} -> {path}")
