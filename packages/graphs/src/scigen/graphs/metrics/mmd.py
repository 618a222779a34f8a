"""MMD² between sets of graphs with the Gaussian total-variation kernel (GraphRNN → GRAN → SPECTRE
→ DiGress evaluation; G2PT reports these numbers).

Kernel: for two descriptor vectors ``x, y`` (zero-padded to equal length)
``k(x, y) = exp(−TV(x, y)² / (2σ²))`` with ``TV(x, y) = ½·Σ_i |x_i − y_i|``.
Histogram descriptors are first normalised to sum 1 (``hist=True``).

Returned value: the **biased** (V-statistic) MMD², diagonal terms included:
``MMD² = mean_{i,j} k(x_i, x_j) + mean_{i,j} k(y_i, y_j) − 2·mean_{i,j} k(x_i, y_j)``.

Descriptors (σ as in SPECTRE/DiGress ``spectre_utils``):

* degree: ``networkx.degree_histogram``, normalised, σ = 1;
* clustering: histogram of local clustering coefficients, 100 bins on [0, 1], normalised, σ = 0.1;
* orbit: mean count per node of each of the 15 orbits of 2–4-node graphlets, not normalised, σ = 30;
* spectre: histogram of the normalised-Laplacian eigenvalues, 200 bins on [−1e−5, 2], normalised, σ = 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np
from scipy.spatial.distance import cdist

from scigen.core.errors import InvalidInputError
from scigen.graphs.metrics.orbits import orbit_counts


def _pad(vectors: Sequence[np.ndarray], width: int) -> np.ndarray:
    out = np.zeros((len(vectors), width), dtype=np.float64)
    for i, v in enumerate(vectors):
        v = np.asarray(v, dtype=np.float64).reshape(-1)
        out[i, : v.size] = v
    return out


def gaussian_tv_mmd2(x: Sequence[np.ndarray], y: Sequence[np.ndarray], *, sigma: float, hist: bool = True) -> float:
    """Biased MMD² of two sets of descriptor vectors under the Gaussian-TV kernel (module docstring)."""
    if len(x) == 0 or len(y) == 0:
        raise InvalidInputError(f"gaussian_tv_mmd2: both sets need at least one descriptor, got {len(x)} and {len(y)}")
    if sigma <= 0:
        raise InvalidInputError(f"sigma: expected > 0, got {sigma}")
    width = max(max(np.size(v) for v in x), max(np.size(v) for v in y))
    X, Y = _pad(x, width), _pad(y, width)
    if hist:
        X = X / np.maximum(X.sum(1, keepdims=True), 1e-300)
        Y = Y / np.maximum(Y.sum(1, keepdims=True), 1e-300)

    def k(a: np.ndarray, b: np.ndarray) -> float:
        tv = 0.5 * cdist(a, b, metric="cityblock")
        return float(np.exp(-(tv**2) / (2 * sigma**2)).mean())

    return k(X, X) + k(Y, Y) - 2 * k(X, Y)


def degree_descriptor(g: nx.Graph) -> np.ndarray:
    return np.asarray(nx.degree_histogram(g), dtype=np.float64)


def clustering_descriptor(g: nx.Graph, bins: int = 100) -> np.ndarray:
    return np.histogram(list(nx.clustering(g).values()), bins=bins, range=(0.0, 1.0))[0].astype(np.float64)


def orbit_descriptor(g: nx.Graph) -> np.ndarray:
    return orbit_counts(g).sum(0) / max(g.number_of_nodes(), 1)


def spectral_descriptor(g: nx.Graph) -> np.ndarray:
    from scipy.linalg import eigvalsh

    eig = eigvalsh(nx.normalized_laplacian_matrix(g).toarray()) if g.number_of_nodes() else np.zeros(1)
    return np.histogram(eig, bins=200, range=(-1e-5, 2))[0].astype(np.float64)


def _nonempty(graphs: Sequence[nx.Graph], what: str) -> list[nx.Graph]:
    if len(graphs) == 0:
        raise InvalidInputError(f"{what}: the set of graphs is empty")
    return [g for g in graphs if g.number_of_nodes() > 0]


def mmd_degree(ref: Sequence[nx.Graph], gen: Sequence[nx.Graph], sigma: float = 1.0) -> float:
    return gaussian_tv_mmd2([degree_descriptor(g) for g in _nonempty(ref, "ref")],
                            [degree_descriptor(g) for g in _nonempty(gen, "gen")], sigma=sigma)


def mmd_clustering(ref: Sequence[nx.Graph], gen: Sequence[nx.Graph], sigma: float = 0.1, bins: int = 100) -> float:
    return gaussian_tv_mmd2([clustering_descriptor(g, bins) for g in _nonempty(ref, "ref")],
                            [clustering_descriptor(g, bins) for g in _nonempty(gen, "gen")], sigma=sigma)


def mmd_orbit(ref: Sequence[nx.Graph], gen: Sequence[nx.Graph], sigma: float = 30.0) -> float:
    return gaussian_tv_mmd2([orbit_descriptor(g) for g in _nonempty(ref, "ref")],
                            [orbit_descriptor(g) for g in _nonempty(gen, "gen")], sigma=sigma, hist=False)


def mmd_spectral(ref: Sequence[nx.Graph], gen: Sequence[nx.Graph], sigma: float = 1.0) -> float:
    return gaussian_tv_mmd2([spectral_descriptor(g) for g in _nonempty(ref, "ref")],
                            [spectral_descriptor(g) for g in _nonempty(gen, "gen")], sigma=sigma)


def graph_mmds(ref: Sequence[nx.Graph], gen: Sequence[nx.Graph], *, orbit: bool = True) -> dict[str, float]:
    """``{"degree", "clustering", "orbit", "spectre"}`` MMD² of ``gen`` against ``ref`` (biased)."""
    out = {"degree": mmd_degree(ref, gen), "clustering": mmd_clustering(ref, gen), "spectre": mmd_spectral(ref, gen)}
    if orbit:
        out["orbit"] = mmd_orbit(ref, gen)
    return out
