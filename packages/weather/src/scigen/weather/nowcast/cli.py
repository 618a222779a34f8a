"""The nowcast's extra verb: ``scigen weather nowcast forecast --run R --context F.nc --out FC.nc``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["register"]


def register(cls, app) -> None:
    """Add ``forecast`` to the system's typer ``app`` (``cls`` is a lazy stand-in: no torch at --help)."""
    import typer

    from scigen.core.cli.main import _threads_option

    @app.command("forecast")
    def forecast_cmd(
        run: Path = typer.Option(..., "--run", help="Run directory written by train."),
        context: Path = typer.Option(..., "--context", help="NetCDF/Zarr field; its last context frames are used."),
        out: Path = typer.Option(..., "--out", help="Forecast file to write (.nc or .zarr)."),
        members: int = typer.Option(8, "--members", help="Ensemble members."),
        steps: int = typer.Option(0, "--steps", help="Flow sampler steps (0: the run's config)."),
        method: str = typer.Option("", "--method", help="euler, heun or rk4 (default: the run's config)."),
        stage: str = typer.Option("flow", "--stage", help="flow (ensemble) or mean (stage 1 only)."),
        seed: int = typer.Option(0, "--seed"),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out."),
        threads: int = _threads_option(),
    ) -> None:
        """Forecast after the last frames of --context; write (member, lead_time, y, x) with valid times."""
        from scigen.core.cli.errors import cli_errors, fail
        from scigen.core.errors import InvalidInputError
        from scigen.core.threads import torch_threads
        from scigen.core.validation import check_count
        from scigen.weather.data.io import read_field, write_field

        with cli_errors(), torch_threads(threads):
            check_count(members, "--members")
            if steps < 0:
                raise InvalidInputError(f"--steps must be a positive int (or 0 for the run's config), got {steps}")
            if out.exists() and not overwrite:
                fail(f"--out {out} already exists; pass --overwrite to replace it, or choose a new path")
            model = cls.load(run)
            fc = model.sample(read_field(context), n_samples=members, seed=seed, steps=steps or None,
                              method=method or None, stage=stage)
            write_field(fc, out, overwrite=overwrite)
        print(f"wrote {fc.sizes['member']} member(s) x {fc.sizes['lead_time']} leads to {out}")
