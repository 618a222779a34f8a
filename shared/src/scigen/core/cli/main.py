"""The ``scigen`` command.

::

    scigen --version
    scigen list                                   # installed domains and systems
    scigen demo [--domain D] [--quick]            # every installed system's demo + one summary table
    scigen <domain> <system> train|sample|evaluate|demo [...]
    scigen data list|info|fetch|verify|path       # from scigen-datasets, when installed

Domains are discovered through the ``scigen.systems`` entry-point group and extra top-level
commands (``data``) through ``scigen.commands``, so this module never imports a domain package.
An unknown domain or system prints the valid names and exits with status 2.
"""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from scigen.core import __version__
from scigen.core.cli.errors import cli_errors, fail, set_debug
from scigen.core.cli.verbs import (
    TRAIN_OPTIONS_ATTR,
    check_out,
    n_samples_option,
    overwrite_option,
    run_option,
    sampler_preset_option,
    threads_option,
    warn_deprecated_flag,
)
from scigen.core.system.registry import SystemSpec, discover

COMMANDS_GROUP = "scigen.commands"
console = Console(stderr=False)
err_console = Console(stderr=True)


class _NamedGroup(TyperGroup):
    """Typer group whose unknown-command error lists the valid names (exit status 2)."""

    what = "command"

    def resolve_command(self, ctx, args):  # type: ignore[override]
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and self.get_command(ctx, name) is None:
            valid = ", ".join(sorted(self.list_commands(ctx))) or "none"
            fail(f"unknown {self.what} {name!r}; valid names: {valid}")
        return super().resolve_command(ctx, args)


class TopGroup(_NamedGroup):
    what = "command or domain"


class DomainGroup(_NamedGroup):
    what = "system"


class SystemGroup(_NamedGroup):
    what = "action"


_SCALE_DEFAULTS = {"devices": 1, "num_nodes": 1, "strategy": "auto", "rng": "global"}


def _check_checkpoint_clash(out: Path, ckpt: Path) -> None:
    """Refuse, before any training, a checkpoint folder that is the run folder or lies inside/around it:
    the run could never be saved there (or saving would replace its own checkpoints)."""
    o, c = out.resolve(), ckpt.resolve()
    if o == c or o in c.parents or c in o.parents:
        fail(f"--checkpoint-dir {ckpt} and --out {out} overlap: the run is saved to --out once training ends, so "
             "checkpoints must go elsewhere (default: <out>.checkpoints)")
    from scigen.core.system.fingerprint import check_checkpoint_dir_is_ours

    check_checkpoint_dir_is_ours(ckpt)


