"""SBGM's extra verb: ``scigen wireless sbgm estimate --run R --data obs.nc --out est.nc``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["register"]


def register(cls, app) -> None:
    """Add ``estimate`` to the system's typer ``app``."""
    import typer

    from scigen.core.cli.verbs import extra_verb

    @extra_verb(app, "estimate", out="Output file (.nc / .h5) of the channel estimates h_hat.")
    def estimate_cmd(run: Path, out: Path, overwrite: bool,
                     data: Path = typer.Option(..., "--data", help="Observations (.nc / .h5 with y, noise_var, A).")
                     ) -> None:
        """Estimate channels h_hat = D E[s | y] from observations with a trained run (written atomically)."""
        from scigen.wireless.channels import read_dataset, write_dataset

        model = cls.load(run)
        obs = read_dataset(data)
        h_hat = model.estimate(obs)
        write_dataset(h_hat.to_dataset(name="h_hat"), out, overwrite=overwrite)
        if "h" in obs:
            from scigen.wireless.metrics import nmse_db

            print(f"NMSE_dB  {nmse_db(h_hat.values, obs['h'].values):.4f}")
        print(f"wrote channel estimates to {out}")
