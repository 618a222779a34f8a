"""The options every ``scigen`` verb shares, declared once, and :func:`extra_verb`, which builds a system's
extra verb (``scigen graphs g2pt finetune``, ``scigen weather nowcast forecast``, ...) from them.

A system's light CLI module (named in its domain's ``CLI_COMMANDS``, docs/engine-api.md) writes only what
is its own::

    def add_commands(cls, app):
        from scigen.core.cli.verbs import extra_verb

        @extra_verb(app, "score", out="Text file: one anomaly score per graph.")
        def score(run: Path, out: Path, overwrite: bool,
                  data: Path = typer.Option(..., "--data", help="Graphs to score.")) -> None:
            ...

:func:`extra_verb` adds ``--run``, ``--out``, ``--overwrite`` and ``--threads`` (and ``--n-samples`` where
the verb has an ``n_samples`` parameter), checks ``--out`` before any work, and runs the body under
:func:`~scigen.core.cli.errors.cli_errors` and :func:`~scigen.core.threads.torch_threads`. Old flag names
stay as hidden options for one release: given, they print a deprecation line on standard error naming the
new flag. Nothing here imports torch, so ``--help`` stays light.
"""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import typer

__all__ = ["OUT_KINDS", "TRAIN_OPTIONS_ATTR", "check_out", "extra_verb", "n_samples_option", "overwrite_option",
           "run_option", "sampler_preset_option", "threads_option", "train_options", "warn_deprecated_flag"]

#: where :func:`train_options` leaves a system's declared ``train`` options on its typer app
TRAIN_OPTIONS_ATTR = "_scigen_train_options"

#: what ``--out`` names: a new file, a new folder written atomically, or a saved run (``System.save``'s rule)
OUT_KINDS = ("file", "dir", "run")


def threads_option() -> Any:
    return typer.Option(1, "--threads", min=1, help="torch threads (small models: 1 is fastest; as scigen demo).")


def sampler_preset_option() -> Any:
    return typer.Option(None, "--sampler-preset", metavar="NAME",
                        help="Sampling preset: paper (the paper's sampler) or fast (the cheapest setting measured within "
                             "seed noise of it; the system's README). Default: the run's saved settings.")


def run_option() -> Any:
    return typer.Option(..., "--run", help="Run directory written by train.")


def overwrite_option(help: str = "Replace an existing --out.") -> Any:
    return typer.Option(False, "--overwrite", help=help)


def n_samples_option(default: int, help: str = "Number of samples.") -> Any:
    return typer.Option(default, "--n-samples", help=help)


def warn_deprecated_flag(old: str, new: str) -> None:
    """One line on standard error: ``old`` still works for one release; ``new`` is the name to use."""
    sys.stderr.write(f"warning: {old} is deprecated and will be removed in the next release; use {new} "
                     "(DeprecationWarning)\n")
    sys.stderr.flush()


def check_out(out: Path, overwrite: bool, kind: str = "file") -> None:
    """Refuse ``--out`` before any work: a file path that is a folder, or exists without ``--overwrite``;
    a folder (``kind="dir"``) that exists without ``--overwrite``; a run (``kind="run"``) by the rule of
    ``System.save`` (only a previous scigen run, only with ``--overwrite``)."""
    from scigen.core.cli.errors import fail

    if kind == "run":
        from scigen.core.system.persistence import check_replaceable

        check_replaceable(out, overwrite)
        return
    if kind == "file" and out.is_dir():
        fail(f"--out {out} exists and is a directory; give a file path")
    if out.exists() and not overwrite:
        fail(f"--out {out} already exists; pass --overwrite to replace it, or choose a new path")


def _common(out_help: str, overwrite_help: str, run: bool) -> list[inspect.Parameter]:
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("run", kw, default=run_option(), annotation=Path)] if run else []
    return [*params,
            inspect.Parameter("out", kw, default=typer.Option(..., "--out", help=out_help), annotation=Path),
            inspect.Parameter("overwrite", kw, default=overwrite_option(overwrite_help), annotation=bool),
            inspect.Parameter("threads", kw, default=threads_option(), annotation=int)]