def _system_app(spec: SystemSpec, *, with_extras: bool) -> typer.Typer:
    """The verbs of one system; the function its domain names in ``CLI_COMMANDS`` adds its own when targeted."""
    app = typer.Typer(cls=SystemGroup, no_args_is_help=True, help=f"The {spec.domain}/{spec.name} system.")

    def run_train(out: Path, data: Path | None, max_steps: int | None, config_file: Path | None,
                  preset: str | None, quick: bool, overwrite: bool, checkpoint_dir: Path | None, resume: bool,
                  threads: int, num_workers: int = 0, extra=None, devices: int = 1, num_nodes: int = 1,
                  strategy: str = "auto", rng: str = "global", precision: str | None = None,
                  compiled: bool = False) -> None:
        """The train verb's body; ``extra()`` (a system's :func:`~scigen.core.cli.verbs.train_options`) gives
        ``(config_overrides, fit_kwargs)``."""
        from scigen.core.cli.io import read_config_file
        from scigen.core.threads import torch_threads

        with cli_errors(), torch_threads(threads):
            config_overrides, fit_kwargs = extra() if extra is not None else ({}, {})
            # Lightning's scale options, passed only when set (a closed-form fit refuses Lightning options)
            scale = {"devices": devices, "num_nodes": num_nodes, "strategy": strategy, "rng": rng}
            fit_kwargs.update({k: v for k, v in scale.items() if v != _SCALE_DEFAULTS[k]})
            # the engine's own switches: passed only when given, so a system that refuses them (CSGMM's EM) runs
            # without them and refuses them by name when asked
            if precision is not None:
                fit_kwargs = {**fit_kwargs, "precision": precision}
            if compiled:
                fit_kwargs = {**fit_kwargs, "compile": True}
            cls = spec.load()
            cfg = read_config_file(config_file) if config_file else None
            if config_overrides:  # the system's own train options (train_options), on top of --config
                cfg = {**(cfg or {}), **config_overrides}
            model = cls(cls.Config.preset(preset, **(cfg or {}))) if preset else cls(cfg)
            dataset = cls.read_data(data) if data is not None else cls.default_data(quick=quick)
            from scigen.core.system.persistence import check_replaceable

            check_replaceable(out, overwrite)  # save's own rule, checked before any training
            ckpt = checkpoint_dir or out.with_name(out.name + ".checkpoints")
            _check_checkpoint_clash(out, ckpt)
            if not resume and (ckpt / "last.ckpt").exists():
                fail(f"{ckpt} holds the checkpoint of an earlier run; pass --resume to continue it, or "
                     "--checkpoint-dir for a fresh one")
            steps = model.training_options().fit_kwargs(max_steps=max_steps)["max_steps"]  # validated first
            if preset is None:
                import torch

                where = "a GPU" if torch.cuda.is_available() else "the CPU"
                err_console.print(f"note: training {spec.domain}/{spec.name} ({model!r}) for {steps} steps with "
                                  f"{model.training_budget()} on {where}; --preset tiny runs in "
                                  "about a minute", markup=False, highlight=False)
            if num_workers:
                fit_kwargs = {"num_workers": num_workers, **fit_kwargs}
            model.fit(dataset, max_steps=max_steps, checkpoint_dir=str(ckpt), resume=resume, **fit_kwargs)
            model.save(out, overwrite=overwrite)
        console.print(f"saved {spec.domain}/{spec.name} run to {out}", markup=False, highlight=False)

    @app.command("train")
    def train(
        out: Path = typer.Option(..., "--out", help="Run directory to write."),
        data: Optional[Path] = typer.Option(None, "--data", help="Training data (default: bundled/synthetic)."),  # noqa: UP045
        max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Optimiser steps."),  # noqa: UP045
        config_file: Optional[Path] = typer.Option(None, "--config", help="JSON file of config fields."),  # noqa: UP045
        preset: Optional[str] = typer.Option(None, "--preset", help="Config preset: tiny, small or paper."),  # noqa: UP045
        quick: bool = typer.Option(False, "--quick", help="Small default data (with no --data)."),
        overwrite: bool = overwrite_option("Replace an existing saved run at --out."),
        checkpoint_dir: Optional[Path] = typer.Option(  # noqa: UP045
            None, "--checkpoint-dir", help="Where training checkpoints go (default: <out>.checkpoints)."),
        resume: bool = typer.Option(False, "--resume", help="Continue the interrupted run in --checkpoint-dir."),
        threads: int = threads_option(),
        num_workers: int = typer.Option(
            0, "--num-workers", min=0,
            help="DataLoader worker processes reading the training batches (data read from disk); 0 = none."),
        devices: int = typer.Option(1, "--devices", min=1, help="Processes (devices) per node (Lightning)."),
        num_nodes: int = typer.Option(1, "--num-nodes", min=1, help="Nodes; start one copy per node (srun, torchrun)."),
        strategy: str = typer.Option("auto", "--strategy", help="Lightning strategy, e.g. ddp."),
        rng: str = typer.Option("global", "--rng", help="global, or per_sample: noise keyed by example (any world size)."),
        precision: Optional[str] = typer.Option(  # noqa: UP045
            None, "--precision", help="Lightning precision of training, e.g. bf16-mixed (default: the config's)."),
        compiled: bool = typer.Option(False, "--compile", help="torch.compile the training step (sampling runs "
                                                               "eagerly)."),
    ) -> None:
        """Train on --data and save the run to --out (checkpointing as it goes; --resume continues)."""
        run_train(out, data, max_steps, config_file, preset, quick, overwrite, checkpoint_dir, resume, threads,
                  num_workers, devices=devices, num_nodes=num_nodes, strategy=strategy, rng=rng,
                  precision=precision, compiled=compiled)

    @app.command("sample")
    def sample(
        run: Path = run_option(),
        out: Path = typer.Option(..., "--out", help="Output file."),
        n_samples: int = n_samples_option(1000),
        seed: int = typer.Option(0, "--seed"),
        overwrite: bool = overwrite_option("Replace an existing --out file."),
        threads: int = threads_option(),
        sampler_preset: Optional[str] = sampler_preset_option(),  # noqa: UP045
        n_old: Optional[int] = typer.Option(None, "--n", hidden=True),  # noqa: UP045 - deprecated: --n-samples
        devices: int = typer.Option(1, "--devices", min=1, help="Processes to split the samples over (same result)."),
        chunk_size: Optional[int] = typer.Option(  # noqa: UP045
            None, "--chunk-size", min=1,
            help="Samples drawn and written per step on each process (memory bound); systems with array samples."),
    ) -> None:
        """Generate --n-samples samples from a trained run and write them to --out.

        A system whose samples are fixed-size arrays writes --out *.npy (one array per sample) or --out FOLDER
        (several: one .npy each) without gathering them when --out ends in .npy or --chunk-size is given: each of
        --devices processes writes its rows, --chunk-size samples at a time, renamed into place when all are
        written."""
        from scigen.core.threads import torch_threads
        from scigen.core.validation import check_count

        if n_old is not None:
            warn_deprecated_flag("--n", "--n-samples")
            n_samples = n_old
        with cli_errors(), torch_threads(threads):
            check_count(n_samples, "--n-samples")
            check_out(out, overwrite)
            model = _with_sampler(spec.load(), run, sampler_preset)
            if (out.suffix == ".npy" or chunk_size is not None) and model.sample_draw(seed=seed) is not None:
                path = model.sample_to(out, n_samples, seed=seed, devices=devices, chunk_size=chunk_size,
                                       overwrite=overwrite)
                from lightning.fabric.utilities.rank_zero import rank_zero_only

                if getattr(rank_zero_only, "rank", 0) == 0:
                    console.print(f"wrote samples to {path}", markup=False, highlight=False)
                return
            if chunk_size is not None:
                fail(f"--chunk-size needs a system whose samples are fixed-size arrays; {spec.domain}/{spec.name} "
                     "writes its own format")
            if devices == 1:
                samples = model.sample_for_cli(n_samples, seed)
            else:
                import inspect

                if "devices" in inspect.signature(model.sample_for_cli).parameters:  # e.g. forecasters' context
                    samples = model.sample_for_cli(n_samples, seed, devices=devices)
                elif "devices" in inspect.signature(model.sample).parameters:
                    samples = model.sample(n_samples=n_samples, seed=seed, devices=devices)
                else:
                    fail(f"{spec.domain}/{spec.name} cannot sample on several processes yet (its sample verb takes "
                         "no devices=); run without --devices")
                from lightning.fabric.utilities.rank_zero import rank_zero_only

                if getattr(rank_zero_only, "rank", 0) != 0:  # every rank holds the gathered samples; rank 0 writes
                    return
            path = model.write_samples(samples, out)
        console.print(f"wrote samples to {path}", markup=False, highlight=False)

    @app.command("evaluate")
    def evaluate(
        run: Path = run_option(),
        data: Optional[Path] = typer.Option(None, "--data", help="Evaluation data (required unless --bundled)."),  # noqa: UP045
        bundled: bool = typer.Option(False, "--bundled", help="Score the bundled/synthetic default data."),
        out: Optional[Path] = typer.Option(None, "--out", help="Write the metrics JSON here."),  # noqa: UP045
        overwrite: bool = overwrite_option("Replace an existing --out file."),
        threads: int = threads_option(),
        sampler_preset: Optional[str] = sampler_preset_option(),  # noqa: UP045
    ) -> None:
        """Compute the paper's metrics of a trained run on --data."""
        import json

        from scigen.core.files import atomic_write_text
        from scigen.core.threads import torch_threads

        with cli_errors(), torch_threads(threads):
            if out is not None:
                check_out(out, overwrite)
            if data is None and not bundled:
                fail("evaluate needs --data FILE (or --bundled to score the bundled default data, which may "
                     "overlap what the model was trained on)")
            cls = spec.load()
            model = _with_sampler(cls, run, sampler_preset)
            if data is None:
                err_console.print("note: scoring the bundled default data (--bundled)", markup=False)
            dataset = cls.read_data(data) if data is not None else cls.default_data(quick=True)
            scores = model.evaluate(dataset)
            _print_metrics(scores)
            if out is not None:
                atomic_write_text(out, json.dumps(scores, indent=2, default=float) + "\n")

    @app.command("demo")
    def demo(
        out: Optional[Path] = typer.Option(None, "--out", help="Report directory."),  # noqa: UP045
        quick: bool = typer.Option(False, "--quick", help="Smaller data and fewer steps."),
        threads: int = threads_option(),
    ) -> None:
        """Train a tiny model on the default data, sample, evaluate, write a report."""
        target = out or Path("scigen-demo") / f"{spec.domain}-{spec.name}"
        with cli_errors():
            result = spec.load().demo(target, quick=quick, threads=threads)
        _print_metrics(result.metrics)
        console.print(f"report: {target} ({result.seconds:.1f} s)", markup=False, highlight=False)

    if with_extras and spec.cli:  # the domain names a light module for its extra verbs: no class import
        module, _, attr = spec.cli.partition(":")
        try:
            register = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            fail(f"extra commands of {spec.domain}/{spec.name} ({spec.cli}) cannot be imported: {exc}")
        register(spec.lazy_class(), app)
        _add_train_options(app, train, run_train)
    return app


