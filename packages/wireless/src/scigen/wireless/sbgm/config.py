"""SBGM settings: the system configuration (array, OFDM grid, dictionaries), the model and training.

Defaults follow the paper's SIMO setting scaled to our generator (Böck et al., ICML 2025, App. D/E):
a ULA with ``n_antennas`` and an angle grid of ``angle_grid`` points (paper: 16 antennas, 256 atoms),
``n_components = 10`` (demo1: K = 10), EM tolerance 1e-3 on the mean log-likelihood, γ floor 1e-7;
CSVAE latent size 32 (paper L = 32). An OFDM grid sets ``n_subcarriers``/``n_symbols`` > 1 with
delay / Doppler grids (paper: 24 × 14, grids 32 × 32 or 40 × 40, ``kronecker=True``).

The antenna / subcarrier / symbol counts (and a planar ``array``) are read from the training data —
from the dims of its channels ``h`` or its ``n_antennas`` / ``n_subcarriers`` / ``n_symbols`` /
``array`` attributes (:func:`scigen.wireless.channels.observations_from_arrays` writes them) — or set
here; observations that state none of them are refused rather than guessed from the width of ``A``.
The array convention is ``element_spacing`` (wavelengths, ½) and ``steering_sign`` (−1: atoms
``exp(−j2π d n sin θ)``); ``subcarrier_spacing`` is Δf in Hz (``spacing``, its old name, still
loads with a DeprecationWarning). ``em_chunk_size`` (ours, a switch: ``None`` bounds the chunks by
memory) is the number of observations per chunk of CSGMM's EM statistics. Presets: ``tiny``
(64 angle atoms, K = 4: seconds), ``small`` (128 atoms, K = 8: the demo), ``paper`` (256 atoms, K = 10,
1500 EM iterations, CSVAE widths and learning rate of the paper's SIMO demo) = the defaults (the default
budget was 300 steps at lr 5e-4 until no recorded measurement justified it). Every setting and its source:
``paper_preset.json`` beside this file.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults

__all__ = ["SBGMConfig"]


class SBGMConfig(SystemConfig):
    """Fields: geometry and grids, the model (``csgmm`` or ``csvae``), sampling, and ``train``."""

    model: Literal["csgmm", "csvae"] = "csgmm"
    # system configuration (None: taken from the training data) and dictionary grids
    n_antennas: int | None = pydantic.Field(None, ge=1)
    n_subcarriers: int | None = pydantic.Field(None, ge=1)
    n_symbols: int | None = pydantic.Field(None, ge=1)
    #: a uniform planar array of ``rows × cols`` antennas, antenna index row·cols + col; None means a ULA, or read from the data
    array: tuple[pydantic.PositiveInt, pydantic.PositiveInt] | None = None
    angle_grid: int = pydantic.Field(256, ge=1)  # angle atoms (a UPA: along its rows' axis, the horizontal)
    vertical_grid: int = pydantic.Field(32, ge=1)  # a UPA's vertical angle atoms
    delay_grid: int = pydantic.Field(32, ge=1)
    doppler_grid: int = pydantic.Field(32, ge=1)
    element_spacing: float = pydantic.Field(0.5, gt=0, allow_inf_nan=False)  # antenna spacing (wavelengths)
    steering_sign: Literal[-1, 1] = -1  # atoms exp(sign · j2π d n sin θ)
    subcarrier_spacing: float = pydantic.Field(15e3, gt=0, allow_inf_nan=False)  # Δf (Hz)
    symbol_time: float = pydantic.Field(1e-3 / 14, gt=0, allow_inf_nan=False)  # T_sym (s)
    tau_max: float = pydantic.Field(6e-6, gt=0, allow_inf_nan=False)  # delay grid [0, τ_max) (s)
    nu_max: float = pydantic.Field(250.0, gt=0, allow_inf_nan=False)  # Doppler grid [−ν_max, ν_max) (Hz)
    # CSGMM
    n_components: int = pydantic.Field(10, ge=1)
    kronecker: bool = False
    em_tol: float = pydantic.Field(1e-3, ge=0, allow_inf_nan=False)
    gamma_floor: float = pydantic.Field(1e-7, gt=0, allow_inf_nan=False)
    kron_inner_steps: int = pydantic.Field(20, ge=1)
    em_chunk_size: int | None = pydantic.Field(None, ge=1)  # observations per chunk of the EM statistics
    # CSVAE
    latent_dim: int = pydantic.Field(32, ge=1)
    encoder_widths: tuple[int, ...] = (256, 128, 100)
    decoder_channels: tuple[int, ...] = (10, 20, 40, 80)
    log_gamma_min: float = -10.0
    #: "auto": the paper's 2-D decoder (Conv2d, bilinear) when the grid has two non-trivial axes, else 1-D
    csvae_decoder: Literal["auto", "1d", "2d"] = "auto"
    # sampling / data
    max_paths: int | None = pydantic.Field(8, ge=1)  # strongest paths kept per sample (None: all)
    clean_noise_var: float = pydantic.Field(1e-3, gt=0, allow_inf_nan=False)  # ζ when fitting clean channels
    train: TrainingOptions = training_defaults(max_steps=1500, batch_size=128, lr=4e-5, val_every=5)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ()
    SAMPLER_NOTES: ClassVar[dict[str, str]] = {
        "fast": "SBGM draws channels from the learned CSGMM / CSVAE in closed form: no solver, fast = the paper sampler",
    }
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"angle_grid": 64, "n_components": 4, "latent_dim": 8,
                 "encoder_widths": (64, 32), "decoder_channels": (4, 8, 16, 16),
                 "train": {"max_steps": 40, "batch_size": 64, "lr": 2e-3}},
        "small": {"angle_grid": 128, "n_components": 8, "latent_dim": 16,
                  "encoder_widths": (128, 64), "decoder_channels": (8, 16, 32, 32),
                  "train": {"max_steps": 150, "batch_size": 128, "lr": 2e-3}},
        "paper": {"angle_grid": 256, "n_components": 10, "latent_dim": 32,
                  "train": {"max_steps": 1500, "batch_size": 128, "lr": 4e-5}},
    }

    @pydantic.model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        if isinstance(data, dict) and "spacing" in data:
            data = dict(data)
            old = data.pop("spacing")
            if "subcarrier_spacing" in data and data["subcarrier_spacing"] != old:
                raise ValueError("give subcarrier_spacing only (spacing is its deprecated old name), not both")
            warnings.warn("SBGMConfig.spacing is deprecated and will be removed in the next release; use "
                          "subcarrier_spacing (the OFDM subcarrier spacing in Hz)", DeprecationWarning, stacklevel=2)
            data["subcarrier_spacing"] = old
        return data

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> SBGMConfig:
        if len(self.decoder_channels) != 4:
            raise ValueError(f"decoder_channels must have 4 entries (input + three upsampling blocks), "
                             f"got {list(self.decoder_channels)}")
        if self.array is not None and self.n_antennas is not None and self.n_antennas != self.array[0] * self.array[1]:
            raise ValueError(f"array={tuple(self.array)} has rows*cols = {self.array[0] * self.array[1]} antennas "
                             f"but n_antennas = {self.n_antennas}")
        return self

    def grid_shape(self, n_antennas: int, n_subcarriers: int, n_symbols: int) -> tuple[int, int, int]:
        """``(angles, delays, Dopplers)`` for a configuration: 1 on an axis of size 1."""
        return (self.angle_grid if n_antennas > 1 else 1, self.delay_grid if n_subcarriers > 1 else 1,
                self.doppler_grid if n_symbols > 1 else 1)
