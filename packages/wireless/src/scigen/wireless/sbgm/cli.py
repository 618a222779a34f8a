"""SBGM's extra verb: ``scigen wireless sbgm estimate --run R --data obs.nc --out est.nc``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["register"]


def register(cls, app) -> None:
    """Add ``estimate`` to the system's typer ``app``."""
    import typer

    from scigen.core.cli.main import _threads_option

    @app.command("estimate")
    def estimate_cmd(
        run: Path = typer.Option(..., "--run", help="Run directory written by train."),
        data: Path = typer.Option(..., "--data", help="Observations (.nc / .h5 with y, noise_var, A)."),
        out: Path = typer.Option(..., "--out", help="Output file (.nc / .h5) of the channel estimates h_hat."),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
        threads: int = _threads_option(),
    ) -> None:
        """Estimate channels h_hat = D E[s | y] from observations with a trained run (written atomically)."""
        from scigen.core.cli.errors import cli_errors, fail
        from scigen.core.threads import torch_threads
        from scigen.wireless.channels import read_dataset, write_dataset

        with cli_errors(), torch_threads(threads):
            if out.exists() and not overwrite:
                fail(f"{out} exists; pass --overwrite to replace it")
            model = cls.load(run)
            obs = read_dataset(data)
            h_hat = model.estimate(obs)
            write_dataset(h_hat.to_dataset(name="h_hat"), out, overwrite=overwrite)
            if "h" in obs:
                from scigen.wireless.metrics import nmse_db

                print(f"NMSE_dB  {nmse_db(h_hat.values, obs['h'].values):.4f}")
        print(f"wrote channel estimates to {out}")
