"""PolyGraph (the ``polygraph`` extra): PolyGraph Discrepancy, its V.U.N., and its procedural data sets.

PolyGraph (Krimmel, Wiese, Borgwardt et al. 2025, *PolyGraph Discrepancy: a classifier-based metric for
graph generation*, arXiv:2510.06122) replaces the per-statistic MMD² by one bounded number: for each of
six descriptors (4- and 5-node orbit counts, clustering and degree histograms, Laplacian spectrum, a
random GIN embedding) a binary classifier separates reference from generated graphs, and its held-out
log-likelihood gives a lower bound on their Jensen–Shannon distance; PGD is the largest of the six
(0 = indistinguishable, 1 = perfectly separable). :func:`pgd` returns it (``PGD``) and each descriptor's
(``PGD_<descriptor>``).

Classifier: PolyGraph's default, TabPFN, downloads its weights from the Hugging Face hub on first use;
here it is a scikit-learn logistic regression on the standardised descriptors (PolyGraph's
``classifier=`` switch, which the paper's library documents as the alternative), so that the score runs
offline. Numbers are therefore not comparable with the paper's TabPFN-based PGD, only across runs here.
PGD needs as many generated as reference graphs: the first ``min(len(ref), len(gen))`` of each are used.

:func:`polygraph_vun` is PolyGraph's ``VUN`` with our validity rule of a family; it counts as ours does
(valid, novel and the first of its isomorphism class), and the two agree (tests/graphs/test_polygraph.py).
:func:`procedural_graphs` returns PolyGraph's procedural planar / SBM / lobster sets (generated offline,
seeded by split and size, cached under the user cache by PolyGraph) as training / reference data.

Install: ``pip install 'scigen-graphs[polygraph]'`` pulls ``numba<0.62`` and thereby ``numpy<2.3``; in an
environment pinned to newer numpy install it with ``--no-deps`` plus its light dependencies (the package
README lists them).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence

import networkx as nx

from scigen.core.errors import InvalidInputError

__all__ = ["DESCRIPTORS", "PROCEDURAL", "available", "evaluation_scores", "pgd", "polygraph_vun", "procedural_graphs"]

#: PolyGraph's StandardPGD descriptors (the ``PGD_<descriptor>`` keys)
DESCRIPTORS = ("orbit4", "orbit5", "clustering", "degree", "spectral", "gin")
#: family -> PolyGraph's procedural data set class
PROCEDURAL = {"planar": "ProceduralPlanarGraphDataset", "sbm": "ProceduralSBMGraphDataset",
              "lobster": "ProceduralLobsterGraphDataset"}
MIN_GRAPHS = 8  # PGD's 4-fold cross-validation on half of each set needs >= 4 graphs per side and fold split


def available() -> bool:
    """Whether PolyGraph is installed (``import polygraph``)."""
    return importlib.util.find_spec("polygraph") is not None


def _require() -> None:
    if not available():
        raise ImportError("this needs PolyGraph: pip install 'scigen-graphs[polygraph]' (see the scigen-graphs README)")


def _quiet():
    """Silence PolyGraph's loguru debug lines (cache paths, GIN initialisation)."""
    try:
        from loguru import logger

        logger.disable("polygraph")
    except ImportError:  # pragma: no cover
        pass


def _plain(graphs: Sequence[nx.Graph], what: str) -> list[nx.Graph]:
    """Simple undirected graphs relabelled 0..n-1 without attributes (what PolyGraph's descriptors expect)."""
    out = []
    for k, g in enumerate(graphs):
        if not isinstance(g, nx.Graph):
            raise InvalidInputError(f"{what}[{k}]: expected a networkx graph, got {type(g).__name__}")
        h = nx.Graph()
        h.add_nodes_from(range(g.number_of_nodes()))
        idx = {v: i for i, v in enumerate(g.nodes)}
        h.add_edges_from((idx[u], idx[v]) for u, v in g.edges if u != v)
        out.append(h)
    return out


