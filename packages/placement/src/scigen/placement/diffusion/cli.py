"""The placer's extra verb: ``scigen placement diffusion place --run R --netlist D.aux --out DIR``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["register", "write_placements"]


def write_placements(samples, path, *, overwrite: bool = False) -> Path:
    """Write a placed netlist (or a list, one ``000/``, ``001/``, ... folder each) as Bookshelf into the new
    directory ``path``, atomically (``scigen.core.files.atomic_dir``)."""
    from scigen.core.files import atomic_dir
    from scigen.placement.bookshelf import write_bookshelf
    from scigen.placement.netlist import Netlist

    nls = [samples] if isinstance(samples, Netlist) else list(samples)
    with atomic_dir(path, overwrite=overwrite) as tmp:
        for i, nl in enumerate(nls):
            write_bookshelf(nl, tmp if len(nls) == 1 else tmp / f"{i:03d}")
    return Path(path)


def register(cls, app) -> None:
    """Add ``place`` to the system's typer ``app``."""
    import typer

    from scigen.core.cli.verbs import extra_verb, n_samples_option

    @extra_verb(app, "place", out="New output directory (Bookshelf + placement.png + metrics.json).", out_kind="dir",
                overwrite="Replace an earlier output of place at --out.", deprecated_flags={"--samples": "n_samples"})
    def place_cmd(
        run: Path, out: Path, overwrite: bool,
        netlist: Path = typer.Option(..., "--netlist", help="Bookshelf .aux file."),
        n_samples: int = n_samples_option(1, "Samples to draw; the best legal one is kept."),
        steps: int = typer.Option(0, "--steps", help="Sampling steps (0: the run's config)."),
        method: str = typer.Option("", "--method", help="Sampler (default: the run's config, ddpm)."),
        seed: int = typer.Option(0, "--seed"),
        ignore_orientation: bool = typer.Option(False, "--ignore-orientation",
                                                help="Read objects oriented other than N in the N frame (no "
                                                     "rotation or flip of sizes and pin offsets is applied)."),
    ) -> None:
        """Place a Bookshelf netlist with a trained run; write Bookshelf, a plot and metrics (one folder,
        written atomically)."""
        import json

        import matplotlib.pyplot as plt

        from scigen.core.errors import InvalidInputError
        from scigen.core.files import atomic_dir
        from scigen.core.validation import check_count
        from scigen.placement.bookshelf import read_bookshelf, write_bookshelf
        from scigen.placement.plot import plot_placement

        check_count(n_samples, "--n-samples")
        if steps < 0:
            raise InvalidInputError(f"--steps must be a positive int (or 0 for the run's config), got {steps}")
        model = cls.load(run)
        nl = read_bookshelf(netlist, ignore_orientation=ignore_orientation)
        placed, metrics = model.place(nl, best_of=n_samples, steps=steps or None, method=method or None, seed=seed)
        with atomic_dir(out, overwrite=overwrite) as tmp:
            write_bookshelf(placed, tmp)
            fig = plot_placement(placed, tmp / "placement.png", title=f"{nl.name}: HPWL {metrics['hpwl']:.4g}, "
                                 f"legality {metrics['legality']:.4f}")
            plt.close(fig)
            (tmp / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        width = max(len(k) for k in metrics)
        for k, v in metrics.items():
            print(f"{k:<{width}}  {v:.6g}")
