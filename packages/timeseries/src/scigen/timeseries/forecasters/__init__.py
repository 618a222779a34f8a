"""Point forecasters ``(X [B, context, N]) -> Ŷ [B, horizon, N]``, shared by NsDiff (its ``f``) and D3U.

* :class:`~scigen.timeseries.forecasters.patchtst.PatchTST` (Nie et al. 2023), per-variable tokens;
* :class:`~scigen.timeseries.forecasters.itransformer.ITransformer` (Liu et al. 2024), one token per variable;
* :class:`~scigen.timeseries.forecasters.nstransformer.NSTransformer` (Liu et al. 2022), no per-variable tokens.

Any ``nn.Module`` with that call signature is a forecaster; one that also has
``forward_with_tokens(X) -> (Ŷ, tokens [B, N, ...])`` exposes per-variable tokens (D3U's condition).
:func:`check_forecaster` runs one probe batch and names the shape expected and received.
"""

from __future__ import annotations

from torch import Tensor, nn

__all__ = ["FORECASTERS", "build_forecaster", "check_forecaster", "forecast_and_tokens", "uses_marks"]

#: built-in forecasters by config name
FORECASTERS = ("patchtst", "itransformer", "nstransformer")


def build_forecaster(name: str, n_vars: int, context: int, horizon: int, *, d_model: int, n_heads: int,
                     e_layers: int, d_ff: int, dropout: float, patch_len: int = 16, stride: int = 8,
                     d_layers: int = 1, label_len: int | None = None, projector_hidden: int = 64,
                     norm: str = "layer", time_features: int = 0) -> nn.Module:
    """A built-in forecaster by name (:data:`FORECASTERS`) with the given widths; ``norm`` is PatchTST's
    encoder norm (``"layer"`` or the paper's ``"batch"``), ``time_features`` the number of calendar
    features NS-Transformer embeds (0 = none)."""
    common = dict(d_model=d_model, n_heads=n_heads, e_layers=e_layers, d_ff=d_ff, dropout=dropout)
    if name == "patchtst":
        from scigen.timeseries.forecasters.patchtst import PatchTST

        return PatchTST(n_vars, context, horizon, patch_len=patch_len, stride=stride, norm=norm, **common)
    if name == "itransformer":
        from scigen.timeseries.forecasters.itransformer import ITransformer

        return ITransformer(n_vars, context, horizon, **common)
    if name == "nstransformer":
        from scigen.timeseries.forecasters.nstransformer import NSTransformer

        return NSTransformer(n_vars, context, horizon, label_len=context // 2 if label_len is None else label_len,
                             d_layers=d_layers, projector_hidden=projector_hidden, time_features=time_features,
                             **common)
    from scigen.core.errors import InvalidInputError

    raise InvalidInputError(f"unknown forecaster {name!r}; valid: {', '.join(FORECASTERS)} (or pass an nn.Module)")


def uses_marks(module: nn.Module) -> bool:
    """Whether ``module`` takes calendar marks as its second input (``time_features > 0``)."""
    return int(getattr(module, "time_features", 0) or 0) > 0


def forecast_and_tokens(module: nn.Module, x: Tensor, marks: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
    """``(Ŷ, tokens or None)``: ``forward_with_tokens`` when the module has it, else ``(module(x), None)``; a
    module that embeds calendar marks (:func:`uses_marks`) is called with ``marks [B, C + H, F]`` too."""
    args = (x, marks) if uses_marks(module) else (x,)
    fwt = getattr(module, "forward_with_tokens", None)
    if callable(fwt):
        return fwt(*args)
    return module(*args), None


def check_forecaster(module: nn.Module, x: Tensor, horizon: int, marks: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
    """Run ``module`` on the probe batch ``x [B, C, N]``; ``InvalidInputError`` unless it returns a finite
    tensor ``[B, horizon, N]`` (and, if it exposes tokens, a finite ``[B, N, ...]``). Returns ``(Ŷ, tokens)``."""
    import torch

    from scigen.core.errors import InvalidInputError

    B, C, N = x.shape
    name = type(module).__name__
    try:
        with torch.no_grad():
            y, tok = forecast_and_tokens(module, x, marks)
    except Exception as exc:  # a user module: report what it was given
        raise InvalidInputError(f"forecaster {name} failed on a batch of shape (batch, context, variables) = "
                                f"{(B, C, N)}: {type(exc).__name__}: {exc}") from exc
    want = (B, horizon, N)
    if not isinstance(y, Tensor) or tuple(y.shape) != want:
        got = tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__
        raise InvalidInputError(f"forecaster {name} returned {got} for an input of shape {(B, C, N)}; expected "
                                f"(batch, horizon, variables) = {want}")
    if not bool(torch.isfinite(y).all()):
        raise InvalidInputError(f"forecaster {name} returned non-finite values (NaN/inf) on the training windows")
    if tok is not None:
        if not isinstance(tok, Tensor) or tok.ndim < 3 or tuple(tok.shape[:2]) != (B, N):
            got = tuple(tok.shape) if isinstance(tok, Tensor) else type(tok).__name__
            raise InvalidInputError(f"forecaster {name}.forward_with_tokens returned tokens {got}; expected "
                                    f"(batch, variables, ...) = ({B}, {N}, ...)")
        if not bool(torch.isfinite(tok).all()):
            raise InvalidInputError(f"forecaster {name} returned non-finite tokens (NaN/inf)")
    return y, tok