def pgd(ref: Sequence[nx.Graph], gen: Sequence[nx.Graph], *, classifier=None, seed: int = 0) -> dict[str, float]:
    """``{"PGD": max over descriptors, "PGD_<descriptor>": each}`` (PolyGraph's ``StandardPGD``, JS variant;
    ``classifier``: any scikit-learn classifier with ``predict_proba``, default logistic regression; PolyGraph
    fixes its own data split and GIN seeds, ``seed`` is the classifier's)."""
    _require()
    from sklearn.linear_model import LogisticRegression

    _quiet()
    from polygraph.metrics import StandardPGD

    n = min(len(ref), len(gen))
    if n < MIN_GRAPHS:
        raise InvalidInputError(f"PGD needs at least {MIN_GRAPHS} reference and generated graphs, got {len(ref)} and "
                                f"{len(gen)}")
    r, g = _plain(list(ref)[:n], "ref"), _plain(list(gen)[:n], "gen")
    if any(x.number_of_nodes() == 0 for x in r + g):
        raise InvalidInputError("PGD: empty graphs (0 nodes) cannot be described; drop them first")
    clf = LogisticRegression(max_iter=2000, random_state=seed) if classifier is None else classifier
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = StandardPGD(r, classifier=clf).compute(g)
    out = {"PGD": float(res["pgd"])}
    out.update({f"PGD_{k}": float(v) for k, v in res["subscores"].items()})
    return out


def polygraph_vun(gen: Sequence[nx.Graph], train: Sequence[nx.Graph],
                  family: str | Callable[[nx.Graph], bool] | None) -> dict[str, float]:
    """PolyGraph's ``VUN`` as fractions of ``len(gen)``: ``unique``, ``novel``, ``unique_novel`` and, with a
    ``family`` (our validity rule, :func:`scigen.graphs.metrics.validity_fn`) or a callable, ``valid`` and
    ``VUN`` (valid, unique and novel)."""
    _require()
    _quiet()
    from polygraph.metrics import VUN

    from scigen.graphs.metrics.validity import validity_fn

    gen = list(gen)
    if not gen:
        raise InvalidInputError("gen: the set of generated graphs is empty")
    valid = None if family is None else (validity_fn(family) if isinstance(family, str) else family)
    res = VUN(list(train), validity_fn=valid).compute(gen)
    names = {"unique": "unique", "novel": "novel", "unique_novel": "unique_novel", "valid": "valid",
             "valid_unique_novel": "VUN"}
    return {names[k]: float(v) for k, v in res.items() if k in names}


def procedural_graphs(family: str, split: str, n_graphs: int, *, n_nodes: int | None = None,
                      seed: int = 42) -> list[nx.Graph]:
    """PolyGraph's procedural ``family`` graphs (``"planar"``: Delaunay of 64 points; ``"sbm"``: 2-5 blocks of
    20-40 nodes, p 0.3 / 0.005; ``"lobster"``) for ``split`` in train / val / test, generated and cached by
    PolyGraph (``n_nodes``: planar only)."""
    _require()
    _quiet()
    import polygraph.datasets as D

    if family not in PROCEDURAL:
        raise InvalidInputError(f"family: PolyGraph's procedural sets are {sorted(PROCEDURAL)}, got {family!r}")
    if split not in ("train", "val", "test"):
        raise InvalidInputError(f"split: expected 'train', 'val' or 'test', got {split!r}")
    if isinstance(n_graphs, bool) or not isinstance(n_graphs, int) or n_graphs < 1:
        raise InvalidInputError(f"n_graphs must be a positive int, got {n_graphs!r}")
    kw = {"seed": seed}
    if n_nodes is not None:
        if family != "planar":
            raise InvalidInputError("n_nodes: only the planar set takes a node count")
        kw["n_nodes"] = n_nodes
    data = getattr(D, PROCEDURAL[family])(split, n_graphs, **kw)
    return [nx.Graph(g) for g in data.to_nx()]


def evaluation_scores(flag: bool | None, ref: Sequence[nx.Graph], gen: Sequence[nx.Graph], train: Sequence[nx.Graph],
                      family: str | Callable[[nx.Graph], bool] | None) -> dict[str, float]:
    """What ``evaluate`` adds beside the MMDs (``flag``: ``None`` = when PolyGraph is installed and there are
    enough graphs, ``True`` = required, ``False`` = nothing): :func:`pgd` of ``gen`` against ``ref`` and PolyGraph's
    V.U.N. as ``VUN[polygraph]``."""
    from scigen.core.validation import optional_package

    if not optional_package(flag, "polygraph", install="scigen-graphs[polygraph]", what="evaluate(polygraph=True)"):
        return {}
    gen_nonempty = [g for g in gen if g.number_of_nodes() > 0]
    out: dict[str, float] = {}
    if flag or min(len(ref), len(gen_nonempty)) >= MIN_GRAPHS:
        out.update(pgd(ref, gen_nonempty))
    if gen:
        out["VUN[polygraph]"] = polygraph_vun(gen, train, family).get("VUN", float("nan"))
    return out
