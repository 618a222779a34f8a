"""G2PT's extra CLI verb: ``scigen graphs g2pt finetune`` (rejection-sampling fine-tuning of a run)."""

from __future__ import annotations

from pathlib import Path


def add_commands(cls, app) -> None:
    """Register the extra verbs of ``cls`` (the G2PT system class) on the system's typer ``app``."""
    import typer

    from scigen.core.cli.verbs import extra_verb, n_samples_option
    from scigen.core.errors import InvalidInputError
    from scigen.graphs.g2pt.rewards import REWARDS

    @extra_verb(app, "finetune", out="Run directory to write.", out_kind="run",
                overwrite="Replace an existing saved run at --out.")
    def finetune(run: Path, out: Path, overwrite: bool,
                 reward: str = typer.Option("leaves", "--reward", help=f"One of {', '.join(REWARDS)}."),
                 rounds: int = typer.Option(1, "--rounds", min=1),
                 n_samples: int = n_samples_option(256, "Samples drawn per round."),
                 steps: int = typer.Option(200, "--steps", min=1),
                 keep_fraction: float = typer.Option(0.25, "--keep-fraction"),
                 seed: int = typer.Option(0, "--seed")) -> None:
        """Rejection-sampling fine-tuning of a trained run toward a named reward."""
        if reward not in REWARDS:
            raise InvalidInputError(f"--reward: unknown reward {reward!r}; valid: {', '.join(REWARDS)}")
        model = cls.load(run)
        summary = model.finetune(REWARDS[reward], rounds=rounds, n_samples=n_samples, steps=steps,
                                 keep_fraction=keep_fraction, seed=seed)
        model.save(out, overwrite=overwrite)
        typer.echo(f"mean reward {summary['mean_before']:.4g} -> {summary['mean_after']:.4g}; saved to {out}")
