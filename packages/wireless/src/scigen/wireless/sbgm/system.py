"""``wireless/sbgm``: sparse Bayesian generative channel models (Böck et al., ICML 2025).

    data = SBGM.default_data()                      # xarray: y (sample, pilot), noise_var, A, + h for scoring
    model = SBGM(SBGMConfig.preset("small")).fit(data)      # CSGMM by EM on y only (model="csvae": the VAE)
    paths = model.sample(n_samples=100)             # channels h + path_angle / path_delay / path_power
    h_hat = model.estimate(data)                    # ĥ = D Σ_k p(k|y) μ_k(y)
    model.evaluate(data)                            # NMSE (dB), log-likelihood, spread distances
    model.sample(n_samples=10, geometry={"n_antennas": 64})   # a new configuration, no retraining

Training sees only the compressed noisy observations ``y = A D s + n``. How the ``N`` columns of ``A``
are laid out (antennas x subcarriers x symbols, a planar ``array``) must be stated — by the dims of
channels ``h`` in the data, by the data's ``n_antennas`` / ``n_subcarriers`` / ``n_symbols`` / ``array``
attributes (:func:`~scigen.wireless.channels.observations_from_arrays`), by the config, or by a custom
dictionary; observations that state none of it are refused, never read as an ``N``-antenna ULA.
Plain arrays are accepted as channels: 4 axes ``[sample, antenna, subcarrier, symbol]``, or 2 axes
``[sample, element]`` laid out by the config's counts (none set: ``[sample, antenna]``, a SIMO array).
"""

from __future__ import annotations

import json
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
from scigen.wireless.channels import (
    CHANNEL_DIMS,
    GEOMETRY_KEYS,
    as_channels,
    as_observations,
    channel_matrix,
    check_y_chunk,
    read_dataset,
    write_dataset,
)
from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.sbgm.config import SBGMConfig

__all__ = ["DEFAULT_DATA", "SBGM", "SBGMConfig"]

#: the default data: 32-antenna SIMO users of one 3-cluster site, 16 of 32 antennas observed, SNR U[5, 20] dB
DEFAULT_DATA = dict(n_antennas=32, n_pilots=16, pilots="selection", snr_db=(5.0, 20.0), n_clusters=3, site_seed=3)

#: the most channel elements (antennas x subcarriers x symbols) one configuration may have: 2**18 covers a
#: 1024-antenna array, or a 5G NR slot of 3,300 subcarriers x 14 symbols on 4 antennas; beyond it the dense
#: dictionary alone takes minutes to build and most of the memory
MAX_ELEMENTS = 2**18

_HOW = ("say how the channel elements are laid out: SBGMConfig(n_antennas=...) for an antenna array "
        "(array=(rows, cols) for a planar one), n_subcarriers= / n_symbols= for an OFDM grid, or build the data "
        "with scigen.wireless.observations_from_arrays(y, noise_var, A, n_antennas=..., n_subcarriers=..., "
        "n_symbols=...), or include the channels h (sample, antenna, subcarrier, symbol)")