def extra_verb(app: typer.Typer, name: str, *, out: str, out_kind: str = "file", run: bool = True,
               overwrite: str = "Replace an existing --out.", deprecated_flags: dict[str, str] | None = None,
               deprecated_names: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Register the decorated function as the verb ``name`` of ``app`` with the common options added.

    The body takes ``run`` (unless ``run=False``), ``out`` and ``overwrite`` plus its own typer options;
    ``--threads`` is applied around it. ``out`` is the help of ``--out``; ``out_kind`` one of
    :data:`OUT_KINDS` (checked by :func:`check_out` first). ``deprecated_flags`` maps an old flag to the
    body parameter it feeds (``{"--members": "n_samples"}``): a hidden option that warns when used.
    ``deprecated_names``: old verb names kept as hidden commands that warn and run this verb.
    """
    if out_kind not in OUT_KINDS:
        raise ValueError(f"out_kind must be one of {OUT_KINDS}, got {out_kind!r}")
    deprecated_flags = dict(deprecated_flags or {})

    def decorate(fn: Callable) -> Callable:
        hints = typing.get_type_hints(fn)
        own = [p.replace(annotation=hints.get(p.name, p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
               for p in inspect.signature(fn).parameters.values()
               if p.name not in ("run", "out", "overwrite", "threads")]
        by_name = {p.name: p for p in own}
        for flag, target in deprecated_flags.items():
            if target not in by_name:
                raise ValueError(f"deprecated flag {flag} feeds {target!r}, which {fn.__name__} does not take")
        hidden = [inspect.Parameter(f"_deprecated_{i}", inspect.Parameter.KEYWORD_ONLY,
                                    default=typer.Option(None, flag, hidden=True),
                                    annotation=Optional[by_name[target].annotation])  # noqa: UP045 - typer
                  for i, (flag, target) in enumerate(deprecated_flags.items())]
        params = [*_common(out, overwrite, run), *own, *hidden]
        new_flag = {target: _flag_of(by_name[target]) for target in deprecated_flags.values()}

        def verb(**kwargs: Any) -> Any:
            from scigen.core.cli.errors import cli_errors
            from scigen.core.threads import torch_threads

            threads = kwargs.pop("threads")
            for i, (flag, target) in enumerate(deprecated_flags.items()):
                value = kwargs.pop(f"_deprecated_{i}")
                if value is not None:
                    warn_deprecated_flag(flag, new_flag[target])
                    kwargs[target] = value
            with cli_errors():
                check_out(kwargs["out"], kwargs["overwrite"], out_kind)
            with cli_errors(), torch_threads(threads):
                return fn(**kwargs)

        verb.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        verb.__annotations__ = {p.name: p.annotation for p in params}
        verb.__name__, verb.__doc__ = fn.__name__, fn.__doc__
        app.command(name)(verb)
        for old in deprecated_names:
            app.command(old, hidden=True)(_renamed(verb, old, name))
        return fn

    return decorate


def train_options(app: typer.Typer, params: list[inspect.Parameter],
                  apply: Callable[[dict[str, Any]], tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Add a system's own options to the generic ``train`` verb (called from its ``add_commands``).

    ``params``: keyword-only parameters with typer options as defaults (``--noise``, ...). ``apply`` maps
    their values ``{name: value}`` to ``(config_overrides, fit_kwargs)``: fields laid over the config
    (after ``--config``/``--preset``) and keyword arguments of ``fit``. It runs inside the verb's error
    handling, so an :class:`~scigen.core.errors.InvalidInputError` it raises is a one-line CLI error.
    """
    names = [p.name for p in params]
    clash = sorted(set(names) & {"out", "data", "max_steps", "config_file", "preset", "quick", "overwrite",
                                 "checkpoint_dir", "resume", "threads", "devices", "num_nodes", "strategy", "rng"})
    if clash:
        raise ValueError(f"train options {clash} clash with the generic train verb's own")
    setattr(app, TRAIN_OPTIONS_ATTR, ([p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params], apply))


def _renamed(verb: Callable, old: str, new: str) -> Callable:
    def alias(**kwargs: Any) -> Any:
        warn_deprecated_flag(f"the verb {old!r}", f"{new!r}")
        return verb(**kwargs)

    alias.__signature__ = verb.__signature__  # type: ignore[attr-defined]
    alias.__annotations__ = dict(verb.__annotations__)
    alias.__name__, alias.__doc__ = f"{old}_deprecated", f"Deprecated: use {new}."
    return alias


def _flag_of(param: inspect.Parameter) -> str:
    """The first flag a typer option parameter declares (``--n-samples``), else ``--<name>``."""
    decls = getattr(param.default, "param_decls", None) or ()
    return next((d for d in decls if d.startswith("--")), "--" + param.name.replace("_", "-"))
