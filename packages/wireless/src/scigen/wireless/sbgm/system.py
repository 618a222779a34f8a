"""``wireless/sbgm``: sparse Bayesian generative channel models (Böck et al., ICML 2025).

    data = SBGM.default_data()                      # xarray: y (sample, pilot), noise_var, A, + h for scoring
    model = SBGM(SBGMConfig.preset("small")).fit(data)      # CSGMM by EM on y only (model="csvae": the VAE)
    paths = model.sample(n_samples=100)             # channels h + path_angle / path_delay / path_power
    h_hat = model.estimate(data)                    # ĥ = D Σ_k p(k|y) μ_k(y)
    model.evaluate(data)                            # NMSE (dB), log-likelihood, spread distances
    model.sample(n_samples=10, geometry={"n_antennas": 64})   # a new configuration, no retraining

Training sees only the compressed noisy observations ``y = A D s + n``; the array size comes from the
training data's pilot matrix (``A`` has ``antenna·subcarrier·symbol`` columns; the config's
``n_antennas``/``n_subcarriers``/``n_symbols`` when set, else 32-antenna SIMO from a channel set's dims).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
import xarray as xr
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System
from scigen.core.validation import check_count, max_count_for_memory
from scigen.wireless.channels import as_channels, as_observations, channel_matrix, read_dataset, write_dataset
from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.sbgm.config import SBGMConfig

__all__ = ["DEFAULT_DATA", "SBGM", "SBGMConfig"]

#: the default data: 32-antenna SIMO users of one 3-cluster site, 16 of 32 antennas observed, SNR U[5, 20] dB
DEFAULT_DATA = dict(n_antennas=32, n_pilots=16, pilots="selection", snr_db=(5.0, 20.0), n_clusters=3, site_seed=3)


def _geometry_of(obj: Any) -> dict[str, int] | None:
    attrs = getattr(obj, "attrs", {}) or {}
    if isinstance(obj, xr.Dataset) and "h" in obj:
        _, a, k, sym = obj["h"].shape
        return {"n_antennas": int(a), "n_subcarriers": int(k), "n_symbols": int(sym)}
    if all(k in attrs for k in ("n_antennas", "n_subcarriers", "n_symbols")):
        return {k: int(attrs[k]) for k in ("n_antennas", "n_subcarriers", "n_symbols")}
    return None


#: the most channel elements (antennas x subcarriers x symbols) one configuration may have: 2**18 covers a
#: 1024-antenna array, or a 5G NR slot of 3,300 subcarriers x 14 symbols on 4 antennas; beyond it the dense
#: dictionary alone takes minutes to build and most of the memory
MAX_ELEMENTS = 2**18


class SBGM(System):
    """CSGMM / CSVAE channel models on compressed observations (see module docstring)."""

    domain = "wireless"
    name = "sbgm"
    description = "SBGM (ICML 2025): CSGMM/CSVAE over angle/delay-Doppler dictionaries, trained on compressed pilots."
    Config = SBGMConfig

    # ---------------------------------------------------------------- wiring
    @property
    def geometry(self) -> dict[str, int]:
        if "geometry" not in self.metadata:
            self.require_trained("using its system configuration")
        return dict(self.metadata["geometry"])

    def dictionary(self, geometry: dict[str, int] | None = None) -> Dictionary:
        """The dictionary of the training configuration, or of ``geometry`` (antenna / subcarrier / symbol
        counts overriding it) on the same grids — the configuration transfer of the paper."""
        g = self.geometry
        if geometry:
            unknown = sorted(set(geometry) - set(g))
            if unknown:
                raise InvalidInputError(f"geometry has unknown keys {unknown}; valid: {sorted(g)}")
            new = {**g, **{k: int(check_count(v, k)) for k, v in geometry.items()}}
            for k in g:
                if (g[k] > 1) != (new[k] > 1):
                    raise InvalidInputError(f"geometry {k}={new[k]}: the model was trained with {k}={g[k]}, so its grid "
                                            "along that axis is " + ("absent" if g[k] == 1 else "needed"))
            g = new
        c = self.config
        a, d, v = c.grid_shape(g["n_antennas"], g["n_subcarriers"], g["n_symbols"])
        elements, atoms = g["n_antennas"] * g["n_subcarriers"] * g["n_symbols"], a * d * v
        if elements > MAX_ELEMENTS or max_count_for_memory(16 * atoms) < elements:  # a dense [elements, atoms] matrix
            raise InvalidInputError(f"geometry {g}: the dictionary would be a {elements:,} x {atoms:,} complex matrix "
                                    f"({16 * elements * atoms / 2**30:,.1f} GiB); the limit is {MAX_ELEMENTS:,} elements "
                                    "(antennas x subcarriers x symbols) and half this machine's memory")
        return Dictionary.build(g["n_antennas"], g["n_subcarriers"], g["n_symbols"], angle_grid=a, delay_grid=d,
                                doppler_grid=v, spacing=c.spacing, symbol_time=c.symbol_time, tau_max=c.tau_max,
                                nu_max=c.nu_max)

    def build_network(self) -> nn.Module:
        if "geometry" not in self.metadata:
            return nn.ModuleDict()  # built by the first fit, once the array size is known
        c = self.config
        g = self.metadata["geometry"]
        grid = c.grid_shape(g["n_antennas"], g["n_subcarriers"], g["n_symbols"])
        S = int(np.prod(grid))
        if c.model == "csgmm":
            from scigen.wireless.sbgm.csgmm import CSGMMNet

            return CSGMMNet(c.n_components, grid, c.kronecker)
        from scigen.wireless.sbgm.csvae import CSVAENet

        axes = tuple(n for n in grid if n > 1)
        two_d = c.csvae_decoder == "2d" or (c.csvae_decoder == "auto" and len(axes) == 2)
        if two_d and (len(axes) != 2 or any(n % 8 for n in axes)):
            raise InvalidInputError(f"model='csvae' with the 2-D decoder needs exactly two grid axes, each divisible "
                                    f"by 8; the grids are {grid} (csvae_decoder={c.csvae_decoder!r})")
        if not two_d and S % 8:
            raise InvalidInputError(f"model='csvae' upsamples S/8 three times: the grid size S = {S} (grids {grid}) "
                                    "must be divisible by 8")
        N = g["n_antennas"] * g["n_subcarriers"] * g["n_symbols"]
        return CSVAENet(int(self.metadata["n_pilots"]), N, S, latent_dim=c.latent_dim,
                        encoder_widths=tuple(c.encoder_widths), decoder_channels=tuple(c.decoder_channels),
                        log_gamma_min=c.log_gamma_min, grid_2d=axes if two_d else None)

    # ---------------------------------------------------------------- data
    def _observations(self, data: Any, role: str, geometry: dict[str, int] | None = None,
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(y, ζ, A)`` as complex128 / float64 tensors; a channel set without ``y`` is observed clean
        (``A = I``, ``ζ = clean_noise_var``: the "trained on clean channels" setting)."""
        if isinstance(data, (str, os.PathLike)):
            data = read_dataset(data)
        if isinstance(data, xr.DataArray) or (isinstance(data, xr.Dataset) and "y" not in data and "h" in data):
            H = channel_matrix(as_channels(data, role))
            y, A = H, np.eye(H.shape[1], dtype=np.complex128)
            zeta = np.full(H.shape[0], self.config.clean_noise_var)
        else:
            y, zeta, A = as_observations(data, role)
        if y.shape[1] != A.shape[0]:
            raise InvalidInputError(f"{role}: y has {y.shape[1]} pilots (shape {y.shape}) but the pilot matrix A has "
                                    f"shape {A.shape}; expected A of shape ({y.shape[1]}, n_elements)")
        if "geometry" in self.metadata:
            d = self.dictionary(geometry)
            if A.shape[1] != d.n_elements:
                raise InvalidInputError(f"{role}: pilot matrix A has shape {A.shape}; the model's dictionary has N = "
                                        f"{d.n_elements} rows ({d.n_antennas} antennas x {d.n_subcarriers} subcarriers x "
                                        f"{d.n_symbols} symbols); pass geometry= for another configuration")
        dev = self.device
        return (torch.as_tensor(y, dtype=torch.complex128, device=dev),
                torch.as_tensor(zeta, dtype=torch.float64, device=dev),
                torch.as_tensor(A, dtype=torch.complex128, device=dev))

    def _set_geometry(self, data: Any, A: torch.Tensor, role: str) -> None:
        c = self.config
        g = _geometry_of(data) or {"n_antennas": c.n_antennas or A.shape[1],
                                   "n_subcarriers": c.n_subcarriers or 1, "n_symbols": c.n_symbols or 1}
        for k in g:
            if getattr(c, k) is not None and getattr(c, k) != g[k]:
                raise InvalidInputError(f"{role} has {k}={g[k]} but the config sets {k}={getattr(c, k)}")
        if g["n_antennas"] * g["n_subcarriers"] * g["n_symbols"] != A.shape[1]:
            raise InvalidInputError(f"{role}: pilot matrix A has shape {tuple(A.shape)}; expected (n_pilots, "
                                    f"{g['n_antennas'] * g['n_subcarriers'] * g['n_symbols']}) for {g}")
        self.metadata["geometry"] = g
        self.metadata["n_pilots"] = int(A.shape[0])
        self.network = self.make_network()

    def prepare_data(self, data: Any, *, role: str) -> torch.Tensor:
        """CSVAE rows ``[Re y, Im y, ζ]`` (the first training data sets the geometry and builds the network)."""
        from scigen.wireless.sbgm.csvae import pack_rows

        y, zeta, A = self._observations(data, role)
        if role == "data" and "geometry" not in self.metadata:
            self._set_geometry(data, A, role)
            self.network.pilot_re.copy_(A.real)
            self.network.pilot_im.copy_(A.imag)
        if A.shape[0] != self.network.pilot_re.shape[0] or not torch.allclose(A, self.network.pilots):
            raise InvalidInputError(f"{role}: the CSVAE encoder was built for the training pilot matrix "
                                    f"{tuple(self.network.pilot_re.shape)}; {role} has another A {tuple(A.shape)}")
        return pack_rows(y, zeta)

    def training_loss(self, network: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        from scigen.wireless.sbgm.csvae import make_csvae_loss

        return make_csvae_loss(self.dictionary().matrix)(network, batch)

    # ---------------------------------------------------------------- verbs
    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None, **options: Any) -> SBGM:
        """Train on observations (Dataset with ``y``, ``noise_var``, ``A``) or on clean channels.

        CSGMM: up to ``max_steps`` EM iterations (default ``config.train.max_steps``; stops when the mean
        log-likelihood gain is below ``em_tol``); a second ``fit`` continues from the current mixture. The
        options that apply are ``seed`` (initialisation), ``val_every`` (validation log-likelihood cadence) and
        ``progress`` (a bar over the EM iterations); ``checkpoint_dir`` is accepted so that ``scigen ... train``
        runs, but EM writes no checkpoint there (each iteration is seconds; a killed run is rerun). Every
        gradient-training option (``lr``, ``batch_size``, ``resume=True``, ...) is refused rather than
        silently ignored (``None`` / ``False`` values ask for nothing and pass)
        (:mod:`scigen.wireless.sbgm.csgmm` says why EM is not the engine's ``fit``).
        CSVAE: the engine's :func:`scigen.core.train.fit` (``options`` override ``config.train``)."""
        if self.config.model == "csvae":
            return super().fit(data, max_steps=max_steps, val_data=val_data, **options)
        from scigen.wireless.sbgm.csgmm import EM_OPTIONS, init_csgmm, run_em

        opts = self.training_options().fit_kwargs(max_steps=max_steps, **options)  # validates the options
        ignored = sorted(k for k in set(options) - EM_OPTIONS if options[k] is not None and options[k] is not False)
        if ignored:
            raise InvalidInputError(f"model='csgmm' is fitted by closed-form EM (no optimiser, no Lightning "
                                    f"checkpoints): the option(s) {ignored} do not apply; it takes "
                                    f"{sorted(EM_OPTIONS | {'max_steps', 'val_data'})}")
        y, zeta, A = self._observations(data, "data")
        fresh = "geometry" not in self.metadata
        if fresh:
            self._set_geometry(data, A, "data")
        D = self.dictionary().matrix.to(self.device)
        phi = A @ D
        if fresh or not self.is_trained:
            init_csgmm(self.network, y, zeta, phi, self.generator(opts.get("seed")))
        val = None
        if val_data is not None:
            yv, zv, Av = self._observations(val_data, "val_data")
            val = (yv, zv, Av @ D)
        c = self.config
        res = run_em(self.network, y, zeta, phi, max_steps=opts["max_steps"], tol=c.em_tol, floor=c.gamma_floor,
                     inner=c.kron_inner_steps, val=val, val_every=opts.get("val_every") or 10,
                     progress=opts.get("progress"))
        self.history.extend(res)
        self.metadata["trained_steps"] = self.history.steps
        return self

    def _gammas(self, n: int, gen: torch.Generator) -> torch.Tensor:
        net = self.network
        if self.config.model == "csgmm":
            k = torch.multinomial(net.log_pi.exp(), n, replacement=True, generator=gen)
            return net.gamma[k]
        from scigen.wireless.sbgm.csvae import log_gamma_prior_draw

        with torch.no_grad():
            return log_gamma_prior_draw(net, n, gen)

    def sample(self, n_samples: int = 100, *, seed: int | None = None, max_paths: int | None = -1,
               geometry: dict[str, int] | None = None) -> xr.Dataset:
        """``n_samples`` channels with their paths (:mod:`scigen.wireless.sbgm.sampling`).

        ``max_paths``: strongest paths kept (default ``config.max_paths``; ``None`` keeps all atoms);
        ``geometry``: another antenna / subcarrier / symbol count on the same grids (no retraining).
        Returns a Dataset: ``h (sample, antenna, subcarrier, symbol)`` and ``path_angle`` (rad),
        ``path_delay`` (s), ``path_doppler`` (Hz), ``path_power``, ``path_index`` ``(sample, path)``."""
        from scigen.wireless.sbgm.sampling import (
            channels_from_coefficients,
            draw_coefficients,
            strongest_paths,
        )

        self.require_trained("sample")
        check_count(n_samples, "n_samples")
        if max_paths == -1:
            max_paths = self.config.max_paths
        elif max_paths is not None:
            max_paths = check_count(max_paths, "max_paths")
        D = self.dictionary(geometry)
        elements, atoms = D.matrix.shape[-2:]
        # per channel: gammas (float32) and dense + kept coefficients (complex64) over the atoms, h (complex64)
        n = check_count(n_samples, "n_samples", maximum=max_count_for_memory(20 * atoms + 8 * elements),
                        why=f"{n_samples:,} channels of {elements} elements over {atoms} atoms would not fit in memory")
        gen = self.generator(seed)
        s = draw_coefficients(self._gammas(n, gen), gen)
        s_sparse, idx = strongest_paths(s, max_paths)
        return channels_from_coefficients(s_sparse, idx, D)

    def coefficients(self, observations: Any, *, geometry: dict[str, int] | None = None) -> torch.Tensor:
        """``ŝ [B, S]``: the conditional-mean sparse coefficients of each observation."""
        from scigen.wireless.sbgm.estimation import csgmm_coefficients, csvae_coefficients

        self.require_trained("estimate")
        y, zeta, A = self._observations(observations, "observations", geometry)
        phi = A @ self.dictionary(geometry).matrix.to(self.device)
        if self.config.model == "csgmm":
            return csgmm_coefficients(self.network, y, zeta, phi)
        return csvae_coefficients(self.network, y, zeta, phi)

    def estimate(self, observations: Any, *, geometry: dict[str, int] | None = None) -> xr.DataArray:
        """``ĥ = D ŝ`` per observation as ``(sample, antenna, subcarrier, symbol)`` (module docstring)."""
        D = self.dictionary(geometry)
        s = self.coefficients(observations, geometry=geometry)
        h = (s @ D.matrix.to(s.device).T).cpu().numpy()
        from scigen.wireless.channels import CHANNEL_DIMS

        return xr.DataArray(h.reshape(h.shape[0], D.n_antennas, D.n_subcarriers, D.n_symbols), dims=CHANNEL_DIMS,
                            name="h_hat")

    def evaluate(self, data: Any, *, n_samples: int | None = None, seed: int | None = None) -> dict[str, float]:
        """On observations with ground-truth channels ``h``: ``NMSE`` and ``NMSE_dB`` of :meth:`estimate`,
        ``log_lik_per_pilot`` (CSGMM: mean ``log p(y)/M``; CSVAE: mean ELBO/M), and, when the data carry
        planted paths, the 1-Wasserstein distances between the generated and the true per-channel RMS
        angle / delay spreads (``angle_spread_W1_deg``, ``delay_spread_W1_ns``)."""
        from scigen.wireless.metrics import nmse, spread_distances

        self.require_trained("evaluate")
        if isinstance(data, (str, os.PathLike)):
            data = read_dataset(data)
        if not isinstance(data, xr.Dataset) or "h" not in data:
            raise InvalidInputError("evaluate needs a Dataset with the true channels h (sample, antenna, subcarrier, "
                                    "symbol) beside y, noise_var and A")
        h = channel_matrix(as_channels(data, "data"))
        h_hat = self.estimate(data).values.reshape(h.shape[0], -1)
        out = {"NMSE": nmse(h_hat, h)}
        out["NMSE_dB"] = float(10 * np.log10(out["NMSE"]))
        y, zeta, A = self._observations(data, "data")
        phi = A @ self.dictionary().matrix.to(self.device)
        if self.config.model == "csgmm":
            from scigen.wireless.sbgm.csgmm import mean_log_lik

            out["log_lik_per_pilot"] = mean_log_lik(self.network, y, zeta, phi) / y.shape[1]
        else:
            from scigen.wireless.sbgm.csvae import csvae_elbo

            with torch.no_grad():
                elbo, _, _ = csvae_elbo(self.network, y, zeta, phi, generator=self.generator(seed))
            out["log_lik_per_pilot"] = float(elbo.mean()) / y.shape[1]
        if "path_angle" in data:
            gen = self.sample(n_samples or h.shape[0], seed=seed)
            out.update(spread_distances(gen, data))
        return out

    # ---------------------------------------------------------------- CLI / demo
    @classmethod
    def default_data(cls, quick: bool = False, *, seed: int = 0, snr_db: Any = None) -> xr.Dataset:
        """Synthetic SIMO users of one site (:data:`DEFAULT_DATA`): 400 (quick) or 2000 observations with
        their true channels and planted paths."""
        from scigen.wireless.pilots import observe, pilot_matrix
        from scigen.wireless.synthetic import generate_channels, make_site

        d = DEFAULT_DATA
        site = make_site(d["n_clusters"], seed=d["site_seed"])
        ch = generate_channels(400 if quick else 2000, n_antennas=d["n_antennas"], site=site, seed=seed)
        A = pilot_matrix(d["n_antennas"], d["n_pilots"], d["pilots"], seed=d["site_seed"])
        return observe(ch, A, d["snr_db"] if snr_db is None else snr_db, seed=seed + 1)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> xr.Dataset:
        """A ``.nc`` / ``.h5`` file of observations (``y``, ``noise_var``, ``A``) or channels (``h``)."""
        return read_dataset(path)

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """Write generated channels + paths (or estimates) as ``.nc`` / ``.h5``, atomically."""
        return write_dataset(samples, path, overwrite=True)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """Train CSGMM on compressed pilots, estimate against LS / OMP / SBL / LMMSE across SNRs, plot."""
        from scigen.wireless.sbgm.demo import run_demo

        return run_demo(cls, out, quick=quick)