def _array_of(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    arr = np.asarray(value).reshape(-1)
    if arr.size != 2 or not np.all(np.isfinite(arr.astype(float))) or np.any(arr < 1) or np.any(arr != arr.astype(int)):
        raise InvalidInputError(f"the data's array attribute must be (rows, cols) of positive ints, got {value!r}")
    return int(arr[0]), int(arr[1])


def _stated_geometry(obj: Any) -> dict[str, Any]:
    """What the data say about the layout: the channel dims of ``h``, and the geometry attributes."""
    out: dict[str, Any] = {}
    attrs = getattr(obj, "attrs", {}) or {}
    for k in GEOMETRY_KEYS:
        if k in attrs:
            out[k] = int(np.asarray(attrs[k]).reshape(-1)[0])
    if attrs.get("array") is not None:
        out["array"] = _array_of(attrs["array"])
    h = obj["h"] if isinstance(obj, xr.Dataset) and "h" in obj else obj if isinstance(obj, xr.DataArray) else None
    if h is not None and not (h.dims[:1] == ("sample",) and set(h.dims) <= set(CHANNEL_DIMS)):
        raise InvalidInputError(f"the data's channels h have dims {tuple(h.dims)}; expected 'sample' followed by some "
                                f"of {CHANNEL_DIMS[1:]} in this order (e.g. ('sample', 'antenna') for SIMO, ('sample', "
                                "'subcarrier', 'symbol') for an OFDM grid): rename them (.rename({...})) to say the layout")
    if h is not None:
        sizes = dict(h.sizes)
        for k, dim in zip(GEOMETRY_KEYS, CHANNEL_DIMS[1:], strict=True):
            n = int(sizes.get(dim, 1))
            if k in out and out[k] != n:
                raise InvalidInputError(f"the data's attribute {k}={out[k]} disagrees with its channels h "
                                        f"({dim} = {n})")
            out[k] = n
    return out


class _DatasetChunks:
    """``(y, ζ)`` tensors read chunk by chunk from a (possibly lazily loaded) observation Dataset: each pass
    over it reads ``y`` again, ``chunk_size`` samples at a time, checking each chunk."""

    def __init__(self, y: xr.DataArray, zeta: np.ndarray, chunk_size: int, device: torch.device, role: str) -> None:
        self.y, self.zeta, self.chunk_size, self.device, self.role = y, zeta, int(chunk_size), device, role

    def __iter__(self):
        for lo in range(0, self.y.shape[0], self.chunk_size):
            yc = check_y_chunk(self.y.isel(sample=slice(lo, lo + self.chunk_size)).values, self.role)
            yield (torch.as_tensor(yc, dtype=torch.complex128, device=self.device),
                   torch.as_tensor(self.zeta[lo : lo + self.chunk_size], dtype=torch.float64, device=self.device))


class SBGM(System):
    """CSGMM / CSVAE channel models on compressed observations (see module docstring)."""

    domain = "wireless"
    name = "sbgm"
    description = "SBGM (ICML 2025): CSGMM/CSVAE over angle/delay-Doppler dictionaries, trained on compressed pilots."
    Config = SBGMConfig

    # ---------------------------------------------------------------- wiring
    @property
    def geometry(self) -> dict[str, Any]:
        """``n_antennas``, ``n_subcarriers``, ``n_symbols`` of the training configuration (and ``array`` =
        ``(rows, cols)`` for a planar array)."""
        if "geometry" not in self.metadata:
            self.require_trained("using its system configuration")
        g = dict(self.metadata["geometry"])
        if g.get("array") is not None:
            g["array"] = tuple(int(v) for v in g["array"])
        else:
            g.pop("array", None)
        return g

    def _new_geometry(self, geometry: dict[str, Any]) -> dict[str, Any]:
        g = self.geometry
        if self.metadata.get("custom_dictionary"):
            raise InvalidInputError("this model was fitted with a custom dictionary, which has one configuration: "
                                    "geometry= does not apply")
        valid = set(g) | ({"array"} if "array" in g else set())
        unknown = sorted(set(geometry) - valid)
        if unknown:
            raise InvalidInputError(f"geometry has unknown keys {unknown}; valid: {sorted(valid)}"
                                    + ("" if "array" in g else " (the model was trained on a linear array)"))
        new = dict(g)
        if "array" in g:
            if "array" not in geometry:
                raise InvalidInputError(f"the model was trained on a planar array {g['array']}: give geometry="
                                        "{'array': (rows, cols)} (n_antennas follows from it)")
            arr = geometry["array"]
            if not isinstance(arr, (tuple, list)) or len(arr) != 2:
                raise InvalidInputError(f"geometry array must be (rows, cols), got {arr!r}")
            new["array"] = (int(check_count(arr[0], "array rows")), int(check_count(arr[1], "array cols")))
            n = new["array"][0] * new["array"][1]
            if "n_antennas" in geometry and int(geometry["n_antennas"]) != n:
                raise InvalidInputError(f"geometry array={new['array']} has {n} antennas but n_antennas = "
                                        f"{geometry['n_antennas']}")
            new["n_antennas"] = n
            for old, now, axis in ((g["array"][0], new["array"][0], "rows"), (g["array"][1], new["array"][1], "cols")):
                if (old > 1) != (now > 1):
                    raise InvalidInputError(f"geometry array {axis}={now}: the model was trained with {axis}={old}, so "
                                            "its grid along that axis is " + ("absent" if old == 1 else "needed"))
        for k, v in geometry.items():
            if k != "array":
                new[k] = int(check_count(v, k))
        for k in GEOMETRY_KEYS:
            if (g[k] > 1) != (new[k] > 1):
                raise InvalidInputError(f"geometry {k}={new[k]}: the model was trained with {k}={g[k]}, so its grid "
                                        "along that axis is " + ("absent" if g[k] == 1 else "needed"))
        return new

    def dictionary(self, geometry: dict[str, Any] | None = None) -> Dictionary:
        """The dictionary of the training configuration, or of ``geometry`` (antenna / subcarrier / symbol
        counts, or a planar ``array``, overriding it) on the same grids — the configuration transfer of the
        paper. Built once per configuration and kept."""
        g = self._new_geometry(geometry) if geometry else self.geometry
        custom = self.metadata.get("custom_dictionary")
        c = self.config
        key = json.dumps([g, c.model_dump(mode="json"), bool(custom)], sort_keys=True, default=str)
        cache = self.__dict__.setdefault("_dictionaries", {})
        if key in cache:
            return cache[key]
        if custom:
            d = self._custom
        else:
            array = g.get("array")
            a, dd, v = c.grid_shape(g["n_antennas"], g["n_subcarriers"], g["n_symbols"])
            if array is not None:  # a planar array: angle_grid horizontal (cols), vertical_grid vertical (rows)
                a = (c.angle_grid if array[1] > 1 else 1) * (c.vertical_grid if array[0] > 1 else 1)
            elements, atoms = g["n_antennas"] * g["n_subcarriers"] * g["n_symbols"], a * dd * v
            if elements > MAX_ELEMENTS or max_count_for_memory(16 * atoms) < elements:  # a dense [elements, atoms]
                raise InvalidInputError(f"geometry {g}: the dictionary would be a {elements:,} x {atoms:,} complex "
                                        f"matrix ({16 * elements * atoms / 2**30:,.1f} GiB); the limit is "
                                        f"{MAX_ELEMENTS:,} elements (antennas x subcarriers x symbols) and half this "
                                        "machine's memory")
            d = Dictionary.build(g["n_antennas"], g["n_subcarriers"], g["n_symbols"], angle_grid=c.angle_grid,
                                 delay_grid=c.delay_grid, doppler_grid=c.doppler_grid,
                                 subcarrier_spacing=c.subcarrier_spacing, symbol_time=c.symbol_time, tau_max=c.tau_max,
                                 nu_max=c.nu_max, array=array, vertical_grid=c.vertical_grid,
                                 element_spacing=c.element_spacing, steering_sign=c.steering_sign)
        if len(cache) > 8:
            cache.clear()
        cache[key] = d
        return d

    def _grid(self) -> tuple[int, ...]:
        """The grid of the prior's coefficients (the Kronecker CSGMM's factor sizes)."""
        if "grid" in self.metadata:
            return tuple(int(n) for n in self.metadata["grid"])
        return tuple(self.dictionary().kron_grid_shape)

    def build_network(self) -> nn.Module:
        if "geometry" not in self.metadata:
            return nn.ModuleDict()  # built by the first fit, once the array size is known
        c = self.config
        g = self.metadata["geometry"]
        grid = self._grid()
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

    # ---------------------------------------------------------------- custom dictionary (saved with the model)
    def state_tensors(self) -> dict[str, torch.Tensor]:
        out = super().state_tensors()
        if self.metadata.get("custom_dictionary"):
            d = self._custom
            out.update({"dictionary.re": d.custom_matrix.real.contiguous(), "dictionary.im":
                        d.custom_matrix.imag.contiguous(), "dictionary.delays": d.delays,
                        "dictionary.dopplers": d.dopplers})
            if not torch.isnan(d.angles).all():  # no physical grid given: NaN angles, not saved (NaN is refused)
                out["dictionary.angles"] = d.angles
        return out

    def load_state_tensors(self, tensors: dict[str, torch.Tensor], *, source: str = "") -> None:
        own = {k: v for k, v in tensors.items() if k.startswith("dictionary.")}
        if own:
            g = self.metadata["geometry"]
            S = own["dictionary.re"].shape[1]
            angles = own.get("dictionary.angles", torch.full((S,), float("nan"), dtype=torch.float64))
            self._custom = Dictionary(g["n_antennas"], g["n_subcarriers"], g["n_symbols"], angles,
                                      own["dictionary.delays"], own["dictionary.dopplers"],
                                      custom_matrix=torch.complex(own["dictionary.re"], own["dictionary.im"]))
        super().load_state_tensors({k: v for k, v in tensors.items() if not k.startswith("dictionary.")},
                                   source=source)

    # ---------------------------------------------------------------- data
    def _as_data(self, data: Any, role: str) -> Any:
        """A path read; a numpy / torch channel array turned into a channel Dataset (module docstring)."""
        if isinstance(data, (str, os.PathLike)):
            lazy = self.config.em_chunk_size is not None and Path(data).suffix in (".h5", ".hdf5")
            return read_dataset(data, lazy=lazy)
        if isinstance(data, (xr.Dataset, xr.DataArray)):
            return data
        if hasattr(data, "detach") or isinstance(data, (np.ndarray, list)):
            arr = data.detach().cpu().numpy() if hasattr(data, "detach") else np.asarray(data)
            if arr.ndim == 2:
                c = self.config
                if "geometry" in self.metadata:
                    g = self.geometry
                else:
                    given = {k: getattr(c, k) for k in GEOMETRY_KEYS if getattr(c, k) is not None}
                    if c.array is not None:
                        given["n_antennas"] = c.array[0] * c.array[1]
                    g = {k: given.get(k, 1) for k in GEOMETRY_KEYS} if given else None
                if g is not None:
                    n = g["n_antennas"] * g["n_subcarriers"] * g["n_symbols"]
                    if arr.shape[1] != n:
                        raise InvalidInputError(f"{role}: a [sample, element] channel array of shape {arr.shape} does "
                                                f"not fit the layout {g} ({n} elements)")
                    arr = arr.reshape(arr.shape[0], g["n_antennas"], g["n_subcarriers"], g["n_symbols"])
            elif arr.ndim != 4:
                raise InvalidInputError(f"{role}: a channel array must be [sample, antenna, subcarrier, symbol] or "
                                        f"[sample, element], got shape {arr.shape}; observations go in an xarray "
                                        "Dataset (scigen.wireless.observations_from_arrays(y, noise_var, A, ...))")
            ds = as_channels(arr, role).to_dataset(name="h")
            if self.config.array is not None:
                ds.attrs["array"] = np.asarray(self.config.array)
            return ds
        raise InvalidInputError(f"{role} must be an xarray Dataset of observations (y, noise_var, A) or channels (h), a "
                                f"complex channel array, or a .nc / .h5 file; got {type(data).__name__}")

    def _observations(self, data: Any, role: str, geometry: dict[str, Any] | None = None, *, lazy_y: bool = False,
                      ) -> tuple[Any, Any, torch.Tensor]:
        """``(y, ζ, A)`` as complex128 / float64 tensors; a channel set without ``y`` is observed clean
        (``A = I``, ``ζ = clean_noise_var``: the "trained on clean channels" setting). ``lazy_y``: ``y`` as
        its (unread) DataArray and ``ζ`` as numpy, for chunked reading."""
        data = self._as_data(data, role)
        if isinstance(data, xr.DataArray) or (isinstance(data, xr.Dataset) and "y" not in data and "h" in data):
            H = channel_matrix(as_channels(data, role))
            y, A = H, np.eye(H.shape[1], dtype=np.complex128)
            zeta = np.full(H.shape[0], self.config.clean_noise_var)
            lazy_y = False
        else:
            y, zeta, A = as_observations(data, role, load_y=not lazy_y)
        if y.shape[1] != A.shape[0]:
            raise InvalidInputError(f"{role}: y has {y.shape[1]} pilots (shape {tuple(y.shape)}) but the pilot matrix A "
                                    f"has shape {A.shape}; expected A of shape ({y.shape[1]}, n_elements)")
        if "geometry" in self.metadata:
            d = self.dictionary(geometry)
            if A.shape[1] != d.n_elements:
                raise InvalidInputError(f"{role}: pilot matrix A has shape {A.shape}; the model's dictionary has N = "
                                        f"{d.n_elements} rows ({d.n_antennas} antennas x {d.n_subcarriers} subcarriers x "
                                        f"{d.n_symbols} symbols); pass geometry= for another configuration")
            stated = _stated_geometry(data)
            want = {**self.geometry, **(self._new_geometry(geometry) if geometry else {})}
            clash = {k: (v, want.get(k)) for k, v in stated.items() if want.get(k) != v and not (k == "array" and
                                                                                                  v is None)}
            if clash:
                raise InvalidInputError(f"{role} states the layout {stated}, but the model's is {want} (differs in "
                                        f"{sorted(clash)}); pass geometry= for another configuration of the same grids")
        dev = self.device
        A_t = torch.as_tensor(A, dtype=torch.complex128, device=dev)
        if lazy_y:
            return y, zeta, A_t
        return (torch.as_tensor(y, dtype=torch.complex128, device=dev),
                torch.as_tensor(zeta, dtype=torch.float64, device=dev), A_t)

    def _set_geometry(self, data: Any, A: torch.Tensor, role: str, custom: Dictionary | None = None) -> None:
        c = self.config
        stated = _stated_geometry(data)
        sources = {}
        if custom is not None and custom.n_antennas * custom.n_subcarriers * custom.n_symbols != 0 and \
                getattr(custom, "_layout_stated", True):
            sources["the custom dictionary"] = {"n_antennas": custom.n_antennas, "n_subcarriers": custom.n_subcarriers,
                                                "n_symbols": custom.n_symbols}
        conf = {k: getattr(c, k) for k in GEOMETRY_KEYS if getattr(c, k) is not None}
        if c.array is not None:
            conf["array"] = tuple(c.array)
            conf.setdefault("n_antennas", c.array[0] * c.array[1])
        sources["the config"] = conf
        sources[role] = stated
        g: dict[str, Any] = {}
        origin: dict[str, str] = {}
        for src, vals in sources.items():
            for k, v in vals.items():
                if v is None:
                    continue
                if k in g and g[k] != v:
                    raise InvalidInputError(f"{src} has {k}={v} but {origin[k]} has {k}={g[k]}")
                g[k], origin[k] = v, src
        if not any(k in g for k in GEOMETRY_KEYS):
            raise InvalidInputError(f"{role}: the pilot matrix A has {A.shape[1]} columns (channel elements), but nothing "
                                    f"says whether they are antennas, subcarriers or symbols; {_HOW}")
        if "array" in g:
            g.setdefault("n_antennas", g["array"][0] * g["array"][1])
            if g["n_antennas"] != g["array"][0] * g["array"][1]:
                raise InvalidInputError(f"array={g['array']} has {g['array'][0] * g['array'][1]} antennas but "
                                        f"n_antennas = {g['n_antennas']}")
        geo = {k: int(g.get(k, 1)) for k in GEOMETRY_KEYS}
        if "array" in g:
            geo["array"] = list(g["array"])
        n = geo["n_antennas"] * geo["n_subcarriers"] * geo["n_symbols"]
        if n != A.shape[1]:
            raise InvalidInputError(f"{role}: pilot matrix A has shape {tuple(A.shape)}; expected (n_pilots, {n}) for "
                                    f"the layout {geo} (from {sorted(set(origin.values()))}); {_HOW}")
        self.metadata["geometry"] = geo
        self.metadata["n_pilots"] = int(A.shape[0])
        if custom is not None:
            if custom.n_elements != n:
                raise InvalidInputError(f"the custom dictionary has {custom.n_elements} rows but the layout {geo} has "
                                        f"{n} channel elements")
            self.metadata["custom_dictionary"] = True
            self._custom = Dictionary(geo["n_antennas"], geo["n_subcarriers"], geo["n_symbols"], custom.angles,
                                      custom.delays, custom.dopplers, custom_matrix=custom.custom_matrix)
        self.metadata["grid"] = list(self.dictionary().kron_grid_shape)
        self.network = self.make_network()

    def prepare_data(self, data: Any, *, role: str) -> torch.Tensor:
        """CSVAE rows ``[Re y, Im y, ζ]`` (the first training data sets the geometry and builds the network)."""
        from scigen.wireless.sbgm.csvae import pack_rows

        data = self._as_data(data, role)
        y, zeta, A = self._observations(data, role)
        if role == "data" and "geometry" not in self.metadata:
            self._set_geometry(data, A, role, self.__dict__.pop("_pending_dictionary", None))
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
    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None, dictionary: Any = None,
            **options: Any) -> SBGM:
        """Train on observations (Dataset with ``y``, ``noise_var``, ``A``; a ``.nc`` / ``.h5`` file) or on clean
        channels (a Dataset with ``h``, or a complex array: module docstring).

        ``dictionary``: your own dictionary for the first fit — a :class:`~scigen.wireless.dictionaries.Dictionary`
        (``Dictionary.custom(matrix, n_antennas, ...)`` or ``Dictionary.build(...)``) or a complex ``[N, S]``
        matrix — saved with the model, instead of the one the config builds.

        CSGMM: up to ``max_steps`` EM iterations (default ``config.train.max_steps``; stops when the mean
        log-likelihood gain is below ``em_tol``); a second ``fit`` continues from the current mixture. With
        ``config.em_chunk_size`` the EM statistics are summed over chunks of that many observations read one
        at a time from the Dataset (a lazily read ``.h5`` file — ``read_dataset(path, lazy=True)``, or a path —
        is never loaded whole); under an initialised ``torch.distributed`` group each process passes its own
        observations and the statistics are summed over processes. The options that apply are ``seed``
        (initialisation), ``val_every`` (validation log-likelihood cadence) and ``progress`` (a bar over the
        EM iterations, ``True`` draws it anywhere, ``None`` only on a terminal); ``checkpoint_dir`` is
        accepted so that ``scigen ... train`` runs, but EM writes no checkpoint there (each iteration is
        seconds; a killed run is rerun). Every gradient-training option (``lr``, ``batch_size``,
        ``resume=True``, ...) is refused rather than silently ignored (``None`` / ``False`` values ask for
        nothing and pass) (:mod:`scigen.wireless.sbgm.csgmm` says why EM is not the engine's ``fit``).
        CSVAE: the engine's :func:`scigen.core.train.fit` (``options`` override ``config.train``)."""
        custom = None
        if dictionary is not None:
            if "geometry" in self.metadata:
                raise InvalidInputError("dictionary= applies to the first fit only (the model already has its "
                                        "dictionary)")
            custom = self._custom_dictionary(dictionary)
        if self.config.model == "csvae":
            if custom is not None:
                self._pending_dictionary = custom
            return super().fit(data, max_steps=max_steps, val_data=val_data, **options)
        from scigen.wireless.sbgm.csgmm import EM_OPTIONS, TensorChunks, init_csgmm, run_em

        opts = self.training_options().fit_kwargs(max_steps=max_steps, **options)  # validates the options
        ignored = sorted(k for k in set(options) - EM_OPTIONS if options[k] is not None and options[k] is not False)
        if ignored:
            raise InvalidInputError(f"model='csgmm' is fitted by closed-form EM (no optimiser, no Lightning "
                                    f"checkpoints): the option(s) {ignored} do not apply; it takes "
                                    f"{sorted(EM_OPTIONS | {'max_steps', 'val_data', 'dictionary'})}")
        c = self.config
        data = self._as_data(data, "data")
        chunked = c.em_chunk_size is not None and isinstance(data, xr.Dataset) and "y" in data
        y, zeta, A = self._observations(data, "data", lazy_y=chunked)
        fresh = "geometry" not in self.metadata
        if fresh:
            self._set_geometry(data, A, "data", custom)
        D = self.dictionary().matrix.to(self.device)
        phi = A @ D
        if chunked:
            chunks = _DatasetChunks(y, zeta, c.em_chunk_size, self.device, "data")
        else:
            chunks = TensorChunks(y, zeta, c.em_chunk_size, c.n_components)
        if fresh or not self.is_trained:
            init_csgmm(self.network, chunks, None, phi, self.generator(opts.get("seed")))
        val = None
        if val_data is not None:
            yv, zv, Av = self._observations(val_data, "val_data")
            val = (TensorChunks(yv, zv, c.em_chunk_size, c.n_components), None, Av @ D)
        res = run_em(self.network, chunks, None, phi, max_steps=opts["max_steps"], tol=c.em_tol, floor=c.gamma_floor,
                     inner=c.kron_inner_steps, val=val, val_every=opts.get("val_every") or 10,
                     progress=opts.get("progress"))
        self.history.extend(res)
        self.metadata["trained_steps"] = self.history.steps
        return self

    @staticmethod
    def _custom_dictionary(dictionary: Any) -> Dictionary:
        if isinstance(dictionary, Dictionary):
            if dictionary.custom_matrix is not None:
                return dictionary
            return Dictionary(dictionary.n_antennas, dictionary.n_subcarriers, dictionary.n_symbols,
                              dictionary.angles, dictionary.delays, dictionary.dopplers,
                              custom_matrix=dictionary.matrix.clone())
        arr = dictionary.detach().cpu().numpy() if hasattr(dictionary, "detach") else np.asarray(dictionary)
        if arr.ndim != 2:
            raise InvalidInputError(f"dictionary must be a Dictionary or an [N, S] matrix, got shape {arr.shape}")
        d = Dictionary.custom(arr, arr.shape[0])  # the layout of its N rows comes from the data / config
        object.__setattr__(d, "_layout_stated", False)
        return d

    def _gammas(self, n: int, gen) -> torch.Tensor:
        """``γ [n, S]`` of ``n`` prior draws; ``gen``: per-sample streams (row ``i`` from key ``i``) or a generator."""
        net = self.network
        if self.config.model == "csgmm":
            from scigen.core import streams

            # component k ~ Categorical(π) by inversion: k = #{j : F_j <= u}, F the cumulative weights
            u = streams.rand((n,), generator=gen, dtype=torch.float64, device=net.log_pi.device)
            cdf = torch.cumsum(net.log_pi.exp(), 0)
            k = torch.searchsorted(cdf / cdf[-1], u, right=True).clamp_(max=cdf.shape[0] - 1)
            return net.gamma[k]
        from scigen.wireless.sbgm.csvae import log_gamma_prior_draw

        with torch.no_grad():
            return log_gamma_prior_draw(net, n, gen)

    def sample(self, n_samples: int = 100, *, seed: int | None = None, max_paths: int | None = -1,
               geometry: dict[str, Any] | None = None, devices: int = 1) -> xr.Dataset:
        """``n_samples`` channels with their paths (:mod:`scigen.wireless.sbgm.sampling`).

        ``max_paths``: strongest paths kept (default ``config.max_paths``; ``None`` keeps all atoms);
        ``geometry``: another antenna / subcarrier / symbol count (a planar model: ``{"array": (rows, cols)}``)
        on the same grids (no retraining).
        Returns a Dataset: ``h (sample, antenna, subcarrier, symbol)`` and ``path_angle`` (rad),
        ``path_delay`` (s), ``path_doppler`` (Hz), ``path_power``, ``path_index`` ``(sample, path)``.

        Channel ``i`` draws from its own stream keyed by ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`):
        the first ``k`` of ``n`` channels are ``sample(k)``, and ``devices=N`` splits the channels over ``N``
        processes (Lightning Fabric, :func:`~scigen.core.system.sharded.sample_in_shards`) with the same result."""
        from scigen.core.system.sharded import sample_in_shards
        from scigen.wireless.sbgm.sampling import channels_from_coefficients

        self.require_trained("sample")
        check_count(n_samples, "n_samples")
        D = self.dictionary(geometry)
        elements, atoms = D.matrix.shape[-2:]
        # per channel: gammas (float32) and dense + kept coefficients (complex64) over the atoms, h (complex64)
        n = check_count(n_samples, "n_samples", maximum=max_count_for_memory(20 * atoms + 8 * elements),
                        why=f"{n_samples:,} channels of {elements} elements over {atoms} atoms would not fit in memory")
        coefficients = self._coefficient_draw(seed, max_paths)

        def draw(keys: torch.Tensor):
            s_sparse, idx = coefficients(keys)
            return torch.view_as_real(s_sparse), idx  # real view: collectives need no complex support

        s_sparse, idx = sample_in_shards(draw, n, devices=devices)
        return channels_from_coefficients(torch.view_as_complex(s_sparse.contiguous()), idx, D)

    def _coefficient_draw(self, seed: int | None, max_paths: int | None):
        """``keys -> (s_sparse [m, S] complex, index [m, paths])`` of the channels with these indices, each from
        its own stream keyed by ``(seed, key)``."""
        from scigen.core.streams import SampleStreams
        from scigen.wireless.sbgm.sampling import draw_coefficients, strongest_paths

        if max_paths == -1:
            max_paths = self.config.max_paths
        elif max_paths is not None:
            max_paths = check_count(max_paths, "max_paths")
        seed = self.sample_seed(seed)

        def coefficients(keys: torch.Tensor):
            gen = SampleStreams(seed, keys.to(self.device))
            return strongest_paths(draw_coefficients(self._gammas(len(keys), gen), gen), max_paths)

        return coefficients

    def sample_draw(self, *, seed: int | None = None, max_paths: int | None = -1,
                    geometry: dict[str, Any] | None = None):
        """``draw(keys)``: the arrays of :meth:`sample`'s Dataset for the channels with these indices (``h``
        complex ``[m, antenna, subcarrier, symbol]``, the ``path_*`` tables ``[m, path]``), for
        :meth:`~scigen.core.system.base.System.sample_to`: ``model.sample_to("channels", 10**6, devices=4,
        chunk_size=4096)`` writes one folder of ``.npy`` files, channel ``i`` the ``i``-th of ``sample``'s."""
        from scigen.wireless.sbgm.sampling import channel_arrays

        self.require_trained("sample")
        D = self.dictionary(geometry)
        coefficients = self._coefficient_draw(seed, max_paths)
        return lambda keys: channel_arrays(*coefficients(keys), D)

    def coefficients(self, observations: Any, *, geometry: dict[str, Any] | None = None) -> torch.Tensor:
        """``ŝ [B, S]``: the conditional-mean sparse coefficients of each observation."""
        from scigen.wireless.sbgm.estimation import csgmm_coefficients, csvae_coefficients

        self.require_trained("estimate")
        y, zeta, A = self._observations(observations, "observations", geometry)
        phi = A @ self.dictionary(geometry).matrix.to(self.device)
        if self.config.model == "csgmm":
            return csgmm_coefficients(self.network, y, zeta, phi)
        return csvae_coefficients(self.network, y, zeta, phi)

    def estimate(self, observations: Any, *, geometry: dict[str, Any] | None = None) -> xr.DataArray:
        """``ĥ = D ŝ`` per observation as ``(sample, antenna, subcarrier, symbol)`` (module docstring)."""
        D = self.dictionary(geometry)
        s = self.coefficients(observations, geometry=geometry)
        h = (s @ D.matrix.to(s.device).T).cpu().numpy()
        return xr.DataArray(h.reshape(h.shape[0], D.n_antennas, D.n_subcarriers, D.n_symbols), dims=CHANNEL_DIMS,
                            name="h_hat")

    def evaluate(self, data: Any, *, n_samples: int | None = None, seed: int | None = None) -> dict[str, float]:
        """On observations with ground-truth channels ``h``: ``NMSE`` and ``NMSE_dB`` of :meth:`estimate`,
        ``log_lik_per_pilot`` (CSGMM: mean ``log p(y)/M``; CSVAE: mean ELBO/M), and, when the data carry
        planted paths, the 1-Wasserstein distances between the generated and the true per-channel RMS
        angle / delay spreads (``angle_spread_W1_deg``, ``delay_spread_W1_ns``)."""
        from scigen.wireless.metrics import nmse, spread_distances

        self.require_trained("evaluate")
        data = self._as_data(data, "data")
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
