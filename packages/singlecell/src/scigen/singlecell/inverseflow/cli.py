"""Inverse Flow's CLI: the ``train`` verb's own options (``--noise``, ``--noise-param``, ``--kind``) and the
extra verb ``scigen singlecell inverseflow denoise --run RUN --data FILE --out FILE`` (``train``,
``evaluate`` and ``demo`` are the generic verbs).

``--noise NAME`` picks the noise model (``gaussian``, ``correlated_gaussian``, ``poisson``, ``gamma``,
``jacobi``, ``rayleigh``, ``negative_binomial``), ``--noise-param KEY=VALUE`` (repeatable) its parameters
(``--noise poisson --noise-param k=1``). Without ``--noise`` the configured model is used (Gaussian
σ = 0.1 unless ``--config`` sets one), and data that look like raw counts are refused rather than
trained under it (``fit(on_noise_mismatch="raise")``)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Optional

NOISE_NAMES = ("gaussian", "correlated_gaussian", "poisson", "gamma", "jacobi", "rayleigh", "negative_binomial")


def _value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    try:
        return float(text)
    except ValueError:
        return text


def noise_spec(noise: str | None, params: list[str] | None) -> dict[str, Any] | None:
    """``{"kind": noise, **params}`` from ``--noise`` and ``--noise-param KEY=VALUE`` (None without ``--noise``)."""
    from scigen.core.errors import InvalidInputError

    params = list(params or [])
    if noise is None:
        if params:
            raise InvalidInputError(f"--noise-param {params[0]} needs --noise NAME (one of {', '.join(NOISE_NAMES)})")
        return None
    if noise not in NOISE_NAMES:
        raise InvalidInputError(f"--noise {noise!r} is unknown; valid: {', '.join(NOISE_NAMES)}")
    spec: dict[str, Any] = {"kind": noise}
    for item in params:
        key, sep, val = item.partition("=")
        if not sep or not key.strip():
            raise InvalidInputError(f"--noise-param {item!r} must be KEY=VALUE (e.g. k=1 for poisson)")
        spec[key.strip()] = _value(val)
    from scigen.singlecell.inverseflow.noise import noise_from_spec

    return noise_from_spec(spec).spec()  # a bad parameter fails here, naming the model and the parameter


def _apply_train_options(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    spec = noise_spec(values["noise"], values["noise_param"])
    config = {} if spec is None else {"noise": spec}
    fit = {"on_noise_mismatch": "raise" if spec is None else "warn"}
    if values["kind"] is not None:
        fit["kind"] = values["kind"]
    return config, fit


def add_commands(cls, app) -> None:
    """Register ``train``'s options and ``denoise`` on the system's typer ``app`` (``cls``: a lazy stand-in)."""
    import typer

    from scigen.core.cli.verbs import extra_verb, train_options

    kw = inspect.Parameter.KEYWORD_ONLY
    train_options(app, [
        inspect.Parameter("noise", kw, annotation=Optional[str],  # noqa: UP045 - typer
                          default=typer.Option(None, "--noise", help=f"Noise model: {', '.join(NOISE_NAMES)} "
                                               "(default: the config's, Gaussian sigma 0.1).")),
        inspect.Parameter("noise_param", kw, annotation=Optional[list[str]],  # noqa: UP045 - typer
                          default=typer.Option(None, "--noise-param", help="Noise parameter KEY=VALUE, repeatable "
                                               "(e.g. --noise poisson --noise-param k=1 for raw counts).")),
        inspect.Parameter("kind", kw, annotation=Optional[str],  # noqa: UP045 - typer
                          default=typer.Option(None, "--kind", help="How to read a 2-D .npy: 'image' (one [H, W] "
                                               "image) or 'vectors' (cells x features).")),
    ], _apply_train_options)

    @extra_verb(app, "denoise", out="File to write (same format as --data).")
    def denoise(run: Path, out: Path, overwrite: bool,
                data: Path = typer.Option(..., "--data", help="Noisy data: .h5ad, .npy or .nc."),
                layer: str = typer.Option(None, "--layer", help="AnnData layer of the noisy values (default: the trained one)."),
                key_added: str = typer.Option(None, "--key-added", help="Layer/uns key to write (default inverse_flow)."),
                steps: int = typer.Option(None, "--steps", min=1, help="IFM Euler steps (default n_steps - 1)."),
                kind: str = typer.Option(None, "--kind", help="How to read a 2-D .npy for an image model: 'image'.")) -> None:
        """Denoise a data file with a trained run; AnnData gets a new layer with provenance in uns."""
        from scigen.singlecell.inverseflow.files import check_output_suffix

        check_output_suffix(data, out)
        model = cls.load(run)
        obj = model.read_data(data)
        result = model.denoise(obj, layer=layer, key_added=key_added, steps=steps, kind=kind)
        path = model.write_samples(result, out)
        typer.echo(f"denoised {data} -> {path}")
