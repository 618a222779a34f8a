"""The nowcast's extra verb: ``scigen weather nowcast forecast --run R --context F.nc --out FC.nc``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["register"]


def register(cls, app) -> None:
    """Add ``forecast`` to the system's typer ``app`` (``cls`` is a lazy stand-in: no torch at --help)."""
    import typer

    from scigen.core.cli.verbs import extra_verb, n_samples_option

    @extra_verb(app, "forecast", out="Forecast file to write (.nc or .zarr).",
                deprecated_flags={"--members": "n_samples"})
    def forecast_cmd(
        run: Path, out: Path, overwrite: bool,
        context: Path = typer.Option(..., "--context", help="NetCDF/Zarr field; its last context frames are used."),
        n_samples: int = n_samples_option(8, "Ensemble members."),
        steps: int = typer.Option(0, "--steps", help="Flow sampler steps (0: the run's config)."),
        method: str = typer.Option("", "--method", help="euler, heun, rk4 or rk4_38 (default: the run's config)."),
        stage: str = typer.Option("flow", "--stage", help="flow (ensemble) or mean (stage 1 only)."),
        seed: int = typer.Option(0, "--seed"),
        devices: int = typer.Option(1, "--devices", min=1, help="Processes to split the members over (same result)."),
    ) -> None:
        """Forecast after the last frames of --context; write (member, lead_time, y, x) with valid times."""
        from scigen.core.errors import InvalidInputError
        from scigen.core.validation import check_count
        from scigen.weather.data.io import read_field, write_field

        check_count(n_samples, "--n-samples")
        if steps < 0:
            raise InvalidInputError(f"--steps must be a positive int (or 0 for the run's config), got {steps}")
        model = cls.load(run)
        fc = model.sample(read_field(context), n_samples=n_samples, seed=seed, steps=steps or None,
                          method=method or None, stage=stage, devices=devices)
        if devices > 1:
            from lightning.fabric.utilities.rank_zero import rank_zero_only

            if getattr(rank_zero_only, "rank", 0) != 0:  # every rank holds the gathered members; rank 0 writes
                return
        write_field(fc, out, overwrite=overwrite)
        print(f"wrote {fc.sizes['member']} member(s) x {fc.sizes['lead_time']} leads to {out}")