def _with_sampler(cls, run: Path, sampler_preset: str | None):
    """The run at ``run`` with the sampling preset ``--sampler-preset`` (``SystemConfig.sampling``); the name
    is checked before the run is read."""
    if sampler_preset is not None:
        cls.Config.sampler_settings(sampler_preset)  # an unknown name: one error listing the valid ones
    model = cls.load(run)
    if sampler_preset is not None:
        model.config = model.config.sampling(sampler_preset)
    return model


def _add_train_options(app: typer.Typer, train, run_train) -> None:
    """Give the generic ``train`` verb the options a system declared with
    :func:`scigen.core.cli.verbs.train_options` (``app`` is the system's typer app)."""
    import inspect

    declared = getattr(app, TRAIN_OPTIONS_ATTR, None)
    if not declared:
        return
    params, apply = declared
    base = list(inspect.signature(train).parameters.values())
    names = [p.name for p in params]

    def train_with_options(**kwargs):
        own = {n: kwargs.pop(n) for n in names}

        def extra():
            return apply(own)  # run inside the verb's error handling: a bad value is a one-line error

        run_train(**kwargs, extra=extra)

    sig_params = [*base, *params]
    train_with_options.__signature__ = inspect.Signature(sig_params)  # type: ignore[attr-defined]
    train_with_options.__annotations__ = {p.name: p.annotation for p in sig_params}
    train_with_options.__name__, train_with_options.__doc__ = "train", train.__doc__
    for info in app.registered_commands:
        if info.name == "train":
            info.callback = train_with_options


