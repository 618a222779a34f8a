"""Physical dictionaries: ULA angle atoms, OFDM delay and Doppler atoms, and their Kronecker product.

A channel ``h`` flattened in ``(antenna, subcarrier, symbol)`` order is ``h ≈ D s`` with
``D = D_angle ⊗ D_delay ⊗ D_doppler`` (``torch.kron``; C order), each factor on a uniform grid
(Böck et al., ICML 2025, Sec. 4 and App. D; the SIMO and OFDM dictionaries of the paper):

* ULA, element spacing ``d`` wavelengths (default ½) and steering sign ``σ`` (default −1):
  ``D_angle[n, i] = exp(σ j2π d n sin θ_i)`` (``exp(−jπ n sin θ_i)`` by default), ``θ_i`` uniform on
  ``[−π/2, π/2)`` (endpoint excluded); a uniform planar array (``array=(rows, cols)``) is the
  Kronecker product of a vertical and a horizontal ULA dictionary (:func:`upa_atoms`), on a vertical
  grid ``vertical`` and the horizontal grid ``angles`` of spatial angles (both uniform on ``[−π/2, π/2)``);
* delay: ``D_delay[k, i] = exp(−j2π k Δf τ_i)``, ``τ_i`` uniform on ``[0, τ_max)``;
* Doppler: ``D_doppler[l, j] = exp(+j2π l T_sym ν_j)``, ``ν_j`` uniform on ``[−ν_max, ν_max)``;

and ``D`` is scaled by ``S^{−½}`` (``S`` the total grid size), so that ``s ~ CN(0, diag γ)`` with
``Σ γ = S`` gives ``E‖h‖² = N``. A dimension of size 1 gets the trivial factor ``[[1]]`` (grid of one,
parameter 0). The default conventions (½-wavelength spacing, sign −1) are those of
:mod:`scigen.wireless.synthetic`, so a single on-grid path is exactly one (unscaled) atom. Data recorded
with another convention set ``element_spacing`` / ``steering_sign``; any other dictionary (measured array
responses, another basis) is :meth:`Dictionary.custom`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["Dictionary", "delay_atoms", "doppler_atoms", "kron_atoms", "ula_atoms", "upa_atoms"]


def ula_atoms(n_antennas: int, angles: Tensor, *, element_spacing: float = 0.5, sign: int = -1) -> Tensor:
    """``[N, G]`` ULA steering vectors ``exp(sign · j2π d n sin θ)`` for ``angles`` (radians, ``[G]``), element
    spacing ``d = element_spacing`` wavelengths (default ``exp(−jπ n sin θ)``)."""
    if sign not in (-1, 1):
        raise InvalidInputError(f"steering sign must be -1 or +1, got {sign!r}")
    n = torch.arange(n_antennas, dtype=torch.float64)[:, None]
    return torch.exp(sign * 2j * math.pi * float(element_spacing) * n * torch.sin(angles.to(torch.float64))[None, :])


def upa_atoms(n_rows: int, n_cols: int, vertical: Tensor, horizontal: Tensor, *, element_spacing: float = 0.5,
              sign: int = -1) -> Tensor:
    """``[n_rows·n_cols, G_v·G_h]`` steering vectors of a half-wavelength uniform planar (rectangular)
    array, ``exp(−jπ (m sin θ_v + n sin θ_h))`` at element ``(m, n)`` (flattened ``m·n_cols + n``),
    for every pair of the spatial angles ``vertical [G_v]`` × ``horizontal [G_h]`` (atom ``i·G_h + j``).
    With ``sin θ_v = sin(elevation)`` and ``sin θ_h = cos(elevation) sin(azimuth)`` these are the URA's
    plane waves; the dictionary is the Kronecker product of two ULA dictionaries (Böck et al. 2025,
    App. D; Heath & Lozano, Foundations of MIMO Communication, §7.4). ``element_spacing`` / ``sign`` as in
    :func:`ula_atoms` (the same along both axes)."""
    kw = {"element_spacing": element_spacing, "sign": sign}
    return kron_atoms(ula_atoms(n_rows, vertical, **kw), ula_atoms(n_cols, horizontal, **kw))


def delay_atoms(n_subcarriers: int, subcarrier_spacing: float, delays: Tensor) -> Tensor:
    """``[K, G]`` subcarrier responses ``exp(−j2π k Δf τ)`` of path delays ``delays`` (seconds)."""
    k = torch.arange(n_subcarriers, dtype=torch.float64)[:, None]
    return torch.exp(-2j * math.pi * k * subcarrier_spacing * delays.to(torch.float64)[None, :])


def doppler_atoms(n_symbols: int, symbol_time: float, dopplers: Tensor) -> Tensor:
    """``[L, G]`` symbol responses ``exp(+j2π l T ν)`` of Doppler shifts ``dopplers`` (Hz)."""
    ell = torch.arange(n_symbols, dtype=torch.float64)[:, None]
    return torch.exp(2j * math.pi * ell * symbol_time * dopplers.to(torch.float64)[None, :])


def kron_atoms(*factors: Tensor) -> Tensor:
    """``factors[0] ⊗ factors[1] ⊗ ...`` (C order: the last factor's index runs fastest)."""
    out = factors[0]
    for f in factors[1:]:
        out = torch.kron(out, f)
    return out


def _grid(lo: float, hi: float, n: int) -> Tensor:
    """``n`` points uniform on ``[lo, hi)``."""
    return lo + (hi - lo) * torch.arange(n, dtype=torch.float64) / n


@dataclass(frozen=True)
class Dictionary:
    """The angle ⊗ delay ⊗ Doppler dictionary of one system configuration (see the module docstring).

    ``angles`` (rad), ``delays`` (s), ``dopplers`` (Hz) are the three grids (length 1 for a trivial
    dimension); :attr:`matrix` is ``D [N, S]`` with ``N = n_antennas·n_subcarriers·n_symbols`` and
    ``S = len(angles)·len(delays)·len(dopplers)``; :meth:`parameters` maps grid indices to the
    physical values of the paths they stand for.

    A uniform planar array has ``array = (rows, cols)`` (``rows·cols = n_antennas``, antenna index
    ``m·cols + n``) and a vertical grid ``vertical``; its angle factor is ``upa_atoms(rows, cols,
    vertical, angles)``, the flat angle index is ``i_v·len(angles) + i_h``, and :attr:`kron_grid_shape`
    splits the angle axis in two for the Kronecker-factored CSGMM.

    ``element_spacing`` (wavelengths) and ``steering_sign`` set the array convention (:func:`ula_atoms`);
    ``subcarrier_spacing`` is the OFDM subcarrier spacing Δf (Hz). A custom dictionary
    (:meth:`custom`) carries its own ``custom_matrix`` ``[N, S]``, used as given (no scaling)."""

    n_antennas: int
    n_subcarriers: int
    n_symbols: int
    angles: Tensor
    delays: Tensor
    dopplers: Tensor
    subcarrier_spacing: float = 15e3
    symbol_time: float = 1e-3 / 14
    array: tuple[int, int] | None = None
    vertical: Tensor | None = None
    element_spacing: float = 0.5
    steering_sign: int = -1
    custom_matrix: Tensor | None = None

    def __post_init__(self) -> None:
        if self.steering_sign not in (-1, 1):
            raise InvalidInputError(f"Dictionary: steering_sign must be -1 or +1, got {self.steering_sign!r}")
        if not (math.isfinite(self.element_spacing) and self.element_spacing > 0):
            raise InvalidInputError(f"Dictionary: element_spacing (wavelengths) must be > 0, got {self.element_spacing}")
        if self.custom_matrix is not None:
            n_atoms = math.prod(self.grid_shape)
            if tuple(self.custom_matrix.shape) != (self.n_elements, n_atoms):
                raise InvalidInputError(f"Dictionary: the custom matrix has shape {tuple(self.custom_matrix.shape)}; "
                                        f"expected ({self.n_elements}, {n_atoms}) = (antennas*subcarriers*symbols, atoms)")
        if self.array is None:
            if self.vertical is not None:
                raise InvalidInputError("Dictionary: a vertical angle grid needs array=(rows, cols)")
            return
        if len(self.array) != 2 or any(int(r) < 1 for r in self.array):
            raise InvalidInputError(f"Dictionary: array must be (rows, cols) of positive ints, got {self.array}")
        rows, cols = (int(r) for r in self.array)
        if rows * cols != self.n_antennas:
            raise InvalidInputError(f"Dictionary: array={self.array} has rows*cols = {rows * cols} antennas but "
                                    f"n_antennas = {self.n_antennas}")
        if self.vertical is None:
            raise InvalidInputError("Dictionary: array=(rows, cols) needs a vertical angle grid")

    @classmethod
    def build(cls, n_antennas: int = 1, n_subcarriers: int = 1, n_symbols: int = 1, *, angle_grid: int = 1,
              delay_grid: int = 1, doppler_grid: int = 1, subcarrier_spacing: float = 15e3,
              symbol_time: float = 1e-3 / 14, tau_max: float = 6e-6, nu_max: float = 250.0,
              array: tuple[int, int] | None = None, vertical_grid: int = 1, element_spacing: float = 0.5,
              steering_sign: int = -1) -> Dictionary:
        """Uniform grids; a dimension of size 1 gets a one-point grid whatever its ``*_grid`` says.
        With ``array=(rows, cols)`` (a UPA), ``angle_grid`` is the horizontal grid (over ``cols``) and
        ``vertical_grid`` the vertical one (over ``rows``). ``subcarrier_spacing`` Δf in Hz;
        ``element_spacing`` in wavelengths; ``steering_sign`` −1 or +1 (module docstring)."""
        vert = None
        if array is not None:
            if len(array) != 2:
                raise InvalidInputError(f"Dictionary.build: array must be (rows, cols), got {array}")
            rows, cols = (int(r) for r in array)
            if rows * cols != n_antennas:
                raise InvalidInputError(f"Dictionary.build: array={tuple(array)} has rows*cols = {rows * cols} "
                                        f"antennas but n_antennas = {n_antennas}")
            vert = _grid(-math.pi / 2, math.pi / 2, vertical_grid) if rows > 1 else torch.zeros(1, dtype=torch.float64)
            ang = _grid(-math.pi / 2, math.pi / 2, angle_grid) if cols > 1 else torch.zeros(1, dtype=torch.float64)
            array = (rows, cols)
        else:
            ang = _grid(-math.pi / 2, math.pi / 2, angle_grid) if n_antennas > 1 else torch.zeros(1, dtype=torch.float64)
        dly = _grid(0.0, tau_max, delay_grid) if n_subcarriers > 1 else torch.zeros(1, dtype=torch.float64)
        dop = _grid(-nu_max, nu_max, doppler_grid) if n_symbols > 1 else torch.zeros(1, dtype=torch.float64)
        return cls(n_antennas, n_subcarriers, n_symbols, ang, dly, dop, subcarrier_spacing, symbol_time, array, vert,
                   float(element_spacing), int(steering_sign))

    @classmethod
    def custom(cls, matrix, n_antennas: int, n_subcarriers: int = 1, n_symbols: int = 1, *, angles=None,
               delays=None, dopplers=None) -> Dictionary:
        """Your own dictionary ``matrix [N, S]`` (complex; real is cast), ``N = n_antennas·n_subcarriers·
        n_symbols`` in ``(antenna, subcarrier, symbol)`` C order, used as given (no ``S^{−½}`` scaling).
        ``angles`` (rad), ``delays`` (s), ``dopplers`` (Hz): the physical grids of the atoms, whose lengths
        multiply to ``S`` with the atom index in C order (``angles`` of length ``S`` alone: one angle per
        atom); without them generated paths have NaN parameters (``path_index`` still names the atom)."""
        import numpy as np

        if hasattr(matrix, "detach"):
            matrix = matrix.detach().cpu().numpy()
        arr = np.asarray(matrix)
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.number):
            raise InvalidInputError(f"Dictionary.custom: matrix must be a numeric [N, S] array, got shape {arr.shape}, "
                                    f"dtype {arr.dtype}")
        if not np.all(np.isfinite(arr)):
            raise InvalidInputError("Dictionary.custom: matrix contains NaN/inf")
        S = arr.shape[1]
        given = [g for g in (angles, delays, dopplers) if g is not None]

        def grid(g):
            return torch.as_tensor(np.asarray(g, dtype=np.float64).reshape(-1))

        if not given:
            ang, dly, dop = torch.full((S,), float("nan"), dtype=torch.float64), torch.zeros(1), torch.zeros(1)
        else:
            ang, dly, dop = (grid(g) if g is not None else torch.zeros(1, dtype=torch.float64)
                             for g in (angles, delays, dopplers))
        return cls(int(n_antennas), int(n_subcarriers), int(n_symbols), ang, dly.double(), dop.double(),
                   custom_matrix=torch.as_tensor(arr.astype(np.complex128)))

    @property
    def grid_shape(self) -> tuple[int, int, int]:
        """``(angle, delay, Doppler)`` grid sizes; for a UPA the angle size is ``G_v·G_h``."""
        n_ang = len(self.angles) * (len(self.vertical) if self.vertical is not None else 1)
        return (n_ang, len(self.delays), len(self.dopplers))

    @property
    def kron_grid_shape(self) -> tuple[int, ...]:
        """The grid sizes of the Kronecker factors (C order): ``grid_shape`` for a ULA,
        ``(G_v, G_h, G_delay, G_doppler)`` for a UPA."""
        if self.vertical is None:
            return self.grid_shape
        return (len(self.vertical), len(self.angles), len(self.delays), len(self.dopplers))

    def check_channels(self, h, name: str = "channels") -> None:
        """Raise :class:`InvalidInputError` unless ``h`` (array ``[sample, antenna, subcarrier, symbol]`` or a
        DataArray / Dataset with ``h``) has this dictionary's antenna, subcarrier and symbol sizes."""
        shape = tuple((h["h"] if hasattr(h, "data_vars") else h).shape)
        want = (self.n_antennas, self.n_subcarriers, self.n_symbols)
        if len(shape) != 4 or shape[1:] != want:
            geo = f" (array {self.array[0]}x{self.array[1]} = {self.n_antennas} antennas)" if self.array else ""
            raise InvalidInputError(f"{name} has shape {shape}; the dictionary{geo} expects (sample, {want[0]}, "
                                    f"{want[1]}, {want[2]}) as (sample, antenna, subcarrier, symbol)")

    @property
    def factors(self) -> tuple[Tensor, Tensor, Tensor]:
        """The unscaled factor atoms ``(D_angle, D_delay, D_doppler)`` (``D_angle`` a UPA's for an array)."""
        if self.custom_matrix is not None:
            raise InvalidInputError("a custom dictionary has no factor atoms; use .matrix")
        kw = {"element_spacing": self.element_spacing, "sign": self.steering_sign}
        if self.array is not None:
            d_ang = upa_atoms(self.array[0], self.array[1], self.vertical, self.angles, **kw)
        else:
            d_ang = ula_atoms(self.n_antennas, self.angles, **kw)
        return (d_ang, delay_atoms(self.n_subcarriers, self.subcarrier_spacing, self.delays),
                doppler_atoms(self.n_symbols, self.symbol_time, self.dopplers))

    @property
    def n_elements(self) -> int:
        return self.n_antennas * self.n_subcarriers * self.n_symbols

    @property
    def n_atoms(self) -> int:
        a, b, c = self.grid_shape
        return a * b * c

    @functools.cached_property
    def matrix(self) -> Tensor:
        """``D [N, S]`` complex128, scaled by ``S^{−½}`` (a custom dictionary: its matrix as given); built on
        first use and kept (treat it as read-only)."""
        if self.custom_matrix is not None:
            return self.custom_matrix
        return kron_atoms(*self.factors) / math.sqrt(self.n_atoms)

    def parameters(self, index: Tensor) -> dict[str, Tensor]:
        """Angles, delays and Dopplers of the atoms with flat indices ``index`` (any shape); a UPA's adds
        ``vertical_angle`` (its ``angle`` is then the horizontal spatial angle)."""
        _, nd, nv = self.grid_shape
        ia, rest = index // (nd * nv), index % (nd * nv)
        out = {}
        if self.vertical is not None:
            nh = len(self.angles)
            out["vertical_angle"] = self.vertical[ia // nh]
            ia = ia % nh
        out.update({"angle": self.angles[ia], "delay": self.delays[rest // nv], "doppler": self.dopplers[rest % nv]})
        return out
