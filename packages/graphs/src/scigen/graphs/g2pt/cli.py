"""G2PT's extra CLI verb: ``scigen graphs g2pt finetune`` (rejection-sampling fine-tuning of a run)."""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register the extra verbs of ``cls`` (the G2PT system class) on the system's typer ``app``."""
    import typer

    from scigen.core.cli.errors import cli_errors
    from scigen.core.errors import InvalidInputError
    from scigen.core.threads import torch_threads
    from scigen.graphs.g2pt.rewards import REWARDS

    @app.command("finetune")
    def finetune(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
                 out: Path = typer.Option(..., "--out", help="Run directory to write."),
                 reward: str = typer.Option("leaves", "--reward", help=f"One of {', '.join(REWARDS)}."),
                 rounds: int = typer.Option(1, "--rounds", min=1),
                 n_samples: int = typer.Option(256, "--n-samples", min=2),
                 steps: int = typer.Option(200, "--steps", min=1),
                 keep_fraction: float = typer.Option(0.25, "--keep-fraction"),
                 seed: int = typer.Option(0, "--seed"),
                 overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing saved run at --out."),
                 threads: int = typer.Option(1, "--threads", min=1, help="torch threads (as scigen demo).")) -> None:
        """Rejection-sampling fine-tuning of a trained run toward a named reward."""
        with cli_errors(), torch_threads(threads):
            if reward not in REWARDS:
                raise InvalidInputError(f"--reward: unknown reward {reward!r}; valid: {', '.join(REWARDS)}")
            model = cls.load(run)
            summary = model.finetune(REWARDS[reward], rounds=rounds, n_samples=n_samples, steps=steps,
                                     keep_fraction=keep_fraction, seed=seed)
            model.save(out, overwrite=overwrite)
        typer.echo(f"mean reward {summary['mean_before']:.4g} -> {summary['mean_after']:.4g}; saved to {out}")