def _print_metrics(scores: dict) -> None:
    """Metrics as ``name  value`` lines: readable at any terminal width and when piped to a file."""
    width = max((len(str(k)) for k in scores), default=0)
    for k, v in scores.items():
        shown = f"{v:.6g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
        print(f"{str(k):<{width}}  {shown}")


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"scigen {__version__}")
        raise typer.Exit()


def build_app(argv: list[str] | None = None) -> typer.Typer:
    """Assemble the command tree from the built-in commands and the installed plugins.

    ``argv`` (the arguments about to be parsed) says which system, if any, is targeted: only that
    system's class is imported, to add its extra verbs.
    """
    app = typer.Typer(cls=TopGroup, no_args_is_help=True, add_completion=False,
                      help="scigen: scientific generators (diffusion, flow matching, consistency).")

    @app.callback()
    def _root(version: Optional[bool] = typer.Option(  # noqa: UP045 - typer needs Optional
        None, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."),
              debug: bool = typer.Option(False, "--debug", help="Show full tracebacks for errors."),
              verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug-level runtime messages."),
              quiet: bool = typer.Option(False, "--quiet", "-q", help="Only warnings and errors.")):
        """scigen: scientific generators."""
        if debug:
            set_debug(True)
        if verbose or quiet:
            from scigen.core.log import set_verbosity

            set_verbosity("debug" if verbose else "quiet")

    @app.command("list")
    def list_cmd() -> None:
        """List installed domains and their systems."""
        systems, problems = discover()
        for p in problems:
            err_console.print(f"[yellow]warning:[/] {p}")
        if not systems:
            console.print("No scigen system is registered yet. Install a domain package, "
                          "e.g. `pip install scigen-timeseries`.")
            return
        table = Table("domain", "system", "provided by")
        for domain in sorted(systems):
            for name, spec in sorted(systems[domain].items()):
                table.add_row(domain, name, spec.distribution)
        console.print(table)

    @app.command("demo")
    def demo_cmd(
        domain: Optional[str] = typer.Option(None, "--domain", help="Only this domain."),  # noqa: UP045
        quick: bool = typer.Option(False, "--quick", help="Smaller data and fewer steps."),
        out: Path = typer.Option(Path("scigen-demo"), "--out", help="Directory for the reports."),
        threads: int = threads_option(),
    ) -> None:
        """Run every installed system's demo and print one summary table."""
        from scigen.core.cli.demo import run_demos

        with cli_errors():
            code = run_demos(domain=domain, quick=quick, out=out, console=console, threads=threads)
        raise typer.Exit(code)

    for ep in entry_points(group=COMMANDS_GROUP):
        try:
            plugin = ep.load()
        except Exception as exc:  # a broken plugin must not break the CLI
            err_console.print(f"[yellow]warning:[/] command {ep.name!r} failed to load: {exc}")
            continue
        app.add_typer(plugin, name=ep.name)
    argv = list(argv or [])
    systems, _ = discover()
    for domain, table in sorted(systems.items()):
        group = typer.Typer(cls=DomainGroup, no_args_is_help=True, help=f"Systems of the {domain} domain.")
        for name, spec in sorted(table.items()):
            targeted = len(argv) >= 2 and argv[0] == domain and argv[1] == name
            group.add_typer(_system_app(spec, with_extras=targeted), name=name)
        app.add_typer(group, name=domain)
    return app


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``scigen`` console script."""
    args = sys.argv[1:] if argv is None else list(argv)
    build_app(args)(args=args, prog_name="scigen")
